#!/usr/bin/env bash
# Builds a pinned tool from its wrapper module (hack/tools/<name>) into a cache
# folder outside the repository, keyed by the wrapper's go.mod/go.sum (and,
# for a wrapper whose main is a program of ours, its Go files), and prints the
# binary's path. A warm cache skips the build entirely. The Crossplane CLI and
# core are the exception: they are `tool` lines of the project's own go.mod,
# so they and the project's tests compile Kubernetes' client libraries, gRPC
# and crossplane-runtime once, at one set of versions.
#
#   hack/tools.sh prefetch         download every wrapper's modules (no build)
#   hack/tools.sh crossplane       Crossplane CLI v2.5.0 (render, validate, xpkg)
#   hack/tools.sh crossplane-core  Crossplane core v2.4.0 (render engine, controller)
#   hack/tools.sh controller-gen   controller-gen v0.23.0 (deepcopy, CRDs for hack/generate.sh)
#   hack/tools.sh crossplane-module  the source of Crossplane core v2.4.0 (its CRDs and webhook configurations)
#   hack/tools.sh etcd             etcd v3.6.5 (end-to-end control plane)
#   hack/tools.sh kube-apiserver|kube-controller-manager|kube-scheduler|kubectl
#                                  Kubernetes v1.34.4; the four are built together (15-20 min cold)
#   hack/tools.sh kwok             KWOK v0.8.0 (simulated nodes and pods)
#   hack/tools.sh kwok-stages      the KWOK stage file the end-to-end tests feed it
#   hack/tools.sh golangci-lint    golangci-lint v2.15.0 (make lint; 5-10 min cold)
#   hack/tools.sh prometheus       Prometheus v3.7.3 (module v0.307.3; the server phased-rollout checks query in e2e)
#   hack/tools.sh promtool         promtool of the same module (checks deploy/monitoring's alert rules)
#   hack/tools.sh provider-kubernetes       provider-kubernetes v0.17.1 (its provider binary, cmd/provider)
#   hack/tools.sh provider-kubernetes-crds  the directory of provider-kubernetes v0.17.1's CRDs (package/crds)
#   hack/tools.sh cert-manager       cert-manager v1.21.1's controllers for Certificates, SelfSigned and CA issuers
#                                    (hack/tools/cert-manager-kwok: our main over its exported pkg/controller; no webhook, no cainjector)
#   hack/tools.sh cert-manager-crds  the directory of cert-manager v1.21.1's CRDs (deploy/crds)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
# The compiler spends much of a cold build collecting garbage. With the
# collector off until a process holds GOMEMLIMIT, client-go's packages compiled
# in 147 s against 156 s at GOGC=400 and 179 s at the default (2 cores); two
# compilers and a linker stay under 12 GiB.
export GOGC=${TOOLS_GOGC:-off} GOMEMLIMIT=${TOOLS_GOMEMLIMIT:-4GiB}
# The settings the Makefile gives the tests and hack/xpkg.sh the function's
# package: with the same settings everywhere, a package the tools share with
# the tests (the standard library, client-go, gRPC) is compiled once.
export CGO_ENABLED=0
cache=${FIREBOLT_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/firebolt-crossplane/tools}
version_pkg=github.com/crossplane/crossplane-runtime/v2/pkg/version.version
date_stamp=

if [ "${1:-}" = prefetch ]; then
	# Every wrapper's modules, so that each build finds its sources and starts
	# compiling at once (hack/setup.sh runs this beside the builds). Go locks
	# each module in its cache, so this racing a build's own download is safe.
	for m in "$root"/hack/tools/*/; do
		(cd "$m" && go mod download) || exit 1
	done
	exit 0
fi

case "${1:-}" in
crossplane)      dir=; pkg=github.com/crossplane/cli/v2/cmd/crossplane;       version=v2.5.0 ;;
crossplane-core) dir=; pkg=github.com/crossplane/crossplane/v2/cmd/crossplane; version=v2.4.0 ;;
crossplane-module) dir=; pkg=; version=v2.4.0 ;;
# controller-gen has no version variable to stamp; -X of an absent symbol is a no-op.
controller-gen)  dir=controller-gen; pkg=sigs.k8s.io/controller-tools/cmd/controller-gen; version=v0.23.0 ;;
etcd)            dir=etcd; pkg=.; version=v3.6.5 ;;
kwok)            dir=cert-manager-kwok; pkg=sigs.k8s.io/kwok/cmd/kwok; version=v0.8.0 ;;
kwok-stages)     dir=cert-manager-kwok; pkg=; version=v0.8.0 ;;
kube-apiserver|kube-controller-manager|kube-scheduler|kubectl) dir=kube; pkg=; version=v1.34.4 ;;
# golangci-lint reads its version from package main; a non-empty date stops it
# replacing that with the wrapper module's "(devel)".
golangci-lint)   dir=golangci-lint; pkg=github.com/golangci/golangci-lint/v2/cmd/golangci-lint; version=v2.15.0
	version_pkg=main.version date_stamp="-X=main.date=1970-01-01T00:00:00Z" ;;
# Prometheus v3.7.3 is Go module v0.307.3; its version lives in prometheus/common.
# Built with only the Kubernetes service discovery (plugins.go.overlay).
prometheus)      dir=prometheus; pkg=github.com/prometheus/prometheus/cmd/prometheus; version=v3.7.3
	version_pkg=github.com/prometheus/common/version.Version overlay=plugins/plugins.go ;;
# promtool of the same module, with the same overlay (it registers the plugins too).
promtool)        dir=prometheus; pkg=github.com/prometheus/prometheus/cmd/promtool; version=v3.7.3
	version_pkg=github.com/prometheus/common/version.Version overlay=plugins/plugins.go ;;
# provider-kubernetes v0.17.1 is the newest release the module proxy builds; it
# has no version variable to stamp (-X of an absent symbol is a no-op).
provider-kubernetes)      dir=provider-kubernetes; pkg=github.com/crossplane-contrib/provider-kubernetes/cmd/provider; version=v0.17.1 ;;
provider-kubernetes-crds) dir=provider-kubernetes; pkg=; version=v0.17.1 ;;
# cert-manager's controller command is a module of its own that the module
# proxy does not serve; the wrapper's main runs the controllers its root
# module exports, so the wrapper's Go files are part of the key.
cert-manager)      dir=cert-manager-kwok; pkg=.; version=v1.21.1; own_main=1
	version_pkg=github.com/cert-manager/cert-manager/pkg/util.AppVersion ;;
cert-manager-crds) dir=cert-manager-kwok; pkg=; version=v1.21.1 ;;
*) echo "usage: $0 prefetch|crossplane|crossplane-core|crossplane-module|controller-gen|etcd|kube-apiserver|kube-controller-manager|kube-scheduler|kubectl|kwok|kwok-stages|golangci-lint|prometheus|promtool|provider-kubernetes|provider-kubernetes-crds|cert-manager|cert-manager-crds" >&2; exit 2 ;;
esac

mod="$root/hack/tools/$dir"
if [ -z "$dir" ]; then
	mod=$root
	if [ -n "$pkg" ]; then
		# The project's go.mod pins the release; a bump there must be a bump
		# here, or the cache key would name a version that is not built.
		got=$(cd "$mod" && go list -mod=readonly -m -f '{{.Version}}' "${pkg%%/cmd/*}")
		[ "$got" = "$version" ] || { echo "go.mod requires ${pkg%%/cmd/*} $got, hack/tools.sh builds $version" >&2; exit 1; }
	fi
fi
keyed=("$mod/go.mod" "$mod/go.sum")
if [ -n "${own_main:-}" ]; then
	keyed+=("$mod"/*.go)
fi
if [ -n "${overlay:-}" ]; then
	keyed+=("$mod"/*.overlay)
fi
key=$(cat "${keyed[@]}" | sha256sum | cut -c1-12)

case "$1" in
kube-*|kubectl)
	# One build for all four: they share nearly all their compile work. Without
	# the version stamps the server reports v0.0.0-master and kubectl refuses
	# to parse it.
	outdir="$cache/kube-$version-$key"
	if [ ! -x "$outdir/$1" ]; then
		mkdir -p "$cache"
		echo "building Kubernetes $version into $outdir (first time only; 15-20 min cold)" >&2
		ld="-s -w"
		for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
			ld="$ld -X=$p.gitVersion=$version -X=$p.gitMajor=1 -X=$p.gitMinor=34 -X=$p.gitTreeState=clean -X=$p.buildDate=1970-01-01T00:00:00Z"
		done
		rm -rf "$outdir.tmp" && mkdir -p "$outdir.tmp"
		(cd "$mod" && go build -mod=readonly -trimpath -ldflags="$ld" -o "$outdir.tmp/" \
			k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager \
			k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kubectl)
		rm -rf "$outdir" && mv "$outdir.tmp" "$outdir"
	fi
	echo "$outdir/$1"
	exit 0
	;;
crossplane-module)
	(cd "$mod" && go mod download github.com/crossplane/crossplane/v2 &&
		go list -mod=readonly -m -f '{{.Dir}}' github.com/crossplane/crossplane/v2)
	exit 0
	;;
provider-kubernetes-crds)
	src=$(cd "$mod" && go mod download github.com/crossplane-contrib/provider-kubernetes &&
		go list -mod=readonly -m -f '{{.Dir}}' github.com/crossplane-contrib/provider-kubernetes)
	echo "$src/package/crds"
	exit 0
	;;
cert-manager-crds)
	src=$(cd "$mod" && go mod download github.com/cert-manager/cert-manager &&
		go list -mod=readonly -m -f '{{.Dir}}' github.com/cert-manager/cert-manager)
	echo "$src/deploy/crds"
	exit 0
	;;
kwok-stages)
	# Standalone KWOK has no built-in stages: feed it the module's own
	# node-initialize, lease heartbeat and pod ready/complete/delete stages.
	out="$cache/kwok-stages-$version-$key.yaml"
	if [ ! -s "$out" ]; then
		mkdir -p "$cache"
		src=$(cd "$mod" && go mod download sigs.k8s.io/kwok && go list -mod=readonly -m -f '{{.Dir}}' sigs.k8s.io/kwok)
		for f in node/fast/node-initialize.yaml node/heartbeat-with-lease/node-heartbeat-with-lease.yaml \
			pod/fast/pod-ready.yaml pod/fast/pod-complete.yaml pod/fast/pod-delete.yaml; do
			echo '---'
			cat "$src/kustomize/stage/$f"
		done >"$out.tmp"
		mv "$out.tmp" "$out"
	fi
	echo "$out"
	exit 0
	;;
esac
out="$cache/$1-$version-$key"
if [ ! -x "$out" ]; then
	mkdir -p "$cache"
	echo "building $1 $version into $out (first time only; 5-10 min cold)" >&2
	flags=()
	if [ -n "${overlay:-}" ]; then
		# One file of the tool's module is replaced by the wrapper's
		# <base>.overlay. Go refuses overlays inside the module cache, so
		# the module is copied out, the file replaced, and the build pointed
		# at the copy through a scratch go.mod (the wrapper's, plus a
		# replace directive) next to a copy of its go.sum.
		modpath=${pkg%%/cmd/*}
		src=$(cd "$mod" && go mod download "$modpath" && go list -mod=readonly -m -f '{{.Dir}}' "$modpath")
		scratch=$(mktemp -d)
		trap 'chmod -R u+w "$scratch" && rm -rf "$scratch"' EXIT
		cp -r "$src" "$scratch/module"
		chmod -R u+w "$scratch/module"
		cp "$mod/$(basename "$overlay").overlay" "$scratch/module/$overlay"
		cp "$mod/go.mod" "$scratch/go.mod"
		cp "$mod/go.sum" "$scratch/go.sum"
		printf '\nreplace %s => %s\n' "$modpath" "$scratch/module" >>"$scratch/go.mod"
		flags+=(-modfile "$scratch/go.mod")
	fi
	(cd "$mod" && go build -mod=readonly -trimpath "${flags[@]}" -ldflags="-s -w -X=$version_pkg=$version $date_stamp" -o "$out.tmp" "$pkg")
	mv "$out.tmp" "$out"
fi
echo "$out"
