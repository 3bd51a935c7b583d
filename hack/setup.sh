#!/usr/bin/env bash
# Builds every pinned tool (hack/tools.sh) in two lanes at once. A cold build
# spends much of its time downloading modules and linking, which use one core
# or none; two lanes keep both cores of a small machine busy. The lanes are
# balanced by their cold build times; each lane's output is kept in a log
# and printed when the lane ends, so the two do not interleave.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
tools="$root/hack/tools.sh"
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT

lane() {
	local name=$1
	shift
	local start=$SECONDS
	for t in "$@"; do
		"$tools" "$t" >/dev/null
	done
	echo "lane $name ($*) done in $((SECONDS - start)) s"
}

lane a crossplane crossplane-core controller-gen etcd kwok kwok-stages golangci-lint >"$logs/a" 2>&1 &
a=$!
lane b kube-apiserver prometheus provider-kubernetes cert-manager >"$logs/b" 2>&1 &
b=$!
rc=0
wait "$a" || rc=1
cat "$logs/a"
wait "$b" || rc=1
cat "$logs/b"
exit "$rc"
