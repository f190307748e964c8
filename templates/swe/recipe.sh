#!/bin/sh
# From SWE task files to a trained and evaluated agent: the recipe behind Agent Lightning's SWE result (Qwen3.5-9B,
# SWE-bench Verified 41.8% -> 56.4% with ~6k samples), with its numbers as the defaults. Each line can be run by hand;
# the variables change the inputs. Run from the folder `alight init --template swe` made.
set -eu
TASKS=${TASKS:?TASKS=<SWE-bench-style files: swe-smith.parquet swe-gym.jsonl ...>}
UPSTREAM=${UPSTREAM:-http://127.0.0.1:8000/v1} # the policy as it is now (alight serve-vllm MODEL)
REPOS=${REPOS:-repos}                          # clones owner__name/ (fetch-repos.mjs makes them)
K=${K:-4}                                      # probe attempts per task
ADD_UNSOLVED=${ADD_UNSOLVED:-1000}             # never-solved tasks kept besides the ~5k mixed ones
VAL=${VAL:-400}                                # held out for validation
CONCURRENCY=${CONCURRENCY:-32}                 # grades and harnesses at once
ALIGHT=${ALIGHT:-alight}
# An absolute path: with --repos the harness runs in each attempt's fresh workspace.
AGENT_JS=${AGENT_JS:-"$PWD/swe-agent.mjs"}
# The trained policy for the final eval: its last checkpoint served with vLLM, unless EVAL_UPSTREAM names a server.
EVAL_UPSTREAM=${EVAL_UPSTREAM:-}
set -f # TASKS is a list of files: split it, never glob it

# 1. Tasks: import, structural rules, duplicates, overlap with SWE-bench Verified.
$ALIGHT data import $TASKS
$ALIGHT data clean
$ALIGHT data dedupe
$ALIGHT data decontaminate
$ALIGHT data export --out kept.jsonl
node fetch-repos.mjs kept.jsonl "$REPOS"
SWE_AGENT_REPOS=$(cd "$REPOS" && pwd) # where swe-agent.mjs makes its workspaces in training
export SWE_AGENT_REPOS
# 2. Environments: the gold patch must resolve each task, and at the base F2P fail and P2P pass.
$ALIGHT data validate --repos "$REPOS" --workers "$CONCURRENCY"
# 3. Difficulty: the policy's own harness K times on every task.
$ALIGHT data probe -k "$K" --repos "$REPOS" --upstream "$UPSTREAM" --concurrency "$CONCURRENCY" --run probe \
  -- node "$AGENT_JS"
# 4. The training set: tasks solved sometimes (not 0/K, not K/K), some never solved, a validation hold-out.
$ALIGHT data select --solve-rate '0<r<1' --add-unsolved "$ADD_UNSOLVED" --val "$VAL" --seed 0
$ALIGHT data export --out train.jsonl
$ALIGHT data export --held-out --out val.jsonl
# 5. Train on the selection (alight.config.yaml: verl on 8 GPUs), then evaluate the trained policy on the hold-out.
# shellcheck disable=SC2086 # TRAIN_ARGS is a list of flags
$ALIGHT train --from-db --run train ${TRAIN_ARGS:-} -- node "$AGENT_JS"
if [ -n "$EVAL_UPSTREAM" ]; then
  POLICY="--upstream $EVAL_UPSTREAM"
else
  # The last checkpoint: a model folder (torch), or one inside it (verl's huggingface/).
  CHECKPOINT=$(ls -d .alight/runs/train/checkpoints/step-* | sort -V | tail -n 1)
  if [ -d "$CHECKPOINT/huggingface" ]; then CHECKPOINT="$CHECKPOINT/huggingface"; fi
  POLICY="--serve-vllm $CHECKPOINT"
fi
# shellcheck disable=SC2086 # POLICY is a flag and its value
$ALIGHT eval swebench --tasks val.jsonl --repos "$REPOS" $POLICY --run eval-val -- node "$AGENT_JS"
