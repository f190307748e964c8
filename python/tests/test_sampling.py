"""The batched sampler (sampling.py) on logits made here, no model: each row's draw is its own (the same whatever rows
share its batch), draws follow the nucleus distribution, and a masked token is never drawn."""

import types

import pytest
import torch

from alight_worker.sampling import FIRST_K, choose, draw, nucleus
from alight_worker.server import BadRequest, asked


def ask(temperature=1.0, top_p=1.0):
    return types.SimpleNamespace(temperature=temperature, top_p=top_p)


def generators(seeds):
    return [torch.Generator().manual_seed(s) for s in seeds]


def test_a_rows_token_is_the_same_alone_and_in_any_batch():
    """SmolLM2's vocabulary size, the backend's suppressed ids, tied logits, and a flat row that takes top-k to the
    whole vocabulary beside rows whose nucleus fits the first k."""
    torch.manual_seed(0)
    logits = torch.randn(7, 49152) * 3
    logits[:, :10] = float("-inf")
    logits[0, 10:400] = 4.0  # ties across the first k's edge
    logits[6] = torch.randn(49152) * 0.01  # flat: its nucleus is most of the vocabulary
    requests = [ask(1.0, 0.9), ask(0.0), ask(0.7, 1.0), ask(1.3, 0.5), ask(1.0, 0.999), ask(1e-9, 0.9), ask(1.0, 0.95)]
    for seed in range(8):
        seeds = [seed * 10 + j for j in range(7)]
        together = choose(logits, requests, generators(seeds))
        alone = [choose(logits[j : j + 1], [requests[j]], generators([seeds[j]]))[0] for j in range(7)]
        reversed_ = choose(logits.flip(0), requests[::-1], generators(seeds[::-1]))[::-1]
        assert together == alone == reversed_
        assert together[1] == int(logits[1].argmax()) and together[5] == int(logits[5].argmax())
        assert min(together) >= 10


def by_sort(probs, top_p):
    """The nucleus by a full sort: its token ids, most probable first, and their probabilities."""
    ranked, order = probs.double().sort(descending=True)
    inside = (ranked.cumsum(0) - ranked) < top_p
    return order[inside], ranked[inside]


def reference(probs, top_p, u):
    """The nucleus by a full sort, and the inverse CDF read one token at a time: what `nucleus` must equal."""
    ids, kept = by_sort(probs, top_p) if top_p < 1 else (torch.arange(len(probs)), probs.double())
    threshold, mass = u * float(kept.sum()), 0.0
    for position, p in enumerate(kept.tolist()):
        mass += p
        if mass > threshold:
            return int(ids[position])
    raise AssertionError("no token reached the threshold")


def test_the_nucleus_draw_equals_a_full_sort_and_an_inverse_cdf():
    """Rows from peaked to flat (their nucleus from one token to thousands, so k grows through 1,024 and 4,096), top-p
    from 0.3 to 1, uniforms across [0, 1): the token drawn is the reference's, or one tied with it in probability (the
    flat row's float32 probabilities tie, and a sort and a top-k may order ties differently)."""
    torch.manual_seed(1)
    scales = [8.0, 3.0, 1.0, 0.3, 0.03]
    probs = torch.softmax(torch.randn(len(scales), 5000) * torch.tensor(scales)[:, None], -1)
    flat = probs[-1].double().sort(descending=True).values
    assert int(((flat.cumsum(0) - flat) < 0.9).sum()) > 4 * FIRST_K  # k does grow
    for top_p in [0.3, 0.9, 0.99, 1.0]:
        for u in [0.0, 0.013, 0.25, 0.5, 0.77, 0.999]:
            rows = torch.full((len(scales),), top_p, dtype=torch.float64)
            got = nucleus(probs, rows, torch.full((len(scales),), u, dtype=torch.float64)).tolist()
            expected = [reference(p, top_p, u) for p in probs]
            assert got[:-1] == expected[:-1], (top_p, u)
            assert probs[-1, got[-1]] == probs[-1, expected[-1]], (top_p, u)


@pytest.mark.parametrize("temperature,top_p", [(1.0, 0.8), (0.5, 1.0), (2.0, 0.6)])
def test_draws_follow_the_nucleus_distribution(temperature, top_p):
    logits = torch.tensor([2.0, 1.5, 1.0, 0.5, 0.0, -0.5, -1.0, float("-inf")])
    inside, kept = by_sort(torch.softmax(logits / temperature, -1), top_p)
    expected = torch.zeros(len(logits), dtype=torch.float64)
    expected[inside] = kept / kept.sum()
    n = 20000
    rows = logits.expand(n, -1)
    got = torch.bincount(torch.tensor(choose(rows, [ask(temperature, top_p)] * n, generators(range(n)))), minlength=8)
    assert got[expected == 0].sum() == 0  # nothing outside the nucleus, the masked token included
    seen = got.double() / n
    bound = 5 * (expected * (1 - expected) / n).sqrt() + 1e-9  # five standard errors per token
    assert ((seen - expected).abs() <= bound).all(), (seen, expected)


def test_a_uniform_at_either_end_still_lands_on_a_token_with_mass():
    probs = torch.tensor([[0.0, 0.5, 0.5, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0, 0.0]])
    below_one = torch.tensor(1 - 2**-53, dtype=torch.float64)  # torch.rand's largest double
    assert draw(probs, torch.tensor([0.0, 0.0], dtype=torch.float64)).tolist() == [1, 2]
    assert draw(probs, torch.stack([below_one, below_one])).tolist() == [2, 2]
    assert draw(probs, torch.tensor([0.5, 0.7], dtype=torch.float64)).tolist() == [2, 2]


@pytest.mark.parametrize("body", [{"top_p": 0}, {"top_p": 1.5}, {"top_p": float("nan")}, {"temperature": -0.1}])
def test_settings_with_nothing_to_draw_are_refused_before_they_reach_a_batch(body):
    """An empty nucleus would fail inside the batch, and so every request beside it: the worker answers 400 instead."""
    with pytest.raises(BadRequest):
        asked(body, [1, 2], True, "m")
    assert asked({"top_p": 1, "temperature": 0}, [1, 2], True, "m").top_p == 1.0
