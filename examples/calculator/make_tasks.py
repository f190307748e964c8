"""Writes the calculator task suite from reasoning-gym's generators (Apache-2.0), seeded, so the files are the same on
every machine: train.jsonl and a held-out heldout.jsonl of `products` (two 3-4 digit numbers: too long for a 135M model
to multiply in its head, one `calculate` call with a calculator), whose questions never appear in train; and
warmup.jsonl, `chain_sum` of 2-3 numbers of 3-4 digits, another operation and wording, on which a scripted teacher
shows the tool-call format before RL (bench/agent.ts), so that what RL learns on products is its own."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "arithmetic"))
from make_tasks import tasks, write_splits  # noqa: E402  (the arithmetic example's generator and writer)

CONFIG = {"min_terms": 2, "max_terms": 2, "min_digits": 3, "max_digits": 4}
HELD_OUT = 200
POOL = 2200
WARMUP = {"min_terms": 2, "max_terms": 3, "min_digits": 3, "max_digits": 4}
WARMUP_SIZE = 300


def main():
    unique = tasks("products", POOL, CONFIG)
    warmup = tasks("chain_sum", WARMUP_SIZE, WARMUP)
    splits = {"heldout.jsonl": unique[:HELD_OUT], "train.jsonl": unique[HELD_OUT:], "warmup.jsonl": warmup}
    write_splits(os.path.dirname(os.path.abspath(__file__)), splits)


if __name__ == "__main__":
    main()
