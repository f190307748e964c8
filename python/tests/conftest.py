"""Fixtures shared by alight's Python tests: the repository, the built CLI, and a run recorded through the gateway."""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "python"))  # alight_worker
sys.path.insert(0, str(REPO / "python" / "reference"))


def alight(*args, check=True):
    """Runs the built CLI (npm run build first) as a user would."""
    res = subprocess.run(
        ["node", str(REPO / "bin" / "alight.js"), *map(str, args)], capture_output=True, text=True, cwd=REPO
    )
    if check and res.returncode != 0:
        raise AssertionError(f"alight {' '.join(map(str, args))} exited {res.returncode}:\n{res.stderr}")
    return res


@pytest.fixture(scope="session")
def recorded_run(tmp_path_factory):
    """{"db", "run"}: 12 rollouts recorded from the openai-SDK harness (see test/helpers/record-reference-run.ts)."""
    out = subprocess.run(
        ["node", "--import", "tsx", "test/helpers/record-reference-run.ts", str(tmp_path_factory.mktemp("recorded"))],
        capture_output=True,
        text=True,
        cwd=REPO,
        env={**os.environ, "NODE_NO_WARNINGS": "1"},
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """A tiny model made from a seed (alight_worker/tiny.py): its folder."""
    from alight_worker.tiny import make

    return make(str(tmp_path_factory.mktemp("tiny") / "model"), seed=0)


def one_row_batch(prompt, ids, served):
    """A batch of one row: the prompt, then the answer's tokens with advantage 1, weighted 1/len(answer)."""
    tokens, mask = list(prompt) + list(ids), [0] * len(prompt) + [1] * len(ids)
    return {
        "input_ids": np.array(tokens, dtype=np.int32),
        "row_offsets": np.array([0, len(tokens)], dtype=np.int64),
        "prompt_lengths": np.array([len(prompt)], dtype=np.int32),
        "loss_mask": np.array(mask, dtype=np.uint8),
        "rollout_logprobs": np.array([0.0] * len(prompt) + list(served), dtype=np.float32),
        "advantages": np.array(mask, dtype=np.float32),
        "loss_weights": np.array([m / len(ids) for m in mask], dtype=np.float32),
        "rollout_index": np.array([0], dtype=np.int32),
    }


def torch_settings(model, training=None, **over):
    """init's settings for the torch worker, whole (src/worker/settings.ts): the worker defaults none. `training`: the
    update's (training_settings), or None to serve only."""
    return {
        "backend": "torch",
        "model": model,
        "name": None,
        "seed": 0,
        "threads": None,
        "max_batch": 64,
        "training": training,
        **over,
    }


def training_settings(**over):
    """The torch worker's update settings as these tests choose them (RL, lr 0.01, no KL, no LoRA)."""
    fixed = {"objective": "rl", "kl_coef": 0, "is_correction": "none", "is_cap": 2.0, "lr": 0.01, "weight_decay": 0}
    return {
        **fixed,
        "max_grad_norm": 1.0,
        "clip_low": 0.2,
        "clip_high": 0.28,
        "ppo_epochs": 1,
        "micro_batch_rows": 8,
        "lora": None,
        **over,
    }
