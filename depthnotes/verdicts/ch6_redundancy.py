"""Chapter 6's rule for claim C13 (redundant deep layers), applied to the measures of
``measure.redundancy``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from depthnotes.measure.redundancy import MANY_FRACTION, REMOVABLE_REL, removable_count
from depthnotes.verdicts.evidence import (MIN_SEEDS, NOT_SHOWN, NOT_TESTABLE, REPRODUCED,
                                          Difference, RatePick, WhyNot, best_rate, combine, compare,
                                          from_bracket)


@dataclass(frozen=True)
class RedundancyCheck:
    """The result of ``judge_redundancy``: per trained model (seed) and per untrained one."""

    trained_cos: tuple[float, ...]     # mean cos(u_i, u_i+1) over pairs after block 1
    untrained_cos: tuple[float, ...]   # the same mean, one per untrained model
    removable: tuple[int, ...]         # removable_count, one per trained model
    n_layer: int

    @property
    def models(self) -> int:
        """How many trained models the measures come from."""
        return len(self.trained_cos)

    @property
    def untrained_range(self) -> float:
        return max(self.untrained_cos) - min(self.untrained_cos)

    @property
    def aligned(self) -> bool:
        """The trained models' cosines are clearly above the untrained ones' (``aligned``)."""
        return aligned(self.trained_cos, self.untrained_cos)

    @property
    def many(self) -> bool:
        """In every trained model at least ``MANY_FRACTION`` of the blocks can go."""
        return min(self.removable) >= MANY_FRACTION * self.n_layer

    @property
    def similar_word(self) -> str:
        return similarity_word(self.trained_cos, self.untrained_cos)

    @property
    def removable_word(self) -> str:
        if self.models < MIN_SEEDS:
            return NOT_TESTABLE
        return REPRODUCED if self.many else NOT_SHOWN

    @property
    def word(self) -> str:
        """The two parts' words combined (``evidence.combine``)."""
        return combine([self.similar_word, self.removable_word])


def aligned(trained_cos, untrained_cos) -> bool:
    """Trained models' mean cosines of consecutive updates (one per seed) clearly above
    untrained models' of the same shape on the same batch (``evidence.compare``); False with
    fewer than ``MIN_SEEDS`` of either."""
    if len(trained_cos) < MIN_SEEDS or len(untrained_cos) < MIN_SEEDS:
        return False
    d = compare(("trained", tuple(trained_cos)), ("untrained", tuple(untrained_cos)),
                better="higher")
    return d.clear and d.better == "trained"


def similarity_word(trained_cos, untrained_cos) -> str:
    """C13's "similar updates" on one shape: reproduced when ``aligned``, else not shown
    here; fewer than ``MIN_SEEDS`` trained or untrained models: not testable here."""
    if len(trained_cos) < MIN_SEEDS or len(untrained_cos) < MIN_SEEDS:
        return NOT_TESTABLE
    return REPRODUCED if aligned(trained_cos, untrained_cos) else NOT_SHOWN


@dataclass(frozen=True)
class DeepSimilarity:
    """C13's "similar updates" on the pruned deep stacks (record ``layer_similarity_64``):
    per depth, the mean cosine of consecutive updates (pairs after block 1) of each trained
    seed and of each untrained stack of the same shape, on the same probe batch."""

    trained_cos: dict[int, tuple[float, ...]]     # L -> one per seed
    untrained_cos: dict[int, tuple[float, ...]]   # L -> one per untrained stack

    @property
    def depths(self) -> list[int]:
        return sorted(self.trained_cos)

    def word_at(self, n_layer: int) -> str:
        return similarity_word(self.trained_cos[n_layer], self.untrained_cos[n_layer])

    @property
    def word(self) -> str:
        """Every depth's word combined (``evidence.combine``): all reproduced -> reproduced;
        some -> reproduced in part."""
        return combine([self.word_at(L) for L in self.depths])


def judge_deep_similarity(record, untrained_cosines: dict) -> DeepSimilarity:
    """``DeepSimilarity`` of a ``layer_similarity_64``-like record: each arm's
    ``info['n_layer']`` and, per seed, its final ``update_cosines``; ``untrained_cosines`` maps
    each depth to one ``update_cosines`` array per untrained stack of that arm's shape (the
    chapter measures them on the same probe batch)."""
    trained = {}
    for arm in record.arms:
        L = record.arm(arm)["info"]["n_layer"]
        trained[L] = tuple(later_mean_cosine(record.run(arm, s)["final"]["update_cosines"])
                           for s in record.seeds)
    if set(trained) != set(untrained_cosines):
        raise ValueError(f"untrained cosines for depths {sorted(untrained_cosines)}, the "
                         f"record has {sorted(trained)}")
    return DeepSimilarity(trained, {L: tuple(later_mean_cosine(c) for c in cs)
                                    for L, cs in untrained_cosines.items()})


def later_mean_cosine(cosines) -> float:
    """Mean of ``update_cosines`` over the pairs after block 1 (block 1 turns the embedding
    into a stream and is unlike the rest)."""
    cosines = np.asarray(cosines, dtype=float)         # (L-1,)
    if cosines.size < 2:
        raise ValueError("need at least 3 blocks (2 update pairs) for the pairs after block 1")
    return float(cosines[1:].mean())


def judge_redundancy(trained_cosines, untrained_cosines, drop_losses) -> RedundancyCheck:
    """C13's first part on an 8-block record: similar updates when the trained models' mean
    cosine between consecutive updates (pairs after block 1) is clearly above the untrained
    models' (the evidence library's rule); many blocks can go when in every trained model
    the last n blocks can be removed within ``REMOVABLE_REL`` of the full loss for at least
    ``MANY_FRACTION`` of its blocks. ``trained_cosines`` holds ``update_cosines`` of each trained
    model (one array per seed), ``drop_losses`` each one's ``drop_last_losses`` (same order),
    ``untrained_cosines`` one ``update_cosines`` array per untrained model of the same shape
    (at least 2). Fewer than ``MIN_SEEDS`` models make a part not testable."""
    if len(trained_cosines) < 1 or len(trained_cosines) != len(drop_losses):
        raise ValueError(f"need one drop_losses per trained model, got {len(trained_cosines)} "
                         f"trained_cosines and {len(drop_losses)} drop_losses")
    if len(untrained_cosines) < 2:
        raise ValueError("untrained_cosines needs at least 2 untrained models (a range)")
    drops = [np.asarray(d, dtype=float) for d in drop_losses]
    for cos, drop in zip(trained_cosines, drops):
        if len(cos) != drop.size - 1 or drop.size != drops[0].size:
            raise ValueError(f"{len(cos)} update cosines do not belong to {drop.size} drop "
                             f"losses (expect L - 1 and L, the same L for every model)")
    return RedundancyCheck(tuple(later_mean_cosine(c) for c in trained_cosines),
                           tuple(later_mean_cosine(c) for c in untrained_cosines),
                           tuple(removable_count(d) for d in drops), int(drops[0].size))


# -- C13 by the published pruning protocols (record layer_pruning) ---------------------------
#: The two protocols of the record, by the final probe that holds each one's losses.
PRUNING_PROTOCOLS = {"Gromov": "gromov_prune_losses", "ShortGPT": "shortgpt_prune_losses"}


@dataclass(frozen=True)
class PruningDepth:
    """One pruned depth of ``layer_pruning``: per protocol and per seed, the loss after
    removing n = 0 .. L/2 blocks (n = 0 is the full model) and the removable count."""

    n_layer: int
    losses: dict          # {protocol: ((loss per n) per seed)}
    removable: dict       # {protocol: (removable count per seed)}

    @property
    def seeds(self) -> int:
        return len(next(iter(self.removable.values())))

    @property
    def many(self) -> bool:
        """Every seed reaches MANY_FRACTION of its blocks by at least one protocol."""
        best = [max(per_seed) for per_seed in zip(*self.removable.values())]
        return min(best) >= MANY_FRACTION * self.n_layer

    def half_cost(self, protocol: str) -> tuple[float, ...]:
        """Per seed: loss after removing L/2 blocks minus the full model's."""
        return tuple(c[self.n_layer // 2] - c[0] for c in self.losses[protocol])


@dataclass(frozen=True)
class PruningCheck:
    """``judge_pruning``'s result: the pruned depths, the from-scratch controls' loss on the
    same probe batch ({n_layer: per seed}) and, when the arms were read off a rate grid
    (``judge_pruning_at_best``), the ``RatePick`` of each arm they were read at
    ({(role, n_layer): pick}, role 'pruned' or 'control'; empty for one record at one rate)."""

    depths: tuple[PruningDepth, ...]
    scratch: dict
    picks: dict = field(default_factory=dict)

    def bracket(self, *keys) -> tuple[bool, WhyNot | None]:
        """``evidence.from_bracket`` over the picks of ``keys`` ((role, n_layer) pairs; a key
        with no pick, one rate tried in one record, adds nothing)."""
        return from_bracket(*(self.picks[k] for k in keys if k in self.picks))

    @property
    def why_not(self) -> WhyNot | None:
        """Why the word is not testable when a pruned depth's best rate is not bracketed."""
        return self.bracket(*(("pruned", d.n_layer) for d in self.depths))[1]

    @property
    def word(self) -> str:
        """Fewer than ``MIN_SEEDS`` seeds: not testable. Else not shown here when a depth
        whose rate the grid brackets misses "many"; else not testable when a depth's best rate
        is not bracketed (``why_not``); else reproduced (every depth has many)."""
        if any(d.seeds < MIN_SEEDS for d in self.depths):
            return NOT_TESTABLE
        judged = [d for d in self.depths if self.bracket(("pruned", d.n_layer))[0]]
        if not all(d.many for d in judged):
            return NOT_SHOWN
        return REPRODUCED if len(judged) == len(self.depths) else NOT_TESTABLE


def half_against_scratch(check: PruningCheck, depth: PruningDepth):
    """``evidence.compare`` of the cut to half the stack (per seed, the better rule's loss at
    n = L/2) against the worse of the stacks trained from scratch (per seed), both on the
    probe batch, with ``LOSS_MARGIN``: is pruning to half dearer than training shallow?
    Whether the rates it rests on are bracketed: ``check.bracket`` of the depth and the
    controls."""
    from depthnotes.verdicts.ch4_trainability import LOSS_MARGIN

    if not check.scratch:
        raise ValueError("the record has no stacks trained from scratch")
    half = tuple(min(per_rule) for per_rule in zip(
        *([c[depth.n_layer // 2] for c in per_seed] for per_seed in depth.losses.values())))
    shallow = max(check.scratch.values(), key=lambda v: sum(v) / len(v))
    return compare(("cut to half", half), ("trained shallow", shallow), margin=LOSS_MARGIN)


def _role(info: dict) -> str:
    """'pruned' for the stacks that are pruned; every other arm is a control trained from
    scratch (role 'control', 'scratch' or 'from scratch')."""
    return "pruned" if info.get("role") == "pruned" else "control"


def _pruning_check(arms, picks=None, name: str = "") -> PruningCheck:
    """A ``PruningCheck`` from ``arms``: (info, finals per seed) pairs, one per arm."""
    depths, scratch = [], {}
    for info, runs in arms:
        if _role(info) == "pruned":
            losses = {p: tuple(tuple(float(v) for v in r[key]) for r in runs)
                      for p, key in PRUNING_PROTOCOLS.items()}
            removable = {p: tuple(removable_count(c) for c in per_seed)
                         for p, per_seed in losses.items()}
            depths.append(PruningDepth(int(info["n_layer"]), losses, removable))
        else:
            scratch[int(info["n_layer"])] = tuple(float(r["drop_last_losses"][0])
                                                  for r in runs)
    if not depths:
        raise ValueError(f"record {name!r} has no arm with info role 'pruned'")
    return PruningCheck(tuple(sorted(depths, key=lambda d: d.n_layer)), scratch,
                        dict(picks or {}))


def judge_pruning(record) -> PruningCheck:
    """C13's second part on a ``layer_pruning`` record: a seed's removable count, per protocol,
    is the number of cuts n >= 1 that keep the probe loss within ``REMOVABLE_REL`` of the
    full model's; many blocks can go (reproduced) when every seed of every depth reaches
    ``MANY_FRACTION`` of its blocks by at least one protocol, else not shown here; fewer than
    ``MIN_SEEDS`` seeds: not testable. Arms with info role 'pruned'
    carry the protocols' losses; arms with role 'scratch' (or 'from scratch') are the
    controls, read from entry 0 of their ``drop_last_losses`` (the full model's loss on the
    same probe batch)."""
    arms = [(record.arm(name)["info"], [record.run(name, s)["final"] for s in record.seeds])
            for name in record.arms]
    return _pruning_check(arms, name=record.name)


# -- C13 across learning rates (layer_pruning with the records of PRUNING_RECORDS) -----------
@dataclass(frozen=True)
class PruningGrid:
    """``layer_pruning``'s arms over a grid of peak rates (its own and those of the records
    that add rates): per arm, keyed (role, n_layer), its runs' finals at every rate, and its
    best rate by validation loss (``evidence.best_rate``), and the losses it was picked from."""

    arms: dict      # {(role, n_layer): {lr: (info, finals per seed)}}
    picks: dict     # {(role, n_layer): RatePick}
    values: dict    # {(role, n_layer): {lr: the metric per seed, None where it diverged}}

    @property
    def rates(self) -> tuple[float, ...]:
        return tuple(sorted({lr for by_lr in self.arms.values() for lr in by_lr}))

    def at(self, rates: dict) -> list:
        """(info, finals) of every arm at ``rates`` ({(role, n_layer): lr})."""
        return [self.arms[k][rates[k]] for k in sorted(self.arms)]


def pruning_grid(*records, metric: str = "eval_loss") -> PruningGrid:
    """The arms of ``records`` (layer_pruning and the records that train the same arms at other
    rates; the same seeds) grouped by (role, n_layer) and by each arm's peak rate. The best rate
    of each is the one ``evidence.best_rate`` picks from the seeds' final ``metric`` (the
    validation loss on the same held-out batches for every seed and rate, not the probe batch
    that the pruning rules pick and score blocks on), with ``LOSS_MARGIN``: a rate is tied
    with the best unless clearly worse by more than that. A diverged seed counts as ln V."""
    from depthnotes.verdicts.ch4_trainability import LOSS_MARGIN, loss_ceiling

    if len({tuple(r.seeds) for r in records}) != 1:
        raise ValueError("the records of a rate grid must have the same seeds")
    arms, values, ceiling = {}, {}, None
    for record in records:
        for name in record.arms:
            arm = record.arm(name)
            key, lr = (_role(arm["info"]), int(arm["info"]["n_layer"])), float(arm["recipe"]["lr"])
            if lr in arms.get(key, {}):
                raise ValueError(f"two arms {key} at lr {lr:g}")
            runs = [record.run(name, s)["final"] for s in record.seeds]
            arms.setdefault(key, {})[lr] = (arm["info"], runs)
            values.setdefault(key, {})[lr] = tuple(r[metric] for r in runs)
            if any(v is None for v in values[key][lr]):
                ceiling = loss_ceiling(record, name)
    picks = {k: best_rate(v, margin=LOSS_MARGIN, ceiling=ceiling) for k, v in values.items()}
    return PruningGrid(arms, picks, values)


#: The records of C13's rate grid, each ``layer_pruning``'s arms at other peak rates:
#: ``layer_pruning`` (4e-3), ``layer_pruning_rates`` (2e-3 and 8e-3) and, since every arm did
#: best at 8e-3, the top of those three, ``layer_pruning_rates_top`` (1.6e-2). One list, so
#: that a rate added later is one more name here and chapter 6 reads every arm over all of them.
PRUNING_RECORDS = ("layer_pruning", "layer_pruning_rates", "layer_pruning_rates_top")


def load_pruning_grid(names=PRUNING_RECORDS, directory=None, quick: bool = False):
    """``(records, grid)``: the records ``names`` (``layer_pruning`` first), each checked
    against its definition (``records.check_current``), and ``pruning_grid`` over all of them:
    every arm at every rate they hold, read at its best by ``evidence.best_rate``."""
    from depthnotes.experiments.records import check_current, load_record

    records = tuple(load_record(n, directory=directory, quick=quick) for n in names)
    for record in records:
        check_current(record)
    return records, pruning_grid(*records)


def judge_pruning_at_best(grid: PruningGrid) -> PruningCheck:
    """``judge_pruning``'s rule with every arm, pruned stack and control alike, read at its own
    best rate of the grid; a pruned depth whose best rate the grid does not bracket (nor is
    the grid flat) is not judged (``PruningCheck.word``, ``why_not``)."""
    best = {k: p.best for k, p in grid.picks.items()}
    return _pruning_check(grid.at(best), grid.picks)


def judge_pruning_at(grid: PruningGrid, lr: float) -> PruningCheck:
    """``judge_pruning``'s rule with every arm at the one rate ``lr`` (no picks: a single rate
    is what a one-rate record judged)."""
    return _pruning_check(grid.at(dict.fromkeys(grid.arms, float(lr))))


#: How a rate stands against an arm's best rate (``rate_standing``).
BEST, TIED, WORSE = "the best", "within noise of the best", "clearly worse than the best"


def rate_standing(pick: RatePick, lr: float) -> str:
    """``lr`` on ``pick``'s grid: the best rate, within noise of it (the evidence library's
    rule, with the margin the pick was made with), or clearly worse."""
    lr = float(lr)
    if lr not in pick.rates:
        raise ValueError(f"lr {lr:g} is not on the grid {pick.rates}")
    return BEST if lr == pick.best else TIED if lr in pick.tied else WORSE


# -- C13 after a healing fine-tune (record layer_pruning_healed) -----------------------------
#: The rules of ``redundancy.pruned_blocks`` by the names the chapter prints.
HEAL_RULES = {"gromov": "Gromov", "shortgpt": "ShortGPT"}


@dataclass(frozen=True)
class HealedDepth:
    """One depth of ``layer_pruning_healed``: per seed, the full model's loss after the same
    extra steps (the control), and per (rule, n) the loss after pruning without healing and
    after healing; every loss on the same probe batch."""

    n_layer: int
    full: tuple[float, ...]               # per seed: the trained model's loss, nothing cut
    control: tuple[float, ...]            # per seed: the full model after the same steps
    unhealed: dict                        # {(rule, n): per seed}
    healed: dict                          # {(rule, n): per seed}

    def cut_cost(self, rule: str, n: int) -> tuple[float, ...]:
        """Per seed: the cut's loss without healing minus the trained model's."""
        return tuple(u - f for u, f in zip(self.unhealed[rule, n], self.full))

    def cost(self, rule: str, n: int) -> tuple[float, ...]:
        """Per seed: healed loss minus the control's (what the cut still costs)."""
        return tuple(h - c for h, c in zip(self.healed[rule, n], self.control))

    def keeps(self, rule: str, n: int) -> bool:
        """On every seed the healed cut's loss is within ``REMOVABLE_REL`` of the control's."""
        return all(h <= (1 + REMOVABLE_REL) * c
                   for h, c in zip(self.healed[rule, n], self.control))

    def best_cost(self, n: int, healed: bool = True) -> tuple[float, ...]:
        """Per seed, the better rule's cost of cutting ``n`` blocks: after healing (against
        the control, ``cost``) or, with ``healed=False``, without it (``cut_cost``)."""
        costs = self.cost if healed else self.cut_cost
        return tuple(min(c) for c in zip(*(costs(rule, n) for rule in HEAL_RULES)))

    def best_healed(self, n: int) -> tuple[float, ...]:
        """Per seed, the better rule's loss after cutting ``n`` blocks and healing (a rule
        whose fine-tune diverged, NaN, is passed over; NaN when both did)."""
        return tuple(min((v for v in per_rule if v == v), default=float("nan"))
                     for per_rule in zip(*(self.healed[rule, n] for rule in HEAL_RULES)))

    def kept(self, n: int) -> bool:
        """The cut of ``n`` blocks keeps its loss by at least one rule."""
        return any(self.keeps(rule, n) for rule in HEAL_RULES)

    @property
    def half_kept(self) -> bool:
        """The cut to L/2 keeps its loss by at least one rule."""
        return self.kept(self.n_layer // 2)


@dataclass(frozen=True)
class HealingCheck:
    """``judge_healing``'s result: the healed depths, shallowest first."""

    depths: tuple[HealedDepth, ...]

    @property
    def word(self) -> str:
        if any(len(d.control) < MIN_SEEDS for d in self.depths):
            return NOT_TESTABLE
        return REPRODUCED if all(d.half_kept for d in self.depths) else NOT_SHOWN


def judge_healing(record) -> HealingCheck:
    """C13's "many removable" after a healing fine-tune, on a ``layer_pruning_healed`` record:
    a cut keeps the loss when, after healing, its loss on the probe batch is within
    ``REMOVABLE_REL`` of the full model's given the same extra steps, on every seed; the part is
    reproduced when at every depth the cut to half the stack keeps the loss by at least one of
    the two rules, else not shown here; fewer than ``MIN_SEEDS`` seeds: not testable. A NaN
    (a diverged fine-tune; a record stores it as null) keeps nothing."""
    depths = []
    for name in record.arms:
        info = record.arm(name)["info"]
        plan = [(str(rule), int(n)) for rule, n in info["heal"]["plan"]]
        if ("none", 0) not in plan:
            raise ValueError(f"arm {name!r}: its heal plan has no control ('none', 0)")
        runs = [record.run(name, s)["final"] for s in record.seeds]
        healed = {step: tuple(_loss(r["healed_losses"][i]) for r in runs)
                  for i, step in enumerate(plan)}
        unhealed = {(rule, n): tuple(float(r[f"{rule}_prune_losses"][n]) for r in runs)
                    for rule, n in plan if rule != "none"}
        control = healed.pop(("none", 0))
        full = tuple(float(r["gromov_prune_losses"][0]) for r in runs)
        depths.append(HealedDepth(int(info["n_layer"]), full, control, unhealed, healed))
    if not depths:
        raise ValueError(f"record {record.name!r} has no arms")
    return HealingCheck(tuple(sorted(depths, key=lambda d: d.n_layer)))


def _loss(value) -> float:
    """A stored loss; null (how a record stores NaN) reads as NaN."""
    return float("nan") if value is None else float(value)


def healed_against_scratch(depth: HealedDepth, scratch) -> Difference:
    """``evidence.compare``, with ``LOSS_MARGIN``, of the cut to half the stack after healing
    (per seed, the better rule's loss, ``best_healed``) against a stack of L/2 blocks trained
    from scratch (``scratch``: its per-seed loss on the same probe batch, seeds in the same
    order): does pruning and healing a deep stack end where training the shallow one does?
    The caller says what the two were given (the healed cut has its training run plus the
    healing steps; a control trained from scratch has only its run)."""
    from depthnotes.verdicts.ch4_trainability import LOSS_MARGIN

    return compare((f"healed {depth.n_layer} -> {depth.n_layer // 2}",
                    depth.best_healed(depth.n_layer // 2)),
                   (f"{depth.n_layer // 2} from scratch", tuple(scratch)), margin=LOSS_MARGIN)
