#!/usr/bin/env python3
"""Runs Agent Lightning's LLM proxy (PyPI `agentlightning` 1.0.x) as a benchmark peer.

    <venv>/bin/python agl_proxy.py <upstream_base_url> <port> [--mode train|val] [--model NAME]
                                   [--rollout-id ID] [--attempt-id ID] [--key KEY] [--no-access-log]
                                   [--dump-events PATH]

This builds the same app the `agl-server` console script builds (`agentlightning.server.app.create_app` with the
`server.yaml` config shape) and serves it with uvicorn the way `agl-server` does (one worker, keep-alive 120 s), on
127.0.0.1:<port>. Then, through the server's own HTTP API, it does what the trainer and the controller do before an
agent runs:

  POST  /api/models                  register <upstream_base_url> (ends with /v1) as the server for the model
  POST  /api/rollouts                create one rollout
  PATCH /api/rollouts/<id>           mark it running with last_attempt_id = <attempt>

and prints one line to stdout:

  READY http://127.0.0.1:<port>/proxy/rollout/<rollout>/attempt/<attempt>/mode/<mode>/openai/v1

which is the AGL_OPENAI_BASE_URL an agent gets; POST <url>/chat/completions (or /completions). Each answered call
is stored in memory as a `model_request` event of that rollout/attempt (full request and response bodies, latency,
usage, finish reason); read them with GET http://127.0.0.1:<port>/api/rollouts/<rollout>/events
(`?format=triplet` for the trimmed token-id view the trainer reads).

Everything else (logs, uvicorn access lines) goes to stderr. Runs until SIGTERM/SIGINT, then shuts down gracefully
and exits 0; with --dump-events it first writes the recorded events as JSON to PATH.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import copy
import json
import logging
import signal
import sys
from collections.abc import Generator
from typing import Any


def _parse_args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("upstream", help="OpenAI-compatible base URL of the model server, ending with /v1")
    p.add_argument("port", type=int, help="port to listen on (127.0.0.1)")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--model", default="scripted-model", help="default_proxy.model_name (the proxy rewrites `model`)")
    p.add_argument("--mode", choices=("train", "val"), default="train", help="proxy mode in the URL (default train)")
    p.add_argument("--rollout-id", default="bench-rollout")
    p.add_argument("--attempt-id", default="0", help="attempt id (the controller always uses '0')")
    p.add_argument("--key", default="", help="AGL key; empty disables auth (as agl-server's default)")
    p.add_argument("--no-access-log", action="store_true", help="disable uvicorn access lines (on in agl-server)")
    p.add_argument("--dump-events", metavar="PATH", help="on shutdown, write the recorded events as JSON here")
    return p.parse_args(argv)


def _log_config_to_stderr() -> dict[str, Any]:
    """uvicorn's default logging config, with the access log on stderr so stdout carries only READY."""
    from uvicorn.config import LOGGING_CONFIG

    cfg = copy.deepcopy(LOGGING_CONFIG)
    cfg["handlers"]["access"]["stream"] = "ext://sys.stderr"
    return cfg


def _server(args: argparse.Namespace) -> Any:
    """agl-server's app (the keys of agentlightning/config/server.yaml) under uvicorn, as agl-server serves it."""
    import uvicorn
    from agentlightning.server.app import create_app

    config: dict[str, Any] = {
        "host": args.host,
        "port": args.port,
        "key": args.key,
        "default_proxy": {
            "model_name": args.model,
            "include_log_probs": True,
            "include_routed_experts": False,
            "train": {"temperature": 1},
            "val": {"temperature": 0.7},
        },
    }

    class _Server(uvicorn.Server):
        @contextlib.contextmanager
        def capture_signals(self) -> Generator[None, None, None]:
            # As uvicorn's, but without re-raising the signal after the graceful shutdown, so we exit 0.
            originals = {sig: signal.signal(sig, self.handle_exit) for sig in (signal.SIGINT, signal.SIGTERM)}
            try:
                yield
            finally:
                for sig, handler in originals.items():
                    signal.signal(sig, handler)

    return _Server(
        uvicorn.Config(
            create_app(config),
            host=args.host,
            port=args.port,
            workers=1,
            timeout_keep_alive=120,
            log_config=_log_config_to_stderr(),
            access_log=not args.no_access_log,
        )
    )


async def _setup(args: argparse.Namespace, base: str) -> None:
    """What the trainer and the controller do before an agent runs: the model's server, one running rollout."""
    import httpx

    rid, aid = args.rollout_id, args.attempt_id
    headers = {"Authorization": f"Bearer {args.key}"} if args.key else {}
    async with httpx.AsyncClient(base_url=base, headers=headers, timeout=10) as c:
        r = await c.post("/api/models", json=[{"model": args.model, "endpoint": args.upstream.rstrip("/")}])
        r.raise_for_status()
        r = await c.post(
            "/api/rollouts",
            json=[{"rollout_id": rid, "input": {"data_id": "bench"}, "is_train": args.mode == "train"}],
        )
        r.raise_for_status()
        r = await c.patch(f"/api/rollouts/{rid}", json={"status": {"state": "running", "last_attempt_id": aid}})
        r.raise_for_status()


def _dump(args: argparse.Namespace) -> None:
    from agentlightning.server import store

    events = store._events.get(args.rollout_id, {})
    n = sum(len(v) for v in events.values())
    print(f"agl_proxy: stopped; {n} event(s) recorded for rollout {args.rollout_id}", file=sys.stderr)
    if args.dump_events:
        dump = {a: [e.model_dump(mode="json") for e in evs] for a, evs in events.items()}
        with open(args.dump_events, "w") as f:
            json.dump(dump, f)


async def _run(args: argparse.Namespace, server: Any) -> int:
    import agentlightning

    base = f"http://{args.host}:{args.port}"
    url = f"{base}/proxy/rollout/{args.rollout_id}/attempt/{args.attempt_id}/mode/{args.mode}/openai/v1"
    serving = asyncio.create_task(server.serve())
    while not server.started:
        if serving.done():
            serving.result()  # raises if startup failed (e.g. port in use)
            print(f"agl_proxy: server exited during startup on {base}", file=sys.stderr)
            return 1
        await asyncio.sleep(0.02)
    try:
        await _setup(args, base)
    except Exception as e:  # noqa: BLE001
        print(f"agl_proxy: setup through the API failed: {e!r}", file=sys.stderr)
        server.should_exit = True
        await serving
        return 1
    print(
        f"agl_proxy: agentlightning {agentlightning.__version__}, upstream {args.upstream}, "
        f"model {args.model}, rollout {args.rollout_id}, attempt {args.attempt_id}, mode {args.mode}",
        file=sys.stderr,
    )
    print(f"READY {url}", flush=True)
    await serving
    _dump(args)
    return 0


def main(argv: list[str]) -> int:
    args = _parse_args(argv)
    import structlog

    # structlog prints to stdout by default; keep stdout for the READY line only.
    structlog.configure(logger_factory=structlog.PrintLoggerFactory(file=sys.stderr))
    return asyncio.run(_run(args, _server(args)))


if __name__ == "__main__":
    logging.captureWarnings(True)
    sys.exit(main(sys.argv[1:]))
