"""Chapter 8's rules, applied to its records: X1 (looped depth), X2 (the best learning rate
across depth), X3 (LayerNorm Scaling).

Each rule is stated in the chapter before its result; this module is that rule in code, so the
sentence, the assertion and the claims page's word all come from the same numbers. Every
comparison between two arms is ``verdicts.compare`` (a gap counts only when it exceeds the
larger of the two arms' min-max ranges over seeds); this module decides which comparisons a
claim rests on and how they combine into a word of ``verdicts.CLAIM_WORDS``.

How a run that diverged counts (decided before any record was read): its loss is its first
training loss (it ended no better than it began; as chapter 4), and the removal cost of each of
its blocks is 0 (a model that did not train has no block that helps).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from depthnotes.verdicts.compare import (NOT_REPRODUCED, REPRODUCED, WITH_CAVEATS, Comparison,
                                         compare)


# -- shared --------------------------------------------------------------------------------
def run_loss(final: dict) -> float:
    """A run's final validation loss, or its first training loss if it diverged or has no
    finite validation loss."""
    loss = final.get("eval_loss")
    if final.get("diverged") or loss is None or not math.isfinite(loss):
        return float(final["initial_loss"])
    return float(loss)


def arm_losses(record, arm: str) -> list[float]:
    """``run_loss`` of each seed of ``arm``, in seed order."""
    return [run_loss(record.run(arm, s)["final"]) for s in record.seeds]


# -- X1: one block looped n times vs n distinct blocks vs one block once --------------------
@dataclass(frozen=True)
class LoopCell:
    """One (loop count n, hop count k) of X1: the looped model against one block applied
    once (the sweep's best rate for it at this k) and against n distinct blocks."""

    loops: int
    k: int
    looped: str                 # arm names (the looped one in the looped record,
    distinct: str               # the others in the sweep's record)
    once: str
    vs_once: Comparison         # accuracy, higher is better
    vs_distinct: Comparison

    @property
    def beats_once(self) -> bool:
        return self.vs_once.clear and self.vs_once.best == self.looped

    @property
    def matches_distinct(self) -> bool:
        """Not clearly worse than the distinct blocks (within noise, or better)."""
        return not (self.vs_distinct.clear and self.vs_distinct.best == self.distinct)

    @property
    def passes(self) -> bool:
        return self.beats_once and self.matches_distinct

    @property
    def distinct_beats_once(self) -> bool:
        """The reference itself: n distinct blocks clearly beat one block once at this k (by
        the same rule). Where they do not, the looped block has nothing to stand in for, and
        the cell can pass only if looping beats both."""
        seeds = {a.name: a.values for a in (*self.vs_once.arms, *self.vs_distinct.arms)}
        ref = compare({self.distinct: seeds[self.distinct], self.once: seeds[self.once]},
                      metric=self.vs_once.metric, better="higher")
        return ref.clear and ref.best == self.distinct


def one_block_best(looped, sweep, k: int) -> str:
    """The sweep's arm of one block applied once, at the looped arms' width, whose mean
    ``k``-hop accuracy is the highest (the sweep runs it at three rates: each k gets its
    best)."""
    width = looped.arm(looped.arms[0])["info"]["d_model"]
    ones = [a for a in sweep.arms if sweep.arm(a)["info"]["n_layer"] == 1
            and sweep.arm(a)["info"]["d_model"] == width]
    ref = sweep.final(f"accuracy_k{k}")
    return max(ones, key=lambda a: sum(ref[a]) / len(ref[a]))


def loop_series(looped, sweep, k: int) -> dict[str, dict[int, list]]:
    """Per-seed ``k``-hop accuracy by number of block applications n, for ``"distinct
    blocks"`` and ``"one block, looped"``; n = 1 is one block once (``one_block_best``) in
    both."""
    acc, ref = looped.final(f"accuracy_k{k}"), sweep.final(f"accuracy_k{k}")
    once = ref[one_block_best(looped, sweep, k)]
    infos = [looped.arm(a)["info"] for a in looped.arms]
    return {"distinct blocks": {1: once} | {i["loops"]: ref[i["distinct_arm"]] for i in infos},
            "one block, looped": {1: once} | {i["loops"]: acc[a]
                                              for a, i in zip(looped.arms, infos)}}


def loop_curves(looped, sweep, loops: int, k: int) -> dict[str, tuple[list, list]]:
    """Per-seed ``k``-hop accuracy during training (``Record.curves``: steps and values, one
    list per seed) at ``loops`` block applications: one block applied once (the sweep's best
    rate at this k), and for ``loops`` >= 2 also ``"distinct blocks"`` (``loops`` of them) and
    ``"one block, looped"`` (``loops`` times; the names of ``loop_series``). What chapter 8's
    explorer and its static figure draw."""
    by_loops = {looped.arm(a)["info"]["loops"]: a for a in looped.arms}
    if loops != 1 and loops not in by_loops:
        raise ValueError(f"loops must be 1 or one of the record's loop counts "
                         f"{sorted(by_loops)}, got {loops!r}")
    key = f"accuracy_k{k}"
    out = {"one block once": sweep.curves(one_block_best(looped, sweep, k), key)}
    if loops != 1:
        arm = by_loops[loops]
        out["distinct blocks"] = sweep.curves(looped.arm(arm)["info"]["distinct_arm"], key)
        out["one block, looped"] = looped.curves(arm, key)
    return out


def loop_cells(looped, sweep, min_k: int = 2) -> list[LoopCell]:
    """Every (n, k) with ``min_k`` <= k <= n (k up to the task's deepest hop) of X1, from the
    record ``looped`` (``looped_khop``) and the record ``sweep`` (``khop_depth_sweep``)."""
    max_k = sweep.config["data"]["max_hops"]
    cells = []
    for arm in looped.arms:
        info = looped.arm(arm)["info"]
        n, distinct = info["loops"], info["distinct_arm"]
        for k in range(min_k, min(n, max_k) + 1):
            metric = f"accuracy_k{k}"
            acc, ref = looped.final(metric), sweep.final(metric)
            once = one_block_best(looped, sweep, k)
            what = f"{k}-hop accuracy"
            cells.append(LoopCell(
                n, k, arm, distinct, once,
                compare({arm: acc[arm], once: ref[once]}, metric=what, better="higher"),
                compare({arm: acc[arm], distinct: ref[distinct]}, metric=what,
                        better="higher")))
    return cells


def loop_word(cells: list[LoopCell]) -> str:
    """X1's word: ``reproduced`` when every cell passes (the looped block clearly beats one
    block once and is not clearly worse than the distinct blocks); ``reproduced with
    caveats`` when every cell at the largest loop count passes; else ``not reproduced at this
    scale``."""
    if not cells:
        raise ValueError("loop_word needs at least one (n, k) cell")
    if all(c.passes for c in cells):
        return REPRODUCED
    most = max(c.loops for c in cells)
    if all(c.passes for c in cells if c.loops == most):
        return WITH_CAVEATS
    return NOT_REPRODUCED


# -- X2: does the best learning rate move with depth? ---------------------------------------
@dataclass(frozen=True)
class DepthOptimum:
    """One (rule, depth) of the learning-rate sweep: each rate's per-seed losses, the best
    rate (lowest mean) and whether the optimum moved from the shallowest depth's."""

    rule: str
    n_layer: int
    losses: dict                # {lr: [loss of each seed]}
    best: float                 # the rate with the lowest mean loss
    moved: bool                 # False at the shallowest depth


def lr_optima(record) -> dict[str, list[DepthOptimum]]:
    """``{rule: [DepthOptimum per depth, shallowest first]}`` of a ``depth_lr_transfer``
    record.

    The rule (stated in the chapter before the result): with r0 the best rate at the
    shallowest depth, the optimum at a deeper depth *moved* when every rate of the grid
    within one grid step of r0 (r0 and its neighbours) is clearly worse than that depth's
    best rate (``verdicts.compare``); otherwise it *stays put*: the seed spread decides a
    near-tie in favour of staying put.
    """
    table: dict[str, dict[int, dict[float, list[float]]]] = {}
    for arm in record.arms:
        info = record.arm(arm)["info"]
        table.setdefault(info["rule"], {}).setdefault(info["n_layer"], {})[info["lr"]] = \
            arm_losses(record, arm)
    out = {}
    for rule, by_depth in table.items():
        rows = []
        for L in sorted(by_depth):
            losses = dict(sorted(by_depth[L].items()))
            best = min(losses, key=lambda lr: sum(losses[lr]) / len(losses[lr]))
            moved = bool(rows) and _moved(losses, best, rows[0])
            rows.append(DepthOptimum(rule, L, losses, best, moved))
        out[rule] = rows
    return out


def _moved(losses: dict, best: float, shallow: DepthOptimum) -> bool:
    """The rule of ``lr_optima``; "one grid step" is read on the shallowest depth's grid (a
    deeper depth may have been run on part of it; a neighbour it lacks is left out)."""
    grid = list(shallow.losses)
    i0 = grid.index(shallow.best)
    near = [lr for lr in grid[max(0, i0 - 1): i0 + 2] if lr in losses]   # r0, neighbours
    if best in near:
        return False
    if not near:
        raise ValueError(f"L = {shallow.n_layer}'s best rate {shallow.best:g} and its "
                         f"neighbours were not run at the deeper depth (rates {list(losses)})")
    return all(compare({best: losses[best], lr: losses[lr]}).clear for lr in near)


def at_grid_edge(optimum: DepthOptimum) -> bool:
    """The best rate is the smallest or the largest rate run at that depth: the true optimum
    may lie outside the grid, and "moved" or "stays put" is a lower bound on the shift."""
    return optimum.best in (min(optimum.losses), max(optimum.losses))


def transfer_word(optima: dict[str, list[DepthOptimum]], standard: str = "standard") -> str:
    """X2's word: ``reproduced`` when the standard parameterisation's optimum moves at some
    depth and every scaled rule's stays put at every depth; ``reproduced with caveats`` when
    the standard's moves and at least one scaled rule's stays put; ``not reproduced at this
    scale`` otherwise (in particular when the standard's optimum does not move either: then
    this experiment cannot show that a rule is needed)."""
    if standard not in optima:
        raise KeyError(f"no rule {standard!r}; the rules are {sorted(optima)}")
    std_moves = any(o.moved for o in optima[standard])
    stays = [not any(o.moved for o in rows) for rule, rows in optima.items()
             if rule != standard]
    if std_moves and stays and all(stays):
        return REPRODUCED
    if std_moves and any(stays):
        return WITH_CAVEATS
    return NOT_REPRODUCED


# -- X3: LayerNorm Scaling -----------------------------------------------------------------
def deep_half_cost(record, arm: str) -> list[float]:
    """Per seed: the mean loss rise when one block of the deeper half of the stack (blocks
    L/2 + 1 .. L) is removed; 0 for a run that diverged."""
    out = []
    for s in record.seeds:
        final = record.run(arm, s)["final"]
        cost = final["layer_removal_cost"]
        half = cost[len(cost) // 2:]
        bad = final.get("diverged") or any(c is None or not math.isfinite(c) for c in half)
        out.append(0.0 if bad else sum(half) / len(half))
    return out


@dataclass(frozen=True)
class LnScalingVerdict:
    loss: Comparison            # validation loss, lower is better
    deep: Comparison            # deep-half removal cost, higher is better
    scaled: str                 # the LayerNorm Scaling arm
    word: str


def ln_scaling_verdict(record, scaled: str, plain: str) -> LnScalingVerdict:
    """X3's word: ``reproduced`` when, with LayerNorm Scaling, the deeper half's blocks are
    clearly more useful (higher removal cost) AND the validation loss is clearly lower;
    ``reproduced with caveats`` when one of the two is clearly in its favour and the other
    within noise; ``not reproduced at this scale`` otherwise."""
    loss = compare({scaled: arm_losses(record, scaled), plain: arm_losses(record, plain)},
                   metric="validation loss", better="lower")
    deep = compare({scaled: deep_half_cost(record, scaled),
                    plain: deep_half_cost(record, plain)},
                   metric="deep-half removal cost", better="higher")
    wins = [c.clear and c.best == scaled for c in (loss, deep)]
    losses = [c.clear and c.best != scaled for c in (loss, deep)]
    word = REPRODUCED if all(wins) else \
        WITH_CAVEATS if any(wins) and not any(losses) else NOT_REPRODUCED
    return LnScalingVerdict(loss, deep, scaled, word)
