#!/usr/bin/env bash
# The verl backend on one real GPU: two training steps of a small model through verl (FSDP actor, vLLM server mode,
# alight's loss, weight sync) with the example harness (examples/vowels), then the metrics; then the same with a LoRA
# adapter. Not run yet: no GPU has been lent to a session since LoRA was built.
#   scripts/gpu-smoke.sh                          # Qwen/Qwen2.5-0.5B-Instruct from the Hugging Face hub
#   MODEL=/path/to/model scripts/gpu-smoke.sh     # a local model folder (machines without network)
# Needs: an NVIDIA GPU with ~24 GB, Node ≥ 20, python3 ≥ 3.10; the first run installs the verl virtualenv (~5 GB).
# Prints a final line `gpu-smoke: ok` or `gpu-smoke: FAILED <reason>`; exit status 0 or 1.
set -uo pipefail
cd "$(dirname "$0")/.."
MODEL=${MODEL:-Qwen/Qwen2.5-0.5B-Instruct}
WORK=${WORK:-$(mktemp -d)}
fail() { echo "gpu-smoke: FAILED $*"; exit 1; }

command -v nvidia-smi >/dev/null && nvidia-smi -L | grep -q '^GPU ' || fail "no NVIDIA GPU (nvidia-smi lists none)"
[ -d node_modules ] || npm ci --no-audit --no-fund || fail "npm ci"
npm run build >/dev/null || fail "build"
alight() { node bin/alight.js "$@"; }
alight doctor --backend verl --setup || fail "the verl virtualenv"
# Two steps of verl; the second run trains a rank-16 LoRA adapter (verl syncs it into its vLLM servers each step).
# The served-policy check does not run on verl yet (docs/training.md): the steps' metrics are what this checks.
smoke() {
  local run=$1; shift
  alight train --backend verl --gpus 1 --model "$MODEL" --tasks examples/vowels/tasks.jsonl -n 4 --batch-size 2 \
    --steps 2 --max-response-tokens 256 --save-every 2 --run "$run" --db "$WORK/alight.db" --json "$@" \
    -- node examples/vowels/harness.mjs > "$WORK/$run.json" || fail "alight train $run (worker log: $WORK/runs/$run/worker.log)"
  alight runs show "$run" --db "$WORK/alight.db" || fail "runs show $run"
  node -e '
    const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
    const bad = r.steps.filter((s) => !(Number.isFinite(s.metrics.loss) && s.metrics.rollouts > 0 && s.metrics.version === s.step + 1));
    if (r.steps.length !== 2 || bad.length) { console.error("unexpected steps", JSON.stringify(r.steps)); process.exit(1); }
  ' "$WORK/$run.json" || fail "the steps' metrics of $run"
}
smoke gpu-smoke
smoke gpu-smoke-lora --lora-rank 16
echo "gpu-smoke: ok ($WORK)"
