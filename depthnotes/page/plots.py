"""The house style for the book's figures, and small helpers the chapters share.

A figure in this book has a title that states its finding (``finding``), labelled axes
with units, and a caption and alt text given in the notebook cell's metadata. It is drawn
for the column the site shows it in (``new_figure``; the standard and its check are in
``depthnotes.page.standard``). Colours are fixed per norm
placement so a reader can follow "post", "pre" and "deepnorm" across chapters. A trained
result shows every seed and the mean: ``plot_seed_curves`` for curves, ``plot_seed_finals``
for final values.
"""

from __future__ import annotations

import textwrap

import matplotlib as mpl
import matplotlib.pyplot as plt

from depthnotes.page.standard import COLUMN_PX, install_png_formatter
from depthnotes.verdicts.ch8_depth import DISTINCT, LOOPED, ONCE

#: One colour per norm placement, the same in every chapter (Okabe & Ito: vermillion, blue,
#: bluish green, which stay apart under the common colour-vision deficiencies).
NORM_COLORS = {"post": "#D55E00", "pre": "#0072B2", "deepnorm": "#009E73"}
#: A colour-blind-safe cycle (Okabe & Ito) for everything else.
CYCLE = ["#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000"]
#: Line styles and markers to pair with ``CYCLE`` when more than four series share a panel
#: (the standard: not colour alone; ``standard.MAX_COLOUR_ONLY_SERIES``).
LINESTYLES = ["-", "--", "-.", ":", (0, (5, 1, 1, 1, 1, 1)), (0, (1, 1)), "-", "--"]
MARKERS = ["o", "s", "^", "D", "v", "P", "X", "*"]

#: The figures' resolution: one figure pixel per CSS pixel of the page at this dpi.
DPI = 110
#: The widest a figure is drawn, in inches: the site's text column (``standard.COLUMN_PX``).
COLUMN_IN = round(COLUMN_PX / DPI, 2)
#: The default width, a little under the column (a tight bounding box may add a few pixels).
WIDTH_IN = 6.2


def use_house_style() -> None:
    """Set matplotlib's defaults for the book, readable at the page's width (the figure
    standard, ``depthnotes.page.standard``), and in Jupyter render each figure through
    ``standard.render_png`` so that its measured facts are stored with it."""
    install_png_formatter()          # first: it loads the backend, which sets its own rc
    mpl.rcParams.update({
        "figure.figsize": (6.4, 3.8),
        "figure.dpi": DPI,
        "savefig.dpi": DPI,
        "figure.autolayout": True,
        "axes.prop_cycle": mpl.cycler(color=CYCLE),
        "axes.spines.top": False,
        "axes.spines.right": False,
        "axes.grid": True,
        "grid.alpha": 0.3,
        "axes.titlesize": 11,
        "axes.titleweight": "bold",
        "figure.titlesize": 11.5,
        "figure.titleweight": "bold",
        "axes.labelsize": 10,
        "xtick.labelsize": 9.5,
        "ytick.labelsize": 9.5,
        "legend.fontsize": 9.5,
        "legend.frameon": False,
        "font.size": 10,
    })


def new_figure(ncols: int = 1, width: float | None = None, height: float | None = None, *,
               per_row: int | None = None, sharex: bool = False, sharey: bool = False):
    """A figure with ``ncols`` panels, drawn for the page's column, and its axes as a list.

    Panels are never squeezed: at most ``per_row`` side by side, the rest stacked below
    (``height`` is each row's height, inches; 3.6 by default). ``width`` defaults to the column's and is
    never more than it (``COLUMN_IN``): a wider figure would be shrunk on the page, and its
    text with it. ``sharey=True`` gives every panel the same y-range, for comparisons across
    panels.

    Until every chapter is redrawn to the standard, a call without ``per_row`` keeps the
    old layout (all panels in one row, 4.2 inches each, ``width`` as given); pass
    ``per_row=2`` (or 1) for the standard's.
    """
    if ncols < 1 or (per_row is not None and per_row < 1):
        raise ValueError(f"ncols and per_row must be >= 1, got ncols={ncols}, "
                         f"per_row={per_row}")
    if per_row is None:                                    # the old layout, see above
        width = width if width is not None else (6.4 if ncols == 1 else 4.2 * ncols)
        height = height if height is not None else 3.8
        fig, axes = plt.subplots(1, ncols, figsize=(width, height), squeeze=False,
                                 sharex=sharex, sharey=sharey)
        return fig, list(axes[0])
    width = min(width if width is not None else WIDTH_IN, COLUMN_IN)
    height = height if height is not None else 3.6
    cols = min(ncols, per_row)
    rows = -(-ncols // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(width, height * rows), squeeze=False,
                             sharex=sharex, sharey=sharey)
    flat = list(axes.flat)
    for ax in flat[ncols:]:
        ax.remove()
    return fig, flat[:ncols]


def wrap_title(text: str, width_in: float = WIDTH_IN, size: float = 11) -> str:
    """``text`` broken into lines that fit ``width_in`` inches at ``size`` points (a
    finding is a sentence; matplotlib does not wrap titles, and a title wider than the
    figure widens its PNG, which the page then shrinks). An equation such as ``L = 24``
    stays on one line, and so do words joined by a no-break space."""
    chars = max(20, int(width_in * 72 / (0.63 * size)))   # bold, wide letters
    glue = "\x1f"                      # textwrap breaks at ASCII whitespace only
    kept = text.replace(" = ", f"{glue}={glue}")
    return textwrap.fill(kept, chars, break_long_words=False).replace(glue, " ")


def finding(target, text: str) -> None:
    """Set a figure's title (``target`` a Figure: its suptitle) or a panel's (an Axes) to
    ``text``, wrapped to fit (:func:`wrap_title`)."""
    from matplotlib.figure import Figure

    if isinstance(target, Figure):
        size = mpl.rcParams["figure.titlesize"]
        size = size if isinstance(size, (int, float)) else 11.5
        target.suptitle(wrap_title(text, target.get_figwidth(), size))
    else:
        width = target.get_position().width * target.figure.get_figwidth()
        target.set_title(wrap_title(text, max(width, 2.5), mpl.rcParams["axes.titlesize"]
                                    if isinstance(mpl.rcParams["axes.titlesize"], (int, float))
                                    else 11))


# -- every seed and the mean (book/methods.md, how a claim is judged: show the spread) ------
#: How a single seed is drawn: thin and light, so the mean stands out over the seeds.
SEED_STYLE = {"lw": 0.8, "alpha": 0.35}
MEAN_STYLE = {"lw": 2.0}


def plot_seed_curves(ax, steps, curves, *, color=None, label=None, linestyle="-"):
    """Each seed's curve as a thin line and their mean as a thick one, on ``ax``.

    ``curves`` holds one sequence of values per seed; ``steps`` is their shared x (one
    sequence) or one x sequence per seed. Curves of different lengths (a run that stopped
    early) are averaged over the steps all of them reached. Returns ``(seed_lines,
    mean_line)``; ``label`` goes on the mean only, so a legend has one entry per arm.
    ``linestyle`` is the mean's (seeds stay thin solid lines): with more than four arms in
    a panel, give each its own (``LINESTYLES``; the figure standard).
    """
    curves = [list(c) for c in curves]
    if not curves:
        raise ValueError("curves must hold at least one seed's values")
    xs = [list(s) for s in steps] if _per_seed(steps) else [list(steps)] * len(curves)
    if len(xs) != len(curves) or any(len(x) != len(c) for x, c in zip(xs, curves)):
        raise ValueError("steps must match curves: one x per value (shared, or one x "
                         "sequence per seed)")
    seed_lines = []
    for x, c in zip(xs, curves):
        (line,) = ax.plot(x, c, color=color, **SEED_STYLE)
        color = line.get_color()                      # the axes' next colour when None
        seed_lines.append(line)
    n = min(len(c) for c in curves)
    mean = [sum(c[i] for c in curves) / len(curves) for i in range(n)]
    (mean_line,) = ax.plot(xs[0][:n], mean, color=color, label=label, ls=linestyle,
                           **MEAN_STYLE)
    return seed_lines, mean_line


def plot_seed_finals(ax, results, *, colors=None, width: float = 0.25):
    """Per-seed final values of several arms: each seed a dot, each arm's mean a short bar.

    ``results`` is ``{arm: [value of each seed]}`` (what ``Record.final`` and
    ``verdicts.evidence`` uses); arms go left to right at x = 0, 1, ... with their names as
    tick labels, and a seed's dot is shifted sideways by a fixed amount so equal values stay
    visible. Returns ``{arm: (seed_dots, mean_bar)}``.
    """
    if not results:
        raise ValueError("results must hold at least one arm")
    colors = list(colors) if colors is not None else CYCLE
    out = {}
    for i, (arm, values) in enumerate(results.items()):
        values = list(values)
        if not values:
            raise ValueError(f"arm {arm!r} has no values")
        color = colors[i % len(colors)]
        k = len(values)
        offsets = [0.0] if k == 1 else [width * (j / (k - 1) - 0.5) for j in range(k)]
        dots = [ax.plot(i + o, v, "o", color=color, ms=5, alpha=0.7)[0]
                for o, v in zip(offsets, values)]
        (bar,) = ax.plot([i - width * 0.8, i + width * 0.8], [sum(values) / k] * 2,
                         color=color, **MEAN_STYLE)
        out[arm] = (dots, bar)
    ax.set_xticks(range(len(results)), list(results))
    ax.set_xlim(-0.6, len(results) - 0.4)
    return out


def _per_seed(steps) -> bool:
    first = next(iter(steps), None)
    return first is not None and hasattr(first, "__len__")


# -- chapter 3: learning curves of several depths in one panel ------------------------------
#: Colours for many series in one panel: ``CYCLE`` reordered so that its two near pairs (blue
#: and sky blue, orange and vermillion) sit far apart; pair each with ``LINESTYLES``.
SERIES_COLORS = [CYCLE[i] for i in (0, 1, 2, 4, 3, 5, 7, 6)]
#: Seeds of a many-series panel: thin, but drawn strongly enough to be seen at the page's size.
SEED_VISIBLE = {"alpha": 0.55, "lw": 1.0}


def plot_depth_curves(ax, curves: dict) -> dict:
    """One learning curve per depth (or any ordered arm) on ``ax``, each seed thin and the
    mean thick (``plot_seed_curves``), the i-th series in ``SERIES_COLORS[i]`` and
    ``LINESTYLES[i]`` (mean and seeds), so that six depths stay apart in colour *and* style
    (the figure standard). ``curves`` is ``{label: (steps, [values of each seed])}`` in
    the order to draw. Returns ``{label: mean line}``."""
    if len(curves) > len(SERIES_COLORS):
        raise ValueError(f"at most {len(SERIES_COLORS)} series, got {len(curves)}")
    means = {}
    for (label, (steps, values)), color, ls in zip(curves.items(), SERIES_COLORS, LINESTYLES):
        seeds, means[label] = plot_seed_curves(ax, steps, values, color=color, label=label,
                                               linestyle=ls)
        plt.setp(seeds, linestyle=ls, **SEED_VISIBLE)
    return means


# -- chapter 3: two circuits for k hops ------------------------------------------------------
def plot_hop_circuit(ax, k: int, doubling: bool, color: str = CYCLE[0], start: str = "x",
                     step: str = "f") -> int:
    """Draw how a model can reach ``f^k(x)`` along x's chain x, f(x), ..., f^k(x) (the
    nodes, left to right, labelled ``start`` and ``step``'s powers) and return the number
    of layers the circuit uses on a table (chapter 3's induction task adds one: see
    ``tasks.chasing_depth``).

    Chasing (``doubling=False``): one arc per layer, each from the node the last layer
    found: k layers. Doubling (``True``, k a power of two): the table gives every node its
    jump of 1; round r gives every node its jump of 2^r by reading where its jump of
    2^(r-1) lands. All jumps are drawn thin, the ones x's answer is built from thick.
    log2(k) rounds, plus one layer for the query to read x's result: log2(k) + 1."""
    if doubling and k & (k - 1):
        raise ValueError(f"k must be a power of two for the doubling drawing, got {k}")
    ax.scatter(range(k + 1), [0] * (k + 1), s=60, color="k", zorder=3)
    for i in range(k + 1):
        ax.annotate(f"${start}$" if i == 0 else f"${step}^{{{i}}}$", (i, 0), (0, -10),
                    textcoords="offset points", ha="center", va="top", fontsize=9)
    jumps = [1] if not doubling else [2 ** r for r in range(k.bit_length())]
    for jump in jumps:
        for s in range(0, k + 1 - jump):
            if not doubling and s % jump:
                continue
            used = s % jump == 0
            ax.annotate("", (s + jump, 0), (s, 0), arrowprops=dict(
                arrowstyle="-|>", color=color, lw=1.8 if used else 0.5,
                alpha=1.0 if used else 0.3, shrinkA=4, shrinkB=4,
                connectionstyle="arc3,rad=-0.45"))
    ax.set_xlim(-0.5, k + 0.5)
    ax.set_ylim(-0.9, 0.3 + 0.25 * k)
    ax.axis("off")
    return k if not doubling else len(jumps)


# -- chapter 8: looped vs distinct blocks --------------------------------------------------
#: One colour, line style and marker per kind of stack in chapter 8's X1 figures (the kinds
#: of ``verdicts.ch8_depth.loop_arms``), so the three stay apart without colour.
LOOP_COLORS = {DISTINCT: CYCLE[0], LOOPED: CYCLE[1], ONCE: CYCLE[7]}
LOOP_STYLES = {DISTINCT: "-", LOOPED: "--", ONCE: ":"}
LOOP_MARKERS = {DISTINCT: "o", LOOPED: "s", ONCE: "^"}


def plot_loop_grid(ax, test) -> dict:
    """X1's learning-rate grid on ``ax`` from a ``verdicts.ch8_depth.LoopedTest``: the
    judged hop count's accuracy against the learning rate, each seed a small mark (a diverged
    seed at ``evidence.DIVERGED_ACCURACY``), each kind's mean a line, and the best rate
    the verdict uses ringed. Returns ``{kind: mean line}``."""
    lines = {}
    for kind, by_rate in test.grid.items():
        color, marker = LOOP_COLORS[kind], LOOP_MARKERS[kind]
        rates = list(by_rate)
        scored = test.scored(kind)
        for lr, values in scored.items():
            ax.plot([lr] * len(values), values, marker, color=color, ms=3.5, alpha=0.45)
        means = [sum(v) / len(v) for v in scored.values()]
        (lines[kind],) = ax.plot(rates, means, color=color, ls=LOOP_STYLES[kind],
                                 marker=marker, label=kind, **MEAN_STYLE)
        best = test.picks[kind].best
        ax.plot([best], [test.at_best[kind].mean], "o", ms=12, mfc="none", mec=color, mew=1.5)
    ax.set_xscale("log")
    rates = sorted({lr for by_rate in test.grid.values() for lr in by_rate})
    ax.set_xticks(rates, [f"{lr:g}" for lr in rates])
    ax.minorticks_off()
    ax.set(xlabel="peak learning rate (ringed: each kind's best)",
           ylabel=f"{test.k}-hop accuracy", ylim=(0, 1.02))
    ax.legend(loc="lower left")
    return lines


def plot_loop_rate_curves(ax, curves: dict, lr: float, k: int) -> dict:
    """Each seed's ``k``-hop accuracy during training of every kind run at ``lr``, on ``ax``
    (``curves``: ``verdicts.ch8_depth.loop_rate_curves``). Returns ``{kind: mean line}``."""
    means = {}
    for kind, (steps, values) in curves.items():
        means[kind] = plot_seed_curves(ax, steps, values, color=LOOP_COLORS[kind], label=kind,
                                       linestyle=LOOP_STYLES[kind])[1]
    ax.set(title=f"learning rate {lr:g}, k = {k}", xlabel="training step",
           ylabel=f"{k}-hop accuracy", ylim=(0, 1.02))
    ax.legend(loc="lower right")
    return means
