"""Did a run train, train slowly, or stop? Chapter 4's rule for where post-norm stops
training, in one place.

A character model that learns nothing about the context ends at the **unigram loss**, the
entropy of the character frequencies (about 3.25 nats per character on the shipped corpus).
Chapter 4 states its rule before it shows the record ``postnorm_failure_depth``, and this
module is that rule, so the page's sentence, its table and its verdict come from one place:

* a run **trained** when its final validation loss is at least ``margin`` below the unigram
  loss; it **diverged** when the trainer stopped it (NaN, infinity, or a loss three times the
  first step's). A run that did neither **stalled** only when its validation loss is also
  flat at the end: the least-squares slope over the evaluations after the first half of
  the run (``late_slope`` with ``tail=EVAL_TAIL``) falls by less than ``flat`` (``FLAT_SLOPE``,
  0.05 nats per 100 steps). A run still falling faster than that is **slow**: it had not
  trained when the run ended, but it had not stopped (how the rule was read before, and why
  it changed: the book's methods page, ``book/methods.md``);
* a run's **time to train** is the first evaluation step at which its validation loss is
  below ``baseline - margin`` (None if it never is; a trained run always has one);
* over the seeds of one arm family at one depth, the family **trains** (every seed trained),
  **stops** (every seed stalled or diverged), is **slower** (no seed stalled or diverged, but
  at least one was still slow) or is **mixed** (otherwise);
* a family is scored at its best learning rate at each depth (``depth_outcomes``, by the
  evidence library's ``best_rate``), and a comparison that uses it can be judged only when
  the grid brackets that rate or it sits on a flat stretch (``evidence.from_bracket``): a
  family trained at one rate, or best at an edge of its grid, makes the comparison *not
  testable here*. One
  exception, for the family claimed to stop: if it trains at *no* rate of a grid of at least
  three rates there that reaches past its best rate at the shallowest depth on both sides
  (``trains_nowhere``), no rate it was tried at rescues it, and its stop counts;
* a family's **failure depth** is the shallowest depth at which it stops;
* the verdict on "plain post-norm stops training past a few dozen layers"
  (``failure_verdict``) needs the claimed family to train at the shallowest depth and stop at
  a deeper one, where the reference family trains with a validation loss clearly below it
  (the evidence library's rule, with the practical margin ``LOSS_MARGIN``). It is *not
  testable here* when the reference does not train there (no positive control) or a best
  rate is not bracketed, and *not shown here* when the claimed family does not fail. It is
  *contradicted here* when the claimed family trains with every seed at a depth of at least
  ``few_dozen``: one rate at which it trains there refutes "stops training". It is
  *reproduced in part* when an alternative family (another init, or warm-up) does not stop
  at that depth, or the failure depth is below ``few_dozen`` (``FEW_DOZEN``, 24: "a few
  dozen" layers): the part that did not hold is named.

In a comparison of losses a diverged run counts as the evidence library's ceiling, here the
uniform loss ln V (a model that learned nothing), and ranks below every run that did not
diverge. The same values choose the best learning rate.

The chapter's three checks at initialisation are rules here too: C6
(``variance_growth_word``, the residual stream's variance grows about linearly with depth),
C7 (``final_variance_word``, the variance into the final norm grows about tenfold from 10 to
100 blocks) and C8a (``gradient_spread_word``, gradients vanish or explode along a deep
stack).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np

from depthnotes.core.checks import check_int, check_number
from depthnotes.core.fitting import linear_fit
from depthnotes.verdicts.evidence import (CONTRADICTED, IN_PART, NO_CONTROL, NOT_SHOWN,
                                          NOT_TESTABLE, REPRODUCED, UNBRACKETED, ArmSeeds,
                                          RatePick, Ranking, best_rate, compare_many,
                                          from_bracket, summarise, word_for)

#: What one run did.
TRAINED, SLOW, STALLED, DIVERGED = "trained", "slow", "stalled", "diverged"
#: What one family did at one depth, over its seeds.
TRAINS, SLOWER, MIXED, STOPS = "trains", "slower", "mixed", "stops"
#: A run that did not train is "stalled" only if its validation loss falls by less than this
#: over the second half of the run (nats per 100 steps, least-squares slope; ``EVAL_TAIL``);
#: else "slow".
FLAT_SLOPE = 0.05
#: ``stored_run_status`` reads the slope of the validation loss over the evaluations after this
#: fraction of the run's steps (the second half).
EVAL_TAIL = 0.5
#: A run *trained* when its final validation loss ends at least this far below the unigram
#: loss (nats/char): chapter 4's rule, which chapter 5 applies too.
UNIGRAM_MARGIN = 0.25
#: "A few dozen layers": a failure depth below this makes the verdict a caveat.
FEW_DOZEN = 24
#: The practical margin for comparisons of validation loss (nats/char): a gap smaller than
#: this (2 % in perplexity) is not a finding, however tight the seeds.
LOSS_MARGIN = 0.02


def loss_ceiling(record, arm: str) -> float:
    """What a diverged run of ``arm`` counts as: the uniform loss ln V of its vocabulary."""
    return math.log(record.arm(arm)["model"]["vocab_size"])


def late_slope(steps, losses, tail: float = 2 / 3) -> float:
    """The least-squares slope of ``losses`` against ``steps`` over the points after ``tail``
    of the last step (``step > tail * last``; the last third by default), in nats per 100
    steps; NaN or None values (a diverged step) are left out. Negative when the loss still
    falls."""
    check_number("tail", tail, low=0.0, high=1.0, high_open=True)
    if len(steps) != len(losses) or not steps:
        raise ValueError(f"steps and losses must be non-empty and of one length, got "
                         f"{len(steps)} and {len(losses)}")
    cut = tail * steps[-1]
    pts = [(s, v) for s, v in zip(steps, losses)
           if s > cut and v is not None and math.isfinite(v)]
    if len({s for s, _ in pts}) < 2:
        raise ValueError(f"the points after step {cut:g} hold {len(pts)} finite losses; a "
                         f"slope needs two")
    return 100 * linear_fit([s for s, _ in pts], [v for _, v in pts]).slope


def time_to_train(steps, eval_losses, baseline: float, margin: float) -> int | None:
    """The first of ``steps`` at which the validation loss is below ``baseline - margin``;
    None if it never is (None or NaN values never are)."""
    return next((s for s, v in zip(steps, eval_losses)
                 if v is not None and math.isfinite(v) and v < baseline - margin), None)


def run_status(eval_loss: float | None, diverged: bool, slope: float | None,
               baseline: float, margin: float, flat: float = FLAT_SLOPE) -> str:
    """``"trained"``, ``"slow"``, ``"stalled"`` or ``"diverged"`` (module docstring) for a
    run that ended with validation loss ``eval_loss`` (None or NaN when it has none) and whose
    training loss had ``late_slope`` ``slope`` (may be None for a diverged or a trained run)."""
    check_number("baseline", baseline, low=0.0, low_open=True)
    check_number("margin", margin, low=0.0)
    check_number("flat", flat, low=0.0)
    if diverged:
        return DIVERGED
    if eval_loss is None or not math.isfinite(eval_loss):
        raise ValueError(f"eval_loss must be a finite number for a run that did not diverge, "
                         f"got {eval_loss!r}")
    if eval_loss < baseline - margin:
        return TRAINED
    if slope is None or not math.isfinite(slope):
        raise ValueError(f"slope must be a finite number for a run that did not train, got "
                         f"{slope!r} (late_slope of its training loss)")
    return STALLED if slope > -flat else SLOW


def stored_run_status(record, arm: str, seed: int, baseline: float, margin: float,
                      flat: float = FLAT_SLOPE) -> tuple[str, float | None]:
    """``(run_status, late_slope)`` of one stored run of ``record`` (a ``records.Record``):
    the slope is read from the run's validation-loss curve over the second half of the run
    (``EVAL_TAIL``), or from its training loss over the last third when fewer than two
    evaluations fall there (a run evaluated only at its end); None for a diverged run. The
    one place that says which curve a stored run's status reads."""
    final = record.run(arm, seed)["final"]
    slope = None
    if not final["diverged"]:
        steps, evals = record.curve(arm, "eval_loss", seed)
        tail = [s for s, v in zip(steps, evals) if steps and s > EVAL_TAIL * steps[-1]
                and v is not None and math.isfinite(v)]
        slope = (late_slope(steps, evals, tail=EVAL_TAIL) if len(tail) >= 2 else
                 late_slope(*record.curve(arm, "train_loss", seed)))
    return run_status(final["eval_loss"], final["diverged"], slope, baseline, margin,
                      flat), slope


@dataclass(frozen=True)
class DepthOutcome:
    """One arm family at one depth, at its best learning rate: each seed's status, the loss
    it is compared with, its time to train and its late slope."""

    family: str
    n_layer: int
    arm: str                        # the record's arm name (the best rate's)
    statuses: tuple[str, ...]       # one per seed, in seed order
    seeds: ArmSeeds                 # validation loss per seed (a diverged run: the ceiling)
    times: tuple = ()               # time_to_train per seed (int or None)
    slopes: tuple = ()              # late_slope per seed (None if diverged)
    lr: float | None = None         # the peak learning rate of ``arm``
    rates: tuple = ()               # ((lr, mean loss), ...) of every rate tried, best first
    pick: RatePick | None = None    # the best-rate pick over the rates tried
    by_rate: tuple = ()             # ((lr, outcome), ...) of every rate tried, rates ascending

    @property
    def losses(self) -> tuple[float, ...]:
        """Each seed's validation loss (the ceiling, ln V, for a run that diverged)."""
        return self.seeds.values

    @property
    def outcome(self) -> str:
        """``"trains"``, ``"stops"``, ``"slower"`` or ``"mixed"`` (module docstring)."""
        n = len(self.statuses)
        if sum(s == TRAINED for s in self.statuses) == n:
            return TRAINS
        stopped = sum(s in (STALLED, DIVERGED) for s in self.statuses)
        return STOPS if stopped == n else SLOWER if stopped == 0 else MIXED


def arm_outcome(record, arm: str, baseline: float, margin: float,
                 flat: float) -> DepthOutcome:
    """One arm of ``record``, every seed classified (the arm's family and depth from its
    info)."""
    info = record.arm(arm)["info"]
    statuses, losses, times, slopes = [], [], [], []
    for seed in record.seeds:
        final = record.run(arm, seed)["final"]
        status, slope = stored_run_status(record, arm, seed, baseline, margin, flat)
        statuses.append(status)
        slopes.append(slope)
        losses.append(None if status == DIVERGED else final["eval_loss"])
        times.append(None if status == DIVERGED else time_to_train(
            *record.curve(arm, "eval_loss", seed), baseline, margin))
    lr = info["lr"] if "lr" in info else record.arm(arm)["recipe"].get("lr")   # peak rate
    seeds = summarise(arm, losses, ceiling=loss_ceiling(record, arm))
    return DepthOutcome(info["family"], info["n_layer"], arm, tuple(statuses), seeds,
                        tuple(times), tuple(slopes), lr)


def depth_outcomes(record, baseline: float, margin: float,
                   flat: float = FLAT_SLOPE) -> dict[str, list[DepthOutcome]]:
    """``{family: [DepthOutcome, ...]}`` of a record whose arms carry ``info["family"]`` and
    ``info["n_layer"]`` (``postnorm_failure_depth``; the rate is ``info["lr"]``, else the
    recipe's), families in the record's order, depths ascending. A grid spread over several
    records is read as one: ``records.combine_records``.

    Each family is scored at its best learning rate at each depth (``evidence.best_rate`` over
    the validation losses, a diverged run at the ceiling ln V), and only that rate's runs
    enter its outcome; the rule is decided at each arm's best rate, never at one rate tuned
    for one arm. ``pick`` says whether the grid brackets that rate."""
    groups: dict[tuple[str, int], list[DepthOutcome]] = {}
    for arm in record.arms:
        row = arm_outcome(record, arm, baseline, margin, flat)
        groups.setdefault((row.family, row.n_layer), []).append(row)
    out: dict[str, list[DepthOutcome]] = {}
    for (family, _), tried in groups.items():
        by_rate = {r.lr: r for r in tried}
        if len(by_rate) != len(tried):
            raise ValueError(f"family {family!r} has two arms at one rate and depth")
        pick = best_rate({r.lr: r.seeds for r in tried}, margin=LOSS_MARGIN)
        ranked = sorted(tried, key=lambda r: (r.lr != pick.best, r.seeds.mean))
        rates = tuple((r.lr, r.seeds.mean) for r in ranked)
        outcomes = tuple((r.lr, r.outcome) for r in sorted(tried, key=lambda r: r.lr))
        out.setdefault(family, []).append(dataclasses.replace(ranked[0], rates=rates,
                                                              pick=pick, by_rate=outcomes))
    for rows in out.values():
        rows.sort(key=lambda r: r.n_layer)
    return out


#: The fewest rates a grid must hold for "trains at no rate of it" to stand in for a
#: bracketed best rate (``trains_nowhere``).
NOWHERE_RATES = 3


def trains_nowhere(row: DepthOutcome, shallow_best: float) -> bool:
    """True when ``row``'s family trained (every seed) at none of the rates tried at its
    depth, over a grid of at least ``NOWHERE_RATES`` rates that reaches past
    ``shallow_best`` (the family's best rate where it still trains) on both sides: no rate
    it was tried at rescues it, so its stop is judged although no best rate can be
    bracketed."""
    rates = [lr for lr, _ in row.by_rate]
    return (len(rates) >= NOWHERE_RATES and min(rates) < shallow_best < max(rates)
            and all(outcome != TRAINS for _, outcome in row.by_rate))


def failure_depth(rows: list[DepthOutcome]) -> int | None:
    """The shallowest depth at which the family stops training; None if it never does."""
    return next((r.n_layer for r in rows if r.outcome == STOPS), None)


def depths_by_outcome(rows: list[DepthOutcome]) -> dict[str, tuple[int, ...]]:
    """One family's outcome over depth: ``{outcome: depths}`` for each of ``"trains"``,
    ``"slower"``, ``"mixed"`` and ``"stops"`` (every key present, depths ascending, an empty
    tuple where none). The chapter's prose quotes these depths."""
    return {outcome: tuple(r.n_layer for r in rows if r.outcome == outcome)
            for outcome in (TRAINS, SLOWER, MIXED, STOPS)}


def stopped_runs(rows: list[DepthOutcome]) -> tuple[int, int]:
    """``(stopped, diverged)``: how many of one family's runs, over every depth, stalled or
    diverged, and how many of those diverged."""
    stopped = [s for r in rows for s in r.statuses if s in (STALLED, DIVERGED)]
    return len(stopped), sum(s == DIVERGED for s in stopped)


#: Which branch of ``failure_verdict``'s rule decided (``FailureVerdict.basis``), in the
#: order the rule tries them; the two that make it not testable are the evidence library's
#: reasons (``NO_CONTROL``: the reference stops too; ``UNBRACKETED``: a grid does not say).
TRAINS_DEEP = "trains past a few dozen layers"      # contradicted: one depth >= few_dozen trains
FAILS_SHALLOW = "fails at the shallowest depth"     # not shown: no depth effect to locate
NEVER_STOPS = "never stops"                         # not shown: no failure depth
COMPARED = "compared at the failure depth"        # the word comes from the comparison


@dataclass(frozen=True)
class FailureVerdict:
    """The outcome word for "``claim`` stops training past a few dozen layers", and what the
    rule read to reach it (the chapter writes the sentences around these fields).

    ``basis`` names the branch of the rule that decided (``TRAINS_DEEP`` ... ``COMPARED``);
    ``by_outcome`` is the claimed family's ``depths_by_outcome``. From the failure depth on:
    ``comparison`` (claim against reference there), ``reference_outcome``, ``picks`` (the
    best-rate picks the bracket test read, by family), ``not_stopped`` (each alternative
    that does not stop there, with its outcome) and ``short`` (the failure depth is below
    ``few_dozen``); the last two make a clear result *reproduced in part*."""

    word: str
    basis: str
    depth: int | None               # the claimed family's failure depth (None: never stops)
    by_outcome: dict                # {outcome: depths} of the claimed family
    few_dozen: int                  # the rule's "a few dozen layers"
    comparison: Ranking | None = None
    reference_outcome: str | None = None
    picks: dict = dataclasses.field(default_factory=dict)          # {family: RatePick}
    not_stopped: dict = dataclasses.field(default_factory=dict)    # {alternative: outcome}
    short: bool = False

    @property
    def trains_deep(self) -> tuple[int, ...]:
        """The depths of at least ``few_dozen`` at which the claimed family trains."""
        return tuple(L for L in self.by_outcome[TRAINS] if L >= self.few_dozen)


def failure_verdict(outcomes: dict[str, list[DepthOutcome]], claim: str, reference: str,
                    alternatives: tuple[str, ...] = (),
                    few_dozen: int = FEW_DOZEN) -> FailureVerdict:
    """Apply the rule of the module docstring to ``depth_outcomes``: does family ``claim``
    train shallow and stop deeper, where ``reference`` trains clearly better? Each of
    ``alternatives`` (the other post-norm families) that does not stop at that depth, and a
    failure depth below ``few_dozen``, make the result *reproduced in part*
    (``not_stopped``, ``short``)."""
    check_int("few_dozen", few_dozen)
    for name in (claim, reference, *alternatives):
        if name not in outcomes:
            raise KeyError(f"no family {name!r}; the families are {list(outcomes)}")
    rows = outcomes[claim]
    depth = failure_depth(rows)
    seen = dict(depth=depth, by_outcome=depths_by_outcome(rows), few_dozen=few_dozen)
    if any(L >= few_dozen for L in seen["by_outcome"][TRAINS]):
        return FailureVerdict(CONTRADICTED, TRAINS_DEEP, **seen)
    if rows[0].outcome != TRAINS:
        return FailureVerdict(NOT_SHOWN, FAILS_SHALLOW, **seen)
    if depth is None:
        return FailureVerdict(NOT_SHOWN, NEVER_STOPS, **seen)
    at = {}
    for name in (claim, reference, *alternatives):
        match = [r for r in outcomes[name] if r.n_layer == depth]
        if not match:
            raise KeyError(f"family {name!r} was not trained at L = {depth}")
        at[name] = match[0]
    cmp = compare_many({claim: at[claim].seeds, reference: at[reference].seeds},
                       metric=f"validation loss at L = {depth}", margin=LOSS_MARGIN)
    seen.update(comparison=cmp, reference_outcome=at[reference].outcome)
    if at[reference].outcome != TRAINS:
        return FailureVerdict(NOT_TESTABLE, NO_CONTROL, **seen)
    # the claimed family's best rate need not be bracketed if it trains at no rate there
    read = (reference,) if trains_nowhere(at[claim], rows[0].lr) else (claim, reference)
    picks = {name: at[name].pick for name in read}
    testable, _ = from_bracket(*picks.values())
    if not testable:
        return FailureVerdict(NOT_TESTABLE, UNBRACKETED, **seen, picks=picks)
    not_stopped = {name: at[name].outcome for name in alternatives
                   if at[name].outcome != STOPS}
    short = depth < few_dozen
    word = word_for(cmp, reference)
    if word == REPRODUCED and (not_stopped or short):
        word = IN_PART
    return FailureVerdict(word, COMPARED, **seen, picks=picks, not_stopped=not_stopped,
                          short=short)


def seed_curves(record, arm: str, key: str = "train_loss") -> tuple[list, list]:
    """``record.curves(arm, key)`` with missing values (a diverged step, stored as null) as
    NaN, ready for ``plots.plot_seed_curves``."""
    steps, values = record.curves(arm, key)
    return steps, [[math.nan if v is None else v for v in seed] for seed in values]


# -- the chapter's checks at initialisation (C6, C7, C8a) ----------------------------------
#: C6's bands on each seed's ``half_slope_ratio``: the growth is linear when every ratio lies
#: within a factor ``LINEAR_TOL`` of 1, slightly bent (super- or sub-linear) when every ratio
#: lies within a factor ``SUPER_MAX``.
LINEAR_TOL, SUPER_MAX = 1.2, 2.0
#: C6's shapes of growth, as ``variance_growth_word`` names them.
LINEAR, SUPER_LINEAR, SUB_LINEAR, NOT_LINEAR = ("linear", "slightly super-linear",
                                                "slightly sub-linear", "not about linear")


def half_slope_ratio(profile) -> float:
    """The second half's least-squares slope over the first half's, of one variance profile
    (blocks 0 .. L; the halves share the middle block): 1 for a straight line, above 1 when
    later blocks add more."""
    profile = np.asarray(profile, dtype=float)
    if profile.ndim != 1 or len(profile) < 4:
        raise ValueError(f"profile must be one profile of at least 4 points, got shape "
                         f"{profile.shape}")
    mid, x = len(profile) // 2, np.arange(len(profile))
    first = linear_fit(x[:mid + 1], profile[:mid + 1]).slope
    return linear_fit(x[mid:], profile[mid:]).slope / first


def variance_growth_word(ratios, low: float = 1 / SUPER_MAX) -> tuple[str, str]:
    """C6's shape of growth and its word, from each seed's ``half_slope_ratio``: linear and
    reproduced when every ratio lies within ``LINEAR_TOL`` of 1 (either way); slightly super-
    or sub-linear (by the mean ratio) and reproduced in part when every ratio lies between
    ``low`` and ``SUPER_MAX``; else not about linear and not shown here. ``low``, the
    bent band's lower end, is 1 / ``SUPER_MAX`` (a bend either way); 1 / ``LINEAR_TOL``
    gives a bent band for upward bends only (the methods page says why the chapter shows
    that word too)."""
    ratios = [check_number("ratio", r) for r in ratios]
    if not ratios:
        raise ValueError("variance_growth_word needs one ratio per seed, got none")
    if all(1 / LINEAR_TOL <= r <= LINEAR_TOL for r in ratios):
        return LINEAR, REPRODUCED
    if all(low <= r <= SUPER_MAX for r in ratios):
        return (SUPER_LINEAR if np.mean(ratios) > 1 else SUB_LINEAR), IN_PART
    return NOT_LINEAR, NOT_SHOWN


# C7 and C8a
#: C7's band: the variance into the final norm at L = 100 against L = 10 is "about 10x" when
#: the ratio of the means lies strictly inside it (within a factor of two of ten).
C7_BAND = (5, 20)
#: C8a's bar: gradients "vanish or explode" along a stack when the largest per-block gradient
#: norm (blocks 2 to L, mean profile over seeds) is more than this many times the smallest.
SPREAD_LIMIT = 100


def final_variance_word(ratio: float, band: tuple[float, float] = C7_BAND) -> str:
    """C7's word from the ratio of the mean variances into the final norm (L = 100 over
    L = 10): reproduced when it lies strictly inside ``band``, else not shown here."""
    check_number("ratio", ratio, low=0.0)
    low, high = band
    return REPRODUCED if low < ratio < high else NOT_SHOWN


def gradient_spread_word(spread: float, limit: float = SPREAD_LIMIT) -> str:
    """C8a's word from the largest gradient spread over the arms (largest over smallest
    per-block gradient norm, blocks 2 to L): reproduced when it exceeds ``limit``, else not
    shown here."""
    check_number("spread", spread, low=1.0)
    return REPRODUCED if spread > limit else NOT_SHOWN
