#!/usr/bin/env bash
# Builds both packages and the kubectl plugin without Docker, reproducibly:
#   OUT/function-firebolt-$VERSION.xpkg       Function package, runtime image embedded
#   OUT/configuration-firebolt-$VERSION.xpkg  Configuration package (XRDs + Compositions)
#   OUT/kubectl-firebolt-$VERSION-<os>-<arch>.tar.gz  the plugin for linux and darwin, amd64 and arm64
#   OUT/firebolt.yaml                         its krew manifest (each archive's URL and SHA-256)
# REGISTRY and VERSION come from the Makefile; PLUGIN_URL is where the
# archives are published (default: the GitHub release of VERSION);
# PACKAGES_ONLY=1 builds the two packages and not the plugin;
# PLUGIN_PLATFORMS="linux/amd64 ..." builds and packs the plugin for those of
# its platforms alone (the package test: this machine's), not for a release.
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
# hack/krewpack holds the list of platforms the plugin ships for; a
# PLUGIN_PLATFORMS word that is not one of them is refused before anything
# is built.
if [[ "${PACKAGES_ONLY:-}" != 1 ]]; then
	shipped=$(go run ./hack/krewpack -list)
	platforms=${PLUGIN_PLATFORMS:-$shipped}
	for platform in $platforms; do
		case " $shipped " in
		*" $platform "*) ;;
		*) echo "PLUGIN_PLATFORMS: $platform is not a platform the plugin ships for ($shipped)" >&2; exit 1 ;;
		esac
	done
fi
rm -rf "$work" && mkdir -p "$work/no-examples"

# A static binary: the runtime image has no libc.
CGO_ENABLED=0 GOOS=linux GOARCH=amd64 go build -trimpath -ldflags='-s -w' -o "$work/function" ./cmd/function
go run ./hack/imagebuild -binary "$work/function" -o "$work/runtime-amd64.tar" -tag function-firebolt-runtime:amd64
"$crossplane" xpkg build --package-root=package --examples-root="$work/no-examples" \
	--embed-runtime-image-tarball="$work/runtime-amd64.tar" -o "$out/function-firebolt-$VERSION.xpkg"

go run ./hack/pkgstage -registry "$REGISTRY" -version "$VERSION" -stage "$work/configuration"
"$crossplane" xpkg build --package-root="$work/configuration" --examples-root=examples/claims \
	-o "$out/configuration-firebolt-$VERSION.xpkg"

# The plugin: static, paths trimmed, the version stamped, one archive per
# platform with fixed times and owners (hack/krewpack). PACKAGES_ONLY=1
# leaves it out: the end-to-end harness installs the two packages and needs
# nothing else, and cold, the plugin's builds for three foreign platforms
# were most of the time its stack waited for.
plugin_files=()
if [[ "${PACKAGES_ONLY:-}" != 1 ]]; then
	plugin_url=${PLUGIN_URL:-https://github.com/firebolt-db/firebolt-crossplane/releases/download/$VERSION}
	for platform in $platforms; do
		os=${platform%/*} arch=${platform#*/}
		CGO_ENABLED=0 GOOS=$os GOARCH=$arch go build -trimpath \
			-ldflags="-s -w -X github.com/firebolt-db/firebolt-crossplane/internal/kubectlfirebolt.Version=$VERSION" \
			-o "$work/plugin/$os-$arch/kubectl-firebolt" ./cmd/kubectl-firebolt
	done
	license=()
	if [[ -f LICENSE ]]; then license=(-license LICENSE); fi
	# An assignment, not a process substitution, so that a failure stops here.
	packed=$(go run ./hack/krewpack -version "$VERSION" -url "$plugin_url" \
		-bins "$work/plugin" -out "$out" -platforms "$platforms" "${license[@]}")
	mapfile -t plugin_files <<<"$packed"
fi

rm -rf "$work"
(cd "$out" && sha256sum "function-firebolt-$VERSION.xpkg" "configuration-firebolt-$VERSION.xpkg" "${plugin_files[@]}")
