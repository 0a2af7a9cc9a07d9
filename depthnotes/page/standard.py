"""The figure standard: what a figure must be at the size the website shows it, and the
measurement that checks it.

The site's text column is :data:`COLUMN_PX` CSS pixels wide at a 1300 px window (measured
in Chromium on the built site: ``article img`` elements are at most 688 px wide). A figure
PNG wider than the column is scaled down to it, and its text with it. The standard:

- **no downscaling below** :data:`MIN_SCALE` (90 %): a figure is at most
  ``COLUMN_PX / MIN_SCALE`` pixels wide, so it is drawn for the column, not shrunk into it;
- **text at least** :data:`MIN_DISPLAYED_PT` (9 pt) **as displayed**: every visible text of
  the figure (titles, labels, tick labels, legends, annotations), after that scaling. A font
  of ``s`` points drawn at ``dpi`` is ``s * dpi / 72`` pixels in the PNG, shown at
  ``scale = min(1, COLUMN_PX / png_width)``; a CSS pixel is 0.75 pt, so it reads as
  ``s * dpi / 72 * scale * 0.75`` pt (:func:`displayed_pt`);
- **more than four series in a panel** (legend entries) differ in line style or marker, not
  in colour alone, or are labelled directly (no legend);
- seeds thin and the mean bold (``plots.plot_seed_curves``), panels stacked rather than
  squeezed and a shared y-range where panels are compared (``plots.new_figure``), a
  colour-blind-safe palette (``plots.CYCLE``, Okabe & Ito).

How it is checked: :func:`install_png_formatter` (called by ``plots.use_house_style``)
makes Jupyter render every figure through :func:`render_png`, which measures the figure
while it draws it (:func:`figure_facts`: the smallest font of any visible text, the dpi,
the PNG's pixel size, every legend) and stores those facts in the output's metadata
under ``"depthnotes"``. "Any visible text" and "every legend" are found the same way, by
walking the figure's artists (``Figure.findobj``): a panel's texts and legend, and the
figure's own (``fig.legend``, ``suptitle``, ``supxlabel``, ``fig.text``, subfigures'), so a
key shared by several panels is measured and counted like a panel's.
``tests/test_figures.py`` reads every stored figure of every chapter, checks that the facts
belong to that PNG (its stored size equals the PNG's real size) and applies
:func:`problems` to them. A figure drawn without the house style has no
facts and fails too.
"""

from __future__ import annotations

import base64
import io
import struct

#: Width of the site's text column, CSS px, at a 1300 px window (Chromium, sphinx-book-theme).
COLUMN_PX = 688
#: A figure may be scaled down to no less than this fraction of its pixel width.
MIN_SCALE = 0.9
#: The smallest text size a reader sees on the page, in points (1 CSS px = 0.75 pt).
MIN_DISPLAYED_PT = 9.0
#: More series than this in one panel need line styles or markers besides colour.
MAX_COLOUR_ONLY_SERIES = 4
#: The key under which a figure's facts are stored in its output's ``image/png`` metadata.
META_KEY = "depthnotes"


def displayed_scale(png_width: int, column: int = COLUMN_PX) -> float:
    """The fraction of its pixel width a PNG of ``png_width`` px is shown at in the column."""
    if png_width <= 0:
        raise ValueError(f"png_width must be positive, got {png_width}")
    return min(1.0, column / png_width)


def displayed_pt(font_pt: float, dpi: float, png_width: int, column: int = COLUMN_PX) -> float:
    """The size in points, as the page shows it, of a ``font_pt`` font drawn at ``dpi`` in a
    figure whose PNG is ``png_width`` pixels wide (see the module's docstring)."""
    return font_pt * dpi / 72 * displayed_scale(png_width, column) * 0.75


def png_size(png: bytes) -> tuple[int, int]:
    """(width, height) in pixels, read from a PNG's header."""
    if png[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG (the signature is missing)")
    return struct.unpack(">II", png[16:24])


def _visible_texts(fig):
    """Every text of ``fig`` that is drawn: non-empty and visible, and of the tick labels
    only those of ticks inside the view (matplotlib keeps spare tick objects)."""
    from matplotlib.text import Text

    shown, all_ticks = set(), set()
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            shown.update(id(t) for t in axis.get_ticklabels(which="both")
                         if axis.get_visible())
            for tick in axis.get_major_ticks() + axis.get_minor_ticks():
                all_ticks.update((id(tick.label1), id(tick.label2)))
    found = []
    for t in fig.findobj(Text):
        if not t.get_text().strip() or not t.get_visible() or t.get_alpha() == 0:
            continue
        if id(t) in all_ticks and id(t) not in shown:
            continue
        found.append(t)
    return found


def _legend_facts(legend, fig) -> dict:
    """One drawn legend (a panel's or the figure's): where it is, how many series it labels
    and whether they differ in line style, marker or hatch (not colour alone)."""
    if not legend.isaxes:
        where = "the figure's legend"
    else:
        where = (f"panel {fig.axes.index(legend.axes) + 1}" if legend.axes in fig.axes
                 else "a panel")
    handles = legend.legend_handles
    styles = []
    for h in handles:
        ls = h.get_linestyle() if hasattr(h, "get_linestyle") else None
        if ls in ("--", "-.", ":") and getattr(h, "_dash_pattern", None):
            ls = repr(h._dash_pattern[1])       # a custom dash reports itself as "--"
        marker = h.get_marker() if hasattr(h, "get_marker") else None
        hatch = h.get_hatch() if hasattr(h, "get_hatch") else None
        styles.append((str(ls), str(marker), str(hatch)))
    return {"where": where, "legend_entries": len(handles),
            "styles_distinct": len(set(styles)) == len(styles)}


def _drawn_legends(fig) -> list:
    """Every legend of ``fig`` that is drawn: visible, and so is what holds it (a panel, the
    figure or a subfigure), whether made by ``ax.legend`` or ``fig.legend``."""
    from matplotlib.legend import Legend

    return [lg for lg in fig.findobj(Legend)
            if lg.get_visible() and lg.parent.get_visible()]


def figure_facts(fig, png: bytes) -> dict:
    """What the standard checks about ``fig``, drawn as ``png`` (measured, not declared)."""
    texts = _visible_texts(fig)
    fonts = sorted({round(float(t.get_fontsize()), 2) for t in texts})
    width, height = png_size(png)
    smallest = min(texts, key=lambda t: t.get_fontsize()) if texts else None
    return {
        "dpi": float(fig.dpi),
        "png_px": [width, height],
        "min_font_pt": fonts[0] if fonts else None,
        "smallest_text": smallest.get_text()[:40] if smallest is not None else None,
        "legends": [_legend_facts(lg, fig) for lg in _drawn_legends(fig)],
        "titles": [t for t in [fig._suptitle.get_text() if fig._suptitle else ""]
                   + [ax.get_title() for ax in fig.axes] if t.strip()],
    }


def render_png(fig) -> tuple[bytes, dict]:
    """``fig`` as the PNG Jupyter shows (tight bounding box, the figure's dpi) and its facts."""
    buf = io.BytesIO()
    fig.canvas.print_figure(buf, format="png", dpi=fig.dpi, bbox_inches="tight",
                            facecolor=fig.get_facecolor(), edgecolor=fig.get_edgecolor())
    png = buf.getvalue()
    return png, figure_facts(fig, png)


def _png_formatter(fig):
    if not fig.axes and not fig.lines:
        return None
    png, facts = render_png(fig)
    return base64.b64encode(png).decode("ascii"), {META_KEY: facts}


def install_png_formatter() -> bool:
    """Make the running IPython kernel render figures with :func:`render_png` and store their
    facts in the output's metadata. Returns False outside IPython (nothing to do)."""
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    shell = get_ipython()
    if shell is None:
        return False
    import matplotlib.pyplot as plt
    from matplotlib.figure import Figure

    # Load the backend now (the inline backend registers its own figure formatters when it
    # loads, which would replace this one); unlike switch_backend, this closes no figure.
    getattr(plt, "_get_backend_mod", lambda: None)()
    formatters = shell.display_formatter.formatters
    formatters["image/png"].for_type(Figure, _png_formatter)
    for mime in ("image/svg+xml", "image/jpeg", "application/pdf"):
        formatters[mime].pop(Figure, None)
    return True


def problems(facts: dict | None, png_width: int, png_height: int,
             column: int = COLUMN_PX) -> list[str]:
    """Where a figure with these stored ``facts``, whose PNG is ``png_width`` x
    ``png_height``, misses the standard (empty: it meets it)."""
    if not facts:
        return ["no measured facts in its metadata: drawn without plots.use_house_style()"]
    if list(facts.get("png_px", [])) != [png_width, png_height]:
        return [f"its stored facts describe a {facts.get('png_px')} px image, not this "
                f"{png_width} x {png_height} PNG"]
    found = []
    if not facts.get("titles"):
        found.append("no title (a figure's title states its finding: plots.finding)")
    scale = displayed_scale(png_width, column)
    if scale < MIN_SCALE:
        found.append(f"{png_width} px wide, shown at {scale:.0%} in the {column} px column "
                     f"(at least {MIN_SCALE:.0%}: at most {column / MIN_SCALE:.0f} px)")
    if facts.get("min_font_pt") is not None:
        pt = displayed_pt(facts["min_font_pt"], facts["dpi"], png_width, column)
        if pt < MIN_DISPLAYED_PT - 1e-9:
            found.append(f"smallest text ({facts['min_font_pt']:g} pt at {facts['dpi']:g} dpi, "
                         f"{facts.get('smallest_text')!r}) reads as {pt:.1f} pt on the page "
                         f"(at least {MIN_DISPLAYED_PT:g})")
    legends = facts.get("legends")
    if legends is None:     # facts stored before figure-level legends were measured
        legends = [dict(p, where=f"panel {i + 1}") for i, p in enumerate(facts.get("panels", []))]
    for legend in legends:
        if (legend["legend_entries"] > MAX_COLOUR_ONLY_SERIES
                and not legend["styles_distinct"]):
            found.append(f"{legend['where']}: {legend['legend_entries']} series told apart by "
                         "colour alone (use line styles or markers, or label them directly)")
    return found
