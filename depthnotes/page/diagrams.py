"""The book's diagrams, drawn with matplotlib in the house style (``plots``) so that they meet
the figure standard (``standard``) like every measured figure: one function per diagram, each
returning its figure.

- :func:`draw_residual_stream`: the residual stream as a shared workspace that every block
  reads and adds to (chapter 4);
- :func:`draw_norm_placements`: one residual sublayer under post-norm, pre-norm and DeepNorm
  side by side: where the LayerNorm sits, the residual path, DeepNorm's alpha on the residual
  and beta on the branch's init (chapter 4; chapter 5's fixes).

The diagrams hold no measured numbers: only symbols and the formulas of ``core.model`` and
``core.config.deepnorm_constants``. Each label is a :class:`matplotlib.text.Text` whose
``gid`` names what it marks (``"ln"``, ``"alpha"``, ``"beta"``, ``"add"``, ...), so a test can
find where a diagram puts each part.
"""

from __future__ import annotations

from matplotlib.patches import FancyArrowPatch, FancyBboxPatch

from depthnotes.page.plots import CYCLE, NORM_COLORS, finding, new_figure

#: The three placements, left to right, with the names the chapters use.
PLACEMENTS = ("post", "pre", "deepnorm")
PLACEMENT_NAMES = {"post": "post-norm", "pre": "pre-norm", "deepnorm": "DeepNorm"}
#: Each placement's sublayer as ``core.model`` computes it (F: attention or the MLP).
FORMULAS = {"post": r"$x_{l+1} = \mathrm{LN}(x_l + F(x_l))$",
            "pre": r"$x_{l+1} = x_l + F(\mathrm{LN}(x_l))$",
            "deepnorm": r"$x_{l+1} = \mathrm{LN}(\alpha\, x_l + F(x_l))$"}

#: The smallest text the diagrams use, points (9.5 pt reads as 10.9 pt in the page's column).
TEXT_PT = 9.5
STREAM = "#404040"          # the residual path: dark grey, thick
BRANCH = "#808080"          # the branch: grey, thin
#: The box of the residual stream in the workspace diagram (a light tint of the pre-norm blue).
STREAM_FILL = "#D6E6F2"


def _box(ax, x, y, text, *, gid, color="white", edge=STREAM, w=1.9, h=1.1, size=TEXT_PT,
         weight="normal", text_color="black"):
    """A rounded box centred at (x, y) with ``text`` in it; returns the text."""
    ax.add_patch(FancyBboxPatch((x - w / 2, y - h / 2), w, h, boxstyle="round,pad=0.08",
                                fc=color, ec=edge, lw=1.2, zorder=3))
    return ax.text(x, y, text, ha="center", va="center", fontsize=size, zorder=4,
                   weight=weight, color=text_color, gid=gid)


def _arrow(ax, points, *, color=BRANCH, lw=1.3, head=True):
    """A polyline through ``points`` with an arrow head at its end."""
    for (x0, y0), (x1, y1) in zip(points[:-2], points[1:-1]):
        ax.plot([x0, x1], [y0, y1], color=color, lw=lw, solid_capstyle="butt", zorder=1)
    (x0, y0), (x1, y1) = points[-2], points[-1]
    ax.add_patch(FancyArrowPatch((x0, y0), (x1, y1), arrowstyle="-|>" if head else "-",
                                 mutation_scale=11, color=color, lw=lw, shrinkA=0, shrinkB=0,
                                 zorder=2))


def _add(ax, x, y, gid="add"):
    """The ⊕ where the branch is added to the residual path."""
    ax.add_patch(FancyBboxPatch((x - 0.42, y - 0.42), 0.84, 0.84, boxstyle="circle,pad=0",
                                fc="white", ec=STREAM, lw=1.3, zorder=3))
    return ax.text(x, y - 0.03, "+", ha="center", va="center", fontsize=11, weight="bold",
                   zorder=4, gid=gid)


def _placement(ax, norm: str) -> None:
    """One residual sublayer of ``norm`` ("post", "pre" or "deepnorm"), bottom to top, on
    ``ax``: the residual path on the left (x = 2.5), the branch on the right (x = 7)."""
    sx, bx = 2.5, 7.0                       # the stream's and the branch's x
    color = NORM_COLORS[norm]
    add_y = 8.6
    ax.text(sx, 0.3, r"$x_l$", ha="center", va="center", fontsize=TEXT_PT + 1.5, gid="input")
    ax.text(sx, 13.8, r"$x_{l+1}$", ha="center", va="bottom", fontsize=TEXT_PT + 1.5,
            gid="output")
    # the branch leaves the stream at y = 2, runs up the right and comes back into the add
    split = 2.0
    ax.plot([sx, bx], [split, split], color=BRANCH, lw=1.3, zorder=1)
    if norm == "pre":
        _arrow(ax, [(bx, split), (bx, 3.3)])
        _box(ax, bx, 3.9, "LN", gid="ln", color=color, edge=color, weight="bold",
             text_color="white")
        _arrow(ax, [(bx, 4.5), (bx, 5.7)])
        _box(ax, bx, 6.3, "F", gid="branch")
        _arrow(ax, [(bx, 6.9), (bx, add_y), (sx + 0.45, add_y)])
        # the identity path: nothing on the stream between x_l and x_{l+1} but the add
        _arrow(ax, [(sx, 0.7), (sx, add_y - 0.45)], color=color, lw=3.2)
        _arrow(ax, [(sx, add_y + 0.45), (sx, 13.7)], color=color, lw=3.2)
        ax.text(sx - 0.45, 5.0, "identity path", rotation=90, ha="right", va="center",
                fontsize=TEXT_PT, color=color, gid="identity")
    else:
        _arrow(ax, [(bx, split), (bx, 4.7)])
        _box(ax, bx, 5.3, "F", gid="branch")
        if norm == "deepnorm":
            ax.text(bx - 0.35, 3.3, "init\n" r"$\times\beta$", ha="right", va="center",
                    fontsize=TEXT_PT, color=color, weight="bold", gid="beta")
        _arrow(ax, [(bx, 5.9), (bx, add_y), (sx + 0.45, add_y)])
        if norm == "deepnorm":
            _arrow(ax, [(sx, 0.7), (sx, 4.7)], color=STREAM, lw=3.2)
            _box(ax, sx, 5.3, r"$\times\alpha$", gid="alpha", color=color, edge=color,
                 text_color="white", weight="bold", w=1.7)
            _arrow(ax, [(sx, 5.9), (sx, add_y - 0.45)], color=STREAM, lw=3.2)
        else:
            _arrow(ax, [(sx, 0.7), (sx, add_y - 0.45)], color=STREAM, lw=3.2)
        _arrow(ax, [(sx, add_y + 0.45), (sx, 10.3)], color=STREAM, lw=3.2)
        _box(ax, sx, 10.9, "LN", gid="ln", color=color, edge=color, weight="bold",
             text_color="white")
        _arrow(ax, [(sx, 11.5), (sx, 13.7)], color=STREAM, lw=3.2)
    _add(ax, sx, add_y)
    if norm == "deepnorm":
        ax.text(5.0, -1.3, r"$\alpha = (2L)^{1/4}$ up-weights the residual" "\n"
                r"$\beta = (8L)^{-1/4}$ shrinks F's init", ha="center", va="top",
                fontsize=TEXT_PT, gid="constants")
    ax.text(5.0, -0.6 if norm == "deepnorm" else -0.9, FORMULAS[norm], ha="center",
            va="center", fontsize=TEXT_PT, gid="formula")
    ax.set_title(PLACEMENT_NAMES[norm] + (" (chapter 5)" if norm == "deepnorm" else ""),
                 color=color, fontsize=TEXT_PT + 1.5)
    ax.set_xlim(0, 10)
    ax.set_ylim(-3.6, 15.2)
    ax.axis("off")


def draw_norm_placements():
    """One residual sublayer (F: attention or the MLP) under post-norm, pre-norm and DeepNorm,
    side by side, each with its formula; returns the figure.

    Post-norm normalises the stream after the add; pre-norm normalises only the branch's copy,
    so the residual path from ``x_l`` to ``x_{l+1}`` is the identity; DeepNorm is post-norm
    with the residual multiplied by alpha and the branch's initial weights (W_V, W_O and the
    FFN's) by beta, DeepNet's constants (``core.config.deepnorm_constants``).
    """
    fig, axes = new_figure(ncols=3, per_row=3, height=4.3)
    for ax, norm in zip(axes, PLACEMENTS):
        _placement(ax, norm)
    finding(fig, "Only pre-norm leaves the residual path untouched; post-norm and DeepNorm "
                 "normalise the stream itself")
    return fig


def draw_residual_stream():
    """The residual stream as a shared workspace: the embedding writes it, every block reads
    it (through its LayerNorm) and adds its output to it, and the head reads what the blocks
    have added; drawn for pre-norm, ``x_L = x_0 + F_1 + ... + F_L``. Returns the figure."""
    fig, (ax,) = new_figure(height=2.9)
    y0, y1 = 1.6, 2.6                                   # the stream's band
    ax.add_patch(FancyBboxPatch((1.6, y0), 15.4, y1 - y0, boxstyle="round,pad=0.05",
                                fc=STREAM_FILL, ec=NORM_COLORS["pre"], lw=1.2, zorder=0))
    ax.text(9.3, (y0 + y1) / 2, "residual stream: d numbers per position",
            ha="center", va="center", fontsize=TEXT_PT, gid="stream")
    _box(ax, 0.55, 2.1, "embed-\nding", gid="embedding", w=1.9, h=1.6)
    _arrow(ax, [(1.55, 2.1), (1.75, 2.1)], color=STREAM, lw=2)
    ax.text(0.55, 0.6, r"writes $x_0$", ha="center", va="center", fontsize=TEXT_PT)
    _box(ax, 19.0, 2.1, "LN,\nhead", gid="head", w=1.7, h=1.6)
    _arrow(ax, [(16.9, 2.1), (18.1, 2.1)], color=STREAM, lw=2)
    ax.text(19.0, 0.6, r"reads $x_L$", ha="center", va="center", fontsize=TEXT_PT)
    for x, name in ((4.2, "block 1"), (8.4, "block 2"), (14.2, "block L")):
        _box(ax, x, 5.0, name, gid="block", w=2.6, h=1.0)
        _arrow(ax, [(x - 1.0, y1), (x - 1.0, 4.45)], color=CYCLE[0], lw=1.5)
        _arrow(ax, [(x + 1.0, 4.45), (x + 1.0, y1)], color=CYCLE[1], lw=1.5)
        if name != "block 2":               # labelled once at each end: they would touch
            ax.text(x - 1.15, 3.5, "read", ha="right", va="center", fontsize=TEXT_PT,
                    color=CYCLE[0], gid="read")
            ax.text(x + 1.15, 3.5, "add", ha="left", va="center", fontsize=TEXT_PT,
                    color="#9A6A00", gid="add")
    ax.text(11.3, 5.0, r"$\cdots$", ha="center", va="center", fontsize=TEXT_PT + 2)
    ax.text(9.3, 0.35, r"$x_L = x_0 + F_1 + F_2 + \cdots + F_L$: nothing a block adds is "
            "overwritten", ha="center", va="center", fontsize=TEXT_PT, gid="sum")
    ax.set_xlim(-0.6, 20.1)
    ax.set_ylim(-0.3, 6.0)
    ax.axis("off")
    finding(fig, "Every block reads the same stream and adds its output to it")
    return fig
