"""The book's diagrams (depthnotes.page.diagrams): they draw, meet the figure standard at the
page's width, and put each part where the model computes it."""

import matplotlib

matplotlib.use("Agg")   # this test only; the notebooks keep their inline backend

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from depthnotes.page import diagrams, standard  # noqa: E402
from depthnotes.page.plots import use_house_style  # noqa: E402


@pytest.fixture(autouse=True)
def house():
    use_house_style()
    yield
    plt.close("all")


def _texts(ax, gid):
    return [t for t in ax.texts if t.get_gid() == gid]


@pytest.mark.parametrize("draw", [diagrams.draw_norm_placements, diagrams.draw_residual_stream])
def test_a_diagram_meets_the_figure_standard(draw):
    fig = draw()
    png, facts = standard.render_png(fig)
    assert standard.problems(facts, *standard.png_size(png)) == []
    assert facts["min_font_pt"] >= diagrams.TEXT_PT
    # drawn for the column: not shrunk on the page
    assert standard.displayed_scale(standard.png_size(png)[0]) >= standard.MIN_SCALE


def test_the_norm_sits_where_each_placement_puts_it():
    fig = diagrams.draw_norm_placements()
    panels = dict(zip(diagrams.PLACEMENTS, fig.axes))
    for norm, ax in panels.items():
        (ln,), (add,) = _texts(ax, "ln"), _texts(ax, "add")
        (branch,) = _texts(ax, "branch")
        lx, ly = ln.get_position()
        ax_, ay = add.get_position()
        if norm == "pre":      # on the branch, before F: the stream itself is not normalised
            assert lx == branch.get_position()[0] and ly < branch.get_position()[1]
            assert _texts(ax, "identity")
        else:                  # on the stream, after the add
            assert lx == ax_ and ly > ay
            assert not _texts(ax, "identity")
        assert ax.get_title().startswith(diagrams.PLACEMENT_NAMES[norm])
        assert _texts(ax, "formula")[0].get_text() == diagrams.FORMULAS[norm]
    # alpha on the residual path below the add, beta on the branch: DeepNorm only
    deep = panels["deepnorm"]
    (alpha,), (add,) = _texts(deep, "alpha"), _texts(deep, "add")
    assert alpha.get_position()[0] == add.get_position()[0]
    assert alpha.get_position()[1] < add.get_position()[1]
    assert _texts(deep, "beta") and "(2L)^{1/4}" in _texts(deep, "constants")[0].get_text()
    assert not any(_texts(panels[n], g) for n in ("post", "pre") for g in ("alpha", "beta"))


def test_the_stream_diagram_has_every_block_read_and_add():
    fig = diagrams.draw_residual_stream()
    (ax,) = fig.axes
    blocks = _texts(ax, "block")
    assert [b.get_text() for b in blocks] == ["block 1", "block 2", "block L"]
    # one upward arrow (read) and one downward arrow (add) per block
    arrows = [p for p in ax.patches if type(p).__name__ == "FancyArrowPatch"]
    up = [a for a in arrows if a._posA_posB[1][1] > a._posA_posB[0][1]]
    down = [a for a in arrows if a._posA_posB[1][1] < a._posA_posB[0][1]]
    assert len(up) == len(down) == len(blocks)
    assert "x_L = x_0 + F_1" in _texts(ax, "sum")[0].get_text()
