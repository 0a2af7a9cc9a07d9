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


class _Item:
    def __init__(self, nodeid: str) -> None:
        self.nodeid = nodeid
        self.marks = []

    def add_marker(self, mark) -> None:
        self.marks.append(mark.mark if hasattr(mark, "mark") else mark)


def test_long_files_first_spread_tests_last_and_each_other_file_one_group():
    """The browser tests and the notebooks go first (longest first), tests/test_records.py's
    tests last and one by one (no xdist group), every other file whole in one worker."""
    from depthnotes.tools.pytest_plugin import pytest_collection_modifyitems

    ids = ["tests/test_a.py::t1", "tests/test_records.py::q[x]", "notebooks/01_x.ipynb::Cell 0",
           "tests/test_site.py::s", "tests/test_a.py::t2", "notebooks/01_x.ipynb::Cell 1"]
    items = [_Item(i) for i in ids]
    pytest_collection_modifyitems(None, None, items)
    assert [i.nodeid for i in items] == [
        "notebooks/01_x.ipynb::Cell 0", "tests/test_site.py::s", "notebooks/01_x.ipynb::Cell 1",
        "tests/test_a.py::t1", "tests/test_a.py::t2", "tests/test_records.py::q[x]"]
    groups = {i.nodeid: [m.args[0] for m in i.marks if m.name == "xdist_group"] for i in items}
    assert groups["tests/test_a.py::t2"] == ["tests/test_a.py"]
    assert groups["notebooks/01_x.ipynb::Cell 1"] == ["notebooks/01_x.ipynb"]
    assert groups["tests/test_records.py::q[x]"] == []
