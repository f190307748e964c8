"""Writes the arithmetic task suite from reasoning-gym's `chain_sum` generator (Apache-2.0): train.jsonl and a held-out
heldout.jsonl whose questions never appear in train. Seeded, so the files are the same on every machine (a test
regenerates them and compares). Chain sums of 2-3 one-digit terms: SmolLM2-135M-Instruct passes ~30% of them greedily
and ~15% sampled at temperature 1, so RL's groups are mixed (docs/training.md#a-real-model)."""

import argparse
import json
import os

import reasoning_gym

CONFIG = {"min_terms": 2, "max_terms": 3, "min_digits": 1, "max_digits": 1}
SEED = 2026
HELD_OUT = 400
POOL = 6000


def tasks():
    seen, out = set(), []
    for entry in reasoning_gym.create_dataset("chain_sum", size=POOL, seed=SEED, **CONFIG):
        if entry["question"] in seen:
            continue
        seen.add(entry["question"])
        meta = entry["metadata"]
        out.append(
            {
                "id": f"chain_sum-{meta['source_index']}",
                "question": entry["question"],
                "answer": entry["answer"],
                "dataset": "chain_sum",
                "expression": meta["expression"],
            }
        )
    return out


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default=os.path.dirname(os.path.abspath(__file__)))
    args = parser.parse_args()
    unique = tasks()
    # The held-out split is the first HELD_OUT unique questions; the generator's order is already seeded-random.
    splits = {"heldout.jsonl": unique[:HELD_OUT], "train.jsonl": unique[HELD_OUT:]}
    for name, rows in splits.items():
        with open(os.path.join(args.out, name), "w") as f:
            f.writelines(json.dumps(row) + "\n" for row in rows)
    print(json.dumps({name: len(rows) for name, rows in splits.items()}))


if __name__ == "__main__":
    main()
