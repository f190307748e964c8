"""alight's packed batch (docs/design.md#batch-file) as verl's DataProto: each row's first prompt left-padded into
`prompts`, the rest of the row (completions, with the observations between them) right-padded into `responses`,
`response_mask` = the loss mask there. Advantages, rollout logprobs and alight's per-token loss weights ride along
response-shaped, so the update sees exactly the tokens, advantages and weights the orchestrator chose."""

import numpy as np
import torch

RESPONSE_KEYS = {"advantages": "advantages", "rollout_logprobs": "rollout_log_probs", "loss_weights": "alight_weights"}


def to_dataproto(batch, pad_token_id, meta=None):
    """`batch`: the batch file's tensors (torch). Returns a DataProto with prompts, responses, response_mask, input_ids,
    attention_mask, position_ids, advantages, rollout_log_probs, alight_weights and the rows' rollout indices."""
    from verl import DataProto

    offsets = batch["row_offsets"].tolist()
    prompt_lengths = batch["prompt_lengths"].tolist()
    rows = len(prompt_lengths)
    spans = [(offsets[b], offsets[b] + prompt_lengths[b], offsets[b + 1]) for b in range(rows)]
    prompt_width = max(p - s for s, p, _ in spans)
    response_width = max(max(e - p for _, p, e in spans), 1)
    ids = batch["input_ids"].long()
    prompts = torch.full((rows, prompt_width), pad_token_id, dtype=torch.long)
    responses = torch.full((rows, response_width), pad_token_id, dtype=torch.long)
    prompt_mask = torch.zeros((rows, prompt_width), dtype=torch.long)
    response_attention = torch.zeros((rows, response_width), dtype=torch.long)
    response_tensors = {
        name: torch.zeros((rows, response_width), dtype=torch.float32) for name in RESPONSE_KEYS.values()
    }
    response_mask = torch.zeros((rows, response_width), dtype=torch.long)
    for b, (start, prompt_end, end) in enumerate(spans):
        n_prompt, n_response = prompt_end - start, end - prompt_end
        prompts[b, prompt_width - n_prompt :] = ids[start:prompt_end]
        prompt_mask[b, prompt_width - n_prompt :] = 1
        responses[b, :n_response] = ids[prompt_end:end]
        response_attention[b, :n_response] = 1
        response_mask[b, :n_response] = batch["loss_mask"][prompt_end:end].long()
        for source, target in RESPONSE_KEYS.items():
            response_tensors[target][b, :n_response] = batch[source][prompt_end:end].float()
    attention_mask = torch.cat([prompt_mask, response_attention], dim=1)
    position_ids = torch.clamp(torch.cumsum(attention_mask, dim=1) - 1, min=0)
    tensors = {
        "prompts": prompts,
        "responses": responses,
        "response_mask": response_mask,
        "input_ids": torch.cat([prompts, responses], dim=1),
        "attention_mask": attention_mask,
        "position_ids": position_ids,
        **response_tensors,
    }
    non_tensors = {"rollout_index": np.array(batch["rollout_index"].tolist(), dtype=object)}
    return DataProto.from_dict(tensors=tensors, non_tensors=non_tensors, meta_info=dict(meta or {}))
