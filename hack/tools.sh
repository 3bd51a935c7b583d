#!/usr/bin/env bash
# Builds a pinned tool from its wrapper module (hack/tools/<name>) into a cache
# folder outside the repository, keyed by the wrapper's go.mod/go.sum, and
# prints the binary's path. A warm cache skips the build entirely.
#
#   hack/tools.sh crossplane       Crossplane CLI v2.5.0 (render, validate, xpkg)
#   hack/tools.sh crossplane-core  Crossplane core v2.4.0 (render engine, controller)
#   hack/tools.sh controller-gen   controller-gen v0.23.0 (deepcopy, CRDs for hack/generate.sh)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cache=${FIREBOLT_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/firebolt-crossplane/tools}
version_pkg=github.com/crossplane/crossplane-runtime/v2/pkg/version.version

case "${1:-}" in
crossplane)      dir=xp-cli;  pkg=github.com/crossplane/cli/v2/cmd/crossplane;       version=v2.5.0 ;;
crossplane-core) dir=xp-core; pkg=github.com/crossplane/crossplane/v2/cmd/crossplane; version=v2.4.0 ;;
# controller-gen has no version variable to stamp; -X of an absent symbol is a no-op.
controller-gen)  dir=controller-gen; pkg=sigs.k8s.io/controller-tools/cmd/controller-gen; version=v0.23.0 ;;
*) echo "usage: $0 crossplane|crossplane-core|controller-gen" >&2; exit 2 ;;
esac

mod="$root/hack/tools/$dir"
key=$(cat "$mod/go.mod" "$mod/go.sum" | sha256sum | cut -c1-12)
out="$cache/$1-$version-$key"
if [ ! -x "$out" ]; then
	mkdir -p "$cache"
	echo "building $1 $version into $out (first time only; 5-10 min cold)" >&2
	(cd "$mod" && go build -mod=readonly -ldflags="-s -w -X=$version_pkg=$version" -o "$out.tmp" "$pkg")
	mv "$out.tmp" "$out"
fi
echo "$out"
