#!/usr/bin/env bash
# Issue 18's figures: the farm's scheduling latency (queued → running, each
# run queued onto a host with idle simulated phones, p50 and p99) and leases
# per second (acquire + release on a one-member control plane).
#
#   bench/farm.sh           # 200 scheduled runs, 3 s of leases
#   N=500 bench/farm.sh
. "$(dirname "$0")/common.sh"
N=${N:-200}
machine
gobench ./farm/host 'FarmSchedule$' "${N}x"
gobench ./farm/host 'FarmLease$' 3s
machine
