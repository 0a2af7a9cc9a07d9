"""What chapter 3's exercises expect, and the hints their checks give (instructor only:
the student edition holds these sealed, ``depthnotes.course.sealed``)."""

from __future__ import annotations

from depthnotes.course.kinds import Function, Mistake, Number, Written


def _hop(seq, t):
    """One hop of k-hop induction: the position just after the last earlier occurrence of the
    symbol at t, or -1 if there is none."""
    earlier = [j for j in range(t) if seq[j] == seq[t]]
    return earlier[-1] + 1 if earlier else -1


def _answer(seq, t, k, hop=_hop):
    for _ in range(k):
        t = hop(seq, t)
        if t < 0:
            return -1
    return seq[t]


def _first_hop(seq, t):          # a mistake: the first earlier occurrence
    earlier = [j for j in range(t) if seq[j] == seq[t]]
    return earlier[0] + 1 if earlier else -1


def _occurrence(seq, t):         # a mistake: the occurrence itself, not the one after
    earlier = [j for j in range(t) if seq[j] == seq[t]]
    return earlier[-1] if earlier else -1


_SEQS = ([0, 1, 2, 0, 1, 3, 0, 2, 1, 0], [2, 3, 2, 1, 3, 2, 1, 0, 3, 1, 2],
         [1, 0, 1, 0, 1, 0, 1], [3, 2, 1, 0])


ANSWERS = {
    "3.1": Function(
        cases=lambda: [((s, t), _hop(s, t)) for s in _SEQS for t in range(len(s))],
        integer=True,
        idea="Look left from t for the symbol at t; the hop lands one position after the "
             "nearest earlier occurrence (and nowhere, -1, if there is none).",
        mistakes=(
            Mistake(_first_hop, "Use the last (nearest) earlier occurrence, not the first."),
            Mistake(_occurrence, "The hop lands just after the earlier occurrence: on what "
                                 "came next, as an induction head copies it."),
        )),
    "3.2": Function(
        cases=lambda: [((s, t, k), _answer(s, t, k)) for s in _SEQS
                       for t in range(len(s)) for k in (1, 2, 3)],
        integer=True,
        idea="Apply one_hop k times, stopping with -1 as soon as a hop runs off the start; "
             "the answer is the symbol at the final position.",
        mistakes=(
            Mistake(lambda s, t, k: _answer(s, t, 1),
                    "Hop k times, each hop from where the previous one landed."),
            Mistake(lambda s, t, k: _answer(s, t, k, hop=_occurrence),
                    "Each hop lands one position after the earlier occurrence."),
        )),
    "3.3": Number(
        expected=lambda: 2 + (100 - 1).bit_length(),
        integer=True,
        idea="After its first two blocks, each doubling block doubles the number of hops a "
             "position knows; a block cannot do part of a doubling.",
        mistakes=(
            Mistake(lambda: 8, "log2 100 is about 6.6: six doublings reach only 64 hops, so "
                               "round the doublings up, not down."),
            Mistake(lambda: 7, "The first two blocks do one hop between them; only the "
                               "blocks after them double."),
            Mistake(lambda: 101, "That is the relay circuit (k + 1 blocks): doubling goes "
                                 "much further with the same blocks."),
        )),
}

WRITTEN = {
    "3.6": Written(
        model="Both circuits exist at these sizes: the construction scores 1.00 with relay in "
              "k + 1 blocks and with doubling in 2 + ⌈log2 k⌉. Training found relay: the "
              "trained models' later blocks each read one hop back. Relay's read is the same "
              "content match in every block (my letter against each position's previous "
              "letter), so one learned match serves every hop and each block's gradient "
              "points the same way; a doubling block reads at an address that the block "
              "below must first learn to write, so neither block is rewarded until both work. "
              "So the depth a trained model needs reflects what gradient descent finds in "
              "the budget, not the least depth that can do the task.",
        rubric=("states that both circuits can be built (the construction) and that the "
                "trained models use relay (the look inside)",
                "gives a mechanism for why relay is easier to learn (same read in every block; "
                "doubling's address must be written and used together)",
                "draws the consequence: trained depth ≠ the least depth that can do k hops"),
        points=3),
}


def spare_blocks(hops, record: str = "induction_models", n_layer: int = 5) -> dict:
    """``{k: blocks}`` for each k in ``hops``: the blocks (indices from 0) that the chapter's
    kept model of ``n_layer`` blocks (seed 0) can do without at k hops, i.e. it still scores at
    least ``SPARE_SCORE`` on the chapter's task with that block left out (exercise 3.7's
    check, on every block). About a second on one thread (the book's setting, and the quickest
    for these small passes): three k, five blocks, 256 sequences each."""
    from depthnotes.course.runs.ch3 import SPARE_SCORE
    from depthnotes.experiments.ch3 import INDUCTION_TASK
    from depthnotes.experiments.records import load_model, load_record
    from depthnotes.measure.constructions import score
    from depthnotes.training.runtime import BOOK_THREADS, num_threads

    kept = load_record(record)
    [arm] = [a for a in kept.arms if kept.arm(a)["info"]["n_layer"] == n_layer]
    model = load_model(kept, arm, 0)
    with num_threads(BOOK_THREADS):
        return {k: [b for b in range(n_layer)
                    if score(model, INDUCTION_TASK, k, skip=(b,)) >= SPARE_SCORE]
                for k in hops}


def _note_3_7(published: dict[str, str]) -> str:
    """Exercise 3.7's sub-question (does the trained model follow the relay's order?),
    computed from the record's kept model by the check's own rule (``spare_blocks``)."""
    from depthnotes.course.runs.ch3 import SPARE_SCORE

    L, hops = 5, (1, 2, 4)

    def blocks(found):
        return ", ".join(map(str, found)) if found else "none"
    spare = spare_blocks(hops, n_layer=L)
    relay = {k: list(range(k + 1, L)) for k in hops}
    differ = [k for k in hops if spare[k] != relay[k]]
    per_k = "; ".join(f"at k = {k}, {blocks(spare[k])} (a relay: {blocks(relay[k])})"
                      for k in hops)
    verdict = (f"it does not follow the relay's order at k = {', '.join(map(str, differ))}: "
               "which blocks it can spare are not simply those after the first k + 1, so the "
               "attention reading (each later block reads one hop back) does not tell the "
               "whole story, as the chapter's look inside cautions"
               if differ else "it follows the relay's order at every k tried")
    return (f"A relay doing k hops uses its first k + 1 blocks (indices 0 to k): without a "
            f"later one it still scores, without one of those it fails. The kept {L}-block "
            f"model scores at least {SPARE_SCORE:g} without these blocks: {per_k}. So {verdict}.")


#: Answers to the sub-questions of the tasks that no check reads (the instructor's notes).
SUBQUESTIONS = {
    "3.5": "A relay stack with b < k + 1 blocks does b - 1 exact hops, so at k it answers "
           "the (b - 1)-hop symbol and scores what that symbol's agreement with the k-hop one "
           "is (shorter_hops_baseline(task16, k, b - 1) measures it).",
    "3.7": _note_3_7,
}
