#!/usr/bin/env bash
# make setup: the repository's modules, then every tool the tests run, one
# after another (two builds at a time took as long as one after another: they
# are CPU-bound on 2 cores). Meanwhile every tool's modules download in the
# background, so no build waits on the network. golangci-lint is not here:
# `make lint` builds it on first use.
set -euo pipefail
cd "$(dirname "$0")/.."

hack/tools.sh prefetch >/dev/null 2>&1 &
prefetch=$!
trap 'kill "$prefetch" 2>/dev/null || true' EXIT

go mod download
for t in crossplane crossplane-core controller-gen etcd kube-apiserver kwok kwok-stages \
	prometheus promtool prometheus-operator-crds provider-kubernetes cert-manager; do
	echo "hack/tools.sh $t"
	hack/tools.sh "$t" >/dev/null
done
# The builds fetched whatever they needed themselves, so a failed prefetch
# loses nothing; say so rather than hide it.
wait "$prefetch" || echo "setup: the background module download failed; each build fetched its own" >&2
