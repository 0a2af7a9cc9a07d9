"""``text_samples``: what a few of the book's trained models write, for chapters 4, 5 and 8.

Those chapters judge models by their validation loss, and their records keep no weights (a
48-block model is ~10 MB). This record trains again, on one seed, a handful of arms of their
records — the same config, recipe and seed, so the same run up to the CPU's arithmetic — and
stores what each model writes from one prompt (``measure.samples``), with its final loss, so
the page can show that the sampled model is the one the record scored. It judges nothing: the
chapters' verdicts rest on their own records and seeds.

The arms, each at the rate its chapter scores it at (its best on the record's grid;
``tests/test_samples.py`` checks the choice against the chapters' rules):

- chapter 4, ``postnorm_failure_depth``: Xavier post-norm at 6 blocks (trains) and at 48 (stalls),
  and post-norm with N(0, 0.02²) at 48 (trains);
- chapter 5, the same record: Xavier pre-norm at 48 blocks (trains);
- chapter 8, ``depth_lr_transfer`` and ``_64``: the standard parameterisation at 4 blocks at its
  best rate, and at 64 blocks at that same rate and at its own best (X2's cost).
"""

from __future__ import annotations

from dataclasses import replace

from depthnotes.experiments import ch4, ch8  # noqa: F401  (they register the source records)
from depthnotes.experiments.spec import EXPERIMENTS, Experiment, register
from depthnotes.measure.samples import SampleSpec

#: (source experiment, arm name) of each sampled arm: see the module doc.
SAMPLED_ARMS = (
    ("postnorm_failure_depth", "post-norm, Xavier, no warm-up, L=6"),
    ("postnorm_failure_depth", "post-norm, Xavier, no warm-up, L=48"),
    ("postnorm_failure_depth", "post-norm, N(0, 0.02²), no warm-up, L=48"),
    ("postnorm_failure_depth", "pre-norm, Xavier, no warm-up, L=48"),
    ("depth_lr_transfer", "standard L=4 lr=0.008"),
    ("depth_lr_transfer_64", "standard L=64 lr=0.008"),
    ("depth_lr_transfer_64", "standard L=64 lr=0.002"),
)


def sampled_arms(quick: bool) -> tuple:
    """The arms of ``SAMPLED_ARMS`` as their source experiments define them, each with
    ``info["sample"]`` and ``info["source"]`` added. Quick: the first arm of each source's quick
    version (the same code path, tiny)."""
    arms = []
    if quick:
        sources = dict.fromkeys(src for src, _ in SAMPLED_ARMS)
        picked = [(src, EXPERIMENTS[src](True).arms[0]) for src in sources]
    else:
        picked = []
        for src, name in SAMPLED_ARMS:
            by_name = {a.name: a for a in EXPERIMENTS[src](False).arms}
            if name not in by_name:
                raise KeyError(f"text_samples: {src} has no arm {name!r}")
            picked.append((src, by_name[name]))
    spec = (SampleSpec(chars=40) if quick else SampleSpec()).as_dict()
    for src, arm in picked:
        arms.append(replace(arm, info={**arm.info, "source": src, "sample": spec}))
    return tuple(arms)


@register
def text_samples(quick: bool = False) -> Experiment:
    return Experiment(
        name="text_samples", quick=quick,
        description=(
            "Chapters 4, 5 and 8: what trained models write. Seven arms of three records, "
            "trained again on seed 0 with their own config and recipe (postnorm_failure_depth: "
            "Xavier post-norm at 6 and 48 blocks, N(0, 0.02²) post-norm and Xavier pre-norm at "
            "48, each at lr 1e-3, the rate chapter 4 scores them at; depth_lr_transfer(_64): "
            "the standard parameterisation at 4 blocks at its best rate, 8e-3, and at 64 blocks "
            "at 8e-3 and at its own best, 2e-3). After training, each model continues the line "
            "'The example above shows part of the' by 200 characters, sampled at temperature "
            "0.7 from a generator seeded 0. An illustration: it judges nothing, one seed."),
        measures=("the text each trained model writes (the run's 'sample'), its training curve "
                  "and final validation loss on its source record's held-out batches"),
        data="python_topics", arms=sampled_arms(quick), seeds=(0,))
