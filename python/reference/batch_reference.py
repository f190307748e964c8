r"""A plain-Python reference for alight's training batch, written from the README's rules alone ("From traces to a
batch").

Reads `alight traces export` JSONL, merges each succeeded rollout's calls into rows (longest-prefix open row),
computes advantages within groups and loss weights, and prints the batch tensors as JSON lists. Deliberately naive
(lists, like Agent Lightning's adapter): it is the yardstick the TypeScript pipeline is checked against.

    python batch_reference.py traces.jsonl --advantage grpo --loss-norm per-rollout-mean --missing-reward zero \
        --budget 32768
"""

import argparse
import json
import math


def merge(calls):
    rows = []
    for call in sorted(calls, key=lambda c: c["seq"]):
        if call["status"] != "ok" or call["prompt_token_ids"] is None or call["completion_token_ids"] is None:
            continue
        prompt = call["prompt_token_ids"]
        best = None
        for row in rows:
            n = len(row["tokens"])
            if n <= len(prompt) and prompt[:n] == row["tokens"] and (best is None or n > len(best["tokens"])):
                best = row
        if best is None:
            best = {"tokens": [], "mask": [], "logprobs": [], "prompt_length": len(prompt)}
            rows.append(best)
        for token in prompt[len(best["tokens"]) :]:
            best["tokens"].append(token)
            best["mask"].append(0)
            best["logprobs"].append(0.0)
        logprobs = call["completion_logprobs"] or [0.0] * len(call["completion_token_ids"])
        for token, logprob in zip(call["completion_token_ids"], logprobs):
            best["tokens"].append(token)
            best["mask"].append(1)
            best["logprobs"].append(logprob)
    return rows


def advantages(rewards, estimator):
    n = len(rewards)
    if n == 1:
        return list(rewards)
    mean = sum(rewards) / n
    if estimator == "grpo":
        std = math.sqrt(sum((r - mean) ** 2 for r in rewards) / (n - 1))
        return [(r - mean) / (std + 1e-6) for r in rewards]
    if estimator == "drgrpo":
        return [r - mean for r in rewards]
    if estimator == "rloo":
        return [r - (sum(rewards) - r) / (n - 1) for r in rewards]
    raise ValueError(estimator)


def weights(rows, rollouts, norm, budget):
    loss = [sum(row["mask"]) for _, row in rows]
    per_rollout = {}
    for (r, _), m in zip(rows, loss):
        per_rollout[r] = per_rollout.get(r, 0) + m
    out = []
    for (r, _), m in zip(rows, loss):
        if m == 0:
            out.append(0.0)
        elif norm == "per-rollout-mean":
            out.append(1 / (rollouts * per_rollout[r]))
        elif norm == "token-mean":
            out.append(1 / sum(loss))
        elif norm == "seq-mean-token-mean":
            out.append(1 / (len(rows) * m))
        elif norm == "seq-mean-token-sum":
            out.append(1 / len(rows))
        elif norm == "constant":
            out.append(1 / (rollouts * budget))
        else:
            raise ValueError(norm)
    return out


def build(traces, estimator, norm, missing, budget):
    rollouts = [t for t in traces if t["state"] == "succeeded"]
    rollouts = [t for t in rollouts if not (t["reward"] is None and missing == "drop")]
    rewards = [0.0 if t["reward"] is None else t["reward"] for t in rollouts]
    groups = {}
    for i, t in enumerate(rollouts):
        groups.setdefault(t["group_id"] or "rollout:" + t["rollout_id"], []).append(i)
    adv = [0.0] * len(rollouts)
    for members in groups.values():
        for i, a in zip(members, advantages([rewards[i] for i in members], estimator)):
            adv[i] = a
    kept = [(i, merge(t["calls"])) for i, t in enumerate(rollouts)]
    kept = [(i, rows) for i, rows in kept if rows]
    rows = [(k, row) for k, (_, rs) in enumerate(kept) for row in rs]
    w = weights(rows, len(kept), norm, budget)
    out = {
        name: []
        for name in [
            "input_ids",
            "row_offsets",
            "prompt_lengths",
            "loss_mask",
            "rollout_logprobs",
            "advantages",
            "loss_weights",
            "rollout_index",
        ]
    }
    for b, (k, row) in enumerate(rows):
        out["row_offsets"].append(len(out["input_ids"]))
        out["prompt_lengths"].append(row["prompt_length"])
        out["rollout_index"].append(k)
        for token, m, lp in zip(row["tokens"], row["mask"], row["logprobs"]):
            out["input_ids"].append(token)
            out["loss_mask"].append(m)
            out["rollout_logprobs"].append(lp if m else 0.0)
            out["advantages"].append(adv[kept[k][0]] if m else 0.0)
            out["loss_weights"].append(w[b] if m else 0.0)
    out["row_offsets"].append(len(out["input_ids"]))
    return out


def traces_from_db(path, run, limit):
    """The run's rollouts straight from alight's SQLite file, prompts rebuilt from their stored references as lists."""
    import array
    import sqlite3

    db = sqlite3.connect(path)

    def ids(blob):
        return array.array("i", blob).tolist() if blob is not None else None

    def fls(blob):
        return array.array("f", blob).tolist() if blob is not None else None

    traces = []
    for rollout_id, group_id, state in db.execute(
        "SELECT id, group_id, state FROM rollouts WHERE run = ? ORDER BY created_at, id LIMIT ?", (run, limit)
    ):
        reward = db.execute(
            "SELECT value FROM rewards WHERE rollout_id = ? ORDER BY id DESC LIMIT 1", (rollout_id,)
        ).fetchone()
        contexts, calls = {}, []
        for cid, seq, status, ref, prefix, suffix, completion, logprobs in db.execute(
            "SELECT id, seq, status, prompt_ref, prompt_prefix, prompt_suffix, completion_ids, completion_logprobs "
            "FROM calls WHERE rollout_id = ? ORDER BY id",
            (rollout_id,),
        ):
            prompt = ids(suffix)
            if prompt is not None and ref is not None:
                prompt = contexts[ref][:prefix] + prompt
            completion = ids(completion)
            if prompt is not None and completion is not None:
                contexts[cid] = prompt + completion
            calls.append(
                {
                    "seq": seq,
                    "status": status,
                    "prompt_token_ids": prompt,
                    "completion_token_ids": completion,
                    "completion_logprobs": fls(logprobs),
                }
            )
        traces.append(
            {
                "rollout_id": rollout_id,
                "group_id": group_id,
                "state": state,
                "reward": reward[0] if reward else None,
                "calls": calls,
            }
        )
    return traces


def write_safetensors(path, batch):
    import array
    import struct

    kinds = {
        "input_ids": ("i", "I32"),
        "row_offsets": ("q", "I64"),
        "prompt_lengths": ("i", "I32"),
        "loss_mask": ("B", "U8"),
        "rollout_logprobs": ("f", "F32"),
        "advantages": ("f", "F32"),
        "loss_weights": ("f", "F32"),
        "rollout_index": ("i", "I32"),
    }
    blobs, header, offset = [], {}, 0
    for name, (code, dtype) in kinds.items():
        data = array.array(code, batch[name]).tobytes()
        header[name] = {"dtype": dtype, "shape": [len(batch[name])], "data_offsets": [offset, offset + len(data)]}
        offset += len(data)
        blobs.append(data)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text)
        for data in blobs:
            f.write(data)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("traces", nargs="?")
    parser.add_argument("--db")
    parser.add_argument("--run")
    parser.add_argument("--limit", type=int, default=-1)
    parser.add_argument("--timing", action="store_true", help="print the time and peak memory instead of the tensors")
    parser.add_argument("--out", help="also write the batch as a safetensors file (as alight does)")
    parser.add_argument("--advantage", default="grpo")
    parser.add_argument("--loss-norm", default="per-rollout-mean")
    parser.add_argument("--missing-reward", default="zero")
    parser.add_argument("--budget", type=int, default=32768)
    args = parser.parse_args()
    import resource
    import time

    started = time.perf_counter()
    if args.db:
        traces = traces_from_db(args.db, args.run, args.limit)
    else:
        with open(args.traces) as f:
            traces = [json.loads(line) for line in f if line.strip()]
    batch = build(traces, args.advantage, args.loss_norm, args.missing_reward, args.budget)
    if args.out:
        write_safetensors(args.out, batch)
    if args.timing:
        print(
            json.dumps(
                {
                    "seconds": time.perf_counter() - started,
                    "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                    "tokens": len(batch["input_ids"]),
                }
            )
        )
    else:
        print(json.dumps(batch))
