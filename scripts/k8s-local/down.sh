#!/bin/bash
# Stops what up.sh started (by its recorded pids) and undoes its changes to the host: containers, mounts, the bridge,
# the KUBE-*/CNI-* iptables chains, network namespaces, IP forwarding, cgroups and the paths kubelet and containerd
# hard-code. KEEP_DATA=1 keeps etcd's data and the image store for a faster start.
K=${ALIGHT_K8S_DIR:-$HOME/.cache/alight/k8s}
R=$K/run; P=$R/pids
CTR="ctr --address $R/containerd/containerd.sock -n k8s.io"
stop() {
  local pid; [ -f "$P/$1" ] || return 0
  pid=$(cat "$P/$1")
  if kill -0 "$pid" 2>/dev/null; then
    kill "$pid"; for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null
  fi
  rm -f "$P/$1"
}
stop kubelet  # first, so that it restarts nothing
if [ -S "$R/containerd/containerd.sock" ]; then
  for t in $($CTR tasks ls -q 2>/dev/null); do $CTR tasks kill -s SIGKILL "$t" > /dev/null 2>&1; done
  sleep 1
  for t in $($CTR tasks ls -q 2>/dev/null); do $CTR tasks delete -f "$t" > /dev/null 2>&1; done
  for c in $($CTR containers ls -q 2>/dev/null); do $CTR containers delete "$c" > /dev/null 2>&1; done
fi
stop kube-proxy
[ -x "$K/bin/kube-proxy" ] && "$K/bin/kube-proxy" --cleanup --proxy-mode=iptables > /dev/null 2>&1
for n in kube-scheduler kube-controller-manager kube-apiserver containerd etcd; do stop $n; done
pkill -f "containerd-shim-runc-v2 .*-address $R/containerd/containerd.sock" 2>/dev/null
grep -o " $R[^ ]*" /proc/mounts | sort -r | while read -r m; do umount -l "$m" 2>/dev/null; done
ip link del alightbr0 2>/dev/null
for ipt in iptables ip6tables; do
  for t in filter nat mangle; do
    $ipt -t $t -S 2>/dev/null | grep -E '^-A [A-Z]+ .*-j (KUBE|CNI)-' | sed 's/^-A/-D/' | while read -r r; do eval "$ipt -t $t $r"; done
    chains=$($ipt -t $t -S 2>/dev/null | awk '/^-N (KUBE|CNI)-/{print $2}')
    for ch in $chains; do $ipt -t $t -F "$ch"; done
    for ch in $chains; do $ipt -t $t -X "$ch"; done
  done
done
ip netns list 2>/dev/null | awk '/^cni-/{print $1}' | while read -r ns; do ip netns del "$ns"; done
[ -f "$R/ip_forward.orig" ] && cat "$R/ip_forward.orig" > /proc/sys/net/ipv4/ip_forward
for h in /sys/fs/cgroup/*/; do
  for d in kubepods k8s.io; do [ -d "$h$d" ] && find "$h$d" -depth -type d -exec rmdir {} \; 2>/dev/null; done
done
rm -rf /var/log/containers /var/log/pods /run/containerd /var/lib/kubelet /usr/libexec/kubernetes
rm -rf "$R/pids" "$R/logs" "$R/cni-ipam" "$R/kubelet" "$R/pod-logs"
[ "${KEEP_DATA:-0}" = 1 ] || rm -rf "$R"
echo "[k8s down] stopped"
