#!/usr/bin/env bash
# Issue 3's figures: the simulated phone through Debian's real adb server
# (a private server on a free port, killed at the end), and 50 simulated
# devices in one process. Needs `adb` (Debian package adb).
#
#   bench/sim.sh            # 50 calls per figure
#   N=200 bench/sim.sh
. "$(dirname "$0")/common.sh"
N=${N:-50}
machine
gobench ./sim/lab 'ADBServer|ADBCommandLine' "${N}x"
# Alone, so the process's peak RSS (VmHWM) is the 50 devices' peak.
gobench ./sim/lab 'FiftyDevices' 1x
machine
