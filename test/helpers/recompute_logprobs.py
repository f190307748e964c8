"""Recomputes, with transformers, the logprob of each sampled token under the distribution it was sampled from
(temperature, then top-k), as an independent check of what vLLM reports. Reads JSON on stdin:
{"model": path, "prompt": [ids], "completion": [ids], "temperature": t, "top_k": k or null}; prints a JSON list."""
import json
import sys

import torch
from transformers import AutoModelForCausalLM

req = json.load(sys.stdin)
model = AutoModelForCausalLM.from_pretrained(req["model"], dtype=torch.float32).eval()
ids = torch.tensor([req["prompt"] + req["completion"]])
with torch.no_grad():
    logits = model(ids).logits[0, len(req["prompt"]) - 1:-1] / req["temperature"]
if req.get("top_k"):
    kth = torch.topk(logits, req["top_k"], dim=-1).values[:, -1:]
    logits = logits.masked_fill(logits < kth, float("-inf"))
logprobs = torch.log_softmax(logits, dim=-1)
print(json.dumps([logprobs[i, t].item() for i, t in enumerate(req["completion"])]))
