"""Chapter 5's rules: what each of its records must show for C9, C10 and C12, in one place.

The chapter states each rule above its result; the functions here are those rules, so the
sentence, the table, the assertion and the claims page's word come from the same numbers.
Runs are judged by chapter 4's rule (``trainability.run_status``: *trained* when the final
validation loss is at least ``MARGIN`` below the unigram loss), arms by
``verdicts.compare`` (a gap counts only when it exceeds the larger min-max range over seeds)
and words by ``verdicts.claim_word``. Chapter 4 splits a run that did not train into *slow*
(its training loss still falling at the end) and *stalled* (flat); no chapter-5 verdict
needs that split: a family at one depth "trains" only when every seed trained
(``DepthOutcome.outcome == TRAINS``), and any other outcome ("slower", "mixed", "stops")
counts as did not train. The split is only shown, in ``run_word``.

* C9, recipe (``grid_cells``, ``grid_verdict``): pre-norm "tolerates larger learning rates
  with less warm-up". The learning-rate half is tested only at a depth where post-norm trains
  at the small rate without warm-up (elsewhere a stall at the large rate says nothing about
  the rate): there, at the large rate without warm-up, pre-norm must train and be clearly
  better than post-norm. The warm-up half is shown when somewhere in the grid warm-up turns a
  post-norm arm that does not train into one that does, while pre-norm trains without it.
  Both: ``reproduced``; the rate half only: ``reproduced with caveats``; else ``not
  reproduced at this scale``.
* C9, depth and C12, training (``depth_verdict``): at each depth, two families' final
  validation losses compared, each family at its best rate of the grid that
  ``deepnorm_depth_comparison`` and ``deepnorm_depth_lr`` hold together (a diverged run
  enters with its first loss, as in chapter 4);
  the claimed family must train (every seed) and be clearly better. At every depth:
  ``reproduced``; at some: ``reproduced with caveats``; at none: ``not reproduced``.
* C10 (``layer_use_verdict``): pre-norm "under-uses its deepest layers" needs both measures
  to say so: training must lower the last quarter's relative contribution against the early
  quarter's (blocks 2 to L/4; block 1 builds the first features from a small embedding and
  is left out) compared with the same model untrained, and removing a late block must cost
  clearly less than removing an early one in the trained model. Both: ``reproduced``;
  neither: ``not reproduced at this scale``; one only: ``inconclusive``.
* C12, update size (``update_verdict``): DeepNorm "bounds the update" when its first update
  is clearly smaller than post-norm's at every depth; a caveat when that holds at some depths
  only, or when DeepNorm's exponent (the first update against depth fitted on log-log axes
  per seed, ``update_exponents``) is above zero for every seed: its update still grows with L.
  The exponents alone are not the test: each token's output leaves a LayerNorm with length
  about sqrt(d), so an update (the distance between two such vectors) is at most 2 sqrt(d)
  and sits near sqrt(2 d) once the output is as far as an unrelated vector; an update near
  that size at every depth has an exponent near zero too.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from depthnotes.core.checks import check_choice
from depthnotes.core.fitting import linear_fit
from depthnotes.verdicts.ch4_trainability import (DIVERGED, MARGIN, TRAINS, DepthOutcome,
                                                  depth_outcomes, stored_run_status)
from depthnotes.verdicts.compare import (CLAIM_WORDS, INCONCLUSIVE, NOT_REPRODUCED, REPRODUCED,
                                         WITH_CAVEATS, Comparison, claim_word, compare)

#: The records chapter 5 shows, in the order the chapter reads them.
RECORDS = ("prenorm_vs_postnorm_grid", "deepnorm_depth_comparison", "deepnorm_depth_lr",
           "prenorm_layer_use", "deepnorm_update_size", "deepnorm_1000_layers")


def unigram_loss(corpus) -> float:
    """The entropy of the training split's character frequencies, in nats: the loss of a
    model that ignores the context (chapter 4's yardstick)."""
    import torch

    counts = torch.bincount(corpus.train, minlength=corpus.vocab_size).double()
    freq = counts[counts > 0] / counts.sum()
    return float(-(freq * freq.log()).sum())


def load_chapter_records(run: bool = False) -> dict:
    """``{name: Record}`` for ``RECORDS``, each checked against its definition; with ``run``
    every experiment is trained here instead (the CPU estimates are in the descriptions)."""
    from depthnotes.experiments.registry import get_experiment
    from depthnotes.experiments.records import (Record, check_current, load_record,
                                                run_experiment)

    out = {}
    for name in RECORDS:
        rec = Record.from_dict(run_experiment(get_experiment(name))) if run \
            else load_record(name)
        check_current(rec)
        out[name] = rec
    return out


def run_word(record, arm: str, seed: int, baseline: float, margin: float = MARGIN) -> str:
    """One stored run's outcome in words: "diverged at step s", or its final validation loss
    and chapter 4's status, e.g. "3.12 (stalled)" or "3.05 (slow)"."""
    status, _ = stored_run_status(record, arm, seed, baseline, margin)
    final = record.run(arm, seed)["final"]
    if status == DIVERGED:
        return f"diverged at step {final['diverged_at']}"
    return f"{final['eval_loss']:.2f} ({status})"


# -- C9 and C12: two families at each depth -----------------------------------------------------
def depth_comparison(outcomes: dict[str, list[DepthOutcome]], a: str, b: str,
                     n_layer: int) -> Comparison:
    """Families ``a`` and ``b`` of ``trainability.depth_outcomes`` compared at ``n_layer``
    (final validation loss, lower is better)."""
    rows = {name: next(r for r in outcomes[name] if r.n_layer == n_layer) for name in (a, b)}
    return compare({name: r.losses for name, r in rows.items()},
                   metric=f"validation loss at L = {n_layer}", better="lower")


@dataclass(frozen=True)
class DepthVerdict:
    word: str
    comparisons: dict               # {L: Comparison of the two families}
    holds: tuple[int, ...]          # depths where the claimed family trains and is clearly better
    reason: str


def depth_verdict(outcomes: dict[str, list[DepthOutcome]], claim: str,
                  other: str) -> DepthVerdict:
    """Does family ``claim`` train (every seed) and beat ``other`` clearly at each depth?
    At every depth: ``reproduced``; at some: ``reproduced with caveats`` (the caveat names the
    depths where it does not); at none: ``not reproduced at this scale``."""
    depths = [r.n_layer for r in outcomes[claim]]
    cmps = {L: depth_comparison(outcomes, claim, other, L) for L in depths}
    trains = {r.n_layer: r.outcome == TRAINS for r in outcomes[claim]}
    holds = tuple(L for L in depths
                  if trains[L] and claim_word(cmps[L], expected=claim) == REPRODUCED)
    missing = [L for L in depths if L not in holds]
    caveat = f"not at L = {', '.join(map(str, missing))}" if missing else None
    word = NOT_REPRODUCED if not holds else claim_word(cmps[holds[0]], claim, caveat)
    if not holds:
        return DepthVerdict(word, cmps, holds,
                            f"{claim} does not both train and beat {other} clearly at any "
                            f"depth tried (L = {', '.join(map(str, depths))})")
    reason = (f"{claim} trains and is clearly better than {other} at "
              f"L = {', '.join(map(str, holds))}")
    return DepthVerdict(word, cmps, holds, reason + (f"; {caveat}" if caveat else ""))


# -- C9: the learning-rate x warm-up grid -------------------------------------------------------
@dataclass(frozen=True)
class GridCell:
    """One (depth, learning rate, warm-up) cell: each norm's outcome and their comparison."""

    n_layer: int
    lr: float
    warmup: int
    post: DepthOutcome
    pre: DepthOutcome
    comparison: Comparison          # arms "pre-norm" and "post-norm"

    @property
    def gap(self) -> float:
        """Post-norm's mean validation loss minus pre-norm's (positive: pre-norm better)."""
        return self.comparison.between("post-norm", "pre-norm").gap


def grid_cells(record, baseline: float, margin: float = MARGIN) -> list[GridCell]:
    """Every cell of ``prenorm_vs_postnorm_grid``, by depth, learning rate and warm-up."""
    outcomes = depth_outcomes(record, baseline, margin)
    infos = {record.arm(a)["info"]["family"]: record.arm(a)["info"] for a in record.arms}
    cells = []
    for L in sorted({r.n_layer for rows in outcomes.values() for r in rows}):
        for fam, info in infos.items():
            if info["norm"] != "post":
                continue
            twin = fam.replace("post-norm", "pre-norm", 1)
            post, pre = (next(r for r in outcomes[f] if r.n_layer == L) for f in (fam, twin))
            cmp = compare({"pre-norm": pre.losses, "post-norm": post.losses},
                          metric=f"validation loss at L = {L}, lr {info['lr']:g}, "
                                 f"warm-up {info['warmup_steps']}", better="lower")
            cells.append(GridCell(L, info["lr"], info["warmup_steps"], post, pre, cmp))
    return sorted(cells, key=lambda c: (c.n_layer, c.lr, c.warmup))


@dataclass(frozen=True)
class GridVerdict:
    word: str
    rate_depths: tuple[int, ...]    # depths where post-norm trains at the small rate, no warm-up
    warmup_rescues: tuple[GridCell, ...]   # cells where warm-up makes post-norm train
    reason: str


def grid_verdict(cells: list[GridCell]) -> GridVerdict:
    """The C9 recipe rule of the module docstring."""
    def cell(L, lr, wu):
        return next(c for c in cells if (c.n_layer, c.lr, c.warmup) == (L, lr, wu))

    lo, hi = min(c.lr for c in cells), max(c.lr for c in cells)
    wu0, wu1 = min(c.warmup for c in cells), max(c.warmup for c in cells)
    depths = sorted({c.n_layer for c in cells})
    rate_depths = tuple(L for L in depths if cell(L, lo, wu0).post.outcome == TRAINS)
    rescues = tuple(c for c in cells if c.warmup == wu1 and c.post.outcome == TRAINS
                    and cell(c.n_layer, c.lr, wu0).post.outcome != TRAINS
                    and cell(c.n_layer, c.lr, wu0).pre.outcome == TRAINS)
    if not rate_depths:
        return GridVerdict(NOT_REPRODUCED, (), rescues,
                           f"post-norm does not train at lr {lo:g} without warm-up at any "
                           f"depth: the grid cannot test the learning rate")
    caveat = None if rescues else (f"warm-up ({wu1} steps) does not turn any post-norm "
                                   f"arm into one that trains: 'with less warm-up' is "
                                   f"not shown")
    words = []
    for L in rate_depths:
        harsh = cell(L, hi, wu0)
        word = claim_word(harsh.comparison, expected="pre-norm", caveat=caveat)
        words.append(word if harsh.pre.outcome == TRAINS else NOT_REPRODUCED)
    word = NOT_REPRODUCED if NOT_REPRODUCED in words else words[0]
    at = ", ".join(str(L) for L in rate_depths)
    reason = (f"tested at L = {at}, where post-norm trains at lr {lo:g} without warm-up: "
              f"at lr {hi:g} without warm-up pre-norm "
              + ("trains and is clearly better" if word != NOT_REPRODUCED
                 else "does not train clearly better than post-norm"))
    return GridVerdict(word, rate_depths, rescues, reason + (f"; {caveat}" if caveat else ""))


# -- C10: how much the deep blocks of a trained pre-norm model do ------------------------------
@dataclass(frozen=True)
class LayerUse:
    """Per seed, a trained pre-norm model's early and late quarters, untrained and trained."""

    n_layer: int
    early: slice                    # blocks 2 .. L/4 (0-based slice)
    late: slice                     # the last L/4 blocks
    ratio_init: tuple[float, ...]   # late / early mean relative contribution, untrained
    ratio: tuple[float, ...]        # the same, trained
    skip_early: tuple[float, ...]   # mean loss rise when one early block is removed, trained
    skip_late: tuple[float, ...]
    skip_early_init: tuple[float, ...]
    skip_late_init: tuple[float, ...]


def layer_use(record, arm: str | None = None) -> LayerUse:
    """The quarters of ``prenorm_layer_use`` (its one arm unless ``arm`` is given)."""
    arm = record.arms[0] if arm is None else arm
    L = record.arm(arm)["info"]["n_layer"]
    q = max(1, L // 4)
    early, late = slice(1, max(2, q)), slice(L - q, L)
    probes = [record.run(arm, s)["probes"] for s in record.seeds]

    def ratio(p, key):
        c = np.asarray(p[key], dtype=float)
        return float(c[late].mean() / c[early].mean())

    def mean(p, key, part):
        return float(np.asarray(p[key], dtype=float)[part].mean())

    return LayerUse(L, early, late,
                    tuple(ratio(p, "contribution_init") for p in probes),
                    tuple(ratio(p, "contribution") for p in probes),
                    tuple(mean(p, "skip_cost", early) for p in probes),
                    tuple(mean(p, "skip_cost", late) for p in probes),
                    tuple(mean(p, "skip_cost_init", early) for p in probes),
                    tuple(mean(p, "skip_cost_init", late) for p in probes))


@dataclass(frozen=True)
class LayerUseVerdict:
    word: str
    contribution: Comparison        # arms "trained" and "untrained" (late / early ratio)
    removal: Comparison             # arms "late blocks" and "early blocks" (trained)
    contribution_word: str
    removal_word: str


def layer_use_verdict(use: LayerUse) -> LayerUseVerdict:
    """The C10 rule of the module docstring."""
    contribution = compare({"trained": use.ratio, "untrained": use.ratio_init},
                           metric="late / early relative contribution", better="lower")
    removal = compare({"late blocks": use.skip_late, "early blocks": use.skip_early},
                      metric="loss rise when one block is removed (trained)", better="lower")
    cw = claim_word(contribution, expected="trained")
    rw = claim_word(removal, expected="late blocks")
    word = cw if cw == rw else INCONCLUSIVE
    return LayerUseVerdict(word, contribution, removal, cw, rw)


# -- C12: the early update against depth --------------------------------------------------------
def update_sizes(record, step: int = 1,
                 lr: float | None = None) -> dict[str, dict[int, list[float]]]:
    """``{family: {L: [update size after ``step`` per seed]}}`` of ``deepnorm_update_size``
    (only the arms trained at ``lr``, when given; NaN for a run that stopped before
    ``step``)."""
    out: dict[str, dict[int, list[float]]] = {}
    for arm in record.arms:
        info = record.arm(arm)["info"]
        if lr is not None and info.get("lr") != lr:
            continue
        sizes = []
        for s in record.seeds:
            p = record.run(arm, s)["probes"]
            got = dict(zip(p["update_steps"], p["update_size"]))
            sizes.append(math.nan if got.get(step) is None else float(got[step]))
        out.setdefault(info["family"], {})[info["n_layer"]] = sizes
    if not out:
        raise KeyError(f"record {record.name!r} has no arm trained at lr {lr!r}")
    return out


def update_exponents(sizes: dict[str, dict[int, list[float]]]) -> dict[str, list[float]]:
    """Per family, per seed: the slope of log(update size) against log(L), fitted over the
    depths (``fitting.linear_fit``); NaN when a seed lacks two finite positive sizes."""
    out = {}
    for family, by_depth in sizes.items():
        depths = sorted(by_depth)
        n_seeds = len(by_depth[depths[0]])
        slopes = []
        for s in range(n_seeds):
            y = np.array([by_depth[L][s] for L in depths])
            ok = np.isfinite(y) & (y > 0)
            slopes.append(linear_fit(np.log(np.array(depths)[ok]), np.log(y[ok])).slope
                          if ok.sum() >= 2 else math.nan)
        out[family] = slopes
    return out


@dataclass(frozen=True)
class UpdateVerdict:
    word: str
    comparisons: dict               # {L: Comparison of the two families' first updates}
    smaller_at: tuple[int, ...]     # depths where DeepNorm's update is clearly smaller
    exponents: Comparison | None    # the two families' fitted exponents (None: not all finite)
    caveat: str | None
    reason: str


def update_verdict(sizes: dict[str, dict[int, list[float]]], deepnorm: str,
                   post: str) -> UpdateVerdict:
    """The C12 update rule: DeepNorm's first update must be clearly smaller than post-norm's
    at every depth (``reproduced``); a caveat when it is so only at some depths, or when
    DeepNorm's fitted exponent is above zero for every seed (its update still grows with L);
    ``not reproduced at this scale`` when it is clearly smaller at no depth."""
    depths = sorted(sizes[deepnorm])
    cmps = {L: compare({deepnorm: sizes[deepnorm][L], post: sizes[post][L]},
                       metric=f"first update at L = {L}", better="lower") for L in depths}
    smaller = tuple(L for L in depths if claim_word(cmps[L], deepnorm) == REPRODUCED)
    exps = update_exponents({f: sizes[f] for f in (deepnorm, post)})
    finite = all(math.isfinite(v) for vals in exps.values() for v in vals)
    exp_cmp = compare(exps, metric="fitted exponent of the first update against L",
                      better="lower") if finite else None
    caveats = []
    missing = [L for L in depths if L not in smaller]
    if smaller and missing:
        caveats.append(f"not clearly smaller at L = {', '.join(map(str, missing))}")
    if finite and min(exps[deepnorm]) > 0:
        caveats.append(f"DeepNorm's update still grows with depth (exponent "
                       f"{exp_cmp.arm(deepnorm).low:.2f} to {exp_cmp.arm(deepnorm).high:.2f}"
                       f" over seeds)")
    caveat = "; ".join(caveats) or None
    if not smaller:
        return UpdateVerdict(NOT_REPRODUCED, cmps, smaller, exp_cmp, caveat,
                             f"{deepnorm}'s first update is not clearly smaller than "
                             f"{post}'s at any depth")
    word = claim_word(cmps[smaller[0]], deepnorm, caveat)
    reason = (f"{deepnorm}'s first update is clearly smaller than {post}'s at "
              f"L = {', '.join(map(str, smaller))}")
    return UpdateVerdict(word, cmps, smaller, exp_cmp, caveat,
                         reason + (f"; {caveat}" if caveat else ""))


def weakest(words) -> str:
    """The weakest of several claims-page words, in ``verdicts.CLAIM_WORDS``' order (the
    package's one ranking of them): the word for a claim that needs every one of its parts."""
    words = [check_choice("word", w, CLAIM_WORDS) for w in words]
    return max(words, key=CLAIM_WORDS.index)


__all__ = ["MARGIN", "INCONCLUSIVE", "RECORDS", "REPRODUCED", "WITH_CAVEATS",
           "NOT_REPRODUCED", "unigram_loss", "load_chapter_records", "run_word",
           "depth_comparison", "DepthVerdict", "depth_verdict", "GridCell", "grid_cells",
           "GridVerdict", "grid_verdict", "LayerUse", "layer_use", "LayerUseVerdict",
           "layer_use_verdict", "update_sizes", "update_exponents", "UpdateVerdict",
           "update_verdict", "weakest"]
