#!/usr/bin/env bash
# Issue 4's figures: shell round trip through the native client against
# `adb -s SERIAL shell` spawned per call (same device, same run), Source +
# Screenshot, and screencap PNG against the raw framebuffer. Needs `adb`.
#
#   bench/android.sh        # 40 calls per figure
#   N=100 bench/android.sh
. "$(dirname "$0")/common.sh"
N=${N:-40}
machine
gobench ./device/android . "${N}x"
machine
