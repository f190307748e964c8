"""Writes the calculator task suite from reasoning-gym's generators (Apache-2.0), seeded, so the files are the same on
every machine: train.jsonl and a held-out heldout.jsonl of `products` (two 3-4 digit numbers: too long for a 135M model
to multiply in its head, one `calculate` call with a calculator), whose questions never appear in train; and
warmup.jsonl, `chain_sum` of 2-3 numbers of 3-4 digits, another operation and wording, on which a scripted teacher
shows the tool-call format before RL (bench/agent.ts), so that what RL learns on products is its own."""

import argparse
import json
import os

import reasoning_gym

CONFIG = {"min_terms": 2, "max_terms": 2, "min_digits": 3, "max_digits": 4}
SEED = 2026
HELD_OUT = 200
POOL = 2200


WARMUP = {"min_terms": 2, "max_terms": 3, "min_digits": 3, "max_digits": 4}
WARMUP_SIZE = 300


def tasks(dataset="products", size=POOL, config=None):
    seen, out = set(), []
    for entry in reasoning_gym.create_dataset(dataset, size=size, seed=SEED, **(config or CONFIG)):
        if entry["question"] in seen:
            continue
        seen.add(entry["question"])
        meta = entry["metadata"]
        out.append(
            {
                "id": f"{dataset}-{meta['source_index']}",
                "question": entry["question"],
                "answer": entry["answer"],
                "dataset": dataset,
                "expression": meta["expression"],
            }
        )
    return out


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default=os.path.dirname(os.path.abspath(__file__)))
    args = parser.parse_args()
    unique = tasks()
    warmup = tasks("chain_sum", WARMUP_SIZE, WARMUP)
    splits = {"heldout.jsonl": unique[:HELD_OUT], "train.jsonl": unique[HELD_OUT:], "warmup.jsonl": warmup}
    for name, rows in splits.items():
        with open(os.path.join(args.out, name), "w") as f:
            f.writelines(json.dumps(row) + "\n" for row in rows)
    print(json.dumps({name: len(rows) for name, rows in splits.items()}))


if __name__ == "__main__":
    main()
