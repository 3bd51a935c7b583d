#!/usr/bin/env bash
# Regenerates everything derived from the Go API types:
#   apis/v1alpha1/zz_generated.deepcopy.go, apis/apps/v1alpha1/zz_generated.deepcopy.go,
#   apis/stsplus/v1alpha1/zz_generated.deepcopy.go,
#   apis/input/v1beta1/zz_generated.deepcopy.go
#   package/input/firebolt.fn.crossplane.io_inputs.yaml   (function input CRD)
#   apis/definitions/x*.yaml                               (one XRD per composite kind)
#   docs/api-reference.md, docs/troubleshooting.md         (from the XRDs and fn/reasons)
#
#   hack/generate.sh [OUTROOT]
#
# OUTROOT defaults to the repository; a test generates into a temporary
# folder and compares it with the committed files.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$root}
mkdir -p "$out"
out=$(cd "$out" && pwd)

cg=$("$root/hack/tools.sh" controller-gen)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cd "$root"
mkdir -p "$out/apis/v1alpha1" "$out/apis/apps/v1alpha1" "$out/apis/stsplus/v1alpha1" "$out/apis/input/v1beta1" "$out/package/input" "$out/apis/definitions" "$out/docs"

"$cg" object paths=./apis/v1alpha1 output:object:dir="$out/apis/v1alpha1"
"$cg" object paths=./apis/apps/v1alpha1 output:object:dir="$out/apis/apps/v1alpha1"
"$cg" object paths=./apis/stsplus/v1alpha1 output:object:dir="$out/apis/stsplus/v1alpha1"
"$cg" object paths=./apis/input/v1beta1 output:object:dir="$out/apis/input/v1beta1"

# The input CRD is a schema only; Crossplane never installs it.
rm -f "$out"/package/input/*.yaml
"$cg" crd:crdVersions=v1 paths=./apis/input/v1beta1 output:crd:dir="$out/package/input"

"$cg" crd:crdVersions=v1 paths=./apis/v1alpha1 paths=./apis/apps/v1alpha1 paths=./apis/stsplus/v1alpha1 output:crd:dir="$tmp/crds"
rm -f "$out"/apis/definitions/x*.yaml
go run ./hack/xrdgen -crds "$tmp/crds" -out "$out/apis/definitions"
go run ./hack/apidocs -xrds "$out/apis/definitions" -out "$out/docs"
