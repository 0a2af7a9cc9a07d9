"""The evidence library: the one set of rules by which the book's verdicts are reached.

Every trained comparison in the book reduces to a few questions, and each has one answer here:

* **What a seed's result is** (``summarise``): a finite number, or a run that diverged. A
  diverged run *learned nothing*: it counts as a ``ceiling`` the caller states — for a loss,
  the uniform loss ln V (or the loss at initialisation); for a task's accuracy,
  ``DIVERGED_ACCURACY`` — and it ranks below every run that did not diverge. One policy, so
  that no chapter counts a diverged run as its first loss while another counts it as infinity
  or as zero.
* **Whether two arms differ** (``compare``): the rule below, robust at three seeds.
* **Which learning rate is best, and whether the grid says so** (``best_rate``): the best rate
  counts only when each edge of the grid is closed: the edge rate is clearly worse than the
  best (the grid brackets it), or a flat stretch reaches that edge, three or more neighbouring
  rates, the best among them, every one within noise of it (a flat grid is the stretch that
  spans both edges). Amended 2026-12-05 from "brackets it, or every rate of three or more is
  within noise of it", under which a clearly worse rate added outside a flat grid unjudged it.
* **How parts add up** (``every_some_none``, ``claim_outcome``), and **what the reader is
  told happened** (``outcome``): one of five words that keep "could not test", "went the other
  way" and "in the claimed direction but under the bar" apart; a part that could not be
  tested says why (``WhyNot``: an unbracketed grid, no positive control, a design that cannot
  tell the alternatives apart, each with the evidence that shows it).

The comparison rule. A difference between two arms is **clear** when the gap between their
means exceeds the practical ``margin`` stated for the claim *and* the arms are separated:
either no seed of one arm reaches any seed of the other, or the gap exceeds ``T_RATIO`` = 3
Welch standard errors, sqrt(s_a²/n_a + s_b²/n_b). Otherwise it is **within noise**. Why this
rule: the book's first rule ("the gap of means exceeds the larger arm's min–max range") let one
outlying seed veto a large effect — a single seed far out *in the same direction* widens the
range, though it only strengthens the case — and it could not tell apart two arms that do not
overlap at all when one of them was spread. The separation test sees both: non-overlap needs no
spread estimate, and the Welch ratio lets a large gap through when one seed crosses. Three
standard errors is a two-sided p of about 0.10 at the 2 degrees of freedom three seeds can
give, 0.06 at 3 and 0.04 at 4. Neither test is a significance test at three seeds: two arms of
three seeds drawn from one distribution fail to overlap with probability 2/20, and when their
spreads differ (stalled and trained runs mixed) the rule calls such null pairs clear 10-20 % of
the time (simulated). A headline that rests on one such comparison says so, or runs more
seeds. The margin is what makes a clear difference matter: it keeps a
separated but negligible gap (0.002 nats between two tight arms) from being called a finding.

How a chapter uses it::

    from depthnotes.verdicts.evidence import best_rate, compare, outcome, summarise

    pre = summarise("pre-norm", [2.31, 2.33, 2.30])
    post = summarise("post-norm", [3.05, None, 3.10], ceiling=math.log(vocab))  # seed 1 diverged
    diff = compare(pre, post, margin=0.02)          # diff.clear, diff.better == "pre-norm"
    part = outcome(diff, expected="pre-norm", part="pre-norm trains where post-norm does not")
    part.word                                       # "reproduced"

The library returns structured results; the sentences a reader reads are written in the
chapter, around the published numbers.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from itertools import combinations

from depthnotes.core.checks import check_choice, check_number

#: Fewest seeds an arm may rest on (the book's standard of evidence).
MIN_SEEDS = 3
#: Welch standard errors a gap must exceed when the arms overlap (module docstring).
T_RATIO = 3.0
CLEAR, WITHIN_NOISE = "clear", "within noise"
#: A fitted log-log exponent (a quantity against depth) this close to zero counts as flat.
FLAT_EXPONENT = 0.15
BETTER = ("lower", "higher")

#: The outcome words, from the claim holding to the claim not being put to the test.
REPRODUCED = "reproduced"
IN_PART = "reproduced in part"
CONTRADICTED = "contradicted here"
NOT_SHOWN = "not shown here"
NOT_TESTABLE = "not testable here"
OUTCOMES = (REPRODUCED, IN_PART, CONTRADICTED, NOT_SHOWN, NOT_TESTABLE)

#: What a diverged run's accuracy counts as (``summarise``'s ``ceiling`` where higher is
#: better): its weights are no longer numbers, so it answers no query; 0, below the chance
#: level of any task, so that it ranks below every run that trained at all.
DIVERGED_ACCURACY = 0.0

#: The rules, in three sentences, for the methods page.
RULE = (
    "Two arms differ clearly when the gap between their means over seeds exceeds the margin "
    "stated for the claim and the arms are separated: no seed of one reaches any seed of the "
    f"other, or the gap exceeds {T_RATIO:g} Welch standard errors; otherwise the difference is "
    f"within noise, and every arm has at least {MIN_SEEDS} seeds. A run that diverged learned "
    "nothing: it counts as the stated ceiling (the uniform loss ln V, or the loss at "
    "initialisation; on a task, accuracy 0) and ranks below "
    "every run that did not diverge. A best learning rate counts only when each edge of its "
    "grid is closed: the edge rate is clearly worse than the best (the grid brackets it), or "
    "a stretch of three or more neighbouring rates within noise of the best reaches that edge "
    "(a flat stretch; a flat grid is one that spans it); otherwise the comparison it enters "
    "is not testable until the grid is extended.")


@dataclass(frozen=True)
class Diverged:
    """A seed whose run diverged (at ``step``, when known)."""

    step: int | None = None


@dataclass(frozen=True)
class ArmSeeds:
    """One arm's seeds after the divergence policy: ``values`` (diverged seeds replaced by the
    ceiling), their mean, sample standard deviation and range, and which seeds diverged."""

    name: str
    values: tuple[float, ...]
    better: str
    diverged: tuple[int, ...] = ()             # indices of the seeds that diverged
    diverged_at: tuple[int | None, ...] = ()   # their steps, when known
    ceiling: float | None = None               # what a diverged seed counts as

    @property
    def n(self) -> int:
        return len(self.values)

    @property
    def mean(self) -> float:
        return sum(self.values) / self.n

    @property
    def sd(self) -> float:
        m = self.mean
        return math.sqrt(sum((v - m) ** 2 for v in self.values) / (self.n - 1))

    @property
    def low(self) -> float:
        return min(self.values)

    @property
    def high(self) -> float:
        return max(self.values)

    @property
    def spread(self) -> float:
        """The min–max range over seeds (shown beside the mean; the rule does not use it)."""
        return self.high - self.low

    def _rank_keys(self) -> list[tuple[int, float]]:
        """Each seed as (diverged, value signed so that smaller is better): a diverged seed is
        worse than every finite one, whatever the ceiling."""
        sign = 1.0 if self.better == "lower" else -1.0
        return [(int(i in self.diverged), sign * v) for i, v in enumerate(self.values)]


def _is_divergence(v) -> bool:
    return v is None or isinstance(v, Diverged) or (
        isinstance(v, float) and not math.isfinite(v))


def summarise(name: str, values: Sequence, *, better: str = "lower",
              ceiling: float | None = None) -> ArmSeeds:
    """An ``ArmSeeds`` from per-seed ``values``: numbers, or ``None`` / ``Diverged`` / a
    non-finite float for a seed that diverged (the policy in the module docstring: it needs
    ``ceiling``)."""
    check_choice("better", better, BETTER)
    if isinstance(values, (str, bytes)) or not isinstance(values, Sequence):
        raise TypeError(f"arm {name!r}: values must be a sequence with one result per seed, "
                        f"got {type(values).__name__}")
    if len(values) < MIN_SEEDS:
        raise ValueError(f"arm {name!r} has {len(values)} seed(s); a comparison needs at least "
                         f"{MIN_SEEDS} per arm")
    if ceiling is not None:
        check_number("ceiling", ceiling, extra="(the loss of a run that learned nothing)")
    out, diverged, steps = [], [], []
    for i, v in enumerate(values):
        if _is_divergence(v):
            if ceiling is None:
                raise ValueError(f"arm {name!r}, seed #{i} diverged: give ceiling= (what a run "
                                 f"that learned nothing scores) to count it")
            out.append(float(ceiling))
            diverged.append(i)
            steps.append(v.step if isinstance(v, Diverged) else None)
        elif isinstance(v, bool) or not isinstance(v, (int, float)):
            raise ValueError(f"arm {name!r}, seed #{i}: {v!r} is not a number")
        else:
            out.append(float(v))
    arm = ArmSeeds(name, tuple(out), better, tuple(diverged), tuple(steps),
              None if ceiling is None else float(ceiling))
    _check_ceiling(arm, arm)
    return arm


def _check_ceiling(*arms: ArmSeeds) -> None:
    """The policy holds only if a diverged seed's stand-in is no better than any run that
    trained (else the means would rank a diverged run above a trained one), and arms compared
    together share one ceiling."""
    ceilings = {a.ceiling for a in arms if a.diverged}
    if len(ceilings) > 1:
        raise ValueError(f"arms compared together must share one ceiling, got {sorted(ceilings)}")
    if not ceilings:
        return
    c = ceilings.pop()
    sign = 1.0 if arms[0].better == "lower" else -1.0
    for a in arms:
        for i, v in enumerate(a.values):
            if i not in a.diverged and sign * v > sign * c:
                raise ValueError(f"ceiling={c:g} is better than arm {a.name!r}'s seed #{i} "
                                 f"({v:g}), which trained: a diverged run must count as no "
                                 f"better than one that learned (use the loss at "
                                 f"initialisation)")


@dataclass(frozen=True)
class Difference:
    """``a`` against ``b`` by the comparison rule: which is better (by means; None on a tie),
    the gap between means (a − b), the stated margin, whether the arms overlap, the gap in Welch
    standard errors, and the verdict (``CLEAR`` or ``WITHIN_NOISE``)."""

    a: ArmSeeds
    b: ArmSeeds
    better: str | None
    gap: float
    margin: float
    overlap: bool
    welch_ratio: float
    verdict: str

    @property
    def clear(self) -> bool:
        return self.verdict == CLEAR


def _as_arm(x, better: str, ceiling: float | None) -> ArmSeeds:
    if isinstance(x, ArmSeeds):
        if x.better != better:
            raise ValueError(f"arm {x.name!r} was summarised with better={x.better!r}, "
                             f"compared with better={better!r}")
        return x
    name, values = x
    return summarise(name, values, better=better, ceiling=ceiling)


def compare(a, b, *, better: str = "lower", margin: float = 0.0,
            ceiling: float | None = None) -> Difference:
    """The comparison rule (module docstring) for arms ``a`` and ``b``: each an ``ArmSeeds``
    or a ``(name, values)`` pair."""
    check_choice("better", better, BETTER)
    check_number("margin", margin, low=0.0, extra="(in the metric's units)")
    a, b = _as_arm(a, better, ceiling), _as_arm(b, better, ceiling)
    if a.name == b.name:
        raise ValueError(f"two arms named {a.name!r}: give each arm its own name")
    _check_ceiling(a, b)
    gap = a.mean - b.mean
    sign = 1.0 if better == "lower" else -1.0
    winner = None if gap == 0 else (a if sign * gap < 0 else b)
    if winner is None:
        overlap = True
    else:
        loser = b if winner is a else a
        overlap = max(winner._rank_keys()) >= min(loser._rank_keys())
    se = math.sqrt(a.sd ** 2 / a.n + b.sd ** 2 / b.n)
    ratio = math.inf if se == 0 and gap != 0 else (0.0 if se == 0 else abs(gap) / se)
    separated = not overlap or ratio > T_RATIO
    clear = winner is not None and abs(gap) > margin and separated
    return Difference(a, b, winner.name if winner else None, gap, float(margin), overlap, ratio,
                      CLEAR if clear else WITHIN_NOISE)


ABOVE, BELOW = "above", "below"


def against(values: Sequence[float], reference: float, *, margin: float = 0.0) -> str:
    """One set of measurements against a fixed ``reference`` (e.g. round-by-round timing
    ratios against 1), by the comparison rule with the reference as an arm with no spread:
    ``"above"`` when the mean exceeds ``reference`` by more than ``margin`` and either every
    value is above it or the gap exceeds ``T_RATIO`` standard errors; ``"below"`` the same
    way down; else ``"within noise"``."""
    check_number("reference", reference)
    check_number("margin", margin, low=0.0)
    vals = [float(v) for v in values]
    if len(vals) < MIN_SEEDS:
        raise ValueError(f"against needs at least {MIN_SEEDS} measurements, got {len(vals)}")
    for v in vals:
        check_number("value", v)
    m = sum(vals) / len(vals)
    sd = math.sqrt(sum((v - m) ** 2 for v in vals) / (len(vals) - 1))
    se = sd / math.sqrt(len(vals))
    gap = m - reference
    strong = math.inf if se == 0 and gap != 0 else (0.0 if se == 0 else abs(gap) / se)
    if gap > margin and (min(vals) > reference or strong > T_RATIO):
        return ABOVE
    if -gap > margin and (max(vals) < reference or strong > T_RATIO):
        return BELOW
    return WITHIN_NOISE


@dataclass(frozen=True)
class Ranking:
    """``compare_many``'s result: the arms, the one with the best mean, whether it is clearly
    apart from every other arm, and every pairwise ``Difference``."""

    arms: tuple[ArmSeeds, ...]
    best: str
    clear: bool
    differences: tuple[Difference, ...]
    metric: str = "the metric"
    margin: float = 0.0

    @property
    def verdict(self) -> str:
        return CLEAR if self.clear else WITHIN_NOISE

    def arm(self, name: str) -> ArmSeeds:
        for a in self.arms:
            if a.name == name:
                return a
        raise KeyError(f"no arm {name!r}; the arms are {[a.name for a in self.arms]}")

    def between(self, a: str, b: str) -> Difference:
        """The difference ``a`` against ``b`` (gap = mean(a) − mean(b)), in either order."""
        for d in self.differences:
            if (d.a.name, d.b.name) == (a, b):
                return d
            if (d.a.name, d.b.name) == (b, a):
                return Difference(d.b, d.a, d.better, -d.gap, d.margin, d.overlap,
                                  d.welch_ratio, d.verdict)
        raise KeyError(f"no arms {a!r} and {b!r}; the arms are {[x.name for x in self.arms]}")

    def table(self, digits: int = 3) -> str:
        """Each arm's mean and min–max, then each difference and its verdict, one short line
        each (rounded to ``digits``)."""
        f = f".{digits}f"
        lines = []
        for a in self.arms:
            div = f", {len(a.diverged)} diverged" if a.diverged else ""
            lines.append(f"{a.name}: mean {a.mean:{f}}, seeds {a.low:{f}} to {a.high:{f}}"
                         f" (n = {a.n}{div})")
        for d in self.differences:
            lines.append(f"{d.a.name} - {d.b.name}: {d.gap:+{f}} ({d.verdict})")
        return "\n".join(lines)


def compare_many(results: Mapping[str, Sequence | ArmSeeds], *, metric: str = "the metric",
                 better: str = "lower", margin: float = 0.0,
                 ceiling: float | None = None) -> Ranking:
    """Every pair of two or more arms (``{name: per-seed values or an ArmSeeds}``) by the
    comparison rule; the best arm is clear when it is clearly better than every other."""
    if not isinstance(results, Mapping) or len(results) < 2:
        raise ValueError("results must map two or more arm names to per-seed values")
    arms = tuple(replace(_as_arm(v, better, ceiling), name=str(k)) if isinstance(v, ArmSeeds)
                 else summarise(str(k), v, better=better, ceiling=ceiling)
                 for k, v in results.items())
    diffs = tuple(compare(x, y, better=better, margin=margin) for x, y in combinations(arms, 2))
    sign = 1.0 if better == "lower" else -1.0
    best = min(arms, key=lambda x: sign * x.mean)          # the first one on a tie
    apart = all(d.clear and d.better == best.name for d in diffs
                if best.name in (d.a.name, d.b.name))
    return Ranking(arms, best.name, apart, diffs, metric, float(margin))


def word_for(result: Difference | Ranking, expected: str) -> str:
    """The outcome word for a comparison whose claim predicts that arm ``expected`` is the
    better (of a ``Difference``) or the best (of a ``Ranking``): ``REPRODUCED`` when it clearly
    is, ``CONTRADICTED`` when another arm is clearly better than it, else ``NOT_SHOWN``."""
    if isinstance(result, Ranking):
        result.arm(expected)                            # a KeyError for an unknown arm
        if result.clear and result.best == expected:
            return REPRODUCED
        if result.best != expected and result.between(result.best, expected).clear:
            return CONTRADICTED
        return NOT_SHOWN
    if expected not in (result.a.name, result.b.name):
        raise KeyError(f"no arm {expected!r}; the arms are {result.a.name!r} and "
                       f"{result.b.name!r}")
    if not result.clear:
        return NOT_SHOWN
    return REPRODUCED if result.better == expected else CONTRADICTED


@dataclass(frozen=True)
class RatePick:
    """``best_rate``'s result: the grid, the rate with the best mean, the rates within noise of
    it (itself included), whether the best sits on a flat stretch that closes the grid where
    the bracket does not (``flat``: three or more neighbouring rates, the best among them,
    every one within noise of it, reaching each edge whose rate is within noise of the best;
    a flat grid is the stretch that spans both edges), at which edge the best sits
    (``"low"``, ``"high"`` or None), and whether the grid brackets it."""

    rates: tuple[float, ...]
    best: float
    tied: tuple[float, ...]
    flat: bool
    at_edge: str | None             # where the best (or a rate tied with it) touches the grid
    bracketed: bool

    @property
    def judgeable(self) -> bool:
        """True when a comparison may use this arm's best rate: bracketed, or on a flat
        stretch of three or more rates that reaches each edge the bracket leaves open (the loss
        does not depend on the rate there, so a rate past that edge is not expected to do
        clearly better)."""
        return self.bracketed or self.flat

    @property
    def flat_word(self) -> str:
        """The page's name for a judged best rate off the bracket: "flat grid" when every rate
        is within noise of the best, "flat stretch" when only the run reaching an edge is."""
        return "flat grid" if len(self.tied) == len(self.rates) else "flat stretch"


def best_rate(results: Mapping[float, Sequence], *, better: str = "lower", margin: float = 0.0,
              ceiling: float | None = None) -> RatePick:
    """The best learning rate of one arm on a grid (``{rate: per-seed values}`` or ``{rate:
    ArmSeeds}``), by mean, and whether the grid says so: bracketed when neither edge rate is the
    best or within noise of it (the optimum may otherwise lie beyond the grid). A single rate
    is never bracketed (``at_edge`` is ``"only"``)."""
    if not isinstance(results, Mapping) or not results:
        raise ValueError("results must map each learning rate to its per-seed values")
    for r in results:
        if isinstance(r, bool) or not isinstance(r, (int, float)) or not r > 0:
            raise ValueError(f"learning rates must be positive numbers, got {r!r}")
    rates = tuple(sorted(float(r) for r in results))
    arms = {float(r): (replace(_as_arm(v, better, ceiling), name=f"lr={r:g}")
                       if isinstance(v, ArmSeeds) else
                       summarise(f"lr={r:g}", v, better=better, ceiling=ceiling))
            for r, v in results.items()}
    sign = 1.0 if better == "lower" else -1.0
    best = min(rates, key=lambda r: sign * arms[r].mean)
    tied = tuple(r for r in rates if r == best or
                 not compare(arms[best], arms[r], better=better, margin=margin).clear)
    # the flat stretch: the run of neighbouring rates within noise of the best, the best among
    # them. Each side of the grid must be closed: its edge rate clearly worse than the best
    # (the bracket), or reached by a stretch of three or more rates (the loss does not depend
    # on the rate there). Two tied rates say nothing of a third. A clearly worse rate added
    # beyond an edge closes that side and leaves the other as it was (amended 2026-12-05, when
    # one rate added below a flat grid made it unjudgeable).
    at = rates.index(best)
    lo = hi = at
    while lo > 0 and rates[lo - 1] in tied:
        lo -= 1
    while hi < len(rates) - 1 and rates[hi + 1] in tied:
        hi += 1
    wide = hi - lo + 1 > 2
    closed = ((rates[0] not in tied or (wide and lo == 0))
              and (rates[-1] not in tied or (wide and hi == len(rates) - 1)))
    low, high = rates[0] in tied, rates[-1] in tied
    edge = "low" if low and not high else "high" if high and not low else \
        "both" if low and high else None
    if len(rates) == 1:
        edge = "only"                   # one rate: nothing on either side of it
    return RatePick(rates, best, tied, closed and edge is not None and len(rates) > 1, edge,
                    edge is None)


def exact_word(holds: bool) -> str:
    """The word for a part checked by exact arithmetic (a parameter count, a formula against
    the tensors): no seeds and no noise, the same on every machine. ``REPRODUCED`` when the
    claim's stated tolerance holds; ``CONTRADICTED`` when it does not, since a count outside
    the tolerance goes against the claim with nothing to blur it."""
    if isinstance(holds, (str, bytes)) or holds not in (True, False):
        raise TypeError(f"holds must be True or False, got {holds!r}")
    return REPRODUCED if holds else CONTRADICTED


def every_some_none(flags: Iterable[bool]) -> str:
    """``"every"``, ``"some"`` or ``"none"``: how many of a claim's cases hold."""
    flags = [bool(f) for f in flags]
    if not flags:
        raise ValueError("every_some_none needs at least one case")
    return "every" if all(flags) else "some" if any(flags) else "none"


#: Why a part of a claim could not be tested (``WhyNot.kind``), the three ways a test fails to
#: be put: a grid that does not bracket an arm's best rate (the optimum may lie beyond it), a
#: positive control that did not hold (no effect for the claim to be measured against), and a
#: design that cannot tell the alternatives apart (it does not reach the conditions the claim
#: is about).
UNBRACKETED = "best rate not bracketed"
NO_CONTROL = "no positive control"
CANNOT_TELL = "design cannot tell apart"
WHY_NOT = (UNBRACKETED, NO_CONTROL, CANNOT_TELL)


@dataclass(frozen=True)
class WhyNot:
    """Why one part of a claim could not be tested: the ``kind`` (``WHY_NOT``) and what shows
    it, so that the chapter can say it with its own numbers:

    * ``UNBRACKETED``: ``picks``, the ``RatePick`` of each arm whose best rate the grid does not
      bracket (each says where its best sits: ``at_edge`` is ``"low"``, ``"high"``,
      ``"both"`` or ``"only"``, one rate tried);
    * ``NO_CONTROL``: ``control``, the positive control's ``Difference`` that was not clear,
      or, for a control that had to train on every seed (not a comparison), ``statuses``, its
      runs' statuses, not all of them "trained";
    * ``CANNOT_TELL``: ``reached``, how far the design goes on the claim's axis, and
      ``needed``, where the claim is about (in the claim's units, e.g. an aspect ratio).

    Each kind needs its evidence: a reason without it would be a word the reader cannot check.
    """

    kind: str
    picks: tuple[RatePick, ...] = ()
    control: Difference | None = None
    reached: float | None = None
    needed: float | None = None
    statuses: tuple[str, ...] = ()

    def __post_init__(self):
        check_choice("kind", self.kind, WHY_NOT)
        object.__setattr__(self, "picks", tuple(self.picks))     # hashable, as frozen implies
        object.__setattr__(self, "statuses", tuple(self.statuses))
        if self.kind == UNBRACKETED:
            if not self.picks or not all(isinstance(p, RatePick) for p in self.picks):
                raise ValueError("an unbracketed grid needs picks: the RatePick of each arm "
                                 "whose best rate sits at an edge")
            judged = [p.best for p in self.picks if p.judgeable]
            if judged:
                raise ValueError(f"picks must be the unbracketed ones; the grid brackets the "
                                 f"best rate {judged[0]:g}")
        elif self.kind == NO_CONTROL:
            if self.statuses:
                if self.control is not None or all(s == "trained" for s in self.statuses):
                    raise ValueError(f"a control judged by its runs needs statuses not all "
                                     f"'trained' and no control Difference; got "
                                     f"{self.statuses} and control={self.control!r}")
            elif not isinstance(self.control, Difference):
                raise ValueError("no positive control needs control: the Difference of the "
                                 "control that did not hold (or statuses: the runs of a "
                                 "control that had to train)")
        elif self.reached is None or self.needed is None:
            raise ValueError("a design that cannot tell the alternatives apart needs reached "
                             "(how far it goes) and needed (where the claim is about)")
        else:
            check_number("reached", self.reached, extra="(how far the design goes)")
            check_number("needed", self.needed, extra="(where the claim is about)")


@dataclass(frozen=True)
class Outcome:
    """What happened to one part of a claim: its word (``OUTCOMES``), the part's name, the
    reason (a ``WhyNot``) when and only when it could not be tested, the comparison behind
    it, and — within noise — whether the means leaned the way the claim says."""

    word: str
    part: str
    reason: WhyNot | None = None
    difference: Difference | None = None
    leans_as_claimed: bool | None = None

    def __post_init__(self):
        check_choice("word", self.word, OUTCOMES)
        if self.reason is not None and not isinstance(self.reason, WhyNot):
            raise TypeError(f"reason must be a WhyNot (its kind and evidence; the chapter "
                            f"writes the sentence), got {type(self.reason).__name__}")
        if (self.word == NOT_TESTABLE) != (self.reason is not None):
            raise ValueError(f"part {self.part!r}: a reason goes with {NOT_TESTABLE!r} and "
                             f"only with it (got {self.word!r} and reason={self.reason!r})")


def outcome(diff: Difference | None, expected: str, *, part: str = "", testable: bool = True,
            why_not: WhyNot | None = None) -> Outcome:
    """The word for a part whose claim predicts that arm ``expected`` is better: not testable
    (say ``why_not``, a ``WhyNot``: no positive control, an unbracketed grid, a design that
    cannot tell the alternatives apart); reproduced when the difference is clear that way;
    contradicted here when it is clear the other way; not shown here when it is within
    noise."""
    if not testable or diff is None:
        if why_not is None:
            raise ValueError("a part that could not be tested needs why_not: the reason")
        return Outcome(NOT_TESTABLE, part, why_not, diff)
    if expected not in (diff.a.name, diff.b.name):
        raise KeyError(f"no arm {expected!r}; the arms are {diff.a.name!r} and {diff.b.name!r}")
    if diff.clear:
        return Outcome(REPRODUCED if diff.better == expected else CONTRADICTED, part, None, diff)
    return Outcome(NOT_SHOWN, part, None, diff, diff.better == expected)


def from_bracket(*picks: RatePick) -> tuple[bool, WhyNot | None]:
    """(testable, why not) for a comparison between arms at these best rates: not testable
    while any arm's best rate sits at an edge of its grid; the ``WhyNot`` holds those arms'
    picks."""
    edges = tuple(p for p in picks if not p.judgeable)
    if not edges:
        return True, None
    return False, WhyNot(UNBRACKETED, picks=edges)


def combine(words: Sequence[str]) -> str:
    """A claim's headline word from the words of its parts (or of the cases a claim covers:
    depths, budgets). It is never simply the worst of several: every part reproduced ->
    reproduced; some but not all -> reproduced in part; none -> the parts' common word, or else
    contradicted here if any part is, else not shown here if any part is, else not testable
    here. That last order is a last resort for a one-word headline, not a verdict on the
    parts: the claims page and the chapters show a row per part, with its own word, and a
    reader should read those."""
    words = [check_choice("word", w, OUTCOMES) for w in words]
    if not words:
        raise ValueError("combine needs at least one word")
    if all(w == REPRODUCED for w in words):
        return REPRODUCED
    if REPRODUCED in words or IN_PART in words:
        return IN_PART
    if len(set(words)) == 1:
        return words[0]
    for w in (CONTRADICTED, NOT_SHOWN):
        if w in words:
            return w
    return NOT_TESTABLE


def claim_outcome(parts: Sequence[Outcome]) -> str:
    """``combine`` of the parts' words."""
    if not parts:
        raise ValueError("claim_outcome needs at least one part")
    return combine([p.word for p in parts])
