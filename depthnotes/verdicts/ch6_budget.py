"""Chapter 6's rules for splitting a fixed parameter budget between depth and width (claims
C14, C15). The sweep itself trains in ``training.budget`` (``budget_sweep``, ``lr_for_width``);
the real models' shapes are ``data.published_shapes``.

* ``judge_basin`` applies the basin rule (``basin_rule`` states it) to per-seed losses of
  one budget's shapes; ``basins_from_record`` does it for every budget of a record such as
  ``budget_basin``; ``basin_claim_word`` turns the basins into the claims page's word.
* ``end_gap_trend`` follows the gap between a budget's deepest and shallowest shape over the
  record's evaluations (is it closing with more tokens?), by the rule ``gap_trend_rule`` states.
* ``aspect_claim_word`` judges C15 on ``PUBLISHED_SHAPES`` by the rule ``aspect_rule`` states.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import median

from depthnotes.core.checks import check_int, check_number
from depthnotes.core.config import aspect_ratio
from depthnotes.data.published_shapes import PUBLISHED_SHAPES
from depthnotes.verdicts.compare import (MIN_SEEDS, NOT_REPRODUCED, REPRODUCED, WITH_CAVEATS,
                                         ArmSummary, compare)


# -- the basin rule (C14) ---------------------------------------------------------------------
#: The smallest band a basin gets, as a fraction of the best shape's mean loss: Kaplan et al.
#: call loss "within a few per cent" flat; 2 % (about 0.03 nats at a loss of 1.5) is the
#: strict end of that, and about the seed range the calibration run measured.
BASIN_FLOOR = 0.02
#: A basin is "broad" (the claim's flat middle) when it holds at least this many shapes.
BROAD_SHAPES = 3


def basin_rule(floor: float = BASIN_FLOOR, broad: int = BROAD_SHAPES) -> str:
    """The rule ``judge_basin`` applies, as the sentence a chapter prints above the result."""
    return (f"For each budget: the band is the best shape's mean loss (over seeds) plus the "
            f"larger of {floor:.0%} of that mean and the largest min-max seed range of any "
            f"shape of the budget. A shape is in the basin when its mean lies inside the "
            f"band. An end (the shallowest or the deepest shape) is worse when its mean lies "
            f"above the band, so its gap to the best exceeds every seed range (a clear "
            f"difference by verdicts.compare). The claim's shape, on one budget: both ends "
            f"worse and at least {broad} shapes in the basin. Verdict: reproduced when every "
            f"budget has the claim's shape, with caveats when some do, not reproduced at "
            f"this scale when none does. At least {MIN_SEEDS} seeds per shape.")


@dataclass(frozen=True)
class BasinShape:
    """One shape of a budget: its seeds summarised, its gap to the best, and the verdict."""

    label: str
    n_layer: int
    d_model: int
    summary: ArmSummary       # per-seed losses, mean, min-max
    gap: float                # mean - the best shape's mean (>= 0)
    inside: bool              # in the basin

    @property
    def aspect_ratio(self) -> float:
        return aspect_ratio(self.n_layer, self.d_model)


@dataclass(frozen=True)
class Basin:
    """The basin of one budget (``judge_basin``). ``shapes`` run from shallow to deep."""

    budget: int
    shapes: tuple[BasinShape, ...]
    floor: float              # the relative floor used
    width: float              # band height above the best mean, in nats
    broad_shapes: int

    @property
    def best(self) -> BasinShape:
        return min(self.shapes, key=lambda s: s.summary.mean)

    @property
    def band(self) -> tuple[float, float]:
        """(best mean, best mean + width): the band drawn on the figure."""
        low = self.best.summary.mean
        return low, low + self.width

    @property
    def inside(self) -> tuple[BasinShape, ...]:
        return tuple(s for s in self.shapes if s.inside)

    @property
    def shallow(self) -> BasinShape:
        return self.shapes[0]

    @property
    def deep(self) -> BasinShape:
        return self.shapes[-1]

    @property
    def shallow_worse(self) -> bool:
        return not self.shallow.inside

    @property
    def deep_worse(self) -> bool:
        return not self.deep.inside

    @property
    def broad(self) -> bool:
        return len(self.inside) >= self.broad_shapes

    @property
    def claim_shape(self) -> bool:
        """Both ends worse and a broad basin: what C14 predicts for this budget."""
        return self.shallow_worse and self.deep_worse and self.broad

    @property
    def aspect_span(self) -> tuple[float, float]:
        """The smallest and largest d/L inside the basin."""
        ratios = [s.aspect_ratio for s in self.inside]
        return min(ratios), max(ratios)

    def ends(self) -> str:
        """Where this budget departs from the claim, in words (for a verdict line)."""
        def end(name, s):
            word = "worse" if not s.inside else "in the basin"
            return f"{name} end (L = {s.n_layer}) {word}, {s.gap:+.3f}"
        return (f"P = {self.budget:,}: best L = {self.best.n_layer}, band {self.width:.3f}; "
                f"{end('shallow', self.shallow)}; {end('deep', self.deep)}")

    def table(self, digits: int = 3) -> str:
        """Each shape: L, d, d/L, mean and min-max over seeds, gap, in the basin or not."""
        lines = [f"P = {self.budget:,}: band {self.band[0]:.{digits}f}-"
                 f"{self.band[1]:.{digits}f} (width {self.width:.{digits}f})"]
        for s in self.shapes:
            a = s.summary
            lines.append(f"  L = {s.n_layer:>2}  d = {s.d_model:>3}  d/L = "
                         f"{s.aspect_ratio:6.1f}  mean {a.mean:.{digits}f}  min-max "
                         f"{a.low:.{digits}f}-{a.high:.{digits}f}  gap {s.gap:+.{digits}f}  "
                         f"{'basin' if s.inside else 'outside'}")
        return "\n".join(lines)


def judge_basin(budget: int, shapes, *, floor: float = BASIN_FLOOR,
                broad: int = BROAD_SHAPES, seed_range: bool = True) -> Basin:
    """Apply ``basin_rule`` to one budget. ``shapes`` is a sequence of ``(label, n_layer,
    d_model, losses)`` with ``losses`` one final loss per seed (at least ``MIN_SEEDS``,
    finite); the seeds are summarised by ``verdicts.compare``.

    ``seed_range=False`` is a what-if, not the rule: the band is the floor alone, so a chapter
    can show how much the seed range decides (an end outside that band need not be clearly
    apart from the best)."""
    check_int("budget", budget)
    check_number("floor", floor, low=0.0)
    check_int("broad", broad)
    shapes = sorted(shapes, key=lambda s: s[1])
    if len(shapes) < 2:
        raise ValueError(f"budget {budget}: a basin needs at least 2 shapes, got {len(shapes)}")
    if len({s[1] for s in shapes}) != len(shapes):
        raise ValueError(f"budget {budget}: one shape per depth, got depths "
                         f"{[s[1] for s in shapes]}")
    summaries = compare({label: list(losses) for label, _, _, losses in shapes},
                        metric="validation loss").arms
    best = min(a.mean for a in summaries)
    width = max(floor * best, max(a.spread for a in summaries) if seed_range else 0.0)
    out = tuple(BasinShape(label, n_layer, d_model, a, a.mean - best, a.mean - best <= width)
                for (label, n_layer, d_model, _), a in zip(shapes, summaries))
    return Basin(budget, out, floor, width, broad)


def _mean_or_inf(values) -> float:
    """The mean of a shape's per-seed losses; infinite when a seed has none (it diverged)."""
    values = [math.inf if v is None else float(v) for v in values]
    return sum(values) / len(values) if all(math.isfinite(v) for v in values) else math.inf


def _arms_by_shape(record, metric: str) -> dict[tuple[int, int], list[tuple]]:
    """``{(budget, n_layer): [(arm, d_model, losses, lr), ...]}``: every arm of ``record``
    that trains one shape (several when a grid of rates was run), in the record's order."""
    finals = record.final(metric)
    out: dict[tuple[int, int], list[tuple]] = {}
    for name in record.arms:
        a = record.arm(name)
        info = a["info"]
        out.setdefault((info["budget"], info["n_layer"]), []).append(
            (name, info["d_model"], finals[name], a["recipe"].get("lr")))
    return out


def basins_from_record(record, metric: str = "eval_loss", **rule) -> dict[int, Basin]:
    """``{budget: Basin}`` of a record whose arms carry ``info`` budget, n_layer and d_model
    (such as ``budget_basin``), from each seed's final ``metric``.

    A shape trained at several rates (a record combined with the one that adds rates,
    ``records.combine_records``) is scored at the rate with the lowest mean loss over seeds
    (a rate where a seed diverged ranks last; ties go to the arm listed first): every shape at
    its best rate of the grid, never at one rate chosen for another (EXPERIMENTS.md §3).
    ``best_rates`` says which rate won for each shape."""
    by_budget: dict[int, list] = {}
    for (budget, n_layer), arms in _arms_by_shape(record, metric).items():
        name, d_model, losses, _ = min(arms, key=lambda a: _mean_or_inf(a[2]))   # stable
        by_budget.setdefault(budget, []).append((name, n_layer, d_model, losses))
    return {P: judge_basin(P, shapes, **rule) for P, shapes in sorted(by_budget.items())}


def best_rates(record, basins: dict[int, Basin], metric: str = "eval_loss") -> dict:
    """``{arm label of each shape in basins: [(lr, mean loss over seeds), ...]}``, every rate
    ``record`` holds for that shape, best first (mean infinite where a seed diverged)."""
    arms = _arms_by_shape(record, metric)
    return {shape.label: sorted(((lr, _mean_or_inf(losses))
                                 for _, _, losses, lr in arms[(P, shape.n_layer)]),
                                key=lambda r: r[1])
            for P, b in basins.items() for shape in b.shapes}


def basin_claim_word(basins) -> str:
    """The claims page's word for C14 (``basin_rule``): reproduced when every budget shows
    the claim's shape, with caveats when some do, not reproduced at this scale otherwise."""
    basins = list(basins.values()) if isinstance(basins, dict) else list(basins)
    if not basins:
        raise ValueError("basins must hold at least one budget's Basin")
    shown = sum(b.claim_shape for b in basins)
    if shown == len(basins):
        return REPRODUCED
    return WITH_CAVEATS if shown else NOT_REPRODUCED


# -- the ends over training (C14: does the regime change with more tokens?) -------------------
#: The words of ``gap_trend``.
CLOSING, WIDENING, STEADY = "closing", "widening", "no clear change"


def gap_trend_rule() -> str:
    """The rule ``end_gap_trend`` applies, as a sentence for the page."""
    return ("For each budget: the gap is the deepest shape's mean validation loss (over seeds) "
            "minus the shallowest shape's, at each evaluation step. The gap is closing when "
            "its value at the last evaluation is below its value at the middle evaluation by "
            "more than the larger of the two shapes' min-max seed ranges of the final loss, "
            "widening when it is above by more than that, and shows no clear change "
            "otherwise.")


@dataclass(frozen=True)
class GapTrend:
    """The deepest-minus-shallowest gap of one budget at each evaluation, and its trend."""

    budget: int
    steps: tuple[int, ...]
    gaps: tuple[float, ...]   # mean(deepest) - mean(shallowest) at each step
    margin: float             # the larger min-max seed range of the two ends' final losses
    word: str                 # CLOSING, WIDENING or STEADY

    @property
    def middle(self) -> int:
        """Index of the middle evaluation (the later of two for an even count)."""
        return len(self.gaps) // 2

    @property
    def change(self) -> float:
        """Gap at the last evaluation minus the gap at the middle one."""
        return self.gaps[-1] - self.gaps[self.middle]


def gap_trend(change: float, margin: float) -> str:
    """``gap_trend_rule``'s word for a gap that moved by ``change`` (last - middle)."""
    check_number("margin", margin, low=0.0)
    if -change > margin:
        return CLOSING
    return WIDENING if change > margin else STEADY


def end_gap_trend(record, basin: Basin, metric: str = "eval_loss") -> GapTrend:
    """The gap between ``basin``'s deepest and shallowest shape in ``record`` at each
    evaluation of ``metric`` (mean over seeds), and its trend by ``gap_trend_rule``."""
    curves = {}
    for end in (basin.shallow, basin.deep):
        steps, values = record.curves(end.label, metric)
        if any(s != steps[0] for s in steps) or len(steps[0]) < 3:
            raise ValueError(f"{end.label}: the seeds' {metric} curves need the same "
                             f"evaluation steps, at least 3 of them")
        curves[end.label] = (tuple(steps[0]), [sum(v) / len(v) for v in zip(*values)])
    (s_steps, shallow), (d_steps, deep) = curves[basin.shallow.label], curves[basin.deep.label]
    if s_steps != d_steps:
        raise ValueError(f"{basin.shallow.label} and {basin.deep.label} were evaluated at "
                         f"different steps")
    gaps = tuple(d - s for d, s in zip(deep, shallow))
    margin = max(basin.shallow.summary.spread, basin.deep.summary.spread)
    change = gaps[-1] - gaps[len(gaps) // 2]
    return GapTrend(basin.budget, s_steps, gaps, margin, gap_trend(change, margin))


def kaplan_contrast(basins: dict) -> str:
    """Where the basins differ from Kaplan et al. (2020), whose models with fewer than two
    layers fall off the trend (a worse shallow end) and whose extreme aspect ratios do too (a
    worse deep end), as one sentence for the verdict line."""
    if not basins:
        raise ValueError("basins must hold at least one budget's Basin")

    def budgets(ps):
        return " and ".join(f"{P:,}" for P in ps)

    shallow_in = [P for P, b in basins.items() if not b.shallow_worse]
    deep_in = [P for P, b in basins.items() if not b.deep_worse]
    if shallow_in:
        shallow = (f"unlike Kaplan et al.'s one-layer models (off their trend), the "
                   f"shallowest shape is in the basin at P = {budgets(shallow_in)}")
    else:
        shallow = "as in Kaplan et al., the shallowest shape is worse at every budget"
    if deep_in:
        deep = f"the deepest shape is in the basin at P = {budgets(deep_in)}"
    else:
        deep = "the deepest, thinnest shape is worse at every budget"
    return f"{shallow}; {deep}"


# -- the rule for C15 ------------------------------------------------------------------------
#: "Around 100": the median d/L of the published shapes lies within a factor ASPECT_FACTOR of
#: ASPECT_CENTRE. "Larger models drift higher": the median d/L of the shapes at or above
#: DRIFT_SPLIT non-embedding parameters (12 L d^2) exceeds the median of those below.
ASPECT_CENTRE, ASPECT_FACTOR, DRIFT_SPLIT = 100, 2, 1_000_000_000


def aspect_rule(centre: float = ASPECT_CENTRE, factor: float = ASPECT_FACTOR,
                split: float = DRIFT_SPLIT) -> str:
    """The rule ``aspect_claim_word`` applies, as the sentence a chapter prints above it."""
    return (f"C15 holds in two parts. Around {centre:g}: the median d/L of the published "
            f"shapes lies within a factor {factor:g} of {centre:g} (from {centre / factor:g} "
            f"to {centre * factor:g}). Larger models drift higher: the median d/L of the "
            f"shapes with at least {split:,.0f} non-embedding parameters (12·L·d²) exceeds "
            f"the median of those below. Reproduced when both hold and no family runs the "
            f"other way (its largest model at a lower d/L than its smallest); reproduced with "
            f"caveats when both hold but a family does; not reproduced otherwise.")


def families_against_drift(shapes=PUBLISHED_SHAPES) -> list[str]:
    """Families of two or more shapes whose largest (12 L d^2) has a lower d/L than their
    smallest: the families that ran against the drift to higher d/L."""
    out = []
    for fam in dict.fromkeys(s.family for s in shapes):
        pts = sorted((s for s in shapes if s.family == fam),
                     key=lambda s: s.approx_non_embedding)
        if len(pts) >= 2 and pts[-1].aspect_ratio < pts[0].aspect_ratio:
            out.append(fam)
    return out


def aspect_claim_word(shapes=PUBLISHED_SHAPES, *, centre: float = ASPECT_CENTRE,
                      factor: float = ASPECT_FACTOR, split: float = DRIFT_SPLIT) -> str:
    """The claims page's word for C15 on ``shapes`` (``aspect_rule`` states the rule)."""
    check_number("centre", centre, low=0.0, low_open=True)
    check_number("factor", factor, low=1.0)
    small = [s.aspect_ratio for s in shapes if s.approx_non_embedding < split]
    large = [s.aspect_ratio for s in shapes if s.approx_non_embedding >= split]
    if not small or not large:
        raise ValueError(f"shapes need models on both sides of split={split:g} parameters, "
                         f"got {len(small)} below and {len(large)} above")
    around = centre / factor <= median(small + large) <= centre * factor
    if not (around and median(large) > median(small)):
        return NOT_REPRODUCED
    return WITH_CAVEATS if families_against_drift(shapes) else REPRODUCED
