#!/usr/bin/env bash
# Installs the reference LLM proxy (Microsoft Agent Lightning, PyPI `agentlightning`) into its own venv:
#   ${ALIGHT_CACHE:-$HOME/.cache/alight}/peers/agl
# Idempotent: a marker file records a finished install; a second run only re-checks the import.
# agentlightning 1.0.x's proxy is its own FastAPI + httpx app (agentlightning.server), not LiteLLM, so the
# package's own dependencies are all it needs.
set -euo pipefail

AGL_VERSION="${AGL_VERSION:-1.0.2}"
CACHE="${ALIGHT_CACHE:-$HOME/.cache/alight}"
VENV="$CACHE/peers/agl"
MARKER="$VENV/.alight-agl-installed"
PY="$VENV/bin/python"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
CONSTRAINTS="$HERE/agl-constraints.txt"  # versions of a verified install; AGL_UNPINNED=1 to take the newest deps

log() { printf '[setup-agl] %s\n' "$*"; }

check() { "$PY" -c 'import agentlightning, agentlightning.server.app, uvicorn; print(agentlightning.__version__)' 2>/dev/null; }

if [[ -f "$MARKER" && "$(cat "$MARKER")" == "agentlightning==$AGL_VERSION" && -x "$PY" ]]; then
  if v="$(check)" && [[ "$v" == "$AGL_VERSION" ]]; then
    log "already installed: agentlightning $v in $VENV"
    exit 0
  fi
  log "marker present but import failed; reinstalling"
  rm -f "$MARKER"
fi

start=$(date +%s)
if [[ ! -x "$PY" ]]; then
  log "creating venv $VENV (python 3.12)"
  mkdir -p "$(dirname "$VENV")"
  rm -rf "$VENV"
  PYENV_VERSION="${PYENV_VERSION:-3.12.1}" python -m venv "$VENV"
fi
"$PY" -c 'import sys; assert sys.version_info >= (3, 12), sys.version' || {
  log "venv python is older than 3.12 (agentlightning needs >= 3.12); remove $VENV and set PYENV_VERSION"
  exit 1
}

log "upgrading pip"
"$PY" -m pip install --quiet --disable-pip-version-check --upgrade pip
log "installing agentlightning==$AGL_VERSION"
pin=()
if [[ -z "${AGL_UNPINNED:-}" && -f "$CONSTRAINTS" && "$AGL_VERSION" == 1.0.2 ]]; then pin=(-c "$CONSTRAINTS"); fi
"$PY" -m pip install --quiet --disable-pip-version-check "${pin[@]}" "agentlightning==$AGL_VERSION"

if ! v="$(check)"; then
  log "import agentlightning failed after install"
  exit 1
fi
echo "agentlightning==$AGL_VERSION" >"$MARKER"
log "installed agentlightning $v in $(( $(date +%s) - start ))s; venv size $(du -sh "$VENV" | cut -f1)"
