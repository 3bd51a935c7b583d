#!/usr/bin/env bash
# Renders every example under examples/render/<case>/ with crossplane render:
# starts the function on loopback (--insecure), waits for its port, renders
# with the XRD, observed and required resources of each case, and stops the
# function on exit. Output goes to OUTDIR/<case>.yaml.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-_out/render}
crossplane=${CROSSPLANE:-$(hack/tools.sh crossplane)}
core=${CROSSPLANE_CORE:-$(hack/tools.sh crossplane-core)}
port=${RENDER_PORT:-9443}
mkdir -p "$out"

go build -o "$out/function" ./cmd/function
"$out/function" --insecure --debug --address="127.0.0.1:$port" --metrics-address= >"$out/function.log" 2>&1 &
fn_pid=$!
trap 'kill $fn_pid 2>/dev/null || true; wait $fn_pid 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do
	(exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
	kill -0 $fn_pid 2>/dev/null || { cat "$out/function.log" >&2; exit 1; }
	sleep 0.1
done

for dir in examples/render/*/; do
	name=$(basename "$dir")
	kind=$(sed -n 's/^kind: *//p' "$dir/xr.yaml" | head -1)
	case $kind in
	XFireboltEngine) comp=engine; xrd=xfireboltengines ;;
	XFireboltEngineClass) comp=engineclass; xrd=xfireboltengineclasses ;;
	XFireboltInstance) comp=instance; xrd=xfireboltinstances ;;
	*) echo "$dir/xr.yaml: unknown kind $kind" >&2; exit 1 ;;
	esac
	args=(--crossplane-binary="$core" --xrd="apis/definitions/$xrd.yaml" --include-full-xr
		--include-function-results --timeout=60s
		-a "render.crossplane.io/runtime-development-target=127.0.0.1:$port")
	[ -e "$dir/observed.yaml" ] && args+=(--observed-resources="$dir/observed.yaml")
	[ -e "$dir/required.yaml" ] && args+=(--required-resources="$dir/required.yaml")
	"$crossplane" render "$dir/xr.yaml" "composition/$comp.yaml" examples/functions.yaml "${args[@]}" >"$out/$name.yaml"
	echo "rendered $name -> $out/$name.yaml"
done
