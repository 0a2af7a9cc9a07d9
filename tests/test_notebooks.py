"""The notebooks as files: portable stored outputs, prose numbers that resolve, code that reads
like the book.

1. **Portable outputs.** Every stored output (text, markdown, HTML, the glue records that the
   website reads, the inline results stored with the prose) is scanned for a float with more
   than 6 significant digits (the last bits of a float differ between machines, so such an
   output fails nbval on a second machine), for an absolute path of the machine that ran it and
   for an execution timestamp. The scanner itself is tested on a fake notebook, so it can fail.
2. **Prose numbers.** Every ``{eval}`num.name``` in a chapter's markdown is published by that
   chapter's code (``depthnotes.page.publish.publish``), every published name is quoted somewhere,
   no ``{glue:text}`` role is left where ``publish`` can serve (JupyterLab cannot render it),
   and the inline results stored with the prose are the same text as the glue records.
3. **Code that reads like the book.** Code cells of at most ``MAX_STATEMENTS`` statements
   (Python's logical lines: a call broken over three lines to fit the column is one statement,
   and comments do not count, so fitting the column never pushes a cell over), lines of at most
   ``MAX_COLS`` columns (the site's code column holds 77; wider lines scroll sideways), no
   unused import. Cells owned by the exercises and the records work are exempt until their
   owners' changes are merged (``OWNED_ELSEWHERE``: matched by what the cell holds, listed in
   the failure message when they would have failed, so the exemption stays visible).
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest

from depthnotes.page.publish import Shown, format_value
from depthnotes.tools.expressions import EVAL_ROLE, expressions
from depthnotes.tools.sphinx_site import GLUE_MIME, glued_texts

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
IDS = [p.name for p in NOTEBOOKS]

MAX_SIG_DIGITS = 6
MAX_STATEMENTS = 15
MAX_COLS = 76

#: Cells that other work owns for now, by what they hold (not by position, which moves):
#: exercise solutions and checks (``### BEGIN SOLUTION``, ``depthnotes.course.check``), and the
#: cells that read ``records/...`` or ``results/...`` files, run ``depthnotes.training.loop.main`` or
#: parse chapter 5's free-text record (``def parse_record``).
#: The style checks skip them; the output scan does not.
OWNED_ELSEWHERE = re.compile(r"### BEGIN SOLUTION|depthnotes\.exercises|\bcheck_(number|choice|"
                             r"function)\(|records/|results/|depthnotes\.train import main"
                             r"|def parse_record\(")

# ----------------------------------------------------------------------- 1. the output scan

_FLOAT = re.compile(r"(?<![\w.])[-+]?(\d[\d,_]*)?\.(\d+)(?:[eE][-+]?\d+)?(?![\w.])")
_SCI = re.compile(r"(?<![\w.])[-+]?(\d+)[eE][-+]?\d+(?![\w.])")
_PATH = re.compile(r"(?<![\w.~-])(?:/(?:home|root|tmp|work|Users|mnt|srv|var/folders)/"
                   r"|[A-Za-z]:\\\\?(?:Users|home)\\)[^\s'\"]*")
_TIMESTAMP = re.compile(r"\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2})?")
_BASE64_IMAGE = re.compile(r"data:image/[\w+.-]+;base64,[A-Za-z0-9+/=]+")
_TEXT_MIMES = ("text/plain", "text/markdown", "text/html", "text/latex", GLUE_MIME)


def significant_digits(integer: str, fraction: str) -> int:
    """Significant digits of a decimal written as ``integer.fraction`` (separators ignored)."""
    digits = (integer or "").replace(",", "").replace("_", "") + fraction
    return len(digits.lstrip("0")) or 1


def long_floats(text: str) -> list[str]:
    """The numbers in ``text`` written with more than ``MAX_SIG_DIGITS`` significant digits."""
    found = [m.group(0) for m in _FLOAT.finditer(text)
             if significant_digits(m.group(1), m.group(2)) > MAX_SIG_DIGITS]
    found += [m.group(0) for m in _SCI.finditer(text)
              if significant_digits(m.group(1), "") > MAX_SIG_DIGITS]
    return found


def stored_texts(nb: dict):
    """``(where, text)`` for every stored text a reader or a test sees: cell outputs (glue
    records included) and the inline results stored with markdown cells."""
    for i, cell in enumerate(nb.get("cells", [])):
        for out in cell.get("outputs", []):
            if out.get("output_type") == "stream":
                yield f"cell {i} ({out.get('name')})", "".join(out.get("text", ""))
            elif out.get("output_type") == "error":
                yield f"cell {i} (error)", "\n".join(out.get("traceback", []))
            for mime in _TEXT_MIMES:
                if mime in out.get("data", {}):
                    data = out["data"][mime]
                    name = (out.get("metadata") or {}).get("scrapbook", {}).get("name")
                    label = f"glue {name!r}" if name else mime
                    text = "".join(data) if isinstance(data, list) else data
                    # an explorer's inline PNGs are pictures, not text (their base64 may hold
                    # "/tmp/" by chance)
                    yield f"cell {i} ({label})", _BASE64_IMAGE.sub("data:image", text)
        for expr in cell.get("metadata", {}).get("user_expressions", []):
            data = expr.get("result", {}).get("data", {})
            yield f"cell {i} ({{eval}} {expr.get('expression')})", data.get("text/plain", "")


def scan_outputs(nb: dict) -> list[str]:
    """Every problem of the portable-output rule in ``nb`` (empty when clean)."""
    problems = []
    for where, text in stored_texts(nb):
        problems += [f"{where}: float with > {MAX_SIG_DIGITS} significant digits: {f}"
                     for f in long_floats(text)]
        problems += [f"{where}: machine path: {p}" for p in _PATH.findall(text)]
        problems += [f"{where}: timestamp: {t}" for t in _TIMESTAMP.findall(text)]
    for i, cell in enumerate(nb.get("cells", [])):
        if "execution" in cell.get("metadata", {}):
            problems.append(f"cell {i}: execution timestamps in the cell's metadata")
    return problems


def _load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def _fake_notebook(text: str, glued: str = "1.5", expression: str = "2.0") -> dict:
    glue_out = {"output_type": "display_data", "data": {GLUE_MIME: glued},
                "metadata": {"scrapbook": {"name": "k", "mime_prefix": ""}}}
    return {"cells": [
        {"cell_type": "code", "source": "x", "metadata": {}, "outputs": [
            {"output_type": "stream", "name": "stdout", "text": text}, glue_out]},
        {"cell_type": "markdown", "source": "{eval}`num.k`", "metadata": {"user_expressions": [
            {"expression": "num.k", "result": {"status": "ok",
                                               "data": {"text/plain": expression}}}]}}]}


def test_the_scanner_finds_what_it_must():
    assert scan_outputs(_fake_notebook("slope 0.9998, 124,439,808 params, 1.23e-05, v2.13.0"))\
        == []
    issue = _fake_notebook("R2 = 0.9997905530369551")            # issue 10's first failure
    assert any("0.9997905530369551" in p for p in scan_outputs(issue))
    glued = _fake_notebook("ok", glued="0.42342733496544616")     # its second, a glue record
    assert any("glue 'k'" in p and "0.42342733496544616" in p for p in scan_outputs(glued))
    inline = _fake_notebook("ok", expression="3.14159265")
    assert any("{eval} num.k" in p for p in scan_outputs(inline))
    assert long_floats("1234567.0 and 1.234567e3 and 0.0001234567") \
        == ["1234567.0", "1.234567e3", "0.0001234567"]
    assert long_floats("12345.6 0.000123456 1,234.56 3.0") == []
    paths = scan_outputs(_fake_notebook("saved to /home/ana/depth/fig.png"))
    assert paths and "machine path" in paths[0]
    assert scan_outputs(_fake_notebook("run at 2026-11-29 14:03:22"))[0].endswith(
        "timestamp: 2026-11-29 14:03:22")
    timed = _fake_notebook("ok")
    timed["cells"][0]["metadata"]["execution"] = {"iopub.status.idle": "2026-01-01T00:00:00Z"}
    assert scan_outputs(timed) == ["cell 0: execution timestamps in the cell's metadata"]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_stored_outputs_are_portable(path):
    problems = scan_outputs(_load(path))
    assert not problems, f"{path.name}:\n  " + "\n  ".join(problems)


# ------------------------------------------------------------------------ 2. prose numbers

def _source(cell: dict) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else src


def _code_cells(nb: dict):
    return [(i, _source(c)) for i, c in enumerate(nb["cells"]) if c["cell_type"] == "code"]


def _markdown(nb: dict) -> str:
    return "\n".join(_source(c) for c in nb["cells"] if c["cell_type"] == "markdown")


def published_names(code: str) -> list[str]:
    """Names a code cell publishes: ``publish(name=...)`` keywords, and the keys of a
    ``publish(**{f"basin_lo_{name}": ...})`` as regular expressions (``basin_lo_\\w+``)."""
    names = []
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "publish":
            for kw in node.keywords:
                if kw.arg is not None:
                    names.append(re.escape(kw.arg))
                elif isinstance(kw.value, ast.Dict):
                    for key in kw.value.keys:
                        if isinstance(key, ast.JoinedStr):
                            names.append("".join(re.escape(v.value) if isinstance(
                                v, ast.Constant) else r"\w+" for v in key.values))
                        elif isinstance(key, ast.Constant):
                            names.append(re.escape(key.value))
    return names


def test_published_names_are_found_in_code():
    code = 'publish(a=(x, ".1f"), b=2)\nfor n in "xy":\n    publish(**{f"lo_{n}": (1.0, ".0f")})'
    assert published_names(code) == ["a", "b", r"lo_\w+"]


def prose_problems(nb: dict) -> list[str]:
    """Every ``{eval}`` that quotes something other than ``num.<name>``, or a name that no code
    cell *above it* publishes (JupyterLab and ``depthnotes.tools.execute`` evaluate a markdown
    cell where it stands; a cell tagged ``findings``, the chapter's "In short" box, is
    evaluated after the last cell, so any published name will do), and every published name
    that no ``{eval}`` quotes."""
    from depthnotes.tools.expressions import FINDINGS_TAG

    problems, published, quoted = [], [], []
    every = [n for c in nb["cells"] if c["cell_type"] == "code"
             for n in published_names(_source(c))]
    for i, cell in enumerate(nb["cells"]):
        if cell["cell_type"] == "code":
            published += published_names(_source(cell))
            continue
        deferred = FINDINGS_TAG in cell.get("metadata", {}).get("tags", [])
        for e in expressions(_source(cell)):
            if not re.fullmatch(r"num\.\w+", e):
                problems.append(f"cell {i}: {{eval}}`{e}`: quote a published number as num.<name>")
            elif not any(re.fullmatch(p, e[4:]) for p in (every if deferred else published)):
                problems.append(f"cell {i}: {{eval}}`{e}` is not published by a code cell above")
            else:
                quoted.append(e[4:])
    problems += [f"publish(...{p.replace(chr(92), '')}...) is quoted by no {{eval}} role"
                 for p in published if not any(re.fullmatch(p, n) for n in quoted)]
    return problems


def test_prose_checks_can_fail():
    nb = {"cells": [{"cell_type": "markdown", "source": "{eval}`num.a` {eval}`1 + 1`"},
                    {"cell_type": "code", "source": 'publish(a=1, b=2)'}]}
    assert prose_problems(nb) == [
        "cell 0: {eval}`num.a` is not published by a code cell above",
        "cell 0: {eval}`1 + 1`: quote a published number as num.<name>",
        "publish(...a...) is quoted by no {eval} role",
        "publish(...b...) is quoted by no {eval} role"]
    boxed = {"cells": [{"cell_type": "markdown", "source": "{eval}`num.a`",
                        "metadata": {"tags": ["findings"]}},
                       {"cell_type": "code", "source": 'publish(a=1)'}]}
    assert prose_problems(boxed) == []          # the box is filled after the last cell


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_prose_quotes_what_the_code_publishes(path):
    problems = prose_problems(_load(path))
    assert not problems, f"{path.name}:\n  " + "\n  ".join(problems)


#: ``{glue:...}`` left in a chapter's prose: JupyterLab shows them raw. Only chapter 5's, whose
#: values the record cells (owned elsewhere) still glue; the lead removes this after merging.
GLUE_LEFT: dict[str, set[str]] = {}


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_no_glue_roles_left_in_the_prose(path):
    left = set(re.findall(r"\{glue(?::\w+)?\}\s*`?([\w]+)", _markdown(_load(path))))
    assert left <= GLUE_LEFT.get(path.name, set()), \
        f"{path.name}: glue roles JupyterLab cannot render: {sorted(left)}; use publish + {{eval}}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_stored_prose_numbers_match_the_glue_records(path):
    """What JupyterLab shows (the inline results stored with the prose) is what the site shows
    (the glue records, which nbval checks): both come from one ``publish`` call."""
    nb = _load(path)
    glued = glued_texts(path)
    problems = []
    for i, cell in enumerate(nb["cells"]):
        for expr in cell.get("metadata", {}).get("user_expressions", []):
            name = expr["expression"][4:]
            shown = expr["result"]["data"].get("text/plain")
            if glued.get(name) != shown:
                problems.append(f"cell {i}: {expr['expression']} stored as {shown!r}, "
                                f"glued as {glued.get(name)!r}")
    assert not problems, f"{path.name} (re-run depthnotes.tools.execute):\n  " + \
        "\n  ".join(problems)


def test_publish_formats_before_anything_is_stored():
    assert format_value("r2", (0.9997905530369551, ".4f")) == "0.9998"
    assert format_value("n", (124_439_808, ",")) == "124,439,808"
    assert repr(format_value("w", "stalls")) == "stalls"     # no quotes in Jupyter's display
    assert isinstance(format_value("L", 12), Shown)
    for bad in (0.42342733496544616, (0.5, ","), (0.5, ""), True, [1.0], ("x", ".1f")):
        with pytest.raises((TypeError, ValueError)):
            format_value("bad", bad)


def test_eval_roles_are_found():
    assert EVAL_ROLE.findall("a {eval}`num.x` b {eval}`num.y`.") == ["num.x", "num.y"]
    assert expressions("{eval}`num.x` {eval}`num.x`") == ["num.x"]


# ------------------------------------------------------------------- 3. code like the book

def _imported_names(tree: ast.AST) -> list[tuple[str, int]]:
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [((a.asname or a.name).split(".")[0], node.lineno) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            names += [(a.asname or a.name, node.lineno) for a in node.names]
    return names


def _statements(src: str) -> int:
    """Python's logical lines in ``src`` (a statement over several physical lines counts once;
    comments and blank lines not at all); IPython's ``%``/``!`` lines count as one each."""
    import io
    import tokenize

    code = "\n".join("pass" if line.lstrip().startswith(("%", "!")) else line
                     for line in src.splitlines())
    tokens = tokenize.generate_tokens(io.StringIO(code + "\n").readline)
    return sum(1 for t in tokens if t.type == tokenize.NEWLINE)


def style_problems(nb: dict) -> tuple[list[str], list[int]]:
    """(problems, exempt cell indices) of the code-like-the-book rules for ``nb``."""
    problems, exempt = [], []
    used: set[str] = set()
    imports: list[tuple[int, str]] = []
    for i, src in _code_cells(nb):
        tree = ast.parse(src)
        used |= {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
        if OWNED_ELSEWHERE.search(src):
            exempt.append(i)
            continue
        imports += [(i, name) for name, _ in _imported_names(tree)]
        statements = _statements(src)
        if statements > MAX_STATEMENTS:
            problems.append(f"cell {i}: {statements} statements (at most {MAX_STATEMENTS}): "
                            "split it by idea")
        problems += [f"cell {i}: line of {len(line)} columns (at most {MAX_COLS}): {line[:40]}…"
                     for line in src.splitlines() if len(line) > MAX_COLS]
    used |= {e.split(".")[0] for e in expressions(_markdown(nb))}   # {eval}`num.x` uses num
    problems += [f"cell {i}: unused import {name}" for i, name in imports if name not in used]
    return problems, exempt


def test_style_checks_can_fail():
    cell = {"cell_type": "code", "metadata": {}, "outputs": [],
            "source": "import os\n" + "x = 1\n" * 16 + "y = '" + "z" * 90 + "'\n"}
    problems, _ = style_problems({"cells": [cell]})
    assert [p.split(":")[1].split("(")[0].strip() for p in problems] == \
        ["18 statements", "line of 96 columns", "unused import os"]
    # a call wrapped to fit the column, and comments, do not count as statements
    wrapped = dict(cell, source="# a comment\n" * 20 + "print(1,\n      2,\n      3)\n" * 15)
    assert style_problems({"cells": [wrapped]})[0] == []
    owned = dict(cell, source="### BEGIN SOLUTION\n" + cell["source"])
    assert style_problems({"cells": [owned]}) == ([], [0])


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_code_reads_like_the_book(path):
    problems, exempt = style_problems(_load(path))
    assert not problems, (f"{path.name}:\n  " + "\n  ".join(problems)
                          + f"\n(exempt as owned elsewhere: cells {exempt})")


# --------------------------------------------------------------- 4. findings first

#: A chapter's "In short" box: 3 to 5 findings, in its first cell, under its title.
_IN_SHORT = re.compile(r":::\{admonition\} In short\n(?::class: \w+\n)?(.*?)\n:::", re.S)


def findings_problems(nb) -> list[str]:
    """What keeps a chapter from leading with what it found (``[]`` when it does): the first
    cell is the title and an "In short" box of 3-5 bullets that quote published numbers and
    at least one outcome word, tagged ``findings`` so the runner fills it after the last
    cell (``depthnotes.tools.expressions.FINDINGS_TAG``)."""
    from depthnotes.tools.expressions import FINDINGS_TAG

    first = nb["cells"][0]
    source = "".join(first["source"]) if isinstance(first["source"], list) else first["source"]
    problems = []
    if not source.startswith("# "):
        problems.append("the first cell does not start with the chapter's title")
    if FINDINGS_TAG not in first.get("metadata", {}).get("tags", []):
        problems.append(f"the first cell is not tagged {FINDINGS_TAG!r}")
    box = _IN_SHORT.search(source)
    if not box:
        return problems + ["no 'In short' box in the first cell"]
    bullets = [ln for ln in box.group(1).splitlines() if ln.startswith("- ")]
    if not 3 <= len(bullets) <= 5:
        problems.append(f"the box has {len(bullets)} findings (3 to 5)")
    if len(expressions(box.group(1))) < 3:
        problems.append("the box quotes fewer than 3 published numbers")
    return problems


def test_findings_check_can_fail():
    bare = {"cells": [{"cell_type": "markdown", "source": "# Title\n\ntext", "metadata": {}}]}
    assert findings_problems(bare) == ["the first cell is not tagged 'findings'",
                                       "no 'In short' box in the first cell"]
    two = {"cells": [{"cell_type": "markdown", "metadata": {"tags": ["findings"]}, "source":
                      "# T\n\n:::{admonition} In short\n- a {eval}`num.a`\n- b\n:::\n"}]}
    assert findings_problems(two) == ["the box has 2 findings (3 to 5)",
                                      "the box quotes fewer than 3 published numbers"]


@pytest.mark.parametrize("path", [p for p in NOTEBOOKS if re.match(r"\d\d_", p.name)],
                         ids=[p.name for p in NOTEBOOKS if re.match(r"\d\d_", p.name)])
def test_every_chapter_leads_with_what_it_found(path):
    problems = findings_problems(_load(path))
    assert not problems, f"{path.name}:\n  " + "\n  ".join(problems)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_claim_checks_stay_visible(path):
    """A claim's check cell is what the claims page links to: folding it (hide-cell) or hiding
    its code (remove-input) would leave the link on a section without its check."""
    import nbformat

    nb = nbformat.read(path, as_version=4)
    hidden = [i for i, c in enumerate(nb.cells)
              if c.cell_type == "code" and re.search(r"#\s*Claim [CX]\d+", c.source)
              and {"hide-cell", "remove-input", "remove-cell"} & set(c.metadata.get("tags", []))]
    assert not hidden, f"{path.name}: claim check cells hidden from the site: {hidden}"


# ------------------------------------------------------------------ 4. figures carry alt text

def figures_without_alt(nb: dict) -> list[int]:
    """Indices of code cells that store a PNG but give the site no alt text for it (cell
    metadata ``mystnb.image.alt``): the browser test finds these only after a full build;
    this finds them from the file."""
    bad = []
    for i, cell in enumerate(nb["cells"]):
        if cell["cell_type"] != "code" or "remove-output" in cell["metadata"].get("tags", []):
            continue
        pngs = [o for o in cell.get("outputs", []) if "image/png" in o.get("data", {})]
        alt = cell["metadata"].get("mystnb", {}).get("image", {}).get("alt", "").strip()
        if pngs and not alt:
            bad.append(i)
    return bad


def test_the_alt_text_check_can_fail():
    png = {"output_type": "display_data", "data": {"image/png": "iVBOR"}, "metadata": {}}
    nb = {"cells": [{"cell_type": "code", "metadata": {}, "outputs": [png], "source": ""},
                    {"cell_type": "code", "outputs": [png], "source": "",
                     "metadata": {"mystnb": {"image": {"alt": "A line rising."}}}}]}
    assert figures_without_alt(nb) == [0]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_every_figure_has_alt_text(path):
    bad = figures_without_alt(json.loads(path.read_text()))
    assert not bad, (f"{path.name}: code cells {bad} store a figure without alt text; give the "
                     "cell metadata mystnb.image.alt (and figure.caption) as the other figures do")
