"""Loaded by pytest for this repository (``-p`` in pyproject.toml).

Sets ``DEPTHNOTES_QUIET`` before any test or notebook kernel starts, so progress bars stay out
of the outputs nbval compares, however pytest is invoked (whole suite or one notebook).
"""

import os
from collections import defaultdict

import pytest

os.environ["DEPTHNOTES_QUIET"] = "1"

# Record each notebook's checked run time and versions for the book's status page, and run the
# browser test last (after the notebooks): see depthnotes/tools/status.py.
from depthnotes.tools.status import (  # noqa: E402,F401
    pytest_collection_finish, pytest_itemcollected, pytest_runtest_logreport)
from depthnotes.tools import status as _status  # noqa: E402

#: Markers by where a test lives, so that a person working on the package can leave out the slow
#: parts: ``-m "not notebooks and not browser and not slow"`` (README: the quick path) runs the
#: unit tests and the records' quick runs; add ``and not records`` to leave those out too. The
#: README's test command and CI select nothing: they run everything.
TEST_MARKERS = {
    "notebooks": "executes a chapter (nbval, nbgrader's autograde, the notebook checks)",
    "browser": "opens the built site or JupyterLab in Chromium",
    "slow": "installs the student edition into a fresh virtual environment",
    "records": "runs the named experiments' quick variants (part of the quick path)",
}
_WHERE = (("notebooks/", "notebooks"), ("tests/test_notebooks.py", "notebooks"),
          ("tests/test_student.py::test_nbgrader", "notebooks"),
          ("tests/test_student.py::test_the_student_edition", "slow"),
          ("tests/test_site.py", "browser"),
          ("tests/test_jupyterlab.py", "browser"), ("tests/test_records_quick_", "records"))


class FileTimes:
    """Adds up each test file's time (setup, call and teardown of its tests, a notebook's cells)
    and lists the slowest files at the end of the run, so that every run shows where the suite's
    time goes. Under pytest-xdist the controller receives every worker's reports."""

    SHOWN = 12

    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)

    def pytest_runtest_logreport(self, report) -> None:
        self.seconds[report.nodeid.split("::", 1)[0]] += report.duration

    def pytest_terminal_summary(self, terminalreporter) -> None:
        if not self.seconds:
            return
        slowest = sorted(self.seconds.items(), key=lambda kv: -kv[1])[:self.SHOWN]
        files = f"{len(self.seconds)} file" + ("s" if len(self.seconds) != 1 else "")
        terminalreporter.write_sep("=", f"time per test file ({files}, "
                                        f"{sum(self.seconds.values()):.0f} s in all; slowest)")
        for path, seconds in slowest:
            terminalreporter.write_line(f"{seconds:8.1f} s  {path}")


def pytest_configure(config) -> None:
    for name, what in TEST_MARKERS.items():
        config.addinivalue_line("markers", f"{name}: {what}")
    if getattr(config, "workerinput", None) is None:    # the controller, or a run without xdist
        config.pluginmanager.register(FileTimes(), "depthnotes-file-times")
    _status.pytest_configure(config)
    worker = getattr(config, "workerinput", None)      # a pytest-xdist worker
    if worker is not None:
        # Workers share the cores: each gets its share of PyTorch's threads instead of all of
        # them (n workers x all cores would oversubscribe the machine). Notebook kernels pin
        # their own one thread (``training.runtime.pin``).
        import torch

        torch.set_num_threads(max(1, _status.cpu_count() // int(worker["workercount"])))


@pytest.hookimpl(tryfirst=True)     # before ``-m`` deselects by these markers
def pytest_collection_modifyitems(session, config, items) -> None:
    for item in items:
        for prefix, marker in _WHERE:
            if item.nodeid.startswith(prefix):
                item.add_marker(getattr(pytest.mark, marker))
    _status.pytest_collection_modifyitems(session, config, items)
