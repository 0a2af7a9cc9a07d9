"""Chapter 7's rules for claims C16 (per-token latency grows about linearly with depth) and
C17 (at equal parameters, shallower is faster per token), and the trained shapes of chapter 6
that it times.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from typing import Sequence

from depthnotes.bench.latency import (CacheSize, LatencyResult, Timing, fit_latency,
                                      memory_resident, paired_ratios, ridge_point,
                                      round_intercepts)
from depthnotes.core.fitting import LinearFit, log_log_fit
from depthnotes.core.checks import check_number
from depthnotes.core.config import ModelConfig
from depthnotes.verdicts.evidence import (ABOVE, BELOW, IN_PART, NOT_SHOWN, NOT_TESTABLE,
                                          REPRODUCED, WITHIN_NOISE, against)


def versus_spread(values: Timing, threshold: float) -> str:
    """Round-by-round timings (or their ratios) against a fixed ``threshold``:
    ``"above"``, ``"below"`` or ``"within noise"`` by the evidence library's rule
    (``evidence.against``: every round past it, or the mean past it by 3 standard errors)."""
    check_number("threshold", threshold)
    return against(values.samples, threshold)


#: ``versus_one``'s margin: a ratio counts as different from 1 only when its mean is more than
#: this fraction away from it (a smaller difference is within what one setting's noise and
#: the order of the settings in a round can produce).
RATIO_MARGIN = 0.05


def versus_one(ratios: Timing, margin: float = RATIO_MARGIN) -> str:
    """Whether round-by-round ratios (``paired_ratios``) differ from 1 by more than
    ``margin`` (``evidence.against`` with that margin): ``"above"``, ``"below"`` or
    ``"within noise"``."""
    check_number("margin", margin, low=0.0)
    return against(ratios.samples, 1.0, margin=margin)


#: ``roof_limit``'s words: which of one core's two roofs holds a computation back.
MEMORY_BOUND, COMPUTE_BOUND = "memory-bound", "compute-bound"


def roof_limit(intensity: float, peak_gflops: float, read_gbs: Timing) -> str:
    """Which roof limits a computation of ``intensity`` FLOPs per byte read on one core:
    ``MEMORY_BOUND`` left of the ridge point (peak / read rate, ``bench.latency.ridge_point``),
    ``COMPUTE_BOUND`` right of it, or ``evidence.WITHIN_NOISE`` when the rounds cannot tell.

    The ridge comes from timings, so one number cannot decide it: each round's read rate
    (``read_gbs``, one sample per round of ``measure_rounds``) gives that round's ridge, and
    the rounds are held against ``intensity`` by ``versus_spread`` (every round on one side,
    or the mean past it by three standard errors), so a slow round on a busy machine blurs
    the word into "within noise" instead of flipping it or raising. The peak is measured once
    (the best of its repeats): the rounds' spread is the read rate's."""
    check_number("intensity", intensity, low=0.0, low_open=True)
    ridges = Timing.of(ridge_point(peak_gflops, g) for g in read_gbs.samples)
    side = versus_spread(ridges, intensity)            # the ridge against the intensity
    return {ABOVE: MEMORY_BOUND, BELOW: COMPUTE_BOUND}.get(side, WITHIN_NOISE)


#: C16's rule (``c16_verdict``), on each memory-resident depth's fastest round (a busy
#: machine only adds time, so the minimum is the cleanest estimate of what a depth costs):
#: the line ms = a + b*L through them must rise (b > 0) and explain more than C16_MIN_R2 of
#: their variation.
C16_MIN_R2 = 0.9
#: C16: the slopes of consecutive depth intervals must also agree within this factor (the
#: largest over the smallest): a line through three points can have R^2 near 1 and still bend.
C16_SLOPE_FACTOR = 1.25


@dataclass(frozen=True)
class DepthLine:
    """C16's evidence: each memory-resident depth's fastest round, the line through them, the
    slope of every interval between consecutive depths, and the head's own time per token."""

    depths: tuple[int, ...]
    ms: tuple[float, ...]                   # fastest round per depth
    fit: LinearFit
    interval_slopes: tuple[float, ...]      # ms per block between consecutive depths
    head_ms: float                          # embedding, final norm, head, argmax alone
    round_intercepts: Timing                # the line's intercept fitted round by round

    @property
    def rises(self) -> bool:
        return self.fit.slope > 0 and min(self.interval_slopes) > 0

    @property
    def straight(self) -> bool:
        """R^2 above the bar and the interval slopes within C16_SLOPE_FACTOR of each other."""
        lo, hi = min(self.interval_slopes), max(self.interval_slopes)
        return self.fit.r2 > C16_MIN_R2 and lo > 0 and hi / lo <= C16_SLOPE_FACTOR

    @property
    def slope_spread(self) -> float:
        """The largest interval slope over the smallest (inf when one is not positive)."""
        lo, hi = min(self.interval_slopes), max(self.interval_slopes)
        return hi / lo if lo > 0 else math.inf

    @property
    def intercept_physical(self) -> bool:
        """A token costs at least its head: a line whose intercept is clearly below the
        head's own time does not describe the shallow end, however well it fits the measured
        depths. Clearly: the intercepts fitted round by round lie below the head's time by the
        evidence library's rule (``versus_spread``), as every other timing comparison of the
        chapter is judged; one point estimate a fraction of a millisecond under it is not."""
        return versus_spread(self.round_intercepts, self.head_ms) != BELOW

    def word(self) -> str:
        """Reproduced: the line rises, is straight, and its intercept is not clearly below
        the head's time. In part: it rises and is straight, but its intercept is clearly below
        the head's time (linear over the measured depths only). Not shown: it rises but is not straight on
        this run. Not testable here: fewer than three memory-resident depths."""
        if len(self.depths) < 3:
            return NOT_TESTABLE
        if not self.rises or not self.straight:
            return NOT_SHOWN
        return REPRODUCED if self.intercept_physical else IN_PART

    def said(self) -> str:
        """The word with the clause of the rule that decided it, for a summary line: what
        made a reproduced or in-part line so (the intercept against the head's time); the
        word alone otherwise."""
        word = self.word()
        clause = {
            REPRODUCED: "a straight line whose intercept is not clearly below the head's own "
                        "time, ",
            IN_PART: "straight, but its intercept is clearly below the head's own time "
                     "(linear over the measured depths only), "}
        return clause.get(word, "") + word


def c16_verdict(results: Sequence[LatencyResult], cache: CacheSize | int,
                head: Timing) -> DepthLine:
    """C16's ``DepthLine`` from one ``measure_rounds`` call's results (the memory-resident
    ones are used) and the head's timing (``head_latency``); ``.word()`` is the verdict."""
    kept = sorted((r for r in results if memory_resident(r.weight_bytes, cache)),
                  key=lambda r: r.n_layer)
    if len({r.n_layer for r in kept}) != len(kept) or len(kept) < 2:
        raise ValueError(f"c16_verdict needs >= 2 distinct memory-resident depths, got "
                         f"{[r.n_layer for r in kept]}")
    L = tuple(r.n_layer for r in kept)
    ms = tuple(r.decode.min for r in kept)
    slopes = tuple((b - a) / (l2 - l1) for a, b, l1, l2 in zip(ms, ms[1:], L, L[1:]))
    return DepthLine(L, ms, fit_latency(L, ms), slopes, head.min, round_intercepts(kept, cache))


#: C16's head part (``head_word``): with a large vocabulary the line's intercept must rise by
#: more than this share of the head's own time per token ...
HEAD_INTERCEPT_SHARE = 0.5
#: ... and its slope per block stay within this factor of the small vocabulary's (either way).
HEAD_SLOPE_FACTOR = 1.5


def head_word(small: LinearFit, big: LinearFit, blocks: LinearFit, head_ms: float) -> str:
    """C16's head part, "the head is a fixed cost per token, not a cost per block": the
    lines ms = a + b*L with a small vocabulary (``small``) and with a large one (``big``,
    through the memory-resident depths), the large-vocabulary blocks' own times (each
    token's time minus the head's) fitted alone (``blocks``), and the head's own time
    ``head_ms``. Reproduced when the intercept rises by more than ``HEAD_INTERCEPT_SHARE``
    of ``head_ms``, the slope stays strictly within ``HEAD_SLOPE_FACTOR`` of the small
    vocabulary's, and ``blocks`` has R^2 above ``C16_MIN_R2``; else not shown here (judged,
    not asserted: a busy machine can blur one timing, and the word then says so; a small
    vocabulary's line that does not rise leaves no slope to keep, and is not shown here
    too)."""
    check_number("head_ms", head_ms, low=0.0)
    holds = (small.slope > 0
             and big.intercept - small.intercept > HEAD_INTERCEPT_SHARE * head_ms
             and 1 / HEAD_SLOPE_FACTOR < big.slope / small.slope < HEAD_SLOPE_FACTOR
             and blocks.r2 > C16_MIN_R2)
    return REPRODUCED if holds else NOT_SHOWN


#: C17's rule (``c17_verdict``). The claim is made for the shapes chapter 6 trains, whose
#: weights sit in cache: there the deepest shape of every family must be more than
#: ``C17_MIN_RATIO`` times slower than its shallowest in every round. Where every shape streams
#: from memory ("Where it stops holding") the claim is expected to weaken: such a family must
#: still be slower at its deep end in every round, and it makes the verdict "reproduced in
#: part" when it is not above ``C17_MIN_RATIO`` in every round or when its depth exponent
#: (time ~ L^k between its ends) is below ``C17_CAVEAT_FACTOR`` times the smallest
#: cache-resident family's.
C17_MIN_RATIO = 1.5


#: C17's weakening rule: a memory-streaming family whose depth exponent is below this fraction
#: of the smallest cache-resident family's makes the verdict "reproduced in part".
C17_CAVEAT_FACTOR = 0.5


@dataclass(frozen=True)
class DepthCost:
    """A family of (about) equal parameter count, its shallowest against its deepest shape."""

    shallow: int        # depth of the shallowest shape
    deep: int           # depth of the deepest shape
    ratio: Timing       # deep / shallow ms per token, round by round (paired_ratios)
    exponent: float     # k with ratio = (deep / shallow)^k, from the median ratio (the log-log
                        # slope through its two ends): 1 when time counts blocks, 0 when depth
                        # is free; comparable across depth ranges
    memory_bound: bool  # every shape's weights are memory-resident (cache_regime)


def depth_cost(results: Sequence[LatencyResult], cache: CacheSize | int) -> DepthCost:
    """``DepthCost`` of one family's results (from one ``measure_rounds`` call)."""
    if len({r.n_layer for r in results}) < 2:
        raise ValueError("depth_cost needs a family with >= 2 different depths")
    lo = min(results, key=lambda r: r.n_layer)
    hi = max(results, key=lambda r: r.n_layer)
    ratio = paired_ratios(hi.decode, lo.decode)
    return DepthCost(lo.n_layer, hi.n_layer, ratio,
                     log_log_fit([lo.n_layer, hi.n_layer], [1.0, ratio.median]).slope,
                     all(memory_resident(r.weight_bytes, cache) for r in results))


@dataclass(frozen=True)
class C17Verdict:
    """C17's word and the families that decided it (``c17_verdict``), each a ``DepthCost``, in
    the order given: the chapter writes the reason from them and its published numbers.

    ``not_slower``: the deepest shape not clearly slower than the shallowest; ``under_ratio``:
    a cache-resident family not clearly more than ``C17_MIN_RATIO`` times slower (either makes
    the claim not shown). ``memory_under_ratio``: a memory-bound family not clearly above
    ``C17_MIN_RATIO``; ``memory_flat``: a memory-bound family whose exponent is below
    ``C17_CAVEAT_FACTOR`` x ``cache_exponent``, the smallest cache-resident family's (None
    without one) (either makes it reproduced in part)."""

    word: str
    not_slower: tuple[DepthCost, ...]
    under_ratio: tuple[DepthCost, ...]
    memory_under_ratio: tuple[DepthCost, ...]
    memory_flat: tuple[DepthCost, ...]
    cache_exponent: float | None


def c17_verdict(families: Sequence[DepthCost]) -> C17Verdict:
    """Claim C17's verdict and the families behind it, by one rule (the constants above),
    every comparison judged round by round with ``versus_spread``:

    * "not shown here" if any family's deepest shape is not clearly slower than its
      shallowest, or any family not wholly memory-bound is not clearly more than
      ``C17_MIN_RATIO`` times slower;
    * "reproduced in part" if a memory-bound family is not clearly more than ``C17_MIN_RATIO``
      times slower, or its exponent is below ``C17_CAVEAT_FACTOR`` times the smallest
      exponent of the other families (depth still costs, but far less);
    * "reproduced" otherwise."""
    if not families:
        raise ValueError("c17_verdict needs at least one family")
    above = [versus_spread(f.ratio, C17_MIN_RATIO) == "above" for f in families]
    not_slower = tuple(f for f in families if versus_spread(f.ratio, 1.0) != "above")
    under = tuple(f for f, ok in zip(families, above) if not ok and not f.memory_bound)
    cached = [f.exponent for f in families if not f.memory_bound]
    least = min(cached) if cached else None
    memory_under = tuple(f for f, ok in zip(families, above) if not ok and f.memory_bound)
    memory_flat = tuple(f for f in families if f.memory_bound and least is not None
                        and f.exponent < C17_CAVEAT_FACTOR * least)
    word = (NOT_SHOWN if not_slower or under else
            IN_PART if memory_under or memory_flat else REPRODUCED)
    return C17Verdict(word, not_slower, under, memory_under, memory_flat, least)


# -- chapter 6's shapes -------------------------------------------------------------------
# Chapter 7 times the shapes chapter 6 trains and reads their losses from the same place as
# chapter 6's verdict: each shape at its best rate of the six-rate grid
# (``ch6_budget.basin_grid``, whose ``BASIN_RECORDS`` is the one place that names the records).


@dataclass(frozen=True)
class BudgetSweepShape:
    """One trained shape of chapter 6's sweep: its budget, its config, its validation loss."""

    budget: int
    config: ModelConfig
    loss: float                      # mean over the record's seeds
    loss_range: tuple[float, float]  # min and max over the seeds
    seeds: int                       # how many seeds the loss is the mean of
    steps: int                       # training steps of the arm's recipe


def budget_sweep_shapes(record=None, metric: str = "eval_loss",
                        min_context: int = 0) -> list[BudgetSweepShape]:
    """The shapes of chapter 6's budget sweep with their final ``metric``, in the record's order.

    ``record`` is a ``records.Record``, a record name, or None for chapter 6's grid with each
    shape at its best rate (``ch6_budget.basin_grid``): the losses chapter 6 judges.
    Each arm's stored model config is used as it was trained, its context raised to at least
    ``min_context`` (the positions a timing needs; it changes no weight that a step reads)."""
    from depthnotes.experiments.records import Record, load_record

    if record is None:
        from depthnotes.verdicts.ch6_budget import basin_grid
        record = basin_grid()[2]
    elif not isinstance(record, Record):
        record = load_record(record)
    final = record.final(metric)
    shapes = []
    for name in record.arms:
        arm = record.arm(name)
        config = ModelConfig(**arm["model"])
        if config.context < min_context:
            config = config.replace(context=min_context)
        if any(v is None for v in final[name]):
            raise ValueError(f"record {record.name!r}: arm {name!r} has no {metric} for some "
                             f"seed (got {final[name]}); chapter 7 needs one for every seed")
        losses = [float(v) for v in final[name]]
        shapes.append(BudgetSweepShape(int(arm["info"]["budget"]), config,
                                       statistics.fmean(losses), (min(losses), max(losses)),
                                       len(losses), int(arm["recipe"]["steps"])))
    return shapes
