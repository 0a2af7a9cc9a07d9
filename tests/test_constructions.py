"""Hand-set circuits (``measure.constructions``) solve chapter 3's k-hop induction task
through the ordinary forward pass, with the block counts they claim, and fail with one
block fewer. Few sequences (64 per k, thousands of scored positions) keep it to seconds."""

from __future__ import annotations

import time

import pytest
import torch

from depthnotes.core.model import Transformer
from depthnotes.data.tasks import IGNORE, InductionHops
from depthnotes.measure import constructions as c

TASK = InductionHops(hops=(1, 2, 4, 8), n_symbols=4, length=64)   # chapter 3's task
N = 64
BUILD = {"relay": c.relay_model, "doubling": c.doubling_model}


def test_block_counts():
    assert [c.blocks_needed("doubling", k) for k in (1, 2, 4, 8)] == [2, 3, 4, 5]
    assert [c.blocks_needed("relay", k) for k in (1, 2, 4, 8)] == [2, 3, 5, 9]
    for kind in c.KINDS:
        for k in (1, 2, 4, 8):
            assert BUILD[kind](TASK, k).config.n_layer == c.blocks_needed(kind, k)
    with pytest.raises(ValueError):
        c.blocks_needed("wide", 2)
    with pytest.raises(ValueError):
        c.doubling_model(TASK, 8, blocks=6)


@pytest.mark.parametrize("kind", c.KINDS)
def test_scores_at_every_k(kind):
    torch.set_num_threads(1)
    start = time.process_time()       # this process's CPU time: a busy machine does not count
    for k in TASK.hops:
        model = BUILD[kind](TASK, k)
        assert type(model) is Transformer and type(model).forward is Transformer.forward
        assert c.score(model, TASK, k, N) >= 0.99, (kind, k)
    assert time.process_time() - start < 20


def test_scored_positions_are_many():
    """The scores above rest on thousands of queries, not a handful."""
    _, targets = TASK.batch(N, seed=10**9 + 8, hops=8)
    assert (targets != IGNORE).sum() > 1000


def test_doubling_one_block_fewer_is_the_shorter_hops_baseline():
    k = 8
    short = c.doubling_model(TASK, k, blocks=c.blocks_needed("doubling", k) - 1)
    s = c.score(short, TASK, k, N)
    base = c.shorter_hops_baseline(TASK, k, 4, N)
    assert s < 0.6 and abs(s - base) < 0.02, (s, base)
    assert c.score(short, TASK, 4, N) >= 0.99        # it still does the 4 hops it has


def test_relay_one_block_fewer_fails():
    k = 4
    short = c.relay_model(TASK, k, blocks=c.blocks_needed("relay", k) - 1)
    assert c.score(short, TASK, k, N) < 0.5


def test_not_a_power_of_two_uses_the_accumulator():
    """k = 3, 5 take the accumulator's path (the binary digits of k)."""
    for k in (3, 5, 6):
        task = InductionHops(hops=(k,), n_symbols=4, length=64)
        model = c.doubling_model(task, k)
        assert model.config.n_layer == c.blocks_needed("doubling", k)
        assert c.score(model, task, k, 32) >= 0.99, k


def test_other_alphabets():
    task = InductionHops(hops=(2, 4), n_symbols=7, length=40)
    for kind in c.KINDS:
        assert c.score(BUILD[kind](task, 4), task, 4, 32) >= 0.99, kind


def test_relay_hop_blocks_are_one_block():
    """Relay's hop blocks are the same weights: the same read in every block."""
    model = c.relay_model(TASK, 4)
    first = model.h[1].state_dict()
    for block in list(model.h)[2:]:
        for name, w in block.state_dict().items():
            assert torch.equal(w, first[name]), name
    doubling = c.doubling_model(TASK, 8)
    assert not torch.equal(doubling.h[1].attn.c_attn.weight, doubling.h[2].attn.c_attn.weight)


@pytest.mark.parametrize("kind", c.KINDS)
def test_scores_by_blocks_are_the_cut_circuits_scores(kind):
    """One pass over a circuit scores every cut of it exactly as building the circuit with
    that many blocks and scoring it does (chapter 3 scores a circuit and its one-block-fewer
    control this way)."""
    torch.set_num_threads(1)
    task = InductionHops(hops=(1, 2, 4), n_symbols=4, length=24)
    for k in task.hops:
        n = c.blocks_needed(kind, k)
        by_blocks = c.scores_by_blocks(BUILD[kind](task, k), task, k, n_sequences=16)
        assert len(by_blocks) == n
        assert by_blocks == [c.score(BUILD[kind](task, k, blocks=b), task, k, 16)
                             for b in range(1, n + 1)], (kind, k)
        assert by_blocks[-1] >= 0.99 and by_blocks[-2] < 0.9, (kind, k, by_blocks)


def test_score_without_a_block_is_the_score_of_the_stack_without_it():
    """``score(..., skip=(b,))`` (exercise 3.7 scores a trained model so) is the score of the
    same weights with block b taken out: the last block of the relay circuit left out scores
    what the circuit built one block short scores, and a middle one what the stack of the
    other blocks scores."""
    torch.set_num_threads(1)
    k = 2
    relay = c.relay_model(TASK, k)                                      # blocks 0, 1, 2
    short = c.relay_model(TASK, k, blocks=k)
    assert c.score(relay, TASK, k, N, skip=(k,)) == c.score(short, TASK, k, N) < 0.9
    assert c.score(relay, TASK, k, N) >= 0.99
    without_1 = Transformer(relay.config.replace(n_layer=2))           # blocks 0 and 2
    without_1.load_state_dict({name.replace("h.2.", "h.1."): w
                               for name, w in relay.state_dict().items()
                               if not name.startswith("h.1.")})
    assert c.score(relay, TASK, k, N, skip=(1,)) == c.score(without_1, TASK, k, N)
