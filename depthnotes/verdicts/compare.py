"""Verdicts from a stated rule: per-seed results of two or more arms -> mean, spread, verdict.

EXPERIMENTS.md §1–2: a trained comparison runs at least 3 seeds per arm, shows the spread, and
counts a difference only when it exceeds the seed-to-seed spread by a stated factor. This
module is that rule, in one place, so that the sentence a chapter prints above its result, the
verdict it asserts and the word the claims page shows all come from the same numbers.

The rule (``factor`` = 1 by default): the difference between two arms is **clear** when the
gap between their means is larger than ``factor`` times the larger of the two arms' min–max
ranges over seeds; otherwise it is **within noise**. A gap exactly equal to the margin is
within noise (so are two arms with identical results).

How a chapter uses it::

    from depthnotes.verdicts.compare import compare, claim_word

    cmp = compare(record.final("eval_loss"), metric="validation loss", better="lower")
    print(cmp.rule)          # in the text or cell above the result: the test, before the result
    print(cmp.table())       # each arm's mean and min–max, and the differences
    word = claim_word(cmp, expected="deepnorm L=1000")   # the claims page's word
    assert (word == "reproduced") == (cmp.best == "deepnorm L=1000" and cmp.clear)

``compare`` refuses fewer than 3 seeds per arm and non-finite values (a diverged run has no
loss: decide how the chapter counts it before comparing). ``claim_word`` maps a comparison to
the claims page's words: ``reproduced`` when the expected arm is the best and the difference
is clear, ``reproduced with caveats`` when it is, but the chapter names a caveat, and ``not
reproduced at this scale`` otherwise (within noise, or clearly the other way). A claim whose
measures come from fewer than ``MIN_SEEDS`` trained models gets ``inconclusive``
(``INCONCLUSIVE``), not a verdict.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations

from depthnotes.core.checks import check_choice, check_number

#: Fewest seeds per arm a verdict may rest on (EXPERIMENTS.md §2).
MIN_SEEDS = 3
CLEAR, WITHIN_NOISE = "clear", "within noise"
#: The claims page's verdict words.
REPRODUCED = "reproduced"
WITH_CAVEATS = "reproduced with caveats"
NOT_REPRODUCED = "not reproduced at this scale"
#: No verdict: the measures rest on fewer trained models than a verdict needs (``MIN_SEEDS``),
#: so the chapter shows them as an illustration and says what a verdict would take.
INCONCLUSIVE = "inconclusive"
#: Every verdict word, from best to worst (where a claim is checked in pieces, the claims page
#: shows the worst): a clear refutation ranks below a missing verdict.
CLAIM_WORDS = (REPRODUCED, WITH_CAVEATS, INCONCLUSIVE, NOT_REPRODUCED)


@dataclass(frozen=True)
class ArmSummary:
    """One arm's per-seed values, their mean and their min–max range."""

    name: str
    values: tuple[float, ...]
    mean: float
    low: float
    high: float

    @property
    def spread(self) -> float:
        """The min–max range over seeds."""
        return self.high - self.low


@dataclass(frozen=True)
class Difference:
    """Arm ``a`` minus arm ``b``: the gap between means, the margin the rule asks the gap to
    exceed (``factor`` × the larger min–max range of the two), and the verdict."""

    a: str
    b: str
    gap: float          # mean(a) - mean(b)
    margin: float
    verdict: str        # CLEAR or WITHIN_NOISE

    @property
    def clear(self) -> bool:
        return self.verdict == CLEAR


@dataclass(frozen=True)
class Comparison:
    """The result of ``compare``: every arm's summary, every pairwise difference, the best arm
    and whether it is clearly better than every other arm."""

    metric: str
    better: str                       # "lower" or "higher"
    factor: float
    arms: tuple[ArmSummary, ...]
    differences: tuple[Difference, ...]
    best: str                         # the arm with the best mean (the first one on a tie)
    verdict: str                      # CLEAR if best is clearly apart from every other arm
    rule: str                         # the rule as a sentence, to print above the result

    @property
    def clear(self) -> bool:
        return self.verdict == CLEAR

    def arm(self, name: str) -> ArmSummary:
        for a in self.arms:
            if a.name == name:
                return a
        raise KeyError(f"no arm {name!r}; the arms are {[a.name for a in self.arms]}")

    def between(self, a: str, b: str) -> Difference:
        """The difference ``a`` − ``b`` (either order)."""
        for d in self.differences:
            if (d.a, d.b) == (a, b):
                return d
            if (d.a, d.b) == (b, a):
                return Difference(a, b, -d.gap, d.margin, d.verdict)
        raise KeyError(f"no arms {a!r} and {b!r}; the arms are {[x.name for x in self.arms]}")

    def table(self, digits: int = 3) -> str:
        """Each arm's mean and min–max, then each difference and its verdict (rounded)."""
        width = max(len(a.name) for a in self.arms)
        lines = [f"{a.name:<{width}}  mean {a.mean:.{digits}f}  min-max "
                 f"{a.low:.{digits}f}-{a.high:.{digits}f}  ({len(a.values)} seeds)"
                 for a in self.arms]
        lines += [f"{d.a} - {d.b}: {d.gap:+.{digits}f} (margin {d.margin:.{digits}f}): "
                  f"{d.verdict}" for d in self.differences]
        return "\n".join(lines)

    def summary(self, digits: int = 3) -> str:
        """One line: the best arm, its gap to the runner-up, and the verdict."""
        others = [a for a in self.arms if a.name != self.best]
        runner = min(others, key=lambda a: abs(a.mean - self.arm(self.best).mean))
        d = self.between(self.best, runner.name)
        return (f"best {self.metric}: {self.best} ({d.gap:+.{digits}f} against {runner.name}, "
                f"margin {d.margin:.{digits}f}): {self.verdict}")


def rule_sentence(factor: float = 1.0, metric: str = "the metric", better: str = "lower") -> str:
    """The rule ``compare`` applies, as a sentence for the page."""
    times = "" if factor == 1 else f"{factor:g} times "
    return (f"A difference in {metric} ({better} is better) counts as clear only when the gap "
            f"between two arms' means over seeds is larger than {times}the larger of the two "
            f"arms' min-max ranges; otherwise it is within noise. At least {MIN_SEEDS} seeds "
            f"per arm.")


def compare(results: Mapping[str, Sequence[float]], *, metric: str = "the metric",
            better: str = "lower", factor: float = 1.0) -> Comparison:
    """Summarise per-seed ``results`` (``{arm: [value of each seed]}``, two or more arms, at
    least ``MIN_SEEDS`` finite values each) and apply the rule (module docstring)."""
    check_choice("better", better, ("lower", "higher"))
    check_number("factor", factor, low=0.0, low_open=True)
    if not isinstance(results, Mapping) or len(results) < 2:
        raise ValueError(f"results must map two or more arm names to per-seed values, got "
                         f"{results!r}")
    arms = tuple(_summarise(name, values) for name, values in results.items())
    diffs = tuple(_difference(a, b, factor) for a, b in combinations(arms, 2))
    sign = 1.0 if better == "lower" else -1.0
    best = min(arms, key=lambda a: sign * a.mean)       # min keeps the first on a tie
    apart = all(d.clear for d in diffs if best.name in (d.a, d.b))
    return Comparison(metric=metric, better=better, factor=float(factor), arms=arms,
                      differences=diffs, best=best.name,
                      verdict=CLEAR if apart else WITHIN_NOISE,
                      rule=rule_sentence(factor, metric, better))


def claim_word(comparison: Comparison, expected: str, caveat: str | None = None) -> str:
    """The claims page's word for a comparison whose claim predicts that arm ``expected`` is
    the best: ``reproduced`` (clear, and ``expected`` is the best), ``reproduced with
    caveats`` (the same, with a ``caveat`` the chapter states), else ``not reproduced at this
    scale``."""
    comparison.arm(expected)            # a KeyError for an unknown arm
    if comparison.clear and comparison.best == expected:
        return WITH_CAVEATS if caveat else REPRODUCED
    return NOT_REPRODUCED


def _summarise(name: str, values) -> ArmSummary:
    if isinstance(values, (str, bytes)) or not isinstance(values, Sequence):
        raise TypeError(f"arm {name!r}: values must be a sequence of numbers (one per seed), "
                        f"got {type(values).__name__}")
    if len(values) < MIN_SEEDS:
        raise ValueError(f"arm {name!r} has {len(values)} seed(s); a verdict needs at least "
                         f"{MIN_SEEDS} seeds per arm (EXPERIMENTS.md §2)")
    for i, v in enumerate(values):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            raise ValueError(f"arm {name!r}, seed #{i}: {v!r} is not a finite number (a "
                             f"diverged run? decide how the chapter counts it before comparing)")
    vals = tuple(float(v) for v in values)
    return ArmSummary(name, vals, sum(vals) / len(vals), min(vals), max(vals))


def _difference(a: ArmSummary, b: ArmSummary, factor: float) -> Difference:
    gap = a.mean - b.mean
    margin = factor * max(a.spread, b.spread)
    return Difference(a.name, b.name, gap, margin, CLEAR if abs(gap) > margin else WITHIN_NOISE)
