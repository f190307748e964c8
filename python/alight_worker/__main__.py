"""`python -m alight_worker`: newline-delimited JSON-RPC 2.0 on stdin/stdout (docs/design.md#worker-protocol).
Methods: init, train_step, sync_weights, save, load, score, eval_loss, shutdown. The process ends when stdin
closes, so it never outlives its parent."""

import json
import math
import os
import signal
import sys
import threading
import time
import traceback

from .settings import checked


def finite(value):
    """JSON has no NaN or Infinity: a non-finite number (say a diverged loss) goes back as null."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [finite(v) for v in value]
    return value


def exit_with_parent(state):
    """stdin's end is seen only between calls: a worker busy in an update would outlive a killed alight and hold its
    memory (or GPU). When the parent is gone, the process is re-parented: stop the backend's processes (Ray's) and
    leave."""
    parent = os.getppid()

    def watch():
        while True:
            time.sleep(1)
            if os.getppid() != parent:
                stop(state)
                os._exit(1)

    threading.Thread(target=watch, daemon=True).start()


def main():
    rpc_out = sys.stdout
    sys.stdout = sys.stderr  # a stray print must not corrupt the protocol
    state = {"backend": None, "server": None}

    exit_with_parent(state)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # through `finally`: the backend's processes stop too

    def reply(message):
        rpc_out.write(json.dumps(finite(message), allow_nan=False) + "\n")
        rpc_out.flush()

    try:
        serve_rpc(state, reply)
    finally:
        stop(state)


def stop(state):
    """The backend's own processes (a server thread, Ray's workers and vLLM) end with this one."""
    if state["server"]:
        state["server"].shutdown()
        state["server"] = None
    if state["backend"] is not None and hasattr(state["backend"], "shutdown"):
        state["backend"].shutdown()


def serve_rpc(state, reply):
    for line in sys.stdin:
        if not line.strip():
            continue
        request_id = None
        try:
            request = json.loads(line)
            request_id, method, params = request.get("id"), request["method"], request.get("params") or {}
            result = dispatch(state, method, params)
            reply({"jsonrpc": "2.0", "id": request_id, "result": result})
            if method == "shutdown":
                return
        except Exception as err:  # every failure goes back to the orchestrator, which decides
            reply(
                {
                    "jsonrpc": "2.0",
                    "id": request_id,
                    "error": {
                        "code": -32000,
                        "message": f"{type(err).__name__}: {err}",
                        "data": traceback.format_exc(),
                    },
                }
            )


def dispatch(state, method, params):
    if method == "init":
        # Checked whole against src/worker/settings.ts's schema before anything loads (alight_worker/settings.py).
        settings = checked(params)
        if settings["backend"] == "verl":
            from .verl.backend import VerlBackend

            state["backend"] = VerlBackend(settings)
            return {"endpoints": state["backend"].endpoints, "version": state["backend"].version}
        from .server import start_server
        from .torch_backend import TorchBackend

        state["backend"] = TorchBackend(settings)
        state["server"], url = start_server(state["backend"])
        return {"endpoints": [{"url": url, "model": state["backend"].name}], "version": state["backend"].version}
    if method == "shutdown":
        stop(state)
        return {}
    backend = state["backend"]
    if backend is None:
        raise RuntimeError(f"{method} before init")
    if method == "train_step":
        return backend.train_step(params["batch_path"], params.get("step"))
    if method == "sync_weights":
        return backend.sync_weights(params["version"])
    if method == "save":
        # weights_only (the torch backend's): the folder vLLM serves during training, not a checkpoint.
        extra = {"weights_only": True} if params.get("weights_only") else {}
        return backend.save(params["path"], **extra)
    if method == "load":
        return backend.load(params["path"])
    if method == "eval_loss":
        if not hasattr(backend, "eval_loss"):
            raise ValueError(f"{type(backend).__name__} does not evaluate a supervised loss")
        return backend.eval_loss(params["batch_path"])
    if method == "score":
        if not hasattr(backend, "score"):
            raise ValueError(f"{type(backend).__name__} does not score token sequences")
        return backend.score(params["ids"])
    raise ValueError(f"unknown method {method!r}")


if __name__ == "__main__":
    main()
