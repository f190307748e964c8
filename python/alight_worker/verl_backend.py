"""The `verl` backend: verl 0.9.1's FSDP actor (and reference) workers on Ray with vLLM servers in server mode,
colocated on the same GPUs. The servers' OpenAI endpoints go to alight's gateway, which routes the harnesses to them;
alight's orchestrator keeps rollouts, merging, advantages and loss weights, and this backend runs verl's actor update
on alight's batch with alight's loss (verl_loss.py). verl's RayPPOTrainer builds the workers exactly as its own
trainer does; its data loading and its `fit` loop are not used.

Sync: the servers sleep (their memory freed) for the update; `sync_weights` pushes the new weights into them through
verl's checkpoint engine and wakes them. A Ray worker that dies takes this process down with it (exit 3), so the
orchestrator's restart policy brings up a fresh backend from the last checkpoint."""

import json
import os
import sys
import time
import urllib.request
from functools import partial

import torch
from safetensors.torch import load_file

from .policy_loss import truncated_is_weights
from .verl_batch import to_dataproto

PYTHON_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def log(message):
    print(f"alight-worker (verl): {message}", file=sys.stderr, flush=True)


def check_resources(params):
    """Refuses before Ray starts: a model folder that is not there, no CUDA, fewer GPUs than asked for."""
    model = params["model"]
    looks_local = model.startswith(("/", ".", "~")) or model.count("/") != 1  # a hub id is owner/name
    if looks_local and not os.path.isdir(os.path.expanduser(model)):
        raise FileNotFoundError(
            f"the model {model} does not exist "
            "(a Hugging Face model folder, or a hub id such as Qwen/Qwen2.5-0.5B-Instruct)"
        )
    if params.get("ray_address"):
        return  # the cluster's GPUs, not this machine's: Ray places the workers
    if not torch.cuda.is_available():
        raise RuntimeError(
            f"the verl backend trains on CUDA GPUs and torch {torch.__version__} sees none here: "
            "run it on a GPU machine (alight doctor --backend verl says what is missing), or use --backend torch"
        )
    have, want = torch.cuda.device_count(), int(params["gpus"])
    if have < want:
        raise RuntimeError(f"--gpus {want}, but this machine has {have} CUDA GPU(s)")


def ray_died(err):
    import ray

    return isinstance(
        err, (ray.exceptions.RayActorError, ray.exceptions.WorkerCrashedError, ray.exceptions.NodeDiedError)
    )


def flatten_metrics(metrics):
    """verl's per-micro-batch metrics (lists, tensors, Metric aggregators) as one number each."""
    out = {}
    for key, value in metrics.items():
        if hasattr(value, "aggregate"):
            value = value.aggregate()
        if isinstance(value, (list, tuple)):
            values = [float(v) for v in value]
            value = sum(values) / len(values) if values else None
        if isinstance(value, torch.Tensor):
            value = float(value.float().mean())
        if isinstance(value, (int, float)) or value is None:
            out[key.replace("/", "_")] = value
    return out


class VerlBackend:
    def __init__(self, params):
        import ray
        from omegaconf import OmegaConf

        from .verl_config import compose

        check_resources(params)
        self.params = params
        self.config = compose(params["overrides"])
        OmegaConf.resolve(self.config)
        started = time.perf_counter()
        # alight_worker travels to every Ray worker (and node): the loss set on the actor imports it there.
        ray.init(
            address=params.get("ray_address") or None,
            include_dashboard=False,
            runtime_env={
                "py_modules": [os.path.join(PYTHON_DIR, "alight_worker")],
                "worker_process_setup_hook": "alight_worker.verl_loss.register",
                "env_vars": {"TOKENIZERS_PARALLELISM": "true", "NCCL_DEBUG": "WARN"},
            },
        )
        try:
            self.trainer = build_trainer(self.config)
            self.trainer.init_workers()
            self.trainer.actor_rollout_wg.set_loss_fn(partial(loss_fn(), config=actor_config(self.config)))
            # The servers start with dummy weights (rollout.load_format=dummy): push the real ones, which wakes them.
            self.trainer.checkpoint_manager.update_weights(0)
            addresses = self.trainer.llm_server_manager.get_addresses()
        except BaseException:
            ray.shutdown(wait_for_processes=True)
            raise
        self.version = 0
        self.endpoints = [{"url": f"http://{a}/v1", "model": served_model(a)} for a in addresses]
        self.name = self.endpoints[0]["model"]
        log(
            f"pid {os.getpid()}: {len(addresses)} vLLM server(s) at {', '.join(addresses)} "
            f"in {time.perf_counter() - started:.0f} s"
        )

    def call(self, what, fn):
        """A call into the workers; a dead Ray worker ends this process (exit 3) for the orchestrator to restart it."""
        try:
            return fn()
        except Exception as err:
            if ray_died(err):
                log(f"a Ray worker died during {what}: {err}")
                self.shutdown()
                os._exit(3)
            raise

    def train_step(self, batch_path, step):
        from verl.utils import tensordict_utils as tu
        from verl.workers.utils.padding import left_right_2_no_padding

        started = time.perf_counter()
        p, actor = self.params, self.config.actor_rollout_ref.actor
        tokenizer = self.trainer.tokenizer
        pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
        data = to_dataproto(load_file(batch_path), pad, meta={"temperature": 1.0})
        # verl's workers read the tokens per row for their throughput metric (mfu), as its own trainer passes them.
        data.meta_info["global_token_num"] = data.batch["attention_mask"].sum(-1).tolist()
        rows = len(data)
        metrics = {"rows": rows, "loss_tokens": int(data.batch["response_mask"].sum())}
        self.call(
            "sleep", self.trainer.checkpoint_manager.sleep_replicas
        )  # colocated: the servers' memory to the update
        # The PPO ratio's denominator: the policy as the update starts (recomputed), unless told to trust the engine's.
        if p.get("old_logprobs", "recompute") == "rollout":
            data.batch["old_log_probs"] = data.batch["rollout_log_probs"].clone()
        else:
            data = data.union(self.call("old log-probs", lambda: self.trainer._compute_old_log_prob(data))[0])
        if p.get("is_correction", "none") == "token":
            weights, capped = truncated_is_weights(
                data.batch["old_log_probs"],
                data.batch["rollout_log_probs"],
                data.batch["response_mask"].float(),
                float(p.get("is_cap", 2.0)),
            )
            data.batch["alight_weights"] = data.batch["alight_weights"] * weights
            mask = data.batch["response_mask"].float()
            metrics["is_weight_mean"] = float((weights * mask).sum() / mask.sum().clamp(min=1))
            metrics["is_capped_fraction"] = capped / max(float(mask.sum()), 1.0)
        if float(p.get("kl_coef", 0)) > 0:
            data = data.union(self.call("reference log-probs", lambda: self.trainer._compute_ref_log_prob(data)))
        batch = left_right_2_no_padding(data.to_tensordict())
        # One optimizer step per epoch over the whole batch: the weights already sum the step's objective.
        tu.assign_non_tensor(
            batch,
            calculate_entropy=False,
            distillation_use_topk=False,
            distillation_only=False,
            global_batch_size=rows,
            mini_batch_size=rows,
            epochs=int(actor.ppo_epochs),
            seed=int(p.get("seed", 0)),
            dataloader_kwargs={"shuffle": False},
            compute_loss=True,
        )
        output = self.call("the update", lambda: self.trainer.actor_rollout_wg.update_actor(batch))
        metrics.update(flatten_metrics(tu.get(output, "metrics")))
        # The names the torch worker reports, for the same dashboard and plots.
        for ours, theirs in [
            ("loss", "actor_pg_loss"),
            ("grad_norm", "actor_grad_norm"),
            ("clip_fraction", "actor_pg_clipfrac"),
        ]:
            if theirs in metrics:
                metrics[ours] = metrics[theirs]
        metrics["update_s"] = time.perf_counter() - started
        log(f"step {step}: {rows} rows, {metrics['update_s']:.1f} s")
        return {"metrics": metrics}

    def sync_weights(self, version):
        self.call("the weight sync", lambda: self.trainer.checkpoint_manager.update_weights(int(version)))
        self.version = int(version)
        return {"version": self.version}

    def save(self, path):
        os.makedirs(path, exist_ok=True)
        self.call("save", lambda: self.trainer.actor_rollout_wg.save_checkpoint(path, None, self.version, None))
        with open(os.path.join(path, "alight_state.json"), "w") as f:
            json.dump({"version": self.version}, f)
        return {"path": path}

    def load(self, path):
        with open(os.path.join(path, "alight_state.json")) as f:
            version = int(json.load(f)["version"])
        # As verl does: the servers asleep while the actor loads, then woken with the loaded weights.
        self.call("sleep", self.trainer.checkpoint_manager.sleep_replicas)
        self.call("load", lambda: self.trainer.actor_rollout_wg.load_checkpoint(path))
        self.sync_weights(version)
        return {"path": path, "version": self.version}

    def shutdown(self):
        import ray

        if ray.is_initialized():
            ray.shutdown(wait_for_processes=True)  # raylet and GCS gone before this process is


def build_trainer(config):
    """verl's RayPPOTrainer with its workers mapped as verl's own task runner maps them, without its data loaders."""
    from verl.trainer.main_ppo_v0 import BaseTaskRunner
    from verl.trainer.ppo.ray_trainer import RayPPOTrainer
    from verl.utils.config import omega_conf_to_dataclass

    class AlightTrainer(RayPPOTrainer):
        def _create_dataloader(self, *args, **kwargs):
            pass  # alight's orchestrator owns the tasks

    runner = BaseTaskRunner()
    _, group_cls = runner.add_actor_rollout_worker(config)
    model = omega_conf_to_dataclass(config.actor_rollout_ref.model)
    return AlightTrainer(
        config=config,
        tokenizer=model.tokenizer,
        processor=model.processor,
        role_worker_mapping=runner.role_worker_mapping,
        resource_pool_manager=runner.init_resource_pool_mgr(config),
        ray_worker_group_cls=group_cls,
    )


def actor_config(config):
    """The ActorConfig the actor's loss is called with, as the worker builds it."""
    from verl.utils.config import omega_conf_to_dataclass

    actor = omega_conf_to_dataclass(config.actor_rollout_ref.actor)
    actor.model_config = omega_conf_to_dataclass(config.actor_rollout_ref.model)
    return actor


def loss_fn():
    from .verl_loss import alight_loss

    return alight_loss


def served_model(address):
    """The name a vLLM server answers to (its /v1/models)."""
    with urllib.request.urlopen(f"http://{address}/v1/models", timeout=30) as res:
        return json.load(res)["data"][0]["id"]
