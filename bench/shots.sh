#!/usr/bin/env bash
# Issue 20's screenshots at scale: 50 simulated phones polled together
# (BenchmarkPolledPhones in sim/lab/poll_bench_test.go), on this tree and on
# the code before issue 20 (BASE, a commit; checked out in a temporary git
# worktree with this benchmark's files, sim/lab/poll_*_test.go, copied in), alternating, in one run; then
# new/old of each run side by side.
#
#   bench/shots.sh               # BASE=813bd08, 2 runs of each
#   BASE=main RUNS=3 bench/shots.sh
#   PROFILE=1 bench/shots.sh     # CPU profiles of each burst in /tmp/shots.*
. "$(dirname "$0")/common.sh"
BASE=${BASE:-813bd08}
RUNS=${RUNS:-2}
old=$(mktemp -d)
trap 'git worktree remove --force "$old/tree" >/dev/null 2>&1 || true; rm -rf "$old"' EXIT
git worktree add --detach "$old/tree" "$BASE" >/dev/null 2>&1
cp sim/lab/poll_*_test.go "$old/tree/sim/lab/"
echo "# building the old ($BASE) and new test binaries"
(cd "$old/tree" && go test -c -o "$old/old.test" ./sim/lab)
go test -c -o "$old/new.test" ./sim/lab
echo "\$ BASE=$BASE RUNS=$RUNS bench/shots.sh"
machine
for i in $(seq "$RUNS"); do
	for name in old new; do
		echo "# $name, run $i"
		export SHOTS_CPUPROFILE=
		[ -z "${PROFILE:-}" ] || export SHOTS_CPUPROFILE=/tmp/shots.$name.$i
		# One process per way in: in one, the in-process burst would find
		# the PNG bands the adbd burst compressed in the shared band cache.
		for via in adbd inproc; do
			(cd sim/lab && "$old/$name.test" -test.run '^$' -test.bench "PolledPhones/$via\$" -test.benchtime 1x -test.timeout 30m |
				grep -E '^Benchmark' || true) | tee -a "$old/$name.out"
		done
	done
done
machine
# metric VALUE-UNIT prints each run's figure for one sub-benchmark.
metric() { grep "PolledPhones/$1" "$old/$2.out" | tr '\t' '\n' | awk -v u="$3" '$2 == u {print $1}'; }
for via in adbd inproc; do
	for unit in shots/s cpu-ms/shot RSS-gc/idle RSS-settled/idle s-to-settle; do
		paste <(metric "$via" old "$unit") <(metric "$via" new "$unit") |
			awk -v via="$via" -v u="$unit" '{printf "%-7s %-17s old %8.2f  new %8.2f  new/old %5.2f\n", via, u, $1, $2, ($1 ? $2/$1 : 0)}'
	done
done
