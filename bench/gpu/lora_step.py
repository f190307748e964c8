"""LoRA against full weights on the torch worker on one GPU, at SmolLM2-1.7B's shape (its published config; weights
drawn from a seed, which time and memory do not depend on): the update's time, the peak GPU memory, and the
checkpoint's size, each side in a fresh worker on the same batch (16 rows of 512 prompt and 512 answer tokens).

    python bench/gpu/lora_step.py <tokenizer folder> <work folder>            # full weights: one JSON line
    python bench/gpu/lora_step.py <tokenizer folder> <work folder> lora-r16   # then the adapter, in its own process

Run where a GPU was lent (docs/verification.md); the CPU numbers are bench/lora.ts's.
"""

import json
import os
import shutil
import sys
import time

import numpy as np
import torch
from safetensors.numpy import save_file

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "python"))
from alight_worker.torch_backend import TorchBackend  # noqa: E402

ROWS, PROMPT, ANSWER, STEPS = 16, 512, 512, 3


def model_folder(tokenizer, out):
    from transformers import LlamaConfig, LlamaForCausalLM

    shape = dict(hidden_size=2048, intermediate_size=8192, num_hidden_layers=24, num_attention_heads=32)
    config = LlamaConfig(
        **shape,
        num_key_value_heads=32,
        vocab_size=49152,
        max_position_embeddings=8192,
        rope_theta=130000,
        tie_word_embeddings=True,
    )
    torch.manual_seed(0)
    LlamaForCausalLM(config).save_pretrained(out)
    for f in os.listdir(tokenizer):
        shutil.copy(os.path.join(tokenizer, f), out)


def batch_file(path):
    rng = np.random.default_rng(0)
    width = PROMPT + ANSWER
    mask = np.tile(np.r_[np.zeros(PROMPT), np.ones(ANSWER)], ROWS)
    save_file(
        {
            "input_ids": rng.integers(0, 49152, ROWS * width, dtype=np.int32),
            "row_offsets": np.arange(0, ROWS * width + 1, width, dtype=np.int64),
            "prompt_lengths": np.full(ROWS, PROMPT, dtype=np.int32),
            "loss_mask": mask.astype(np.uint8),
            "rollout_logprobs": np.full(ROWS * width, -10.0, dtype=np.float32),
            "advantages": (mask * rng.choice([-1.0, 1.0], ROWS * width)).astype(np.float32),
            "loss_weights": (mask / ANSWER).astype(np.float32),
            "rollout_index": np.arange(ROWS, dtype=np.int32),
        },
        path,
    )


def side(name, model, batch, work, rank=0):
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()
    # alight's defaults (src/config/schema.ts), whole: the worker has none of its own.
    adapter = {"rank": rank, "alpha": 32, "dropout": 0.0, "targets": ["all-linear"], "from": None} if rank else None
    update = {"objective": "rl", "kl_coef": 0, "is_correction": "none", "is_cap": 2.0, "lr": 1e-5, "weight_decay": 0}
    update |= {"max_grad_norm": 1.0, "clip_low": 0.2, "clip_high": 0.28, "ppo_epochs": 1, "micro_batch_rows": 8}
    serving = {"backend": "torch", "model": model, "name": None, "seed": 0, "threads": None, "max_batch": 64}
    b = TorchBackend({**serving, "training": {**update, "lora": adapter}})
    times = []
    for step in range(STEPS):
        torch.cuda.synchronize()
        started = time.perf_counter()
        b.train_step(batch, step)
        torch.cuda.synchronize()
        times.append(time.perf_counter() - started)
    saved = b.save(os.path.join(work, name))["path"]
    size = {f: os.path.getsize(os.path.join(saved, f)) for f in os.listdir(saved)}
    trained = sum(p.numel() for p in b.trained)
    out = dict(
        side=name,
        trained_parameters=trained,
        step_s=times,
        peak_gib=torch.cuda.max_memory_allocated() / 2**30,
        checkpoint_mib=sum(size.values()) / 2**20,
        weights_mib=sum(v for f, v in size.items() if f.endswith(".safetensors")) / 2**20,
    )
    print(json.dumps(out), flush=True)
    del b


def main():
    tokenizer, work = sys.argv[1:3]
    model, batch = os.path.join(work, "model"), os.path.join(work, "batch.safetensors")
    if not os.path.exists(model):
        model_folder(tokenizer, model)
        batch_file(batch)
    # One side per process (the worker's batching thread keeps a backend alive), so that each peak is its own.
    if sys.argv[3:] == ["lora-r16"]:
        side("lora-r16", model, batch, work, rank=16)
    else:
        side("full", model, batch, work)


if __name__ == "__main__":
    main()
