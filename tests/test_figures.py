"""Every stored figure of every chapter meets the figure standard (issue 30;
``depthnotes.page.standard``), read from the notebooks as they are committed.

A figure is an ``image/png`` output of a code cell. Its facts (what ``standard.render_png``
measured while Jupyter drew it) are stored in the output's metadata under
``standard.META_KEY``; they must describe this very PNG (their stored pixel size is the
PNG's real size, read from its header), and ``standard.problems`` applies the rule to them. A
figure without facts fails: it was drawn without ``plots.use_house_style()``. There is no
exemption list: one test per figure, named ``notebook/cell id``, so a failure names the
figure to redraw.

An explorer's figure frames (``depthnotes.page.explorer``: PNGs inside its ``text/html``, the
facts of each in that output's metadata) are held to the same standard, at the width the
explorer's box leaves them (``explorer.FRAME_COLUMN_PX``): one test per explorer, no exception.

Cheap: it reads the stored outputs and executes nothing, so it carries none of the slow
markers (``depthnotes/tools/pytest_plugin.py``) and the quick path runs it.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from depthnotes.page import standard
from depthnotes.page.explorer import FRAME_COLUMN_PX, stored_frames

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


def stored_figures(nb: dict) -> list[tuple[str, dict]]:
    """``(cell id, output)`` for every ``image/png`` output of ``nb``'s code cells; a cell
    with several figures gives ids ``id``, ``id-2``, ..."""
    found = []
    for cell in nb["cells"]:
        if cell["cell_type"] != "code":
            continue
        pngs = [o for o in cell.get("outputs", []) if "image/png" in o.get("data", {})]
        for k, output in enumerate(pngs):
            found.append((cell.get("id", "?") + (f"-{k + 1}" if k else ""), output))
    return found


def figure_facts(output: dict) -> dict | None:
    """The facts stored with a figure's output: under its ``image/png`` metadata (where
    Jupyter puts the metadata a formatter returns) or, failing that, the output's own."""
    meta = output.get("metadata", {})
    per_mime = meta.get("image/png")
    return (per_mime if isinstance(per_mime, dict) else meta).get(standard.META_KEY)


def figure_problems(output: dict) -> list[str]:
    """Where one stored figure misses the standard (empty: it meets it)."""
    data = output["data"]["image/png"]
    png = base64.b64decode("".join(data) if isinstance(data, list) else data)
    return standard.problems(figure_facts(output), *standard.png_size(png))


def _collect():
    params = []
    for path in NOTEBOOKS:
        nb = json.loads(path.read_text())
        for cid, output in stored_figures(nb):
            params.append(pytest.param(output, id=f"{path.stem}/{cid}"))
    return params


FIGURES = _collect()

def frame_problems(output: dict) -> list[str]:
    """Where the figure frames of one stored explorer miss the standard, each named by its
    frame number (empty: they all meet it)."""
    found = []
    for i, png, facts in stored_frames(output):
        found += [f"frame {i}: {p}" for p in standard.problems(
            facts, *standard.png_size(png), column=FRAME_COLUMN_PX)]
    return found


def _collect_explorers():
    params = []
    for path in NOTEBOOKS:
        nb = json.loads(path.read_text())
        for cell in nb["cells"]:
            for output in cell.get("outputs", []) if cell["cell_type"] == "code" else []:
                if stored_frames(output):
                    params.append(pytest.param(output, id=f"{path.stem}/{cell.get('id')}"))
    return params


EXPLORERS = _collect_explorers()


def test_every_chapter_has_figures_to_check():
    chapters = {p.id.split("/")[0] for p in FIGURES}
    assert {p.stem for p in NOTEBOOKS} <= chapters, (
        f"no stored figure found in {sorted({p.stem for p in NOTEBOOKS} - chapters)}")


def test_the_reader_can_fail():
    """The reader finds facts where Jupyter stores them, and a figure fails without them or
    with facts of another image (drawn with the house style on a throwaway Agg figure)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from depthnotes.page.plots import finding, new_figure, use_house_style

    use_house_style()
    fig, (ax,) = new_figure(per_row=1)
    ax.plot([0, 1], [1, 0])
    finding(ax, "It falls")
    png, facts = standard.render_png(fig)
    plt.close(fig)
    encoded = base64.b64encode(png).decode("ascii")
    output = {"output_type": "display_data", "data": {"image/png": encoded},
              "metadata": {"image/png": {standard.META_KEY: facts}}}
    nb = {"cells": [{"cell_type": "code", "id": "c1", "outputs": [output, output]},
                    {"cell_type": "markdown", "id": "m1", "source": ""}]}
    assert [cid for cid, _ in stored_figures(nb)] == ["c1", "c1-2"]
    assert figure_problems(output) == []
    bare = {**output, "metadata": {}}
    assert "use_house_style" in figure_problems(bare)[0]
    other = {**output, "metadata": {"image/png": {standard.META_KEY: {
        **facts, "png_px": [facts["png_px"][0] + 1, facts["png_px"][1]]}}}}
    assert "not this" in figure_problems(other)[0]


@pytest.mark.parametrize("output", FIGURES)
def test_stored_figure_meets_the_standard(output):
    found = figure_problems(output)
    assert not found, "\n  ".join(["misses the figure standard:"] + found)


def test_the_figure_explorers_are_found():
    chapters = {p.id.split("/")[0] for p in EXPLORERS}
    assert {"04_instability", "05_fixes", "08_beyond"} <= chapters, sorted(chapters)


@pytest.mark.parametrize("output", EXPLORERS)
def test_stored_explorer_frames_meet_the_standard(output):
    found = frame_problems(output)
    assert not found, "\n  ".join(["frames miss the figure standard:"] + found)
