#!/usr/bin/env bash
# shards.sh K [test binary flags...]: the root package's tests, with the race
# detector, split into K test processes that run at once (make test-library,
# make test-fsnotify).
#
# Why processes and not t.Parallel: most of the root package's tests wait on
# the kernel's real time (a pause of 25 ms, a rescan, a writer's close), so
# one after another they take about 40 s of wall time on little CPU. They
# cannot run in parallel inside one process, because many assert on what the
# process holds as a whole: its goroutines (goleak), the kernel watches of
# its one inotify instance, its shared queue overflowing. A process of each
# keeps those counts each shard's own, and each test runs in its shard as it
# did in one process: the serial ones one at a time, the parallel together.
#
# The tests are dealt to the shards in turn, in the order `-test.list`
# gives (their order in the source files), which spreads a file's slow
# tests over the shards. TestConvergence's fixed sample runs once the
# shards are done, in a process of its own, as it ran before at the end of
# the package (make test's other jobs may still run beside it): it races
# writers against its watches for seconds, and beside the shards it ran
# under three processes' more load, where it found a fault
# (docs/reliability.md, "A writer that opened the file while the watch read
# it"). make soak is where it runs under load, for as long as it takes. A
# failing shard's whole output is printed; the script fails if any does.
set -euo pipefail
export LC_ALL=C
k=${1:-}
[[ $k =~ ^[1-9][0-9]*$ ]] || { echo "usage: shards.sh K [flags...], K a number of processes" >&2; exit 2; }
shift
flags=("$@")
root=$(cd "$(dirname "$0")/.." && pwd)
go=${GO:-go}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cd "$root"
GOWORK=off "$go" test -race -c -o "$work/root.test" .
"$work/root.test" -test.list '.*' | grep -E '^(Test|Example|Fuzz)' > "$work/list"

last=TestConvergence

start=$EPOCHREALTIME
# run OUT TESTS...: the tests named, in one process, with what go test
# would give them: its timeout, and a test that exits the binary fails.
run() {
	local out=$1
	shift
	"$work/root.test" -test.count=1 -test.parallel 8 -test.timeout 10m -test.paniconexit0 \
		-test.run "^($(printf '%s\n' "$@" | paste -sd'|'))\$" ${flags[@]+"${flags[@]}"} > "$out" 2>&1
}
failed=0
report() { # report WHICH OUT: a failed process's output
	failed=1
	echo "--- shard $1 failed:"
	cat "$2"
}
pids=()
for ((i = 0; i < k; i++)); do
	mapfile -t names < <(grep -vx "$last" "$work/list" | awk -v k="$k" -v i="$i" 'NR % k == i')
	[ ${#names[@]} -gt 0 ] || continue
	run "$work/shard-$i.out" "${names[@]}" &
	pids[i]=$!
done
for i in "${!pids[@]}"; do
	wait "${pids[i]}" || report "$((i + 1)) of $k" "$work/shard-$i.out"
done
if grep -qx "$last" "$work/list"; then
	run "$work/last.out" "$last" || report "$last" "$work/last.out"
fi
took=$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.3f", b - a }')
if [ "$failed" -ne 0 ]; then
	printf 'FAIL\tgithub.com/keepwatch/file\t%ss (%d shards)\n' "$took" "$k"
	exit 1
fi
printf 'ok  \tgithub.com/keepwatch/file\t%ss (%d shards, %d tests and examples)\n' "$took" "$k" "$(wc -l < "$work/list")"
