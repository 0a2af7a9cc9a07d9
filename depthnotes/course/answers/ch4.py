"""What chapter 4's exercises expect, and the hints their checks give (instructor only:
the student edition holds these sealed, ``depthnotes.course.sealed``)."""

from __future__ import annotations

import math

from depthnotes.course.kinds import Written, Choice, Function, GivenCase, Mistake
from depthnotes.data.corpus import token_entropy
from depthnotes.verdicts.ch4_trainability import FLAT_SLOPE, UNIGRAM_MARGIN, run_status


def _in_bits(ids, vocab_size):
    """A known mistake: the entropy in bits. Written out, since 4.2 refuses a function that
    calls ``token_entropy`` and the tests hand each mistake to the check as a student's."""
    import torch

    counts = torch.bincount(torch.as_tensor(ids).flatten()).double()
    p = counts[counts > 0] / counts.sum()
    return float(-(p * torch.log2(p)).sum())


def _tensor(values):
    import torch

    return torch.tensor(values)


ANSWERS = {
    "4.1": Function(
        cases=lambda: [((0.0, 1.0, 10, 100), 10.0), ((1.0, 1.0, 10, 100), 101 / 11),
                         ((0.5, 0.1, 4, 8), 1.3 / 0.9)],
        idea="Independent contributions add their variances: write the variance after L "
             "blocks, then take the ratio for the two depths.",
        mistakes=(
            Mistake(lambda v0, s, L1, L2: L2 / L1,
                    "The embedding's variance is there before any block adds to it."),
            Mistake(lambda v0, s, L1, L2: math.sqrt((v0 + L2 * s) / (v0 + L1 * s)),
                    "The task asks for the ratio of variances, not of standard deviations."),
        )),
    "4.2": Function(
        needs=("corpus", "baseline"),
        forbids=("token_entropy",),
        cases=lambda: [((_tensor([0, 1, 0, 1]), 4), math.log(2)),
                       ((_tensor([3, 3, 3]), 5), 0.0),
                       ((_tensor([0, 0, 1, 2, 2, 2, 4]), 6), token_entropy([0, 0, 1, 2, 2, 2, 4]))],
        given_cases=(GivenCase(("corpus.train", "corpus.vocab_size"), "baseline"),),
        idea="Turn the counts of each id into frequencies, and average -log(frequency) "
             "weighted by the frequencies; ids that never occur add nothing.",
        mistakes=(
            Mistake(_in_bits,
                    "Entropy in nats uses the natural logarithm."),
            Mistake(lambda ids, V: math.log(V),
                    "Weight each id by how often it occurs; the result is not the same for "
                    "every text."),
        )),
    "4.3": Choice(
        options=("trained", "slow", "stalled", "diverged"),
        expected=lambda: run_status(3.12, False, -0.02, 3.25, UNIGRAM_MARGIN, FLAT_SLOPE),
        idea="A run that did not train is told apart by how its training loss ends: flat, or "
             "still falling faster than the chapter's slope threshold.",
        mistakes=(
            Mistake(lambda: run_status(3.12, False, -0.02, 3.25, 0.0, FLAT_SLOPE),
                    "The rule compares the loss with a threshold UNIGRAM_MARGIN below the "
                    "unigram loss, not with the unigram loss itself."),
            Mistake(lambda: run_status(3.12, False, -0.2, 3.25, UNIGRAM_MARGIN, FLAT_SLOPE),
                    "Compare the late slope with the flat threshold: is the loss still falling "
                    "by more than that per 100 steps?"),
        )),
}

WRITTEN = {
    "4.6": Written(
        model="The branch of every pre-norm block reads a normalised copy of the stream, so at "
              "initialisation it writes an output of about the same variance s whatever the "
              "depth, nearly independent of the stream it is added to. Variances of independent "
              "terms add, so after l blocks the stream's variance is v0 + l·s: linear in depth, "
              "as the fit shows. Block l's own write is then a fraction s/(v0 + l·s) of the "
              "stream, about 1/l: the deeper a block sits, the less its output moves the "
              "stream, so late blocks start out changing little (and the final norm divides "
              "by a growing scale).",
        rubric=('explains the linear growth: each branch adds roughly independent variance s, and independent variances add',
                "says why the branch's variance does not grow with depth (it reads a normalised input)",
                "draws the consequence: block l's relative contribution shrinks like 1/l"),
        points=3),
}

#: Answers to the sub-questions of the tasks that no check reads (the instructor's notes).
SUBQUESTIONS = {
    "4.1": "When v0 is much smaller than L1·s the ratio tends to L2 / L1: the variance grows "
           "in proportion to depth.",
    "4.5": "The ratio depends on the run; the solution cell prints it for Xavier at 48 blocks. "
           "Compare with the chapter's N(0, 0.02²) stack at 96 blocks (check C8a) and ask "
           "which init starts the blocks closer to the identity (at d = 64 Xavier's std is "
           "several times 0.02).",
}
