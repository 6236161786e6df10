# Sourced by the bench/*.sh scripts: run from the repository root, say
# where and under what load the figures were taken.
set -euo pipefail
cd "$(dirname "$0")/.."

# machine prints what the figures depend on; run it before and after.
machine() {
	echo "# $(date -u +%FT%TZ) $(uname -sm), $(nproc) CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
	echo "# load average: $(cut -d' ' -f1-3 /proc/loadavg)"
}

# gobench PKG PATTERN BENCHTIME runs Go benchmarks of one package (no tests).
gobench() {
	echo "\$ go test $1 -run '^\$' -bench '$2' -benchtime $3"
	go test "$1" -run '^$' -bench "$2" -benchtime "$3" | grep -E '^(Benchmark|\s+bench_test)' || true
}

# median reads numbers, one a line, and prints their median.
median() { sort -n | awk '{v[NR]=$1} END {if (NR) print v[int((NR+1)/2)]}'; }
