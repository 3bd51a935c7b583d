#!/usr/bin/env bash
# make setup: every tool the tests run, built one after another (two builds
# at a time took as long as one after another: they are CPU-bound on 2
# cores). The modules download in the background meanwhile, in the order the
# builds need them, so no build waits on the network: the project's own
# modules (46-68 s into an empty module cache, and the Crossplane CLI's build
# needs them all) download beside the first two builds, whose modules are
# small. golangci-lint is not built here: `make lint` builds it on first use.
set -euo pipefail
cd "$(dirname "$0")/.."

go mod download >/dev/null 2>&1 &
project=$!
hack/tools.sh prefetch >/dev/null 2>&1 &
prefetch=$!
trap 'kill "$project" "$prefetch" 2>/dev/null || true' EXIT

for t in etcd controller-gen crossplane crossplane-core kube-apiserver kwok kwok-stages \
	prometheus promtool prometheus-operator-crds provider-kubernetes cert-manager; do
	echo "hack/tools.sh $t"
	hack/tools.sh "$t" >/dev/null
done
# The builds fetched whatever they needed themselves, so a failed download
# loses nothing; say so rather than hide it.
wait "$project" || echo "setup: the background download of the project's modules failed; the builds fetched their own" >&2
wait "$prefetch" || echo "setup: the background download of the tools' modules failed; each build fetched its own" >&2
