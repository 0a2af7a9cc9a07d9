"""Did a run train? Chapter 4's rule for where post-norm stops training, in one place.

A character model that learns nothing about the context ends at the **unigram loss**, the
entropy of the character frequencies (about 3.25 nats per character on the shipped corpus).
Chapter 4 states its rule before it shows the record ``postnorm_failure_depth``, and this
module is that rule, so the page's sentence, its table and its verdict come from one place:

* a run **trained** when its final validation loss is at least ``margin`` below the unigram
  loss; it **diverged** when the trainer stopped it (NaN, infinity, or a loss three times the
  first step's); otherwise it **stalled**;
* over the seeds of one arm family at one depth, the family **trains** (every seed trained),
  **stops** (no seed trained) or is **mixed**;
* a family's **failure depth** is the shallowest depth at which it stops;
* the verdict on "plain post-norm stops training past some depth" (``failure_verdict``) is
  ``reproduced`` when the claimed family trains at the shallowest depth, stops at a deeper one,
  and there the reference family trains with a validation loss clearly below it
  (``verdicts.compare``: the gap between the means exceeds the larger min-max range over
  seeds); ``with caveats`` when, in addition, an alternative family (e.g. another init) still
  trains at that depth; ``not reproduced at this scale`` otherwise.

In a comparison of losses a diverged run counts with its first step's training loss: it ended
no better than where it began (its validation loss is not defined).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

from .checks import check_number
from .verdicts import NOT_REPRODUCED, Comparison, claim_word, compare

#: What one run did.
TRAINED, STALLED, DIVERGED = "trained", "stalled", "diverged"
#: What one family did at one depth, over its seeds.
TRAINS, MIXED, STOPS = "trains", "mixed", "stops"


def run_status(eval_loss: float | None, diverged: bool, baseline: float,
               margin: float) -> str:
    """``"trained"``, ``"stalled"`` or ``"diverged"`` (module docstring) for a run that ended
    with validation loss ``eval_loss`` (None or NaN when it has none)."""
    check_number("baseline", baseline, low=0.0, low_open=True)
    check_number("margin", margin, low=0.0)
    if diverged:
        return DIVERGED
    if eval_loss is None or not math.isfinite(eval_loss):
        raise ValueError(f"eval_loss must be a finite number for a run that did not diverge, "
                         f"got {eval_loss!r}")
    return TRAINED if eval_loss < baseline - margin else STALLED


@dataclass(frozen=True)
class DepthOutcome:
    """One arm family at one depth, at its best learning rate: each seed's status and the
    loss it is compared with."""

    family: str
    n_layer: int
    arm: str                        # the record's arm name (the best rate's)
    statuses: tuple[str, ...]       # one per seed, in seed order
    losses: tuple[float, ...]       # validation loss (first training loss if diverged)
    lr: float | None = None         # the peak learning rate of ``arm``
    rates: tuple = ()               # ((lr, mean loss), ...) of every rate tried, best first

    @property
    def outcome(self) -> str:
        """``"trains"`` (every seed trained), ``"stops"`` (none did) or ``"mixed"``."""
        trained = sum(s == TRAINED for s in self.statuses)
        return TRAINS if trained == len(self.statuses) else STOPS if trained == 0 else MIXED


def depth_outcomes(record, baseline: float, margin: float) -> dict[str, list[DepthOutcome]]:
    """``{family: [DepthOutcome, ...]}`` of a record whose arms carry ``info["family"]``,
    ``info["n_layer"]`` and ``info["lr"]`` (``postnorm_failure_depth``), families in the
    record's order, depths ascending.

    Where a family was trained at several learning rates at one depth, it is scored at the
    rate whose runs have the lowest mean loss (the losses ``compare`` reads: a diverged run
    counts with its first training loss), and only that rate's runs enter its outcome; the
    rule is decided at each arm's best rate, never at one rate tuned for one arm. Ties go to
    the rate listed first in the record."""
    groups: dict[tuple[str, int], list[DepthOutcome]] = {}
    for arm in record.arms:
        info = record.arm(arm)["info"]
        finals = [record.run(arm, s)["final"] for s in record.seeds]
        statuses = tuple(run_status(f["eval_loss"], f["diverged"], baseline, margin)
                         for f in finals)
        losses = tuple(f["initial_loss"] if st == DIVERGED else f["eval_loss"]
                       for f, st in zip(finals, statuses))
        groups.setdefault((info["family"], info["n_layer"]), []).append(
            DepthOutcome(info["family"], info["n_layer"], arm, statuses, losses,
                         info.get("lr")))
    out: dict[str, list[DepthOutcome]] = {}
    for (family, _), tried in groups.items():
        ranked = sorted(tried, key=lambda r: sum(r.losses) / len(r.losses))   # stable
        rates = tuple((r.lr, sum(r.losses) / len(r.losses)) for r in ranked)
        out.setdefault(family, []).append(dataclasses.replace(ranked[0], rates=rates))
    for rows in out.values():
        rows.sort(key=lambda r: r.n_layer)
    return out


def failure_depth(rows: list[DepthOutcome]) -> int | None:
    """The shallowest depth at which the family stops training; None if it never does."""
    return next((r.n_layer for r in rows if r.outcome == STOPS), None)


def describe(rows: list[DepthOutcome]) -> str:
    """One family's outcome over depth in words, e.g. "trains at L = 6; stops at L = 12, 24,
    48 (2 of 9 runs diverged)"."""
    parts = []
    for outcome in (TRAINS, MIXED, STOPS):
        depths = [str(r.n_layer) for r in rows if r.outcome == outcome]
        if depths:
            parts.append(f"{outcome} at L = {', '.join(depths)}")
    failed = [s for r in rows if r.outcome != TRAINS for s in r.statuses if s != TRAINED]
    diverged = sum(s == DIVERGED for s in failed)
    note = f" ({diverged} of {len(failed)} failed runs diverged)" if diverged else ""
    return "; ".join(parts) + note


@dataclass(frozen=True)
class FailureVerdict:
    """The claims page's word for "``claim`` stops training past some depth", and why."""

    word: str
    depth: int | None               # the claimed family's failure depth
    comparison: Comparison | None   # claim vs reference at that depth
    caveat: str | None
    reason: str


def failure_verdict(outcomes: dict[str, list[DepthOutcome]], claim: str, reference: str,
                    alternative: str | None = None) -> FailureVerdict:
    """Apply the rule of the module docstring to ``depth_outcomes``: does family ``claim``
    train shallow and stop deeper, where ``reference`` trains clearly better? ``alternative``
    (optional) is the family whose training at that depth makes the result a caveat."""
    for name in (claim, reference) + ((alternative,) if alternative else ()):
        if name not in outcomes:
            raise KeyError(f"no family {name!r}; the families are {list(outcomes)}")
    rows = outcomes[claim]
    depth = failure_depth(rows)
    if rows[0].outcome != TRAINS:
        return FailureVerdict(NOT_REPRODUCED, depth, None, None,
                              f"{claim} does not train even at L = {rows[0].n_layer}, the "
                              f"shallowest depth tried: no depth effect to locate")
    if depth is None:
        return FailureVerdict(NOT_REPRODUCED, None, None, None,
                              f"{claim} does not stop training at any depth up to "
                              f"L = {rows[-1].n_layer}")
    at = {name: next(r for r in outcomes[name] if r.n_layer == depth)
          for name in outcomes if any(r.n_layer == depth for r in outcomes[name])}
    cmp = compare({claim: at[claim].losses, reference: at[reference].losses},
                  metric=f"validation loss at L = {depth}", better="lower")
    if at[reference].outcome != TRAINS:
        return FailureVerdict(NOT_REPRODUCED, depth, cmp, None,
                              f"{reference} does not train at L = {depth} either")
    caveat = None
    if alternative and at[alternative].outcome == TRAINS:
        caveat = f"{alternative} still trains at L = {depth}"
    word = claim_word(cmp, expected=reference, caveat=caveat)
    reason = (f"{claim} trains at L = {rows[0].n_layer} and stops from L = {depth}, where "
              f"{reference} trains ({cmp.between(claim, reference).verdict} gap)")
    return FailureVerdict(word, depth, cmp, caveat, reason + (f"; {caveat}" if caveat else ""))


def seed_curves(record, arm: str, key: str = "train_loss") -> tuple[list, list]:
    """``record.curves(arm, key)`` with missing values (a diverged step, stored as null) as
    NaN, ready for ``plots.plot_seed_curves``."""
    steps, values = record.curves(arm, key)
    return steps, [[math.nan if v is None else v for v in seed] for seed in values]
