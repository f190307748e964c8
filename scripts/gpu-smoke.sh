#!/usr/bin/env bash
# alight's backends on one real GPU, in parts (PARTS, default "torch verl"; each part runs whatever the one before it
# found):
#   torch  the demo (examples/vowels, the seed-made model) with the torch worker on the GPU, full weights and a rank-16
#          LoRA adapter side by side, each held to the README's promise (the last 5 steps' mean reward at least 0.5
#          above the first 5's) and to the served-policy check on every step; then the worker's Python tests on the
#          GPU. Needs only alight's Python environment (made by the demo where missing).
#   verl   two training steps of a small model through verl (FSDP actor, vLLM server mode, alight's loss, weight sync)
#          with examples/vowels, full weights then a rank-16 LoRA adapter (verl syncs it into its vLLM servers each
#          step), then the metrics. Needs the verl virtualenv (~5 GB from PyPI; `alight doctor --backend verl --setup`).
#   scripts/gpu-smoke.sh                          # MODEL (verl): Qwen/Qwen2.5-0.5B-Instruct from the Hugging Face hub
#   MODEL=/path/to/model PARTS=verl scripts/gpu-smoke.sh
# Prints a line per part and a final `gpu-smoke: ok` or `gpu-smoke: FAILED <parts>`; exit status 0 or 1. Where it has
# run, and what it found: docs/verification.md. A GPU machine without network or Node: scripts/gpu-bundle.sh packs what
# the torch part needs.
set -uo pipefail
cd "$(dirname "$0")/.."
PARTS=${PARTS:-torch verl}
MODEL=${MODEL:-Qwen/Qwen2.5-0.5B-Instruct}
WORK=${WORK:-$(mktemp -d)}
mkdir -p "$WORK"
PY=${ALIGHT_PYTHON_ENV:-$HOME/.cache/alight/python}/bin/python
failed=()
fail() { echo "gpu-smoke: FAILED $*"; exit 1; }
alight() { node bin/alight.js "$@"; }

command -v nvidia-smi >/dev/null && nvidia-smi -L | grep -q '^GPU ' || fail "no NVIDIA GPU (nvidia-smi lists none)"
if command -v npm >/dev/null; then
  [ -d node_modules ] || npm ci --no-audit --no-fund || fail "npm ci"
  # A copied build with only the runtime's packages has no compiler: it runs as it is.
  [ ! -x node_modules/.bin/tsc ] || npm run build >/dev/null || fail "build"
fi
[ -f dist/commands/index.js ] || fail "no build (npm run build)"

# One demo; its project folder's metrics must show the GPU, the promise kept and the served-policy check on each step.
demo() {
  local name=$1 rank=$2
  ALIGHT_DEMO_LORA_RANK=$rank node --import tsx examples/train-demo.ts > "$WORK/$name.log" 2>&1 ||
    { echo "torch $name: the demo failed ($WORK/$name.log)"; tail -20 "$WORK/$name.log"; return 1; }
  local dir; dir=$(sed -n 's/^demo project in //p' "$WORK/$name.log")
  grep -q ' on cuda' "$dir/.alight/runs/demo/worker.log" || { echo "torch $name: the worker was not on the GPU"; return 1; }
  alight runs show demo --db "$dir/.alight/alight.db" --json > "$WORK/$name.json" || return 1
  node -e '
    const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
    const diffs = r.steps.map((s) => s.metrics.served_logprob_diff);
    if (!diffs.every(Number.isFinite)) throw new Error(`a step without the served-policy check: ${diffs}`);
    console.log(`${r.steps.length} steps, served-policy check on each (largest difference ${Math.max(...diffs).toExponential(1)} nats)`);
  ' "$WORK/$name.json" | sed "s/^/torch $name: /" || return 1
  grep '^mean reward' "$WORK/$name.log" | sed "s/^/torch $name: /"
}

torch_part() {
  demo full 0 & local full=$!
  demo lora 16 & local lora=$!
  "$PY" -m pytest -q -p no:cacheprovider python/tests/test_worker.py python/tests/test_lora.py \
    python/tests/test_sft_loss.py python/tests/test_stream_text.py > "$WORK/pytest.log" 2>&1 & local tests=$!
  local ok=0
  wait $full || ok=1
  wait $lora || ok=1
  wait $tests || ok=1
  echo "torch pytest: $(tail -1 "$WORK/pytest.log")"
  return $ok
}

# Two steps of verl; the served-policy check runs after each sync (a run that fails it exits non-zero), and its
# difference is checked here too. verl does not fit a lent GPU machine without network (~5.2 GB beyond its torch:
# docs/verification.md), so this part needs one with PyPI.
verl_run() {
  local run=$1; shift
  alight train --backend verl --gpus 1 --model "$MODEL" --tasks examples/vowels/tasks.jsonl -n 4 --batch-size 2 \
    --steps 2 --max-response-tokens 256 --save-every 2 --run "$run" --db "$WORK/alight.db" --json "$@" \
    -- node examples/vowels/harness.mjs > "$WORK/$run.json" || { echo "verl $run: alight train failed (worker log: $WORK/runs/$run/worker.log)"; return 1; }
  alight runs show "$run" --db "$WORK/alight.db" || return 1
  node -e '
    const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
    const bad = r.steps.filter((s) => !(Number.isFinite(s.metrics.loss) && s.metrics.rollouts > 0 && s.metrics.version === s.step + 1 && s.metrics.served_logprob_diff < 0.02));
    if (r.steps.length !== 2 || bad.length) { console.error("unexpected steps", JSON.stringify(r.steps)); process.exit(1); }
  ' "$WORK/$run.json"
}

verl_part() {
  alight doctor --backend verl --setup || { echo "verl: its virtualenv could not be made"; return 1; }
  verl_run gpu-smoke && verl_run gpu-smoke-lora --lora-rank 16
}

for part in $PARTS; do
  if "${part}_part"; then echo "gpu-smoke: $part ok"; else failed+=("$part"); fi
done
[ ${#failed[@]} -eq 0 ] || fail "${failed[*]} ($WORK)"
echo "gpu-smoke: ok ($WORK)"
