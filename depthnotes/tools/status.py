"""The execution-status page: each notebook's checked run time and the versions it ran with.

Nothing on that page is typed. The test run records it: nbval executes every notebook in a fresh
kernel and compares each cell's output with the stored one, and the pytest hooks below add up
each notebook's time (kernel start included) and write it, with the versions of the packages
that ran it, to ``_build/generated/notebook_runs.json``. A notebook is recorded only when all of
its cells ran in that session (not for ``-k`` selections). The build renders the table from that
file (:func:`render_status`).

A site built before any test run on its machine (the README's first command builds before the
second tests) would otherwise say "not measured yet" everywhere. So the repository keeps the
project's last full check, ``SNAPSHOT_FILE``, written on purpose by
``python -m depthnotes.tools.status --save`` from a test run's file (never by the tests
themselves, which must not change tracked files); :func:`load_runs` falls back to it per
notebook, and the tables say which rows come from it (``"source": "snapshot"``).

The hooks are loaded through ``depthnotes.tools.pytest_plugin``. They also order the session:
the notebooks first and the browser tests (``tests/test_site.py``, ``tests/test_jupyterlab.py``)
last, so that the site they check is built after the notebooks have been checked and timed
(:func:`pytest_collection_modifyitems`). Under pytest-xdist each worker records the notebooks it
ran; the controller, which collects nothing, records none.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import platform
from collections import Counter
from importlib import metadata
from pathlib import Path

from depthnotes.tools.assets import NPM_ASSETS
from depthnotes.tools.book import notebook_title, toc_notebooks

RUNS_FILE = Path("_build") / "generated" / "notebook_runs.json"
#: The project's last full check, kept in the repository (see the module's docstring).
SNAPSHOT_FILE = Path("book") / "notebook_runs.json"
#: Packages whose versions the status page lists.
PACKAGES = ("torch", "numpy", "matplotlib", "ipywidgets", "ipykernel", "nbclient", "nbval",
            "pytest", "jupyter-book", "sphinx", "myst-nb", "depthnotes")


def versions() -> dict[str, str]:
    out = {"python": platform.python_version()}
    for name in PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "not installed"
    return out


def _notebook_of(nodeid: str) -> str | None:
    path = nodeid.split("::", 1)[0]
    return path if path.endswith(".ipynb") else None


class _Recorder:
    def __init__(self) -> None:
        self.collected: Counter[str] = Counter()
        self.selected: Counter[str] = Counter()
        self.runs: dict[str, dict] = {}
        self.root: Path | None = None


_rec = _Recorder()


def pytest_configure(config) -> None:
    root = Path(str(config.rootpath))
    _rec.root = root if (root / "_toc.yml").exists() else None


def pytest_itemcollected(item) -> None:
    nb = _notebook_of(item.nodeid)
    if nb:
        _rec.collected[nb] += 1


#: Test files that open the site or JupyterLab in a browser: run last (see below).
LAST = ("tests/test_site.py", "tests/test_jupyterlab.py")
#: The records' quick runs, among the longest unit-test files: first among the unit tests.
LONG_UNITS = ("tests/test_records_quick_",)


def pytest_collection_modifyitems(session, config, items) -> None:
    """The notebooks first, then the records' quick runs, the browser tests last, the rest in
    between, each group in its collected order. The browser test checks the built site, which
    shows the status the notebooks' runs record, so it comes after them. The notebooks and the
    quick records are the longest files; pytest-xdist hands whole files to its workers in this
    order when run with ``--no-loadscope-reorder`` (the README's quick path), so starting with
    them keeps both workers busy to the end instead of leaving one long file running alone while
    the other worker idles. (Without that option pytest-xdist orders the files by their number
    of tests, and this order only breaks ties.)"""
    def group(item) -> int:
        if _notebook_of(item.nodeid):
            return 0
        if item.nodeid.startswith(LONG_UNITS):
            return 1
        return 3 if item.nodeid.startswith(LAST) else 2

    items[:] = sorted(items, key=group)         # sorted() is stable: order kept within groups


def pytest_collection_finish(session) -> None:
    _rec.selected = Counter(nb for it in session.items if (nb := _notebook_of(it.nodeid)))


def pytest_runtest_logreport(report) -> None:
    nb = _notebook_of(report.nodeid)
    if nb is None or _rec.root is None:
        return
    run = _rec.runs.setdefault(nb, {"seconds": 0.0, "cells": 0, "failed": 0})
    run["seconds"] += report.duration
    if report.when == "call" or report.failed:
        run["cells"] += report.when == "call"
        run["failed"] += bool(report.failed)
    if report.when == "teardown" and run["cells"] == _rec.selected[nb] == _rec.collected[nb]:
        _write(nb, run)


def _read(path: Path) -> dict:
    try:
        return json.loads(path.read_text())
    except (FileNotFoundError, json.JSONDecodeError):
        return {}


def load_local_runs(root: Path) -> dict:
    """The nbval runs recorded by the test runs on this machine, by notebook file name."""
    return _read(root / RUNS_FILE)


def load_runs(root: Path) -> dict:
    """The recorded nbval runs, by notebook file name: this machine's where the tests have run
    a notebook, else the repository's snapshot (marked ``"source": "snapshot"``); {} when
    neither has it."""
    runs = {name: {**run, "source": "snapshot"} for name, run in _read(
        root / SNAPSHOT_FILE).items()}
    runs.update({name: {**run, "source": "this machine"}
                 for name, run in load_local_runs(root).items()})
    return runs


def save_snapshot(root: Path) -> Path:
    """Copy this machine's recorded runs into the repository's snapshot (every notebook of the
    book must have passed in them: a snapshot of a partial or failing check is refused)."""
    local = load_local_runs(root)
    names = [p.name for p in toc_notebooks(root)]
    missing = [n for n in names if n not in local]
    failing = [n for n in names if n in local and local[n]["failed"]]
    if missing or failing:
        raise ValueError(f"not saving a snapshot: no recorded run of {missing}, failing "
                         f"{failing} (run `python -m pytest notebooks/` first)")
    path = root / SNAPSHOT_FILE
    path.write_text(json.dumps({n: local[n] for n in names}, indent=1, sort_keys=True) + "\n")
    return path


def _write(nb: str, run: dict) -> None:
    """Add one notebook's run to ``RUNS_FILE``. Under pytest-xdist each worker writes the
    notebooks it ran, so the file is read and rewritten under an exclusive lock (no worker's
    row is lost) and replaced in one step (a reader never sees half a file)."""
    import fcntl

    path = _rec.root / RUNS_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_suffix(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        data = load_local_runs(_rec.root)
        data[Path(nb).name] = {
            "seconds": round(run["seconds"], 1),
            "cells": run["cells"],
            "failed": run["failed"],
            "checked_at": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "machine": f"{platform.machine()}, {cpu_count()} CPU cores",
            "versions": versions(),
        }
        tmp = path.with_name(path.name + f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
        os.replace(tmp, path)


def cpu_count() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()


def _title(path: Path) -> str:
    import nbformat

    return notebook_title(nbformat.read(path, as_version=4), path.stem)


def render_status(root: Path) -> str:
    """The MyST fragment ``book/status.md`` includes."""
    runs = load_runs(root)
    lines = ["<!-- generated by depthnotes.tools.build from the test run; do not edit -->", "",
             "| chapter | notebook | checked run time | cells | result | checked on |",
             "|---------|----------|-----------------:|------:|--------|------------|"]
    shown = []
    for path in toc_notebooks(root):
        run = runs.get(path.name)
        doc = f"{{doc}}`{_title(path)} </notebooks/{path.stem}>`"
        if run is None:
            lines.append(f"| {doc} | `{path.name}` | not run by the tests on this machine yet "
                         "| — | — | — |")
            continue
        shown.append(run)
        result = "✓ all outputs match" if run["failed"] == 0 else f"✗ {run['failed']} cells differ"
        where = "" if run.get("source") != "snapshot" else " (the repository's last check)"
        lines.append(f"| {doc} | `{path.name}` | {run['seconds']:.1f} s | {run['cells']} | "
                     f"{result} | {run['checked_at']}{where} |")
    if shown:
        total = sum(r["seconds"] for r in shown)
        lines += ["", f"All {len(shown)} checked notebooks together: **{total:.0f} s** "
                      f"on {shown[-1]['machine']}."]
        if any(r.get("source") == "snapshot" for r in shown):
            lines += ["", "Rows marked *the repository's last check* were measured on the "
                          "project's machine, a shared 2-core machine whose other jobs can lengthen "
                          "them, and saved with the book (`python -m "
                          "depthnotes.tools.status --save`); `.venv/bin/python -m pytest` "
                          "on your machine, then a build, replaces them with your own."]
        newest = max(shown, key=lambda r: r["checked_at"])
        lines += ["", "(status-versions)=", "## Versions used", "",
                  "The packages the notebooks ran with in the newest run "
                  f"({newest['checked_at']}):", "",
                  "| package | version |", "|---------|---------|"]
        lines += [f"| {k} | {v} |" for k, v in newest["versions"].items()]
    else:
        lines += ["", "No notebook has been checked on the machine that built this site. Run "
                      "`.venv/bin/python -m pytest` and build again to fill in this table."]
    lines += ["", "## Scripts the site serves itself", "",
              "| package | version | integrity (sha512) |", "|---|---|---|"]
    lines += [f"| `{a.name}` | {a.version} | `{a.integrity[7:19]}…` |" for a in NPM_ASSETS]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    import argparse

    from depthnotes.tools.book import ROOT

    parser = argparse.ArgumentParser(description="The execution-status records.")
    parser.add_argument("--save", action="store_true",
                        help=f"copy this machine's recorded runs to {SNAPSHOT_FILE}")
    args = parser.parse_args(argv)
    if args.save:
        print(save_snapshot(ROOT).relative_to(ROOT))
    else:
        print(render_status(ROOT))
    return 0


if __name__ == "__main__":                                            # pragma: no cover
    raise SystemExit(main())
