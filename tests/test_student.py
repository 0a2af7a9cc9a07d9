"""The student version (``python -m depthnotes.tools.student``) and the exercise pattern.

Unit tests of the solution replacement, the command itself, and — for every chapter in the
book's table of contents, found automatically — an execution of the handout: the command writes
it into a temporary folder outside the repository, and each student notebook runs there once,
in a fresh kernel whose working directory is that folder (so a file the handout lacks fails
here). Each check prints "not answered yet" with a hint on its placeholder (and the run goes
on), and passes once the solution is run in its place (the run then goes on with the solution, so later
cells see what the chapter computed). With nbgrader installed (the ``instructor`` extra), the
instructor version also goes through ``nbgrader generate_assignment`` and ``autograde``.
"""

from __future__ import annotations

import copy
import os
import re
import shutil
from pathlib import Path

import nbformat
import pytest

from depthnotes.tools import student
from depthnotes.tools.claims import toc_notebooks
from depthnotes.tools.student import (BEGIN, END, SolutionFormatError, exercise_problems,
                                      find_exercises, replace_solutions, student_notebook)

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = [p for p in toc_notebooks(ROOT) if p.parent.name == "notebooks"]


# ---------------------------------------------------------------- replacing solutions

def test_top_level_assignment_becomes_ellipsis():
    src = f"{BEGIN}\nanswer = 12 * 768 ** 2\n{END}"
    assert replace_solutions(src) == "# YOUR CODE HERE\nanswer = ..."


def test_only_the_names_the_check_reads_are_kept():
    src = (f"# compare the two\n{BEGIN}\na = 1\nb = 2\ncheaper = 'depth' if a < b else 'width'\n"
           f"{END}")
    out = replace_solutions(src, wanted={"cheaper", "check_choice"})
    assert out == "# compare the two\n# YOUR CODE HERE\ncheaper = ..."
    assert "a = ..." in replace_solutions(src, wanted={"unrelated"})   # none read: keep all


def test_assignments_inside_a_with_block_get_placeholders():
    src = f"{BEGIN}\nwith ctx():\n    model = build()\nother = 1\n{END}"
    assert replace_solutions(src, wanted={"model"}) == "# YOUR CODE HERE\nmodel = ..."


def test_region_inside_a_function_raises_not_implemented():
    src = f"def block_params(d):\n    \"\"\"Doc.\"\"\"\n    {BEGIN}\n    return 12 * d * d\n    {END}\n"
    out = replace_solutions(src)
    assert out.splitlines() == ["def block_params(d):", '    """Doc."""', "    # YOUR CODE HERE",
                                '    raise NotImplementedError("replace this line with your code")']
    compile(out, "<answer>", "exec")


def test_function_defined_inside_the_region_keeps_its_signature_and_docstring():
    src = (f"{BEGIN}\ndef f(x,\n      y):\n    \"\"\"Add.\"\"\"\n    return x + y\n"
           f"total = f(1, 2)\n{END}")
    out = replace_solutions(src, wanted={"f", "total"})
    assert "def f(x,\n      y):\n    \"\"\"Add.\"\"\"\n    # YOUR CODE HERE" in out
    assert "total = ..." in out and "return x + y" not in out
    compile(out, "<answer>", "exec")


@pytest.mark.parametrize("src, message", [
    (f"{BEGIN}\nx = 1\n", "has no"),
    (f"x = 1\n{END}", "without"),
    (f"{BEGIN}\n{BEGIN}\nx = 1\n{END}\n{END}", "nest"),
    (f"x = 1  {BEGIN}\n{END}", "alone"),
    (f"{BEGIN}\nx = (\n{END}", "does not parse"),
])
def test_broken_markers_are_reported(src, message):
    with pytest.raises(SolutionFormatError, match=message):
        replace_solutions(src)


def _toy_notebook():
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_markdown_cell("**Exercise 9.1.** Compute it."),
        nbformat.v4.new_code_cell(f"{BEGIN}\nanswer = 42\n{END}", metadata={"tags": ["hide-input"]}),
        nbformat.v4.new_code_cell("check('9.1', answer)"),
    ]
    nb.cells[2].outputs = [nbformat.v4.new_output("stream", text="Exercise 9.1: correct.\n")]
    nb.metadata["widgets"] = {"state": {}}
    return nb


def test_student_notebook_clears_outputs_and_hide_tags_and_keeps_checks():
    nb = _toy_notebook()
    out = student_notebook(nb)
    assert out.cells[1].source == "# YOUR CODE HERE\nanswer = ..."
    assert "tags" not in out.cells[1].metadata
    assert out.cells[2].source == nb.cells[2].source and out.cells[2].outputs == []
    assert "widgets" not in out.metadata
    assert nb.cells[1].source.startswith(BEGIN)          # the original is untouched


def test_pattern_problems_are_named():
    nb = _toy_notebook()
    assert exercise_problems(nb) == []
    nb.cells[1].metadata["tags"] = []
    nb.cells[2].source = "print(answer)"
    problems = exercise_problems(nb, "toy")
    assert any("hide-input" in p for p in problems) and any("not a check" in p for p in problems)


def test_nbgrader_version_marks_solution_and_test_cells(tmp_path):
    path = tmp_path / "09_toy.ipynb"
    nbformat.write(_toy_notebook(), path)
    [out] = student.make_versions([path], tmp_path / "source", nbgrader=True)
    nb = nbformat.read(out, as_version=4)
    assert nb.cells[1].metadata["nbgrader"]["solution"] is True
    assert BEGIN in nb.cells[1].source                   # nbgrader removes it itself
    grader = nb.cells[2].metadata["nbgrader"]
    assert grader["grade"] is True and grader["locked"] is True and grader["points"] == 1


# ---------------------------------------------------------------- the chapters

def test_the_book_has_chapters_to_check():
    assert CHAPTERS, "no chapter notebook is listed in _toc.yml"


def test_command_writes_every_chapter_without_solutions(tmp_path):
    assert student.main(["--out", str(tmp_path)]) == 0
    for path in CHAPTERS:
        out = tmp_path / path.name
        assert out.exists(), f"{path.name} has no student version"
        text = out.read_text()
        assert BEGIN not in text and END not in text
        nb = nbformat.read(out, as_version=4)
        assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code")
        assert not any("hide-input" in c.metadata.get("tags", []) for c in nb.cells)
    assert (tmp_path / "README.md").exists()


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_chapter_exercises_follow_the_pattern(path):
    """Task, answer cell (hidden on the site), check cell — and a few of them."""
    nb = nbformat.read(path, as_version=4)
    assert exercise_problems(nb, path.name) == []
    assert len(find_exercises(nb)) >= 3, f"{path.name}: fewer than 3 exercises"


def _hint(evalue: str) -> str:
    return evalue.split("Hint:", 1)[1].strip() if "Hint:" in evalue else ""


@pytest.fixture(scope="module")
def handout(tmp_path_factory) -> Path:
    """The handout, made by the command into a folder outside the repository."""
    out = tmp_path_factory.mktemp("handout")
    assert not out.resolve().is_relative_to(ROOT)
    assert student.main(["--out", str(out)]) == 0
    return out


def test_handout_holds_what_the_notebooks_read(handout):
    """Every file a chapter opens by a relative path is in the handout."""
    for path in CHAPTERS:
        code = "\n".join(c.source for c in nbformat.read(path, as_version=4).cells
                         if c.cell_type == "code")
        for rel in re.findall(r"""["']((?:records|results)/[^"']+)["']""", code):
            assert (handout / rel).exists(), f"{path.name} reads {rel}, not in the handout"
    for name in student.DATA_DIRS:
        if (ROOT / "notebooks" / name).is_dir():
            assert sorted(p.name for p in (handout / name).iterdir()) == \
                sorted(p.name for p in (ROOT / "notebooks" / name).iterdir())


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_student_version_runs_and_checks_give_hints(path, handout):
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    source = nbformat.read(path, as_version=4)
    exercises = {ex.check: ex for ex in find_exercises(source) if ex.check is not None}
    nb = nbformat.read(handout / path.name, as_version=4)      # as the student gets it
    assert len(nb.cells) == len(source.cells)
    client = NotebookClient(nb, timeout=600, kernel_name="python3",
                            resources={"metadata": {"path": str(handout)}})
    problems: list[str] = []
    with client.setup_kernel():
        for i, cell in enumerate(nb.cells):
            if cell.cell_type != "code":
                continue
            if i not in exercises:
                try:
                    client.execute_cell(cell, i)
                except CellExecutionError as e:
                    pytest.fail(f"{path.name}, cell {i} fails in the student version "
                                f"({e.ename}: {e.evalue})")
                continue
            ex = exercises[i]
            # 1. the check on the placeholder: says "not answered yet", with a hint, and the
            # run goes on (nbgrader's runs fail it instead: tests/test_exercises.py)
            try:
                client.execute_cell(cell, i)
                said = "".join(o.get("text", "") for o in cell.outputs)
                if "not answered yet" not in said:
                    problems.append(f"cell {i}: the check printed {said!r} on the "
                                    "placeholder (expected 'not answered yet')")
                elif len(_hint(said)) < 20:
                    problems.append(f"cell {i}: the check's message has no useful hint: "
                                    f"{said!r}")
            except CellExecutionError as e:
                problems.append(f"cell {i}: the check raised {e.ename}: {e.evalue} on the "
                                "placeholder (expected it to print 'not answered yet')")
            # 2. the solution in its place: the check passes
            solution = copy.deepcopy(source.cells[ex.answer])
            solution.outputs = []
            client.execute_cell(solution, ex.answer)
            again = copy.deepcopy(cell)
            again.outputs = []
            try:
                client.execute_cell(again, i)
            except CellExecutionError as e:
                problems.append(f"cell {i}: the check fails on the solution: {e.evalue}")
                continue
            printed = "".join(o.get("text", "") for o in again.outputs)
            if not re.search(r"correct", printed):
                problems.append(f"cell {i}: the check printed {printed!r} on the solution")
    assert not problems, f"{path.name}:\n" + "\n".join(problems)
    assert exercises, f"{path.name}: no checked exercise"



# ---------------------------------------------------------------- nbgrader (instructor extra)

def _nbgrader(*args: str, course: Path) -> None:
    import subprocess
    import sys

    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    subprocess.run([sys.executable, "-m", "nbgrader", *args, f"--CourseDirectory.root={course}",
                    f"--CourseDirectory.db_url=sqlite:///{course / 'gradebook.db'}"],
                   check=True, cwd=course, env=env, capture_output=True, text=True)


def test_nbgrader_makes_and_grades_the_assignment(tmp_path):
    """The instructor version through nbgrader itself: ``generate_assignment`` of every chapter
    (no solution left, checks locked, data copied), then ``autograde`` of chapter 1 for a
    submission with the solutions (full marks) and one handed in blank (no marks)."""
    pytest.importorskip("nbgrader", reason="nbgrader is the optional instructor extra "
                                           "(pip install -e '.[instructor]')")
    from nbgrader.api import Gradebook

    assert student.main(["--nbgrader", "--out", str(tmp_path / "source" / "all")]) == 0
    _nbgrader("generate_assignment", "all", course=tmp_path)
    for path in CHAPTERS:
        text = (tmp_path / "release" / "all" / path.name).read_text()
        assert BEGIN not in text and "raise NotImplementedError()" in text
    assert (tmp_path / "release" / "all" / "records").is_dir()

    first = CHAPTERS[0]
    student.main(["--nbgrader", "--out", str(tmp_path / "source" / "one"), str(first)])
    _nbgrader("generate_assignment", "one", course=tmp_path)
    for who, version in (("solved", "source"), ("blank", "release")):
        (tmp_path / "submitted" / who / "one").mkdir(parents=True)
        shutil.copy(tmp_path / version / "one" / first.name,
                    tmp_path / "submitted" / who / "one")
        _nbgrader("db", "student", "add", who, course=tmp_path)
    _nbgrader("autograde", "one", course=tmp_path)
    with Gradebook(f"sqlite:///{tmp_path / 'gradebook.db'}") as gb:
        solved, blank = (gb.find_submission("one", who) for who in ("solved", "blank"))
        assert solved.max_score == len(find_exercises(nbformat.read(first, as_version=4)))
        assert solved.score == solved.max_score and blank.score == 0
