#!/usr/bin/env bash
# Issue 20's one-shot commands as whole processes, alternating in every
# round (BenchmarkStartup in cmd/apex/startup_test.go): `apex version` of
# the light build (make install's apex) and of the full build (go install,
# go run) beside a Go hello world, `apex devices`, and `apex source` beside
# `adb exec-out uiautomator dump` on the same simulated phone through the
# same adb server. Medians of wall time and of the child's user+system CPU.
# With BASE, the light build of that commit (built in a temporary git
# worktree) runs in the same rounds as "base": before and after in one run.
#
#   bench/startup.sh              # 20 rounds
#   N=50 BASE=5396588 bench/startup.sh
. "$(dirname "$0")/common.sh"
N=${N:-20}
if [ -n "${BASE:-}" ]; then
	old=$(mktemp -d)
	trap 'git worktree remove --force "$old/tree" >/dev/null 2>&1 || true; rm -rf "$old"' EXIT
	git worktree add --detach "$old/tree" "$BASE" >/dev/null 2>&1
	echo "# building the light build of $BASE"
	(cd "$old/tree" && CGO_ENABLED=0 go build -tags apexlite -o "$old/apex" ./cmd/apex)
	export APEX_STARTUP_BASE="$old/apex"
fi
machine
gobench ./cmd/apex 'Startup' "${N}x"
machine
