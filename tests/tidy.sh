#!/usr/bin/env bash
# go mod tidy in each module of the repository (or in those named): `make
# tidy`. A module that requires another of the repository's (live requires
# github.com/keepwatch/file v0.1.0) cannot be tidied as it is before that
# version is published, as go mod tidy ignores go.work: each is given a
# replace of those modules by this tree for the time of its tidy, and the
# replace is dropped after. A directory replace adds nothing to go.sum.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
go=${GO:-go}
mods=("$@")
if [ ${#mods[@]} -eq 0 ]; then
	mods=(. live keepwatchprom cmd/demo tests/bench tests/certwatcher tests/docs tests/fleet tests/fuse tests/k8smount tests/koanf tests/release tests/cpu tests/prom)
fi
# The published modules: path and directory.
published=("github.com/keepwatch/file=." "github.com/keepwatch/file/live=live" "github.com/keepwatch/file/keepwatchprom=keepwatchprom")
for m in "${mods[@]}"; do
	[ -f "$root/$m/go.mod" ] || continue
	(
		cd "$root/$m"
		added=()
		for p in "${published[@]}"; do
			path=${p%%=*} dir=${p#*=}
			if GOWORK=off "$go" mod edit -json | grep -q "\"Path\": \"$path\",\$" && [ "$dir" != "$m" ]; then
				GOWORK=off "$go" mod edit -replace="$path=$(realpath --relative-to=. "$root/$dir")"
				added+=("$path")
			fi
		done
		trap 'for a in "${added[@]}"; do GOWORK=off "$go" mod edit -dropreplace="$a"; done' EXIT
		echo "go mod tidy in $m"
		GOWORK=off "$go" mod tidy
	)
done
