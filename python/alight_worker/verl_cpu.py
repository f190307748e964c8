"""verl on a machine without GPUs, for its SFT trainer: a `cpu` platform in verl's platform registry (loaded through
VERL_USE_EXTERNAL_MODULES, chosen with VERL_PLATFORM=cpu), the process group on gloo alone, and the FSDP engine
(registered for cuda) picked by VERL_ENGINE_DEVICE. This is how alight's tests run verl's own trainer code end to end on
a small model here; it is not meant to be fast. src/train/verl-sft.ts sets the variables when there is no GPU."""

import contextlib
import os
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
        return "CPU"

    def ray_noset_envvars(self):
        return []

    def is_ipc_supported(self):
        return False

    def cudart(self):
        return None


def init_gloo_process_group(timeout_second=36000):
    """verl's own asks for `cpu:gloo,<device>:<backend>`, which names the CPU twice here."""
    torch.distributed.init_process_group(backend="gloo", timeout=timedelta(seconds=timeout_second))
    return int(os.environ["LOCAL_RANK"]), int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])


verl_distributed.initialize_global_process_group = init_gloo_process_group
