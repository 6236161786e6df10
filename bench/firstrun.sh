#!/usr/bin/env bash
# Issue 20's first run: the README's first command on a machine that has
# never built Apex — empty module and build caches — split into its three
# phases (download the modules, compile, run), for the code at BASE and at
# HEAD in one run. CPU (user+system of the go command and its children) is
# what to compare on a shared machine; wall time follows the load.
#
#   bench/firstrun.sh                 # BASE=813bd08 (before issue 20)
#   BASE=61bb4d7 bench/firstrun.sh
. "$(dirname "$0")/common.sh"
BASE=${BASE:-813bd08}
work=$(mktemp -d)
trap 'for r in base head; do git worktree remove --force "$work/$r" >/dev/null 2>&1 || true; done; chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT

# phase NAME CMD… runs CMD and prints its wall and CPU seconds.
phase() {
	local name=$1
	shift
	/usr/bin/time -f "%e %U %S" -o "$work/time" "$@" >"$work/out" 2>&1 || { cat "$work/out"; exit 1; }
	read -r wall user sys <"$work/time"
	printf '%-6s %-9s wall %7.1f s   cpu %7.1f s\n' "$rev" "$name" "$wall" "$(echo "$user + $sys" | bc)"
}

machine
for rev in base head; do
	ref=$BASE
	[ $rev = head ] && ref=HEAD
	git worktree add --detach "$work/$rev" "$ref" >/dev/null 2>&1
	export GOMODCACHE=$work/$rev.mod GOCACHE=$work/$rev.cache GOFLAGS=-mod=mod
	cd "$work/$rev"
	# What go run downloads: the modules of the packages the build needs.
	phase download go list -deps ./cmd/apex
	echo "$rev    modules: $(find "$GOMODCACHE/cache/download" -name '*.zip' | wc -l) zips, $(du -sh "$GOMODCACHE/cache/download" | cut -f1); unpacked $(du -sh --exclude=cache "$GOMODCACHE" | cut -f1)"
	phase compile go build -o "$work/$rev.apex" ./cmd/apex
	phase run "$work/$rev.apex" run --sim examples/shop-checkout.yaml
	cd - >/dev/null
	unset GOMODCACHE GOCACHE GOFLAGS
done
machine
