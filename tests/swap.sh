#!/usr/bin/env bash
# The one-line swap, made on projects as their users have them: each
# project named (tests/koanfv1: koanf v1.5.0, its go.mod at go 1.16;
# tests/koanfv2: koanf v2) imports keepwatch where it imported koanf's
# stock file provider, and has a go.mod and go.sum from before the swap.
# Each is copied to a temporary directory, pointed at this working tree
# with a replace of the library and of keepwatchprom (tests/koanfv1 takes
# it for its provider's metrics), as a user points theirs at a release
# with go get, and must then go through `go mod tidy` (without -e), go vet
# and its tests. Its go.mod and the modules tidy added are printed.
# `make test-majors` runs it.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
go=${GO:-go}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for p in "$@"; do
	dir="$work/$(basename "$p")"
	cp -R "$root/$p" "$dir"
	cd "$dir"
	before=$(sed -n 's/^go //p' go.mod)
	"$go" mod edit -replace=github.com/keepwatch/file="$root" -replace=github.com/keepwatch/file/keepwatchprom="$root/keepwatchprom"
	# The versions a go get of each would take: the next ones, as go.work
	# says (docs/releasing.md).
	for m in github.com/keepwatch/file github.com/keepwatch/file/keepwatchprom; do
		if grep -q "\"$m\"" ./*.go; then
			v=$(sed -n "s|^[[:space:]]*$m \(v[^ ]*\) =>.*|\1|p" "$root/go.work")
			"$go" mod edit -require="$m@$v"
		fi
	done
	if ! out=$("$go" mod tidy 2>&1); then
		echo "$p: go mod tidy failed:" >&2
		echo "$out" >&2
		exit 1
	fi
	echo "$p: go mod tidy took the swap (go $before, now $(sed -n 's/^go //p' go.mod): keepwatch's own go line)"
	grep -E 'keepwatch|knadh|prometheus/client_golang' go.mod | sed "s|^|$p: go.mod: |"
	"$go" vet ./...
	"$go" test -race -count=1 ./... | sed "s|^|$p: |"
done
