"""The figure standard (depthnotes.page.standard): the measurement and the rule, on figures
made to pass and to fail. tests/test_figures.py applies it to every stored figure."""

import matplotlib

matplotlib.use("Agg")   # this test only; the notebooks keep their inline backend

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from depthnotes.page import standard  # noqa: E402
from depthnotes.page.plots import (COLUMN_IN, LINESTYLES, finding, new_figure,  # noqa: E402
                                   use_house_style, wrap_title)


@pytest.fixture(autouse=True)
def house():
    use_house_style()
    yield
    plt.close("all")


def _check(fig):
    png, facts = standard.render_png(fig)
    return standard.problems(facts, *standard.png_size(png)), facts, png


def test_displayed_size_follows_the_pixels_and_the_column():
    # 9 pt at 110 dpi is 13.75 px; a CSS px is 0.75 pt
    assert standard.displayed_pt(9, 110, 600) == pytest.approx(9 * 110 / 72 * 0.75)
    # a PNG twice the column is shown at half size
    assert standard.displayed_scale(2 * standard.COLUMN_PX) == 0.5
    assert standard.displayed_pt(9, 110, 2 * standard.COLUMN_PX) == pytest.approx(
        9 * 110 / 72 * 0.75 / 2)
    with pytest.raises(ValueError, match="png_width"):
        standard.displayed_scale(0)


def test_a_house_figure_meets_the_standard():
    fig, (ax,) = new_figure()
    ax.plot([1, 2, 3], [3, 1, 2], label="a series")
    ax.legend()
    finding(ax, "The series dips and recovers")
    found, facts, png = _check(fig)
    assert found == [], found
    assert facts["png_px"] == list(standard.png_size(png))
    assert facts["min_font_pt"] == 9.5 and facts["titles"] == ["The series dips and recovers"]


def test_a_small_legend_fails():
    fig, (ax,) = new_figure()
    ax.plot([1, 2], [1, 2], label="seed 0")
    ax.legend(fontsize=5)
    ax.set_title("t")
    found, facts, _ = _check(fig)
    assert facts["min_font_pt"] == 5 and facts["smallest_text"] == "seed 0"
    assert any("reads as" in p for p in found), found


def test_a_wide_figure_fails_even_with_house_fonts():
    fig, axes = plt.subplots(1, 4, figsize=(10, 3.6))     # what chapter 4 had: 1,089 px
    for ax in axes:
        ax.plot([1, 2], [1, 2])
    axes[0].set_title("t")
    found, _, png = _check(fig)
    width = standard.png_size(png)[0]
    assert width > standard.COLUMN_PX / standard.MIN_SCALE
    assert any("px wide, shown at" in p for p in found), found
    assert any("reads as" in p for p in found), found   # 9.5 pt at 63 % is ~6.9 pt


def test_more_than_four_series_need_styles_not_colour_alone():
    fig, (ax,) = new_figure()
    for i in range(5):
        ax.plot([0, 1], [i, i + 1], label=f"L = {i}")
    ax.legend()
    ax.set_title("t")
    found, _, _ = _check(fig)
    assert any("colour alone" in p for p in found), found
    ax.clear()
    for i in range(5):
        ax.plot([0, 1], [i, i + 1], ls=LINESTYLES[i], label=f"L = {i}")
    ax.legend()
    ax.set_title("t")
    assert _check(fig)[0] == []


def test_facts_must_belong_to_the_png_and_exist():
    fig, (ax,) = new_figure()
    ax.plot([1, 2], [1, 2])
    ax.set_title("t")
    png, facts = standard.render_png(fig)
    w, h = standard.png_size(png)
    assert "not this" in standard.problems(facts, w + 1, h)[0]
    assert "without plots.use_house_style" in standard.problems(None, w, h)[0]
    ax.set_title("")
    assert any("no title" in p for p in standard.problems(*_check(fig)[1:2], w, h))


def test_tick_labels_outside_the_view_do_not_count():
    fig, (ax,) = new_figure()
    ax.plot([0, 1], [0, 1])
    ax.set_title("t")
    ax.set_xticks([0, 0.5, 1, 5])   # 5 is outside the view
    ax.set_xlim(0, 1)
    texts = [t.get_text() for t in standard._visible_texts(fig)]
    assert "0.5" in texts and "5" not in texts


def test_new_figure_stacks_panels_at_the_column_width():
    fig, axes = new_figure(3, width=10.0, per_row=2, sharey=True)
    assert len(axes) == 3 and len(fig.axes) == 3
    assert fig.get_figwidth() == COLUMN_IN and fig.get_figheight() == pytest.approx(7.2)
    assert axes[2].get_position().y0 < axes[0].get_position().y0   # the third is below
    axes[0].plot([0, 1], [0, 10])
    axes[1].plot([0, 1], [0, 1])
    assert axes[1].get_ylim() == axes[0].get_ylim()                 # shared y-range
    for ax in axes:
        ax.set_title("a panel")
    assert _check(fig)[0] == []
    with pytest.raises(ValueError, match="ncols"):
        new_figure(0, per_row=2)
    fig, axes = new_figure(2)               # the old layout, until the chapters are redrawn
    assert fig.get_figwidth() == 8.4 and len(axes) == 2


def test_titles_do_not_break_an_equation():
    text = "No seed of this family gets under the line from L = 24 on"
    for width in (2.5, 3.0, 3.5, 4.0, 5.0):
        lines = wrap_title(text, width).split("\n")
        assert " ".join(lines) == text
        assert not any(line.endswith(("L", "L =")) for line in lines[:-1]), lines
    assert wrap_title("post\u00a0N and more words", 2.0).startswith("post\u00a0N")


def test_titles_wrap_to_the_figure():
    text = "A finding that is a whole sentence long, much longer than one line of a figure"
    lines = wrap_title(text).split("\n")
    assert len(lines) == 2 and " ".join(lines) == text
    fig, (ax,) = new_figure(per_row=1)
    ax.plot([0, 1], [0, 1])
    finding(fig, text * 2)
    found, _, png = _check(fig)
    assert found == [] and standard.png_size(png)[0] <= standard.COLUMN_PX


def _four_panels_one_key(legend_pt=None, styled=True):
    """Chapter 4's failure-curve layout: four panels and one figure-level key below them."""
    fig, axes = new_figure(4, per_row=2, height=2.6, sharex=True, sharey=True)
    for ax in axes:
        for i in range(5):
            ax.plot([0, 1], [i, i + 1], ls=LINESTYLES[i] if styled else "-", label=f"arm {i}")
        ax.set_title("a panel")
    kw = {} if legend_pt is None else {"fontsize": legend_pt}
    fig.legend(*axes[0].get_legend_handles_labels(), loc="upper center",
               bbox_to_anchor=(0.5, 0), ncol=5, **kw)
    finding(fig, "One key for four panels")
    return fig


def test_a_figure_legend_is_measured_like_a_panels():
    found, facts, _ = _check(_four_panels_one_key())
    assert found == [], found
    assert facts["legends"] == [{"where": "the figure's legend", "legend_entries": 5,
                                 "styles_distinct": True}]


def test_a_small_figure_legend_fails():
    found, facts, _ = _check(_four_panels_one_key(legend_pt=6))
    assert facts["min_font_pt"] == 6 and facts["smallest_text"].startswith("arm")
    assert any("reads as" in p for p in found), found


def test_a_figure_legend_of_colours_alone_fails():
    found, _, _ = _check(_four_panels_one_key(styled=False))
    assert found == ["the figure's legend: 5 series told apart by colour alone (use line "
                     "styles or markers, or label them directly)"], found


def test_figure_level_texts_are_measured():
    for small in ("suptitle", "supxlabel", "text"):
        fig, (ax,) = new_figure(per_row=1)
        ax.plot([0, 1], [0, 1])
        finding(ax, "A rising line")
        if small == "text":
            fig.text(0.01, 0.01, "a note", fontsize=6)
        else:
            getattr(fig, small)("a figure label", fontsize=6)
        found, facts, _ = _check(fig)
        assert facts["min_font_pt"] == 6, small
        assert any("reads as" in p for p in found), (small, found)


def test_hidden_legends_do_not_count_and_old_facts_still_read():
    fig = _four_panels_one_key(styled=False)
    fig.legends[0].set_visible(False)
    found, facts, _ = _check(fig)
    assert found == [] and facts["legends"] == []
    # facts stored before figure legends were measured hold one entry per panel
    old = {k: v for k, v in facts.items() if k != "legends"}
    old["panels"] = [{"legend_entries": 0, "styles_distinct": True},
                     {"legend_entries": 6, "styles_distinct": False}]
    assert standard.problems(old, *facts["png_px"]) == [
        "panel 2: 6 series told apart by colour alone (use line styles or markers, or label "
        "them directly)"]
