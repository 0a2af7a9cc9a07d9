"""Every named experiment of the book, from its chapter's module (``ch3`` ... ``ch8``), and
the one way to get one by name (``get_experiment``); ``records.py`` runs them.
"""

from __future__ import annotations

from depthnotes.experiments import ch3, ch4, ch5, ch6, ch8, samples  # noqa: F401  (they register)
from depthnotes.experiments.spec import EXPERIMENTS, Experiment

#: Named experiments whose full record is not stored yet, with why (the chapters say what
#: they do and do not test without them); every other experiment has a stored record.
UNRECORDED: dict[str, str] = {**ch4.UNRECORDED, **ch5.UNRECORDED, **ch6.UNRECORDED,
                                **ch8.UNRECORDED}


#: Experiments on the corpus, with several seeds, whose seeds are *not* all scored on the same
#: held-out text (``TrainConfig.eval_seed`` is None: each run draws its held-out batches from
#: its own seed), with why. Evaluation noise then adds to the seed spread, which makes "within
#: noise" more likely, not less; the chapters that judge them say so, and the methods page
#: marks them. Any new experiment fixes its evaluation set or is listed here
#: (``tests/test_records.py``).
PER_SEED_EVAL: dict[str, str] = {
    **dict.fromkeys(("budget_basin", "budget_basin_lr", "budget_basin_lr_high",
                     "budget_basin_lr_top", "deepnorm_depth_comparison", "deepnorm_depth_lr"),
                    "recorded before a fixed evaluation set existed"),
    "layer_redundancy": "trains budget_basin's model at its recipe, which it must keep",
    **dict.fromkeys(("budget_basin_lr_high", "budget_basin_lr_top"),
                    "adds rates to budget_basin, whose recipe it must keep"),
}


def get_experiment(name: str, quick: bool = False) -> Experiment:
    """The named experiment (or its quick version)."""
    if name not in EXPERIMENTS:
        raise KeyError(f"no experiment named {name!r}; the experiments are "
                       f"{sorted(EXPERIMENTS)}")
    exp = EXPERIMENTS[name](quick)
    if exp.name != name or exp.quick != quick:
        raise RuntimeError(f"experiment builder {name!r} returned {exp.name!r} "
                           f"(quick={exp.quick})")
    return exp
