"""How the records' quick runs are split over test files, and the check every quick variant
gets.

pytest-xdist runs each test file whole in one worker (``--dist loadfile``, which keeps a
notebook's cells in one kernel), so the quick variants of all the named experiments in one
file ran one after another in one worker: about four minutes, the longest file of the quick
development run. They are split in two files of about equal time (measured: the run prints the
time per test file): the pointer-chasing records (``khop*``: chapter 3's k-hop sweeps and the
runs read from them) in ``test_records_quick_khop.py``, except the twelve-symbol sweep
``khop_depth_sweep`` (about 25 s), and every other experiment in
``test_records_quick_other.py``. A new experiment lands in one of them by its name, so none is
left out.
"""

from __future__ import annotations

from depthnotes.experiments.records import check_current, load_record
from depthnotes.experiments.registry import EXPERIMENTS, get_experiment


#: Run in the other file, to even the two files' times.
BALANCE = ("khop_depth_sweep",)


def is_khop(name: str) -> bool:
    """The experiments whose quick runs ``test_records_quick_khop.py`` holds."""
    return name.startswith("khop") and name not in BALANCE


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
