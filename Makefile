# firebolt-crossplane. Everything here needs only Go: pinned Crossplane tools
# are built from hack/tools/* into a cache outside the repository
# ($HOME/.cache/firebolt-crossplane, or FIREBOLT_TOOLS_CACHE) on first use.

# The registry path both packages are pushed to. Compositions' functionRef,
# the Configuration's dependsOn and the ImageConfig all derive from it
# (hack/pkgstage); run `make generate` after changing the default.
REGISTRY ?= ghcr.io/firebolt-db
VERSION ?= v0.1.0

OUT ?= _out
TOOLS := hack/tools.sh

# One set of build settings for the tools (hack/tools.sh), the tests and the
# packages (hack/xpkg.sh), so a package they share is compiled once, not once
# per setting: cgo off, as on a machine with only Go and in the shipped
# function, and paths trimmed, as reproducible packages need.
export CGO_ENABLED := 0
export GOFLAGS := -trimpath $(GOFLAGS)

.PHONY: setup generate build test lint render goldens xpkg push clean up down scale perf

## setup: fetch modules and build the pinned tools the tests run, once (Crossplane CLI v2.5.0, core v2.4.0,
## controller-gen, etcd v3.6.5, Kubernetes v1.36.2, KWOK v0.8.0, Prometheus v3.7.3, provider-kubernetes v0.17.1,
## cert-manager v1.21.1) into a cache outside the repo (hack/setup.sh); cold about 18 min on 2 cores, warm seconds.
## golangci-lint v2.15.0 is built by the first make lint.
setup:
	hack/setup.sh

## generate: regenerate deepcopy, XRDs, the input CRD, the generated docs (docs/api-reference.md,
## docs/troubleshooting.md) and every registry-dependent file
generate:
	hack/generate.sh
	go run ./hack/pkgstage -registry $(REGISTRY) -version $(VERSION) -root .

## build: compile everything
build:
	go build ./...

## test: unit, whole-response, staleness, render-golden, validate, package and end-to-end tests. The compiler
## runs with GOGC=200, as hack/tools.sh builds the tools (its comment has the measurements); the tests run
## with the default (env -u GOGC), because some of them measure allocations. Every package is compiled first,
## once: the end-to-end harness, the package test (hack/xpkg.sh) and the render test each build the function
## in a go process of their own, and go processes running side by side each compile what the cache lacks, so
## cold they compiled the same packages at once. The end-to-end package is then named first, so go test starts
## it before the others: it spends minutes waiting on the control plane, and the other packages' tests fill
## those waits. go test prints each package's result in this order, so the end-to-end result comes first and
## the rest follow it. -vet=off: make lint's govet runs every analyzer go test's vet step would, so CI ran them
## twice. -ldflags=-w: the test binaries carry no DWARF, which was a third of each link's CPU (the e2e binary
## 11 -> 7 CPU-s); stack traces do not need it.
test:
	GOGC=200 go build ./...
	GOGC=200 go test -count=1 -vet=off -ldflags=-w -timeout 45m -exec 'env -u GOGC' ./test/e2e ./...

## lint: golangci-lint (.golangci.yml) over the whole module, tests, hack/ and test/ included; govet is one
## of its linters, so make test does not run go vet again; GOGC=400 trades the linter's memory for speed
lint:
	GOGC=400 $$($(TOOLS) golangci-lint) run ./...

## render: run crossplane render on every example with the function on loopback (the render test's own
## code path: same function, flags and environment as the goldens); output in $(OUT)/render/<example>.yaml
render:
	go test ./test/render -count=1 -run 'TestRender$$' -out $(abspath $(OUT))/render

## goldens: rewrite every golden file, in dependency order: the engine's rollout fixtures, the engine's
## whole-response goldens (their requests are built from the fixtures), then the render goldens. Review the diff.
goldens:
	go test ./fn/engine -count=1 -run 'TestFixtures$$' -update
	go test ./fn/engine -count=1 -run 'TestRunFunction$$' -update
	go test ./test/render -count=1 -run 'TestRender$$' -update
	go test ./fn/instance/envoyconfig -count=1 -run 'TestConfigGolden$$' -update

## perf: the function against a no-op function-sdk-go floor over gRPC on loopback (p50/p99, calls/s, CPU per call,
## RSS, ratios), then the in-process benchmarks with -benchmem; PERF_FLAGS passes flags to test/perf/cmd/perf
perf:
	go run ./test/perf/cmd/perf $(PERF_FLAGS)
	go test ./fn/engine -run '^$$' -bench 'BenchmarkRunFunctionStable' -benchmem -count 1

## xpkg: build the Function and Configuration packages, and the kubectl plugin's archives and krew manifest
## (PLUGIN_URL: where the archives are published), into $(OUT) (reproducible)
xpkg:
	REGISTRY=$(REGISTRY) VERSION=$(VERSION) hack/xpkg.sh $(OUT)

## push: push both packages to $(REGISTRY)
push: xpkg
	$$($(TOOLS) crossplane) xpkg push -f $(OUT)/function-firebolt-$(VERSION).xpkg $(REGISTRY)/function-firebolt:$(VERSION)
	$$($(TOOLS) crossplane) xpkg push -f $(OUT)/configuration-firebolt-$(VERSION).xpkg $(REGISTRY)/configuration-firebolt:$(VERSION)

## up: a local control plane (no cluster needed) with the packages installed and the examples applied; prints how to use it
up:
	go run ./test/e2e/cmd/localcp up

## down: stop everything `make up` started
down:
	go run ./test/e2e/cmd/localcp down

clean:
	rm -rf $(OUT)

## scale: measure N engines on the local control plane (create, class edit, idle) and print a markdown table; not part of test
N ?= 25
scale:
	go run ./test/e2e/cmd/scale -n $(N) $(SCALE_FLAGS)
