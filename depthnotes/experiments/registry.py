"""Every named experiment of the book, from its chapter's module (``ch3`` ... ``ch8``), and
the one way to get one by name (``get_experiment``); ``records.py`` runs them.
"""

from __future__ import annotations

from depthnotes.experiments import ch3, ch4, ch5, ch6, ch8  # noqa: F401  (they register)
from depthnotes.experiments.spec import EXPERIMENTS, Experiment

#: Named experiments whose full record is not stored yet, with why (the chapters say what
#: they do and do not test without them); every other experiment has a stored record.
UNRECORDED: dict[str, str] = {**ch5.UNRECORDED, **ch8.UNRECORDED}


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
