"""Chapter 3's long-chain score (``InductionHops.chain_spans``, ``tasks.span_accuracy``) on
hand-made sequences and made-up models whose scores are known, and the fixed-depth rule
(``ch3_hops.hops_done``, ``judge_fixed_depth``)."""

import pytest
import torch

from depthnotes.data.tasks import IGNORE, LONG_SPAN, InductionHops, PointerChasing
from depthnotes.training.tasks import query_accuracy, span_accuracies, span_accuracy
from depthnotes.verdicts.ch3_hops import (doubling_reach, hops_done, judge_fixed_depth,
                                          relay_reach)
from depthnotes.verdicts.evidence import (CONTRADICTED, NOT_SHOWN, NOT_TESTABLE,
                                          REPRODUCED)


def test_spans_of_a_hand_made_sequence():
    """s = 0 1 2 0 1 3 0: one hop from t = 3 lands at 1 (after the 0 at 0), from 4 at 2,
    from 6 at 4; two hops only from 6 (6 -> 4 -> 2)."""
    task = InductionHops(hops=(1, 2), length=7)
    s = torch.tensor([[0, 1, 2, 0, 1, 3, 0]])
    assert task.chain_spans(s, 1).tolist() == [[-1, -1, -1, 2, 2, -1, 2]]
    assert task.chain_spans(s, 2).tolist() == [[-1, -1, -1, -1, -1, -1, 4]]
    assert task.chain_spans(s, 0).tolist() == [[0] * 7]


def test_spans_are_the_distance_to_the_answer():
    task = InductionHops(length=64)
    s = task.symbols(32, torch.Generator().manual_seed(2))
    for k in (1, 3, 8):
        span, pos = task.chain_spans(s, k), task.hop_positions(s, k)
        ok = pos >= 0
        assert ((span >= 0) == ok).all()
        assert (span[ok] == (torch.arange(64).expand_as(s) - pos)[ok]).all()
        assert (s.gather(1, (torch.arange(64) - span).clamp(min=0).expand_as(s))[ok]
                == task.answers(s, k)[ok]).all()


class Oracle(torch.nn.Module):
    """Answers every query right, or (``window``) only those whose chain spans at most
    ``window`` positions, and a wrong letter elsewhere."""

    def __init__(self, task, window=None):
        super().__init__()
        self.task, self.window = task, window

    def forward(self, idx):
        task = self.task
        k = task.hops[int(idx[0, 0]) - task.n_symbols]
        s = idx[:, 1:]
        answer = task.answers(s, k).clamp(min=0)
        if self.window is not None:
            span = task.chain_spans(s, k)
            answer = torch.where(span <= self.window, answer, (answer + 1) % task.n_symbols)
        answer = torch.cat([torch.zeros_like(answer[:, :1]), answer], 1)
        return torch.nn.functional.one_hot(answer, task.vocab_size).float(), None


def test_a_perfect_model_scores_one_on_every_span_and_the_counts_are_right():
    task = InductionHops(length=64)
    model = Oracle(task)
    for k in (4, 8):
        acc, n = span_accuracy(model, task, k, min_span=LONG_SPAN, n_sequences=64)
        idx, targets = task.batch(64, seed=10**9 + k, hops=k)
        span = task.chain_spans(idx[:, 1:], k)
        assert acc == 1.0 and n == int((span >= LONG_SPAN).sum()) > 0
    assert span_accuracy(model, task, 8, n_sequences=64)[0] == \
        query_accuracy(model, task, 8, 64) == 1.0


def test_several_spans_in_one_pass_are_each_span_accuracy():
    """``span_accuracies`` scores several ranges of one k from one forward pass, each
    exactly as ``span_accuracy`` does; a range with no query gives (None, 0)."""
    task = InductionHops(length=64)
    model = Oracle(task, window=8)
    calls = []
    model.register_forward_hook(lambda *_: calls.append(1))
    ranges = {"short": (0, 8), "long": (LONG_SPAN, None), "all": (0, None),
              "none": (64, None)}
    found = span_accuracies(model, task, 4, ranges, n_sequences=64)
    assert len(calls) == 1 and list(found) == list(ranges)
    for name, (lo, hi) in ranges.items():
        assert found[name] == span_accuracy(model, task, 4, min_span=lo, max_span=hi,
                                            n_sequences=64), name
    assert found["none"] == (None, 0) and found["short"][0] == 1.0
    calls.clear()
    assert span_accuracies(model, task, 4, {"none": (64, None)}, n_sequences=8) == \
        {"none": (None, 0)} and not calls


def test_a_window_answers_short_chains_and_no_long_ones():
    """A model that reads a window of eight (answers a chain only when it spans <= 8)."""
    task = InductionHops(length=64)
    model = Oracle(task, window=8)
    assert span_accuracy(model, task, 2, max_span=8, n_sequences=64)[0] == 1.0
    assert span_accuracy(model, task, 8, min_span=LONG_SPAN, n_sequences=64)[0] == 0.0
    short, n_short = span_accuracy(model, task, 4, max_span=8, n_sequences=64)
    allk, n_all = span_accuracy(model, task, 4, n_sequences=64)
    assert short == 1.0 and 0 < n_short < n_all and allk == pytest.approx(n_short / n_all)
    # the score over every span is query_accuracy's, on the same sequences
    assert allk == pytest.approx(query_accuracy(model, task, 4, 64))


def test_no_chain_in_range_gives_no_score():
    task = InductionHops(length=64)
    assert span_accuracy(Oracle(task), task, 1, min_span=60, n_sequences=8) == (None, 0)


def test_constructions_do_long_chains():
    """Hand-set relay and doubling weights (chapter 3's construction) answer every long
    chain at eight hops."""
    from depthnotes.measure.constructions import doubling_model, relay_model

    task = InductionHops()
    for make in (relay_model, doubling_model):
        acc, n = span_accuracy(make(task, 8), task, 8, min_span=LONG_SPAN, n_sequences=32)
        assert acc == 1.0 and n > 100


@pytest.mark.parametrize("kwargs, message", [
    ({"min_span": -1}, "min_span"), ({"min_span": 5, "max_span": 4}, "max_span")])
def test_bad_spans_name_the_field(kwargs, message):
    task = InductionHops()
    with pytest.raises(ValueError, match=message):
        span_accuracy(Oracle(task), task, 1, **kwargs)


def test_only_induction_chains_have_spans():
    with pytest.raises(TypeError, match="InductionHops"):
        span_accuracy(None, PointerChasing(max_hops=2), 1)


def test_train_on_task_reports_long_chains():
    from depthnotes import ModelConfig
    from depthnotes.training.tasks import task_recipe, train_on_task

    task = InductionHops(hops=(1, 8), length=64)
    cfg = ModelConfig(n_layer=1, d_model=16, n_head=2, vocab_size=task.vocab_size,
                      context=task.seq_len)
    recipe = task_recipe(task, steps=2, batch_size=4, eval_sequences=8, long_span=LONG_SPAN)
    _, run = train_on_task(cfg, task, recipe)
    acc, n = run.long_accuracy[8]
    assert 0 <= acc <= 1 and n > 0 and run.long_accuracy[1] == (None, 0)
    _, plain = train_on_task(cfg, task, recipe.replace(long_span=0))
    assert plain.long_accuracy is None and plain.accuracy == run.accuracy
    table = PointerChasing(max_hops=2)
    with pytest.raises(ValueError, match="long_span needs an InductionHops"):
        train_on_task(cfg.replace(vocab_size=table.vocab_size, context=table.seq_len),
                      table, task_recipe(table, steps=1, long_span=LONG_SPAN))
    with pytest.raises(ValueError, match="long_span"):
        task_recipe(task, long_span=-1)


# -- the fixed-depth rule --------------------------------------------------------------------
ALL = {k: 1.0 for k in range(1, 9)}


def long_up_to(m, below=0.5):
    """Long-chain accuracy 0.95 for k <= m, ``below`` above it (k >= 4 only)."""
    return {k: (0.95 if k <= m else below) for k in range(4, 9)}


def test_hops_done_counts_consecutive_ks_on_long_chains():
    assert hops_done(ALL, long_up_to(6)) == 6
    assert hops_done(ALL, long_up_to(8)) == 8
    assert hops_done(ALL, {**long_up_to(8), 5: 0.8}) == 4       # a gap stops the count
    assert hops_done({**ALL, 2: 0.85}, long_up_to(8)) == 1      # short k's on all chains
    assert hops_done({**ALL, 1: 0.5}, long_up_to(8)) == 0
    assert hops_done(ALL, {**long_up_to(8), 7: None}) == 6      # no long chains: not done


def test_reaches():
    assert (relay_reach(5), doubling_reach(5)) == (6, 8)
    assert doubling_reach(3) == 2 and relay_reach(3) == 4


@pytest.mark.parametrize("done, word, reading", [
    ([5, 6, 5], REPRODUCED, "like k"), ([8, 7, 8], CONTRADICTED, "like log k"),
    ([6, 8, 5], NOT_SHOWN, "mixed"), ([3, 8, 8], NOT_TESTABLE, "control failed")])
def test_fixed_depth_words(done, word, reading):
    v = judge_fixed_depth(done, 5)
    assert (v.word, v.reading, v.control, v.relay, v.doubling) == (word, reading, 4, 6, 8)


def test_fixed_depth_needs_three_seeds():
    with pytest.raises(ValueError, match="at least 3 seeds"):
        judge_fixed_depth([8, 8], 5)


def test_fixed_depth_is_read_from_a_record():
    """The record's finals (as induction_fixed_depth stores them) -> hops done per seed."""
    from fake_records import stored_record

    from depthnotes.verdicts.ch3_hops import fixed_depth_from_record

    def run(m):
        final = {f"accuracy_k{k}": 1.0 for k in range(1, 9)}
        final.update({f"long_accuracy_k{k}": a for k, a in long_up_to(m).items()})
        return {"final": final}

    rec = stored_record({"L=5 d=64 lr=0.001": ({"n_layer": 5}, [run(5), run(6), run(8)])})
    v = fixed_depth_from_record(rec)
    assert v.done == (5, 6, 8) and v.word == NOT_SHOWN
    rec = stored_record({"L=5 d=64 lr=0.001": ({"n_layer": 5}, [run(8), run(8), run(7)])})
    assert fixed_depth_from_record(rec).word == CONTRADICTED
