"""What every Ray worker of an alight verl run does first (ray.init's `worker_process_setup_hook`): register alight's
policy loss (the registry is per process) and make verl's servers listen on their node's own address."""

import os


def setup():
    from .loss import register

    register()
    pin_node_ip()


def pin_node_ip():
    """verl's vLLM servers listen on `ray.util.get_node_ip_address()`, which outside the driver does not ask Ray: it
    guesses the machine's outward address. On one machine alight names loopback (ALIGHT_VERL_HOST; Ray itself turns a
    loopback node address into the outward one); on a cluster, the address the node joined with is where the gateway
    reaches the server."""
    import ray
    import ray.util

    address = os.environ.get("ALIGHT_VERL_HOST") or ray._private.worker.global_worker.node_ip_address
    if address:
        ray.util.get_node_ip_address = lambda *_args, **_kwargs: address
