"""How the records' quick runs are split over test files, and the check every quick variant
gets.

pytest-xdist runs each test file whole in one worker (``--dist loadfile``, which keeps a
notebook's cells in one kernel), so the quick variants of all the named experiments in one
file ran one after another in one worker: about four minutes once, the longest file of the
quick development run. They are split in two files by name, which the two workers start with
(``tools.status.pytest_collection_modifyitems``): the pointer-chasing records (``khop*``:
chapter 3's k-hop sweeps and the runs read from them) in ``test_records_quick_khop.py``, every
other experiment in ``test_records_quick_other.py``. Since the task experiments' quick runs
score their learning curves on their few evaluation sequences (``training.tasks``), neither
file is more than a quarter of the quick path's CPU time (measured on the quick path with two
workers: about 17 and 27 CPU-seconds of 125), so the worker that finishes its file first
takes more of the unit-test files and the two end together; the split need not be even. A
new experiment lands in one of them by its name, so none is left out.
"""

from __future__ import annotations

from depthnotes.experiments.records import check_current, load_record
from depthnotes.experiments.registry import EXPERIMENTS, get_experiment


def is_khop(name: str) -> bool:
    """The experiments whose quick runs ``test_records_quick_khop.py`` holds."""
    return name.startswith("khop")


KHOP = sorted(n for n in EXPERIMENTS if is_khop(n))
OTHER = sorted(n for n in EXPERIMENTS if not is_khop(n))


def check_quick_variant(folder, name: str) -> None:
    """The quick variant of ``name``, written to ``folder``, is a loadable, current record of
    its definition: its arms and seeds, a training curve to the last step, every arm's final
    numbers."""
    rec = load_record(name, directory=folder, quick=True)
    exp = get_experiment(name, quick=True)
    assert rec.quick and rec.name == name and rec.command == exp.command
    check_current(rec, exp)
    assert rec.arms == [a.name for a in exp.arms] and rec.seeds == list(exp.seeds)
    first = rec.arms[0]
    steps, values = rec.curve(first, "train_loss", rec.seeds[0])
    assert len(steps) == len(values) >= 1 and steps[-1] == exp.arms[0].recipe.steps
    assert set(rec.final("steps_run")) == set(rec.arms)
    all_steps, all_values = rec.curves(first, "train_loss")
    assert all_steps[0] == steps and all_values[0] == values and len(all_values) == len(rec.seeds)
