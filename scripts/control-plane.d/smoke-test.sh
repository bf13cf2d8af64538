#!/usr/bin/env bash
# smoke-test.sh -- end-to-end check of scripts/control-plane with kubectl:
# up, admin + "nobody" identities, a CRD becoming Established, status, reuse, down.
# KUBECTL overrides the kubectl binary (default: the image's kubectl.1.33, which is
# within version skew of the 1.34 server; /usr/bin/kubectl is gcloud's dispatcher).
# Leaves the control plane DOWN unless KEEP_UP=1.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cp=$here/../control-plane
dir=$(cd "$here/../.." && pwd)/target/control-plane
kubectl=${KUBECTL:-/usr/lib/google-cloud-sdk/bin/kubectl.1.33}
[[ -x $kubectl ]] || kubectl=$(command -v kubectl) || { echo "no kubectl" >&2; exit 1; }

fail() { echo "SMOKE FAIL: $*" >&2; exit 1; }
ok() { echo "ok: $*" >&2; }
k() { "$kubectl" --kubeconfig "$dir/kubeconfig" "$@"; }
kn() { "$kubectl" --kubeconfig "$dir/kubeconfig-nobody" "$@"; }
[[ ${KEEP_UP:-0} == 1 ]] || trap '"$cp" down >/dev/null 2>&1 || true' EXIT

t0=$EPOCHREALTIME
last=$("$cp" up </dev/null | tail -n 1)
echo "up took $(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN{printf "%.1f", b-a}')s" >&2
[[ $last == "export KUBECONFIG=$dir/kubeconfig" ]] || fail "unexpected last line: $last"

k get ns default kube-system kube-public kube-node-lease >/dev/null && ok "namespaces"
k version | grep -q '^Server Version: v1\.' && ok "$(k version | grep Server)"
[[ $(k auth can-i '*' '*') == yes ]] && ok "admin can do everything"
[[ $(kn auth can-i get customresourcedefinitions || true) == no ]] && ok "nobody cannot get CRDs"
out=$(kn get crd 2>&1 || true)
[[ $out == *"Forbidden"* && $out == *'User "nobody"'* ]] || fail "nobody get crd: $out"
ok "nobody get crd is Forbidden"

k apply --server-side -f - >/dev/null <<'EOF'
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: smokes.test.clinv.dev
spec:
  group: test.clinv.dev
  names: {kind: Smoke, listKind: SmokeList, plural: smokes, singular: smoke}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        x-kubernetes-preserve-unknown-fields: true
EOF
k wait --for condition=established --timeout=60s crd/smokes.test.clinv.dev >/dev/null
ok "CRD Established"
printf 'apiVersion: test.clinv.dev/v1\nkind: Smoke\nmetadata: {name: s1, namespace: default}\n' |
  k apply --server-side -f - >/dev/null && k get smokes s1 >/dev/null && ok "custom resource applied"

"$cp" status >/dev/null && ok "status: ready"
[[ $("$cp" up 2>&1 | tail -n 1) == "export KUBECONFIG=$dir/kubeconfig" ]] && ok "second up reused"
if [[ ${KEEP_UP:-0} != 1 ]]; then
  "$cp" down 2>/dev/null
  if "$cp" status >/dev/null; then fail "status ready after down"; fi
  if pgrep -a -x etcd || pgrep -a -x kube-apiserver; then fail "processes left"; fi
  ok "down, no etcd/kube-apiserver processes left"
fi
echo "SMOKE OK" >&2
