"""The next token for every row of a decode step at once. Each request keeps its own seeded generator and takes exactly
one uniform from it per token, so a sample depends on its request's seed and logits, never on the rows beside it.

Choosing row by row (a softmax, a sort of the 49,152-entry vocabulary for the nucleus and a multinomial draw for each
of the 64 to 128 rows, every token) cost as much as the model's forward on 2 cores: the same worker decoded 128 rows
greedily at 159-183 tokens/s and sampled at 85-90 (bench/BENCHMARKS.md, "the torch worker's sampling, batched"). Here
the softmax is one call for the batch, the nucleus comes from a top-k that grows only for the rows whose nucleus is
longer than it, and the draw is an inverse-CDF lookup of each row's uniform."""

import torch

FIRST_K = 256  # a peaked row's nucleus is a few tokens; a flatter one's k grows (×4) until it holds the nucleus


def choose(logits, requests, generators):
    """One token id per row of `logits` ([rows, vocab], already masked): the argmax at temperature 0, else a draw from
    the row's nucleus at its request's temperature and top-p."""
    tokens = torch.argmax(logits, -1)
    sampled = [j for j, request in enumerate(requests) if request.temperature > 0]
    if sampled:
        # Clamped: a tiny temperature would overflow the scaled logits into NaN probabilities.
        temperature = torch.tensor([max(requests[j].temperature, 1e-5) for j in sampled])
        top_p = torch.tensor([requests[j].top_p for j in sampled], dtype=torch.float64)
        uniform = torch.cat([torch.rand(1, generator=generators[j], dtype=torch.float64) for j in sampled])
        rows = torch.tensor(sampled)
        tokens[rows] = nucleus(torch.softmax(logits[rows] / temperature[:, None], -1), top_p, uniform)
    return tokens.tolist()


def nucleus(probs, top_p, uniform):
    """For each row, the smallest set of most probable tokens whose mass reaches its top-p (a token is in while the mass
    before it is short of top-p; all of them at top-p 1), and the token where its uniform falls in that set's mass."""
    tokens = torch.empty(len(probs), dtype=torch.long)
    whole = top_p >= 1.0
    if whole.any():  # no nucleus to find: the draw reads the vocabulary in its own order, unsorted
        tokens[whole] = draw(probs[whole], uniform[whole])
    # The rows whose nucleus reaches the last of their k most probable go round again with 4k. A row's k is thus the
    # first of 256, 1024, ... that holds its nucleus whatever rows share its batch: top-k's order among tied
    # probabilities depends on k (its method does), so a k set by another row could change which tied token is drawn.
    rows, k, vocab = (~whole).nonzero().squeeze(1), FIRST_K, probs.shape[-1]
    while len(rows):
        k = min(k, vocab)
        head, ids = torch.topk(probs[rows], k, -1)
        head = head.double()
        keep = head.cumsum(-1) - head < top_p[rows, None]
        done = ~keep[:, -1] | (k == vocab)
        at = draw((head * keep)[done], uniform[rows[done]])
        tokens[rows[done]] = ids[done].gather(-1, at[:, None]).squeeze(-1)
        rows, k = rows[~done], 4 * k
    return tokens


def draw(probs, uniform):
    """The first position whose cumulative mass exceeds `uniform` (in [0, 1)) of the row's total: one with mass, so a
    masked token is never drawn. torch.rand's doubles are at most 1 - 2^-53, whose product with the total rounds below
    it."""
    mass = probs.double().cumsum(-1)
    return torch.searchsorted(mass, uniform[:, None] * mass[:, -1:], right=True).squeeze(-1)
