"""alight's verl backend against the real verl 0.9.1: the batch as verl's DataProto and its padding-free layout, the
registered `alight` policy loss and the actor loss, the Hydra config alight maps onto (composed by verl's own config and
accepted by its dataclasses), and the worker protocol's refusals on a machine without CUDA."""

import json
import os
import subprocess
import sys
import time

import pytest
import torch

from alight_worker.policy_loss import truncated_is_weights
from alight_worker.verl.batch import to_dataproto
from conftest import REPO, node


def test_the_batch_as_a_dataproto_left_pads_prompts_right_pads_responses_and_its_loss_mask_is_the_response_mask(packed):
    dp = to_dataproto(packed, pad_token_id=0)
    b = dp.batch
    assert b["prompts"].tolist() == [[11, 12, 13], [0, 31, 32]]
    assert b["responses"].tolist() == [[21, 22, 0, 0, 0, 0, 0], [41, 42, 51, 52, 53, 43, 44]]
    assert b["response_mask"].tolist() == [[1, 1, 0, 0, 0, 0, 0], [1, 1, 0, 0, 0, 1, 1]]
    assert b["attention_mask"].tolist() == [[1, 1, 1, 1, 1, 0, 0, 0, 0, 0], [0, 1, 1, 1, 1, 1, 1, 1, 1, 1]]
    assert b["position_ids"][1].tolist() == [0, 0, 1, 2, 3, 4, 5, 6, 7, 8]
    # Advantages, weights and rollout logprobs sit on the same response tokens as in the packed batch.
    assert b["alight_weights"][1].tolist() == pytest.approx([0.125, 0.125, 0, 0, 0, 0.125, 0.125])
    assert b["rollout_log_probs"][0, :2].tolist() == pytest.approx([-0.4, -0.5])
    assert float((b["advantages"] * b["alight_weights"]).sum()) == pytest.approx(
        float((packed["advantages"] * packed["loss_weights"]).sum())
    )
    assert list(dp.non_tensor_batch["rollout_index"]) == [0, 1]


def test_verls_padding_free_layout_keeps_the_rows_and_slices_the_responses_back(packed):
    from verl.workers.utils.padding import left_right_2_no_padding, no_padding_2_padding

    td = left_right_2_no_padding(to_dataproto(packed, pad_token_id=0).to_tensordict())
    assert [t.tolist() for t in td["input_ids"].unbind()] == [
        [11, 12, 13, 21, 22],
        [31, 32, 41, 42, 51, 52, 53, 43, 44],
    ]
    # verl's model output at position j is the log-prob of token j + 1: a sequence's own ids come back as the responses.
    shifted = torch.cat([torch.cat([row[1:], row.new_zeros(1)]) for row in td["input_ids"].unbind()]).float()
    assert no_padding_2_padding(shifted, td).tolist() == [[21, 22, 0, 0, 0, 0, 0], [41, 42, 51, 52, 53, 43, 44]]
    assert td["alight_weights"].shape == (2, 7)  # response-shaped extras ride along, dense


def test_truncated_is_weights_are_capped_ratios_to_the_rollout_policy():
    old = torch.tensor([[0.0, -1.0, -3.0]])
    rollout = torch.tensor([[-2.0, -1.0, -1.0]])
    w, capped = truncated_is_weights(old, rollout, torch.tensor([[1.0, 1.0, 1.0]]), cap=2.0)
    assert w.tolist()[0] == pytest.approx([2.0, 1.0, float(torch.exp(torch.tensor(-2.0)))])
    assert capped == 1


def actor_config(**groups):
    from omegaconf import OmegaConf
    from verl.utils.config import omega_conf_to_dataclass

    import alight_worker.verl.loss  # noqa: F401  registers `alight`
    from alight_worker.verl.config import compose

    plan = node(
        f"""import {{ verlPlan }} from '{REPO}/dist/src/train/verl-config.js';
      import {{ configSchema }} from '{REPO}/dist/src/config/schema.js';
      const c = configSchema.parse(
        {{ train: {{ backend: 'verl', model: '/models/x', ...JSON.parse(process.argv[1]) }} }}).train;
      console.log(JSON.stringify(verlPlan(c)));""",
        json.dumps(groups),
    )
    config = compose(plan["overrides"])
    OmegaConf.resolve(config)
    return config, omega_conf_to_dataclass(config.actor_rollout_ref.actor)


def test_the_registered_alight_loss_is_the_weighted_ppo_clip_sum_as_the_torch_workers_and_verls_vanilla_at_token_sum():
    from verl.trainer.ppo.core_algos import compute_policy_loss_vanilla, get_policy_loss_fn

    from alight_worker.policy_loss import ppo_clip_loss

    _, actor = actor_config(optimiser={"clipLow": 0.2, "clipHigh": 0.28})
    torch.manual_seed(0)
    old = -torch.rand(3, 6)
    adv = torch.randn(3, 6)
    weights = torch.rand(3, 6) / 10
    mask = torch.tensor([[1, 1, 1, 0, 0, 0], [1, 1, 1, 1, 1, 1], [0, 1, 1, 1, 0, 0]]).bool()
    logp = (old + 0.3 * torch.randn(3, 6)).requires_grad_(True)
    actor.global_batch_info["dp_size"] = 1
    loss, metrics = get_policy_loss_fn("alight")(
        old_log_prob=old, log_prob=logp, advantages=adv, response_mask=mask, config=actor, rollout_is_weights=weights
    )
    # The torch worker's objective on the same tokens: the same number and gradient.
    rows = {"loss_mask": mask.float(), "rollout_logprobs": old, "advantages": adv, "loss_weights": weights}
    logp2 = logp.detach().clone().requires_grad_(True)
    theirs, _ = ppo_clip_loss(logp2, rows, 0.2, 0.28)
    assert loss.item() == pytest.approx(theirs.item(), rel=1e-5)
    loss.backward(), theirs.backward()
    assert torch.allclose(logp.grad, logp2.grad, atol=1e-6)
    # verl's own vanilla loss with the weights as importance weights, summed (token-sum); its dual clip (ratio > 3 on
    # negative advantages) is idle at these ratios.
    assert float(torch.exp(logp.detach() - old).max()) < actor.clip_ratio_c
    vanilla, _ = compute_policy_loss_vanilla(
        old, logp.detach(), adv, mask, "token-sum", actor, rollout_is_weights=weights
    )
    assert vanilla.item() == pytest.approx(loss.item(), rel=1e-5)
    # FSDP averages gradients over data-parallel ranks: the local sum is scaled by dp_size.
    actor.global_batch_info["dp_size"] = 4
    scaled, _ = get_policy_loss_fn("alight")(
        old_log_prob=old,
        log_prob=logp.detach(),
        advantages=adv,
        response_mask=mask,
        config=actor,
        rollout_is_weights=weights,
    )
    assert scaled.item() == pytest.approx(4 * loss.item(), rel=1e-5)
    assert set(metrics) == {"actor/pg_clipfrac", "actor/ppo_kl"}


def test_the_actor_loss_on_verls_micro_batch_adds_the_weighted_k3_kl_to_the_reference(packed):
    from verl.utils import tensordict_utils as tu
    from verl.workers.utils.padding import left_right_2_no_padding

    from alight_worker.verl.loss import alight_loss

    _, actor = actor_config(optimiser={"klCoef": 0.1})
    dp = to_dataproto(packed, pad_token_id=0)
    resp = dp.batch["response_mask"].float()
    dp.batch["old_log_probs"] = dp.batch["rollout_log_probs"].clone()
    dp.batch["ref_log_prob"] = dp.batch["rollout_log_probs"] - 0.5 * resp
    td = left_right_2_no_padding(dp.to_tensordict())
    tu.assign_non_tensor(td, dp_size=1, batch_num_tokens=int(resp.sum()), global_batch_size=2)
    # The policy's log-probs in verl's padding-free layout: position j holds token j + 1's; here equal to the old ones.
    values = []
    for b, row in enumerate(td["input_ids"].unbind()):
        v = torch.zeros(len(row))
        n_prompt = len(row) - int(dp.batch["attention_mask"][b, dp.batch["prompts"].shape[1] :].sum())
        n_resp = len(row) - n_prompt
        v[n_prompt - 1 : n_prompt - 1 + n_resp] = dp.batch["old_log_probs"][b, :n_resp]
        values.append(v)
    log_probs = torch.nested.nested_tensor_from_jagged(torch.cat(values), offsets=td["input_ids"].offsets())
    loss, metrics = alight_loss(actor, {"log_probs": log_probs}, td)
    w, adv = dp.batch["alight_weights"], dp.batch["advantages"]
    pg = float((-adv * w * resp).sum())  # ratio 1
    delta = 0.5  # ref − π = −0.5 on loss tokens: k3 = e^{−0.5} + 0.5 − 1
    kl = float(((torch.exp(torch.tensor(-delta)) + delta - 1) * w * resp).sum())
    assert loss.item() == pytest.approx(pg + 0.1 * kl, rel=1e-5)
    assert "kl_loss" in metrics and "actor/pg_loss" in metrics


@pytest.mark.parametrize(
    "scale",
    [
        {"gpus": 1},
        {"gpus": 8, "klCoef": 0.05},
        {"gpus": 8, "nodes": 2, "rayAddress": "10.0.0.1:6379", "tensorParallel": 8},
    ],
)
def test_alights_settings_compose_into_verls_own_config_and_its_dataclasses_and_checks_accept_them(scale):
    from verl.trainer.ppo.utils import need_critic, need_reference_policy
    from verl.utils.config import validate_config

    cluster = {k: v for k, v in scale.items() if k != "klCoef"}
    config, actor = actor_config(
        rollouts={"n": 8}, batch={"size": 16}, verl=cluster, optimiser={"klCoef": scale.get("klCoef", 0)}
    )
    rollout = config.actor_rollout_ref.rollout
    assert (config.trainer.n_gpus_per_node, config.trainer.nnodes) == (scale["gpus"], scale.get("nodes", 1))
    assert rollout.tensor_model_parallel_size == scale.get(
        "tensorParallel", min(scale["gpus"], 2 if scale["gpus"] > 1 else 1)
    )
    assert (rollout.name, rollout.mode, rollout.skip_tokenizer_init, rollout.calculate_log_probs) == (
        "vllm",
        "async",
        False,
        True,
    )
    assert (actor.policy_loss.loss_mode, actor.loss_agg_mode) == ("alight", "token-sum")
    assert actor.use_kl_loss == (scale.get("klCoef", 0) > 0)
    assert not need_critic(config)
    assert need_reference_policy(config) == (scale.get("klCoef", 0) > 0)
    validate_config(config=config, use_reference_policy=need_reference_policy(config), use_critic=False)


def worker(python_env):
    return subprocess.Popen(
        [sys.executable, "-m", "alight_worker"],
        cwd=REPO / "python",
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=python_env,
    )


def rpc(proc, method, params=None, id_=1):
    proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": id_, "method": method, "params": params or {}}) + "\n")
    proc.stdin.flush()
    return json.loads(proc.stdout.readline())


def verl_settings(model, **over):
    """init's settings for verl, whole (src/worker/settings.ts): the worker defaults none."""
    fixed = {"backend": "verl", "seed": 0, "kl_coef": 0, "is_correction": "none", "is_cap": 2.0, "gpus": 1}
    return {**fixed, "model": model, "ray_address": None, "old_logprobs": "recompute", "overrides": [], **over}


def test_the_worker_refuses_a_missing_model_and_missing_gpus_with_clear_errors_and_exits_cleanly(tmp_path):
    """Without alight's CPU platform selected (VERL_PLATFORM=cpu, which alight sets where there is no CUDA), verl wants
    as many CUDA GPUs as asked for; there are none here."""
    proc = worker({k: v for k, v in os.environ.items() if k != "VERL_PLATFORM"})
    try:
        missing = rpc(proc, "init", verl_settings(str(tmp_path / "nope")))
        assert "does not exist" in missing["error"]["message"]
        (tmp_path / "model").mkdir()
        no_gpu = rpc(proc, "init", verl_settings(str(tmp_path / "model")), 2)
        assert "--gpus 1, but this machine has 0 CUDA GPU(s)" in no_gpu["error"]["message"]
        assert rpc(proc, "shutdown", {}, 3)["result"] == {}
        assert proc.wait(timeout=30) == 0
    finally:
        proc.kill()


def test_a_failing_start_stops_ray_with_it(tmp_path):
    """Ray is started for real and verl's trainer built on a real (tiny) model; the workers then cannot be placed (no
    GPU here, as when vLLM or a worker fails on a GPU machine): the error comes back and every Ray process ends."""
    subprocess.run(
        [sys.executable, "-m", "alight_worker.tiny", "--out", str(tmp_path)],
        cwd=REPO / "python",
        check=True,
        capture_output=True,
    )
    overrides = [f"actor_rollout_ref.model.path={tmp_path}", "trainer.n_gpus_per_node=1"]
    settings = verl_settings(str(tmp_path), overrides=overrides)
    script = f"""
import sys, ray
sys.path.insert(0, {str(REPO / "python")!r})
import alight_worker.verl.backend as vb
vb.check_resources = lambda params: None  # past the CUDA check, as on a GPU machine whose vLLM then fails
try:
    vb.VerlBackend({settings!r})
except Exception as err:
    print("failed:", type(err).__name__, str(err)[:200])
print("ray still up:", ray.is_initialized())
"""
    out = run_script(script)
    assert "failed:" in out.stdout, out.stderr[-2000:]
    assert "GPU" in out.stdout, out.stdout  # got as far as placing the workers
    assert "ray still up: False" in out.stdout
    assert ray_processes_left() == []


def test_a_ray_worker_that_dies_takes_the_worker_process_down_with_exit_3_and_ray_with_it():
    """A real Ray actor that dies in the middle of a call (as a crashed FSDP or vLLM worker would be): the backend logs
    it, stops Ray and exits 3, which alight's restart policy turns into a fresh worker from the last checkpoint."""
    script = f"""
import os, sys, ray
sys.path.insert(0, {str(REPO / "python")!r})
from alight_worker.verl.backend import VerlBackend
ray.init(address="local", num_cpus=1, include_dashboard=False)

@ray.remote(max_restarts=0)
class Part:
    def ping(self):
        return 1
    def crash(self):
        os._exit(1)  # dies in the middle of the call, as a segfaulting worker would (ray.kill is asynchronous)

part = Part.remote()
ray.get(part.ping.remote())
backend = object.__new__(VerlBackend)  # only its call guard: no GPU here to build the rest
backend.call("the update", lambda: ray.get(part.crash.remote()))
print("not reached")
"""
    out = run_script(script)
    assert out.returncode == 3, out.stderr[-2000:]
    assert "a Ray worker died during the update" in out.stderr and "not reached" not in out.stdout
    assert ray_processes_left() == []


def run_script(script):
    """A Python script in its own interpreter (its own Ray), as the worker process would run it."""
    return subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "RAY_AUTH_MODE": "disabled"},
    )


def ray_processes_left(within_s=20):
    """Ray's processes still running once they have had `within_s` to go (its agents notice a dead raylet in ~2 s)."""
    deadline = time.monotonic() + within_s
    while True:
        left = subprocess.run(["pgrep", "-af", "raylet|gcs_server"], capture_output=True, text=True).stdout.splitlines()
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.5)
