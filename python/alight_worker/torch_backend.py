"""The `torch` backend: a Hugging Face causal LM on the CPU (or one GPU), served to the gateway and updated in place.

Serving and training share the model under one lock, so a weight update never runs under a generation; the
orchestrator pauses rollouts for the update anyway. The served version is what `sync_weights` last set."""

import copy
import hashlib
import os
import threading
import time

import torch
from safetensors.torch import load_file

from . import lora
from .batching import Batcher, Request
from .log import log
from .policy_loss import pack, ppo_clip_loss, sft_loss, token_logprobs, unpack
from .settings import checked


def inputs(part):
    return part["input_ids"], part.get("attention_mask"), part["loss_mask"], part.get("position_ids")


class TorchBackend:
    def __init__(self, settings):
        """`settings`: init's, checked against settings.schema.json (alight_worker/settings.py); `training` is None for
        a worker that only serves."""
        from transformers import AutoModelForCausalLM, AutoTokenizer

        self.training = training = checked(settings)["training"]
        seed = settings["seed"]
        torch.manual_seed(seed)
        if settings["threads"] is not None:
            torch.set_num_threads(settings["threads"])
        self.device = "cuda" if torch.cuda.is_available() else "cpu"
        path = settings["model"]
        self.name = settings["name"] or os.path.basename(os.path.normpath(path))
        self.tokenizer = AutoTokenizer.from_pretrained(path)
        self.model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32).to(self.device)
        self.lora = training and training["lora"]
        if self.lora:
            self.model = lora.wrap(self.model, self.lora)
        self.model.eval()
        self.reference = None
        # With LoRA the reference is the base model itself, the adapter switched off (no second copy).
        if training and training["kl_coef"] > 0 and not self.lora:
            self.reference = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32).to(self.device).eval()
        self.trained = [p for p in self.model.parameters() if p.requires_grad]
        self.optimizer = training and torch.optim.AdamW(
            self.trained, lr=training["lr"], weight_decay=training["weight_decay"], betas=(0.9, 0.999)
        )
        self.lock = threading.Lock()
        self.version = 0
        self.seed = seed
        self.asked, self.asked_version = {}, 0  # prompt digest → requests so far at this version, for `sample_seed`
        self.max_context = int(getattr(self.model.config, "max_position_embeddings", 4096))
        eos = self.model.generation_config.eos_token_id
        self.stop_ids = {
            i for i in [self.tokenizer.eos_token_id, *(eos if isinstance(eos, list) else [eos])] if i is not None
        }
        # Tokens the model's generation config says never to sample (e.g. padding), as transformers' generate does.
        self.suppress = torch.tensor(list(self.model.generation_config.suppress_tokens or []), dtype=torch.long)
        pad = self.tokenizer.pad_token_id
        self.pad_id = pad if pad is not None else next(iter(self.stop_ids), 0)  # only ever masked out
        self.batcher = Batcher(self, max_batch=settings["max_batch"])
        log(
            f"pid {os.getpid()}: loaded {path} ({sum(p.numel() for p in self.model.parameters()):,} parameters) "
            f"on {self.device}"
        )

    # --- serving ---------------------------------------------------------------------------------------------------
    def chat_prompt(self, messages, tools=None):
        # return_dict=False: transformers 5 returns a BatchEncoding by default.
        return list(
            self.tokenizer.apply_chat_template(
                messages, tools=tools, add_generation_prompt=True, tokenize=True, return_dict=False
            )
        )

    def text_prompt(self, text):
        return list(self.tokenizer.encode(text, add_special_tokens=False))

    def decode(self, ids):
        # No clean-up of spaces (" ." → "."): it would make a window's text differ from the same tokens' in the whole
        # answer, and streamed text would lose characters (vLLM decodes without it too).
        return self.tokenizer.decode(ids, skip_special_tokens=True, clean_up_tokenization_spaces=False)

    def check_length(self, prompt_tokens, max_tokens):
        if prompt_tokens + max_tokens > self.max_context:
            raise ValueError(
                f"This model's maximum context length is {self.max_context} tokens. However, you requested "
                f"{prompt_tokens + max_tokens} tokens ({prompt_tokens} in the messages, "
                f"{max_tokens} in the completion)."
            )

    def generate(self, prompt, max_tokens, temperature=1.0, top_p=1.0, seed=None, on_token=None):
        """Samples up to max_tokens ids after `prompt`, in a batch with the requests that arrive with it (batching.py).
        The logprob of each is the model's own (temperature 1, no truncation), as vLLM reports by default and as the
        update recomputes it. Returns (ids, logprobs, finish, version)."""
        self.check_length(len(prompt), max_tokens)
        request = self.batcher.submit(Request(prompt, max_tokens, temperature, top_p, seed))
        ids, logprobs = [], []
        try:
            while True:
                kind, *rest = request.events.get()
                if kind == "error":
                    raise rest[0]
                if kind == "done":
                    return ids, logprobs, rest[0], rest[1]
                ids.append(rest[0])
                logprobs.append(rest[1])
                if on_token:
                    on_token(rest[0], rest[1])
        except BaseException:
            request.cancelled = True
            raise

    def sample_seed(self, prompt):
        """A request without a seed gets one from the run's seed, the served version, the prompt and how many times that
        prompt was asked at that version: a seeded run draws the same samples whatever order its harnesses' calls
        arrive in (only identical prompts, interchangeable, share a sequence). Called under `self.lock`, so the version
        is the one that samples."""
        digest = hashlib.sha256(repr((self.seed, self.version, prompt)).encode()).digest()
        if self.asked_version != self.version:
            self.asked, self.asked_version = {}, self.version
        k = self.asked[digest] = self.asked.get(digest, 0) + 1
        return int.from_bytes(hashlib.sha256(digest + k.to_bytes(8, "little")).digest()[:8], "little") >> 1

    # --- training --------------------------------------------------------------------------------------------------
    def train_step(self, batch_path, step):
        started = time.perf_counter()
        batch = load_file(batch_path)
        rows = len(batch["row_offsets"]) - 1
        t = self.trains("train_step")
        micro, epochs, kl_coef, is_cap = t["micro_batch_rows"], t["ppo_epochs"], t["kl_coef"], t["is_cap"]
        has_reference = kl_coef > 0
        token_is = t["is_correction"] == "token"
        loss_tokens = float(batch["loss_mask"].sum())
        sft = t["objective"] == "sft"
        totals = {
            "loss": 0.0,
            "clipped_tokens": 0.0,
            "kl_rollout_sum": 0.0,
            "kl_ref_sum": 0.0,
            "entropy_sum": 0.0,
            "is_weight_sum": 0.0,
            "is_capped_tokens": 0.0,
        }
        grad_norm = 0.0
        with self.lock:
            parts = self.micro_batches(batch, rows, micro)
            # What stays fixed through the epochs, once per micro-batch before any weight changes: the reference's
            # log-probs (KL) and, for truncated IS, the policy's as the update starts.
            fixed = [{"ref": None, "old": None} for _ in parts]
            with torch.no_grad():
                for part, f in zip(parts, fixed):
                    if has_reference:
                        f["ref"] = self.reference_logprobs(part)
                    if token_is:
                        f["old"] = token_logprobs(self.model, *inputs(part))[0]
            self.model.train()
            for _ in range(epochs):
                self.optimizer.zero_grad(set_to_none=True)
                for part, f in zip(parts, fixed):
                    logp, entropy = token_logprobs(self.model, *inputs(part))
                    if sft:
                        loss, sums = sft_loss(logp, part)
                    else:
                        clip = (t["clip_low"], t["clip_high"])
                        loss, sums = ppo_clip_loss(logp, part, *clip, f["ref"], kl_coef, f["old"], is_cap)
                    # The weights already sum the step's objective: micro-batch losses add up, nothing is re-averaged.
                    loss.backward()
                    totals["loss"] += float(loss.detach())
                    for key, value in sums.items():
                        totals[key] += value
                    totals["entropy_sum"] += float((entropy.detach() * part["loss_mask"]).sum())
                grad_norm = float(torch.nn.utils.clip_grad_norm_(self.trained, t["max_grad_norm"]))
                self.optimizer.step()
            self.model.eval()
        n = max(loss_tokens * epochs, 1.0)
        metrics = {
            "loss": totals["loss"] / epochs,
            "grad_norm": grad_norm,
            "entropy": totals["entropy_sum"] / n,
            "clip_fraction": totals["clipped_tokens"] / n,
            "kl_rollout": totals["kl_rollout_sum"] / n,
            "rows": rows,
            "loss_tokens": int(loss_tokens),
            "update_s": time.perf_counter() - started,
        }
        if has_reference:
            metrics["kl_ref"] = totals["kl_ref_sum"] / n
        if token_is:
            metrics["is_weight_mean"] = totals["is_weight_sum"] / n
            metrics["is_capped_fraction"] = totals["is_capped_tokens"] / n
        log(f"step {step}: loss {metrics['loss']:.4f}, grad norm {grad_norm:.3f}, {rows} rows")
        return {"metrics": metrics}

    def trains(self, method):
        """The update's settings; a worker started only to serve has none."""
        if self.training is None:
            raise ValueError(f"{method}: this worker serves only (it was started without training settings)")
        return self.training

    def micro_batches(self, batch, rows, micro):
        """`micro` rows at a time on the device: padded to the longest, or for `alight sft` packed end to end (the same
        loss and gradient without the padding's compute: python/tests/test_worker.py)."""
        cut = pack if self.training["objective"] == "sft" else unpack
        return [
            {k: v.to(self.device) for k, v in cut(batch, list(range(start, min(rows, start + micro)))).items()}
            for start in range(0, rows, micro)
        ]

    def eval_loss(self, batch_path):
        """Supervised loss on a batch without an update (`alight sft`'s validation): Σ w · (−log p) over its loss
        tokens, the mean when its weights are 1 / its loss tokens."""
        batch = load_file(batch_path)
        rows = len(batch["row_offsets"]) - 1
        micro = self.trains("eval_loss")["micro_batch_rows"]
        total = 0.0
        with self.lock, torch.no_grad():
            for part in self.micro_batches(batch, rows, micro):
                total += float(sft_loss(token_logprobs(self.model, *inputs(part))[0], part)[0])
        return {"loss": total, "loss_tokens": int(batch["loss_mask"].sum())}

    def score(self, ids, greedy_next=False):
        """log p(token | the tokens before) for positions 1… of `ids` under the weights held now, computed as the update
        computes them: what the engine serving this version must report for the same tokens (the served-policy check,
        src/train/served-check.ts). `greedy_next`: also the most likely token after `ids` and its logprob, from the
        same forward pass (a scoring request's one generated token, without waiting in the sampler's batch)."""
        with self.lock, torch.no_grad():
            full = torch.tensor([list(ids)], device=self.device)
            logp, _, last = token_logprobs(self.model, full, torch.ones_like(full), last_logp=True)
        scored = {"logprobs": logp[0, 1:].tolist(), "version": self.version}
        if greedy_next:
            token = int(last[0].argmax())
            scored["next"] = (token, float(last[0, token]))
        return scored

    def reference_logprobs(self, part):
        """The initial policy's log-probs of a micro-batch, for the KL penalty: the reference copy, or with LoRA the
        base model under the adapter."""
        if self.reference is not None:
            return token_logprobs(self.reference, *inputs(part))[0]
        with self.model.disable_adapter():
            return token_logprobs(self.model, *inputs(part))[0]

    def sync_weights(self, version):
        # The served model is the trained one: switching is taking the new version number, under the lock.
        with self.lock:
            self.version = int(version)
        return {"version": self.version}

    def save(self, path, weights_only=False):
        with self.lock:
            os.makedirs(path, exist_ok=True)
            if weights_only:
                return self.save_for_serving(path)
            self.trains("save")  # a checkpoint holds the optimizer's state
            if self.lora:
                lora.save_adapter(self.model, path)
            else:
                self.model.save_pretrained(path, safe_serialization=True)
            self.tokenizer.save_pretrained(path)
            torch.save(
                {"optimizer": self.optimizer.state_dict(), "version": self.version, "torch_rng": torch.get_rng_state()},
                os.path.join(path, "trainer_state.pt"),
            )
        return {"path": path}

    def save_for_serving(self, path):
        """The weights for vLLM to serve (and reload in place after each update), not a checkpoint. Under LoRA, the
        adapter alone (vLLM serves the unchanged base with it). Full weights are written untied: vLLM's in-place reload
        does not reload a tied output layer (it keeps the old one and unties it from the new embeddings), so the served
        folder gives lm_head its own copy and says so in its config."""
        from safetensors.torch import save_file

        if self.lora:
            lora.save_adapter(self.model, path)
            return {"path": path, "adapter": True}
        state = {k: v.detach().clone().contiguous() for k, v in self.model.state_dict().items()}
        save_file(state, os.path.join(path, "model.safetensors"), metadata={"format": "pt"})
        config = copy.deepcopy(self.model.config)
        config.tie_word_embeddings = False
        config.save_pretrained(path)
        self.model.generation_config.save_pretrained(path)
        self.tokenizer.save_pretrained(path)
        return {"path": path}

    def load(self, path):
        from transformers import AutoModelForCausalLM

        self.trains("load")
        with self.lock:
            if self.lora:
                lora.load_adapter(self.model, path)
            else:
                loaded = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32)
                self.model.load_state_dict(loaded.state_dict())
            state = torch.load(os.path.join(path, "trainer_state.pt"))
            self.optimizer.load_state_dict(state["optimizer"])
            self.version = int(state["version"])
            torch.set_rng_state(state["torch_rng"])
            self.model.eval()
        return {"path": path, "version": self.version}

    def shutdown(self):
        self.batcher.close()
