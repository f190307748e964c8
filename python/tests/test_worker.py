"""The torch worker: its objective, and the worker process over its real protocol (JSON-RPC on stdio, HTTP for
serving) on a tiny model made here."""

import json
import os
import subprocess
import sys
import time
import urllib.request

import numpy as np
import pytest
import torch
from safetensors.numpy import save_file

from alight_worker.policy_loss import ppo_clip_loss, token_logprobs
from conftest import one_row_batch, torch_settings, training_settings

PYTHON_DIR = os.path.join(os.path.dirname(__file__), "..")


def rows(**tensors):
    return {k: torch.tensor([v], dtype=torch.float32) for k, v in tensors.items()}


def test_on_policy_loss_is_minus_the_weighted_advantage_and_its_gradient_is_reinforce():
    logp = torch.tensor([[0.0, -1.0, -2.0, -0.5]], requires_grad=True)
    r = rows(
        loss_mask=[0, 1, 1, 1],
        rollout_logprobs=[0, -1.0, -2.0, -0.5],
        advantages=[0, 2.0, 2.0, -1.0],
        loss_weights=[0, 0.5, 0.25, 0.25],
    )
    loss, sums = ppo_clip_loss(logp, r)
    assert loss.item() == pytest.approx(-(0.5 * 2 + 0.25 * 2 - 0.25 * 1))
    loss.backward()
    # d/dlogp of −w·A·exp(logp − old) at logp = old is −w·A: the policy gradient, with the batch's weights as
    # given.
    assert logp.grad.tolist()[0] == pytest.approx([0, -1.0, -0.5, 0.25])
    assert sums["clipped_tokens"] == 0 and sums["kl_rollout_sum"] == pytest.approx(0)


def test_ratios_beyond_the_clip_range_stop_the_gradient_and_are_counted():
    old = torch.tensor([[0.0, -1.0, -1.0]])
    logp = torch.tensor([[0.0, -1.0 + np.log(1.5), -1.0 + np.log(0.5)]], requires_grad=True)
    r = rows(
        loss_mask=[0, 1, 1], rollout_logprobs=old[0].tolist(), advantages=[0, 1.0, -1.0], loss_weights=[0, 1.0, 1.0]
    )
    loss, sums = ppo_clip_loss(logp, r, clip_low=0.2, clip_high=0.28)
    # A > 0 and r = 1.5 > 1.28: −A·1.28; A < 0 and r = 0.5 < 0.8: +0.8.
    assert loss.item() == pytest.approx(-1.28 + 0.8, abs=1e-6)
    loss.backward()
    assert logp.grad.tolist()[0] == pytest.approx([0, 0, 0])
    assert sums["clipped_tokens"] == 2


def test_token_level_truncated_is_uses_the_update_start_policy_for_the_ratio_and_weights_tokens_by_the_capped_ratio():
    # Token 1: π_old = 3·π_rollout (capped at 2); token 2: π_old = π_rollout / 2. logp = old: the PPO ratio is 1.
    rollout = [0.0, -2.0, -1.0]
    old = torch.tensor([[0.0, -2.0 + np.log(3.0), -1.0 + np.log(0.5)]])
    logp = old.clone().requires_grad_(True)
    r = rows(loss_mask=[0, 1, 1], rollout_logprobs=rollout, advantages=[0, 1.0, 1.0], loss_weights=[0, 1.0, 1.0])
    loss, sums = ppo_clip_loss(logp, r, old_logp=old, is_cap=2.0)
    assert loss.item() == pytest.approx(-(2.0 + 0.5), abs=1e-6)
    loss.backward()
    assert logp.grad.tolist()[0] == pytest.approx([0, -2.0, -0.5], abs=1e-6)
    assert (
        sums["is_weight_sum"] == pytest.approx(2.5, abs=1e-6)
        and sums["is_capped_tokens"] == 1
        and sums["clipped_tokens"] == 0
    )
    # Without the correction the ratio is taken to the rollout policy: token 1's r = 3 is clipped, no gradient.
    plain, plain_sums = ppo_clip_loss(old.clone().requires_grad_(True), r)
    assert plain_sums["clipped_tokens"] == 1 and "is_weight_sum" not in plain_sums


class Worker:
    def __init__(self, model, stderr=subprocess.DEVNULL, seed=0, **update):
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "alight_worker"],
            cwd=PYTHON_DIR,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
        )
        self.next = 0
        settings = torch_settings(model, training_settings(**update), seed=seed)
        self.url = self.call("init", **settings)["endpoints"][0]["url"]

    def call(self, method, **params):
        self.next += 1
        self.proc.stdin.write(
            json.dumps({"jsonrpc": "2.0", "id": self.next, "method": method, "params": params}) + "\n"
        )
        self.proc.stdin.flush()
        reply = json.loads(self.proc.stdout.readline())
        assert reply["id"] == self.next
        if "error" in reply:
            raise RuntimeError(reply["error"]["message"])
        return reply["result"]

    def chat(self, content, **extra):
        body = {
            "messages": [{"role": "user", "content": content}],
            "max_tokens": 6,
            "return_token_ids": True,
            "logprobs": True,
            **extra,
        }
        return self.post("chat/completions", body)

    def post(self, route, body):
        request = urllib.request.Request(
            f"{self.url}/{route}", json.dumps(body).encode(), {"content-type": "application/json"}
        )
        with urllib.request.urlopen(request) as res:
            return int(res.headers["x-alight-model-version"]), json.loads(res.read())


def test_the_worker_serves_exact_ids_and_logprobs_then_trains_syncs_saves_and_loads(tiny, tmp_path):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    worker = Worker(tiny)
    try:
        version, answer = worker.chat("Reply with the letter a.", seed=7)
        assert version == 0
        tokenizer = AutoTokenizer.from_pretrained(tiny)
        prompt = tokenizer.apply_chat_template(
            [{"role": "user", "content": "Reply with the letter a."}],
            add_generation_prompt=True,
            tokenize=True,
            return_dict=False,
        )
        assert answer["prompt_token_ids"] == list(prompt)
        ids = answer["choices"][0]["token_ids"]
        served = [c["logprob"] for c in answer["choices"][0]["logprobs"]["content"]]
        assert tokenizer.decode(ids, skip_special_tokens=True) == answer["choices"][0]["message"]["content"]
        # The logprobs served are those the update recomputes from the whole sequence (up to float noise).
        model = AutoModelForCausalLM.from_pretrained(tiny)
        full = torch.tensor([list(prompt) + ids])
        recomputed, _ = token_logprobs(model, full, torch.ones_like(full))
        assert recomputed[0, len(prompt) :].tolist() == pytest.approx(served, abs=1e-4)
        # `score` is that recomputation, by the worker (the served-policy check's trainer side).
        scored = worker.call("score", ids=list(prompt) + ids)
        assert scored["version"] == 0 and scored["logprobs"][len(prompt) - 1 :] == pytest.approx(served, abs=1e-4)
        assert worker.chat("Reply with the letter a.", seed=7)[1]["choices"][0]["token_ids"] == ids  # a seed reproduces
        # vLLM's prompt_logprobs on the same tokens as a prompt (how a teacher scores a student's row): position by
        # position the recomputation's, first position none; shifted by one, they are not.
        _, echoed = worker.post("completions", {"prompt": list(prompt) + ids, "max_tokens": 1, "prompt_logprobs": 0})
        entries = echoed["choices"][0]["prompt_logprobs"]
        assert entries[0] is None and len(entries) == len(prompt) + len(ids)
        given = [e[str(t)]["logprob"] for e, t in zip(entries[1:], list(prompt)[1:] + ids)]
        assert given == pytest.approx(recomputed[0, 1:].tolist(), abs=1e-4)
        assert given[len(prompt) - 1 :] == pytest.approx(served, abs=1e-4)
        assert given[len(prompt) :] != pytest.approx(served[:-1], abs=1e-4)
        # Greedy, one token: the scoring pass gives it (no wait in the sampler's batch), as greedy sampling would.
        _, fast = worker.post(
            "completions",
            {"prompt": list(prompt) + ids, "max_tokens": 1, "temperature": 0, "prompt_logprobs": 0, "logprobs": 1},
        )
        choice = fast["choices"][0]
        assert [e[str(t)]["logprob"] for e, t in zip(choice["prompt_logprobs"][1:], list(prompt)[1:] + ids)] == given
        _, first = worker.post("completions", {"prompt": list(prompt) + ids, "max_tokens": 1, "temperature": 0})
        assert choice["text"] == first["choices"][0]["text"] and len(choice["logprobs"]["token_logprobs"]) == 1

        save_file(one_row_batch(prompt, ids, served), str(tmp_path / "batch.safetensors"))
        metrics = worker.call("train_step", batch_path=str(tmp_path / "batch.safetensors"), step=0)["metrics"]
        assert metrics["rows"] == 1 and metrics["loss_tokens"] == len(ids) and metrics["grad_norm"] > 0
        assert metrics["kl_rollout"] == pytest.approx(0, abs=1e-5)
        assert worker.call("sync_weights", version=1) == {"version": 1}
        version, after = worker.chat("Reply with the letter a.", seed=7)
        assert version == 1
        # A positive advantage on those tokens made them likelier.
        now, _ = token_logprobs(worker_model(worker, tmp_path), full, torch.ones_like(full))
        assert sum(now[0, len(prompt) :].tolist()) > sum(served)
        saved = worker.call("save", path=str(tmp_path / "ckpt"))["path"]
        worker.call("train_step", batch_path=str(tmp_path / "batch.safetensors"), step=1)
        assert worker.call("load", path=saved)["version"] == 1
        assert (
            worker.chat("Reply with the letter a.", seed=7)[1]["choices"][0]["token_ids"]
            == after["choices"][0]["token_ids"]
        )
    finally:
        worker.call("shutdown")
        worker.proc.wait(timeout=30)


def worker_model(worker, tmp_path):
    """The worker's current weights, through its own save."""
    from transformers import AutoModelForCausalLM

    path = worker.call("save", path=str(tmp_path / "peek"))["path"]
    return AutoModelForCausalLM.from_pretrained(path)


def test_kl_to_the_initial_policy_and_truncated_is_over_several_epochs(tiny, tmp_path):
    """With a reference (kl_coef > 0) and token-level IS over three PPO epochs: the reference and the update-start
    log-probs are fixed through the epochs (the KL shows once the weights have moved); the IS weights are 1 when the
    rollout logprobs are the policy's own, and above 1 on the next step for the tokens the update made likelier."""
    worker = Worker(tiny, kl_coef=0.5, ppo_epochs=3, is_correction="token", is_cap=2.0)
    try:
        _, answer = worker.chat("Reply with the letter a.", seed=3)
        prompt, ids = answer["prompt_token_ids"], answer["choices"][0]["token_ids"]
        served = [c["logprob"] for c in answer["choices"][0]["logprobs"]["content"]]
        save_file(one_row_batch(prompt, ids, served), str(tmp_path / "batch.safetensors"))
        m = worker.call("train_step", batch_path=str(tmp_path / "batch.safetensors"), step=0)["metrics"]
        assert m["is_weight_mean"] == pytest.approx(1.0, abs=1e-3) and m["is_capped_fraction"] == 0
        assert m["kl_ref"] > 0  # epochs 2 and 3 ran on moved weights, against the fixed reference
        again = worker.call("train_step", batch_path=str(tmp_path / "batch.safetensors"), step=1)["metrics"]
        # The policy now gives these tokens more probability than the rollout did; it is still away from the reference.
        assert again["is_weight_mean"] > 1.0 and again["kl_ref"] > 0
    finally:
        worker.call("shutdown")
        worker.proc.wait(timeout=30)


def test_a_streamed_answer_is_the_same_answer_as_a_whole(tiny):
    """SSE chunks, as the gateway records them: their text, ids and logprobs add up to the unstreamed answer's (same
    seed)."""
    worker = Worker(tiny)
    try:
        _, whole = worker.chat("Say something.", seed=11, max_tokens=40)
        body = {
            "messages": [{"role": "user", "content": "Say something."}],
            "max_tokens": 40,
            "return_token_ids": True,
            "logprobs": True,
            "seed": 11,
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        request = urllib.request.Request(
            f"{worker.url}/chat/completions", json.dumps(body).encode(), {"content-type": "application/json"}
        )
        with urllib.request.urlopen(request) as res:
            events = [line[6:] for line in res.read().decode().split("\n") if line.startswith("data: ")]
        assert events[-1] == "[DONE]"
        chunks = [json.loads(e) for e in events[:-1]]
        choices = [c["choices"][0] for c in chunks if c["choices"]]
        text = "".join((c.get("delta") or {}).get("content", "") for c in choices)
        ids = [t for c in choices for t in c.get("token_ids", [])]
        logprobs = [x["logprob"] for c in choices for x in ((c.get("logprobs") or {}).get("content") or [])]
        answer = whole["choices"][0]
        assert len(answer["token_ids"]) > 10
        assert (text, ids) == (answer["message"]["content"], answer["token_ids"])
        assert logprobs == pytest.approx([x["logprob"] for x in answer["logprobs"]["content"]], abs=1e-5)
        assert (
            chunks[0]["prompt_token_ids"] == whole["prompt_token_ids"]
            and choices[-1]["finish_reason"] == answer["finish_reason"]
        )
        assert chunks[-1]["usage"]["completion_tokens"] == len(ids)
    finally:
        worker.call("shutdown")
        worker.proc.wait(timeout=30)


def test_unseeded_samples_depend_on_the_run_seed_and_the_prompt_not_on_the_order_calls_arrive_in(tiny):
    """What makes a seeded run reproducible with harnesses racing each other: two workers of the same seed, asked the
    same prompts in opposite orders, answer each prompt alike; asking a prompt again draws a new sample; another seed,
    other samples."""
    prompts = ["Say b.", "Say a.", "Say a."]  # reversed, "Say b." comes last
    answers = []
    for seed, order in [(0, prompts), (0, prompts[::-1]), (1, prompts)]:
        worker = Worker(tiny, seed=seed)
        try:
            got = {}
            for p in order:
                got.setdefault(p, []).append(worker.chat(p, max_tokens=12)[1]["choices"][0]["token_ids"])
            answers.append(got)
        finally:
            worker.call("shutdown")
            worker.proc.wait(timeout=30)
    assert answers[0] == answers[1]
    assert answers[0]["Say a."][0] != answers[0]["Say a."][1]
    assert answers[2] != answers[0]


def test_concurrent_requests_are_decoded_as_one_batch_and_answer_as_each_would_alone(tiny):
    """The batched engine (batching.py): requests that arrive together share a batch, prompts of different lengths
    (left padding) and lengths of answer (rows leave when done) included, and each answer is the one it gets alone:
    the same ids for the same seed, the same logprobs up to float summation order, greedy included."""
    import threading

    from alight_worker.torch_backend import TorchBackend

    backend = TorchBackend(torch_settings(tiny))
    asks = [
        (backend.chat_prompt([{"role": "user", "content": "Say " + "a" * i + "."}]), 4 + 3 * i, i) for i in range(6)
    ]
    asks.append((asks[0][0], 12, None))  # greedy
    alone = [backend.generate(p, n, temperature=0 if seed is None else 1, seed=seed) for p, n, seed in asks]
    assert set(backend.batcher.sizes) == {1}
    together = [None] * len(asks)

    def ask(i):
        p, n, seed = asks[i]
        together[i] = backend.generate(p, n, temperature=0 if seed is None else 1, seed=seed)

    threads = [threading.Thread(target=ask, args=(i,)) for i in range(len(asks))]
    [t.start() for t in threads]
    [t.join() for t in threads]
    assert max(backend.batcher.sizes) > 1
    for (ids, logprobs, finish, version), (ids2, logprobs2, finish2, version2) in zip(alone, together):
        assert (ids, finish, version) == (ids2, finish2, version2)
        assert logprobs == pytest.approx(logprobs2, abs=1e-4)
    assert len({len(a[0]) for a in alone}) > 2  # the rows did end at different lengths


def test_shutdown_decodes_what_was_submitted_then_ends_the_batching_thread(tiny):
    """A script that drives the backend directly (bench/learn/evaluate.py) ends with `shutdown`: the batcher's thread
    finishes the requests queued before it and exits, instead of dying inside torch at interpreter exit."""
    from alight_worker.batching import Request
    from alight_worker.torch_backend import TorchBackend

    backend = TorchBackend(torch_settings(tiny))
    prompt = backend.chat_prompt([{"role": "user", "content": "Say a."}])
    requests = [backend.batcher.submit(Request(prompt, 5, 1.0, 1.0, seed)) for seed in range(3)]
    backend.shutdown()
    assert not backend.batcher.thread.is_alive()
    for request in requests:
        events = []
        while not events or events[-1][0] == "token":
            events.append(request.events.get(timeout=1))
        assert events[-1][0] == "done" and len(events) >= 2


def test_a_client_that_leaves_before_its_answer_costs_one_log_line_and_the_worker_serves_on(tiny, tmp_path):
    import socket
    import struct

    log_path = tmp_path / "worker.log"
    with open(log_path, "w") as log:
        worker = Worker(tiny, stderr=log)
    try:
        host, port = worker.url.split("//")[1].split("/")[0].split(":")
        body = json.dumps({"messages": [{"role": "user", "content": "Say something."}], "max_tokens": 40}).encode()
        with socket.create_connection((host, int(port))) as sock:
            head = f"POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-length: {len(body)}\r\n\r\n"
            sock.sendall(head.encode() + body)
            # Closed with a reset, as a killed harness's socket is: the worker's answer cannot be written.
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        deadline = time.monotonic() + 120
        while "the client left" not in log_path.read_text() and time.monotonic() < deadline:
            time.sleep(0.2)
        version, answer = worker.chat("Say something.", seed=3)
        assert version == 0 and answer["choices"][0]["message"]["content"] is not None
        text = log_path.read_text()
        assert "/v1/chat/completions: the client left before its answer" in text and "Traceback" not in text
    finally:
        worker.call("shutdown")
        worker.proc.wait(timeout=30)
