#!/usr/bin/env bash
# Issue 5's figures: `apex run --sim` wall time (the built binary, process
# start, simulated phone, run and report included) on bench/twenty-steps.yaml
# and every example; Apex's own overhead per step from the store's records;
# the size of a 500-step run's report.
#
#   bench/run.sh            # 5 runs of each script
#   N=10 bench/run.sh
. "$(dirname "$0")/common.sh"
N=${N:-5}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/apex" ./cmd/apex
machine
echo "\$ apex run --sim FILE  (median of $N; whole process: start, simulated phone, run, report)"
printf '%-32s %8s %8s\n' script wall-ms cpu-ms
for f in bench/twenty-steps.yaml examples/*.yaml; do
	: >"$tmp/times"
	for _ in $(seq "$N"); do
		/usr/bin/time -a -o "$tmp/times" -f '%e %U %S' "$tmp/apex" run --sim --report-dir "$tmp/runs" "$f" >/dev/null
	done
	wall=$(awk '{print int($1 * 1000)}' "$tmp/times" | median)
	cpu=$(awk '{print int(($2 + $3) * 1000)}' "$tmp/times" | median)
	printf '%-32s %8s %8s\n' "$f" "$wall" "$cpu"
done
gobench ./runner 'RunSim' "${N}x"
gobench ./report 'LongRunReport' 1x
echo "\$ go test ./report -run TestLongRunSize -v   (synthetic 500 heavy steps)"
go test ./report -run 'TestLongRunSize$' -v | grep -E 'bytes of HTML|^(ok|FAIL)'
machine
