"""The house style for the book's figures, and small helpers the chapters share.

A figure in this book has a title that states its finding, labelled axes with units, and a
caption and alt text given in the notebook cell's metadata. Colours are fixed per norm
placement so a reader can follow "post", "pre" and "deepnorm" across chapters.
"""

from __future__ import annotations

import matplotlib as mpl
import matplotlib.pyplot as plt

#: One colour per norm placement, the same in every chapter.
NORM_COLORS = {"post": "#c0392b", "pre": "#2471a3", "deepnorm": "#1e8449"}
#: A colour-blind-safe cycle (Okabe & Ito) for everything else.
CYCLE = ["#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000"]


def use_house_style() -> None:
    """Set matplotlib's defaults for the book: readable at the page's width, no clutter."""
    mpl.rcParams.update({
        "figure.figsize": (6.4, 3.8),
        "figure.dpi": 110,
        "savefig.dpi": 110,
        "figure.autolayout": True,
        "axes.prop_cycle": mpl.cycler(color=CYCLE),
        "axes.spines.top": False,
        "axes.spines.right": False,
        "axes.grid": True,
        "grid.alpha": 0.3,
        "axes.titlesize": 11,
        "axes.titleweight": "bold",
        "axes.labelsize": 10,
        "legend.fontsize": 9,
        "legend.frameon": False,
        "font.size": 10,
    })


def new_figure(ncols: int = 1, width: float | None = None, height: float = 3.8):
    """A figure with ``ncols`` axes side by side, sized for the page."""
    width = width if width is not None else (6.4 if ncols == 1 else 4.2 * ncols)
    fig, axes = plt.subplots(1, ncols, figsize=(width, height), squeeze=False)
    return fig, list(axes[0])


def fmt_millions(n: float) -> str:
    """125_000_000 -> '125.0M' (for tick labels and annotations)."""
    return f"{n / 1e6:.1f}M"
