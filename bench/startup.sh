#!/usr/bin/env bash
# Issue 20's one-shot commands as whole processes, alternating in every
# round (BenchmarkStartup in cmd/apex/startup_test.go): `apex version` of
# the light build (make install's apex) and of the full build (go install,
# go run) beside a Go hello world, `apex devices`, and `apex source` beside
# `adb exec-out uiautomator dump` on the same simulated phone through the
# same adb server. Medians of wall time and of the child's user+system CPU.
#
#   bench/startup.sh        # 20 rounds
#   N=50 bench/startup.sh
. "$(dirname "$0")/common.sh"
N=${N:-20}
machine
gobench ./cmd/apex 'Startup' "${N}x"
machine
