"""alight's batch (TypeScript) against a plain-Python reference written from docs/design.md#batch-file, and against
verl's own advantage estimators and loss aggregation, on the same recorded traces: equal to 1e-6."""

import importlib.util
import json
import sys
import types

import numpy as np
import pytest
import torch
from safetensors import safe_open
from safetensors.numpy import load_file

import batch_reference as reference
from conftest import alight

BUDGET = 4096


def build(run, out, advantage, loss_norm):
    alight(
        "samples",
        "build",
        "--run",
        run["run"],
        "--db",
        run["db"],
        "--out",
        out,
        "--advantage",
        advantage,
        "--loss-norm",
        loss_norm,
        "--max-response-tokens",
        BUDGET,
    )
    with safe_open(str(out), "np") as f:
        meta = json.loads(f.metadata()["alight"])
    return load_file(str(out)), meta


@pytest.mark.parametrize(
    "advantage,loss_norm",
    [
        ("grpo", "per-rollout-mean"),
        ("drgrpo", "token-mean"),
        ("rloo", "seq-mean-token-mean"),
        ("grpo", "seq-mean-token-sum"),
        ("rloo", "constant"),
    ],
)
def test_batch_equals_the_plain_python_reference(recorded_run, tmp_path, advantage, loss_norm):
    ours, meta = build(recorded_run, tmp_path / "batch.safetensors", advantage, loss_norm)
    # Task d's rollouts run a sub-agent beside the main conversation: two rows each.
    assert [r["rows"] for r in meta["rollouts"]] == [1] * 9 + [2] * 3
    expected = reference.build(
        reference.traces_from_db(recorded_run["db"], recorded_run["run"], -1), advantage, loss_norm, "zero", BUDGET
    )
    for name, values in expected.items():
        assert ours[name].shape == (len(values),), name
        np.testing.assert_allclose(
            ours[name].astype(np.float64), np.asarray(values, dtype=np.float64), rtol=0, atol=1e-6, err_msg=name
        )


def verl_core_algos():
    """verl's `core_algos`, from the verl wheel installed without its GPU stack. verl/__init__ imports ray and
    tensordict, which the three functions used here never touch (they use torch and numpy only): if those are absent,
    empty modules stand in for them at import time."""

    class Placeholder(types.ModuleType):
        __path__ = []

        def __getattr__(self, name):
            if name.startswith("__"):
                raise AttributeError(name)
            value = type(name, (), {})
            setattr(self, name, value)
            return value

    for top, subs in [("ray", []), ("tensordict", ["tensordict.tensorclass"])]:
        if top not in sys.modules and importlib.util.find_spec(top) is None:
            for name in [top, *subs]:
                sys.modules[name] = Placeholder(name)
    from verl.trainer.ppo import core_algos

    return core_algos


@pytest.mark.parametrize("advantage", ["grpo", "drgrpo", "rloo"])
def test_advantages_equal_verls_estimators(recorded_run, tmp_path, advantage):
    algos = verl_core_algos()
    ours, meta = build(recorded_run, tmp_path / "batch.safetensors", advantage, "per-rollout-mean")
    rollouts = meta["rollouts"]
    # verl scores rows; alight scores rollouts. One representative row per rollout (as Agent Lightning does), its
    # reward on its one response token, grouped by task.
    # float64, as alight computes (it stores the result as float32); verl runs in the dtype it is given.
    rewards = torch.tensor([[r["reward"]] for r in rollouts], dtype=torch.float64)
    mask = torch.ones_like(rewards)
    index = np.array([r["group_id"] for r in rollouts], dtype=object)
    if advantage == "rloo":
        theirs, _ = algos.compute_rloo_outcome_advantage(rewards, mask, index)
    else:
        theirs, _ = algos.compute_grpo_outcome_advantage(
            rewards, mask, index, norm_adv_by_std_in_grpo=advantage == "grpo"
        )
    first_loss_token = [
        int(ours["row_offsets"][row])
        + int(np.argmax(ours["loss_mask"][ours["row_offsets"][row] : ours["row_offsets"][row + 1]]))
        for row in [int(np.argmax(ours["rollout_index"] == k)) for k in range(len(rollouts))]
    ]
    assert len({r["group_id"] for r in rollouts}) == 4 and len(set(theirs[:, 0].tolist())) > 1
    np.testing.assert_allclose(
        ours["advantages"][first_loss_token].astype(np.float64),
        theirs[:, 0].numpy().astype(np.float64),
        rtol=0,
        atol=1e-6,
    )


@pytest.mark.parametrize("loss_norm", ["token-mean", "seq-mean-token-mean", "seq-mean-token-sum"])
def test_loss_weights_equal_verls_agg_loss(recorded_run, tmp_path, loss_norm):
    """Σ loss_weight · ℓ over the batch equals verl's agg_loss of the same per-token losses, rows padded as verl
    pads."""
    algos = verl_core_algos()
    ours, _ = build(recorded_run, tmp_path / "batch.safetensors", "grpo", loss_norm)
    offsets = ours["row_offsets"].astype(np.int64)
    rows = len(offsets) - 1
    width = int(np.max(np.diff(offsets)))
    losses = np.random.default_rng(0).normal(size=(rows, width))
    mask = np.zeros((rows, width))
    weights = np.zeros((rows, width))
    for b in range(rows):
        n = offsets[b + 1] - offsets[b]
        mask[b, :n] = ours["loss_mask"][offsets[b] : offsets[b + 1]]
        weights[b, :n] = ours["loss_weights"][offsets[b] : offsets[b + 1]]
    theirs = algos.agg_loss(torch.tensor(losses), torch.tensor(mask), loss_norm).item()
    assert abs(float(np.sum(weights * losses)) - theirs) < 1e-6
