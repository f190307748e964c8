#!/bin/bash
# The cluster's certificates (openssl): a CA, the API server's and kubelet's serving certificates (for this host's
# address), the components' client certificates and the service-account key pair. Kept when there; a serving
# certificate that does not name the host's current address is made again.
set -euo pipefail
cd "$1"; NODE=$2; HOSTIP=$3
[ -f ca.key ] || { openssl genrsa -out ca.key 2048 2>/dev/null; openssl req -x509 -new -nodes -key ca.key -subj "/CN=alight-k8s-ca" -days 3650 -out ca.crt; }
for s in apiserver kubelet-serving; do
  [ -f $s.crt ] && ! openssl x509 -in $s.crt -noout -ext subjectAltName | grep -q "IP Address:$HOSTIP\b" && rm -f $s.crt
done
sign() { # name CN O extensions
  [ -f "$1.crt" ] && return 0
  openssl genrsa -out "$1.key" 2048 2>/dev/null
  local subj="/CN=$2"; [ -n "$3" ] && subj="/O=$3$subj"
  openssl req -new -key "$1.key" -subj "$subj" -out "$1.csr"
  printf '%s\n' "$4" > "$1.ext"
  openssl x509 -req -in "$1.csr" -CA ca.crt -CAkey ca.key -CAcreateserial -days 3650 -extfile "$1.ext" -out "$1.crt" 2>/dev/null
  rm -f "$1.csr" "$1.ext"
}
BASE='basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment'
CLIENT="$BASE
extendedKeyUsage=clientAuth"
sign apiserver kube-apiserver "" "$BASE
extendedKeyUsage=serverAuth
subjectAltName=DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local,DNS:$NODE,IP:127.0.0.1,IP:10.96.0.1,IP:$HOSTIP"
sign kubelet-serving "$NODE" "" "$BASE
extendedKeyUsage=serverAuth
subjectAltName=DNS:localhost,DNS:$NODE,IP:127.0.0.1,IP:$HOSTIP"
sign admin admin system:masters "$CLIENT"
sign controller-manager system:kube-controller-manager "" "$CLIENT"
sign scheduler system:kube-scheduler "" "$CLIENT"
sign kubelet "system:node:$NODE" system:nodes "$CLIENT"
sign apiserver-kubelet-client kube-apiserver-kubelet-client system:masters "$CLIENT"
sign kube-proxy system:kube-proxy "" "$CLIENT"
[ -f sa.key ] || { openssl genrsa -out sa.key 2048 2>/dev/null; openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null; }
chmod 600 ./*.key
