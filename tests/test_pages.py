"""The generated pages and the build's helpers: claims table, status table, summaries, API
listing, the docstring fallback, offline-asset unpacking and the staleness check."""

from __future__ import annotations

import io
import json
import os
import tarfile
import time
from pathlib import Path

import nbformat
import pytest

from depthnotes.tools import api_page, assets, book, build, claims, status, summaries
from depthnotes.tools.sphinx_site import GLUE_MIME
from depthnotes.tools.sphinx_site import docstring_problems, verbatim_if_invalid

ROOT = Path(__file__).resolve().parents[1]


def _book(tmp_path: Path, cells: list, name: str = "01_toy") -> Path:
    """A minimal book: a _toc.yml listing one notebook with ``cells``."""
    (tmp_path / "notebooks").mkdir()
    nb = nbformat.v4.new_notebook()
    nb.cells = cells
    nbformat.write(nb, tmp_path / "notebooks" / f"{name}.ipynb")
    (tmp_path / "_toc.yml").write_text(
        "format: jb-book\nroot: book/intro\nparts:\n  - caption: Chapters\n    chapters:\n"
        f"      - file: notebooks/{name}\n#     - file: notebooks/02_missing\n")
    return tmp_path


def _claim_cells(cid: str, line: str, label: bool = True) -> list:
    md = (f"({'claim-' + cid.lower()})=\n" if label else "") + f"### Check {cid}: something"
    code = _printing_cell(f"# Claim {cid}: something\nassert True\nprint({line!r})", line)
    return [nbformat.v4.new_markdown_cell(md), code]


def _printing_cell(source: str, line: str):
    """A code cell whose stored output is ``line`` (a claim's second piece, say)."""
    code = nbformat.v4.new_code_cell(source)
    code.outputs = [nbformat.v4.new_output("stream", name="stdout", text=line + "\n")]
    return code


# ---------------------------------------------------------------- claims

def test_claims_are_read_from_check_cells(tmp_path):
    root = _book(tmp_path, [nbformat.v4.new_markdown_cell("# 1. Toy")]
                 + _claim_cells("C1", "Claim C1 — reproduced: 12.0 d^2 per block")
                 + _claim_cells("C2", "Claim C2 — reproduced: slope 1.00 in L")
                 + [_printing_cell("# Claim C2 (second piece)",
                                   "Claim C2 — reproduced in part: slope 2.1 in d")])
    found = claims.collect_claims(root)
    assert set(found) == {"C1", "C2"}
    assert found["C2"].verdicts == ["reproduced", "reproduced in part"]
    assert found["C2"].verdict == "reproduced in part"           # the pieces combined
    assert found["C2"].measured == ["slope 1.00 in L", "slope 2.1 in d"]
    assert found["C2"].part_keys() == ["C2 #1", "C2 #2"] and found["C1"].part_keys() == ["C1"]
    table = claims.render_claims_table(root, findings={})
    rows = [ln for ln in table.splitlines() if ln.startswith("| ") and "---" not in ln][1:]
    assert len(rows) == 3 + len(claims.CLAIMS) - 2 == 25           # a row per part
    assert ("20 claims in 25 rows (a claim with independent parts, or checked in pieces, has "
            "a row for each). Of the rows, **2** reproduced, **1** reproduced in part, **0** "
            "contradicted here, **0** not shown here, **0** not testable here, and **22** not "
            "yet checked") in table
    assert "{ref}`C1 <claim-c1>`" in table and "not yet checked" in table
    # each piece keeps its own word; no finding written: the row says so, no machine sentence
    assert "| ✓ reproduced | (no finding written yet: see the check) |" in table
    assert "| ◐ reproduced in part | (no finding written yet: see the check) |" in table
    assert "slope 2.1 in d" not in table


def _glue_cell(**values):
    """A code cell whose stored outputs are the glue records ``publish`` would store."""
    code = nbformat.v4.new_code_cell("publish(...)")
    code.outputs = [nbformat.v4.new_output(
        "display_data", data={GLUE_MIME: v, "text/plain": v},
        metadata={"scrapbook": {"name": k, "mime_prefix": ""}}) for k, v in values.items()]
    return code


def test_a_finding_is_filled_from_what_the_chapter_published(tmp_path):
    root = _book(tmp_path, _claim_cells("C1", "Claim C1 — reproduced: a long line the "
                                              "check printed") + [_glue_cell(share="99.9")])
    ok = {"C1": claims.Finding("", "A block is {share} % its matrices.", "reproduced")}
    table = claims.render_claims_table(root, findings=ok)
    assert "| ✓ reproduced | A block is 99.9 % its matrices. |" in table
    assert "a long line the check printed" not in table
    assert claims.stale_findings(root, ok) == []
    # a name the chapter does not publish is named, with where to fix it
    bad = {"C1": claims.Finding("", "{nothing} here", "reproduced")}
    with pytest.raises(claims.ClaimFormatError, match=r"C1 quotes \{nothing\}.*FINDINGS"):
        claims.render_claims_table(root, findings=bad)
    # a finding written for another word is flagged on the page and by stale_findings
    old = {"C1": claims.Finding("", "It held.", "not shown here")}
    assert "written when the word was *not shown here*" in claims.render_claims_table(
        root, findings=old)
    assert claims.stale_findings(root, old) == [
        "C1: written for 'not shown here', the check now says 'reproduced'"]
    assert claims.stale_findings(root, {}) == ["C1: no finding written (add one to FINDINGS)"]


def test_the_books_findings_are_current_and_short():
    """Every row of the real claims page has a finding a person wrote for the word the check
    computes now (or for any word, where a timing makes it vary), filled from published
    numbers, and short: no cell of ~110 words."""
    assert claims.stale_findings(book.ROOT) == []
    table = claims.render_claims_table(book.ROOT)
    found = [ln.split(" | ")[2] for ln in table.splitlines()
             if ln.startswith("| ") and " | " in ln and "---" not in ln][1:]
    assert len(found) >= 30, len(found)
    long = [f for f in found if len(f.split()) > 40]
    assert not long, long
    assert not any("{" in f for f in found), "an unfilled placeholder"


def test_named_pieces_of_a_claim_keep_their_names(tmp_path):
    """'Claim C9 (depth) — ...' and 'Claim C9 (recipe) — ...' are two pieces of C9: the row's
    headline combines their words (``evidence.combine``: never simply the worst) and each
    piece keeps its name in front of what it measured."""
    root = _book(tmp_path, _claim_cells("C1", "Claim C1 (depth) — reproduced: a")
                 + [_printing_cell("# Claim C1 (recipe)",
                                   "Claim C1 (recipe) — not shown here: b")])
    found = claims.collect_claims(root)["C1"]
    assert found.verdicts == ["reproduced", "not shown here"]
    assert found.verdict == "reproduced in part"                 # not the worst piece's word
    assert found.measured == ["depth: a", "recipe: b"]
    (tmp_path / "2").mkdir()
    root2 = _book(tmp_path / "2", _claim_cells("C1", "Claim C1 (depth) reproduced: a"))
    with pytest.raises(claims.ClaimFormatError, match="verdict"):
        claims.collect_claims(root2)


def test_a_claim_not_testable_here_is_counted_and_combines_with_other_pieces(tmp_path):
    """A claim resting on too few trained models prints 'not testable here'
    (evidence.NOT_TESTABLE): the table shows and counts it; among a claim's pieces the words
    combine (evidence.combine) instead of the worst winning."""
    root = _book(tmp_path, [nbformat.v4.new_markdown_cell("# 1. Toy")]
                 + _claim_cells("C1", "Claim C1 — not testable here: one trained model"))
    table = claims.render_claims_table(
        root, findings={"C1": claims.Finding("", "one trained model", "not testable here")})
    assert "| ? not testable here | one trained model |" in table
    assert "**0** not shown here, **1** not testable here" in table

    def headline(*words):
        return claims.ClaimResult("C1", "01_toy", "claim-c1", verdicts=list(words)).verdict

    assert headline("reproduced in part", "not testable here") == "reproduced in part"
    assert headline("reproduced", "not testable here") == "reproduced in part"
    assert headline("reproduced", "reproduced") == "reproduced"
    assert headline("not testable here", "contradicted here") == "contradicted here"
    assert headline("not testable here", "not shown here") == "not shown here"
    assert headline("contradicted here", "not shown here") == "contradicted here"
    assert headline("not testable here", "not testable here") == "not testable here"


def test_every_outcome_word_has_its_symbol(tmp_path):
    words = ["reproduced", "reproduced in part", "contradicted here", "not shown here",
             "not testable here"]
    assert list(claims.VERDICTS) == words
    ids = list(claims.CLAIMS)[:len(words)]          # C1 ... C4, C5a
    cells = [c for i, (cid, w) in enumerate(zip(ids, words), start=1)
             for c in _claim_cells(cid, f"Claim {cid} — {w}: m{i}")]
    findings = {cid: claims.Finding("", f"m{i}", w)
                for i, (cid, w) in enumerate(zip(ids, words), start=1)}
    table = claims.render_claims_table(_book(tmp_path, cells), findings=findings)
    for i, (w, sym) in enumerate(zip(words, "✓◐✗○?"), start=1):
        assert f"| {sym} {w} | m{i} |" in table
    assert ", ".join(f"**1** {w}" for w in words) in table


@pytest.mark.parametrize("old", ["reproduced with caveats", "not reproduced at this scale",
                                 "inconclusive"])
def test_the_old_verdict_words_are_refused(tmp_path, old):
    root = _book(tmp_path, _claim_cells("C1", f"Claim C1 — {old}: x"))
    with pytest.raises(claims.ClaimFormatError, match="verdict"):
        claims.collect_claims(root)


@pytest.mark.parametrize("line, label, message", [
    ("Claim C1 — works: fine", True, "verdict"),
    ("Claim C1: reproduced", True, "verdict"),
    ("Claim C99 — reproduced: x", True, "unknown claim"),
    ("Claim C1 — reproduced: x", False, "no markdown label"),
])
def test_malformed_claim_cells_are_named(tmp_path, line, label, message):
    root = _book(tmp_path, _claim_cells("C1", line, label=label))
    with pytest.raises(claims.ClaimFormatError, match=message):
        claims.collect_claims(root)


def test_a_claim_cell_without_output_is_an_error(tmp_path):
    cells = _claim_cells("C1", "Claim C1 — reproduced: x")
    cells[1].outputs = []
    root = _book(tmp_path, cells)
    with pytest.raises(claims.ClaimFormatError, match="no line"):
        claims.collect_claims(root)


def test_only_notebooks_in_the_toc_count(tmp_path):
    root = _book(tmp_path, [])
    assert [p.name for p in book.toc_notebooks(root)] == ["01_toy.ipynb"]


def test_a_split_claim_gets_a_row_per_part(tmp_path):
    """C8a and C8b are read, labelled and shown separately: one part's verdict does not hide
    the other's."""
    root = _book(tmp_path, _claim_cells("C8a", "Claim C8a — not shown here: x")
                 + _claim_cells("C8b", "Claim C8b — reproduced: y"), name="04_toy")
    found = claims.collect_claims(root)
    assert {c: (r.label, r.verdict) for c, r in found.items()} == {
        "C8a": ("claim-c8a", "not shown here"), "C8b": ("claim-c8b", "reproduced")}
    table = claims.render_claims_table(
        root, findings={"C8a": claims.Finding("", "x", "not shown here"),
                        "C8b": claims.Finding("", "y", "reproduced")})
    assert "| **C8b** Plain post-norm stops" in table and "{ref}`C8b <claim-c8b>`" in table
    assert "| ✓ reproduced | y |" in table and "| ○ not shown here | x |" in table


def test_the_books_claims_parse():
    """Every claim C1-C17 (C5 in three parts, C8 and C9 in two) and X1-X3 is checked by a
    chapter, and every claim line follows the format."""
    found = claims.collect_claims(ROOT)
    assert sorted(found, key=list(claims.CLAIMS).index) == (
        [f"C{i}" for i in range(1, 5)] + ["C5a", "C5b", "C5c"]
        + [f"C{i}" for i in range(6, 8)] + ["C8a", "C8b", "C9a", "C9b"]
        + [f"C{i}" for i in range(10, 18)] + [f"X{i}" for i in range(1, 4)])
    assert set(found) == set(claims.CLAIMS)
    for cid, r in found.items():
        assert r.verdicts and all(v in claims.VERDICTS for v in r.verdicts), cid
        assert all(m.strip() for m in r.measured), cid


# ---------------------------------------------------------------- status

def test_status_page_reads_the_recorded_runs(tmp_path):
    root = _book(tmp_path, [nbformat.v4.new_markdown_cell("# 1. Toy chapter")])
    assert "not run by the tests on this machine yet" in status.render_status(root)
    runs = root / status.RUNS_FILE
    runs.parent.mkdir(parents=True)
    runs.write_text(json.dumps({"01_toy.ipynb": {
        "seconds": 12.34, "cells": 7, "failed": 0, "checked_at": "2026-01-01 10:00 UTC",
        "machine": "x86_64, 2 CPU cores", "versions": {"torch": "2.13.0+cpu"}}}))
    page = status.render_status(root)
    assert "| 12.3 s | 7 |" in page and "1. Toy chapter" in page and "2.13.0+cpu" in page
    assert "mathjax" in page                                  # the offline scripts' pins


def test_status_falls_back_to_the_repositorys_snapshot(tmp_path):
    """A site built before any test run on its machine shows the project's last check, marked
    as such, instead of "not measured yet"; a local run replaces it. The snapshot is saved only
    from a complete, passing check."""
    root = _book(tmp_path, [nbformat.v4.new_markdown_cell("# 1. Toy chapter")])
    run = {"seconds": 9.0, "cells": 5, "failed": 0, "checked_at": "2026-01-01 10:00 UTC",
           "machine": "x86_64, 2 CPU cores", "versions": {"torch": "2.13.0+cpu"}}
    with pytest.raises(ValueError, match="no recorded run"):
        status.save_snapshot(root)
    (root / "_build" / "generated").mkdir(parents=True)
    (root / status.RUNS_FILE).write_text(json.dumps({"01_toy.ipynb": {**run, "failed": 2}}))
    with pytest.raises(ValueError, match="failing"):
        status.save_snapshot(root)
    (root / status.RUNS_FILE).write_text(json.dumps({"01_toy.ipynb": run}))
    (root / "book").mkdir()
    status.save_snapshot(root)
    (root / status.RUNS_FILE).unlink()                      # a fresh clone: no local run
    page = status.render_status(root)
    assert "| 9.0 s | 5 |" in page and "(the repository's last check)" in page
    assert "9 s" in summaries.render_exercises(root)
    (root / status.RUNS_FILE).write_text(json.dumps({"01_toy.ipynb": {**run, "seconds": 4.0}}))
    page = status.render_status(root)
    assert "| 4.0 s |" in page and "last check)" not in page


def test_the_landing_figure_is_one_chapters_stored_figure(tmp_path):
    """book/intro.md shows the PNG stored by the one cell tagged for it; none, two, or a cell
    without a figure are named errors."""
    from depthnotes.tools import landing

    png = landing.landing_png(ROOT)
    assert png.startswith(b"\x89PNG") and len(png) > 10_000
    assert "landing_figure.png" in (ROOT / "book" / "intro.md").read_text()
    assert landing.LANDING_FILE == "landing_figure.png"
    root = _book(tmp_path, [nbformat.v4.new_markdown_cell("# 1. Toy")])
    with pytest.raises(landing.LandingFigureError, match="found: none"):
        landing.landing_png(root)
    (tmp_path / "2").mkdir()
    cell = nbformat.v4.new_code_cell("plt.show()", metadata={"tags": [landing.LANDING_TAG]})
    with pytest.raises(landing.LandingFigureError, match="stores 0 PNG"):
        landing.landing_png(_book(tmp_path / "2", [cell]))


def test_versions_lists_the_packages():
    v = status.versions()
    assert v["python"].count(".") == 2 and "torch" in v and "nbval" in v


# ---------------------------------------------------------------- summaries and API

def test_summary_section_is_extracted():
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("# 1. T\n\ntext"),
                nbformat.v4.new_markdown_cell("more\n\n## Summary\n\n- one\n- two\n\n### Detail\n"
                                              "x\n\n## Exercises\n\n**Exercise 1.1.** Do it."),
                nbformat.v4.new_code_cell("### BEGIN SOLUTION\na = 1\n### END SOLUTION")]
    assert summaries.chapter_summary(nb) == "- one\n- two\n\n### Detail\nx"
    assert summaries._task_text(nb, 2) == "**Exercise 1.1.** Do it."


def test_api_page_lists_every_module():
    modules = api_page.public_modules(ROOT)
    assert "depthnotes.core.model" in modules and "depthnotes.core.params" in modules
    assert not any(m.startswith("depthnotes.tools") for m in modules)
    page = api_page.render_api(ROOT)
    assert all(f".. automodule:: {m}" in page for m in modules)


def test_docstrings_that_are_not_rest_become_literal_blocks():
    good = ["Exact counts, from a config alone (``count_params``)."]
    assert verbatim_if_invalid(good) == good
    bad = ["A table:", "  a   b", "    c   d", "e"]
    assert docstring_problems("\n".join(bad))
    out = verbatim_if_invalid(bad)
    assert out[0] == "::" and out[2] == "    A table:"
    assert not docstring_problems("\n".join(out))


def test_docstring_check_agrees_with_docutils_publish_doctree():
    """The fast check (one parser, settings made once) reports a problem exactly when
    ``publish_doctree`` with the same settings does, and does not leak state between calls."""
    import io

    from docutils.core import publish_doctree

    def slow(text):
        stream = io.StringIO()
        publish_doctree(text, settings_overrides={
            "report_level": 2, "halt_level": 5, "warning_stream": stream,
            "file_insertion_enabled": False, "raw_enabled": False})
        return stream.getvalue().strip()

    cases = ["Plain text with ``code``.", "A table:\n  a   b\n    c   d\ne",
             "+---+\n| a |\n+--+\n", "Title\n===\n", "x^2 and *unclosed emphasis",
             "Para.\n\n.. note:: fine\n", ".. include:: /etc/hostname", "a\n\n    b\n  c",
             "Args:\n    x: one\n     y: two", "Flat when |k| is small.",
             "A |sub| defined.\n\n.. |sub| replace:: word\n"]
    for text in cases + cases:        # twice: a warning must not carry over to the next call
        assert bool(docstring_problems(text)) == bool(slow(text)), text


# ---------------------------------------------------------------- build helpers

def _tarball(tmp_path: Path, files: dict[str, bytes]) -> Path:
    path = tmp_path / "pkg.tgz"
    with tarfile.open(path, "w:gz") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


def test_unpack_copies_the_named_files_and_skips_the_rest(tmp_path):
    tgz = _tarball(tmp_path, {"package/es5/a.js": b"a", "package/es5/big.js": b"b",
                              "package/es5/x/y.woff": b"y", "package/LICENSE": b"L",
                              "package/other.txt": b"o"})
    asset = assets.NpmAsset("demo", "1.0.0", assets._integrity(tgz),
                           copy=(("package/es5", "demo"), ("package/LICENSE", "demo/LICENSE")),
                           skip=("big.js",))
    out = tmp_path / "out"
    assert assets._unpack(asset, tgz, out) == 3
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()) == \
        ["demo/LICENSE", "demo/a.js", "demo/x/y.woff"]


def test_a_cached_tarball_is_used_only_if_its_integrity_matches(tmp_path):
    cache = tmp_path / "cache"
    cache.mkdir()
    tgz = _tarball(cache, {"package/a": b"a"})
    asset = assets.NpmAsset("demo", "1.0.0", assets._integrity(tgz), copy=())
    assert assets._npm_pack(asset, cache) == tgz            # no npm call: found by its hash


def test_pins_are_exact_versions_with_sha512():
    for asset in assets.NPM_ASSETS:
        assert asset.version.count(".") == 2 and asset.version.replace(".", "").isdigit()
        assert asset.integrity.startswith("sha512-") and len(asset.integrity) == 95


def test_site_is_stale_when_a_source_is_newer(tmp_path):
    root = _book(tmp_path, [])
    (root / "_config.yml").write_text("title: t\n")
    assert build.site_is_stale(root)                          # never built
    (root / "_build" / "html").mkdir(parents=True)
    (root / "_build" / "html" / "index.html").write_text("x")
    stamp = root / "_build" / build.STAMP_NAME
    stamp.write_text("1.0\n")
    past = time.time() - 100
    for f in build.site_sources(root):
        os.utime(f, (past, past))
    assert not build.site_is_stale(root)
    (root / "notebooks" / "01_toy.ipynb").touch()
    assert build.site_is_stale(root)


def test_the_run_times_alone_refresh_only_the_status_page(tmp_path, monkeypatch):
    """The test run records each notebook's time (status.RUNS_FILE), a source of the status
    page: that alone asks Sphinx for the changed pages, not a full build; any other newer
    source rebuilds everything; a current site is left alone."""
    root = _book(tmp_path, [])
    (root / "_config.yml").write_text("title: t\n")
    (root / "_build" / "html").mkdir(parents=True)
    (root / "_build" / "html" / "index.html").write_text("x")
    (root / "_build" / build.STAMP_NAME).write_text("1.0\n")
    runs = root / status.RUNS_FILE
    runs.parent.mkdir(parents=True, exist_ok=True)
    runs.write_text("{}\n")
    past = time.time() - 100
    for f in build.site_sources(root):
        os.utime(f, (past, past))
    calls = []
    monkeypatch.setattr(build, "_build", lambda r, full: calls.append(("part", full)))
    monkeypatch.setattr(build, "build_site", lambda r: calls.append(("full", True)))
    assert build.refresh_site(root) == "fresh" and calls == []
    runs.touch()
    assert build.refresh_site(root) == "status" and calls == [("part", False)]
    (root / "notebooks" / "01_toy.ipynb").touch()
    assert build.refresh_site(root) == "full" and calls[-1] == ("full", True)


def test_methods_page_lists_every_record_and_threshold():
    """The Methods and history page is read from the records and the verdict modules: every
    stored record gets a row and a dropdown, every listed threshold its value and comment."""
    import json
    from pathlib import Path

    from depthnotes.tools import methods

    root = Path(__file__).resolve().parents[1]
    text = methods.render_records(root)
    names = [json.loads(p.read_text())["name"]
             for p in (root / "notebooks" / "records").glob("*.json")]
    assert names and all(f"| `{n}` |" in text and f"{{dropdown}} `{n}`" in text for n in names)
    # each dropdown is parsed as a directive, not as text (MyST's colon-fence syntax)
    from markdown_it import MarkdownIt
    from mdit_py_plugins.colon_fence import colon_fence_plugin

    fences = [t.info for t in MarkdownIt("commonmark").enable("table").use(colon_fence_plugin)
              .parse(text) if t.type == "colon_fence"]
    assert len(fences) == len(names) and all(f.startswith("{dropdown}") for f in fences)
    assert all(any(f"`{n}`" in f for f in fences) for n in names)
    table = methods.render_thresholds()
    assert len(table.splitlines()) == 2 + len(methods.THRESHOLDS)
    assert all(row.split("|")[3].strip() for row in table.splitlines()[2:])  # each explained
    assert "(methods)=" in (root / "book" / "methods.md").read_text()


def test_publish_displays_the_glue_record_myst_nb_would(monkeypatch):
    """``publish`` writes myst-nb's glue record itself (importing ``myst_nb.ext.glue`` costs
    a kernel ~3 s): the same bundle and metadata as ``myst_nb.glue(..., display=False)``."""
    glue_module = pytest.importorskip("myst_nb.ext.glue")
    import IPython.display

    from depthnotes.page import publish as pub

    shown = []
    monkeypatch.setattr(glue_module, "ipy_display", lambda *a, **k: shown.append((a, k)))
    monkeypatch.setattr(IPython.display, "display", lambda *a, **k: shown.append((a, k)))
    glue_module.glue("share", pub.Shown("99.9"), display=False)
    pub.publish(share=(99.94, ".1f"))
    assert len(shown) == 2 and shown[0] == shown[1]
    (bundle,), kw = shown[1]
    assert bundle == {"application/papermill.record/text/plain": "99.9"}
    assert kw["metadata"]["scrapbook"] == {"name": "share", "mime_prefix": pub.GLUE_PREFIX}
    assert pub.GLUE_PREFIX == glue_module.GLUE_PREFIX
