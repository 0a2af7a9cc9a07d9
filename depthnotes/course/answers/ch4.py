"""What chapter 4's exercises expect, and the hints their checks give (instructor only:
the student edition holds these sealed, ``depthnotes.course.sealed``)."""

from __future__ import annotations

import math

from depthnotes.course.kinds import Choice, Function, Mistake, Number


def _entropy(ids) -> float:
    import torch

    p = torch.bincount(torch.as_tensor(ids)).double()
    p = p[p > 0] / p.sum()
    return float(-(p * p.log()).sum())


def _tensor(values):
    import torch

    return torch.tensor(values)


EXERCISES = {
    "4.1": Number(
        needs=("fit",), rel=1e-6,
        expected=lambda g: g["fit"].intercept + g["fit"].slope * 200,
        idea="The fit is a straight line in the block index: evaluate it at the block asked "
             "for.",
        mistakes=(
            Mistake(lambda g: g["fit"].slope * 200,
                    "The line does not start at zero: the embedding has a variance too."),
            Mistake(lambda g: (g["fit"].intercept + g["fit"].slope) * 200,
                    "Only the growth per block is multiplied by the block index."),
        )),
    "4.2": Function(
        cases=lambda g: [((0.0, 1.0, 10, 100), 10.0), ((1.0, 1.0, 10, 100), 101 / 11),
                         ((0.5, 0.1, 4, 8), 1.3 / 0.9)], rel=1e-9,
        idea="Independent contributions add their variances: write the variance after L "
             "blocks, then take the ratio for the two depths.",
        mistakes=(
            Mistake(lambda v0, s, L1, L2: L2 / L1,
                    "The embedding's variance is there before any block adds to it."),
            Mistake(lambda v0, s, L1, L2: math.sqrt((v0 + L2 * s) / (v0 + L1 * s)),
                    "The task asks for the ratio of variances, not of standard deviations."),
        )),
    "4.3": Function(
        needs=("corpus", "baseline"), rel=1e-9,
        cases=lambda g: [((_tensor([0, 1, 0, 1]), 4), math.log(2)),
                         ((_tensor([3, 3, 3]), 5), 0.0),
                         ((g["corpus"].train, g["corpus"].vocab_size), g["baseline"])],
        idea="Turn the counts of each id into frequencies, and average -log(frequency) "
             "weighted by the frequencies; ids that never occur add nothing.",
        mistakes=(
            Mistake(lambda ids, V: _entropy(ids) / math.log(2),
                    "Entropy in nats uses the natural logarithm."),
            Mistake(lambda ids, V: math.log(V),
                    "Weight each id by how often it occurs; the result is not the same for "
                    "every text."),
        )),
    "4.4": Choice(
        needs=("baseline", "margin"), options=("trained", "stalled"),
        expected=lambda g: "trained" if 3.05 < g["baseline"] - g["margin"] else "stalled",
        idea="The chapter's rule compares the loss with a threshold below the unigram "
             "baseline, not with the baseline itself.",
        mistakes=(
            Mistake(lambda g: "stalled" if 3.05 < g["baseline"] - g["margin"] else "trained",
                    "Work out the threshold from baseline and MARGIN (both defined above), "
                    "then see on which side of it the loss lies."),
        )),
}
