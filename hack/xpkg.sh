#!/usr/bin/env bash
# Builds both packages without Docker, reproducibly:
#   OUT/function-firebolt-$VERSION.xpkg       Function package, runtime image embedded
#   OUT/configuration-firebolt-$VERSION.xpkg  Configuration package (XRDs + Compositions)
# REGISTRY and VERSION come from the Makefile.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: hack/xpkg.sh OUTDIR}
: "${REGISTRY:?}" "${VERSION:?}"
crossplane=${CROSSPLANE:-$(hack/tools.sh crossplane)}
mkdir -p "$out"
# The toolchain go.mod pins, exactly: a newer local Go would otherwise build a
# different binary, and the packages would differ between machines.
GOTOOLCHAIN=$(go mod edit -json | sed -n 's/^[[:space:]]*"Toolchain": "\(go[0-9.]*\)".*/\1/p')
: "${GOTOOLCHAIN:?go.mod has no toolchain line}"
export GOTOOLCHAIN
out=$(cd "$out" && pwd)
work="$out/.work"
rm -rf "$work" && mkdir -p "$work/no-examples"

# A static binary: the runtime image has no libc.
CGO_ENABLED=0 GOOS=linux GOARCH=amd64 go build -trimpath -ldflags='-s -w' -o "$work/function" ./cmd/function
go run ./hack/imagebuild -binary "$work/function" -o "$work/runtime-amd64.tar" -tag function-firebolt-runtime:amd64
"$crossplane" xpkg build --package-root=package --examples-root="$work/no-examples" \
	--embed-runtime-image-tarball="$work/runtime-amd64.tar" -o "$out/function-firebolt-$VERSION.xpkg"

go run ./hack/pkgstage -registry "$REGISTRY" -version "$VERSION" -stage "$work/configuration"
"$crossplane" xpkg build --package-root="$work/configuration" --examples-root=examples/claims \
	-o "$out/configuration-firebolt-$VERSION.xpkg"

rm -rf "$work"
(cd "$out" && sha256sum "function-firebolt-$VERSION.xpkg" "configuration-firebolt-$VERSION.xpkg")
