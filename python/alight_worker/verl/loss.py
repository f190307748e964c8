"""alight's objective inside verl's actor: Σ_tokens w · ℓ with the orchestrator's per-token weights w
(docs/design.md#advantages-and-loss-weights), ℓ the PPO-clip token loss (+ kl_coef · k3 KL to the reference, weighted
the same way, as the torch worker does).

`alight` is registered as a verl policy loss (`actor.policy_loss.loss_mode=alight`); `alight_loss` is the actor's whole
loss (set on the workers with `set_loss_fn`): verl's own `ppo_loss` would aggregate the KL term without the weights.
Importing this module in a Ray worker registers the policy loss there too (the registry is per process)."""

import torch
from verl.trainer.ppo.core_algos import get_policy_loss_fn, kl_penalty, register_policy_loss


@register_policy_loss("alight")
def alight_policy_loss(
    old_log_prob, log_prob, advantages, response_mask, loss_agg_mode="token-sum", config=None, rollout_is_weights=None
):
    """PPO-clip (ε_low, ε_high from the actor config) summed with the per-token weights `rollout_is_weights` (alight
    passes its loss weights there, importance weights already folded in). FSDP averages gradients over the data-parallel
    ranks, so the local sum is multiplied by dp_size: the update follows the gradient of the global Σ w·ℓ."""
    mask = response_mask.float()
    weights = rollout_is_weights if rollout_is_weights is not None else mask
    log_ratio = torch.clamp(log_prob - old_log_prob, -20.0, 20.0)
    ratio = torch.exp(log_ratio)
    low, high = config.clip_ratio_low, config.clip_ratio_high
    unclipped, clipped = -advantages * ratio, -advantages * torch.clamp(ratio, 1 - low, 1 + high)
    per_token = torch.maximum(unclipped, clipped)
    dp_size = (getattr(config, "global_batch_info", None) or {}).get("dp_size", 1) or 1
    loss = (per_token * weights * mask).sum() * dp_size
    tokens = mask.sum().clamp(min=1)
    metrics = {
        "actor/pg_clipfrac": float(((clipped > unclipped).float() * mask).sum() / tokens),
        "actor/ppo_kl": float(((-log_ratio).detach() * mask).sum() / tokens),
    }
    return loss, metrics


def alight_loss(config, model_output, data, dp_group=None):
    """The actor's loss on one micro-batch (verl calls it with its ActorConfig, the model's output and the micro-batch):
    the registered `alight` policy loss, plus kl_loss_coef · Σ w · k3(π ‖ π_ref) when a reference is in the
    batch."""
    from verl.utils.metric import AggregationType, Metric
    from verl.workers.utils.padding import no_padding_2_padding

    log_prob = no_padding_2_padding(model_output["log_probs"], data)
    config.global_batch_info["dp_size"] = data["dp_size"]
    config.global_batch_info["batch_num_tokens"] = data["batch_num_tokens"]
    config.global_batch_info["global_batch_size"] = data["global_batch_size"]
    fields = ["response_mask", "old_log_probs", "advantages", "alight_weights"] + (
        ["ref_log_prob"] if "ref_log_prob" in data else []
    )
    padded = data.select(*fields).to_padded_tensor()
    mask = padded["response_mask"].to(bool)
    loss, pg_metrics = get_policy_loss_fn("alight")(
        old_log_prob=padded["old_log_probs"],
        log_prob=log_prob,
        advantages=padded["advantages"],
        response_mask=mask,
        loss_agg_mode="token-sum",
        config=config,
        rollout_is_weights=padded["alight_weights"],
    )
    metrics = dict(Metric.from_dict(pg_metrics, aggregation=AggregationType.MEAN))
    metrics["actor/pg_loss"] = Metric(value=loss.detach(), aggregation=AggregationType.SUM)
    if "ref_log_prob" in padded and config.kl_loss_coef > 0:
        kl = kl_penalty(logprob=log_prob, ref_logprob=padded["ref_log_prob"], kl_penalty="low_var_kl")
        kl_loss = (kl * padded["alight_weights"] * mask.float()).sum() * config.global_batch_info["dp_size"]
        loss = loss + config.kl_loss_coef * kl_loss
        metrics["kl_loss"] = Metric(value=kl_loss.detach(), aggregation=AggregationType.SUM)
        # The torch worker's kl_ref: k3 to the reference per loss token (here per micro-batch, then averaged).
        per_token = (kl.detach() * mask.float()).sum() / mask.float().sum().clamp(min=1)
        metrics["kl_ref"] = Metric(value=per_token, aggregation=AggregationType.MEAN)
    return loss, metrics


def register():
    """Ray's worker_process_setup_hook: importing this module registered the `alight` policy loss in the worker."""
