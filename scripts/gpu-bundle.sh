#!/usr/bin/env bash
# Packs what scripts/gpu-smoke.sh needs onto a GPU machine that has no network and no Node, but a python3 with torch,
# transformers and peft (this workplace's lent machines): Node itself (xz), the runtime's packages without llama.cpp's
# prebuilt binaries, and tsx for the demo, into .gpu/ (git-ignored), beside a script that unpacks them there, points
# alight's Python environment at that python3, and runs the smoke's torch part. On the GPU machine, from the repo root,
# with .gpu/ and dist/ copied along:
#   bash .gpu/run.sh                # writes its log to $OUT/ when set
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .gpu
grep -qx '/.gpu/' .git/info/exclude 2>/dev/null || echo '/.gpu/' >> .git/info/exclude
npm run build >/dev/null
xz -9 -T0 -c "$(command -v node)" > .gpu/node.xz
# The runtime's packages (llama.cpp's binaries left out: the smoke serves nothing with them), and tsx for the demo.
{ npm ls --omit=dev --parseable --all | grep node_modules | sed "s|^$PWD/||" | grep -v 'node-llama-cpp'
  printf '%s\n' node_modules/tsx node_modules/esbuild node_modules/@esbuild/linux-x64 node_modules/openai; } |
  sort -u > .gpu/packages.txt
files=()
while read -r d; do
  while IFS= read -r f; do files+=("$f"); done < <(find "$d" -path "$d/node_modules" -prune -o -print)
done < .gpu/packages.txt
tar -cJf .gpu/nm.tar.xz --exclude='better-sqlite3/deps' --exclude='better-sqlite3/src' --exclude='*.map' \
  --exclude='*.d.ts' --exclude='*.d.mts' --exclude='*.d.cts' --no-recursion "${files[@]}"
cat > .gpu/run.sh <<'RUN'
#!/usr/bin/env bash
set -u
OUT=${OUT:-/tmp/gpu-out}; mkdir -p "$OUT"
exec > >(tee "$OUT/device.log") 2>&1
nvidia-smi -L
mkdir -p /tmp/nb && xz -dc .gpu/node.xz > /tmp/nb/node && chmod +x /tmp/nb/node && export PATH=/tmp/nb:$PATH
tar -xJf .gpu/nm.tar.xz
# alight's Python environment is this machine's python3 (torch, transformers, peft), marked as installed.
export ALIGHT_PYTHON_ENV=/tmp/env
mkdir -p /tmp/env/bin && printf '#!/bin/sh\nexec %s "$@"\n' "$(command -v python3)" > /tmp/env/bin/python
chmod +x /tmp/env/bin/python && touch /tmp/env/.alight-venv
{ printf %s requirements.txt; cat python/requirements.txt; } | sha256sum | cut -c1-16 | tr -d '\n' > /tmp/env/.alight-base
python3 -c "import torch, transformers, peft; print(torch.__version__, transformers.__version__, peft.__version__)"
WORK=/tmp/smoke PARTS=${PARTS:-torch} bash scripts/gpu-smoke.sh; echo "smoke exit $?"
for f in full.log lora.log pytest.log; do cp "/tmp/smoke/$f" "$OUT/" 2>/dev/null; done
RUN
chmod +x .gpu/run.sh
du -ch .gpu dist | tail -1
