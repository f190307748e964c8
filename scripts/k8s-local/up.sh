#!/bin/bash
# Starts the single-node cluster prepare.sh built: etcd, containerd, the control plane, kubelet and kube-proxy, each
# in its own session (it outlives this script), niced, its pid in $K/run/pids and its log in $K/run/logs. What is
# already running is kept, so this also restarts one component that was stopped. Run as root; ~10 s.
# Then: KUBECONFIG=$K/admin.kubeconfig. down.sh stops it and undoes what it changed on the host.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
K=${ALIGHT_K8S_DIR:-$HOME/.cache/alight/k8s}
NODE=alight-node
HOSTIP=${HOSTIP:-$(ip -4 route get 1.1.1.1 2>/dev/null | awk '{for(i=1;i<=NF;i++) if($i=="src") print $(i+1)}')}
HOSTIP=${HOSTIP:-$(hostname -I | awk '{print $1}')}
R=$K/run; L=$R/logs; P=$R/pids; B=$K/bin; PKI=$K/pki
[ -f "$B/.version" ] || { echo "the cluster is not built: run $HERE/prepare.sh first" >&2; exit 1; }
# The images unpack to ~2 GB under $R: a full disk would otherwise fail deep inside containerd's import.
FREE_KB=$(df -Pk "$K" | awk 'NR == 2 {print $4}')
[ "$FREE_KB" -ge $((3 * 1024 * 1024)) ] || {
  echo "only $((FREE_KB / 1024)) MiB free on the disk of $K: the cluster needs ~3 GiB (its images unpack there)" >&2
  exit 1
}
mkdir -p "$L" "$P" "$R/etcd" "$R/containerd" "$R/kubelet" "$R/pod-logs" "$K/cni"
# The bridge plugin turns IP forwarding on; down.sh puts back what was there.
[ -f "$R/ip_forward.orig" ] || cat /proc/sys/net/ipv4/ip_forward > "$R/ip_forward.orig"
T0=$(date +%s%N); say() { echo "[k8s up $(( ($(date +%s%N) - T0) / 1000000 ))ms] $*"; }
start() { # name command...
  local n=$1; shift
  if [ -f "$P/$n" ] && kill -0 "$(cat "$P/$n")" 2>/dev/null; then return; fi
  setsid nice -n 19 "$@" > "$L/$n.log" 2>&1 < /dev/null &
  echo $! > "$P/$n"
  say "started $n (pid $!)"
}
waitfor() { # what seconds command...
  local what=$1 until=$(( $(date +%s) + $2 )); shift 2
  until "$@" > /dev/null 2>&1; do
    [ "$(date +%s)" -lt "$until" ] || { say "timed out waiting for $what; logs in $L" >&2; exit 1; }
    sleep 0.2
  done
  say "$what ready"
}
"$HERE/pki.sh" "$PKI" "$NODE" "$HOSTIP"
kubeconfig() { # file user cert
  cat > "$K/$1" <<EOC
apiVersion: v1
kind: Config
clusters:
- name: alight-local
  cluster: {certificate-authority: $PKI/ca.crt, server: "https://127.0.0.1:6443"}
users:
- name: $2
  user: {client-certificate: $PKI/$3.crt, client-key: $PKI/$3.key}
contexts:
- name: alight-local
  context: {cluster: alight-local, user: $2}
current-context: alight-local
EOC
}
kubeconfig admin.kubeconfig admin admin
kubeconfig controller-manager.kubeconfig system:kube-controller-manager controller-manager
kubeconfig scheduler.kubeconfig system:kube-scheduler scheduler
kubeconfig kubelet.kubeconfig "system:node:$NODE" kubelet
kubeconfig kube-proxy.kubeconfig system:kube-proxy kube-proxy

start etcd /usr/bin/etcd --name default --data-dir "$R/etcd" \
  --listen-client-urls http://127.0.0.1:2379 --advertise-client-urls http://127.0.0.1:2379 \
  --listen-peer-urls http://127.0.0.1:2380 --initial-advertise-peer-urls http://127.0.0.1:2380 \
  --initial-cluster default=http://127.0.0.1:2380

# This VM cannot set a negative oom_score_adj (no CAP_SYS_RESOURCE): restrict_oom_score_adj clamps it.
sed -e "s|@R@|$R|g" -e "s|@K@|$K|g" "$HERE/containerd.toml" > "$R/containerd/config.toml"
sed -e "s|@R@|$R|g" "$HERE/cni.conflist" > "$K/cni/10-bridge.conflist"
start containerd /usr/bin/containerd --config "$R/containerd/config.toml"
waitfor etcd 30 curl -sf http://127.0.0.1:2379/health

start kube-apiserver "$B/kube-apiserver" --etcd-servers=http://127.0.0.1:2379 \
  --bind-address=0.0.0.0 --secure-port=6443 --advertise-address="$HOSTIP" \
  --tls-cert-file="$PKI/apiserver.crt" --tls-private-key-file="$PKI/apiserver.key" --client-ca-file="$PKI/ca.crt" \
  --service-account-key-file="$PKI/sa.pub" --service-account-signing-key-file="$PKI/sa.key" \
  --service-account-issuer=https://kubernetes.default.svc.cluster.local \
  --authorization-mode=Node,RBAC --enable-admission-plugins=NodeRestriction --service-cluster-ip-range=10.96.0.0/16 \
  --kubelet-client-certificate="$PKI/apiserver-kubelet-client.crt" --kubelet-client-key="$PKI/apiserver-kubelet-client.key" \
  --kubelet-certificate-authority="$PKI/ca.crt" --kubelet-preferred-address-types=InternalIP,Hostname --v=1
API="curl -sf --cacert $PKI/ca.crt --cert $PKI/admin.crt --key $PKI/admin.key https://127.0.0.1:6443"
waitfor kube-apiserver 120 $API/readyz

start kube-controller-manager "$B/kube-controller-manager" --kubeconfig="$K/controller-manager.kubeconfig" \
  --authentication-kubeconfig="$K/controller-manager.kubeconfig" --authorization-kubeconfig="$K/controller-manager.kubeconfig" \
  --bind-address=127.0.0.1 --leader-elect=false --use-service-account-credentials=true \
  --service-account-private-key-file="$PKI/sa.key" --root-ca-file="$PKI/ca.crt" \
  --cluster-signing-cert-file="$PKI/ca.crt" --cluster-signing-key-file="$PKI/ca.key" \
  --flex-volume-plugin-dir="$R/kcm-flexvolume" --controllers='*,-nodeipam' --v=1
start kube-scheduler "$B/kube-scheduler" --kubeconfig="$K/scheduler.kubeconfig" \
  --authentication-kubeconfig="$K/scheduler.kubeconfig" --authorization-kubeconfig="$K/scheduler.kubeconfig" \
  --bind-address=127.0.0.1 --leader-elect=false --v=1

waitfor containerd 30 test -S "$R/containerd/containerd.sock"
CTR="ctr --address $R/containerd/containerd.sock -n k8s.io"
for tar in "$K"/images/*.tar; do
  ref=localhost/$(basename "$tar" .tar):local
  $CTR images ls -q | grep -qx "$ref" || $CTR images import "$tar" > /dev/null
done
say "images: $($CTR images ls -q | grep -c localhost/)"

sed -e "s|@R@|$R|g" -e "s|@PKI@|$PKI|g" "$HERE/kubelet.yaml" > "$K/kubelet-config.yaml"
start kubelet "$B/kubelet" --config="$K/kubelet-config.yaml" --kubeconfig="$K/kubelet.kubeconfig" \
  --hostname-override="$NODE" --node-ip="$HOSTIP" --root-dir="$R/kubelet" --cert-dir="$R/kubelet/pki" --v=1
# These flags leave the host's conntrack sysctls and route_localnet as they are.
start kube-proxy "$B/kube-proxy" --kubeconfig="$K/kube-proxy.kubeconfig" --hostname-override="$NODE" \
  --proxy-mode=iptables --cluster-cidr=10.244.0.0/24 --conntrack-max-per-core=0 \
  --conntrack-tcp-timeout-established=0 --conntrack-tcp-timeout-close-wait=0 --iptables-localhost-nodeports=false \
  --metrics-bind-address=127.0.0.1:10249 --healthz-bind-address=127.0.0.1:10256 --v=1
waitfor kubelet 60 curl -sf http://127.0.0.1:10248/healthz
ready() {
  $API/api/v1/nodes/$NODE | python3 -c 'import json, sys
sys.exit(0 if any(c["type"] == "Ready" and c["status"] == "True" for c in json.load(sys.stdin)["status"]["conditions"]) else 1)'
}
waitfor "node $NODE" 120 ready
waitfor "default service account" 60 $API/api/v1/namespaces/default/serviceaccounts/default
say "cluster up: KUBECONFIG=$K/admin.kubeconfig (pods reach this host at $HOSTIP)"
