"""datasketch's MinHashLSH on the same statements and parameters as alight's near-dedupe, for bench/data.ts.

    python near-dedupe.py statements.jsonl --threshold 0.8 --perms 128 --shingle 5 --out pairs.json
Reads one JSON string per line; writes the verified pairs (i, j, Jaccard ≥ threshold) and the seconds taken."""
import argparse
import json
import time

from datasketch import MinHash, MinHashLSH


def shingles(text, n):
    words = text.lower().split()
    if not words:
        return set()
    return {" ".join(words[i:i + n]) for i in range(max(len(words), n) - n + 1)}


parser = argparse.ArgumentParser()
parser.add_argument("statements")
parser.add_argument("--threshold", type=float, default=0.8)
parser.add_argument("--perms", type=int, default=128)
parser.add_argument("--shingle", type=int, default=5)
parser.add_argument("--out", required=True)
args = parser.parse_args()
texts = [json.loads(line) for line in open(args.statements)]
started = time.perf_counter()
sets = [shingles(t, args.shingle) for t in texts]
lsh = MinHashLSH(threshold=args.threshold, num_perm=args.perms)
signatures = []
for i, s in enumerate(sets):
    m = MinHash(num_perm=args.perms)
    m.update_batch([x.encode() for x in s])
    signatures.append(m)
    lsh.insert(i, m)
pairs = []
for i, m in enumerate(signatures):
    for j in lsh.query(m):
        if j > i:
            union = len(sets[i] | sets[j])
            similarity = len(sets[i] & sets[j]) / union if union else 1.0
            if similarity >= args.threshold:
                pairs.append([i, j, similarity])
seconds = time.perf_counter() - started
import datasketch
json.dump({"seconds": seconds, "pairs": pairs, "bands": lsh.b, "rows": lsh.r, "version": datasketch.__version__}, open(args.out, "w"))
