"""The update's maths: per-token logprobs of a packed batch under the policy, and the PPO-clip / GRPO objective
Σ loss_weight · ℓ_token with the batch's advantages and weights as given (no renormalisation: alight's orchestrator
already chose the normalisation, docs/design.md#advantages-and-loss-weights), or supervised fine-tuning's
cross-entropy on the same batch layout."""

import torch

# The batch file's per-token tensors the update reads, and the dtype it computes them in.
ROW_TENSORS = {
    "input_ids": torch.long,
    "loss_mask": torch.float32,
    "rollout_logprobs": torch.float32,
    "advantages": torch.float32,
    "loss_weights": torch.float32,
}


def unpack(batch, rows):
    """Right-padded [len(rows), L] tensors of the given rows of a packed batch (a dict of torch tensors)."""
    offsets = batch["row_offsets"].tolist()
    width = max(offsets[b + 1] - offsets[b] for b in rows)
    out = {
        name: torch.zeros((len(rows), width), dtype=dtype)
        for name, dtype in [*ROW_TENSORS.items(), ("attention_mask", torch.long)]
    }
    for i, b in enumerate(rows):
        start, end = offsets[b], offsets[b + 1]
        n = end - start
        out["attention_mask"][i, :n] = 1
        for name in ROW_TENSORS:
            out[name][i, :n] = batch[name][start:end]
    return out


def pack(batch, rows):
    """The given rows of a packed batch end to end as one sequence [1, Σ lengths], no padding: position ids restart at
    each row and no attention mask is given, so transformers keeps each row's attention to itself (its packed-sequence
    masks). A row's first token is never a loss token here: it would be predicted from the row before it."""
    offsets = batch["row_offsets"].tolist()
    spans = [(offsets[b], offsets[b + 1]) for b in rows]
    index = torch.cat([torch.arange(start, end) for start, end in spans])
    out = {name: batch[name][index].to(dtype).unsqueeze(0) for name, dtype in ROW_TENSORS.items()}
    out["position_ids"] = torch.cat([torch.arange(end - start) for start, end in spans]).unsqueeze(0)
    out["loss_mask"][out["position_ids"] == 0] = 0
    return out


def token_logprobs(model, input_ids, attention_mask, loss_mask=None, position_ids=None, last_logp=False):
    """log p(token_t | tokens_<t) for t ≥ 1 (0 at t = 0), and the entropy of each of those distributions (a metric:
    computed outside the graph, so that no second [B, L, vocab] tensor lives through backward). With `loss_mask`, only
    the columns where some row has a loss token are computed (0 elsewhere): the output layer and its softmax over the
    vocabulary are a large share of a small model's update, and the prompt's positions carry no loss. `last_logp`: also
    the distribution after the last token ([B, vocab]), from the same pass."""
    width = input_ids.shape[1]
    if loss_mask is None:
        targets = torch.arange(1, width, device=input_ids.device)
    else:
        targets = torch.nonzero(loss_mask[:, 1:].sum(0)).squeeze(-1) + 1
    # The logits at position t − 1 predict the token at t.
    keep = targets - 1
    if last_logp:
        keep = torch.cat([keep, keep.new_tensor([width - 1])])
    # No cache: nothing is generated after, and transformers only keeps packed rows apart without one.
    logits = model(
        input_ids=input_ids,
        attention_mask=attention_mask,
        position_ids=position_ids,
        use_cache=False,
        logits_to_keep=keep,
    ).logits.float()
    logp_all = torch.log_softmax(logits, dim=-1)
    last = None
    if last_logp:
        logp_all, last = logp_all[:, :-1], logp_all[:, -1]
    picked = logp_all.gather(-1, input_ids[:, targets].unsqueeze(-1)).squeeze(-1)
    with torch.no_grad():
        detached = logp_all.detach()
        entropy = -(detached.exp() * detached).sum(-1)
    full = picked.new_zeros((input_ids.shape[0], width))
    scored = full.index_copy(1, targets, picked), full.detach().index_copy(1, targets, entropy)
    return (*scored, last) if last_logp else scored


def truncated_is_weights(old_logp, rollout_logp, mask, cap):
    """min(π_old / π_rollout, cap) per token (1 where the mask is 0), and how many loss tokens hit the cap."""
    raw = torch.exp(torch.clamp((old_logp - rollout_logp) * mask, -20.0, 20.0))
    return torch.clamp(raw, max=cap), int(((raw > cap) * mask).sum())


def k3(log_ratio, mask):
    """Σ of the k3 estimate of KL(rollout policy ‖ current policy) from the rollout's samples: r − 1 − log r."""
    return ((torch.exp(log_ratio) - 1 - log_ratio) * mask).sum()


def ppo_clip_loss(logp, rows, clip_low=0.2, clip_high=0.2, ref_logp=None, kl_coef=0.0, old_logp=None, is_cap=2.0):
    """Σ w · ℓ over loss tokens with ℓ = max(−A·r, −A·clip(r, 1−ε_low, 1+ε_high)) (+ kl_coef · k3 KL to
    the reference), r = exp(logp − rollout logp). With `old_logp` (the policy at the update's start: token-level
    truncated importance sampling), r = exp(logp − old logp) and each token's ℓ is weighted by
    min(exp(old logp − rollout logp), is_cap), which corrects for the rollout policy being older or different (async
    groups, engine numerics). Returns the loss and sums for the step's metrics."""
    mask, weights, adv = rows["loss_mask"], rows["loss_weights"], rows["advantages"]
    behaviour = rows["rollout_logprobs"] if old_logp is None else old_logp
    # Clamped as verl does, so that a policy far from the one that sampled cannot overflow the ratio.
    log_ratio = torch.clamp((logp - behaviour) * mask, -20.0, 20.0)
    ratio = torch.exp(log_ratio)
    unclipped = -adv * ratio
    clipped = -adv * torch.clamp(ratio, 1 - clip_low, 1 + clip_high)
    per_token = torch.maximum(unclipped, clipped)
    sums = {
        "clipped_tokens": float(((clipped > unclipped) * mask).sum()),
        "kl_rollout_sum": float(k3(torch.clamp((logp.detach() - rows["rollout_logprobs"]) * mask, -20.0, 20.0), mask)),
    }
    if old_logp is not None:
        is_weight, capped = truncated_is_weights(old_logp.detach(), rows["rollout_logprobs"], mask, is_cap)
        per_token = per_token * is_weight
        sums["is_weight_sum"] = float((is_weight * mask).sum())
        sums["is_capped_tokens"] = float(capped)
    if ref_logp is not None and kl_coef > 0:
        delta = (ref_logp - logp) * mask
        kl = torch.exp(delta) - delta - 1
        per_token = per_token + kl_coef * kl
        sums["kl_ref_sum"] = float((kl.detach() * mask).sum())
    return (per_token * weights * mask).sum(), sums


def sft_loss(logp, rows):
    """Σ w · (−log p) over the loss tokens: cross-entropy on the tokens the examples mark, weighted as the batch says
    (`alight sft` writes 1 / the step's loss tokens: their mean)."""
    return (-logp * rows["loss_weights"] * rows["loss_mask"]).sum(), {}
