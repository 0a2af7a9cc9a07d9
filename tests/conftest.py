"""Fixtures several test modules share."""

import pytest
import torch


@pytest.fixture(scope="module")
def one_thread():
    """Run a module's tests with one thread (the book's setting); the session's count comes
    back afterwards. A module opts in with ``pytestmark = pytest.mark.usefixtures(...)``."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="module")
def quick_records(tmp_path_factory):
    """``quick_records(name)``: the folder holding the quick variant of experiment ``name``,
    run and written the first time a test of the module asks for it, so that a selection
    (``-k``) runs only the records it reads. One folder per test module: the records' quick
    runs are split over a few files (``tests/test_records_quick_*.py``, by ``quick_split``) so
    that pytest-xdist, which runs each file whole in one worker (``--dist loadfile``), spreads
    them over the workers; a record two tests read is in the same file, and runs once."""
    from depthnotes.experiments.records import run_experiment, write_record
    from depthnotes.experiments.registry import get_experiment

    out = tmp_path_factory.mktemp("quick")

    def folder_with(name: str):
        if not (out / f"{name}.quick.json").is_file():
            write_record(run_experiment(get_experiment(name, quick=True), workers=1), out)
        return out

    return folder_with


def pytest_configure(config):
    config.addinivalue_line("markers", "no_edition: a test of the exercises that runs once, "
                                       "not once per edition (tests/test_exercises.py)")
