#!/usr/bin/env bash
# gen-k8s-gomod.sh VERSION -- (re)generate scripts/control-plane.d/k8s/go.mod for
# k8s.io/kubernetes@VERSION (e.g. v1.34.4) and run `go mod tidy`.
#
# k8s.io/kubernetes requires its staging modules (k8s.io/api, k8s.io/apiserver, ...)
# at the fake version v0.0.0 and maps them to ./staging/... with replace directives,
# which only apply when k/k is the main module. This wrapper module replaces every
# such v0.0.0 requirement with the matching published staging tag (v1.X.Y -> v0.X.Y).
# Maintenance tool only: run it by hand when changing the pin, then commit go.mod/go.sum.
set -euo pipefail
kv=${1:?usage: gen-k8s-gomod.sh v1.X.Y}
sv=v0.${kv#v1.}
here=$(cd "$(dirname "$0")" && pwd)
export GOTOOLCHAIN=local GOWORK=off

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
gomod=$(cd "$tmp" && go mod download -json "k8s.io/kubernetes@$kv" |
        sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
[[ -f $gomod ]] || { echo "cannot download k8s.io/kubernetes@$kv" >&2; exit 1; }
gover=$(awk '$1 == "go" {print $2; exit}' "$gomod")

# k8s.io/* modules that k/k requires at v0.0.0 (inside a require block or single-line).
mods=$(awk '
  $1 ~ /^k8s\.io\// && $2 == "v0.0.0"                     {print $1}
  $1 == "require" && $2 ~ /^k8s\.io\// && $3 == "v0.0.0" {print $2}
' "$gomod" | sort -u)

{
  echo "module clinv.local/control-plane/k8s"
  echo
  echo "go $gover"
  echo
  grep -E '^godebug ' "$gomod" || true
  echo
  echo "tool k8s.io/kubernetes/cmd/kube-apiserver"
  echo
  echo "require k8s.io/kubernetes $kv"
  echo
  echo "replace ("
  for m in $mods; do printf '\t%s => %s %s\n' "$m" "$m" "$sv"; done
  echo ")"
} > "$here/k8s/go.mod"
rm -f "$here/k8s/go.sum"
echo "wrote $here/k8s/go.mod ($(wc -w <<<"$mods") staging replaces at $sv); running go mod tidy" >&2
(cd "$here/k8s" && go mod tidy)
