#!/usr/bin/env bash
# build.sh -- build kube-apiserver and etcd from the pinned wrapper modules in
# scripts/control-plane.d/{k8s,etcd} into a content-addressed cache directory and
# print that directory (the only line on stdout). Builds only on a cache miss.
#
# Cache dir: ${XDG_CACHE_HOME:-$HOME/.cache}/clinv/control-plane/<key>, where key is a
# short sha256 over both wrappers' go.mod+go.sum, the Go version and this script.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export GOTOOLCHAIN=local GOWORK=off CGO_ENABLED=0

log() { echo "control-plane build: $*" >&2; }
command -v go >/dev/null 2>&1 || {
  log "'go' not found in PATH (need Go >= 1.26; see docs/control-plane.md)"; exit 1; }

gover=$(go env GOVERSION)
key=$( { echo "$gover"; cat "$here/k8s/go.mod" "$here/k8s/go.sum" \
         "$here/etcd/go.mod" "$here/etcd/go.sum" "$here/build.sh"; } | sha256sum | cut -c1-16)
cache=${XDG_CACHE_HOME:-$HOME/.cache}/clinv/control-plane
out=$cache/$key
complete() { [[ -x $1/kube-apiserver && -x $1/etcd ]]; }
if complete "$out"; then echo "$out"; exit 0; fi

mkdir -p "$cache"
# Serialise concurrent builds (e.g. two `up`s racing); the loser then hits the cache.
exec 9>"$cache/.lock"
flock 9
if complete "$out"; then echo "$out"; exit 0; fi

tmp=$(mktemp -d "$cache/.build.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
log "cache miss ($out); building with $gover (cold: ~15-25 min on 2 cores)"

# Version stamping, as upstream's hack/lib/version.sh does, so /version and
# `kube-apiserver --version` report the real release instead of v0.0.0-master.
read -r kv ktime < <(cd "$here/k8s" &&
  go list -mod=readonly -m -f '{{.Version}} {{.Time.UTC.Format "2006-01-02T15:04:05Z"}}' k8s.io/kubernetes)
major=${kv#v}; major=${major%%.*}
minor=${kv#v*.}; minor=${minor%%.*}
ld="-s -w"
for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  ld+=" -X $p.gitVersion=$kv -X $p.gitMajor=$major -X $p.gitMinor=$minor"
  # gitCommit: the proxy does not tell us k/k's commit; empty beats "$Format:%H$".
  ld+=" -X $p.gitCommit= -X $p.gitTreeState=clean -X $p.buildDate=$ktime"
done
ev=$(cd "$here/etcd" && go list -mod=readonly -m -f '{{.Version}}' go.etcd.io/etcd/server/v3)

total=$SECONDS
t=$SECONDS
(cd "$here/k8s" && go mod download) >&2
(cd "$here/etcd" && go mod download) >&2
log "modules downloaded in $((SECONDS - t))s"

t=$SECONDS
(cd "$here/k8s" && go build -mod=readonly -buildvcs=false -trimpath -tags notest -ldflags "$ld" \
   -o "$tmp/kube-apiserver" k8s.io/kubernetes/cmd/kube-apiserver) >&2
log "kube-apiserver $kv built in $((SECONDS - t))s"

t=$SECONDS
(cd "$here/etcd" && go build -mod=readonly -buildvcs=false -trimpath \
   -ldflags "-s -w -X go.etcd.io/etcd/api/v3/version.GitSHA=module-$ev" \
   -o "$tmp/etcd" go.etcd.io/etcd/server/v3) >&2
log "etcd $ev built in $((SECONDS - t))s"

"$tmp/kube-apiserver" --version >&2
"$tmp/etcd" --version >&2
log "total build time $((SECONDS - total))s"
chmod 755 "$tmp"
rm -rf "$out"            # a partial dir can only exist if someone created it by hand
mv -T "$tmp" "$out"
trap - EXIT
echo "$out"
