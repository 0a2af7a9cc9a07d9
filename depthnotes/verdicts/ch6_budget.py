"""Chapter 6's rules for splitting a fixed parameter budget between depth and width (claims
C14, C15). The sweep itself trains in ``training.budget`` (``budget_sweep``, ``lr_for_width``);
the real models' shapes are ``data.published_shapes``.

* ``judge_basin`` applies the basin rule to per-seed losses of one budget's shapes: each
  shape at its best rate is in the basin unless it is clearly worse than the best shape (the
  evidence library's rule, margin ``BASIN_FLOOR`` of the best mean loss); ``basins_from_record`` does it for every budget of a record such as
  ``budget_basin``; ``basin_claim_word`` turns the basins into the claims page's word.
* ``end_gap_trend`` follows the gap between a budget's deepest and shallowest shape over the
  record's evaluations (is it closing with more tokens?): each seed's change from the middle
  evaluation to the last, compared between the two shapes by the evidence library's rule.
* ``c14_parts`` splits C14 into its three parts (thin end, wide end, broad middle);
  ``basin_grid`` loads the six-rate grid (``BASIN_RECORDS``) that chapters 6 and 7 read.
* ``aspect_claim_word`` judges C15 on ``PUBLISHED_SHAPES`` (its docstring states the rule).

The functions return structured results (words, gaps, basins); the sentences a reader reads,
the rules among them, are written in chapter 6 around the numbers it publishes.
"""

from __future__ import annotations

from dataclasses import dataclass
from statistics import median

from depthnotes.core.checks import check_int, check_number
from depthnotes.core.config import aspect_ratio
from depthnotes.data.published_shapes import PUBLISHED_SHAPES, distinct_shapes
from depthnotes.verdicts.ch4_trainability import loss_ceiling
from depthnotes.verdicts.evidence import (CANNOT_TELL, CONTRADICTED, NOT_SHOWN,
                                          NOT_TESTABLE, REPRODUCED, ArmSeeds, Outcome,
                                          RatePick, WhyNot, best_rate, combine, compare,
                                          from_bracket, summarise)


# -- the basin rule (C14) ---------------------------------------------------------------------
#: The practical margin of the basin, as a fraction of the best shape's mean loss: Kaplan et
#: al. call loss "within a few per cent" flat; 2 % (about 0.03 nats at a loss of 1.5) is the
#: strict end of that. A shape is worse than the best only when it is clearly worse by the
#: evidence library's rule with this margin.
BASIN_FLOOR = 0.02
#: A basin is "broad" (the claim's flat middle) when it holds at least this many shapes.
BROAD_SHAPES = 3


@dataclass(frozen=True)
class BasinShape:
    """One shape of a budget: its seeds summarised, its gap to the best, and the verdict."""

    label: str
    n_layer: int
    d_model: int
    summary: ArmSeeds              # per-seed losses, mean, min-max
    gap: float                # mean - the best shape's mean (>= 0)
    inside: bool              # in the basin: not clearly worse than the best
    pick: RatePick | None = None   # its best learning rate, when several were tried

    @property
    def aspect_ratio(self) -> float:
        return aspect_ratio(self.n_layer, self.d_model)


@dataclass(frozen=True)
class Basin:
    """The basin of one budget (``judge_basin``). ``shapes`` run from shallow to deep."""

    budget: int
    shapes: tuple[BasinShape, ...]
    floor: float              # the relative margin used
    width: float              # the margin in nats: floor x the best mean
    broad_shapes: int

    @property
    def testable(self) -> tuple[bool, WhyNot | None]:
        """(testable, why not): every shape's best rate bracketed, or no grid at all
        (``evidence.from_bracket``)."""
        picks = [s.pick for s in self.shapes if s.pick is not None]
        return from_bracket(*picks) if picks else (True, None)

    @property
    def word(self) -> str:
        """This budget's word: not testable, reproduced (the claim's shape), contradicted
        (neither end worse: flat throughout) or not shown."""
        if not self.testable[0]:
            return NOT_TESTABLE
        if self.claim_shape:
            return REPRODUCED
        return CONTRADICTED if not (self.shallow_worse or self.deep_worse) and self.broad \
            else NOT_SHOWN

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

    def table(self, digits: int = 3) -> str:
        """Each shape: L, d, d/L, mean and min-max over seeds, gap, in the basin or not."""
        lines = [f"P = {self.budget:,}: best mean {self.band[0]:.{digits}f}, margin "
                 f"{self.width:.{digits}f}"]
        for s in self.shapes:
            a = s.summary
            lines.append(f"  L = {s.n_layer:>2}  d = {s.d_model:>3}  d/L = "
                         f"{s.aspect_ratio:6.1f}  mean {a.mean:.{digits}f}  gap "
                         f"{s.gap:+.{digits}f}  {'basin' if s.inside else 'worse'}")
        return "\n".join(lines)


def judge_basin(budget: int, shapes, *, floor: float = BASIN_FLOOR,
                broad: int = BROAD_SHAPES, picks: dict | None = None,
                ceiling: float | None = None) -> Basin:
    """Apply the basin rule (module docstring) to one budget. ``shapes`` is a sequence of ``(label, n_layer,
    d_model, losses)`` with ``losses`` one final loss per seed (at least ``MIN_SEEDS``;
    None for a seed that diverged, which counts as ``ceiling``, the loss of a model that
    learned nothing, by the evidence library's policy); ``picks`` maps a label to its
    best-rate pick, where a grid was run."""
    check_int("budget", budget)
    check_number("floor", floor, low=0.0)
    check_int("broad", broad)
    shapes = sorted(shapes, key=lambda s: s[1])
    if len(shapes) < 2:
        raise ValueError(f"budget {budget}: a basin needs at least 2 shapes, got {len(shapes)}")
    if len({s[1] for s in shapes}) != len(shapes):
        raise ValueError(f"budget {budget}: one shape per depth, got depths "
                         f"{[s[1] for s in shapes]}")
    arms = [summarise(label, list(losses), ceiling=ceiling)
            for label, _, _, losses in shapes]
    best = min(arms, key=lambda a: a.mean)
    margin = floor * best.mean
    out = []
    for (label, n_layer, d_model, _), a in zip(shapes, arms):
        d = compare(a, best, margin=margin) if a is not best else None
        inside = d is None or not (d.clear and d.better == best.name)
        out.append(BasinShape(label, n_layer, d_model, a, a.mean - best.mean, inside,
                              (picks or {}).get(label)))
    return Basin(budget, tuple(out), floor, margin, broad)


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
    ``records.combine_records``) is scored at its best rate (``evidence.best_rate``), and the
    budget is testable only when that rate is bracketed: every shape at its best rate of the
    grid, never at one rate chosen for another (book/methods.md, "How a claim is judged")."""
    by_budget: dict[int, list] = {}
    picks: dict[int, dict] = {}
    ceiling = None
    for (budget, n_layer), arms in _arms_by_shape(record, metric).items():
        if any(v is None for a in arms for v in a[2]):      # a seed diverged: it learned
            ceiling = loss_ceiling(record, arms[0][0])      # nothing, ln V
        grid = {lr: a[2] for a in arms for lr in [a[3]]}
        pick = best_rate(grid, ceiling=ceiling) if len(arms) > 1 else None
        name, d_model, losses, _ = next(a for a in arms if pick is None or a[3] == pick.best)
        by_budget.setdefault(budget, []).append((name, n_layer, d_model, losses))
        if pick is not None:
            picks.setdefault(budget, {})[name] = pick
    return {P: judge_basin(P, shapes, picks=picks.get(P), ceiling=ceiling, **rule)
            for P, shapes in sorted(by_budget.items())}


def best_rates(record, basins: dict[int, Basin], metric: str = "eval_loss") -> dict:
    """``{arm label of each shape in basins: [(lr, mean loss over seeds), ...]}``, every rate
    ``record`` holds for that shape, best first (lowest mean; the lower rate on a tie), ranked
    as ``evidence.best_rate`` ranks them: a diverged seed counts as the ceiling ln V
    (``evidence.summarise``), the policy ``basins_from_record`` judges by."""
    arms = _arms_by_shape(record, metric)
    out = {}
    for P, b in basins.items():
        for shape in b.shapes:
            means = [(lr, summarise(name, losses, ceiling=loss_ceiling(record, name)).mean)
                     for name, _, losses, lr in arms[(P, shape.n_layer)]]
            out[shape.label] = sorted(means, key=lambda r: (r[1], r[0]))
    return out


def basin_claim_word(basins) -> str:
    """The word for C14: the budgets' words combined."""
    basins = list(basins.values()) if isinstance(basins, dict) else list(basins)
    if not basins:
        raise ValueError("basins must hold at least one budget's Basin")
    return combine([b.word for b in basins])


#: The records that together train every basin shape at six rates (1x, 2x, 4x, 8x, 16x and
#: 32x the 1/d rule's), every run scored on the same held-out text: the one place that names
#: them, for chapter 6's verdict and chapter 7's loss axis alike. The first four records of
#: this grid (``budget_basin``, ``budget_basin_lr``, ``budget_basin_lr_high``,
#: ``budget_basin_lr_top``) scored each seed on its own batches; they stay stored, and the
#: methods page says what moved between the two.
BASIN_RECORDS = ("budget_basin_same_text", "budget_basin_same_text_high",
                 "budget_basin_same_text_top")


def basin_grid():
    """``(grid, basins, chosen)``: the basin records combined into one grid
    (``records.combine_records``), its ``Basin`` per budget (each shape at its best rate), and
    the grid reduced to those best-rate arms (``Record.select``): what chapter 6 judges and
    chapter 7 reads its losses from, so that the two chapters quote the same loss per shape."""
    from depthnotes.experiments.records import combine_records, load_record

    grid = combine_records(*(load_record(name) for name in BASIN_RECORDS))
    basins = basins_from_record(grid, "eval_loss")
    chosen = grid.select(s.label for b in basins.values() for s in b.shapes)
    return grid, basins, chosen


#: C14's wide extreme: Kaplan et al.'s flat region runs to aspect ratios of a few hundred
#: (their Fig. 5); a budget tests "the wide end is worse" only when its shallowest shape is at
#: least this wide for its depth. One block at d/L >= 400 needs P = 12 d^2 >= 1.9M
#: non-embedding parameters, out of this laptop's reach.
WIDE_EXTREME = 400


def c14_parts(basins: dict[int, Basin]) -> list[Outcome]:
    """C14's three parts, each an ``evidence.Outcome`` (word, part, reason), judged on every
    budget's ``Basin`` and combined over budgets (``combine``):

    * ``thin end``: the deepest, thinnest shape is clearly worse than the best;
    * ``wide end``: the shallowest, widest shape is clearly worse, testable only at budgets
      whose shallowest shape reaches ``WIDE_EXTREME`` (otherwise not testable here: the design
      cannot reach the extreme the claim is about, ``evidence.CANNOT_TELL`` with the aspect
      ratio reached and ``WIDE_EXTREME`` needed);
    * ``broad middle``: the basin holds at least ``BROAD_SHAPES`` shapes.

    A budget whose grid does not bracket every shape's best rate makes every part not testable
    there (the reason: ``Basin.testable``'s). A part not testable at every budget carries the
    last budget's reason. The claim's headline is ``combine`` of the parts' words
    (``claim_outcome``)."""
    if not basins:
        raise ValueError("basins must hold at least one budget's Basin")
    rows = []
    for part, holds, reach in (
            ("thin end", lambda b: b.deep_worse, lambda b: True),
            ("wide end", lambda b: b.shallow_worse,
             lambda b: b.shallow.aspect_ratio >= WIDE_EXTREME),
            ("broad middle", lambda b: b.broad, lambda b: True)):
        words, why = [], None
        for b in basins.values():
            if not b.testable[0]:
                words.append(NOT_TESTABLE)
                why = b.testable[1]
            elif not reach(b):
                words.append(NOT_TESTABLE)
                why = WhyNot(CANNOT_TELL, reached=b.shallow.aspect_ratio,
                             needed=WIDE_EXTREME)
            else:
                words.append(REPRODUCED if holds(b) else NOT_SHOWN)
        word = combine(words)
        rows.append(Outcome(word, part, why if word == NOT_TESTABLE else None))
    return rows


# -- the ends over training (C14: does the regime change with more tokens?) -------------------
#: The words of ``gap_trend``.
CLOSING, WIDENING, STEADY = "closing", "widening", "no clear change"


@dataclass(frozen=True)
class GapTrend:
    """The deepest-minus-shallowest gap of one budget at each evaluation, and its trend."""

    budget: int
    steps: tuple[int, ...]
    gaps: tuple[float, ...]   # mean(deepest) - mean(shallowest) at each step
    word: str                 # CLOSING, WIDENING or STEADY

    @property
    def middle(self) -> int:
        """Index of the middle evaluation (the later of two for an even count)."""
        return len(self.gaps) // 2

    @property
    def change(self) -> float:
        """Gap at the last evaluation minus the gap at the middle one."""
        return self.gaps[-1] - self.gaps[self.middle]


def gap_trend(deep_changes, shallow_changes) -> str:
    """The trend's word from each seed's change (last - middle evaluation) of the deepest and
    of the shallowest shape: closing when the deepest falls clearly more (the evidence
    library's rule), widening when the shallowest does, else no clear change."""
    d = compare(("deepest", list(deep_changes)), ("shallowest", list(shallow_changes)))
    if not d.clear:
        return STEADY
    return CLOSING if d.better == "deepest" else WIDENING


def end_gap_trend(record, basin: Basin, metric: str = "eval_loss") -> GapTrend:
    """The gap between ``basin``'s deepest and shallowest shape in ``record`` at each
    evaluation of ``metric`` (mean over seeds), and its trend (``gap_trend``)."""
    curves, changes = {}, {}
    for end in (basin.shallow, basin.deep):
        steps, values = record.curves(end.label, metric)
        if any(s != steps[0] for s in steps) or len(steps[0]) < 3:
            raise ValueError(f"{end.label}: the seeds' {metric} curves need the same "
                             f"evaluation steps, at least 3 of them")
        mid = len(steps[0]) // 2
        changes[end.label] = [v[-1] - v[mid] for v in values]
        curves[end.label] = (tuple(steps[0]), [sum(v) / len(v) for v in zip(*values)])
    (s_steps, shallow), (d_steps, deep) = curves[basin.shallow.label], curves[basin.deep.label]
    if s_steps != d_steps:
        raise ValueError(f"{basin.shallow.label} and {basin.deep.label} were evaluated at "
                         f"different steps")
    gaps = tuple(d - s for d, s in zip(deep, shallow))
    return GapTrend(basin.budget, s_steps, gaps,
                    gap_trend(changes[basin.deep.label], changes[basin.shallow.label]))


# -- the rule for C15 ------------------------------------------------------------------------
#: C15's "around 100": the median d/L of the distinct published shapes lies within a factor
#: ASPECT_FACTOR of this centre.
ASPECT_CENTRE = 100
#: C15's tolerance around ASPECT_CENTRE, as a factor either way.
ASPECT_FACTOR = 2
#: C15's "larger models drift higher": the median d/L of the shapes at or above this many
#: non-embedding parameters (12 L d^2) exceeds the median of those below.
DRIFT_SPLIT = 1_000_000_000


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
    """The claims page's word for C15 on ``shapes``, judged on the distinct shapes, in two
    parts: the median d/L lies within a factor ``factor`` of ``centre``; and the median d/L
    of the shapes with at least ``split`` non-embedding parameters exceeds that of the
    smaller ones, with no family running the other way (``families_against_drift``).
    Reproduced when both hold, in part when one does, not shown otherwise."""
    check_number("centre", centre, low=0.0, low_open=True)
    check_number("factor", factor, low=1.0)
    distinct = distinct_shapes(shapes)
    small = [s.aspect_ratio for s in distinct if s.approx_non_embedding < split]
    large = [s.aspect_ratio for s in distinct if s.approx_non_embedding >= split]
    if not small or not large:
        raise ValueError(f"shapes need models on both sides of split={split:g} parameters, "
                         f"got {len(small)} below and {len(large)} above")
    around = centre / factor <= median(small + large) <= centre * factor
    drift = median(large) > median(small) and not families_against_drift(shapes)
    return combine([REPRODUCED if around else NOT_SHOWN,
                    REPRODUCED if drift else NOT_SHOWN])
