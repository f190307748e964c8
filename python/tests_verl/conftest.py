"""The verl backend's CPU tests: run in the verl virtualenv (torch 2.11, verl 0.9.1, Ray; see test/e2e/verl.test.ts),
against the real verl package. What needs CUDA (verl's FSDP engine, vLLM) is out of reach here; these cover what
alight adds around it."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "python"))


def node(script, *args):
    """Runs an ESM snippet against the built CLI's modules and returns its JSON output."""
    out = subprocess.run(
        ["node", "--input-type=module", "-e", script, *map(str, args)], capture_output=True, text=True, cwd=REPO
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


@pytest.fixture
def packed():
    """A batch in alight's packed layout (docs/design.md#batch-file): two rows; the second is multi-turn (an
    observation between two completions, loss mask 0 there) and longer, so both paddings show."""
    import torch

    rows = [
        {"ids": [11, 12, 13, 21, 22], "prompt": 3, "mask": [0, 0, 0, 1, 1]},
        {"ids": [31, 32, 41, 42, 51, 52, 53, 43, 44], "prompt": 2, "mask": [0, 0, 1, 1, 0, 0, 0, 1, 1]},
    ]
    ids, mask, offsets = [], [], [0]
    for r in rows:
        ids += r["ids"]
        mask += r["mask"]
        offsets.append(len(ids))
    n = len(ids)
    m = torch.tensor(mask, dtype=torch.uint8)
    return {
        "input_ids": torch.tensor(ids, dtype=torch.int32),
        "row_offsets": torch.tensor(offsets, dtype=torch.int64),
        "prompt_lengths": torch.tensor([r["prompt"] for r in rows], dtype=torch.int32),
        "loss_mask": m,
        "rollout_logprobs": -torch.arange(1, n + 1, dtype=torch.float32) / 10 * m,
        "advantages": torch.tensor([0.5] * 5 + [-1.0] * 9) * m,
        "loss_weights": torch.tensor([0.25] * 5 + [0.125] * 9) * m,
        "rollout_index": torch.tensor([0, 1], dtype=torch.int32),
    }
