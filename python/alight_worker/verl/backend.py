"""The `verl` backend: verl 0.9.1's FSDP actor (and reference) workers on Ray with vLLM servers in server mode,
colocated on the same GPUs. The servers' OpenAI endpoints go to alight's gateway, which routes the harnesses to them;
alight's orchestrator keeps rollouts, merging, advantages and loss weights, and this backend runs verl's actor update
on alight's batch with alight's loss (verl/loss.py). verl's RayPPOTrainer builds the workers exactly as its own
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

from ..policy_loss import truncated_is_weights
from .batch import to_dataproto

PYTHON_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def log(message):
    print(f"alight-worker (verl): {message}", file=sys.stderr, flush=True)


def check_resources(params):
    """Refuses before Ray starts: a model folder that is not there, fewer CUDA GPUs than asked for. Without CUDA (and
    without a cluster) verl runs on the CPU through alight's platform (verl/cpu.py), which the caller selects."""
    model = params["model"]
    looks_local = model.startswith(("/", ".", "~")) or model.count("/") != 1  # a hub id is owner/name
    if looks_local and not os.path.isdir(os.path.expanduser(model)):
        raise FileNotFoundError(
            f"the model {model} does not exist "
            "(a Hugging Face model folder, or a hub id such as Qwen/Qwen2.5-0.5B-Instruct)"
        )
    if params["ray_address"] or on_cpu():
        return  # the cluster's GPUs, not this machine's, or the CPU
    have, want = torch.cuda.device_count(), params["gpus"]
    if have < want:
        raise RuntimeError(f"--gpus {want}, but this machine has {have} CUDA GPU(s)")


def on_cpu():
    """Whether verl runs on alight's CPU platform here (VERL_PLATFORM=cpu, set where there is no GPU)."""
    return os.environ.get("VERL_PLATFORM") == "cpu"


def ray_options(params):
    """ray.init's arguments. On the CPU without a cluster, a local one whose GPUs are logical (one per --gpus: verl's
    placement counts them) with enough logical CPUs for verl's bundles (3 a GPU) and its helper actors; Ray enforces
    neither, the OS shares the cores. The platform's variables travel to every worker, on every node."""
    local = not params["ray_address"]
    env = {"TOKENIZERS_PARALLELISM": "true", "NCCL_DEBUG": "WARN"}
    if on_cpu():
        from .cpu import PLATFORM_ENV  # loading it patches verl for the CPU: only where verl runs there

        env.update({k: os.environ[k] for k in PLATFORM_ENV + CPU_ENV if k in os.environ})
    if local:
        # One machine: the servers verl starts listen on loopback, not on the network (verl/worker_setup.py).
        env["ALIGHT_VERL_HOST"] = "127.0.0.1"
    options = {
        # Without --ray-address a new local cluster, never the last one `ray start` left on this machine (Ray's default
        # for no address), which would not be sized or set up for this run.
        "address": params["ray_address"] or "local",
        "include_dashboard": False,
        # alight_worker travels to every Ray worker (and node): the loss set on the actor imports it there.
        "runtime_env": {
            "py_modules": [os.path.join(PYTHON_DIR, "alight_worker")],
            "worker_process_setup_hook": "alight_worker.verl.worker_setup.setup",
            "env_vars": env,
        },
    }
    if local and on_cpu():
        gpus = params["gpus"]
        options.update(num_gpus=gpus, num_cpus=3 * gpus + 8)
    return options


# The CPU's thread and KV-cache settings, for the workers as for this process.
CPU_ENV = ("OMP_NUM_THREADS", "VLLM_CPU_KVCACHE_SPACE", "VLLM_CPU_OMP_THREADS_BIND")


def skip_sync(version):
    """Fault injection, for the served-policy check's own tests: from the version ALIGHT_FAULT_SKIP_RELOAD names on, a
    sync that silently pushes nothing (the servers only wake), the failure that check exists to catch."""
    start = int(os.environ.get("ALIGHT_FAULT_SKIP_RELOAD") or 0)
    return start > 0 and version >= start


def policy_metrics(batch):
    """The torch worker's entropy and kl_rollout (k3 of the rollout policy against the one updated, per loss token),
    from verl's log-prob pass before the update: the same names on both backends."""
    from ..policy_loss import k3

    mask = batch["response_mask"].float()
    tokens = float(mask.sum().clamp(min=1))
    log_ratio = torch.clamp((batch["old_log_probs"] - batch["rollout_log_probs"]) * mask, -20.0, 20.0)
    return {
        "entropy": float((batch["entropys"] * mask).sum()) / tokens,
        "kl_rollout": float(k3(log_ratio, mask)) / tokens,
    }


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

        from .config import compose

        check_resources(params)
        self.params = params
        self.config = compose(params["overrides"])
        OmegaConf.resolve(self.config)
        started = time.perf_counter()
        ray.init(**ray_options(params))
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
        data = self.dataproto(load_file(batch_path))
        rows = len(data)
        metrics = {"rows": rows, "loss_tokens": int(data.batch["response_mask"].sum())}
        self.call(
            "sleep", self.trainer.checkpoint_manager.sleep_replicas
        )  # colocated: the servers' memory to the update
        # The PPO ratio's denominator: the policy as the update starts (recomputed), unless told to trust the engine's.
        if p["old_logprobs"] == "rollout":
            data.batch["old_log_probs"] = data.batch["rollout_log_probs"].clone()
        else:
            data = data.union(self.call("old log-probs", lambda: self.trainer._compute_old_log_prob(data))[0])
            metrics.update(policy_metrics(data.batch))
        if p["is_correction"] == "token":
            weights, capped = truncated_is_weights(
                data.batch["old_log_probs"],
                data.batch["rollout_log_probs"],
                data.batch["response_mask"].float(),
                p["is_cap"],
            )
            data.batch["alight_weights"] = data.batch["alight_weights"] * weights
            mask = data.batch["response_mask"].float()
            metrics["is_weight_mean"] = float((weights * mask).sum() / mask.sum().clamp(min=1))
            metrics["is_capped_fraction"] = capped / max(float(mask.sum()), 1.0)
        if p["kl_coef"] > 0:
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
            seed=p["seed"],
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
        manager = self.trainer.checkpoint_manager
        if skip_sync(int(version)):
            log(f"fault injected: version {version} not pushed to the servers (ALIGHT_FAULT_SKIP_RELOAD)")
            self.call("wake", manager.wake_up_replicas)
        else:
            self.call("the weight sync", lambda: manager.update_weights(int(version)))
        self.version = int(version)
        return {"version": self.version}

    def score(self, ids):
        """log p(token | the tokens before) for positions 1… of `ids` under the actor's weights, computed by verl's own
        log-prob pass (the one the update's ratio uses): what the servers must report for the same tokens after a sync
        (the served-policy check, src/train/served-check.ts). The row is repeated once a data-parallel rank."""
        ids = [int(i) for i in ids]
        ranks = self.trainer.actor_rollout_wg.world_size
        n = len(ids)
        mask = torch.tensor([0] + [1] * (n - 1), dtype=torch.uint8).repeat(ranks)
        zeros = torch.zeros(n * ranks)
        packed = {
            "input_ids": torch.tensor(ids * ranks, dtype=torch.int32),
            "row_offsets": torch.arange(ranks + 1, dtype=torch.int64) * n,
            "prompt_lengths": torch.ones(ranks, dtype=torch.int32),
            "loss_mask": mask,
            "rollout_logprobs": zeros,
            "advantages": zeros,
            "loss_weights": zeros,
            "rollout_index": torch.arange(ranks, dtype=torch.int32),
        }
        data = self.dataproto(packed)
        out = self.call("scoring", lambda: self.trainer._compute_old_log_prob(data))[0]
        return {"logprobs": out.batch["old_log_probs"][0, : n - 1].tolist(), "version": self.version}

    def dataproto(self, packed):
        """A packed batch as the DataProto verl's passes take, with the per-row token counts its workers read (mfu)."""
        tokenizer = self.trainer.tokenizer
        pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
        data = to_dataproto(packed, pad, meta={"temperature": 1.0})
        data.meta_info["global_token_num"] = data.batch["attention_mask"].sum(-1).tolist()
        return data

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
    from .loss import alight_loss

    return alight_loss


def served_model(address):
    """The name a vLLM server answers to (its /v1/models)."""
    with urllib.request.urlopen(f"http://{address}/v1/models", timeout=30) as res:
        return json.load(res)["data"][0]["id"]
