"""Batched generation for the torch backend: the requests that arrive together (a step's harnesses all ask at once) are
decoded as one left-padded batch with a KV cache, logits only at the last position. On 2 CPU cores this is what makes
a step's rollouts affordable: one sequence at a time leaves the cores waiting on memory, a batch of 64 does not
(bench/BENCHMARKS.md, "the torch worker's generation").

A batch runs to completion; requests that arrive meanwhile form the next one (no joining mid-batch: merging KV caches
of different lengths is not worth its code for single-turn steps). Each request keeps its own seeded generator, so a
sample does not depend on which batch it landed in. Tokens reach their requester through a queue read by the
requester's own thread: a client that stops reading blocks itself, not the batch. Tokens are chosen for the whole
batch at once (sampling.py)."""

import collections
import queue
import threading
import time

import torch

from .log import log
from .sampling import choose

STOP = object()  # queued by `Batcher.close`: the loop ends after the batch before it


class Request:
    def __init__(self, prompt, max_tokens, temperature, top_p, seed):
        self.prompt, self.max_tokens, self.temperature, self.top_p, self.seed = (
            prompt,
            max_tokens,
            temperature,
            top_p,
            seed,
        )
        self.events = queue.Queue()  # ("token", id, logprob) … then ("done", finish, version) or ("error", exc)
        self.cancelled = False  # the requester left: its row stops at the next token


class Batcher:
    """Collects requests into batches and decodes them under the backend's lock, so an update never runs mid-batch."""

    def __init__(self, backend, max_batch=64, gather_s=0.5, max_wait_s=4.0):
        self.backend, self.max_batch, self.gather_s, self.max_wait_s = backend, max_batch, gather_s, max_wait_s
        self.pending = queue.Queue()
        self.sizes = collections.deque(maxlen=256)  # of the latest batches, for tests and the log
        self.thread = threading.Thread(target=self.loop, daemon=True)
        self.thread.start()

    def close(self):
        """Ends the loop once what was submitted before is decoded, and waits for it. A daemon thread still inside
        torch when the interpreter exits aborted the process ("terminate called without an active exception") after
        its work was done."""
        self.pending.put(STOP)
        self.thread.join()

    def submit(self, request):
        self.pending.put(request)
        return request

    def gather(self):
        """The first waiting request, then every request that follows within `gather_s` of the one before, up to
        `max_batch` or `max_wait_s` after the first. A step's harness processes reach the worker over several seconds
        on 2 busy cores (64 node starts); a shorter window split them into two or three batches run one after the
        other, which made the rollouts ~2× slower (bench/BENCHMARKS.md). A full batch does not wait: `alight train` sets
        `max_batch` to the harnesses that can ask at once, so a batch that has them all has all there can be."""
        first = self.pending.get()
        if first is STOP:
            return []
        batch = [first]
        deadline = time.monotonic() + self.max_wait_s
        while len(batch) < self.max_batch:
            wait = min(self.gather_s, deadline - time.monotonic())
            if wait <= 0:
                break
            try:
                request = self.pending.get(timeout=wait)
            except queue.Empty:
                break
            if request is STOP:
                self.pending.put(STOP)  # for the next gather, which ends the loop
                break
            batch.append(request)
        return batch

    def loop(self):
        while batch := self.gather():
            self.sizes.append(len(batch))
            try:
                with self.backend.lock, torch.no_grad():
                    started = time.perf_counter()
                    tokens = self.decode(batch)
                if len(batch) > 1:
                    seconds = time.perf_counter() - started
                    log(f"batch of {len(batch)}: {tokens} tokens in {seconds:.1f} s ({tokens / seconds:.0f} tokens/s)")
            except Exception as err:  # every requester gets the error; the batcher lives on
                for request in batch:
                    request.events.put(("error", err))

    def decode(self, batch):
        backend = self.backend
        version = backend.version
        generators = [
            torch.Generator().manual_seed(r.seed if r.seed is not None else backend.sample_seed(r.prompt))
            for r in batch
        ]
        width = max(len(r.prompt) for r in batch)
        ids = torch.tensor([[backend.pad_id] * (width - len(r.prompt)) + r.prompt for r in batch])
        mask = torch.tensor([[0] * (width - len(r.prompt)) + [1] * len(r.prompt) for r in batch])
        positions = (mask.cumsum(-1) - 1).clamp(min=0)
        out = backend.model(
            input_ids=ids.to(backend.device),
            attention_mask=mask.to(backend.device),
            position_ids=positions.to(backend.device),
            use_cache=True,
            logits_to_keep=1,
        )
        rows, counts = list(range(len(batch))), [0] * len(batch)  # counts: tokens generated per request
        while True:
            logits = out.logits[:, -1].float().cpu()
            # The logprob reported beside each token is the model's own (temperature 1, nothing masked), as vLLM reports
            # and the update recomputes; the choice below reads the masked logits at the request's settings.
            logp = torch.log_softmax(logits, -1)
            logits[:, backend.suppress] = float("-inf")
            tokens = choose(logits, [batch[i] for i in rows], [generators[i] for i in rows])
            step, alive = [], []
            for j, i in enumerate(rows):
                request = batch[i]
                if request.cancelled:
                    continue
                token = tokens[j]
                counts[i] += 1
                request.events.put(("token", token, float(logp[j, token])))
                stop = token in backend.stop_ids
                if stop or counts[i] >= request.max_tokens:
                    request.events.put(("done", "stop" if stop else "length", version))
                    continue
                step.append(token)
                alive.append(j)
            if not alive:
                return sum(counts)
            # Finished rows leave the batch (and the cache): answers of very different lengths cost only their own.
            if len(alive) < len(rows):
                out.past_key_values.batch_select_indices(torch.tensor(alive, device=backend.device))
                mask, positions, rows = mask[alive], positions[alive], [rows[j] for j in alive]
            mask = torch.cat([mask, mask.new_ones((len(rows), 1))], dim=1)
            positions = positions[:, -1:] + 1
            out = backend.model(
                input_ids=torch.tensor([step]).T.to(backend.device),
                attention_mask=mask.to(backend.device),
                position_ids=positions.to(backend.device),
                past_key_values=out.past_key_values,
                use_cache=True,
            )
