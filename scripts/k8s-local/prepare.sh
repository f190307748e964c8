#!/bin/bash
# Prepares a real single-node Kubernetes for alight's Kubernetes runner tests (and for trying the runner on one
# machine): Debian packages, the Kubernetes server binaries built from the k8s.io/kubernetes Go module (no
# registry or release download is reachable here), its PKI and the container images, all under $K. Idempotent:
# what is there is kept, so a second run takes a second. Run as root. ~20 min cold on 2 cores (the Go build).
#   KVER=v1.37.2   the Kubernetes version (its staging modules are v0.<minor>.<patch>)
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
K=${ALIGHT_K8S_DIR:-$HOME/.cache/alight/k8s}; KVER=${KVER:-v1.37.2}
mkdir -p "$K/bin" "$K/build" "$K/images" "$K/pki"
T0=$(date +%s); say() { echo "[k8s prepare $(( $(date +%s) - T0 ))s] $*"; }

# 1. Debian packages. kubelet 1.37 is the last to accept containerd 1.x (Debian 12's).
need=""
for p in containerd etcd-server containernetworking-plugins runc busybox-static iptables conntrack debootstrap gcc libc6-dev openssl; do
  dpkg -s "$p" >/dev/null 2>&1 || need="$need $p"
done
if [ -n "$need" ]; then
  say "apt-get install$need"
  DEBIAN_FRONTEND=noninteractive apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $need
fi

# 2. The server binaries, from a wrapper module whose replace block maps the staging modules to their releases.
CMDS="kube-apiserver kube-controller-manager kube-scheduler kube-proxy kubelet"
if ! [ -f "$K/bin/.version" ] || [ "$(cat "$K/bin/.version")" != "$KVER" ]; then
  command -v go >/dev/null || { echo "building Kubernetes needs Go >= 1.26 on PATH" >&2; exit 1; }
  export GOCACHE="$K/go/cache" GOMODCACHE="$K/go/mod" GOFLAGS=-mod=mod
  cd "$K/build"
  say "go mod download k8s.io/kubernetes@$KVER"
  nice -n 19 go mod download k8s.io/kubernetes@"$KVER"
  MOD="$GOMODCACHE/cache/download/k8s.io/kubernetes/@v/$KVER.mod"
  {
    printf 'module k8sbuild\n\ngo 1.26.0\n\nrequire k8s.io/kubernetes %s\n\nreplace (\n' "$KVER"
    sed -n '/^replace (/,/^)/p' "$MOD" | grep '=>' | awk -v v="v0.${KVER#v1.}" '{print "\t"$1" => "$1" "v}'
    echo ')'
  } > go.mod
  { printf '//go:build tools\n\npackage tools\n\nimport (\n'; for c in $CMDS; do printf '\t_ "k8s.io/kubernetes/cmd/%s"\n' "$c"; done; echo ')'; } > tools.go
  say "go mod tidy"
  nice -n 19 go mod tidy
  # Without the version stamped the server says v0.0.0-master+$Format:%H$, which clients cannot parse.
  LD="-s"; MINOR=$(echo "$KVER" | cut -d. -f2)
  for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    LD="$LD -X $p.gitVersion=$KVER -X $p.gitMajor=1 -X $p.gitMinor=$MINOR -X $p.gitTreeState=clean"
  done
  note=" (it compiles most of Kubernetes: ~13 min on 2 cores)"
  for c in $CMDS; do
    say "go build $c$note"; note=""
    nice -n 19 go build -trimpath -ldflags="$LD" -o "$K/bin/$c" k8s.io/kubernetes/cmd/"$c"
  done
  echo "$KVER" > "$K/bin/.version"
  # The binaries are what is kept; the ~5 GB of Go caches are not needed again.
  chmod -R u+w "$K/go" && rm -rf "$K/go"
fi

# 3. Images, as docker-archive tarballs that `ctr images import` takes (no registry is reachable).
cd "$K/images"
if [ ! -f pause.tar ]; then
  say "image localhost/pause:local"
  gcc -Os -static -o pause "$HERE/pause.c" && strip pause
  rm -rf pause-root && mkdir pause-root && mv pause pause-root/pause
  python3 "$HERE/mkimage.py" pause-root localhost/pause:local pause.tar '["/pause"]' && rm -rf pause-root
fi
if [ ! -f busybox.tar ]; then
  say "image localhost/busybox:local"
  rm -rf bb-root && mkdir -p bb-root/bin bb-root/etc bb-root/tmp
  cp /bin/busybox bb-root/bin/busybox
  for a in $(/bin/busybox --list); do [ "$a" = busybox ] || ln -sf busybox "bb-root/bin/$a"; done
  echo 'root:x:0:0:root:/root:/bin/sh' > bb-root/etc/passwd && echo 'root:x:0:' > bb-root/etc/group
  python3 "$HERE/mkimage.py" bb-root localhost/busybox:local busybox.tar && rm -rf bb-root
fi
# The harness and task image: Python with the openai SDK, pytest, git and patch (an SWE task's tools), and this
# machine's Node (the demo's harness is a Node script; its node_modules come from a volume).
if [ ! -f alight-py.tar ]; then
  say "image localhost/alight-py:local (debootstrap bookworm, ~2 min)"
  rm -rf py-root
  nice -n 19 debootstrap --variant=minbase --include=python3,python3-pytest,git,patch bookworm py-root \
    "${DEBIAN_MIRROR:-http://deb.debian.org/debian}" > debootstrap.log 2>&1
  python3 -m pip install --quiet --no-compile --no-warn-conflicts --root-user-action=ignore --disable-pip-version-check --target py-root/usr/local/lib/python3.11/dist-packages \
    --only-binary=:all: --python-version 3.11 --platform manylinux2014_x86_64 'openai>=1.50,<3'
  cp "$(readlink -f "$(command -v node)")" py-root/usr/local/bin/node
  rm -rf py-root/var/cache/apt/* py-root/var/lib/apt/lists/* py-root/usr/share/doc py-root/usr/share/man py-root/usr/share/locale
  python3 "$HERE/mkimage.py" py-root localhost/alight-py:local alight-py.tar && rm -rf py-root
fi
say "ready: $(ls "$K/bin" | tr '\n' ' ')/ images: $(ls ./*.tar | tr '\n' ' ')"
