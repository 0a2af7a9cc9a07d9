"""The repository's pytest plugin: the time-per-file summary at the end of a run."""

from types import SimpleNamespace

from depthnotes.tools.pytest_plugin import FileTimes


class _Terminal:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def write_sep(self, sep: str, title: str) -> None:
        self.lines.append(title)

    def write_line(self, line: str) -> None:
        self.lines.append(line)


def test_file_times_add_up_by_file_and_list_the_slowest_first():
    times = FileTimes()
    for nodeid, seconds in [("tests/a.py::t1", 1.0), ("tests/a.py::t2", 2.5),
                            ("notebooks/01.ipynb::Cell 0", 4.0), ("tests/b.py::t", 0.5)]:
        times.pytest_runtest_logreport(SimpleNamespace(nodeid=nodeid, duration=seconds))
    terminal = _Terminal()
    times.pytest_terminal_summary(terminal)
    assert terminal.lines[0].startswith("time per test file (3 files, 8 s in all")
    assert [line.split()[-1] for line in terminal.lines[1:]] == [
        "notebooks/01.ipynb", "tests/a.py", "tests/b.py"]
    assert terminal.lines[2].split()[0] == "3.5"


def test_a_run_with_no_reports_prints_nothing():
    terminal = _Terminal()
    FileTimes().pytest_terminal_summary(terminal)
    assert terminal.lines == []


def test_every_marker_rule_names_files_that_exist():
    """A renamed or split test file must not silently lose its marker (the quick path's
    ``-m`` selection reads them): each rule's path prefix matches a file of the repository,
    and each rule's marker is declared."""
    from pathlib import Path

    from depthnotes.tools.pytest_plugin import _WHERE, TEST_MARKERS

    root = Path(__file__).resolve().parents[1]
    files = [p.relative_to(root).as_posix()
             for folder in ("tests", "notebooks") for p in (root / folder).iterdir()]
    for prefix, marker in _WHERE:
        path = prefix.split("::")[0]
        assert any(f.startswith(path) for f in files), prefix
        assert marker in TEST_MARKERS
    assert any(prefix.startswith("tests/test_records_quick_") for prefix, _ in _WHERE)


def test_the_session_runs_notebooks_then_quick_records_then_units_then_browsers():
    """The order pytest-xdist hands files out in with ``--no-loadscope-reorder`` (the quick
    path): the longest files first, the browser tests last."""
    from depthnotes.tools import status

    ids = ["tests/test_site.py::t", "tests/test_basin.py::t", "tests/test_records_quick_other.py::t",
           "notebooks/01_parameter_math.ipynb::Cell 0", "tests/test_records.py::t"]
    items = [SimpleNamespace(nodeid=i) for i in ids]
    status.pytest_collection_modifyitems(None, None, items)
    assert [i.nodeid for i in items] == [ids[3], ids[2], ids[1], ids[4], ids[0]]
