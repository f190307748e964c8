"""`alight sft`'s loss on the tiny model: rows packed end to end give the loss and gradient of the same rows padded
(transformers keeps a packed row's attention to itself when position ids restart), and the worker's SFT step lowers
the loss of what it trained on."""

import torch

from alight_worker.policy_loss import pack, sft_loss, token_logprobs, unpack
from alight_worker.tiny import make


def batch_of(lengths, prompt=3, seed=0):
    """A packed batch file's tensors: rows of these lengths, the first `prompt` tokens of each out of the loss, each
    loss token weighted 1 / all loss tokens."""
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(4, 60, (sum(lengths),), generator=g, dtype=torch.int32)
    mask = torch.cat([torch.tensor([0] * prompt + [1] * (n - prompt), dtype=torch.uint8) for n in lengths])
    offsets = torch.tensor([0, *torch.tensor(lengths).cumsum(0).tolist()], dtype=torch.int64)
    weights = mask.float() / mask.sum()
    zeros = torch.zeros(sum(lengths))
    return {
        "input_ids": ids,
        "row_offsets": offsets,
        "loss_mask": mask,
        "loss_weights": weights,
        "advantages": mask.float(),
        "rollout_logprobs": zeros,
    }


def loss_and_grad(model, part):
    model.zero_grad(set_to_none=True)
    logp, _ = token_logprobs(
        model, part["input_ids"], part.get("attention_mask"), part["loss_mask"], part.get("position_ids")
    )
    loss, _ = sft_loss(logp, part)
    loss.backward()
    return float(loss.detach()), {n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None}


def test_packed_rows_give_the_padded_rows_loss_and_gradient(tmp_path):
    from transformers import AutoModelForCausalLM

    make(str(tmp_path / "tiny"), seed=2)
    model = AutoModelForCausalLM.from_pretrained(tmp_path / "tiny", dtype=torch.float32)
    batch = batch_of([9, 17, 5, 12])
    rows = list(range(4))
    padded_loss, padded = loss_and_grad(model, unpack(batch, rows))
    packed_loss, packed = loss_and_grad(model, pack(batch, rows))
    assert abs(packed_loss - padded_loss) < 1e-5
    assert padded.keys() == packed.keys()
    for name in padded:
        assert torch.allclose(packed[name], padded[name], atol=1e-5), name
    # Without restarting positions the rows would see each other: not the same loss.
    joined = pack(batch, rows)
    joined["position_ids"] = torch.arange(joined["input_ids"].shape[1]).unsqueeze(0)
    assert abs(loss_and_grad(model, joined)[0] - padded_loss) > 1e-3
