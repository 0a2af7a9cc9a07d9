"""The exercise checks (``depthnotes.course.check.check`` with ``depthnotes.course.answers``).

Every exercise is checked against its solution and against plausible wrong answers, each of
which must fail with a useful hint; no expected answer may appear in a cell the site or the
handout shows, in a hint, or in the repr of the objects that hold it.
"""

from __future__ import annotations

import ast
import math
import random
import re
from pathlib import Path
from types import SimpleNamespace

import nbformat
import numpy as np
import pytest
import torch

from depthnotes import ModelConfig, Transformer, count_params
from depthnotes.course.check import EXERCISES
from depthnotes.course.check import (Choice, ExerciseError, Function, NotAnswered, Number,
                                     OpenExperiment, Predict, check, describe_check, predict)
from depthnotes.core.fitting import LinearFit
from depthnotes.experiments.ch3 import INDUCTION_TASK
from depthnotes.measure.constructions import score
from depthnotes.bench.latency import CacheSize, LatencyResult, Timing
from depthnotes.training.runtime import MachineInfo
from depthnotes.tools.book import toc_notebooks
from depthnotes.tools.student import BEGIN, find_exercises
from fake_records import FakeRecord, info

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = [p for p in toc_notebooks(ROOT) if p.parent.name == "notebooks"]


# ---------------------------------------------------------------- the chapters' values, made up

def _model(**kw) -> Transformer:
    """A small model for the checks, which read its config and parameter counts. Built on the
    CPU: on the meta device the same models took several seconds of every test worker's
    collection (the meta device initialises weights through PyTorch's Python reference
    kernels), and these are small."""
    return Transformer(ModelConfig(**{"d_model": 64, "n_head": 2, "d_ff": 128,
                                      "vocab_size": 50, "context": 32, **kw}))


def _timing(L: int, ms: float, d: int = 256, weight_bytes: int = 10**12,
            prompt: int = 8) -> LatencyResult:
    """A timing whose weights (1 TB by default) are memory-resident on any machine."""
    t = Timing.of([ms])
    return LatencyResult(L, d, 4, 256, 0, weight_bytes, 1, prompt, 12, t, t,
                         MachineInfo("cpu", 1, torch.__version__, "3.11", None))


def _non_embedding(model) -> int:
    return sum(p.numel() for p in model.parameters()) - model.wte.weight.numel() \
        - model.wpe.weight.numel()


FIT = SimpleNamespace(intercept=0.02, slope=0.003)
LFIT = LinearFit(slope=0.4, intercept=1.0, r2=1.0)
LFIT_BIG = LinearFit(slope=0.4, intercept=2.5, r2=1.0)   # a big head's line: head 2.0 + 0.5
TRAIN_IDS = torch.tensor([0, 0, 1, 2])
CORPUS = SimpleNamespace(train=TRAIN_IDS, vocab_size=5)
BASELINE = -(0.5 * math.log(0.5) + 2 * 0.25 * math.log(0.25))
GRID = {("pre", 1e-3, 0): "trained", ("pre", 1e-2, 0): "trained",
        ("post", 1e-3, 0): "trained", ("post", 1e-2, 0): "stalled"}
SWEEP = [SimpleNamespace(budget=P, n_layer=L, val_loss=v) for P, L, v in
         ((25_000, 1, 2.31), (25_000, 2, 2.28), (25_000, 4, 2.35), (100_000, 1, 2.10))]
DROP = [0.0, 0.02, 0.05, 0.08, 0.3, 0.5, 0.7, 0.9]
HEAD = SimpleNamespace(median=2.0)
SMALL = _model(n_layer=4, d_model=16, d_ff=64)
WIDE = _model(n_layer=2, d_model=128, d_ff=512)
PAIR = (_model(n_layer=1, d_model=16), _model(n_layer=1, d_model=16, tie_embeddings=False))
POST_DEEP, POST_96 = _model(n_layer=120, norm="post"), _model(n_layer=96, norm="post")
SCALED = _model(n_layer=150, branch_scale="1/sqrt(2L)")
EIGHT = _model(n_layer=8)
FIVE, THREE = _model(n_layer=5), _model(n_layer=3)
POST_XAVIER = _model(n_layer=24, norm="post", init="xavier")
LNS_PAIR = (_model(n_layer=1), _model(n_layer=1, ln_scaling="1/sqrt(l)"))
LOOPED = _model(n_layer=12, n_unique_blocks=3)
LOOPED_N = sum(p.numel() for p in LOOPED.parameters())
DEEP_NARROW = ModelConfig(n_layer=48, d_model=64, n_head=2, vocab_size=96, context=4096)
CROSSING = -(-count_params(DEEP_NARROW).total // (2 * 48 * 64))


def _hop(seq, t):
    earlier = [j for j in range(t) if seq[j] == seq[t]]
    return earlier[-1] + 1 if earlier else -1


def _first_hop(seq, t):
    earlier = [j for j in range(t) if seq[j] == seq[t]]
    return earlier[0] + 1 if earlier else -1


def _hop_answer(seq, t, k):
    for _ in range(k):
        t = _hop(seq, t)
        if t < 0:
            return -1
    return seq[t]
rng = random.Random(0)
HITS = []
for _ in range(2000):
    f = rng.sample(range(8), 8)
    x = rng.randrange(8)
    HITS.append(f[f[x]] in (x, f[x], f.index(x)))


def _block_params(d, m=4):
    return 4 * d * d + 4 * d + 2 * d * m * d + m * d + d + 4 * d


def _chase(f, x, k):
    for _ in range(k):
        x = f[x]
    return x


def _entropy(ids, V):
    p = torch.bincount(ids, minlength=V).double()
    p = p[p > 0] / p.sum()
    return float(-(p * p.log()).sum())


# A k-hop sweep in which k = 3 is solved at threshold 0.75 by L = 2 for seed 0 only.
KHOP = FakeRecord({
    "L=1": (info(1, 64, 1e-3, "fixed width"), {1: [.3, .3, .3], 2: [.5, .5, .5],
                                               4: [.3, .3, .3]}),
    "L=4": (info(4, 64, 1e-3, "fixed width"), {1: [1, 1, 1], 2: [1, 1, 1], 4: [.9, .5, .8]}),
    "L=5": (info(5, 64, 1e-3, "fixed width"), {1: [1, 1, 1], 2: [1, 1, 1], 4: [.9, .95, .6]}),
})

# Exercise 3.7: a five-block model of chapter 3's task scored at k = 2 without its block 1.
CUT = _model(n_layer=5, vocab_size=INDUCTION_TASK.vocab_size, context=INDUCTION_TASK.seq_len)
CUT_SCORE = score(CUT, INDUCTION_TASK, 2, skip=(1,))


def _depths_in_range(P, lo, hi, width=round, ratio=lambda d, L: d / L, max_depth=None):
    """Exercise 6.1 written out here (not read from its answer): how many depths L have a
    rounded width d = sqrt(P / (12 L)) with lo <= d/L <= hi. Every depth up to ``beyond`` is
    tried, not only a run: past it sqrt(P / (12 L)) / L is at most lo/2, so the rounded d/L,
    at most 1/(2L) more, is under lo (for lo >= 1). ``width``, ``ratio`` and ``max_depth``
    make the wrong answers below."""
    beyond = int((P / 12) ** (1 / 3) * (lo / 2) ** (-2 / 3)) + 2
    depths = range(1, min(beyond, max_depth or beyond) + 1)
    widths = ((L, width(math.sqrt(P / (12 * L)))) for L in depths)
    return sum(lo <= ratio(d, L) <= hi for L, d in widths if d)


def _kv_mb(n_layer: int, d_model: int, tokens: int = 1024) -> float:
    """MB (10^6 bytes) of a float32 KV cache, batch 1: a key and a value of d_model numbers per
    layer and token (exercise 2.2's shapes, written out here rather than read from its answer)."""
    return 2 * n_layer * d_model * tokens * 4 / 1e6


# id: (the solution, the values the check cell passes, [plausible wrong answers])
# (for an experiment, a wrong "answer" may be a dict of keyword arguments to change)
CASES = {
    "1.1": (_block_params, {}, [lambda d, m=4: 12 * d * d, lambda d, m=4: 12 * d * d + 13 * d,
                                lambda d, m=4: None, "12 d^2"]),
    "1.2": (78, {}, [81, 80, 79, 78.5, "78"]),
    "1.3": (8 / 3, {}, [4, 8, 12.0, 2]),
    "1.4": ("width", {}, ["depth", "wider", 1]),
    "1.6": ((_model(n_layer=2, d_model=32), _model(n_layer=2, d_model=64)),
            {"prediction": "less than 4x"},
            [{"prediction": "exactly 4x"}, {"prediction": "4"},
             {"answer": (_model(n_layer=2, d_model=64), _model(n_layer=2, d_model=32))},
             {"answer": (_model(n_layer=2, d_model=32), _model(n_layer=3, d_model=64))}]),
    "1.5": (_non_embedding(SMALL), {"model": SMALL, "conclusion": False},
            [{"conclusion": True}, {"answer": 12 * 4 * 16 ** 2},
             {"model": WIDE, "answer": _non_embedding(WIDE), "conclusion": True},
             {"conclusion": "no"}]),
    "2.1": (None, {}, [4608.0, 3351.0, 6702.04 * 2, 6700.0, 6.7e3]),
    "2.2": (_kv_mb(75, 768) - _kv_mb(12, 1920), {},
            [0, _kv_mb(75, 768), _kv_mb(12, 1920), round(_kv_mb(75, 768) - _kv_mb(12, 1920)),
             (_kv_mb(75, 768) - _kv_mb(12, 1920)) * 1e6 / 2 ** 20,
             f"{_kv_mb(75, 768) - _kv_mb(12, 1920):.1f}"]),
    "2.5": (lambda L, d, mem: mem // (2 * L * d * 4), {},
            [lambda L, d, mem: mem // (L * d * 4), lambda L, d, mem: mem / (8 * L * d),
             lambda L, d, mem: 7]),
    "2.6": ({1024: 2.9e8, 2048: 3.3e8}, {"prediction": "under 1.25x"},
            [{"prediction": "over 1.75x"}, {"answer": {1024: 2.9e8}},
             {"answer": {1024: 2.9e8, 2048: 10.0}}, {"prediction": "2x"}]),
    "2.7": (CROSSING, {"config": DEEP_NARROW, "conclusion": True},
            [{"conclusion": False}, {"answer": CROSSING + 1}, {"config": "gpt2-small"}]),
    "2.3": (None, {}, [124_439_808, 124_439_808 + 50257 * 768 + 50257, 2 * 124_439_808]),
    "2.4": (800, {"models": PAIR, "conclusion": True},
            [{"conclusion": False}, {"models": PAIR[::-1]}, {"answer": 816},
             {"models": PAIR[0]}]),
    "3.1": (_hop, {}, [_first_hop, lambda s, t: t - 1, lambda s, t: 0]),
    "3.2": (_hop_answer, {}, [lambda s, t, k: _hop_answer(s, t, 1), lambda s, t, k: -1,
                              lambda s, t, k: s[t]]),
    "3.3": (9, {}, [8, 7, 101, 10]),
    "3.4": ((FIVE, 0.27), {"prediction": "0.1 to 0.9"},
            [{"prediction": "over 0.9"}, {"prediction": "half"}, {"answer": (EIGHT, 0.27)},
             {"answer": (FIVE, 27)}]),
    "3.5": ((THREE, 1.0), {"k": 2, "conclusion": True},
            [{"conclusion": False}, {"k": 3}, {"k": 1}, {"answer": (THREE, "1.0")}]),
    "3.7": ((1, CUT_SCORE), {"model": CUT, "task": INDUCTION_TASK, "k": 2,
                             "conclusion": CUT_SCORE >= 0.9},
            [{"conclusion": CUT_SCORE < 0.9}, {"k": 8}, {"answer": (5, CUT_SCORE)},
             {"answer": (2, CUT_SCORE + 0.01)}, {"answer": (1, 1)}, {"task": "task"},
             {"answer": (CUT, CUT_SCORE)}]),
    "4.1": (lambda v0, s, L1, L2: (v0 + L2 * s) / (v0 + L1 * s), {},
            [lambda v0, s, L1, L2: L2 / L1,
             lambda v0, s, L1, L2: math.sqrt((v0 + L2 * s) / (v0 + L1 * s)),
             lambda v0, s, L1, L2: (v0 + L1 * s) / (v0 + L2 * s)]),
    "4.2": (_entropy, {"corpus": CORPUS, "baseline": BASELINE},
            [lambda ids, V: _entropy(ids, V) / math.log(2), lambda ids, V: math.log(V),
             lambda ids, V: 1 / 0]),
    "4.3": ("stalled", {}, ["trained", "slow", "diverged", "fine"]),
    "4.4": (np.array([5.0] + [1.0] * 119), {"model": POST_DEEP,
                                            "prediction": "over 3x the median"},
            [{"prediction": "3x the median or less"}, {"model": POST_96, "answer": np.ones(96)},
             {"answer": np.ones(50)}, {"model": _model(n_layer=120)}, {"prediction": True}]),
    "4.5": (np.array([1.0] * 24), {"model": POST_XAVIER, "conclusion": False},
            [{"conclusion": True}, {"model": _model(n_layer=24, norm="post", init="gpt2")},
             {"answer": np.ones(23)}, {"model": _model(n_layer=12, norm="post", init="xavier"),
                                       "answer": np.ones(12)}]),
    # beta = (8L)^(-1/4) on W_V and W_O, alpha = (2L)^(1/4) on the residual, written out
    "5.1": (lambda L: (8 * L) ** -0.5 * (2 * L) ** -0.25, {},
            [lambda L: (8 * L) ** -0.25 * (2 * L) ** -0.25, lambda L: (8 * L) ** -0.5,
             lambda L: (8 * L) ** -0.5 * (2 * L) ** 0.25, lambda L: (2 * L) ** -0.25,
             lambda L: (8 * L) ** 0.5 * (2 * L) ** 0.25, lambda L: (2 * L) ** -0.5,
             lambda L: "beta**2 / alpha"]),
    "5.2": (lambda v0, s, L: v0 + s, {},
            [lambda v0, s, L: v0 + 2 * L * s, lambda v0, s, L: v0 + 2 * L * s / math.sqrt(2 * L),
             lambda v0, s, L: s]),
    "5.4": (np.array([1.0] * 24 + [30.0]), {"model": _model(n_layer=24), "conclusion": False},
            [{"conclusion": True}, {"answer": np.ones(24)}, {"model": _model(n_layer=12),
                                                             "answer": np.ones(13)}]),
    "5.3": (np.array([1.0] * 150 + [1.4]), {"model": SCALED,
                                            "prediction": "under 2x the embedding's"},
            [{"prediction": "2x or more"}, {"answer": np.ones(150)}, {"model": _model(n_layer=150)},
             {"model": _model(n_layer=100, branch_scale="1/sqrt(2L)"), "answer": np.ones(101)}]),
    "6.1": (_depths_in_range, {},
            [lambda P, lo, hi: _depths_in_range(12 * P, lo, hi),             # no 12
             lambda P, lo, hi: _depths_in_range(P, lo, hi, width=math.floor),
             lambda P, lo, hi: _depths_in_range(P, lo, hi, ratio=lambda d, L: L / d),
             lambda P, lo, hi: _depths_in_range(P, lo, hi, width=float),     # unrounded
             lambda P, lo, hi: _depths_in_range(P, lo, hi, max_depth=100),   # too few depths
             lambda P, lo, hi: 0, lambda P, lo, hi: _depths_in_range(P, lo, hi) + 0.5]),
    "6.2": (lambda losses: 0 < losses.index(min(losses)) < len(losses) - 1, {},
            [lambda losses: losses.index(min(losses)) != 0, lambda losses: True,
             lambda losses: min(losses)]),
    "6.3": (lambda cost, limit: max(n for n, c in enumerate(cost) if c <= limit), {},
            [lambda cost, limit: sum(c <= limit for c in cost),
             lambda cost, limit: len(cost) - 1, lambda cost, limit: 2.5]),
    "6.5": ({"first": 0.5, "last": 0.02}, {"prediction": "the first block"},
            [{"prediction": "the last block"}, {"answer": {"first": 0.5}},
             {"answer": {"first": 1, "last": 0}}]),
    "6.4": (np.array([2.0, 2.05, 2.08, 2.3, 2.4, 2.5, 2.6, 2.7]),
            {"model": EIGHT, "droppable": 2, "conclusion": True},
            [{"conclusion": False}, {"answer": np.ones(5)}, {"model": "model"}]),
    "7.1": (lambda L, d, V: 4 * (L * (12 * d * d + 13 * d) + 4 * d + V * d), {},
            [lambda L, d, V: L * (12 * d * d + 13 * d) + 4 * d + V * d,
             lambda L, d, V: 4 * (L * (12 * d * d + 13 * d) + 4 * d + 2 * V * d - d),
             lambda L, d, V: 4 * L * 12 * d * d]),
    "7.2": (lambda L, d, t, gbs: 4 * L * (12 * d * d + 2 * d * t) / gbs / 1e6, {},
            [lambda L, d, t, gbs: 4 * L * 12 * d * d / gbs / 1e6,            # no cache
             lambda L, d, t, gbs: 4 * L * (12 * d * d + d * t) / gbs / 1e6,  # keys only
             lambda L, d, t, gbs: 4 * L * (12 * d * d + 2 * d * t) / gbs / 1e9,   # s
             lambda L, d, t, gbs: 4 * L * (12 * d * d + 2 * d * t) / gbs / 2**30 * 1e3,
             lambda L, d, t, gbs: 4 * (12 * L * d * d + 2 * d * t) / gbs / 1e6,  # one cache
             lambda L, d, t, gbs: 4 * L * (12 * d * d + 2 * d * (t + 1)) / gbs / 1e6,
             lambda L, d, t, gbs: 40.0]),
    "7.3": (lambda h, fit, L: h / (fit.intercept + fit.slope * L), {},
            [lambda h, fit, L: h / (h + fit.predict(L)), lambda h, fit, L: h / (L * fit.slope),
             lambda h, fit, L: 0.5]),
    # (2.2 - 1.0) / (24 - 12) = 0.1 ms per block < 0.5 * 0.4: conclusion True
    "7.4": ((_timing(12, 1.0), _timing(24, 2.2)),
            {"fit": LFIT, "cache": CacheSize(32 * 2**20, 3, "sysfs"), "conclusion": True},
            [{"conclusion": False}, {"answer": (_timing(24, 2.2), _timing(12, 1.0))},
             {"answer": (_timing(12, 1.0, 512), _timing(24, 2.2, 512))},
             {"answer": (_timing(12, 1.0, weight_bytes=0), _timing(24, 2.2))},
             {"answer": _timing(12, 1.0)}]),
    "7.5": ((_timing(12, 1.0), _timing(12, 1.1, prompt=512)),
            {"prediction": "within 25 % of the short prompt"},
            [{"prediction": "more than 25 % slower"},
             {"answer": (_timing(12, 1.0), _timing(12, 1.1, prompt=16))},
             {"answer": (_timing(12, 1.0), _timing(24, 1.1, prompt=512))},
             {"answer": _timing(12, 1.0)}]),
    "8.3": ((np.array([1.0, 5.0]), np.array([1.0, 1.5])), {"models": LNS_PAIR,
                                                          "prediction": "under half"},
            [{"prediction": "half or more"}, {"models": LNS_PAIR[::-1]},
             {"answer": (np.ones(2), np.ones(3))}]),
    "8.4": ((LOOPED_N, 12), {"model": LOOPED, "conclusion": True},
            [{"conclusion": False}, {"answer": (LOOPED_N, 3)}, {"answer": (1, 12)}]),
    "8.1": (None, {}, [12 * 12 * 128 ** 2, 3 * 12 * 128 ** 2, "3 blocks"]),
    "8.2": (lambda v0, s, L: v0 + s * sum(1 / l for l in range(1, L + 1)), {},
            [lambda v0, s, L: v0 + s * L,
             lambda v0, s, L: v0 + s * sum(l ** -0.5 for l in range(1, L + 1)),
             lambda v0, s, L: v0]),
}


_PLAIN = dict(EXERCISES)                 # the instructor's specs (plain answers)


@pytest.fixture(scope="session")
def sealed_specs():
    """The student edition's specs: the plain answers sealed to JSON and read back, as the
    student edition's ``sealed.json`` holds them."""
    import json

    from depthnotes.course import sealed
    from depthnotes.course.answers import ANSWERS

    table = json.loads(json.dumps(sealed.seal_all(ANSWERS, rounds=500)))   # fewer rounds: quick
    return {k: sealed.unseal(v) for k, v in table["exercises"].items()}


@pytest.fixture(params=["instructor", "sealed"], autouse=True)
def edition(request, monkeypatch):
    """Every check test runs twice: on the instructor's plain answers and on the student
    edition's sealed table (the same verdicts and hints from both)."""
    if request.param == "sealed" and "no_edition" in request.keywords:
        pytest.skip("a test of the exercises themselves: once is enough")
    if request.param == "sealed":
        from depthnotes.course import check as check_module

        specs = request.getfixturevalue("sealed_specs")
        monkeypatch.setitem(check_module.__dict__, "EXERCISES",
                            {**check_module.EXERCISES, **specs})
    return request.param


def _solution(exercise):
    """The solution's answer; None in CASES means: the spec's own expected value (computed
    from the package, e.g. count_params), as an honest student would compute it."""
    answer, given, _ = CASES[exercise]
    return _PLAIN[exercise].expected() if answer is None else answer


@pytest.fixture(autouse=True)
def predictions(monkeypatch):
    """A fresh kernel's record of predictions, with each predict-then-run exercise's
    prediction recorded as its solution's cell does, before the run."""
    from depthnotes.course import kinds

    monkeypatch.setattr(kinds, "PREDICTIONS", {})
    for ex, (_, given, _) in CASES.items():
        if isinstance(EXERCISES[ex], Predict):
            kinds.PREDICTIONS[ex] = given["prediction"]
    return kinds.PREDICTIONS


def _call(exercise, wrong):
    answer, given, _ = CASES[exercise]
    answer = _solution(exercise)
    if isinstance(EXERCISES[exercise], (OpenExperiment, Predict)) and isinstance(wrong, dict):
        given = {**given, **wrong}
        answer = given.pop("answer", answer)
    else:
        answer = wrong
    check(exercise, answer, **given)


def test_every_exercise_has_cases():
    assert set(CASES) == set(EXERCISES)


@pytest.mark.parametrize("exercise", list(CASES))
def test_the_solution_passes(exercise, capsys):
    _, given, _ = CASES[exercise]
    check(exercise, _solution(exercise), **given)
    assert f"Exercise {exercise}: correct." in capsys.readouterr().out


@pytest.mark.parametrize("exercise", list(CASES))
def test_wrong_answers_get_a_useful_hint(exercise):
    wrongs = CASES[exercise][2]
    assert len(wrongs) >= 2, "at least two plausible wrong answers per exercise"
    for wrong in wrongs:
        with pytest.raises(ExerciseError) as e:
            _call(exercise, wrong)
        what, _, hint = str(e.value).partition("\nHint: ")
        assert what.startswith(f"Exercise {exercise}: ") and len(hint) >= 30, str(e.value)


@pytest.mark.parametrize("exercise", list(CASES))
def test_each_known_mistake_gets_its_own_hint(exercise):
    spec = _PLAIN[exercise]
    _, given, _ = CASES[exercise]
    for m in spec.mistakes:
        wrong = m.wrong if isinstance(spec, Function) else m.wrong()
        with pytest.raises(ExerciseError, match=re.escape(m.hint)):
            check(exercise, wrong, **given)


@pytest.mark.parametrize("exercise", list(CASES))
def test_a_placeholder_is_not_answered_yet(exercise, capsys, monkeypatch):
    """A student's *Run all* goes on past an unanswered exercise (it prints so, with the
    hint); while nbgrader grades, the same cell fails, so it scores nothing."""
    spec = EXERCISES[exercise]
    _, given, _ = CASES[exercise]
    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)
    assert check(exercise, ..., **given) is None
    printed = capsys.readouterr().out
    assert "not answered yet" in printed and spec.idea in printed
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    with pytest.raises(NotAnswered, match="not answered yet") as e:
        check(exercise, ..., **given)
    assert spec.idea in str(e.value)
    for name in getattr(spec, "answers", ()):           # an experiment's other blanks
        with pytest.raises(NotAnswered, match="not answered yet"):
            check(exercise, _solution(exercise), **{**given, name: ...})


def test_a_function_left_as_its_stub_is_not_answered_yet(capsys, monkeypatch):
    def block_params(d, ffn_mult=4):
        raise NotImplementedError("replace this line with your code")

    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)
    check("1.1", block_params)
    assert "not answered yet" in capsys.readouterr().out
    monkeypatch.setenv("NBGRADER_EXECUTION", "validate")
    with pytest.raises(NotAnswered, match="not answered yet"):
        check("1.1", block_params)


def test_a_wrong_answer_shows_its_message_without_a_traceback():
    with pytest.raises(ExerciseError) as e:
        check("1.3", 1.0)
    lines = e.value._render_traceback_()          # what IPython shows instead of a traceback
    assert lines[0].startswith("ExerciseError: Exercise 1.3:") and lines[-1].startswith("Hint:")
    assert not any("Traceback" in line or "File " in line for line in lines)


def test_a_wrong_function_names_a_failed_case_and_what_it_returned():
    """Which case failed, the student's value and the hint: the call of the first failed case
    (a case from the chapter's values by their names) and what the function returned."""
    def is_bracketed(losses):
        return True

    with pytest.raises(ExerciseError) as e:
        check("6.2", is_bracketed)
    what, _, hint = str(e.value).partition("\nHint: ")
    assert re.fullmatch(r"Exercise 6\.2: it returns a wrong value for \d of 6 test cases: "
                        r"is_bracketed\(\[[\d., ]+\]\) returned True\.", what), what
    with pytest.raises(ExerciseError, match=r"<lambda>\(\[.*\], [\d.]+\) returned 7\."):
        check("6.3", lambda cost, limit: 7)
    with pytest.raises(ExerciseError) as e:      # right on the hidden cases, wrong on the chapter's
        check("4.2", _entropy, corpus=CORPUS, baseline=BASELINE + 1)
    assert "_entropy(corpus.train, corpus.vocab_size) returned" in str(e.value)


def test_the_check_names_what_it_needs():
    with pytest.raises(TypeError, match="corpus"):
        check("4.2", lambda ids, V: 0.0)
    with pytest.raises(TypeError, match="unexpected"):
        check("1.2", 78, fit=FIT)
    with pytest.raises(KeyError, match="no exercise '9.9'"):
        check("9.9", 1)
    assert describe_check("1.2") == "a whole number, exactly"


# ---------------------------------------------------------------- nothing gives the answer away

def _fixed_answers():
    """(id, expected) for every exercise whose answer does not depend on the chapter's run."""
    out = []
    for ex, spec in EXERCISES.items():
        if spec.needs or not isinstance(spec, (Number, Choice)):
            continue
        out.append((ex, spec.expected()))
    return out


def _numbers_in(text: str) -> list[float]:
    """Every number written in ``text`` (code or prose; thousands separators allowed)."""
    found = []
    for m in re.finditer(r"(?<![\w.])\d[\d,_]*(\.\d+)?(e-?\d+)?(?![\w])", text):
        try:
            found.append(float(m.group(0).replace(",", "").replace("_", "")))
        except ValueError:
            pass
    return found


def _shown_cells(path: Path):
    """(index, cell) of every cell whose source the site or the handout shows: all but the
    solution cells (folded on the site, dropped from the handout)."""
    nb = nbformat.read(path, as_version=4)
    return [(i, c) for i, c in enumerate(nb.cells)
            if not (c.cell_type == "code" and BEGIN in c.source)]


#: Numbers in a chapter that equal an answer by coincidence, not as its answer: the exact
#: source text, removed before the search (each one is read and justified here).
COINCIDENCES = {
    "3.4": ["bbox_to_anchor=(1.0, 0.5)",       # where a figure's legend sits
            "ylim=(0.5, 9.5)", "deep + 0.5",   # half a block of margin in a figure
            'rules[8]["window"] < 0.5',        # the text's "one half", of other rules
            "0.5 < bars[k]"],
}


#: Choices whose options are the chapter's own vocabulary (4.3: trained, slow, stalled,
#: diverged are chapter 4's outcome words, in its code and prose throughout): a quoted option
#: there says nothing about which one answers the exercise.
VOCABULARY_CHOICES = {"4.3"}


def _leaks(text: str, expected) -> bool:
    if isinstance(expected, str):
        return bool(re.search(rf"""["']{re.escape(expected)}["']""", text))
    value = float(expected)
    if value.is_integer() and abs(value) < 20:
        return repr(value) in text        # "5.0"; a bare 5 is every chapter's small number
    written = _numbers_in(text) + [int(a) / int(b) for a, b in
                                   re.findall(r"(?<![\w.])(\d+)\s*/\s*(\d+)(?![\w.])", text)
                                   if int(b)]
    tol = 1e-9 if value.is_integer() else 5e-3       # 0.17 or 0.167 for 1/6
    return any(math.isclose(v, value, rel_tol=tol) for v in written)


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_no_shown_cell_holds_an_expected_answer(path):
    """No fixed answer of a chapter's exercises is written anywhere in that chapter that the
    student reads: as a number (any of its usual forms, or a fraction such as 1/6; whole
    numbers from 20 up, and any non-integral value) or, for a choice, as a quoted word in code. Small whole numbers (5, 12, 16) are also every chapter's
    widths and counts, so for those the check cells are searched, which hold no literal at all
    (see the next test)."""
    problems = []
    chapter = str(int(path.name[:2]))
    for i, cell in _shown_cells(path):
        for ex, expected in _fixed_answers():
            if ex.split(".")[0] != chapter or ex in VOCABULARY_CHOICES:
                continue
            text = cell.source
            if isinstance(expected, str) and cell.cell_type == "markdown":
                # a choice's options are listed in its task: all of them, equally often
                options = EXERCISES[ex].options
                if len({text.count(f'"{o}"') for o in options}) > 1:
                    problems.append(f"cell {i}: singles out {expected!r} of exercise {ex}")
                continue
            for snippet in COINCIDENCES.get(ex, []):
                text = text.replace(snippet, "")
            if _leaks(text, expected):
                problems.append(f"cell {i}: shows the answer to exercise {ex}: {text[:300]!r}")
    assert not problems, f"{path.name}:\n" + "\n".join(problems)


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_check_cells_pass_names_only(path):
    """A check cell calls check("n.m", answer, name=value...) with names from the chapter:
    no literal (a number, a list of cases, a hint) after the exercise id."""
    nb = nbformat.read(path, as_version=4)
    calls = 0
    for ex in find_exercises(nb):
        tree = ast.parse(nb.cells[ex.check].source)
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "check":
                calls += 1
                exercise, *rest = node.args
                assert isinstance(exercise, ast.Constant) and exercise.value in EXERCISES
                for arg in rest + [k.value for k in node.keywords]:
                    assert not any(isinstance(n, ast.Constant) for n in ast.walk(arg)), \
                        f"{path.name}, exercise {exercise.value}: a literal in the check call"
    assert calls >= len(find_exercises(nb))


def test_hints_and_reprs_do_not_state_the_answer():
    for ex, expected in _fixed_answers():
        spec = EXERCISES[ex]
        assert str(expected) not in repr(spec) and "expected" not in repr(spec)
        for hint in [spec.idea] + [m.hint for m in spec.mistakes]:
            assert not _leaks(hint, expected), f"exercise {ex}: a hint states the answer"
    for spec in EXERCISES.values():
        assert repr(spec) == f"<{type(spec).__name__} exercise>"
        assert all(repr(m) == "Mistake(...)" for m in spec.mistakes)


# ---------------------------------------------------------------- precision and sealing

def _fewer_digits(value: float, digits: int) -> float:
    return float(f"{value:.{digits - 1}e}")


@pytest.mark.parametrize("exercise", [k for k, v in _PLAIN.items()
                                      if isinstance(v, Number) and not v.integer])
def test_a_near_miss_at_too_few_digits_says_give_more_digits(exercise):
    spec = _PLAIN[exercise]
    value = spec.expected()
    check(exercise, value)                                   # the computed value passes
    short = _fewer_digits(value, spec.digits - 1)
    if short == _fewer_digits(value, spec.digits):
        pytest.skip("the answer has no more digits to give")
    with pytest.raises(ExerciseError, match="give .* significant digits"):
        check(exercise, short)
    far = _fewer_digits(value * 1.7, spec.digits - 1)      # short and wrong: the idea's hint
    with pytest.raises(ExerciseError) as e:
        check(exercise, far)
    assert "significant digits" not in str(e.value)


@pytest.mark.no_edition
def test_the_sealed_table_holds_no_answer_in_the_clear(sealed_specs):
    """What the student edition stores: hashes, hints and the hidden cases' arguments; no
    accepted or mistaken value, at the precision its check compares."""
    import json

    from depthnotes.course import sealed
    from depthnotes.course.answers import ANSWERS
    table_json = sealed.seal_all(ANSWERS, rounds=500)
    text = json.dumps(table_json)

    def without_hashes(t):
        return re.sub(r'"[0-9a-f]{16,32}"', '""', t)

    def found(form, where):
        if form in ("True", "False"):      # a yes/no output: two values, nothing to hide
            return None
        written = re.escape(form.strip("'"))
        return re.search(rf"(?<![\w.]){written}(?![\w.])", where)

    clear = without_hashes(text)
    for ex, spec in ANSWERS.items():
        if isinstance(spec, Choice):
            continue                       # the options are listed, all of them
        table = spec.table()
        forms = set(table.accept) | {f for m in table.mistakes for f in
                                     (m if isinstance(m, frozenset) else set().union(*m))}
        for form in forms:                 # an answer, or a mistake: nowhere in the table
            assert len(form.strip("'")) < 3 or not found(form, clear), \
                f"exercise {ex}: {form!r} in the sealed table"
        # a hidden case's output: not in its exercise's entry, beyond the cases' questions
        entry = dict(table_json["exercises"][ex])
        entry["cases"] = [{**c, "args": None} for c in entry.get("cases", [])]
        own = without_hashes(json.dumps(entry))
        for _, case in table.cases:
            for form in case:
                assert len(form.strip("'")) < 3 or not found(form, own), \
                    f"exercise {ex}: a hidden case's output {form!r} in the sealed table"
    assert sealed.unseal(json.loads(text)["exercises"]["1.2"]).describe() == \
        _PLAIN["1.2"].describe()


@pytest.mark.no_edition
def test_a_prediction_is_recorded_once_and_read_by_the_check(capsys, predictions):
    predictions.clear()
    models = CASES["1.6"][0]
    with pytest.raises(ExerciseError, match="record your prediction"):
        check("1.6", models, prediction="less than 4x")        # no prediction recorded
    assert predict("1.6", ...) is ... and "not answered yet" in capsys.readouterr().out
    assert predict("1.6", "exactly 4x") == "exactly 4x"
    assert predict("1.6", "less than 4x") == "exactly 4x"      # the first one stands
    assert "it stands" in capsys.readouterr().out
    with pytest.raises(ExerciseError, match="cannot change"):
        check("1.6", models, prediction="less than 4x")
    check("1.6", models, prediction="exactly 4x")              # wrong, but honest: passes
    assert "not what you predicted" in capsys.readouterr().out
    with pytest.raises(ExerciseError, match="predict one of"):
        predict("1.6", "4x")
    with pytest.raises(TypeError, match="not a predict-then-run"):
        predict("1.2", 78)


_CALLED_ID = re.compile(r"(?<![.\w])(?:check|predict)\(\s*[\"']([^\"']+)[\"']")
_TASK_ID = re.compile(r"\*\*Exercise (\d+\.\d+\w?)\.\*\*")


@pytest.mark.no_edition
@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_exercises_are_numbered_in_order_without_gaps(path):
    """A chapter's tasks are exercises N.1, N.2, ... in the order the page shows them, and
    every check and predict cell names the exercise of the nearest task above it."""
    from depthnotes.tools.summaries import chapter_exercises

    nb = nbformat.read(path, as_version=4)
    chapter = int(path.name[:2])
    ids = [e["id"] for e in chapter_exercises(nb)]
    assert ids == [f"{chapter}.{n}" for n in range(1, len(ids) + 1)], ids
    task = None
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "markdown":
            task = (_TASK_ID.findall(cell.source) or [task])[-1]
        elif cell.cell_type == "code":
            for called in _CALLED_ID.findall(cell.source):
                assert called == task, f"cell {i} checks {called} under the task of {task}"


# ---------------------------------------------------------------- the instructor's notes

def _chapter(n: int) -> Path:
    [path] = [p for p in CHAPTERS if p.name.startswith(f"{n:02d}_")]
    return path


def _solution_cell(exercise: str):
    """The answer cell of ``exercise`` (the one before the check cell that checks it)."""
    nb = nbformat.read(_chapter(int(exercise.split(".")[0])), as_version=4)
    [ex] = [e for e in find_exercises(nb) if e.check is not None
            and f'check("{exercise}"' in nb.cells[e.check].source]
    return nb.cells[ex.answer]


def _solution_config(cell) -> ModelConfig:
    """The ModelConfig the solution cell builds, from its literal arguments."""
    [call] = [n for n in ast.walk(ast.parse(cell.source)) if isinstance(n, ast.Call)
              and getattr(n.func, "id", "") == "ModelConfig"]
    return ModelConfig(**{k.arg: ast.literal_eval(k.value) for k in call.keywords})


def _printed(cell) -> str:
    return "".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream")


def _quoted(pattern: str, text: str) -> list:
    """The numbers a note quotes where ``pattern`` (one group per number) matches."""
    m = re.search(pattern, text)
    assert m, f"{pattern!r} not in the note: {text}"
    return [float(g.replace(",", "")) for g in m.groups()]


def _task(exercise: str) -> str:
    """The task of ``exercise`` as the page shows it, on one line."""
    nb = nbformat.read(_chapter(int(exercise.split(".")[0])), as_version=4)
    [task] = [c.source for c in nb.cells if f"**Exercise {exercise}.**" in c.source]
    return " ".join(task.split())


@pytest.mark.no_edition
def test_the_1_2_note_quotes_stacks_counted_from_their_tensors():
    """The task states the budget and the width the answer is computed for; the layers the
    note quotes are what the rule gives and the most that fit, counted on built models (the
    answer's stack within the budget, one more block over it); the gap it estimates brackets
    the real one."""
    from depthnotes.course.answers.ch1 import BUDGET_1_2, SUBQUESTIONS, WIDTH_1_2

    budget, d = BUDGET_1_2, WIDTH_1_2
    assert f"budget of {budget:,} non-embedding" in _task("1.2")
    assert f"width $d = {d}$" in _task("1.2")
    note = SUBQUESTIONS["1.2"]
    [quoted_budget, rule] = _quoted(r"By the rule, ([\d,]+) // 12d² = (\d+) layers", note)
    [exact] = _quoted(r"so (\d+) fit", note)
    assert (quoted_budget, rule) == (budget, budget // (12 * d * d))
    fits, over = (_model(n_layer=int(exact) + k, d_model=d, n_head=1, d_ff=4 * d)
                  for k in (0, 1))
    assert _non_embedding(fits) <= budget < _non_embedding(over)
    assert exact == EXERCISES["1.2"].expected()
    low, high, real = _quoted(r"exact answer is (\d+) or (\d+) layers fewer \(here (\d+)\)",
                              note)
    assert real == rule - exact and low <= real <= high


@pytest.mark.no_edition
def test_the_2_2_note_quotes_the_depth_and_caches_of_the_built_shapes():
    """The task states the two widths, the wide model's depth and the context; the depth the
    note quotes gives, by the rule, the wide model's count; the cache bytes it quotes are those
    of the library's own KV cache for the two shapes at that context (allocated on the meta
    device, as the chapter reads them), and the answer is their difference in MB."""
    from depthnotes.core.model import KVCache
    from depthnotes.course.answers.ch2 import CONTEXT_2_2, DEEP_2_2, SUBQUESTIONS, WIDE_2_2
    from depthnotes.course.kinds import keys

    task = _task("2.2")
    assert f"($L = {WIDE_2_2.n_layer}$, $d = {WIDE_2_2.d_model}$)" in task
    assert f"Keep $d = {DEEP_2_2.d_model}$" in task
    assert f"full context of {CONTEXT_2_2:,} tokens" in task
    note = SUBQUESTIONS["2.2"]
    [L] = _quoted(r"deep model has L = (\d+) layers", note)
    assert 12 * L * DEEP_2_2.d_model ** 2 == 12 * WIDE_2_2.n_layer * WIDE_2_2.d_model ** 2
    assert L == DEEP_2_2.n_layer and DEEP_2_2.d_model == ModelConfig.preset("gpt2-small").d_model

    def cached(config):
        cache = KVCache(config, batch=1, max_len=CONTEXT_2_2, dtype=torch.float32,
                        device="meta")
        return (cache.k.numel() + cache.v.numel()) * cache.k.element_size()
    [T] = _quoted(r"For ([\d,]+) tokens", note)
    deep, wide = _quoted(r"caches ([\d,]+) bytes, the wide one ([\d,]+):", note)
    assert T == CONTEXT_2_2 and (deep, wide) == (cached(DEEP_2_2), cached(WIDE_2_2))
    expected = EXERCISES["2.2"].expected()
    assert math.isclose((deep - wide) / 1e6, expected, rel_tol=1e-12)
    values = [expected] + [m.wrong() for m in EXERCISES["2.2"].mistakes]
    forms = [set(keys(v, EXERCISES["2.2"].digits)) for v in values]
    assert all(not a & b for i, a in enumerate(forms) for b in forms[i + 1:]), \
        "the answer and each mistake apart at the check's digits"
    counts = _quoted(r"hold ([\d,]+) and ([\d,]+) non-embedding", note)
    assert counts == [count_params(c).non_embedding for c in (DEEP_2_2, WIDE_2_2)]


@pytest.mark.no_edition
def test_the_1_5_note_quotes_what_the_check_and_the_solution_give():
    """The widths the note names are where the check's own rule flips on models counted from
    their tensors, and the gap it quotes is the one the solution cell printed."""
    from depthnotes.course.answers.ch1 import SOLUTION_1_5, SUBQUESTIONS
    from depthnotes.course.runs.ch1 import RULE_TOLERANCE

    note, cell = SUBQUESTIONS["1.5"], _solution_cell("1.5")
    assert _solution_config(cell) == SOLUTION_1_5
    L = SOLUTION_1_5.n_layer

    def stack_within(d):
        model = _model(n_layer=L, d_model=d, n_head=1, d_ff=4 * d)
        return EXERCISES["1.5"].outcome(_non_embedding(model), {"model": model})

    def block_within(d):
        block = _model(n_layer=1, d_model=d, n_head=1, d_ff=4 * d).h[0]
        return abs(12 * d * d / sum(p.numel() for p in block.parameters()) - 1) \
            <= RULE_TOLERANCE
    [block_d] = _quoted(r"from d = (\d+) up", note)
    [stack_L, stack_d] = _quoted(r"a stack of (\d+) blocks needs d ≥ (\d+)", note)
    assert stack_L == L
    for within, d in ((block_within, int(block_d)), (stack_within, int(stack_d))):
        assert within(d) and not within(d - 1), (within.__name__, d)
    [gap] = _quoted(r"model: ([+-]\d+\.\d) %\)", note)
    solved = _model(**{**SOLUTION_1_5.__dict__, "d_ff": 4 * SOLUTION_1_5.d_model})
    assert gap == round(100 * (12 * L * SOLUTION_1_5.d_model ** 2
                               / _non_embedding(solved) - 1), 1)
    assert f"{gap:+.1f} %" in _printed(cell)


@pytest.mark.no_edition
def test_the_2_7_note_quotes_the_crossings():
    """The contexts the note quotes are the first T at which 2·L·d·T cached numbers reach the
    weights (found by counting up, not by the check's formula), and the solution's is the one
    its cell printed."""
    from depthnotes.course.answers.ch2 import SOLUTION_2_7, SUBQUESTIONS

    note, cell = SUBQUESTIONS["2.7"], _solution_cell("2.7")
    assert _solution_config(cell) == SOLUTION_2_7

    def first_T(config):
        T, weights = 1, count_params(config).total
        while 2 * config.n_layer * config.d_model * T < weights:
            T += 1
        return T
    small = ModelConfig.preset("gpt2-small")
    [T_small, window] = _quoted(r"at T = ([\d,]+) for GPT-2 small, beyond its ([\d,]+)-token",
                                note)
    assert (T_small, window) == (first_T(small), small.context)
    [T_deep] = _quoted(r"positions: at T = ([\d,]+)\)", note)
    assert T_deep == first_T(SOLUTION_2_7)
    assert f"at T = {int(T_deep):,}" in _printed(cell)


@pytest.mark.no_edition
def test_the_7_3_note_computes_the_fraction_from_the_published_line():
    """The note's fraction is the head's time over the chapter's line at the depth the task
    names, from the numbers chapter 7 published (real ones, and made-up ones)."""
    from depthnotes.course.answers.ch7 import HEAD_FRACTION_DEPTH, SUBQUESTIONS
    from depthnotes.tools.summaries import chapter_published

    nb = nbformat.read(_chapter(7), as_version=4)
    [task] = [c.source for c in nb.cells if "**Exercise 7.3.**" in c.source]
    assert f"`fit_big` at {HEAD_FRACTION_DEPTH} blocks" in task
    made_up = {"head_ms": "3.00", "fit_big_a": "2.50", "fit_big_b": "0.250",
               "head_layers": "12"}
    for published in (made_up, chapter_published(ROOT, "7.3")):
        note = SUBQUESTIONS["7.3"](published)
        line = LinearFit(slope=float(published["fit_big_b"]),
                         intercept=float(published["fit_big_a"]), r2=1.0)
        [share] = _quoted(r"the head is about (\d+)% of", note)
        assert share == round(100 * float(published["head_ms"])
                              / line.predict(HEAD_FRACTION_DEPTH))
        for name in ("head_ms", "fit_big_a", "fit_big_b", "head_layers"):
            assert published[name] in note
    assert "head is about 75%" in SUBQUESTIONS["7.3"](made_up)      # 3 / (2.5 + 6 × 0.25)


@pytest.mark.no_edition
def test_the_7_2_note_bounds_the_named_model_by_the_published_read_rate():
    """The note's model and position are the ones the task names, at the preset's shape; the
    position it gives for part (a) is where the cache's bytes reach the weights', found by
    counting up, the same at one block and at the preset's depth; its bytes and its bound are
    what the task's formula (the solution's) gives at the read rate chapter 7 published (real,
    and made up)."""
    from depthnotes.bench.latency import decode_kv_bytes
    from depthnotes.course.answers.ch7 import BOUND_MODEL, BOUND_POSITION, SUBQUESTIONS
    from depthnotes.tools.summaries import chapter_published

    config = ModelConfig.preset(BOUND_MODEL)
    L, d, t = config.n_layer, config.d_model, BOUND_POSITION
    assert (f"GPT-2 {BOUND_MODEL.removeprefix('gpt2-')} ({L} blocks, $d$ = {d:,}) at "
            f"position {t:,}") in _task("7.2")

    def weights(n_layer):                      # 12 d² fp32 numbers per block, as the task says
        return 4 * 12 * d * d * n_layer

    def crossing(n_layer):                     # the first position whose cache reaches them
        c, position = config.replace(n_layer=n_layer), 0
        while decode_kv_bytes(c, position) < weights(n_layer):
            position += 1
        return position
    cache = decode_kv_bytes(config, t)
    assert cache == 4 * L * 2 * d * t
    solution = CASES["7.2"][0]
    for published in ({"c16_bw": "10.0"}, {"c16_bw": "7.3"},
                      chapter_published(ROOT, "7.2")):
        note = SUBQUESTIONS["7.2"](published)
        [position, width] = _quoted(r"at position ([\d,]+) for d = ([\d,]+)", note)
        assert width == d and position == crossing(L) == crossing(1) == 6 * d
        assert "whatever the depth" in note
        [context] = _quoted(r"beyond GPT-2 medium's ([\d,]+)-token window", note)
        assert context == config.context < position
        [at, blocks] = _quoted(r"At position ([\d,]+) GPT-2 medium \((\d+) blocks\)", note)
        assert (at, blocks) == (t, L)
        w_gb, kv_gb, share, total_gb = _quoted(
            r"reads ([\d.]+) GB of block weights and ([\d.]+) GB of cache \((\d+)% of the "
            r"weights\), ([\d.]+) GB per step", note)
        assert (w_gb, kv_gb, total_gb) == (round(weights(L) / 1e9, 2), round(cache / 1e9, 2),
                                           round((weights(L) + cache) / 1e9, 2))
        assert share == round(100 * cache / weights(L))
        assert f"delivered {published['c16_bw']} GB/s" in note
        [ms] = _quoted(r"could not take less than about ([\d,]+) ms", note)
        gbs = float(published["c16_bw"])
        assert ms == round((weights(L) + cache) / (gbs * 1e9) * 1e3) \
            == round(solution(L, d, t, gbs))
    # 4 bytes x 24 blocks x 1,024 x (12 x 1,024 + 2 x 1,000) numbers = 1.405 GB, at 10 GB/s
    assert "about 140 ms" in SUBQUESTIONS["7.2"]({"c16_bw": "10.0"})


@pytest.mark.no_edition
def test_the_6_1_note_counts_the_depths_of_the_budgets_and_range_the_task_names():
    """The task states the range the note uses (forty-fold, up to C14's wide extreme), GPT-2
    small's shape and the basin's budgets, which are the chapter's; the runs of depths the
    note quotes are those this file's own count finds, each end checked against its
    neighbour; the cube-root estimates it quotes lie near the counts."""
    from depthnotes.course.answers.ch6 import (KAPLAN_FOLD, KAPLAN_RANGE_6_1,
                                               SCALE_MODEL_6_1, SUBQUESTIONS)
    from depthnotes.experiments.ch6 import BASIN_BUDGETS
    from depthnotes.verdicts.ch6_budget import WIDE_EXTREME

    lo, hi = KAPLAN_RANGE_6_1
    assert (hi, hi / lo, KAPLAN_FOLD) == (WIDE_EXTREME, 40, 40)
    task, c = _task("6.1"), ModelConfig.preset(SCALE_MODEL_6_1)
    assert "forty-fold" in task and f"$d/L$ from {lo:g} to {hi:g}" in task
    assert f"$12 \\cdot {c.n_layer} \\cdot {c.d_model}^2$" in task
    assert "the keys of `basins`" in task
    nb = nbformat.read(_chapter(6), as_version=4)
    [margins] = [_printed(cell) for cell in nb.cells if cell.cell_type == "code"
                 and "b.testable" in cell.source]       # the budgets `basins` holds
    assert re.findall(r"P = ([\d,]+): margin", margins) == [f"{P:,}" for P in BASIN_BUDGETS]
    note = SUBQUESTIONS["6.1"]
    counts = []
    for P in (*BASIN_BUDGETS, 12 * c.n_layer * c.d_model ** 2):
        run = re.escape(f"{P:,}: ") + r"L = (\d+) to (\d+) \((\d+) shapes?\)"
        first, last, n = map(int, _quoted(run, note))
        assert n == _depths_in_range(P, lo, hi) == last - first + 1
        aspect = {L: round(math.sqrt(P / (12 * L))) / L
                  for L in (first - 1, first, last, last + 1) if L}
        assert lo <= aspect[first] and aspect[last] <= hi and aspect[last + 1] < lo
        assert first == 1 or aspect[first - 1] > hi
        counts.append(n)
    estimates = _quoted(r"That is ([\d.]+) at P = [\d,]+ and ([\d.]+) at GPT-2", note)
    assert _quoted(r"\(counted: (\d+) and (\d+)\)", note) == [counts[0], counts[-1]]
    assert all(abs(e - n) < 1 for e, n in zip(estimates, [counts[0], counts[-1]]))


@pytest.mark.no_edition
def test_the_8_4_note_quotes_counts_of_the_built_models():
    """The counts the note quotes are those of the models built and counted from their
    tensors, and the solution's are the ones its cell printed."""
    from depthnotes.course.answers.ch8 import SOLUTION_8_4, SUBQUESTIONS

    note, cell = SUBQUESTIONS["8.4"], _solution_cell("8.4")
    assert _solution_config(cell) == SOLUTION_8_4
    quoted = re.findall(r"stores ([\d,]+) of ([\d,]+) parameters", note)
    assert len(quoted) == 2
    big = SOLUTION_8_4.replace(vocab_size=ModelConfig.preset("gpt2-small").vocab_size)
    for config, (stored, unshared) in zip((SOLUTION_8_4, big), quoted):
        with torch.device("meta"):
            loop = Transformer(config)
            plain = Transformer(config.replace(n_unique_blocks=None))
        assert int(stored.replace(",", "")) == sum(p.numel() for p in loop.parameters())
        assert int(unshared.replace(",", "")) == sum(p.numel() for p in plain.parameters())
    assert f"{quoted[0][0]} stored of {quoted[0][1]} unshared" in _printed(cell)
    [embedding, block] = _quoted(r"its (\d+\.\d)M embedding parameters outweigh the "
                                 r"(\d+\.\d)M of each block", note)
    assert embedding == round((loop.wte.weight.numel() + loop.wpe.weight.numel()) / 1e6, 1)
    assert block == round(sum(p.numel() for p in loop.h[0].parameters()) / 1e6, 1)


@pytest.mark.no_edition
def test_the_3_7_note_names_the_blocks_the_check_finds_spare():
    """The blocks the note calls spare at each k are those without which the kept model scores
    what the check's own rule calls spare; the relay's are the blocks after its first k + 1."""
    from depthnotes.course.answers.ch3 import SUBQUESTIONS
    from depthnotes.experiments.records import load_model, load_record
    from depthnotes.training.runtime import num_threads

    kept = load_record("induction_models")
    [arm] = [a for a in kept.arms if kept.arm(a)["info"]["n_layer"] == 5]
    model = load_model(kept, arm, 0)
    note = SUBQUESTIONS["3.7"]({})
    per_k = re.findall(r"at k = (\d), ([\d, ]+|none) \(a relay: ([\d, ]+|none)\)", note)
    assert [int(k) for k, _, _ in per_k] == [1, 2, 4]
    for k, spare, relay in per_k:
        k = int(k)
        named = [] if spare == "none" else [int(b) for b in spare.split(", ")]
        assert relay == (", ".join(map(str, range(k + 1, 5))) or "none")
        for b in range(5):                       # the score the check computes, its rule
            with num_threads(1):                 # small passes: one thread is the quickest
                run = (b, score(model, INDUCTION_TASK, k, skip=(b,)))
            assert EXERCISES["3.7"].outcome(run, {}) == (b in named), (k, run)


@pytest.mark.no_edition
def test_the_5_1_answer_is_the_attention_ratio_of_the_built_models():
    """Exercise 5.1's answer, at each of its hidden depths, is what the library's models give
    in a block that reads the same input in both stacks (as the first block does: the task
    says so; deeper blocks of the two stacks read different streams): built with one seed,
    DeepNorm and Xavier post-norm draw the same queries and keys, and on one input
    DeepNorm's attention output is beta² times post-norm's (W_V, a slice of the
    fused ``c_attn``, and W_O each carry beta; biases start at 0). Over the residual each
    block adds it to (``Block.residual``: alpha·x against x) that is the answer; so is the
    ratio of the outputs divided by alpha."""
    spec, d = _PLAIN["5.1"], 16
    for (L,), expected in spec.cases():
        shape = dict(n_layer=L, d_model=d, n_head=2, d_ff=2 * d, vocab_size=20, context=8)
        post = Transformer(ModelConfig(norm="post", init="xavier", **shape), seed=0)
        deep = Transformer(ModelConfig(norm="deepnorm", init="deepnorm", **shape), seed=0)
        beta, alpha = deep.config.init_beta, deep.config.residual_alpha
        idx = torch.arange(8).view(1, 8)
        x = post.embed(idx)
        assert torch.equal(x, deep.embed(idx))
        for i in sorted({0, L - 1}):
            p, q = post.block(i), deep.block(i)
            qk = slice(None, 2 * d)                  # W_Q | W_K of the fused c_attn
            assert torch.equal(p.attn.c_attn.weight[:, qk], q.attn.c_attn.weight[:, qk])
            with torch.no_grad():
                a_post, a_deep = p.attn(x), q.attn(x)
                torch.testing.assert_close(a_deep, beta ** 2 * a_post, rtol=1e-5, atol=1e-7)
                zero = torch.zeros_like(x)
                relative = [(b.residual(zero, a).norm() / b.residual(x, zero).norm()).item()
                            for b, a in ((p, a_post), (q, a_deep))]
            assert math.isclose(relative[1] / relative[0], expected, rel_tol=1e-5), (L, i)
            assert math.isclose((a_deep.norm() / a_post.norm()).item() / alpha, expected,
                                rel_tol=1e-5), (L, i)
        assert CASES["5.1"][0](L) == pytest.approx(expected, rel=1e-12)


@pytest.mark.no_edition
def test_the_5_1_note_quotes_the_powers_of_the_answer():
    """The powers of L the note gives are the answer's and C11's slopes on log-log axes, fitted
    from the exercise's own hidden cases, and the ratios it quotes are the two factors'."""
    from depthnotes.core.config import deepnorm_constants
    from depthnotes.course.answers.ch5 import SUBQUESTIONS

    note, cases = SUBQUESTIONS["5.1"], _PLAIN["5.1"].cases()
    (L1,), f1 = cases[0]
    (L2,), f2 = cases[-1]
    slope = math.log(f2 / f1) / math.log(L2 / L1)
    [p, q] = _quoted(r"shrinks like L\^\(-(\d)/(\d)\); C11's 1/sqrt\(2L\) like "
                     r"L\^\(-1/2\)", note)
    assert math.isclose(slope, -p / q, rel_tol=1e-9) and -p / q < -1 / 2
    m = re.search(r"it is 1/\(2·alpha\), (\d\.\d+) at L = 1 and (\d\.\d+) at L = 1,000",
                  note)
    assert m, note
    for L, quoted in zip((1, 1000), m.groups()):
        [factor] = [f for (n,), f in cases if n == L]
        over_c11 = factor * math.sqrt(2 * L)
        assert float(quoted) == round(over_c11, len(quoted) - 2)
        assert math.isclose(over_c11, 1 / (2 * deepnorm_constants(L).alpha), rel_tol=1e-12)


@pytest.mark.no_edition
def test_tasks_state_the_thresholds_their_checks_use():
    """A task that names a threshold names the one its check reads (one place for each rule,
    and the page's text tied to it)."""
    from depthnotes.course.runs.ch1 import RULE_TOLERANCE
    from depthnotes.course.runs.ch3 import SPARE_SCORE
    from depthnotes.course.runs.ch8 import LOOP_SAVES

    words = {0.5: "half"}
    for exercise, said in (("1.5", f"within {100 * RULE_TOLERANCE:g} %"),
                           ("3.7", f"at least {SPARE_SCORE:g}"),
                           ("8.4", f"under {words[LOOP_SAVES]}")):
        nb = nbformat.read(_chapter(int(exercise.split(".")[0])), as_version=4)
        [task] = [c.source for c in nb.cells if f"**Exercise {exercise}.**" in c.source]
        assert said in " ".join(task.split()), (exercise, said)


def test_a_function_that_calls_the_librarys_answer_is_refused():
    """1.1, 4.2 and 7.1 ask for a formula the library already computes: a function that calls
    the library's own (directly, through a module, or in a nested function) gets a hint that
    says so, not "correct"; the same function written out passes."""
    import depthnotes
    from depthnotes.core.model import Block
    from depthnotes.data.corpus import token_entropy

    def block_params(d, ffn_mult):
        return count_params(Block(ModelConfig(n_layer=1, d_model=d, n_head=1,
                                              ffn_mult=ffn_mult))).total

    def by_module(d, ffn_mult):
        return depthnotes.count_params(Transformer(ModelConfig(n_layer=1, d_model=d))).total

    def nested(ids, vocab_size):
        def inner():
            return token_entropy(ids)
        return inner()

    for ex, fn in (("1.1", block_params), ("1.1", by_module)):
        with pytest.raises(ExerciseError, match="calls `(count_params|Block|Transformer)`"):
            check(ex, fn)
    with pytest.raises(ExerciseError, match="calls `token_entropy`"):
        check("4.2", nested, corpus=CORPUS, baseline=BASELINE)
    check("4.2", _entropy, corpus=CORPUS, baseline=BASELINE)     # written out: correct
    # sealed, the student edition refuses the same way
    from depthnotes.course import sealed
    spec = sealed.unseal(sealed.seal(EXERCISES["4.2"], rounds=1))
    assert spec.forbids == ("token_entropy",)
    with pytest.raises(ExerciseError, match="calls `token_entropy`"):
        spec.run("4.2", nested, {"corpus": CORPUS, "baseline": BASELINE})


def test_the_7_4_run_is_judged_with_the_chapters_cache():
    """Exercise 7.4's verifier reads the chapter's cache (``given["cache"]``, the part one
    core reads fast, ``usable_cache``), not the size the operating system reports: a 100 MB
    model is memory-resident against a measured 8 MiB part, not against 64 MiB reported."""
    from depthnotes.course.runs.ch7 import RUNS

    reported = CacheSize(64 * 2**20, 3, "sysfs")
    measured = CacheSize(8 * 2**20, 3, "measured", reported=reported)
    pair = (_timing(12, 1.0, weight_bytes=10**8), _timing(24, 2.2, weight_bytes=2 * 10**8))
    verify = RUNS["7.4"].verify
    assert verify(pair, {"fit": LFIT, "cache": measured, "conclusion": True}) is None
    assert "not from memory" in verify(pair, {"fit": LFIT, "cache": reported,
                                              "conclusion": True})
