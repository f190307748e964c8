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


def tasks(dataset="chain_sum", size=POOL, config=None):
    """The generator's unique questions in its seeded order, as task rows (examples/calculator/ asks for its own)."""
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


def write_splits(default_out, splits):
    """Each split as JSONL in --out (default: `default_out`), and their sizes printed."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default=default_out)
    args = parser.parse_args()
    for name, rows in splits.items():
        with open(os.path.join(args.out, name), "w") as f:
            f.writelines(json.dumps(row) + "\n" for row in rows)
    print(json.dumps({name: len(rows) for name, rows in splits.items()}))


def main():
    unique = tasks()
    # The held-out split is the first HELD_OUT unique questions; the generator's order is already seeded-random.
    splits = {"heldout.jsonl": unique[:HELD_OUT], "train.jsonl": unique[HELD_OUT:]}
    write_splits(os.path.dirname(os.path.abspath(__file__)), splits)


if __name__ == "__main__":
    main()
