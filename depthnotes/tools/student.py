"""Make the student version of the chapters: solutions replaced by placeholders, checks kept.

    python -m depthnotes.tools.student                       # every chapter in _toc.yml -> student/
    python -m depthnotes.tools.student --out handout/ notebooks/01_parameter_math.ipynb
    python -m depthnotes.tools.student --nbgrader --out source/ps1/   # for an nbgrader course

An exercise in this book is three cells: a markdown task, an **answer cell** whose solution sits
between the lines ``### BEGIN SOLUTION`` and ``### END SOLUTION`` (the markers nbgrader uses),
and a **check cell** that calls ``depthnotes.course.check.check``. The student version replaces
each solution region with a placeholder that keeps the code valid:

- a region at the top level of a cell becomes ``name = ...`` for each name it assigns that the
  check cell reads (so the check runs and says "not answered yet", with its hint), and a stub
  ``def`` (signature and docstring kept) for each function it defines;
- a region inside a function body becomes ``raise NotImplementedError(...)``, which the check
  reports as a hint-carrying failure too.

All outputs are cleared (they would show the solutions' results), the stored widget state is
dropped, and the tags that fold solutions and their checks' outputs away on the website
(``hide-cell``, ``hide-output``) are removed. The
check cells are kept as they are (they hold no answer: ``depthnotes.course.answers`` does). The data
folders the notebooks read by relative path (``DATA_DIRS``) are copied too, so the folder runs
on its own. Nothing in ``notebooks/`` is modified.

``--nbgrader`` writes the *instructor* version instead: the notebooks with their solutions,
plus the cell metadata nbgrader needs (answer cells are solution cells, check cells are
read-only autograded test cells worth one point each), ready for ``nbgrader generate_assignment``.

What is nbgrader's and what is ours. Grading is left to nbgrader (the optional ``instructor``
extra; ``tests/test_student.py`` runs its ``generate_assignment`` and ``autograde`` on these
files): release versions, locked cells, scoring, the gradebook. This module keeps only what
nbgrader does not do: a handout that needs neither nbgrader nor a course database, and
placeholders that keep a chapter runnable — ``name = ...`` lets the check answer "not answered
yet" with a hint and the notebook run on, where nbgrader's ``raise NotImplementedError()``
stops *Run all* at the first exercise. otter-grader was weighed too and not adopted: it reads
only its own raw-cell question format, which the website would show (see book/coursework.md).
"""

from __future__ import annotations

import argparse
import ast
import copy
import re
import shutil
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

from depthnotes.tools.book import ROOT

BEGIN = "### BEGIN SOLUTION"
END = "### END SOLUTION"
PLACEHOLDER_COMMENT = "# YOUR CODE HERE"
HIDE_TAGS = {"hide-input", "remove-input", "hide-cell", "hide-output"}
_CHECK_CALL = re.compile(r"\bcheck\s*\(")      # depthnotes.course.check.check("1.2", ...)
#: Folders next to the notebooks that they read by relative path (records of long runs, results
#: one chapter writes and another reads); the handout holds a copy of each.
DATA_DIRS = ("records", "results")


class SolutionFormatError(ValueError):
    """Solution markers that do not pair up, or a region that cannot be replaced."""


@dataclass
class Exercise:
    """One exercise of a notebook: the indices of its answer cell and of its check cell, and of
    the cell that records its prediction (a predict-then-run exercise: the prediction's answer
    cell, which calls ``predict``, comes before the run's)."""

    answer: int
    check: int | None
    prediction: int | None = None


#: A markdown cell in which the student writes a "why" answer, graded by hand (nbgrader's
#: manually graded answer cell); its model answer and rubric are in the instructor's notes.
WRITTEN_TAG = "written-answer"
_PREDICT_CALL = re.compile(r"(?<![.\w])predict\s*\(")


# ---------------------------------------------------------------- finding exercises

def has_solution(cell) -> bool:
    return cell.cell_type == "code" and BEGIN in cell.source


def is_check(cell) -> bool:
    return cell.cell_type == "code" and bool(_CHECK_CALL.search(cell.source)) \
        and BEGIN not in cell.source


def is_prediction(cell) -> bool:
    return has_solution(cell) and bool(_PREDICT_CALL.search(cell.source))


def find_exercises(nb) -> list[Exercise]:
    """Every answer cell, paired with the next code cell if that cell is a check. A prediction
    cell (an answer cell that calls ``predict``) belongs to the answer cell after it."""
    out = []
    pending = None
    for i, cell in enumerate(nb.cells):
        if not has_solution(cell):
            continue
        if is_prediction(cell):
            pending = i
            continue
        nxt = next((j for j in range(i + 1, len(nb.cells)) if nb.cells[j].cell_type == "code"),
                   None)
        out.append(Exercise(i, nxt if nxt is not None and is_check(nb.cells[nxt]) else None,
                            pending))
        pending = None
    return out


def find_written(nb) -> list[int]:
    """The indices of the written-answer cells (markdown, tagged ``written-answer``)."""
    return [i for i, c in enumerate(nb.cells)
            if c.cell_type == "markdown" and WRITTEN_TAG in c.metadata.get("tags", [])]


def exercise_problems(nb, name: str = "notebook") -> list[str]:
    """Ways in which a notebook's exercises break the book's pattern (empty if none)."""
    problems = []
    exercises = find_exercises(nb)
    if not exercises:
        problems.append(f"{name}: no exercise (a code cell with {BEGIN!r} … {END!r})")
    for ex in exercises:
        where = f"{name}, cell {ex.answer}"
        if ex.check is None:
            problems.append(f"{where}: the next code cell after the answer is not a check "
                            "(a call to depthnotes.course.check.check)")
        else:
            if "hide-output" not in nb.cells[ex.check].metadata.get("tags", []):
                problems.append(f"{name}, cell {ex.check}: the check cell needs the tag "
                                "'hide-output': what it prints on the solution (a prediction's "
                                "outcome, a run's result) is folded on the site")
            source = nb.cells[ex.check].source
            if "from depthnotes.course.check import" not in source:
                problems.append(f"{name}, cell {ex.check}: the check cell must import what it "
                                "calls (from depthnotes.course.check import check), so that "
                                "an answer cell cannot replace it")
        for i in (ex.answer, ex.prediction):
            if i is None:
                continue
            cell = nb.cells[i]
            if "hide-cell" not in cell.metadata.get("tags", []):
                problems.append(f"{name}, cell {i}: the answer cell needs the tag "
                                "'hide-cell', so the site folds the solution and its output "
                                "until the reader opens them")
            try:
                replace_solutions(cell.source)
            except SolutionFormatError as e:
                problems.append(f"{name}, cell {i}: {e}")
    return problems


# ---------------------------------------------------------------- replacing solutions

def _names_read(source: str) -> set[str]:
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set()
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def _assigned_names(stmt: ast.stmt) -> list[str]:
    """Names ``stmt`` assigns, also inside a ``with``, ``if``, ``for`` or ``try`` block
    (``with torch.device("meta"): model = ...`` assigns ``model``)."""
    targets: list[ast.expr] = []
    if isinstance(stmt, ast.Assign):
        targets = stmt.targets
    elif isinstance(stmt, (ast.AnnAssign, ast.AugAssign)):
        targets = [stmt.target]
    names = []
    for t in targets:
        for node in ast.walk(t):
            if isinstance(node, ast.Name) and node.id not in names:
                names.append(node.id)
    if isinstance(stmt, (ast.With, ast.If, ast.For, ast.While, ast.Try)):
        inner = stmt.body + getattr(stmt, "orelse", []) + getattr(stmt, "finalbody", [])
        for sub in inner:
            names += [n for n in _assigned_names(sub) if n not in names]
    return names


def _function_stub(stmt: ast.FunctionDef, lines: list[str]) -> list[str]:
    first_body = stmt.body[0]
    keep_until = first_body.lineno - 1              # the signature, possibly several lines
    if (isinstance(first_body, ast.Expr) and isinstance(first_body.value, ast.Constant)
            and isinstance(first_body.value.value, str)):
        keep_until = first_body.end_lineno          # and its docstring
    head = lines[stmt.lineno - 1 - len(stmt.decorator_list):keep_until]
    body_indent = " " * first_body.col_offset
    return head + [f"{body_indent}{PLACEHOLDER_COMMENT}",
                   f'{body_indent}raise NotImplementedError("write this function")']


def _placeholder(region: list[str], indent: str, wanted: set[str] | None) -> list[str]:
    if indent:   # inside a function (or a loop): the body is the student's to write
        return [f"{indent}{PLACEHOLDER_COMMENT}",
                f'{indent}raise NotImplementedError("replace this line with your code")']
    text = "\n".join(region)
    try:
        tree = ast.parse(text)
    except SyntaxError as e:
        raise SolutionFormatError(f"the solution does not parse ({e.msg}, line {e.lineno})") \
            from None
    names: list[str] = []
    stubs: list[str] = []
    for stmt in tree.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            stubs += _function_stub(stmt, text.splitlines())
        else:
            names += [n for n in _assigned_names(stmt) if n not in names]
    if wanted is not None and set(names) & wanted:
        names = [n for n in names if n in wanted]      # only what the check reads
    out = [PLACEHOLDER_COMMENT] + [f"{n} = ..." for n in names] + stubs
    return out if len(out) > 1 else out + ["..."]


def replace_solutions(source: str, wanted: set[str] | None = None) -> str:
    """``source`` with every solution region (markers included) replaced by a placeholder.

    ``wanted``: the names the exercise's check reads; a top-level region keeps placeholders for
    those of its assignments only (all of them if none is read).
    """
    lines = source.split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.strip() == END:
            raise SolutionFormatError(f"{END!r} without {BEGIN!r} (line {i + 1})")
        if line.strip() != BEGIN:
            if BEGIN in line or END in line:
                raise SolutionFormatError(f"a solution marker must stand alone on its line "
                                          f"(line {i + 1}: {line.strip()!r})")
            out.append(line)
            i += 1
            continue
        indent = line[: len(line) - len(line.lstrip())]
        try:
            j = next(k for k in range(i + 1, len(lines)) if lines[k].strip() in (BEGIN, END))
        except StopIteration:
            raise SolutionFormatError(f"{BEGIN!r} on line {i + 1} has no {END!r}") from None
        if lines[j].strip() == BEGIN:
            raise SolutionFormatError(f"solution regions cannot nest (lines {i + 1}, {j + 1})")
        region = textwrap.dedent("\n".join(lines[i + 1:j])).split("\n")
        out += _placeholder(region, indent, wanted)
        i = j + 1
    return "\n".join(out)


# ---------------------------------------------------------------- whole notebooks

def student_notebook(nb):
    """A copy of ``nb`` with solutions replaced, outputs cleared and hide tags removed."""
    nb = copy.deepcopy(nb)
    checks = {ex.answer: ex.check for ex in find_exercises(nb)}
    checks.update({ex.prediction: ex.check for ex in find_exercises(nb)
                   if ex.prediction is not None})
    for i, cell in enumerate(nb.cells):
        tags = cell.metadata.get("tags")
        if tags is not None:
            kept = [t for t in tags if t not in HIDE_TAGS]
            if kept:
                cell.metadata["tags"] = kept
            else:
                del cell.metadata["tags"]
        if cell.cell_type != "code":
            continue
        if i in checks:
            check = checks[i]
            wanted = _names_read(nb.cells[check].source) if check is not None else None
            cell.source = replace_solutions(cell.source, wanted)
        cell.outputs = []
        cell.execution_count = None
    nb.metadata.pop("widgets", None)
    return nb


def nbgrader_notebook(nb, stem: str):
    """A copy of ``nb`` (solutions kept) with nbgrader's cell metadata on every exercise."""
    nb = copy.deepcopy(nb)
    for n, ex in enumerate(find_exercises(nb), start=1):
        nb.cells[ex.answer].metadata["nbgrader"] = {
            "grade": False, "solution": True, "locked": False, "task": False,
            "grade_id": f"{stem}-ex{n}-answer", "schema_version": 3}
        if ex.prediction is not None:
            nb.cells[ex.prediction].metadata["nbgrader"] = {
                "grade": False, "solution": True, "locked": False, "task": False,
                "grade_id": f"{stem}-ex{n}-prediction", "schema_version": 3}
        if ex.check is not None:
            nb.cells[ex.check].metadata["nbgrader"] = {
                "grade": True, "solution": False, "locked": True, "task": False, "points": 1,
                "grade_id": f"{stem}-ex{n}-check", "schema_version": 3}
    for n, i in enumerate(find_written(nb), start=1):     # graded by hand
        nb.cells[i].metadata["nbgrader"] = {
            "grade": True, "solution": True, "locked": False, "task": False,
            "points": written_points(nb, i), "grade_id": f"{stem}-written{n}",
            "schema_version": 3}
    return nb


def written_points(nb, index: int) -> int:
    """The points of the written question answered in cell ``index`` (from the instructor's
    notes, ``depthnotes.course.answers.WRITTEN``; 3 if the question is not found there)."""
    from depthnotes.course.answers import WRITTEN

    for j in range(index - 1, -1, -1):
        m = re.search(r"\*\*Exercise (\d+\.\d+\w?)", nb.cells[j].source)
        if m:
            return WRITTEN[m.group(1)].points if m.group(1) in WRITTEN else 3
    return 3


STUDENT_README = """\
# Depth Notes — student notebooks

Made by `python -m depthnotes.tools.student` from the book's notebooks.

## Install (once)

You need Python 3.11 (tested; 3.12 is expected to work; numpy 2.4 needs 3.11 or newer).
Make a virtual environment in this folder and install the package from the wheel here,
with the notebooks extra (PyTorch, numpy, matplotlib, ipywidgets, JupyterLab and
jupyterlab-myst):

    python3.11 -m venv .venv
    .venv/bin/pip install "WHEEL[notebooks]"           # Windows: .venv\\Scripts\\pip

- **Linux:** pip's default PyTorch wheel for Linux bundles CUDA and downloads several GB.
  The book needs only the CPU: install PyTorch first from PyTorch's CPU-only wheel index
  (PyTorch's install selector, "Get started" on the PyTorch website, gives the exact
  command for "Linux, Pip, CPU"), then the line above.
- **macOS and Windows:** pip's default PyTorch wheel is already the CPU build; the line
  above is all. Chapter 3's training falls back to the "spawn" start method where there is
  no "forkserver" (Windows), and chapter 7 reads the machine's cache sizes only where the
  operating system reports them (and measures how much of the cache one core reads fast).

## Work

    .venv/bin/jupyter lab

Open the chapters in **JupyterLab** (jupyterlab-myst shows the numbers in the prose); VS Code
and the classic Notebook show raw `{eval}` roles instead of those numbers. Run each notebook
from the top (the exercises use what the chapter computed). Each exercise has a cell marked
`# YOUR CODE HERE`: replace the `...` (or the `raise NotImplementedError(...)` line) with
your answer and run it, then run the check cell below it. A check prints "Exercise N.M:
correct.", or a short message with a hint; an exercise you have not answered yet says so and
the notebook runs on. A *predict, then run* exercise asks for your prediction before the run:
record it first. *Written* exercises are answered in the markdown cell below them.
"""


#: What the student edition of the package leaves out: the plain answers (sealed in their
#: place) and the book's own tooling (build, student version, tests' plugin).
EDITION_EXCLUDES = ("depthnotes/course/answers", "depthnotes/tools")


def build_edition(out: Path, root: Path = ROOT) -> Path:
    """Build the student edition of the package, a wheel in ``out``: the package without
    ``depthnotes.course.answers`` (the plain answers) and without the book's tooling, with the
    sealed table (``depthnotes/course/sealed.json``, ``depthnotes.course.sealed``) in their
    place. Returns the wheel's path."""
    import json
    import subprocess
    import tempfile

    from depthnotes.course import sealed
    from depthnotes.course.answers import ANSWERS

    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        stage = Path(tmp) / "depthnotes-student"
        ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
        shutil.copytree(root / "depthnotes", stage / "depthnotes", ignore=ignore)
        for rel in EDITION_EXCLUDES:
            shutil.rmtree(stage / rel)
        for name in ("pyproject.toml", "LICENSE", "LICENSE-text"):
            shutil.copy(root / name, stage / name)
        (stage / "README.md").write_text(STUDENT_README)
        (stage / "depthnotes" / "course" / "sealed.json").write_text(
            json.dumps(sealed.seal_all(ANSWERS), indent=0))
        for old in out.glob("depthnotes-*.whl"):
            old.unlink()
        subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps",
                        "--no-build-isolation", "-q", "-w", str(out), str(stage)],
                       check=True, capture_output=True, text=True)
    [wheel] = out.glob("depthnotes-*.whl")
    return wheel


def copy_data(notebooks: list[Path], out: Path) -> list[Path]:
    """Copy the data folders (``DATA_DIRS``) found next to ``notebooks`` into ``out``."""
    copied = []
    for folder in sorted({p.parent / name for p in notebooks for name in DATA_DIRS}):
        if folder.is_dir():
            shutil.copytree(folder, out / folder.name, dirs_exist_ok=True)
            copied.append(out / folder.name)
    return copied


def make_versions(notebooks: list[Path], out: Path, *, nbgrader: bool = False,
                  edition: bool = False) -> list[Path]:
    """Write the student (or, with ``nbgrader``, the instructor) version of each notebook,
    with a copy of the data folders they read, so that ``out`` runs on its own; with
    ``edition``, the student edition of the package too (a wheel, :func:`build_edition`)."""
    import nbformat

    out.mkdir(parents=True, exist_ok=True)
    written = []
    for path in notebooks:
        nb = nbformat.read(path, as_version=4)
        problems = exercise_problems(nb, path.name)
        if any("does not parse" in p or "marker" in p or "nest" in p for p in problems):
            raise SolutionFormatError("\n".join(problems))
        new = nbgrader_notebook(nb, path.stem) if nbgrader else student_notebook(nb)
        target = out / path.name
        nbformat.write(new, target)
        written.append(target)
    copy_data(notebooks, out)
    if not nbgrader:
        readme = STUDENT_README
        if edition:
            wheel = build_edition(out)
            readme = readme.replace("WHEEL", wheel.name)
        else:
            readme = readme.replace('"WHEEL[notebooks]"', "-e '/path/to/depthnotes[notebooks]'")
        (out / "README.md").write_text(readme)
    return written


def chapter_notebooks(root: Path = ROOT) -> list[Path]:
    """The chapters the book publishes: the notebooks listed in ``_toc.yml``."""
    from depthnotes.tools.claims import toc_notebooks

    return [p for p in toc_notebooks(root) if p.parent.name == "notebooks"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", type=Path,
                        help="notebooks to convert (default: every chapter in _toc.yml)")
    parser.add_argument("--out", type=Path, default=ROOT / "student",
                        help="folder to write to (default: student/)")
    parser.add_argument("--nbgrader", action="store_true",
                        help="write the instructor version with nbgrader cell metadata instead")
    parser.add_argument("--no-wheel", action="store_true",
                        help="leave out the student edition of the package (a wheel with the "
                             "answers sealed); students then need the package from elsewhere")
    args = parser.parse_args(argv)
    paths = args.notebooks or chapter_notebooks()
    for p in paths:
        if not p.exists():
            parser.error(f"no such notebook: {p}")
    try:
        written = make_versions(paths, args.out, nbgrader=args.nbgrader,
                                edition=not (args.nbgrader or args.no_wheel))
    except SolutionFormatError as e:
        print(f"cannot make the student version:\n{e}", file=sys.stderr)
        return 1
    kind = "instructor (nbgrader)" if args.nbgrader else "student"
    for path in written:
        print(f"{kind} version: {path}")
    for wheel in args.out.glob("depthnotes-*.whl"):
        print(f"student edition of the package (answers sealed): {wheel}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
