"""Chapter 5's rules: what each of its records must show for C9, C10 and C12, and what its
measurement at initialisation must show for C11, in one place.

The chapter states each rule above its result; the functions here are those rules, so the
table, the assertion and the claims page's word come from the same numbers. Runs are judged by
chapter 4's rule (``ch4_trainability.run_status``: *trained* when the final validation loss is
at least ``UNIGRAM_MARGIN`` below the unigram loss); arms are compared, best rates picked and
words given by the evidence library (``verdicts.evidence``: a difference is clear when the gap of
means exceeds ``LOSS_MARGIN`` and the seeds are separated; a best rate counts only when the
grid brackets it). A family at one depth "trains" only when every seed trained
(``DepthOutcome.outcome == TRAINS``).

* C9, depth and C12, training (``depth_verdict``): at each depth, two families' final
  validation losses compared, each family at its best rate; the claimed family must train
  (every seed) and be clearly better. One word per depth; the claim's word combines them
  (``evidence.combine``: at every depth reproduced, at some reproduced in part). At 48
  blocks the baseline is the post-norm arm with the same init family: Xavier post-norm for
  Xavier pre-norm (the arms differ in the norm's place only), post-norm with N(0, 0.02²) on
  every matrix for pre-norm with GPT-2's init (``fixes_at_48_small_init``; the arms differ in
  the norm's place and GPT-2's 1/sqrt(2L) on the two projections into the stream).
* C9, recipe (``recipe_verdict``, on ``prenorm_vs_postnorm_shallow``, at depths where
  post-norm trains). A norm's *tolerance* is the highest peak rate of the grid at which it
  trains with every seed (``top_trainable``). *Larger rates*: without warm-up, pre-norm's
  tolerance is higher than post-norm's (reproduced; post-norm's higher: contradicted; equal:
  not shown; neither norm fails at any rate of the grid: not testable). *Less warm-up*:
  warm-up raises post-norm's tolerance and not pre-norm's (reproduced; the other way round:
  contradicted; otherwise not shown). A tolerance is a grid rate, so each part holds "within
  this grid"; a norm that trains at the top rate tolerates at least that much. *Amended on
  2026-12-06, before ``prenorm_vs_postnorm_shallow_top`` ran* (a reviewer's reading): a norm
  that trains without warm-up at the grid's top rate cannot show a rise with warm-up, so
  at such a depth the less-warm-up part is not testable (pre-norm's tolerance was the top
  rate at both depths, and "not pre-norm's" held only because the grid ended there).
* C10: two parts. *Contribution* (``layer_use_verdict``): training must lower the last
  quarter's relative contribution against the early quarter's (blocks 2 to L/4; block 1
  builds the first features from a small embedding and is left out) compared with the same
  model untrained. *Removal* (``layer_use_control``): in the trained pre-norm model a late
  block's removal cost over an early block's must be clearly below the same ratio in a
  post-norm-family stack trained with the same recipe: DeepNorm on the first 48-block
  records, then post-norm with N(0, 0.02²) (``fixes_at_48_small_init``, the 150-step recipe
  of pre-norm's probed runs; no control on that recipe can make the part testable, since
  removing an early pre-norm block there lowers the loss), since 2026-12-05 DeepNorm on the
  450-step recipe (``RECORDS_48_LONG_PROBED``: ``layer_use_48_long``, both stacks probed).
  Removing a late block of a trained pre-norm stack costs less than removing an early one
  almost whatever the model learned (``layer_use_verdict`` still measures that, for the
  page), so the claim's part is the comparison; it needs both best rates bracketed, a
  control that trained (every seed) and early blocks whose removal costs something (above
  zero), else it is not testable.
  *Removal, as amended on 2026-12-05 before ``layer_use_48_long_edges`` and
  ``layer_use_48_long_lns`` were read* (a reviewer's reading of ``layer_use_48_long``):
  DeepNorm differs from pre-norm in the norm's place, alpha, beta and the final LayerNorm,
  and a post-norm-family stack leaning on its last blocks would give the same contrast, so
  on the 450-step recipe it is shown as an illustration with no word. The control is
  pre-norm with LayerNorm Scaling (``layer_use_48_long_lns``; one change, the one Sun et al.
  make so that deep pre-norm blocks do more), and the late quarter leaves out each stack's
  last block (its removal also removes what feeds the head directly), as the early quarter
  leaves out block 1. Pre-norm's late / early ratio clearly below the control's:
  reproduced; clearly above: contradicted; within noise: not shown here; the conditions
  above (bracketed best rates, every seed trained, early removal costs above zero) still
  make it not testable.
  *Amended on 2026-12-06, before ``prenorm_layer_use_rates`` ran* (issue 27's review):
  the contribution part is judged at the pre-norm stack's best rate on ``prenorm_layer_use``'s
  recipe (``contribution_at_best``), not at its one rate, and is not testable unless that
  rate is bracketed, as every trained comparison of the book. And the removal part has two
  rows: *against a post-norm-family stack*, the comparison the claim is about (a reviewer:
  under-use is relative to post-norm), DeepNorm on the 450-step recipe as the rule first
  had it, with the conditions and the cut of the last block above, judged on fresh seeds
  (``layer_use_48_confirm``, the bracket read from the grids that chose the rates on seeds
  0-2, whose ratios were on the page before this row had a rule); and *against the
  one-change control*, pre-norm with LayerNorm Scaling, as amended on 2026-12-05.
* C12, the halves (``ablation_part``): alpha only and beta only each against Xavier
  post-norm at one depth, as ``depth_verdict`` judges DeepNorm, once the positive control
  holds: full DeepNorm trains and ends clearly below post-norm in the same record (else not
  testable). Each half is also compared with full DeepNorm (shown beside the word). Both
  halves are judged on ``RECORDS_48_LONG`` (450 steps); alpha only was judged on the
  150-step records, where the control failed, until ``alpha_only_48_long`` ran.
* C12, update size (``update_verdict``): two parts. DeepNorm's first update must be clearly
  smaller than post-norm's (a word per depth, combined), and *bounded*: DeepNorm's exponent
  (the first update against depth fitted on log-log axes per seed, ``update_exponents``) is
  flat (``FLAT_EXPONENT``) for every seed; above it for every seed, the update grows with
  depth (contradicted). The exponents alone are not the whole story: each token's output
  leaves a LayerNorm with length about sqrt(d), so an update (the distance between two such
  vectors) is at most 2 sqrt(d); an update near that size at every depth has an exponent
  near zero too. The SGD setting is judged over several rates (``sgd_part``): at the smallest
  rate, provided its exponent does not depend on the rate (every seed within
  ``FLAT_EXPONENT`` of the next rate's), else not testable. Two SGD rows, by what the step
  moves (``sgd_responses(..., stepped=)``): the whole model (``init_response_depth`` and
  ``init_response_sgd``), and, since 2026-12-05, the matrices DeepNet's bound sums over
  (``init_response_sgd_deepnet``: per block W_V, W_O, W_1 and W_2); the same rule judges
  both. The residual blocks' parameters only (``init_response_sgd_blocks``: W_Q, W_K,
  LayerNorm gains and biases too, which the bound leaves out) was that row until a reviewer
  objected; it is shown as a diagnostic with no word, since it does not test the bound.
* C12, 1,000 blocks (``sweep_verdict``, on ``deepnorm_depth_sweep``; stated 2026-12-05
  before that record was read, and amended the same day, still before it was read, after a
  reviewer's reading of the rule). DeepNorm at 48, 200, 500 and 1,000 blocks, one rate per
  depth (Adam's peak rate shrinking as 1/sqrt(L)), equal tokens; a short Xavier post-norm run
  at the deepest depth. One part, *DeepNorm trains at the deepest depth*. The positive
  control is the sweep's shallowest DeepNorm arm: if not every seed of it trained (chapter
  4's rule), not testable here. Else, at the deepest depth: every seed trained and no loss
  spike (``loss_spikes``): reproduced; every seed trained with a spike, or some seeds
  trained: reproduced in part; none trained and every seed stalled or diverged: not shown
  here; none trained and some still improving (slow): not testable here, since at one rate a
  run still falling may need more steps or another rate. The part cannot go against the claim
  (one rate cannot refute that some rate trains). The depths between are shown per seed with
  no word; the page names the deepest at which every seed trained. The final loss rises with
  depth at equal tokens and a lower rate; that is expected and not judged. Post-norm's short
  run (its first 100 steps, all warm-up, shared with DeepNorm's) is shown beside DeepNorm's
  loss at the same step, with no word: the claim's comparison with post-norm rests on 48 and
  200 blocks (``depth_verdict``); at 1,000 blocks ``deepnorm_depth_sweep_post`` would show
  post-norm on DeepNorm's full recipe, one rate, and a word would need a grid of rates.
* C12, update during training (``training_updates``, on ``deepnorm_sweep_updates``; stated
  2026-12-06 before that record was read): the sweep's runs over their first 50 steps, all
  inside the warm-up, with DeepNet's update measure after every step. The measure saturates
  (``SATURATED_UPDATE``: past sqrt(d) a token's output has been largely replaced), so both
  parts are judged at the last step at which every DeepNorm run, at every depth, is below
  sqrt(d); with none, not testable. *Bounded*: DeepNorm's update there fitted against L per
  seed, by ``bounded_word``. *Smaller*: at 1,000 blocks, at that step, DeepNorm's update
  against Xavier post-norm's at the same rate: clearly smaller, reproduced; within noise, not
  shown here; clearly larger, contradicted here. Each run's first saturated step is shown
  beside the words, no word of its own. *Amended the same day, after the record was read*
  (a reviewer's reading): as first stated only DeepNorm's runs set the step; it then fell at
  step 21, after post-norm's runs had passed sqrt(d) (steps 10-16) and with the deepest
  DeepNorm runs at 98 % of it, where every exponent is squeezed toward zero; the first
  reading, *reproduced in part* (flat; within noise of post-norm), stays on the methods page.
  Now the step is the last before any compared run, post-norm's included, passes sqrt(d).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np

from depthnotes.core.checks import check_number
from depthnotes.core.fitting import log_log_fit
from depthnotes.measure.record_probes import removal_cost
from depthnotes.verdicts.ch4_trainability import (DIVERGED, LOSS_MARGIN, STALLED, TRAINED,
                                                  TRAINS, UNIGRAM_MARGIN, DepthOutcome,
                                                  depth_outcomes, stored_run_status)
from depthnotes.verdicts.evidence import (CONTRADICTED, FLAT_EXPONENT, IN_PART, NO_CONTROL,
                                          NOT_SHOWN, NOT_TESTABLE, REPRODUCED, UNBRACKETED,
                                          Difference, Outcome, Ranking, WhyNot, best_rate,
                                          combine, compare, compare_many, from_bracket,
                                          word_for)

#: The records of the 48-block comparisons, one recipe and one validation text for every run:
#: the chapter reads them as one grid (``records.combine_records``), so that every family is
#: scored at its best rate over all of them.
RECORDS_48 = ("fixes_at_48", "fixes_at_48_gpt2", "deepnorm_ablation_48", "fixes_at_48_edges",
              "fixes_at_48_small_init")
#: The 450-step records at 48 blocks (DeepNorm's two halves and their control), read as one
#: grid likewise; alpha only joined them on 2026-12-05 (``alpha_only_48_long``).
RECORDS_48_LONG = ("deepnorm_at_48_long", "deepnorm_at_48_long_edges", "alpha_only_48_long")
#: C10's removal part on the 450-step recipe, read as one grid: the probed runs of pre-norm
#: (Xavier) and DeepNorm (``layer_use_48_long``), and DeepNorm's fourth rate, 1e-2, from
#: ``deepnorm_at_48_long_edges`` (same recipe and validation text; DeepNorm's three-rate grid
#: did not bracket its best on ``deepnorm_at_48_long``, as C12's halves found). Chosen on
#: 2026-12-05 before ``layer_use_48_long`` was read; a best rate whose arm carries no probe
#: cannot be read by ``layer_use`` (an error, not a word).
RECORDS_48_LONG_PROBED = ("layer_use_48_long", "deepnorm_at_48_long_edges")
#: C10's removal part as amended on 2026-12-05 (module docstring), read as one grid:
#: pre-norm (Xavier) at 1e-3 to 3e-2 (``layer_use_48_long``) and 3e-4
#: (``layer_use_48_long_edges``), and the control, pre-norm with LayerNorm Scaling, at 3e-4 to
#: 1e-2 (``layer_use_48_long_lns``); every arm probed, one recipe and validation text. Fixed
#: before either new record was read. DeepNorm (``RECORDS_48_LONG_PROBED``) is shown beside it
#: as an illustration, with no word.
RECORDS_48_LONG_LNS = ("layer_use_48_long", "layer_use_48_long_edges",
                       "layer_use_48_long_lns")
#: C9a's and C12's two depths, each from its own 400-step records with every seed scored on
#: one held-out text: L = 48 from ``deepnorm_depth_48_same_text`` (the same training runs as
#: ``FIRST_DEPTH_RECORDS``' L = 48 arms, re-scored, with 1e-2 added where the best sat at the
#: top; defined 2026-12-05 before it ran), L = 200 from the records of as many tokens (the
#: later three added after the first was read: ``_low`` where two grids did not bracket their
#: best at the low end, ``_post_low`` and ``_post_high`` one rate beyond each end of
#: post-norm's flat grid). ``deepnorm_depth_pre_gpt2`` adds a fourth family at both depths,
#: pre-norm with GPT-2's init (defined 2026-12-06, its rule stated before it was read), and
#: ``_high`` one rate above its grid at L = 48, added after it was read (its top rate was
#: within noise of its best).
DEPTH_RECORDS_48 = ("deepnorm_depth_48_same_text", "deepnorm_depth_pre_gpt2",
                    "deepnorm_depth_pre_gpt2_high")
DEPTH_RECORDS_200 = ("deepnorm_depth_200_long", "deepnorm_depth_200_long_low",
                     "deepnorm_depth_200_post_low", "deepnorm_depth_200_post_high",
                     "deepnorm_depth_pre_gpt2")
#: The first two records of the depth comparison (L = 48 for 400 steps and L = 200 for 200,
#: each seed scored on held-out batches drawn from its own seed): the earlier readings.
FIRST_DEPTH_RECORDS = ("deepnorm_depth_comparison", "deepnorm_depth_lr")
#: The records chapter 5 shows, in the order the chapter reads them (each once).
RECORDS = tuple(dict.fromkeys((
    "prenorm_vs_postnorm_grid", "prenorm_vs_postnorm_shallow",
    "prenorm_vs_postnorm_shallow_top",
    *FIRST_DEPTH_RECORDS, *DEPTH_RECORDS_48, *DEPTH_RECORDS_200, *RECORDS_48,
    *RECORDS_48_LONG, *RECORDS_48_LONG_LNS, "layer_use_48_confirm", "prenorm_layer_use",
    "prenorm_layer_use_rates",
    "init_response_depth", "init_response_sgd", "init_response_sgd_blocks",
    "init_response_sgd_deepnet", "deepnorm_1000_layers", "deepnorm_depth_sweep",
    "deepnorm_sweep_updates")))


def depth_grid(recs: dict, at_48=DEPTH_RECORDS_48, at_200=DEPTH_RECORDS_200):
    """C9a's and C12's depth grid as one ``Record``: the L = 48 arms of the records ``at_48``
    and the L = 200 arms of the records ``at_200`` (``recs`` as from
    ``load_chapter_records``). The defaults are the grid the chapter judges; the earlier
    readings, kept as history, are ``depth_grid(recs, FIRST_DEPTH_RECORDS,
    FIRST_DEPTH_RECORDS)`` (the first: L = 200 on 200 steps, half L = 48's tokens) and
    ``depth_grid(recs, FIRST_DEPTH_RECORDS)`` (the second: L = 48 scored per seed)."""
    from depthnotes.experiments.records import combine_records

    def at(names, L):
        return [recs[n].select([a for a in recs[n].arms
                                if recs[n].arm(a)["info"]["n_layer"] == L]) for n in names]

    return combine_records(*at(at_48, 48), *at(at_200, 200))


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


@dataclass(frozen=True)
class RunOutcome:
    """One stored run's outcome: chapter 4's status (``"trained"``, ``"slow"``, ``"stalled"``
    or ``"diverged"``), its final validation loss (None when it diverged) and the step at
    which it diverged (None when it did not). The chapter writes the words around these."""

    status: str
    eval_loss: float | None
    diverged_at: int | None

    @property
    def diverged(self) -> bool:
        return self.status == DIVERGED


def run_outcome(record, arm: str, seed: int, baseline: float,
                margin: float = UNIGRAM_MARGIN) -> RunOutcome:
    """One stored run's ``RunOutcome``, by chapter 4's rule (``stored_run_status``)."""
    status, _ = stored_run_status(record, arm, seed, baseline, margin)
    final = record.run(arm, seed)["final"]
    if status == DIVERGED:
        return RunOutcome(status, None, final["diverged_at"])
    return RunOutcome(status, float(final["eval_loss"]), None)


def rate_outcomes(record, family: str, n_layer: int, baseline: float,
                  margin: float = UNIGRAM_MARGIN) -> dict[float, DepthOutcome]:
    """``{peak rate: DepthOutcome}`` of one family at one depth, every rate of its grid, rates
    ascending: ``depth_outcomes`` keeps only the best rate's runs, and a page that says what
    happens at another rate (a tied one, or the rate another arm was best at) reads it here, by
    the same rule (chapter 4's statuses, the same ceiling for a diverged run)."""
    from depthnotes.verdicts.ch4_trainability import FLAT_SLOPE, arm_outcome

    rows = [arm_outcome(record, arm, baseline, margin, FLAT_SLOPE) for arm in record.arms
            if record.arm(arm)["info"]["family"] == family
            and record.arm(arm)["info"]["n_layer"] == n_layer]
    if not rows:
        raise KeyError(f"no arm of family {family!r} at n_layer={n_layer}")
    if len({r.lr for r in rows}) != len(rows):
        raise ValueError(f"family {family!r} has two arms at one rate at n_layer={n_layer}")
    return {r.lr: r for r in sorted(rows, key=lambda r: r.lr)}


# -- C9 and C12: two families at each depth -----------------------------------------------------
def depth_comparison(outcomes: dict[str, list[DepthOutcome]], a: str, b: str,
                     n_layer: int) -> Ranking:
    """Families ``a`` and ``b`` of ``ch4_trainability.depth_outcomes`` compared at
    ``n_layer`` (final validation loss, lower is better, each at its best rate)."""
    rows = {name: next(r for r in outcomes[name] if r.n_layer == n_layer) for name in (a, b)}
    return compare_many({name: r.seeds for name, r in rows.items()},
                        metric=f"validation loss at L = {n_layer}", margin=LOSS_MARGIN)


@dataclass(frozen=True)
class DepthComparisonVerdict:
    """Two families compared at each depth (``depth_verdict``; C9 at depth, C12 training): the
    claim's word, and per depth the comparison, the word and why it is not reproduced where it
    is not (the chapter writes the sentences around these fields)."""

    word: str
    comparisons: dict               # {L: Ranking of the two families}
    words: dict                     # {L: outcome word at that depth}
    holds: tuple[int, ...]          # depths where the claimed family trains and is clearly better
    untrained: tuple[int, ...]      # depths where it is clearly better but does not train
    within_noise: tuple[int, ...]   # depths where the two are within noise
    unbracketed: dict               # {L: families whose best rate the grid does not bracket}
    claim: str = ""                 # the family the claim is about, and the one it is set against
    other: str = ""
    names: dict = field(default_factory=dict)   # {family: its name in a sentence}

    def reason(self, n_layer: int) -> str:
        """Why depth ``n_layer`` has its word, as a phrase the chapter can quote after
        "at L = ...": the claimed family (first of the comparison) against the other."""
        name = {f: self.names.get(f, f) for f in (self.claim, self.other)}
        claim, other = name[self.claim], name[self.other]
        if n_layer in self.unbracketed:
            edge = " and ".join(name[f] for f in self.unbracketed[n_layer])
            return f"not testable (the grid does not bracket {edge}'s best rate)"
        if n_layer in self.holds:
            return f"{claim} trains and ends clearly below {other}"
        if n_layer in self.untrained:
            return f"{claim} ends clearly below {other} but does not train on every seed"
        if n_layer in self.within_noise:
            return f"{claim} and {other} are within noise"
        return f"{other} ends clearly below {claim}"


def sentence_names(families) -> dict[str, str]:
    """Each family's name in a sentence: without its init ("pre-norm, Xavier": "pre-norm"),
    unless another of ``families`` has the same short name: then with it in brackets
    ("pre-norm (Xavier)", "pre-norm (GPT-2 init)"), so that no sentence leaves the reader to
    guess which of two is meant."""
    parts = {f: f.partition(",") for f in families}
    shorts = [short for short, _, _ in parts.values()]
    return {f: f"{short} ({init.strip()})" if init and shorts.count(short) > 1 else short
            for f, (short, _, init) in parts.items()}


def depth_verdict(outcomes: dict[str, list[DepthOutcome]], claim: str,
                  other: str) -> DepthComparisonVerdict:
    """Does family ``claim`` train (every seed) and beat ``other`` clearly at each depth?
    A word per depth: not testable when either best rate is not bracketed; reproduced when
    ``claim`` trains and is clearly better; contradicted when ``other`` is clearly better;
    else not shown. The claim's word combines the depths' (``evidence.combine``)."""
    depths = [r.n_layer for r in outcomes[claim]]
    cmps = {L: depth_comparison(outcomes, claim, other, L) for L in depths}
    row = {(f, r.n_layer): r for f in (claim, other) for r in outcomes[f]}
    words, untrained, unbracketed = {}, [], {}
    for L in depths:
        testable, _ = from_bracket(row[(claim, L)].pick, row[(other, L)].pick)
        word = word_for(cmps[L], claim)
        if not testable:
            words[L] = NOT_TESTABLE
            unbracketed[L] = tuple(f for f in (claim, other)
                                   if not row[(f, L)].pick.judgeable)
        elif word == REPRODUCED and row[(claim, L)].outcome != TRAINS:
            words[L] = NOT_SHOWN
            untrained.append(L)
        else:
            words[L] = word
    holds = tuple(L for L in depths if words[L] == REPRODUCED)
    within = tuple(L for L in depths if words[L] == NOT_SHOWN and not cmps[L].between(
        claim, other).clear)
    return DepthComparisonVerdict(combine(list(words.values())), cmps, words, holds,
                                  tuple(untrained), within, unbracketed, claim, other,
                                  sentence_names(outcomes))


# -- C9: the learning-rate x warm-up grid at depth (where post-norm fails) --------------------
@dataclass(frozen=True)
class GridCell:
    """One (depth, learning rate, warm-up) cell of ``prenorm_vs_postnorm_grid``: each norm's
    outcome and their comparison."""

    n_layer: int
    lr: float
    warmup: int
    post: DepthOutcome
    pre: DepthOutcome
    comparison: Ranking             # arms "pre-norm" and "post-norm"

    @property
    def gap(self) -> float:
        """Post-norm's mean validation loss minus pre-norm's (positive: pre-norm better)."""
        return self.comparison.between("post-norm", "pre-norm").gap


def grid_cells(record, baseline: float, margin: float = UNIGRAM_MARGIN) -> list[GridCell]:
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
            cmp = compare_many({"pre-norm": pre.seeds, "post-norm": post.seeds},
                               metric=f"validation loss at L = {L}, lr {info['lr']:g}, "
                                      f"warm-up {info['warmup_steps']}", margin=LOSS_MARGIN)
            cells.append(GridCell(L, info["lr"], info["warmup_steps"], post, pre, cmp))
    return sorted(cells, key=lambda c: (c.n_layer, c.lr, c.warmup))


# -- C9: the recipe, where post-norm trains ------------------------------------------------------
@dataclass(frozen=True)
class RecipeDepth:
    """One depth of ``prenorm_vs_postnorm_shallow``: per (norm, warm-up), each rate's outcome,
    the best-rate pick and the tolerance (``top_trainable``); the two parts' words there."""

    n_layer: int
    rows: dict                      # {(norm, warmup): {lr: DepthOutcome}}
    picks: dict                     # {(norm, warmup): RatePick} of the losses (shown only)
    rate_word: str
    warmup_word: str
    tolerance: dict                 # {(norm, warmup): top_trainable rate, None: no rate}
    warmups: tuple[int, int]        # (without, with): the fewest and the most warm-up steps
    top: float                      # the grid's highest rate


def top_trainable(by_rate: dict) -> float | None:
    """The highest rate of ``{lr: DepthOutcome}`` at which every seed trained (None: none)."""
    ok = [lr for lr, row in by_rate.items() if row.outcome == TRAINS]
    return max(ok) if ok else None


def _tolerance_word(a: float | None, b: float | None, top: float) -> str:
    """Reproduced when tolerance ``a`` (the arm the claim favours) exceeds ``b``, contradicted
    when ``b`` exceeds ``a``, not testable when neither fails below the grid's top rate."""
    if a is None or b is None:
        return NOT_TESTABLE
    if a > b:
        return REPRODUCED
    if b > a:
        return CONTRADICTED
    return NOT_TESTABLE if a == top else NOT_SHOWN


def recipe_depths(record, baseline: float,
                  margin: float = UNIGRAM_MARGIN) -> list[RecipeDepth]:
    """The C9 recipe rule of the module docstring at each depth of the record."""
    from depthnotes.verdicts.ch4_trainability import FLAT_SLOPE, arm_outcome

    cells: dict = {}
    for arm in record.arms:
        info = record.arm(arm)["info"]
        row = arm_outcome(record, arm, baseline, margin, FLAT_SLOPE)
        cells.setdefault(info["n_layer"], {}).setdefault(
            (info["norm"], info["warmup_steps"]), {})[info["lr"]] = row
    out = []
    for L in sorted(cells):
        rows = cells[L]
        picks = {k: _pick(v) for k, v in rows.items()}
        wu0, wu1 = min(w for _, w in rows), max(w for _, w in rows)
        top = max(lr for v in rows.values() for lr in v)
        tol = {k: top_trainable(v) for k, v in rows.items()}

        rate_word = _tolerance_word(tol[("pre", wu0)], tol[("post", wu0)], top)
        post_gain = (tol[("post", wu1)] or 0) > (tol[("post", wu0)] or 0)
        pre_gain = (tol[("pre", wu1)] or 0) > (tol[("pre", wu0)] or 0)
        at_top = any(tol[(norm, wu0)] == top for norm in ("pre", "post"))
        warm_word = (NOT_TESTABLE if at_top else       # no rise could be seen (2026-12-06)
                     REPRODUCED if post_gain and not pre_gain else
                     CONTRADICTED if pre_gain and not post_gain else NOT_SHOWN)
        out.append(RecipeDepth(L, rows, picks, rate_word, warm_word, tol, (wu0, wu1), top))
    return out


def _pick(by_rate: dict):
    from depthnotes.verdicts.evidence import best_rate

    return best_rate({lr: r.seeds for lr, r in by_rate.items()}, margin=LOSS_MARGIN)


@dataclass(frozen=True)
class RecipeVerdict:
    rate_word: str
    warmup_word: str
    depths: tuple[RecipeDepth, ...]     # where post-norm trains at its best rate
    skipped: tuple[int, ...]            # depths where it does not (the claim cannot be put)


def recipe_verdict(by_depth: list[RecipeDepth]) -> RecipeVerdict:
    """The two parts of C9's recipe, combined over the depths where post-norm (no warm-up)
    trains at its best rate: elsewhere a comparison of rates says nothing about tolerance."""
    def post_trains(d: RecipeDepth) -> bool:
        key = ("post", min(w for _, w in d.rows))        # post-norm without warm-up
        return top_trainable(d.rows[key]) is not None

    used = tuple(d for d in by_depth if post_trains(d))
    skipped = tuple(d.n_layer for d in by_depth if d not in used)
    if not used:
        return RecipeVerdict(NOT_TESTABLE, NOT_TESTABLE, (), skipped)
    return RecipeVerdict(combine([d.rate_word for d in used]),
                         combine([d.warmup_word for d in used]), used, skipped)


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


def layer_use(record, arm: str | None = None, *, last_out: bool = False) -> LayerUse:
    """The quarters of ``prenorm_layer_use`` (its one arm unless ``arm`` is given): early
    blocks 2 .. L/4, late the last L/4 blocks; with ``last_out`` the late quarter leaves out
    the last block (C10's removal rule as amended on 2026-12-05, module docstring: removing
    the last block also removes what feeds the head directly), as the early one leaves out
    block 1. The contribution rule and the older removal readings use the whole quarter."""
    arm = record.arms[0] if arm is None else arm
    L = record.arm(arm)["info"]["n_layer"]
    q = max(1, L // 4)
    early = slice(1, max(2, q))
    late = slice(L - q, L - 1) if last_out and q > 1 else slice(L - q, L)
    probes = [record.run(arm, s)["probes"] for s in record.seeds]

    def ratio(p, key):
        c = np.asarray(p[key], dtype=float)
        return float(c[late].mean() / c[early].mean())

    def mean(p, part, untrained=False):          # the removal cost, by its one reader
        return float(np.asarray(removal_cost(p, untrained), dtype=float)[part].mean())

    return LayerUse(L, early, late,
                    tuple(ratio(p, "contribution_init") for p in probes),
                    tuple(ratio(p, "contribution") for p in probes),
                    tuple(mean(p, early) for p in probes),
                    tuple(mean(p, late) for p in probes),
                    tuple(mean(p, early, True) for p in probes),
                    tuple(mean(p, late, True) for p in probes))


@dataclass(frozen=True)
class LayerUseVerdict:
    word: str                       # the two parts' words combined
    contribution: Ranking           # arms "trained" and "untrained" (late / early ratio)
    removal: Ranking                # arms "late blocks" and "early blocks" (trained)
    contribution_word: str
    removal_word: str


def layer_use_verdict(use: LayerUse) -> LayerUseVerdict:
    """C10's measures on one pre-norm stack: the *contribution* part of the module docstring
    (``contribution_word``), and the late blocks' removal cost against the early blocks' in
    the same model (``removal_word``; the page shows it, but the claim's removal part is
    ``layer_use_control``: this one holds for almost any trained pre-norm stack)."""
    contribution = compare_many({"trained": use.ratio, "untrained": use.ratio_init},
                                metric="late / early relative contribution")
    removal = compare_many({"late blocks": use.skip_late, "early blocks": use.skip_early},
                           metric="loss rise when one block is removed (trained)")
    cw = word_for(contribution, "trained")
    rw = word_for(removal, "late blocks")
    return LayerUseVerdict(combine([cw, rw]), contribution, removal, cw, rw)


@dataclass(frozen=True)
class ContributionAtBest:
    """C10's contribution part at the pre-norm stack's best rate (``contribution_at_best``):
    the family's ``DepthOutcome`` there (its ``pick``: is that rate bracketed?), the stack's
    quarters at that rate, ``layer_use_verdict`` of them, and the part's word."""

    row: DepthOutcome
    use: LayerUse
    verdict: LayerUseVerdict
    word: str


def contribution_at_best(record, baseline: float,
                         margin: float = UNIGRAM_MARGIN) -> ContributionAtBest:
    """C10's contribution part as amended on 2026-12-06 (module docstring): the one family of
    a record whose arms carry the ``layer_use`` probe at several rates (``prenorm_layer_use``
    combined with ``prenorm_layer_use_rates``), at its best rate (``depth_outcomes``: lowest
    mean validation loss, a diverged run at the ceiling); ``layer_use_verdict``'s
    contribution word there, or not testable when the grid does not say where the best rate
    is (``RatePick.judgeable``) or the stack did not train on every seed."""
    rows = [r for family in depth_outcomes(record, baseline, margin).values() for r in family]
    if len(rows) != 1:
        raise ValueError(f"{record.name!r} holds {len(rows)} family-depths; the contribution "
                         "part reads one stack at several rates")
    (row,) = rows
    use = layer_use(record, row.arm)
    verdict = layer_use_verdict(use)
    ok = row.pick.judgeable and row.outcome == TRAINS
    return ContributionAtBest(row, use, verdict,
                              verdict.contribution_word if ok else NOT_TESTABLE)


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
    depths (``fitting.log_log_fit``); NaN when a seed lacks two finite positive sizes."""
    out = {}
    for family, by_depth in sizes.items():
        depths = sorted(by_depth)
        n_seeds = len(by_depth[depths[0]])
        slopes = []
        for s in range(n_seeds):
            y = np.array([by_depth[L][s] for L in depths])
            ok = np.isfinite(y) & (y > 0)
            slopes.append(log_log_fit(np.array(depths)[ok], y[ok]).slope
                          if ok.sum() >= 2 else math.nan)
        out[family] = slopes
    return out


@dataclass(frozen=True)
class UpdateVerdict:
    word: str                       # the two parts combined
    smaller_word: str               # clearly smaller than post-norm's (depths combined)
    bounded_word: str               # DeepNorm's exponent flat in depth
    comparisons: dict               # {L: Ranking of the two families' first updates}
    words: dict                     # {L: the smaller part's word at that depth}
    smaller_at: tuple[int, ...]     # depths where DeepNorm's update is clearly smaller
    exponents: Ranking | None       # the two families' fitted exponents (None: not all finite)


def update_verdict(sizes: dict[str, dict[int, list[float]]], deepnorm: str,
                   post: str) -> UpdateVerdict:
    """The C12 update rule of the module docstring: *smaller* (a word per depth, combined) and
    *bounded* (every seed's fitted exponent within ``FLAT_EXPONENT`` of zero: reproduced;
    above it for every seed: contradicted; else not shown)."""
    depths = sorted(sizes[deepnorm])
    # a depth where a run stopped before the step (NaN) has no update to compare: not testable
    measured = [L for L in depths if all(math.isfinite(v) for f in (deepnorm, post)
                                         for v in sizes[f][L])]
    cmps = {L: compare_many({deepnorm: sizes[deepnorm][L], post: sizes[post][L]},
                            metric=f"first update at L = {L}") for L in measured}
    words = {L: word_for(cmps[L], deepnorm) if L in cmps else NOT_TESTABLE for L in depths}
    smaller = tuple(L for L in depths if words[L] == REPRODUCED)
    exps = update_exponents({f: sizes[f] for f in (deepnorm, post)})
    finite = all(math.isfinite(v) for vals in exps.values() for v in vals)
    exp_cmp = compare_many(exps, metric="fitted exponent of the first update against L") \
        if finite else None
    bounded = bounded_word(exps[deepnorm]) if finite else NOT_TESTABLE
    smaller_word = combine(list(words.values()))
    return UpdateVerdict(combine([smaller_word, bounded]), smaller_word, bounded, cmps, words,
                         smaller, exp_cmp)


__all__ = ["UNIGRAM_MARGIN", "LOSS_MARGIN", "RECORDS", "depth_grid", "FIRST_DEPTH_RECORDS",
           "load_chapter_records",
           "RECORDS_48", "RECORDS_48_LONG", "RECORDS_48_LONG_PROBED", "RECORDS_48_LONG_LNS",
           "RunOutcome",
           "run_outcome", "depth_comparison",
           "DepthComparisonVerdict", "depth_verdict",
           "GridCell", "grid_cells",
           "RecipeDepth",
           "top_trainable", "recipe_depths", "RecipeVerdict", "recipe_verdict", "LayerUse", "layer_use",
           "LayerUseVerdict", "layer_use_verdict", "update_sizes", "update_exponents",
           "UpdateVerdict", "update_verdict"]


# -- C12 at initialisation, to 1,000 blocks (init_response_depth) ---------------------------
#: What ``init_response`` measures, by the name a chapter uses: the SGD step, Adam's first
#: step at each rate it took (by index into the probe's ``adam_lrs``), and the sensitivity.
RESPONSES = ("sgd", "adam 1e-4", "adam 1e-3", "adam 1/sqrt(L)", "sensitivity")


def init_responses(record, measure: str) -> dict[str, dict[int, list[float]]]:
    """``{family: {L: [value per seed]}}`` of ``init_response_depth`` for one of
    ``RESPONSES``: the first update after one SGD step (at the probe's ``sgd_lr``, read by
    ``sgd_responses``, the one reader of SGD updates), after Adam's first step at 1e-4, at
    1e-3 or at the rate scaled as 1/sqrt(L), or the output sensitivity."""
    if measure not in RESPONSES:
        raise ValueError(f"measure must be one of {RESPONSES}, got {measure!r}")
    if measure == "sgd":
        (lr,) = {float(record.arm(a)["info"]["probe"]["sgd_lr"]) for a in record.arms}
        return sgd_responses(record)[lr]
    out: dict[str, dict[int, list[float]]] = {}
    for arm in record.arms:
        info = record.arm(arm)["info"]
        vals = []
        for s in record.seeds:
            p = record.run(arm, s)["probes"]
            vals.append(float(p["sensitivity"] if measure == "sensitivity" else
                              p["adam_update"][RESPONSES.index(measure) - 1]))
        out.setdefault(info["family"], {})[info["n_layer"]] = vals
    return out


def bounded_word(exponents: list[float]) -> str:
    """C12's *bounded* test on per-seed exponents of the update against L: every seed within
    ``FLAT_EXPONENT`` of zero: reproduced; every seed above it: contradicted; else not shown."""
    if not exponents or not all(math.isfinite(v) for v in exponents):
        return NOT_TESTABLE
    if all(abs(v) <= FLAT_EXPONENT for v in exponents):
        return REPRODUCED
    if all(v > FLAT_EXPONENT for v in exponents):
        return CONTRADICTED
    return NOT_SHOWN


# -- C10 against a control: is the late blocks' small removal cost pre-norm's own? ----------
def removal_ratio(record, arm: str, *, last_out: bool = False) -> tuple[float, ...]:
    """Per seed, in the trained model: the mean loss rise when one of the last L/4 blocks is
    removed (the last block left out with ``last_out``) over the mean rise for one of blocks
    2 .. L/4 (``layer_use``'s quarters). Small means the late blocks matter little."""
    use = layer_use(record, arm, last_out=last_out)
    return tuple(late / early for late, early in zip(use.skip_late, use.skip_early))


def control_word(pre: tuple[float, ...], control: tuple[float, ...],
                 names: tuple[str, str] = ("pre-norm", "control")) -> tuple[str, Ranking]:
    """C10's control part: pre-norm's late / early removal-cost ratio must be clearly below
    the control's (a stack trained with the same recipe: post-norm-family stacks on the
    older records, pre-norm with LayerNorm Scaling since the amendment), else the small cost
    of a late block is not pre-norm's doing."""
    cmp = compare_many({names[0]: pre, names[1]: control},
                       metric="late / early removal cost (trained)")
    return word_for(cmp, names[0]), cmp


@dataclass(frozen=True)
class LayerUseControl:
    """C10's removal part (``layer_use_control``): the word; the families whose best rate the
    grid does not bracket (``unbracketed``), those that did not train on every seed at their
    best rate (``untrained``) and those whose early removal cost is not clearly above zero
    (``unresolved``), any of which makes it not testable; both stacks' quarters and best-rate
    rows; each stack's early removal cost against zero (``evidence.against``: ``"above"``,
    ``"below"`` or ``"within noise"``); and the comparison of the late / early removal ratios
    (None when not testable)."""

    word: str
    untrained: tuple[str, ...]
    unresolved: tuple[str, ...]
    pre: LayerUse
    control: LayerUse
    pre_row: DepthOutcome
    control_row: DepthOutcome
    early_vs_zero: dict             # {family: against(early removal cost per seed, 0)}
    comparison: Ranking | None      # arms: the two families (late / early removal ratio)
    unbracketed: tuple[str, ...] = ()


def layer_use_control(record, pre_row: DepthOutcome, control_row: DepthOutcome, *,
                      last_out: bool = False,
                      bracket_from: tuple | None = None) -> LayerUseControl:
    """C10's removal part (module docstring) on a record whose arms carry the ``layer_use``
    probe: the pre-norm family and the control family (``control_word``; the same
    recipe), each at its best rate (``DepthOutcome`` rows of ``depth_outcomes``). Not testable
    when either best rate is not bracketed by its grid (``evidence.from_bracket``, as every
    trained comparison in the book), when either stack did not train on every seed (no
    control: a stack that learned nothing uses no block) or when either stack's early removal
    cost is not clearly above zero (the ratio would divide by noise); else ``control_word`` of
    the two ratios. Written after the 48-block records had run, on their design
    (book/methods.md, C10); the bracket condition added on 2026-12-05 before
    ``layer_use_48_long`` was read. Its preconditions can only withhold a word, never grant
    one. ``last_out`` is the rule as amended on 2026-12-05 before ``layer_use_48_long_edges``
    and ``layer_use_48_long_lns`` were read (module docstring): each stack's late quarter
    leaves out its last block; the rule reads ``RECORDS_48_LONG_LNS`` with it, pre-norm with
    LayerNorm Scaling the control. Without it, the older readings the page shows as
    history (the 150-step records, DeepNorm on ``RECORDS_48_LONG_PROBED``).

    ``bracket_from`` (added 2026-12-06 before ``layer_use_48_confirm`` ran): the two
    ``RatePick``s of the grids that chose each row's rate, when the record holds one rate per
    stack (a confirmation on fresh seeds at the rates chosen on other seeds): the bracket
    condition reads them, and each row's rate must be its pick's best."""
    from depthnotes.verdicts.evidence import ABOVE, against

    rows = (pre_row, control_row)
    uses = [layer_use(record, r.arm, last_out=last_out) for r in rows]
    early = {r.family: against(u.skip_early, 0.0) for r, u in zip(rows, uses)}
    picks = tuple(r.pick for r in rows) if bracket_from is None else tuple(bracket_from)
    if len(picks) != 2 or any(p.best != r.lr for p, r in zip(picks, rows)):
        raise ValueError("bracket_from needs the two grids' picks whose best rates are the "
                         f"rows' rates ({pre_row.lr:g}, {control_row.lr:g})")
    unbracketed = tuple(r.family for r, p in zip(rows, picks) if not p.judgeable)
    untrained = tuple(r.family for r in rows if r.outcome != TRAINS)
    unresolved = tuple(f for f, where in early.items() if where != ABOVE)
    if unbracketed or untrained or unresolved:
        return LayerUseControl(NOT_TESTABLE, untrained, unresolved, *uses, *rows, early, None,
                               unbracketed)
    word, cmp = control_word(removal_ratio(record, pre_row.arm, last_out=last_out),
                             removal_ratio(record, control_row.arm, last_out=last_out),
                             (pre_row.family, control_row.family))
    return LayerUseControl(word, (), (), *uses, *rows, early, cmp, ())


__all__ += ["ContributionAtBest", "contribution_at_best"]
__all__ += ["RESPONSES", "init_responses", "bounded_word", "removal_ratio", "control_word",
            "LayerUseControl", "layer_use_control"]


# -- C12's halves: alpha only and beta only against post-norm, with DeepNorm as the control ----
@dataclass(frozen=True)
class AblationPart:
    """One half of DeepNorm at one depth (``ablation_part``): the row's word; the positive
    control (full DeepNorm against post-norm; ``controlled`` when it is reproduced), the half
    against post-norm (its word is the row's when the control holds) and the half against full
    DeepNorm (shown beside the word)."""

    half: str
    n_layer: int
    word: str
    control: DepthComparisonVerdict
    vs_post: DepthComparisonVerdict
    vs_full: DepthComparisonVerdict     # claim: the half; other: full DeepNorm

    @property
    def controlled(self) -> bool:
        return self.control.words[self.n_layer] == REPRODUCED


def ablation_part(outcomes: dict[str, list[DepthOutcome]], half: str, full: str, post: str,
                  n_layer: int) -> AblationPart:
    """C12's rule for one half of DeepNorm (module docstring) at ``n_layer``, on
    ``depth_outcomes`` of a record holding the half, full DeepNorm and post-norm: not testable
    unless full DeepNorm's own comparison with post-norm is reproduced there; else the half's
    (``depth_verdict``: trains on every seed and ends clearly below post-norm, each at its best
    bracketed rate). Written after the 48-block records had run, on their design
    (book/methods.md, C12): the control can only withhold a word, never grant one."""
    only = {f: [r for r in outcomes[f] if r.n_layer == n_layer] for f in (half, full, post)}
    control = depth_verdict(only, full, post)
    vs_post = depth_verdict(only, half, post)
    vs_full = depth_verdict(only, half, full)
    word = (vs_post.words[n_layer] if control.words[n_layer] == REPRODUCED
            else NOT_TESTABLE)
    return AblationPart(half, n_layer, word, control, vs_post, vs_full)


__all__ += ["AblationPart", "ablation_part"]


# -- C12's update part, by optimiser (init_response_depth) ----------------------------------
#: The settings in which C12's update part is judged, each a row on the claims page: (the
#: piece's name, the ``RESPONSES`` measure). DeepNet derives its bound for SGD steps; training
#: uses Adam, at a fixed rate and at a rate shrinking as 1/sqrt(L): those two settings test an
#: extension beyond the paper's analysis, and the 1/sqrt(L) rule is the book's, not DeepNet's.
UPDATE_SETTINGS = (("update, SGD", "sgd"), ("update, Adam", "adam 1e-3"),
                   ("update, Adam at 1/√L", "adam 1/sqrt(L)"))


@dataclass(frozen=True)
class BoundedPart:
    """One setting of C12's update part: DeepNorm's first update per depth and seed, its
    per-seed exponents in L and the *bounded* word (``bounded_word``)."""

    piece: str                          # "update, SGD"
    measure: str                        # the ``RESPONSES`` name
    sizes: dict                         # {L: [first update per seed]}
    exponents: tuple[float, ...]        # per seed, over every depth of the record
    word: str

    @property
    def growth(self) -> float:
        """The mean first update at the deepest depth over that at the shallowest."""
        depths = sorted(self.sizes)
        return float(np.mean(self.sizes[depths[-1]]) / np.mean(self.sizes[depths[0]]))

    def exponents_up_to(self, n_layer: int) -> tuple[float, ...]:
        """Per seed, the exponent fitted over the depths up to ``n_layer`` only (shown beside
        the verdict, which uses every depth)."""
        part = {L: v for L, v in self.sizes.items() if L <= n_layer}
        return tuple(update_exponents({"f": part})["f"])


def update_parts(record, family: str = "DeepNorm") -> list[BoundedPart]:
    """C12's update part on ``init_response_depth``, one ``BoundedPart`` per
    ``UPDATE_SETTINGS``: ``family``'s first update fitted against L (``update_exponents``,
    every depth of the record) and judged by ``bounded_word``."""
    out = []
    for piece, measure in UPDATE_SETTINGS:
        sizes = init_responses(record, measure)[family]
        exps = tuple(update_exponents({family: sizes})[family])
        out.append(BoundedPart(piece, measure, sizes, exps, bounded_word(list(exps))))
    return out


__all__ += ["UPDATE_SETTINGS", "BoundedPart", "update_parts"]


# -- C12's SGD part over several rates (init_response_depth and init_response_sgd) -----------
def sgd_responses(*records,
                  stepped: str = "all") -> dict[float, dict[str, dict[int, list[float]]]]:
    """``{lr: {family: {L: [first update per seed]}}}`` of every plain SGD step the records'
    ``init_response`` probes took with the parameter group ``stepped`` moved (``"all"``, the
    whole model; ``"blocks"``, the residual blocks only; ``"deepnet"``, the matrices DeepNet's
    bound sums over; ``probes.stepped_parameters``): ``sgd_lr`` (``init_response_depth``'s
    0.1) and each rate of ``sgd_lrs`` (``init_response_sgd``, ``init_response_sgd_blocks``,
    ``init_response_sgd_deepnet``). The one reader of stored SGD
    updates (``init_responses`` reads its ``"sgd"`` here). A rate measured twice for one arm,
    or a record with no step of the group asked for, is an error."""
    out: dict[float, dict[str, dict[int, list[float]]]] = {}
    for record in records:
        read_any = False
        for arm in record.arms:
            info = record.arm(arm)["info"]
            spec = info["probe"]
            if spec.get("stepped", "all") != stepped:
                continue
            # (rate, how to read it from a run's probes)
            steps = ([(float(spec["sgd_lr"]), lambda p: p["sgd_update"])]
                     if spec.get("sgd_lr") is not None else [])
            steps += [(float(lr), lambda p, j=j: p["sgd_updates"][j])
                      for j, lr in enumerate(spec.get("sgd_lrs", ()))]
            for lr, read in steps:
                read_any = True
                vals = [float(read(record.run(arm, seed)["probes"]))
                        for seed in record.seeds]
                by_L = out.setdefault(lr, {}).setdefault(info["family"], {})
                if info["n_layer"] in by_L:
                    raise ValueError(f"SGD rate {lr:g} measured twice for {info['family']} "
                                     f"at L = {info['n_layer']}")
                by_L[info["n_layer"]] = vals
        if not read_any:
            raise ValueError(f"record {getattr(record, 'name', record)!r} holds no SGD step "
                             f"with stepped={stepped!r}")
    return dict(sorted(out.items()))


@dataclass(frozen=True)
class SgdPart:
    """C12's SGD part over several rates (``sgd_part``): the word; per rate, DeepNorm's
    per-seed exponents and their own ``bounded_word``; the rate judged (the smallest) and the
    next one, and whether the exponent there does not depend on the rate (``rate_free``)."""

    word: str
    exponents: dict                     # {lr: per-seed exponents over every depth}
    words: dict                         # {lr: bounded_word of those exponents}
    judged_at: float                    # the smallest rate
    checked_against: float              # the next smallest rate
    rate_free: bool                     # every seed's exponent within FLAT_EXPONENT there


def sgd_part(sizes: dict[float, dict[str, dict[int, list[float]]]],
             family: str = "DeepNorm") -> SgdPart:
    """C12's SGD rule (module docstring) on ``sgd_responses``: ``family``'s first update
    fitted against L per seed at each rate (``update_exponents``, every depth measured at
    every rate). The word is the smallest rate's ``bounded_word`` when its exponent does not
    depend on the rate, every seed's within ``FLAT_EXPONENT`` of its exponent at the next
    smallest rate (the step is then in its linear regime, where the update is the rate times
    the gradient's effect and its exponent the gradient's); else not testable here (no rate
    small enough was measured). Written on 2026-12-05 before ``init_response_sgd`` ran."""
    if len(sizes) < 2:
        raise ValueError(f"sgd_part needs two rates or more, got {sorted(sizes)}")
    depths = sorted(set.intersection(*(set(by[family]) for by in sizes.values())))
    exps = {lr: tuple(update_exponents({family: {L: by[family][L] for L in depths}})[family])
            for lr, by in sizes.items()}
    words = {lr: bounded_word(list(k)) for lr, k in exps.items()}
    low, nxt = sorted(sizes)[:2]
    rate_free = all(math.isfinite(a) and math.isfinite(b) and abs(a - b) <= FLAT_EXPONENT
                    for a, b in zip(exps[low], exps[nxt]))
    return SgdPart(words[low] if rate_free else NOT_TESTABLE, exps, words, low, nxt,
                   rate_free)


__all__ += ["sgd_responses", "SgdPart", "sgd_part"]


# -- C11: scaled branches start the model near the identity ------------------------------------
#: C11's bars, on untrained 100-block pre-norm stacks (one seed, the chapter's probe batch):
#: without scaling the stream's variance must grow more than ``C11_PLAIN_MIN`` times the
#: embedding's (the positive control: a growth for the scaling to prevent); with the
#: 1/sqrt(2L) branch scale and with GPT-2's init it must stay below ``C11_GROWTH_MAX`` times,
#: and no scaled block may change the stream by ``C11_CONTRIB_MAX`` of its size or more.
C11_PLAIN_MIN, C11_GROWTH_MAX, C11_CONTRIB_MAX = 20.0, 2.0, 0.2


def scaled_start_word(plain: float, scaled: float, gpt2_init: float,
                      max_contribution: float) -> str:
    """C11's word from the stream's variance after the last block over the embedding's,
    without scaling (``plain``), with the 1/sqrt(2L) branch scale (``scaled``) and with
    GPT-2's init (``gpt2_init``), and the scaled stack's largest relative block contribution
    (``probes.layer_contribution``): not testable here when the plain stream does not grow
    past ``C11_PLAIN_MIN``; reproduced when both scaled growths are below
    ``C11_GROWTH_MAX`` and the contribution below ``C11_CONTRIB_MAX``; else not shown
    here."""
    for name, v in (("plain", plain), ("scaled", scaled), ("gpt2_init", gpt2_init),
                    ("max_contribution", max_contribution)):
        check_number(name, v, low=0.0)
    if not plain > C11_PLAIN_MIN:
        return NOT_TESTABLE
    near = (scaled < C11_GROWTH_MAX and gpt2_init < C11_GROWTH_MAX
            and max_contribution < C11_CONTRIB_MAX)
    return REPRODUCED if near else NOT_SHOWN


__all__ += ["C11_PLAIN_MIN", "C11_GROWTH_MAX", "C11_CONTRIB_MAX", "scaled_start_word"]


# -- C12 at 1,000 blocks: DeepNorm's depth sweep (deepnorm_depth_sweep) ------------------------
#: A loss spike in a stored training curve (C12 at 1,000 blocks, ``loss_spikes``): the
#: training loss averaged over this many steps, rising at least ``SPIKE_NATS`` above the
#: lowest such average before it; a run of such points counts once. Batches differ in
#: difficulty, so a single stored window mean swings by up to 0.7 nats in runs that train
#: smoothly; the average is over 20 steps.
SPIKE_STEPS = 20
#: A spike's rise (nats/char) over the 20-step average's earlier low. None of the 326 runs of
#: seven records of chapters 4 and 5 (``SPIKE_CALIBRATION``) rises more than 0.21 (post-norm at
#: 1e-2 with warm-up, 4 blocks). Calibrated on those records and stated 2026-12-05 before
#: ``deepnorm_depth_sweep`` was read.
SPIKE_NATS = 0.3
#: The records the spike threshold was calibrated on (``tests/test_fixes.py`` checks it).
SPIKE_CALIBRATION = ("postnorm_failure_depth", "prenorm_vs_postnorm_grid",
                     "prenorm_vs_postnorm_shallow", "fixes_at_48", "deepnorm_depth_48_same_text",
                     "deepnorm_depth_200_long", "deepnorm_1000_layers")


def averaged_curve(steps, losses, span: int = SPIKE_STEPS) -> tuple[list, np.ndarray]:
    """``(steps, means)``: the curve ``losses`` (at ``steps``, evenly spaced, as
    ``Record.curve`` gives a stored training curve) averaged over ``span`` steps, each mean at
    the last step of its window. None or NaN values (a run that stopped) end the curve; a
    curve shorter than ``span`` gives no points. The curve the spike rule reads."""
    finite = []
    for v in losses:
        if v is None or not math.isfinite(v):
            break
        finite.append(float(v))
    every = steps[1] - steps[0] if len(steps) > 1 else 1
    k = span / every
    if k < 2 or k != int(k):
        raise ValueError(f"a curve stored every {every} steps cannot be averaged over {span}: "
                         f"the span must be a whole number (2 or more) of its points")
    k = int(k)
    if len(finite) < k:
        return [], np.zeros(0)
    return list(steps[k - 1:len(finite)]), np.convolve(finite, np.ones(k) / k, mode="valid")


def loss_rises(steps, losses, span: int = SPIKE_STEPS) -> np.ndarray:
    """How far the averaged curve (``averaged_curve``) stands above its lowest average so far,
    at each of its points (zero where it is at its low)."""
    means = averaged_curve(steps, losses, span)[1]
    return means - np.minimum.accumulate(means) if means.size else means


def loss_spikes(steps, losses, span: int = SPIKE_STEPS, rise: float = SPIKE_NATS) -> int:
    """How many times the averaged curve (``loss_rises``) climbs ``rise`` or more above its
    lowest average before that point; consecutive points above count once."""
    check_number("rise", rise, low=0.0, low_open=True)
    above = loss_rises(steps, losses, span) >= rise   # False at the first point (its own low)
    return int(np.sum(above[1:] & ~above[:-1]))


@dataclass(frozen=True)
class SweepDepth:
    """One arm of the sweep at one depth and one rate: ``row`` (chapter 4's status, final
    validation loss and first step below the bar per seed, ``arm_outcome``), each seed's loss
    spikes (``loss_spikes``) and the step it diverged at (None when it did not)."""

    row: DepthOutcome
    spikes: tuple[int, ...]
    diverged_at: tuple

    @property
    def n_layer(self) -> int:
        return self.row.n_layer


@dataclass(frozen=True)
class SweepVerdict:
    """``sweep_verdict``'s result: DeepNorm per depth (ascending), the post-norm run at the
    deepest depth, the step at which the two are shown side by side (post-norm's last), each
    seed's DeepNorm validation loss there (None if it diverged before), their comparison (no
    word), and the part's ``Outcome``."""

    depths: tuple[SweepDepth, ...]
    post: SweepDepth
    at_step: int
    deep_at_step: tuple
    versus: Difference
    trains: Outcome

    @property
    def deepest(self) -> SweepDepth:
        return self.depths[-1]

    @property
    def deepest_trained(self) -> int | None:
        """The deepest depth at which every DeepNorm seed trained (None if none)."""
        return max((d.n_layer for d in self.depths
                    if all(s == TRAINED for s in d.row.statuses)), default=None)


def _sweep_depth(record, arm: str, baseline: float, margin: float) -> SweepDepth:
    from depthnotes.verdicts.ch4_trainability import FLAT_SLOPE, arm_outcome

    row = arm_outcome(record, arm, baseline, margin, FLAT_SLOPE)
    spikes = []
    for s, st in zip(record.seeds, row.statuses):
        steps, losses = record.curve(arm, "train_loss", s)
        if st == DIVERGED:              # the last window holds the blow-up the trainer stopped
            steps, losses = steps[:-1], losses[:-1]
        spikes.append(loss_spikes(steps, losses))
    at = tuple(record.run(arm, s)["final"]["diverged_at"] if st == DIVERGED else None
               for s, st in zip(record.seeds, row.statuses))
    return SweepDepth(row, tuple(spikes), at)


def _trains_word(control: SweepDepth, last: SweepDepth, ceiling: float) -> Outcome:
    part = f"trains at {last.n_layer} blocks"
    if not all(s == TRAINED for s in control.row.statuses):
        return Outcome(NOT_TESTABLE, part, WhyNot(NO_CONTROL, statuses=control.row.statuses))
    statuses = last.row.statuses
    n_trained = sum(s == TRAINED for s in statuses)
    if n_trained == len(statuses):
        return Outcome(REPRODUCED if not any(last.spikes) else IN_PART, part)
    if n_trained:
        return Outcome(IN_PART, part)
    if all(s in (STALLED, DIVERGED) for s in statuses):
        return Outcome(NOT_SHOWN, part)
    pick = best_rate({last.row.lr: last.row.losses}, ceiling=ceiling)
    return Outcome(NOT_TESTABLE, part, WhyNot(UNBRACKETED, picks=(pick,)))


#: The recipe fields in which the post-norm run may differ from the deepest DeepNorm arm's: it
#: is the same run cut short, so that up to its last step the two share rate and warm-up.
SHORT_RUN_FIELDS = ("steps", "eval_every")


def sweep_verdict(record, baseline: float, *, deep: str = "DeepNorm",
                  post: str = "post-norm, Xavier",
                  margin: float = UNIGRAM_MARGIN) -> SweepVerdict:
    """C12's 1,000-block part (module docstring) on ``deepnorm_depth_sweep``: the arms of
    family ``deep`` (one per depth) and the one arm of family ``post``, at the deepest
    depth."""
    from depthnotes.verdicts.ch4_trainability import loss_ceiling

    fam = {a: record.arm(a)["info"]["family"] for a in record.arms}
    rows = sorted((_sweep_depth(record, a, baseline, margin) for a in record.arms
                   if fam[a] == deep), key=lambda r: r.n_layer)
    posts = [a for a in record.arms if fam[a] == post]
    if not rows or len(posts) != 1:
        raise ValueError(f"record {record.name!r} needs arms of family {deep!r} and one of "
                         f"{post!r}; its families are {sorted(set(fam.values()))}")
    ctl = _sweep_depth(record, posts[0], baseline, margin)
    last = rows[-1]
    if ctl.n_layer != last.n_layer:
        raise ValueError(f"the {post!r} arm has {ctl.n_layer} blocks; the deepest {deep!r} "
                         f"arm has {last.n_layer}")
    mine, theirs = (record.arm(a)["recipe"] for a in (last.row.arm, posts[0]))
    differ = sorted(k for k in set(mine) | set(theirs)
                    if k not in SHORT_RUN_FIELDS and mine.get(k) != theirs.get(k))
    if differ:
        raise ValueError(f"the {post!r} run must be the {deep!r} run cut short; their "
                         f"recipes differ in {differ}")
    if "warmup_steps" in mine and theirs["steps"] > mine["warmup_steps"]:
        raise ValueError(f"the {post!r} run ({theirs['steps']} steps) must end within the "
                         f"{deep!r} run's warm-up ({mine['warmup_steps']} steps): after it "
                         f"their decays differ")
    ceiling = loss_ceiling(record, last.row.arm)
    trains = _trains_word(rows[0], last, ceiling)
    # both arms warm up alike to post-norm's last step: their losses there, side by side
    at_step = theirs["steps"]
    deep_at = []
    for s, stopped in zip(record.seeds, last.diverged_at):
        steps, evals = record.curve(last.row.arm, "eval_loss", s)
        if at_step not in steps and stopped is not None:
            deep_at.append(None)                      # diverged before the step: learned nothing
            continue
        if at_step not in steps:
            raise ValueError(f"{last.row.arm!r}, seed {s}: no validation loss at step "
                             f"{at_step}, post-norm's last; it has {steps}")
        deep_at.append(evals[steps.index(at_step)])
    deep_at = tuple(None if v is None or not math.isfinite(v) else v for v in deep_at)
    versus = compare((deep, deep_at), replace(ctl.row.seeds, name=post), margin=LOSS_MARGIN,
                     ceiling=ceiling)
    return SweepVerdict(tuple(rows), ctl, at_step, deep_at, versus, trains)


__all__ += ["SPIKE_STEPS", "SPIKE_NATS", "SPIKE_CALIBRATION", "averaged_curve", "loss_rises",
            "loss_spikes", "SweepDepth", "SweepVerdict", "SHORT_RUN_FIELDS", "sweep_verdict"]


# -- C12 at 1,000 blocks, during training: the update over the warm-up (deepnorm_sweep_updates)
#: Beyond this many times sqrt(d) the update measure says little: each token's output leaves a
#: LayerNorm with length about sqrt(d), so two outputs are at most about 2 sqrt(d) apart, and
#: two unrelated ones about sqrt(2 d). Past half the ceiling the output has been largely
#: replaced (``deepnorm_update_size`` reached it within 5 steps at lr 1e-3 at most depths).
SATURATED_UPDATE = 1.0


@dataclass(frozen=True)
class TrainingUpdates:
    """``training_updates``' result: the step judged (the last at which every run compared,
    of both families, is unsaturated; None if there is none), the update there per family,
    depth and seed, the ``deep`` family's per-seed exponents in L, each run's first saturated
    step (None if it never saturated), the comparison with ``post`` at the deepest depth, and
    the words: *bounded*, *smaller* and the two combined."""

    step: int | None
    ceiling: float                      # SATURATED_UPDATE * sqrt(d)
    sizes: dict                         # {family: {L: [update at ``step`` per seed]}}
    exponents: tuple[float, ...]
    saturated_at: dict                  # {family: {L: [first step at or above the ceiling]}}
    versus: Ranking | None
    bounded: str
    smaller: str
    word: str


def _saturation(record, ceiling: float) -> dict:
    out: dict = {}
    for arm in record.arms:
        info = record.arm(arm)["info"]
        firsts = []
        for s in record.seeds:
            p = record.run(arm, s)["probes"]
            firsts.append(next((t for t, v in zip(p["update_steps"], p["update_size"])
                                if v is not None and v >= ceiling), None))
        out.setdefault(info["family"], {})[info["n_layer"]] = firsts
    return out


def training_updates(record, *, deep: str = "DeepNorm", post: str = "post-norm, Xavier",
                     limit: float = SATURATED_UPDATE) -> TrainingUpdates:
    """C12's update part during training, on ``deepnorm_sweep_updates`` (stated 2026-12-06
    before that record was read): DeepNet's update ||F(x; theta_t) - F(x; theta_0)|| per step
    over the sweep's warm-up, at a peak rate scaled as 1/sqrt(L). Judged at the last step at
    which every run compared, of ``deep`` (every depth and seed) and of ``post`` (the deepest
    depth), is below ``limit`` * sqrt(d): past it the measure saturates
    (``SATURATED_UPDATE``); with no such step, both parts are not testable. (As first stated,
    only ``deep``'s runs set the step; amended after the record was read, module
    docstring.) *Bounded*: the ``deep`` family's update at that step fitted against L per seed
    (``update_exponents``), judged by ``bounded_word``. *Smaller*: at the deepest depth, at
    that step, ``deep``'s update against ``post``'s (``compare_many``, ``word_for``): clearly
    smaller, reproduced; within noise, not shown here; clearly larger, contradicted here. A
    ``post`` run that diverged before the step has no size: not testable. Each run's first
    saturated step is shown beside the words."""
    (d_model,) = {record.arm(a)["model"]["d_model"] for a in record.arms}
    ceiling = limit * math.sqrt(d_model)
    saturated = _saturation(record, ceiling)
    if post not in saturated or deep not in saturated:
        raise ValueError(f"record {record.name!r} needs arms of families {deep!r} and "
                         f"{post!r}; it has {sorted(saturated)}")
    deepest = max(saturated[deep])
    if set(saturated[post]) != {deepest}:
        raise ValueError(f"the {post!r} arms must all have {deepest} blocks, the deepest "
                         f"{deep!r} arm's; they have {sorted(saturated[post])}")
    last = min(len(record.run(a, s)["probes"]["update_steps"]) for a in record.arms
               if record.arm(a)["info"]["family"] == deep for s in record.seeds)
    # amended after the first reading: the step before any compared run saturates, post-norm's
    # included (it had passed the ceiling before the step the first reading judged)
    firsts = [t for by_L in (*saturated[deep].values(), saturated[post][deepest])
              for t in by_L if t is not None]
    step = min(firsts) - 1 if firsts else last
    if step < 1:
        return TrainingUpdates(None, ceiling, {}, (), saturated, None, NOT_TESTABLE,
                               NOT_TESTABLE, NOT_TESTABLE)
    sizes = update_sizes(record, step)
    exps = tuple(update_exponents({deep: sizes[deep]})[deep])
    bounded = bounded_word(list(exps))
    pair = {deep: sizes[deep][deepest], post: sizes[post][deepest]}
    if all(math.isfinite(v) for vals in pair.values() for v in vals):
        versus = compare_many(pair, metric=f"update after step {step} at L = {deepest}")
        smaller = word_for(versus, deep)
    else:
        versus, smaller = None, NOT_TESTABLE
    return TrainingUpdates(step, ceiling, sizes, exps, saturated, versus, bounded, smaller,
                           combine([bounded, smaller]))


__all__ += ["SATURATED_UPDATE", "TrainingUpdates", "training_updates"]
