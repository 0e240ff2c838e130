# keepwatch: see `make help`.

SHELL       := /bin/bash
.SHELLFLAGS := -o pipefail -c
GO          ?= go
STATICCHECK_VERSION := v0.8.2
BIN         := $(CURDIR)/bin
STATICCHECK := $(BIN)/staticcheck
# The root module's commands run outside the workspace (go.work): there,
# ./... from the root would match every module's packages. It requires no
# other module of the repository.
ROOTGO      := GOWORK=off $(GO)

SOAK        ?= 10m
SHARDS      ?= 3
# A binary built with -race sleeps a second before it exits, by default, so
# that goroutines still running can report their races: a second for each
# of the thirty-odd test binaries make test runs, 10 s of its time. What
# that costs: a race in a goroutine still running as a binary exits goes
# unreported; the packages that start goroutines of their own (the root,
# internal/events, live, tlscert, k8smount, keepwatchprom) check with
# goleak that none is left when their tests end. GORACE set outside make
# wins.
export GORACE ?= atexit_sleep_ms=0

.PHONY: help test release-check tidy test-library test-root test-packages test-live test-koanf test-majors test-fuse test-docs test-prom test-k8smount test-fsnotify test-wine demo bench bench-tls bench-cpu bench-probe bench-writers profile lint soak fuzz fleet

# Beside the library's module, each with its go.mod: live, keepwatchprom,
# cmd/demo, tests/koanf, tests/bench, tests/fuse, tests/docs, tests/fleet,
# tests/k8smount, tests/certwatcher, tests/prom, tests/release, tests/cpu;
# go.work ties them (docs/releasing.md). live and keepwatchprom are
# published beside the library's.
# The library's requires no koanf module, so that projects on koanf v1 and
# v2 can both take it; what needs koanf (package live, the demo, the tests
# and benchmarks against koanf's stock provider) or heavier dependencies is
# in a module of its own. tests/koanfv1 and tests/koanfv2 are projects as
# their users have them, which tests/swap.sh swaps and runs.

# The names' column is as wide as the longest name.
help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed -e 's/$$(SOAK)/$(SOAK)/g' -e 's/$$(FUZZTIME)/$(FUZZTIME)/g' | awk -F':.*## ' \
		'{n[NR] = $$1; d[NR] = $$2; if (length($$1) > w) w = length($$1)} END {f = "  make %-" w "s  %s\n"; for (i = 1; i <= NR; i++) printf f, n[i], d[i]}'

test: ## vet, then run every test with the race detector (every module's, and the koanf v1 and v2 projects')
	$(ROOTGO) vet ./...
	@$(MAKE) --no-print-directory -j3 --output-sync=target test-library test-live test-koanf test-majors test-fuse test-docs test-prom test-k8smount
	@command -v promtool >/dev/null || { echo; echo "*** make test passed WITHOUT the alerting rules' tests: promtool not found (apt-get install prometheus) ***"; }

# They run three at a time (test-library's two parts, about five processes,
# take two of the three): the library's tests mostly wait (on the kernel,
# on child processes), and the other modules' builds fill the time. The
# parallel tests of the library wait on the kernel's real time, a second
# and more some of them: eight at a time, not GOMAXPROCS (two here). The
# root package's tests run in $(SHARDS) processes at once (tests/shards.sh
# says why processes): about 20 s alone, where one process takes about 40.
test-library: test-root test-packages

test-root:
	GO=$(GO) ./tests/shards.sh $(SHARDS)

# The library's packages but the root, which test-root runs.
test-packages:
	pkgs=$$($(ROOTGO) list ./... | grep -vx 'github.com/keepwatch/file') && [ -n "$$pkgs" ] && \
		$(ROOTGO) test -race -count=1 -parallel 8 $$pkgs

test-live:
	cd live && $(GO) vet ./... && $(GO) test -race -count=1 ./...

# koanf's own watch tests and the ones beside its stock provider, the demo's,
# the side-by-side benchmarks' (built, not run), the CPU harness's parts,
# each once for a fraction of a second (about 2 s), and the release check's
# test of what a published module may hold.
test-koanf:
	cd tests/koanf && $(GO) vet ./... && $(GO) test -race -count=1 ./...
	cd cmd/demo && $(GO) vet ./... && $(GO) test -race -count=1 ./...
	cd tests/bench && $(GO) vet ./... && $(GO) test -count=1 ./...
	cd tests/cpu && $(GO) vet ./... && $(GO) test -count=1 ./...
	cd tests/release && $(GO) vet ./... && $(GO) test -count=1 ./...

test-majors: ## the one-line swap on a koanf v1 (go 1.16, with keepwatchprom) and a koanf v2 project: go mod tidy, then their tests
	GO=$(GO) ./tests/swap.sh tests/koanfv1 tests/koanfv2

test-fuse:
	cd tests/fuse && $(GO) vet ./... && $(GO) test -race -count=1 ./...

test-docs:
	cd tests/docs && $(GO) vet . && $(GO) test -count=1 . && $(GO) run .

# The collector (its tests with live configs are in tests/prom, so that
# keepwatchprom's go.mod requires no koanf), and its alerting rules through
# promtool: skipped without it, outside CI, and said so (apt-get install
# prometheus); the fleet check is built.
test-prom:
	@command -v promtool >/dev/null || echo "*** SKIPPED: keepwatchprom's alerting rules' tests (TestAlertRules): promtool not found; apt-get install prometheus ***"
	cd keepwatchprom && $(GO) vet ./... && $(GO) test -race -count=1 ./...
	cd tests/prom && $(GO) vet ./... && $(GO) test -race -count=1 ./...
	cd tests/fleet && $(GO) vet ./...
	@command -v promtool >/dev/null || echo "*** SKIPPED: keepwatchprom's alerting rules' tests (TestAlertRules): promtool not found; apt-get install prometheus ***"

release-check: ## the published modules as a user gets them: a local module proxy of their next versions, a consumer with no replace building the docs' programs, and the API report (docs/releasing.md)
	cd tests/release && $(GO) run .

tidy: ## go mod tidy in every module (each given a replace of the others for the time of it: go.work is not enough for go mod tidy)
	GO=$(GO) ./tests/tidy.sh

fleet: ## three replicas, a real Prometheus (Debian's) and keepwatch's alerts: replicas disagree, then converge (about a minute)
	cd tests/fleet && $(GO) run .

# koanf's own k8smount tests, against the drop-in.
test-k8smount:
	cd tests/k8smount && $(GO) vet ./... && $(GO) test -race -count=1 ./...

test-fsnotify: ## the root package's tests through fsnotify's backend, as on macOS, BSD and Windows
	GO=$(GO) ./tests/shards.sh $(SHARDS) -backend=fsnotify

WINEPREFIX  ?= $(CURDIR)/bin/wine

# Not in CI: Wine is not Windows (see docs/platforms.md), and this needs
# apt-get install wine64 gcc-mingw-w64-x86-64.
test-wine: ## the root package's tests as a Windows binary, under Wine
	@mkdir -p $(WINEPREFIX)/drive_c/windows/system32
	x86_64-w64-mingw32-gcc -shared -o $(WINEPREFIX)/drive_c/windows/system32/bcryptprimitives.dll testdata/wine/bcryptprimitives.c
	GOOS=windows GOARCH=amd64 $(ROOTGO) test -c -o $(BIN)/keepwatch.test.exe .
	WINEDEBUG=-all WINEPREFIX=$(WINEPREFIX) wine $(BIN)/keepwatch.test.exe -test.v -test.timeout 30m 2>&1 | tee wine.out \
		| grep --line-buffered -E '^(--- |FAIL|ok|PASS)'

demo: ## put keepwatch and koanf's stock provider through the same ConfigMap updates
	cd cmd/demo && $(GO) run .

soak: ## random convergence sequences for $(SOAK) (make soak SOAK=1h), 10,000 providers, 1,000 back-to-back identical writes; full log in soak.out
	$(ROOTGO) test -v -count=1 -timeout 0 -run '^(TestConvergence|TestManyProvidersShareOneInotifyInstance|TestBackToBackIdenticalWritesLoop)$$' . \
		-args -convergence.soak=$(SOAK) -convergence.parallel=8 -hub.files=10000 -backtoback.pairs=1000 2>&1 \
		| tee soak.out | grep --line-buffered -E '^(soak:|---|FAIL|ok|PASS)|convergence: [0-9]+ sequences|seed [0-9]+:|back-to-back pairs' | grep -v -- '--- PASS: TestConvergence/'

FUZZTIME    ?= 30s
# package:target
FUZZ_TARGETS := ./internal/chain:FuzzResolve .:FuzzSessionEvents ./internal/osfile:FuzzReadFile

fuzz: ## run each fuzz target for $(FUZZTIME) (make fuzz FUZZTIME=5m)
	@for pt in $(FUZZ_TARGETS); do \
		pkg=$${pt%%:*}; t=$${pt##*:}; \
		echo "== $$t ($$pkg)"; \
		$(ROOTGO) test -run='^$$' -fuzz="^$$t\$$" -fuzztime=$(FUZZTIME) $$pkg || exit 1; \
	done

BENCHCOUNT  ?= 3
BENCHTIME   ?= 200x
BENCH       ?= .
SAMPLES     := bench-samples.out
BENCHNOTE   ?=

# The latency picture is drawn from BenchmarkLatency's samples of this very
# run (pooled over its runs), with BENCHNOTE (the machine, say) under its
# title; a run without BenchmarkLatency leaves it as is. BENCH=Latency runs
# BenchmarkLatency alone.
#
# The benchmarks against the stock provider are in tests/bench, a module of
# its own; the library's own (bench_test.go: those that reach into the
# package) follow them.
bench: ## benchmarks against koanf's stock provider: a table (medians of BENCHCOUNT=3 runs) and docs/bench-latency.svg
	@rm -f $(SAMPLES)
	cd tests/bench && $(GO) test -run='^$$' -bench='$(BENCH)' -benchtime=$(BENCHTIME) -count=$(BENCHCOUNT) -timeout=60m . \
		-args -latency.samples=$(CURDIR)/$(SAMPLES) | tee $(CURDIR)/bench.out
	$(ROOTGO) test -run='^$$' -bench='$(BENCH)' -benchtime=$(BENCHTIME) -count=$(BENCHCOUNT) -timeout=60m . | tee -a bench.out
	@echo
	@cd tests/bench && $(GO) run ./benchtable < $(CURDIR)/bench.out
	@if [ -s $(SAMPLES) ]; then (cd tests/bench && $(GO) run ./benchplot -in $(CURDIR)/$(SAMPLES) -out $(CURDIR)/docs/bench-latency.svg -note '$(BENCHNOTE)') && echo "wrote docs/bench-latency.svg"; fi

BENCHTLS_FLAGS ?=

# A module of its own (tests/certwatcher), so that controller-runtime never
# enters the library's graph. Its first build takes minutes (client-go).
bench-tls: ## tlscert and controller-runtime's certwatcher through the same Secret rotations while clients handshake (BENCHTLS_FLAGS="-rotations 10 -idle 5s" for a short run)
	cd tests/certwatcher && $(GO) vet ./... && $(GO) run . $(BENCHTLS_FLAGS)

CPUREPS        ?= 3
KEEPWATCH_TREE ?=
CPU_FLAGS      ?=
PROBE_FLAGS    ?=

# tests/cpu, a module of its own: each watcher and each load in a process of
# its own, CPU time by getrusage (docs/benchmarks.md, "CPU under others'
# activity"). KEEPWATCH_TREE names the keepwatch checkouts to measure, side
# by side and taking turns (this one by default): the harness is built
# against each, from a copy whose replace points there.
bench-cpu: ## CPU per minute of keepwatch, the stock provider and a bare inotify reader beside others' activity, about 9 min (KEEPWATCH_TREE="/old/tree ." for two trees, 12)
	cd tests/cpu && GO=$(GO) $(GO) run . cpu -reps $(CPUREPS) -trees '$(abspath $(KEEPWATCH_TREE))' $(CPU_FLAGS) | tee $(CURDIR)/bench-cpu.out

bench-probe: ## the lease probe (F_SETLEASE): its cost, its answers, the delay it adds to others' write-opens, a lease break's effect
	cd tests/cpu && $(GO) run . probe $(PROBE_FLAGS) | tee $(CURDIR)/bench-probe.out

WRITERS_FLAGS ?=

# tests/cpu too (docs/benchmarks.md, "Writers held up by a watch"): a writer
# rewriting a 1 MiB config in place, each open(2) timed, with nothing, the
# stock provider or keepwatch (each tree of KEEPWATCH_TREE) watching it from
# another process; then keepwatch stopped (SIGSTOP) at random moments while
# the writer goes on. WRITERS_FLAGS="-dir /tmp" for ext4; "-runs 2 -stops 5"
# for a short run.
bench-writers: ## a writer's open(2) of a watched config: while none, stock or keepwatch watches (3 repetitions), and while keepwatch, or a process watching nothing, is stopped 15 times for 2 s (20 runs), about 27 min for one tree
	cd tests/cpu && GO=$(GO) $(GO) run . writers -trees '$(abspath $(KEEPWATCH_TREE))' $(WRITERS_FLAGS) | tee $(CURDIR)/bench-writers.out

SCENARIO    ?= kubelet
PROFILETIME ?= 5000x

# keepwatch alone, in one of BenchmarkLatency's scenarios (kubelet, rename,
# inplace), about 40 s: a CPU profile and a runtime trace of its path from
# the update to the callback, in cpu.prof and trace.out, and the test binary
# they were taken of, bench.test. BenchmarkLatency's comment in
# tests/bench/bench_test.go says how to read them, and how to count
# allocations.
profile: ## CPU profile and runtime trace of keepwatch alone in one latency scenario (SCENARIO=kubelet|rename|inplace)
	cd tests/bench && $(GO) test -run='^$$' -bench='^BenchmarkLatency$$/^$(SCENARIO)$$' -benchtime=$(PROFILETIME) -count=1 \
		-o $(CURDIR)/bench.test -cpuprofile $(CURDIR)/cpu.prof -trace $(CURDIR)/trace.out . -args -latency.only=keepwatch
	@echo "go tool pprof -http=: -ignore 'koanf|BenchmarkLatency' bench.test cpu.prof; go tool trace trace.out"

# Every platform koanf users develop on: the module, the commands and every
# test file must compile (and vet clean) on each, in the library's module
# and in those beside it that build on every platform.
LINTED      := . live keepwatchprom cmd/demo tests/koanf tests/bench tests/k8smount tests/prom tests/cpu
PLATFORMS   := linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64 freebsd/amd64 freebsd/arm64
# And the library builds on the other Linux architectures Go has, whose
# system calls' structures differ in the widths of their fields (statfs's
# type is 32 bits on 386, arm, mips and s390x).
BUILT       := linux/386 linux/arm linux/mips linux/s390x linux/riscv64 linux/ppc64le

lint: $(STATICCHECK) ## go vet on every platform, the library built on the other Linux architectures, gofmt and staticcheck
	@for p in $(PLATFORMS); do \
		printf 'vet %-14s ' $$p; \
		for m in $(LINTED); do \
			(cd $$m && GOWORK=$$([ $$m = . ] && echo off) GOOS=$${p%/*} GOARCH=$${p#*/} $(GO) vet ./...) || exit 1; \
		done; \
		echo ok; \
	done
	@for p in $(BUILT); do printf 'build %-12s ' $$p; GOWORK=off GOOS=$${p%/*} GOARCH=$${p#*/} $(GO) build ./... || exit 1; echo ok; done
	@out=$$(gofmt -l .); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	@for m in $(LINTED) tests/fleet tests/release; do echo "staticcheck $$m"; (cd $$m && GOWORK=$$([ $$m = . ] && echo off) $(STATICCHECK) ./...) || exit 1; done

$(STATICCHECK):
	GOBIN=$(BIN) $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)
