#!/usr/bin/env bash
# Issue 20's screenshots at scale: 50 simulated phones polled together
# (BenchmarkPolledPhones in sim/lab/poll_bench_test.go), on this tree and on
# the code before issue 20 (BASE, a commit; checked out in a temporary git
# worktree with this benchmark copied in), alternating, in one run.
#
#   bench/shots.sh               # BASE=813bd08, 2 runs of each
#   BASE=main RUNS=3 bench/shots.sh
. "$(dirname "$0")/common.sh"
BASE=${BASE:-813bd08}
RUNS=${RUNS:-2}
old=$(mktemp -d)
trap 'git worktree remove --force "$old/tree" >/dev/null 2>&1 || true; rm -rf "$old"' EXIT
git worktree add --detach "$old/tree" "$BASE" >/dev/null 2>&1
cp sim/lab/poll_bench_test.go "$old/tree/sim/lab/"
machine
for i in $(seq "$RUNS"); do
	for tree in "$old/tree" .; do
		name=new
		[ "$tree" = . ] || name="old ($BASE)"
		echo "# $name, run $i"
		(cd "$tree" && go test ./sim/lab -run '^$' -bench PolledPhones -benchtime 1x -timeout 30m |
			grep -E '^Benchmark' || true)
	done
done
machine
