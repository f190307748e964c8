"""LoRA on the torch backend (alight_worker/lora.py), on a tiny model made here: only the adapter trains, a checkpoint
is the adapter alone and loads back exactly, a saved adapter continues, merging gives the adapted model's logits, and
settings that cannot work are refused."""

import os

import pytest
import torch
from safetensors.numpy import save_file

from alight_worker.torch_backend import TorchBackend
from conftest import one_row_batch, torch_settings, training_settings

PROBE = [{"role": "user", "content": "Reply with the letter a."}]


def backend(model, rank=0, targets="all-linear", from_=None, **update):
    """The targets as alight sends them: train.lora.targets split at its commas."""
    adapter = {"rank": rank, "alpha": 32, "dropout": 0.0, "targets": targets.split(","), "from": from_}
    return TorchBackend(torch_settings(model, training_settings(lora=adapter, **update)))


def steps(b, tmp_path, count):
    """`count` updates on one sampled answer with advantage 1 (an update that surely moves the adapter)."""
    prompt = b.chat_prompt(PROBE)
    ids, served, _, _ = b.generate(prompt, 6, temperature=1.0, seed=3)
    save_file(one_row_batch(prompt, ids, served), str(tmp_path / "batch.safetensors"))
    for step in range(count):
        b.train_step(str(tmp_path / "batch.safetensors"), step)
    return torch.tensor([prompt + ids])


def logits(model, ids):
    """On the model's device (the worker's GPU where there is one), compared on the CPU."""
    with torch.no_grad():
        return model(input_ids=ids.to(next(model.parameters()).device)).logits.cpu()


def test_only_the_adapter_trains_and_the_base_weights_stay_bit_identical(tiny, tmp_path):
    b = backend(tiny, rank=2)
    base = {k: v.clone() for k, v in b.model.named_parameters() if "lora_" not in k}
    # Σ r·(d_in + d_out) over the adapted layers, r = 2.
    expected = sum(2 * (m.in_features + m.out_features) for m in b.model.modules() if hasattr(m, "lora_A"))
    assert sum(p.numel() for p in b.trained) == expected > 0
    # all-linear: every projection of every layer, not the output layer.
    assert sum(1 for m in b.model.modules() if hasattr(m, "lora_A")) == 2 * 7
    assert [g["params"] for g in b.optimizer.param_groups][0] == b.trained
    ids = steps(b, tmp_path, 3)
    for name, p in b.model.named_parameters():
        if "lora_" not in name:
            assert torch.equal(p, base[name]), name
    with b.model.disable_adapter():
        untouched = logits(b.model, ids)
    assert not torch.allclose(logits(b.model, ids), untouched)  # the adapter moved the policy


def test_a_checkpoint_is_the_adapter_alone_and_loads_back_exactly(tiny, tmp_path):
    b = backend(tiny, rank=2)
    ids = steps(b, tmp_path, 2)
    saved = b.save(str(tmp_path / "ckpt"))["path"]
    assert {"adapter_model.safetensors", "adapter_config.json"} <= set(os.listdir(saved))
    assert "model.safetensors" not in os.listdir(saved)
    full = os.path.getsize(os.path.join(tiny, "model.safetensors"))
    assert os.path.getsize(os.path.join(saved, "adapter_model.safetensors")) < 0.05 * full
    before = logits(b.model, ids)
    b.train_step(str(tmp_path / "batch.safetensors"), 2)
    assert not torch.allclose(logits(b.model, ids), before)
    b.load(saved)
    assert torch.equal(logits(b.model, ids), before)
    fresh = backend(tiny, rank=2)
    fresh.load(saved)
    assert torch.equal(logits(fresh.model, ids), before)
    assert fresh.optimizer.state_dict()["state"].keys() == b.optimizer.state_dict()["state"].keys()


def test_lora_from_continues_the_saved_adapter_and_merging_gives_its_logits(tiny, tmp_path):
    from transformers import AutoModelForCausalLM

    from alight_worker.lora import merge

    b = backend(tiny, rank=2)
    ids = steps(b, tmp_path, 2)
    saved = b.save(str(tmp_path / "ckpt"))["path"]
    trained = logits(b.model, ids)
    continued = backend(tiny, from_=saved)
    assert torch.equal(logits(continued.model, ids), trained)  # not a fresh (zero) adapter
    assert sum(p.numel() for p in continued.trained) == sum(p.numel() for p in b.trained)
    merged = AutoModelForCausalLM.from_pretrained(merge(saved, str(tmp_path / "merged"))["path"], dtype=torch.float32)
    assert torch.allclose(logits(merged.to(b.device), ids), trained, atol=1e-5)
    assert not torch.allclose(logits(AutoModelForCausalLM.from_pretrained(tiny).to(b.device), ids), trained, atol=1e-5)


def test_settings_that_cannot_work_are_refused_with_what_to_do(tiny, tmp_path):
    with pytest.raises(ValueError, match="embed_tokens is not supported"):
        backend(tiny, rank=2, targets="q_proj,embed_tokens")
    with pytest.raises(ValueError, match="not found in the base model"):
        backend(tiny, rank=2, targets="not_a_layer")
    saved = backend(tiny, rank=2).save(str(tmp_path / "ckpt"))["path"]
    with pytest.raises(ValueError, match="has rank 2, not 4"):
        backend(tiny, rank=4, from_=saved)
    with pytest.raises(ValueError, match="holds no LoRA adapter"):
        backend(tiny, from_=str(tmp_path))


def test_all_linear_with_the_output_layer_adapts_it_too_and_merges_without_touching_the_embeddings(tiny, tmp_path):
    from transformers import AutoModelForCausalLM

    from alight_worker.lora import merge

    b = backend(tiny, rank=2, targets="all-linear,lm_head")
    adapted = {n.rsplit(".", 1)[-1] for n, m in b.model.named_modules() if hasattr(m, "lora_A")}
    assert adapted == {"q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj", "lm_head"}
    ids = steps(b, tmp_path, 2)
    trained = logits(b.model, ids)
    saved = b.save(str(tmp_path / "ckpt"))["path"]
    from safetensors import safe_open

    with safe_open(os.path.join(saved, "adapter_model.safetensors"), "pt") as f:
        assert all(".lora_A." in k or ".lora_B." in k for k in f.keys())  # no copy of lm_head's own weights
    # The tiny model ties its output layer to the embeddings: the merge unties it first.
    merged = AutoModelForCausalLM.from_pretrained(merge(saved, str(tmp_path / "merged"))["path"], dtype=torch.float32)
    assert torch.allclose(logits(merged.to(b.device), ids), trained, atol=1e-5)
    base = AutoModelForCausalLM.from_pretrained(tiny)
    assert torch.equal(merged.get_input_embeddings().weight.cpu(), base.get_input_embeddings().weight)


def test_the_kl_reference_under_lora_is_the_base_model_with_the_adapter_off(tiny, tmp_path):
    b = backend(tiny, rank=2, kl_coef=0.5, ppo_epochs=3)
    assert b.reference is None  # no second copy of the model
    steps(b, tmp_path, 1)
    m = b.train_step(str(tmp_path / "batch.safetensors"), 1)["metrics"]
    assert m["kl_ref"] > 0
