"""Chapter 3's k-hop induction task (``tasks.InductionHops``) and its baselines
(``hops.hop_baselines``): answers checked against a hand-written walk, baselines against brute
force over every sequence of a small alphabet and length, and against simulation."""

import itertools
from collections import Counter, defaultdict

import pytest
import torch

from depthnotes.data import hops as baselines_module
from depthnotes.data.tasks import IGNORE, InductionHops, chasing_depth, doubling_depth


def walk(seq, t, k):
    """The k-hop answer at position t of ``seq`` by the definition, or None."""
    for _ in range(k):
        earlier = [j for j in range(t) if seq[j] == seq[t]]
        if not earlier:
            return None
        t = earlier[-1] + 1
    return seq[t]


def every_sequence(a, length):
    """All sequences of ``length`` symbols from ``a`` with no symbol twice in a row (the
    task draws each with the same probability)."""
    return [list(s) for s in itertools.product(range(a), repeat=length)
            if all(x != y for x, y in zip(s, s[1:]))]


def test_layout_shapes_and_markers():
    task = InductionHops(hops=(1, 2, 4), n_symbols=4, length=10)
    idx, targets = task.batch(8, seed=0)
    assert idx.shape == targets.shape == (8, task.seq_len) == (8, 11)
    assert task.vocab_size == 4 + 3 and task.max_hops == 4
    assert set(idx[:, 0].tolist()) <= {4, 5, 6} and int(idx[:, 1:].max()) < 4
    assert (targets[:, 0] == IGNORE).all()
    assert (idx[:, 1:-1] != idx[:, 2:]).all()                     # no symbol twice in a row
    _, fixed = task.batch(4, seed=0, hops=4)
    assert (task.batch(4, seed=0, hops=4)[0][:, 0] == task.hop_marker(4)).all()
    assert fixed.shape == (4, 11)


def test_targets_follow_k_hops():
    """C5: each target is the symbol k hops on, computed here by the definition."""
    task = InductionHops(hops=(1, 2, 3, 5, 8), length=30)
    idx, targets = task.batch(24, seed=3)
    for b in range(24):
        k = task.hops[int(idx[b, 0]) - task.n_symbols]
        seq = idx[b, 1:].tolist()
        for t in range(30):
            want = walk(seq, t, k)
            assert int(targets[b, t + 1]) == (IGNORE if want is None else want)


def test_every_pointer_points_left():
    """Why doubling is open under the causal mask: one hop always lands strictly earlier."""
    task = InductionHops(length=40)
    s = task.symbols(64, torch.Generator().manual_seed(1))
    one = task.hop_positions(s, 1)
    t = torch.arange(40).expand_as(one)
    assert ((one < t) | (one == -1)).all() and (one >= 0).any()
    assert torch.equal(task.hop_positions(s, 0), t)


def test_seeded_and_mixed():
    task = InductionHops()
    a, b = task.batch(16, seed=5), task.batch(16, seed=5)
    assert torch.equal(a[0], b[0]) and torch.equal(a[1], b[1])
    assert not torch.equal(a[0], task.batch(16, seed=6)[0])
    markers = task.batch(400, seed=2)[0][:, 0]
    assert set(markers.tolist()) == {4, 5, 6, 7}


@pytest.mark.parametrize("kwargs, message", [
    ({"hops": [1, 2]}, "tuple"), ({"hops": (2, 1)}, "increasing"), ({"hops": (0, 1)}, "hops"),
    ({"n_symbols": 2}, "n_symbols"), ({"length": 1}, "length")])
def test_bad_settings_name_the_field(kwargs, message):
    with pytest.raises((TypeError, ValueError), match=message):
        InductionHops(**kwargs)


def test_asking_for_a_k_the_task_lacks_is_a_clear_error():
    with pytest.raises(ValueError, match=r"one of \(1, 2, 4, 8\)"):
        InductionHops().batch(2, seed=0, hops=3)


def test_depth_predictions():
    assert [chasing_depth(k) for k in (1, 2, 4, 8)] == [2, 3, 5, 9]
    assert [doubling_depth(k) for k in (1, 2, 3, 4, 5, 8, 16)] == [2, 3, 4, 4, 5, 5, 6]


def bayes(rows):
    """Best accuracy of any rule from the first item of each (seen, answer) row to the
    second, over these rows (the most common answer for each thing seen)."""
    by_seen = defaultdict(Counter)
    for seen, answer in rows:
        by_seen[seen][answer] += 1
    return sum(c.most_common(1)[0][1] for c in by_seen.values()) / len(rows)


def brute_baselines(seqs, k, window):
    """The rules of ``hop_baselines``, by the definitions, over ``seqs``."""
    rows, windows = [], []
    for seq in seqs:
        for t in range(len(seq)):
            answer = walk(seq, t, k)
            if answer is not None:
                rows.append((tuple(walk(seq, t, j) for j in range(k)), answer))
                windows.append((tuple(seq[t - w] if t >= w else None
                                      for w in range(window + 1)), answer))
    single = [sum(r[0][j] == r[1] for r in rows) / len(rows) for j in range(k)]
    return {"current_symbol": single[0], "best_shorter_hop": max(single),
            "shorter_hops": bayes(rows), "window": bayes(windows)}


@pytest.mark.parametrize("a, length", [(3, 7), (4, 6)])
@pytest.mark.parametrize("k", [1, 2, 3, 4])
@pytest.mark.parametrize("window", [1, 3])
def test_baselines_exact_over_every_sequence(a, length, k, window):
    """Over every sequence (each as likely), the rules found up to a renaming of the symbols
    score what the best rule over the raw symbols scores."""
    seqs = every_sequence(a, length)
    task = InductionHops(hops=(1, 2, 3, 4), n_symbols=a, length=length)
    got = baselines_module.hop_baselines(task, torch.tensor(seqs), k, window=window)
    want = brute_baselines(seqs, k, window)
    assert got == pytest.approx(want, abs=1e-12)
    assert got["current_symbol"] <= got["best_shorter_hop"] <= got["shorter_hops"]


def test_baselines_by_simulation_agree_with_the_exact_ones():
    task = InductionHops(hops=(1, 2, 3), n_symbols=3, length=9)
    exact = baselines_module.hop_baselines(task, torch.tensor(every_sequence(3, 9)), 2)
    sim = baselines_module.induction_baselines(task, 2, n_sequences=20000, seed=1)
    assert sim == pytest.approx(exact, abs=0.01)


def test_one_hop_never_answers_the_current_symbol():
    """No symbol repeats at once, so the symbol after the last match differs from it."""
    b = baselines_module.induction_baselines(InductionHops(), 1, n_sequences=256)
    assert b["current_symbol"] == 0.0
    assert b["shorter_hops"] == pytest.approx(1 / 3, abs=0.01)


def test_the_pages_fast_run_trains_every_arm():
    """Chapter 3's small run (experiments.induction_fast, the record the page reads), in its
    quick form: every arm trains and is scored on both k's, with curves."""
    from depthnotes.experiments.ch3 import induction_fast
    from depthnotes.experiments.spec import run_job

    exp = induction_fast(quick=True)
    results = [run_job(job) for job in exp.jobs()]
    assert [a.info["n_layer"] for a in exp.arms] == [1, 2]
    for r in results:
        assert set(r["final"]) >= {"accuracy_k1", "accuracy_k2"}
        assert len(r["curves"]["accuracy_k2"]) == len(r["curves"]["accuracy_steps"]) == 2


def test_a_fitted_rule_scored_out_of_sample_does_not_flatter_itself():
    """The window rule fitted on a sample scores that sample too well (it has seen its
    answers); fitted on every sequence and scored on every sequence it is exact; fitted on
    one sample and scored on another it stays at or below the exact optimum (up to sampling
    error), while the in-sample score of a small sample sits clearly above it."""
    task = InductionHops(hops=(1, 2, 3, 4), n_symbols=4, length=9)
    every = torch.tensor(every_sequence(4, 9))
    exact = baselines_module.hop_baselines(task, every, 4, window=6)["window"]
    assert baselines_module.hop_baselines(task, every, 4, window=6, fit_symbols=every)[
        "window"] == pytest.approx(exact, abs=1e-12)
    g = torch.Generator().manual_seed(0)
    small, other = task.symbols(300, g), task.symbols(20000, g)
    inside = baselines_module.hop_baselines(task, small, 4, window=6)["window"]
    outside = baselines_module.hop_baselines(task, other, 4, window=6,
                                             fit_symbols=small)["window"]
    assert inside > exact                          # the in-sample score flatters itself
    assert outside < exact + 0.01                  # out of sample it does not
    assert outside < inside - 0.05


def test_one_walk_gives_every_shorter_hops_answers():
    """``hops._answers_up_to`` (the baselines' one walk along each chain) gives what
    ``answers`` gives for every j <= k, walked from the start each time."""
    from depthnotes.data.hops import _answers_up_to

    task = InductionHops(hops=(1, 2, 4, 8), length=40)
    s = task.symbols(64, torch.Generator().manual_seed(5))
    walked = _answers_up_to(task, s, 8)
    assert len(walked) == 9
    for j, a in enumerate(walked):
        assert torch.equal(a, task.answers(s, j)), j
