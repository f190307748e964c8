"""verl on a machine without GPUs: a `cpu` platform in verl's platform registry (loaded through
VERL_USE_EXTERNAL_MODULES, chosen with VERL_PLATFORM=cpu), the process groups on gloo alone, and the FSDP engine
(registered for cuda) picked by VERL_ENGINE_DEVICE. This is how alight runs verl's own trainer code end to end on a
small model here, its SFT trainer and its RL workers alike; it is not meant to be fast. src/train/verl-cpu.ts sets the
variables when there is no GPU.

For RL the platform asks Ray for "GPU": Ray's GPUs are logical (alight starts a CPU cluster with as many as the run's
--gpus), and verl's placement, resource checks and rollout servers all count that resource; nothing binds a process to
a device. Weights reach vLLM's CPU build through verl's own shared-memory path (`is_ipc_supported` False)."""

import contextlib
import os
import sys
from datetime import timedelta

import torch
import verl.utils.distributed as verl_distributed
from verl.plugin.platform.platform_base import PlatformBase
from verl.plugin.platform.platform_manager import PlatformRegistry

CPU = torch.device("cpu")


class CpuDeviceModule:
    """What verl asks of a device module (torch.cuda's calls), answered for the CPU."""

    def __getattr__(self, name):
        return getattr(torch.cpu, name)

    def set_device(self, *_):
        pass

    def get_device_name(self, *_):
        return "CPU"

    def current_device(self):
        return 0

    def device_count(self):
        return 1

    def is_available(self):
        return True

    def synchronize(self, *_):
        pass

    def empty_cache(self):
        pass

    def manual_seed(self, seed):
        torch.manual_seed(seed)

    manual_seed_all = manual_seed

    def memory_allocated(self, *_):
        return 0

    memory_reserved = max_memory_allocated = max_memory_reserved = memory_allocated

    def mem_get_info(self, *_):
        return (0, 0)

    def reset_peak_memory_stats(self, *_):
        pass

    def get_rng_state(self, *_):
        return torch.get_rng_state()

    def set_rng_state(self, state, *_):
        torch.set_rng_state(state)


@PlatformRegistry.register(platform="cpu")
class PlatformCPU(PlatformBase):
    device_name = "cpu"
    vendor_name = "cpu"
    device_module = CpuDeviceModule()

    def is_available(self):
        return True

    def current_device(self):
        # A device, not an index: verl moves models `.to(current_device())`, and an index means a GPU.
        return CPU

    def device_count(self):
        return 1

    def set_device(self, device_index):
        pass

    def synchronize(self, device_index=None):
        pass

    def manual_seed(self, seed):
        torch.manual_seed(seed)

    manual_seed_all = manual_seed

    def set_allocator_settings(self, settings):
        pass

    def empty_cache(self):
        pass

    def get_device_capability(self, device_index=0):
        return (None, None)

    def communication_backend_name(self):
        return "gloo"

    def visible_devices_envvar(self):
        return "CUDA_VISIBLE_DEVICES"

    @contextlib.contextmanager
    def nvtx_range(self, msg):
        yield

    def profiler_start(self):
        pass

    def profiler_stop(self):
        pass

    def ray_resource_name(self):
        return "GPU"

    def ray_noset_envvars(self):
        return []

    def is_ipc_supported(self):
        return False

    def cudart(self):
        return None

    def rollout_env_vars(self):
        # vLLM's CPU build binds its threads to cores it reserves; on a shared machine that pins them onto the trainer.
        return {"VLLM_CPU_OMP_THREADS_BIND": "nobind", **{k: os.environ[k] for k in PLATFORM_ENV if k in os.environ}}


# What selects this platform in a process: every Ray worker and vLLM's worker processes need it before `import verl`.
PLATFORM_ENV = ("VERL_USE_EXTERNAL_MODULES", "VERL_PLATFORM", "VERL_ENGINE_DEVICE", "VERL_ENGINE_VENDOR")


def init_gloo_process_group(timeout_second=36000):
    """verl's own asks for `cpu:gloo,<device>:<backend>`, which names the CPU twice here."""
    torch.distributed.init_process_group(backend="gloo", timeout=timedelta(seconds=timeout_second))
    return int(os.environ["LOCAL_RANK"]), int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])


def init_gloo_process_group_ray(timeout_second=None, backend=None):
    """The Ray workers' variant (rank and world size from Ray's environment), on gloo alone for the same reason."""
    if not torch.distributed.is_initialized():
        torch.distributed.init_process_group(
            backend="gloo",
            rank=int(os.environ.get("RANK", 0)),
            world_size=int(os.environ.get("WORLD_SIZE", 1)),
            timeout=timedelta(seconds=timeout_second) if timeout_second is not None else None,
            init_method=os.environ.get("DIST_INIT_METHOD"),
        )


def keep_linear_weights():
    """vLLM's CPU build repacks each linear layer's weight for oneDNN after loading and drops the original; verl's
    in-place sync (`model.load_weights`, then `process_weights_after_loading`) loads into those originals and fails on
    the empty stand-ins (`'Parameter' object has no attribute 'weight_loader'`). Kept, each sync loads into them and the
    repacking runs again on the new values; it costs a second copy of the linear weights in the server's memory."""
    from vllm.model_executor.layers import utils

    dispatch = utils.dispatch_cpu_unquantized_gemm
    if getattr(dispatch, "keeps_weights", False):
        return

    def keeping(layer, remove_weight):
        dispatch(layer, remove_weight=False)

    keeping.keeps_weights = True
    utils.dispatch_cpu_unquantized_gemm = keeping


def unpinned_offload():
    """verl's reference (forward only) on FSDP2 offloads its parameters with `CPUOffloadPolicy(pin_memory=True)`;
    pinning needs a CUDA driver (`Found no NVIDIA driver`). On the CPU the parameters are where they would be offloaded
    to, so the policy stays and pinning goes. Bound before verl's FSDP engine imports the name."""
    import verl.utils.fsdp_utils as fsdp_utils

    policy = fsdp_utils.CPUOffloadPolicy
    if policy is None or getattr(policy, "unpinned", False):
        return

    def offload_policy(pin_memory=True):
        return policy(pin_memory=False)

    offload_policy.unpinned = True
    fsdp_utils.CPUOffloadPolicy = offload_policy


# vLLM's worker processes import verl (its worker extension) after vllm and before they load the model.
if "vllm" in sys.modules:
    keep_linear_weights()

# Before verl's workers import them by name (this module loads at `import verl`).
unpinned_offload()
verl_distributed.initialize_global_process_group = init_gloo_process_group
verl_distributed.initialize_global_process_group_ray = init_gloo_process_group_ray
