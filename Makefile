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

.PHONY: setup generate build test render xpkg push clean

## setup: build the pinned tools (Crossplane CLI v2.5.0, core v2.4.0, controller-gen) and fetch modules
setup:
	go mod download
	$(TOOLS) crossplane >/dev/null
	$(TOOLS) crossplane-core >/dev/null
	$(TOOLS) controller-gen >/dev/null

## generate: regenerate deepcopy, XRDs, the input CRD and every registry-dependent file
generate:
	hack/generate.sh
	go run ./hack/pkgstage -registry $(REGISTRY) -version $(VERSION) -root .

## build: compile everything
build:
	go build ./...

## test: unit, whole-response, staleness, render-golden, validate and package tests
test:
	go vet ./...
	go test -count=1 ./...

## render: run crossplane render on every example with the function on loopback
render:
	hack/render.sh $(OUT)/render

## xpkg: build the Function and Configuration packages into $(OUT) (reproducible)
xpkg:
	REGISTRY=$(REGISTRY) VERSION=$(VERSION) hack/xpkg.sh $(OUT)

## push: push both packages to $(REGISTRY)
push: xpkg
	$$($(TOOLS) crossplane) xpkg push -f $(OUT)/function-firebolt-$(VERSION).xpkg $(REGISTRY)/function-firebolt:$(VERSION)
	$$($(TOOLS) crossplane) xpkg push -f $(OUT)/configuration-firebolt-$(VERSION).xpkg $(REGISTRY)/configuration-firebolt:$(VERSION)

clean:
	rm -rf $(OUT)
