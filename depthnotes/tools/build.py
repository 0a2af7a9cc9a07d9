"""Build the website from the notebooks' stored (nbval-checked) outputs.

    python -m depthnotes.tools.build             # assets (if missing), generated pages, site
    python -m depthnotes.tools.build --assets    # only fetch the offline assets

Three steps, all part of this one command:

1. **Offline assets.** MathJax, require.js and the Jupyter widget manager, pinned npm
   packages that the site serves itself (``depthnotes.tools.assets``); fetched only when the
   pins change or the folder is missing.
2. **Generated pages.** The claims table (from the notebooks' claim-check cells), the
   execution-status table (from the timings the test run records), the API listing (from the
   modules of ``depthnotes``), the chapters' summaries and their exercises, and the landing
   page's figure (``depthnotes.tools.landing``) are written to
   ``_build/generated/``; the pages in ``book/`` include them, so they never drift from the
   notebooks.
3. **The site.** Jupyter Book v1 builds the repository with warnings as errors
   (``-W -n --keep-going``): a broken reference, an unknown citation or a missing figure fails
   the build. The site lands in ``_build/html``; open ``_build/html/index.html``.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from depthnotes.tools import api_page, claims, landing, methods, status, summaries
from depthnotes.tools.assets import AssetError, fetch_assets
from depthnotes.tools.book import ROOT

#: Written after every successful build; the browser test compares source times with it.
STAMP_NAME = ".site-stamp"


def generate_pages(root: Path = ROOT, student: bool = False) -> list[Path]:
    """Write the generated page fragments into ``_build/generated``; returns the files written.
    ``student``: the instructor's notes are left out (``--student``)."""
    out = root / "_build" / "generated"
    out.mkdir(parents=True, exist_ok=True)
    fragments = {
        "course_hours.md": summaries.render_hours(root),
        "course_recommended.md": summaries.render_recommended(root),
        "course_mistakes.md": summaries.render_mistakes(),
        "course_instructor.md": summaries.render_instructor(student, root),
        "claims.md": claims.render_claims_table(root),
        "status.md": status.render_status(root),
        "api.md": api_page.render_api(root),
        "summaries.md": summaries.render_summaries(root),
        "exercises.md": summaries.render_exercises(root),
        "methods_rule.md": methods.render_rule(),
        "methods_thresholds.md": methods.render_thresholds(),
        "methods_records.md": methods.render_records(root),
    }
    written = []
    for name, text in fragments.items():
        path = out / name
        if not path.exists() or path.read_text() != text:   # unchanged: keep Sphinx's cache
            path.write_text(text)
            written.append(path)
    figure, png = out / landing.LANDING_FILE, landing.landing_png(root)
    if not figure.exists() or figure.read_bytes() != png:
        figure.write_bytes(png)
        written.append(figure)
    return written


def site_sources(root: Path = ROOT) -> list[Path]:
    """The files the site is built from (for :func:`site_is_stale`)."""
    files = [root / "_config.yml", root / "_toc.yml", root / status.RUNS_FILE,
             root / status.SNAPSHOT_FILE]
    files += list((root / "notebooks").glob("*.ipynb"))
    files += [p for p in (root / "book").rglob("*") if p.is_file()]
    files += list((root / "depthnotes").rglob("*.py"))
    return [f for f in files if f.exists()]


def stale_sources(root: Path = ROOT) -> list[Path] | None:
    """The sources newer than the built site (empty when it is up to date), or None when
    there is no complete build."""
    stamp = root / "_build" / STAMP_NAME
    if not stamp.exists() or not (root / "_build" / "html" / "index.html").exists():
        return None
    built = stamp.stat().st_mtime
    return [f for f in site_sources(root) if f.stat().st_mtime > built]


def site_is_stale(root: Path = ROOT) -> bool:
    """True if ``_build/html`` is missing or older than any of its sources."""
    return stale_sources(root) != []


def refresh_site(root: Path = ROOT) -> str:
    """Bring the site up to date with the least work: nothing when it is current (``"fresh"``);
    when the only newer source is the run times the test run has just recorded, regenerate the
    pages and let Sphinx rebuild what changed (the status page; ``"status"``), a few seconds
    instead of a full build; otherwise ``build_site`` (``"full"``)."""
    stale = stale_sources(root)
    if stale == []:
        return "fresh"
    if stale == [root / status.RUNS_FILE]:
        _build(root, full=False)
        return "status"
    build_site(root)
    return "full"


def stage_student_site(root: Path = ROOT, stage: Path | None = None) -> Path:
    """A copy of the book's sources in ``_build/student-src`` with every exercise's solution
    removed from the chapters (its source replaced by the handout's placeholder, its output
    and its check's output dropped; every other stored output kept) and the offline assets
    and run times of the last build linked in."""
    import nbformat

    from depthnotes.tools.student import find_exercises, replace_solutions

    stage = stage or root / "_build" / "student-src"
    if stage.exists():
        shutil.rmtree(stage)
    stage.mkdir(parents=True)
    for name in ("_config.yml", "_toc.yml", "LICENSE", "LICENSE-text", "README.md"):
        if (root / name).exists():
            shutil.copy(root / name, stage / name)
    shutil.copytree(root / "book", stage / "book")
    shutil.copytree(root / "notebooks", stage / "notebooks",
                    ignore=shutil.ignore_patterns("*.ipynb", ".ipynb_checkpoints"))
    for path in sorted((root / "notebooks").glob("*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        for ex in find_exercises(nb):
            check = nb.cells[ex.check] if ex.check is not None else None
            for i in (ex.prediction, ex.answer):
                if i is not None:
                    cell = nb.cells[i]
                    cell.source = replace_solutions(cell.source)
                    cell.outputs = []
            if check is not None:
                check.outputs = []
        nbformat.write(nb, stage / "notebooks" / path.name)
    (stage / "_build").mkdir()
    for kept in ("assets", "generated"):
        if (root / "_build" / kept).exists():
            shutil.copytree(root / "_build" / kept, stage / "_build" / kept)
    return stage


def build_site(root: Path = ROOT, student: bool = False) -> float:
    """Fetch assets, generate pages, build the HTML site; returns the wall time in seconds.

    Raises ``subprocess.CalledProcessError`` on any Sphinx warning, ``AssetError`` when an
    asset cannot be fetched or a notebook's claim cell breaks the house format.
    """
    fetch_assets(root)
    return _build(root, full=True, student=student)


def run_jupyter_book(args: list[str], cwd: Path) -> None:
    """``jupyter-book <args>`` run from ``cwd``, in this process; raises
    ``subprocess.CalledProcessError`` when the build fails, as the command would exit non-zero.

    In this process rather than as a command: the pages generated just before have already
    imported what Jupyter Book needs (nbformat's schema validation alone takes 3.4 s to import,
    for a grammar of web addresses the book never checks), and a second Python would import it
    all again. With the faster docstring check (``sphinx_site``), the full build went from
    63.7 s to 47.8 s on 2 cores. Sphinx restores docutils' global registries when it finishes
    (``docutils_namespace``), so the caller's process is left as it was."""
    from jupyter_book.cli.main import main as jupyter_book

    command = ["jupyter-book", *args]
    try:
        with contextlib.chdir(cwd):
            jupyter_book.main(args=args, prog_name="jupyter-book", standalone_mode=False)
    except SystemExit as e:       # Jupyter Book exits with Sphinx's status when warnings fail
        if e.code:
            raise subprocess.CalledProcessError(e.code if isinstance(e.code, int) else 1,
                                                command) from None
    except RuntimeError as e:     # ... and raises when Sphinx itself raised
        raise subprocess.CalledProcessError(1, command) from e
    finally:
        sys.stdout.flush()


def _build(root: Path, full: bool, student: bool = False) -> float:
    """Generate the pages and run Jupyter Book (warnings are errors); stamp the site when it
    succeeds. ``full``: a fresh environment and every page written (``--all``), so every
    warning is reported and no page keeps scripts or settings from an earlier build; else
    Sphinx rebuilds only the pages whose sources changed. The stamp holds the last full
    build's time (the browser test checks its budget)."""
    start, started_at = time.perf_counter(), time.time()
    stamp = root / "_build" / STAMP_NAME
    last_full = stamp.read_text() if stamp.exists() else None
    stamp.unlink(missing_ok=True)         # a failed build leaves the site stale
    generate_pages(root, student=student)
    html = root / "_build" / "html"
    if full and html.exists():
        shutil.rmtree(html)               # no page of a removed chapter lingers
    run_jupyter_book(["build", str(root), "--path-output", str(root),
                      *(["--all"] if full else []), "-W", "-n", "--keep-going"], cwd=root)
    elapsed = time.perf_counter() - start
    stamp.write_text(f"{elapsed:.1f}\n" if full or last_full is None else last_full)
    os.utime(stamp, (started_at, started_at))   # a source edited during the build is newer
    return elapsed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--assets", action="store_true",
                        help="only fetch the offline assets (MathJax, require.js, widget manager)")
    parser.add_argument("--student", action="store_true",
                        help="build the site without solutions or instructor's notes, for "
                             "courses that publish it, into _build/student-html")
    args = parser.parse_args(argv)
    try:
        if args.assets:
            fetch_assets()
            return 0
        if args.student:
            fetch_assets()
            stage = stage_student_site()
            elapsed = build_site(stage, student=True)
            target = ROOT / "_build" / "student-html"
            if target.exists():
                shutil.rmtree(target)
            shutil.move(str(stage / "_build" / "html"), str(target))
            print(f"student site built in {elapsed:.0f} s: open _build/student-html/index.html")
            return 0
        elapsed = build_site()
    except (AssetError, ValueError) as e:   # ValueError: a claim cell breaks the house format
        print(f"book build failed: {e}", file=sys.stderr)
        return 1
    except subprocess.CalledProcessError as e:
        print(f"book build failed (exit {e.returncode}); see the warnings above", file=sys.stderr)
        return 1
    print(f"site built in {elapsed:.0f} s: open _build/html/index.html")
    return 0


if __name__ == "__main__":
    sys.exit(main())
