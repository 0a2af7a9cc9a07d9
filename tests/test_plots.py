"""The seed figure helpers (depthnotes.page.plots): one artist per seed plus the mean."""

import matplotlib

matplotlib.use("Agg")   # this test only; the notebooks keep their inline backend

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from depthnotes.page.plots import (CYCLE, MEAN_STYLE, SEED_STYLE, plot_seed_curves,  # noqa: E402
                                   plot_seed_finals,
                                   use_house_style)


@pytest.fixture
def ax():
    use_house_style()
    fig, ax = plt.subplots()
    yield ax
    plt.close(fig)


def test_curves_draw_each_seed_and_the_mean(ax):
    curves = [[3.0, 2.0, 1.0], [3.2, 2.4, 1.4], [2.8, 2.3, 1.3]]
    seeds, mean = plot_seed_curves(ax, [10, 20, 30], curves, label="pre-norm")
    assert len(seeds) == 3 and len(ax.lines) == 4 and mean is ax.lines[-1]
    assert list(mean.get_ydata()) == pytest.approx([3.0, 2.2333333, 1.2333333])
    assert [list(s.get_ydata()) for s in seeds] == curves
    assert all(s.get_linewidth() == SEED_STYLE["lw"] and s.get_alpha() == SEED_STYLE["alpha"]
               for s in seeds)
    assert mean.get_linewidth() == MEAN_STYLE["lw"]
    assert {s.get_color() for s in seeds} == {mean.get_color()} == {CYCLE[0]}  # house cycle
    assert [h.get_label() for h in ax.get_legend_handles_labels()[0]] == ["pre-norm"]


def test_curves_of_different_lengths_average_the_common_steps(ax):
    seeds, mean = plot_seed_curves(ax, [[1, 2, 3], [1, 2]], [[4.0, 3.0, 2.0], [5.0, 4.0]],
                                   color="#123456")
    assert len(seeds) == 2 and list(mean.get_xdata()) == [1, 2]
    assert list(mean.get_ydata()) == [4.5, 3.5] and mean.get_color() == "#123456"
    with pytest.raises(ValueError, match="steps must match curves"):
        plot_seed_curves(ax, [1, 2], [[1.0, 2.0, 3.0]])


def test_the_mean_takes_a_line_style_and_the_seeds_stay_solid(ax):
    seeds, mean = plot_seed_curves(ax, [1, 2], [[2.0, 1.0], [3.0, 2.0]], linestyle="--",
                                   label="an arm")
    assert mean.get_linestyle() == "--"
    assert {s.get_linestyle() for s in seeds} == {"-"}
    legend = ax.legend()
    assert [h.get_linestyle() for h in legend.legend_handles] == ["--"]


def test_finals_draw_a_dot_per_seed_and_a_mean_bar(ax):
    results = {"post": [3.30, 3.28, 3.31], "deepnorm": [2.90, 2.95, 2.92, 2.91]}
    artists = plot_seed_finals(ax, results)
    assert [len(artists[a][0]) for a in results] == [3, 4]
    assert len(ax.lines) == 3 + 4 + 2
    dots, bar = artists["deepnorm"]
    assert [d.get_ydata()[0] for d in dots] == results["deepnorm"]
    assert list(bar.get_ydata()) == pytest.approx([2.92, 2.92])
    assert all(abs(d.get_xdata()[0] - 1) < 0.5 for d in dots)   # around the arm's x
    assert [t.get_text() for t in ax.get_xticklabels()] == ["post", "deepnorm"]
    with pytest.raises(ValueError, match="arm 'x' has no values"):
        plot_seed_finals(ax, {"x": []})


def test_depth_curves_tell_six_depths_apart_by_colour_and_style(ax):
    """Chapter 3's learning curves: six depths in one panel, each its own colour and line
    style, with no two of the near colours (blue and sky blue, orange and vermillion)
    next to each other; the seeds visible, the mean thick; the figure standard passes."""
    from depthnotes.page import standard
    from depthnotes.page.plots import SEED_VISIBLE, SERIES_COLORS, plot_depth_curves

    curves = {f"L = {L}": ([[1, 2, 3]] * 2, [[0.1 * L, 0.2, 0.3], [0.2, 0.3, 0.1 * L]])
              for L in range(1, 7)}
    means = plot_depth_curves(ax, curves)
    assert list(means) == list(curves) and len(ax.lines) == 6 * 3
    colours = [m.get_color() for m in means.values()]
    assert len(set(colours)) == 6 and set(colours) <= set(CYCLE)
    for near in ({CYCLE[0], CYCLE[5]}, {CYCLE[1], CYCLE[3]}):
        assert all({a, b} != near for a, b in zip(colours, colours[1:]))
    assert all(m.get_linewidth() == MEAN_STYLE["lw"] for m in means.values())
    seeds = [line for line in ax.lines if line not in means.values()]
    assert all(s.get_alpha() == SEED_VISIBLE["alpha"] > SEED_STYLE["alpha"] for s in seeds)
    ax.legend()
    png, facts = standard.render_png(ax.figure)
    assert facts["legends"][0] == {"where": "panel 1", "legend_entries": 6,
                                   "styles_distinct": True}
    assert len(SERIES_COLORS) == len(set(SERIES_COLORS)) == len(CYCLE)
    with pytest.raises(ValueError):
        plot_depth_curves(ax, {str(i): ([1], [[0.0]]) for i in range(9)})
