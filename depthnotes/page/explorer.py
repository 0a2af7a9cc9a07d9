"""Explorers that work twice: live in Jupyter, and on the static website without a kernel.

An :class:`Explorer` is a small grid of control values (:class:`Control`: a slider or a
choice) and a ``render`` function that turns one point of the grid into what the reader
sees: a string (shown as text) or a matplotlib figure (shown as a PNG). When the notebook
runs, the explorer renders **every point of the grid once** (its frames) and displays a single
output whose mime bundle carries two views of the same frames:

- ``application/vnd.jupyter.widget-view+json``: an ipywidgets ``interactive`` whose controls
  take the grid's values and show the matching precomputed frame. JupyterLab and Jupyter
  prefer this type, so there the explorer is a widget, as before;
- ``text/html``: one self-contained block with every frame (figures as inline base64 PNGs,
  text in ``<pre>``), native controls (``<input type=range>``, ``<select>``) and a short
  inline script that shows the frame the controls point at. The site's build prefers this
  type for the ``html`` builder (``nb_mime_priority_overrides`` in ``_config.yml``), so the
  page needs no kernel, no widget manager and no network. Without scripts the page still
  shows the starting frame.

Why our own ~100 lines and not a plotting library with self-contained figures: Plotly's
offline HTML embeds its JavaScript bundle (several MB) in each page or loads it from a CDN;
Bokeh and Vega-Lite/Altair need their runtimes (hundreds of kB of JavaScript each) served
with the site, pinned and integrity-checked as ``tools/assets.py`` does for MathJax; and every
explorer's figure would have to be re-drawn in that library instead of the book's matplotlib
house style (``plots``). Precomputed frames reuse the house figures unchanged, the bytes are
only the frames themselves, and what the page shows is exactly what the notebook computed.
The price: the site offers the grid's points, not every value in between, so grids are kept
small. Measured on the built site (page bytes added): chapter 1's calculator ~0.44 MB
(1,152 text frames), the variance explorer ~0.40 MB on each of chapters 4 and 5 (30 PNGs),
chapter 6's budget explorer ~0.02 MB (25 text frames).

Frames are PNGs reduced to a 128-colour palette: the house figures are flat colours and
antialiased lines, and the palette cuts a variance frame from 27 kB to 10 kB with no visible
change.

Figure frames meet the figure standard (``depthnotes.page.standard``) like the page's other
figures: :func:`figure_frame` draws a frame with ``standard.render_png``, which measures it,
and the explorer's output stores each frame's facts in its ``text/html`` metadata
(``Explorer._repr_mimebundle_``; read back by :func:`stored_frames`). A frame is shown in
the explorer's box, whose padding and border leave :data:`FRAME_COLUMN_PX` of the column, so
that is the width its text is judged at (``tests/test_figures.py``).
"""

from __future__ import annotations

import base64
import hashlib
import html
import io
import itertools
import json
from dataclasses import dataclass, field
from typing import Callable

#: Colours a frame's PNG is reduced to (see the module's docstring).
PNG_COLOURS = 128
#: The width a frame is shown at most, CSS px: the explorer box's content width on the built
#: site at a 1300 px window (Chromium: the box is 704 px wide, less 2 x 12 px padding and
#: 2 x 1 px border; ``standard.COLUMN_PX`` is the page's figures').
FRAME_COLUMN_PX = 678

#: The inline script of one explorer (``__ID__`` is replaced by its element's id). Controls
#: carry ``data-n`` (how many values) and ``data-labels``; frames come in row-major order of
#: the controls, first control slowest.
_SCRIPT = """(function(){var r=document.getElementById("__ID__");if(!r)return;
var cs=[].slice.call(r.querySelectorAll("[data-dn-control]")),
fs=r.querySelectorAll("[data-dn-frame]");
function show(){var i=0;cs.forEach(function(c){var v=+c.value;i=i*(+c.getAttribute("data-n"))+v;
var o=r.querySelector('output[for="'+c.id+'"]');
if(o)o.textContent=JSON.parse(c.getAttribute("data-labels"))[v];});
for(var j=0;j<fs.length;j++)fs[j].hidden=(j!==i);r.setAttribute("data-dn-shown",i);}
cs.forEach(function(c){c.addEventListener("input",show);c.addEventListener("change",show);});
show();})();"""

_STYLE = ("border:1px solid #ddd;border-radius:4px;padding:.5em .75em;margin:.5em 0;"
          "max-width:100%")


@dataclass(frozen=True)
class Control:
    """One control of an explorer: the keyword ``name`` of its render function, the
    ``label`` shown beside it, the grid ``values`` it offers and the starting ``value``.
    ``kind`` is ``"slider"`` (ordered values) or ``"select"`` (a choice); ``labels``, if
    given, are what the reader sees for each value (default ``str(value)``)."""

    name: str
    label: str
    values: tuple
    value: object = None
    kind: str = "slider"
    labels: tuple | None = None

    def __post_init__(self):
        values = tuple(self.values)
        object.__setattr__(self, "values", values)
        if not values:
            raise ValueError(f"control {self.name!r} has no values")
        if self.value is None:
            object.__setattr__(self, "value", values[0])
        if self.value not in values:
            raise ValueError(f"control {self.name!r}: start {self.value!r} is not one of {values}")
        if self.kind not in ("slider", "select"):
            raise ValueError(f"control {self.name!r}: kind must be 'slider' or 'select'")
        labels = tuple(str(v) for v in values) if self.labels is None else tuple(self.labels)
        if len(labels) != len(values):
            raise ValueError(f"control {self.name!r}: {len(labels)} labels for "
                             f"{len(values)} values")
        object.__setattr__(self, "labels", labels)

    @property
    def start(self) -> int:
        return self.values.index(self.value)


@dataclass
class Frame:
    """What one grid point shows: ``text``, or a PNG with its alt text."""

    text: str | None = None
    png: bytes | None = None
    alt: str = ""
    size: tuple[int, int] | None = None
    #: What ``standard.render_png`` measured while drawing the frame (a figure frame only).
    facts: dict | None = None


def _small_png(png: bytes) -> bytes:
    """``png`` reduced to :data:`PNG_COLOURS` colours (smaller when that is smaller)."""
    from PIL import Image

    img = Image.open(io.BytesIO(png)).convert("RGB")
    buf = io.BytesIO()
    img.quantize(colors=PNG_COLOURS).save(buf, format="PNG", optimize=True)
    return buf.getvalue() if len(buf.getvalue()) < len(png) else png


def figure_frame(fig, alt: str | None = None) -> Frame:
    """A matplotlib figure as a frame (the PNG the house style renders, and what the figure
    standard measures of it; the figure is closed). ``alt`` defaults to the figure's title
    (suptitle, else its first panel's)."""
    import matplotlib.pyplot as plt

    from depthnotes.page.standard import png_size, render_png

    png, facts = render_png(fig)
    if alt is None:
        alt = fig.get_suptitle() or (fig.axes[0].get_title() if fig.axes else "")
    plt.close(fig)
    small = _small_png(png)
    return Frame(png=small, alt=" ".join(alt.split()), size=png_size(small), facts=facts)


def _as_frame(out) -> Frame:
    if isinstance(out, Frame):
        return out
    if isinstance(out, str):
        return Frame(text=out)
    return figure_frame(out)


@dataclass
class Explorer:
    """Controls over a grid and the frames ``render(**point)`` gives at every point of it,
    rendered when the explorer is made. Displayed in Jupyter it is an ipywidgets explorer;
    its ``text/html`` (:meth:`to_html`) is the same explorer for the static site."""

    title: str
    controls: list[Control]
    render: Callable
    frames: list[Frame] = field(init=False)

    def __post_init__(self):
        names = [c.name for c in self.controls]
        if len(set(names)) != len(names):
            raise ValueError(f"duplicate control names: {names}")
        self.frames = [_as_frame(self.render(**dict(zip(names, point))))
                       for point in itertools.product(*(c.values for c in self.controls))]
        self._widget = None

    # -- the grid
    def index(self, **point) -> int:
        """The frame number of a grid point (row-major, first control slowest)."""
        i = 0
        for c in self.controls:
            i = i * len(c.values) + c.values.index(point[c.name])
        return i

    def frame(self, **point) -> Frame:
        return self.frames[self.index(**point)]

    # -- the static view
    @property
    def element_id(self) -> str:
        """A stable id (a hash of the explorer's content): the same notebook run twice gives
        the same html, and two explorers on one page never share an id."""
        h = hashlib.sha1(self.title.encode())
        for f in self.frames:
            h.update(f.png or (f.text or "").encode())
        return "dn-explorer-" + h.hexdigest()[:10]

    def to_html(self) -> str:
        """The explorer as one self-contained block of HTML (see the module's docstring)."""
        eid = self.element_id
        start = self.index(**{c.name: c.value for c in self.controls})
        parts = [f'<div class="dn-explorer" id="{eid}" data-dn-shown="{start}" '
                 f'style="{_STYLE}">',
                 f'<p class="dn-explorer-title" style="margin:0 0 .4em;font-weight:600">'
                 f'{html.escape(self.title)}</p>',
                 '<div class="dn-explorer-controls" style="display:flex;flex-wrap:wrap;'
                 'gap:.4em 1.5em;margin-bottom:.5em">']
        for k, c in enumerate(self.controls):
            cid = f"{eid}-{k}"
            common = (f'id="{cid}" data-dn-control data-n="{len(c.values)}" '
                      f"data-labels='{html.escape(json.dumps(c.labels), quote=True)}'")
            label = f'<label for="{cid}" style="margin-right:.4em">{html.escape(c.label)}</label>'
            if c.kind == "slider":
                ctl = (f'<input type="range" {common} min="0" max="{len(c.values) - 1}" '
                       f'step="1" value="{c.start}" style="vertical-align:middle">'
                       f'<output for="{cid}" style="margin-left:.4em;font-variant-numeric:'
                       f'tabular-nums">{html.escape(c.labels[c.start])}</output>')
            else:
                opts = "".join(f'<option value="{i}"{" selected" if i == c.start else ""}>'
                               f"{html.escape(lab)}</option>" for i, lab in enumerate(c.labels))
                ctl = f"<select {common}>{opts}</select>"
            parts.append(f'<span class="dn-explorer-control">{label}{ctl}</span>')
        parts.append("</div>")
        for i, f in enumerate(self.frames):
            hidden = "" if i == start else " hidden"
            if f.png is not None:
                b64 = base64.b64encode(f.png).decode()
                w = f' width="{f.size[0]}"' if f.size else ""
                parts.append(f'<img data-dn-frame{hidden}{w} alt="{html.escape(f.alt)}" '
                             f'style="max-width:100%;height:auto" '
                             f'src="data:image/png;base64,{b64}">')
            else:
                parts.append(f'<pre data-dn-frame{hidden} style="margin:0">'
                             f"{html.escape(f.text or '')}</pre>")
        parts.append(f"<script>{_SCRIPT.replace('__ID__', eid)}</script></div>")
        return "\n".join(parts)

    # -- the live view
    def widget(self):
        """The ipywidgets view: the same controls over the same grid, each showing its
        precomputed frame (made once, on first use)."""
        if self._widget is None:
            import ipywidgets as w
            from IPython.display import Image, display

            def show(**point):
                f = self.frame(**point)
                if f.png is not None:
                    display(Image(data=f.png))
                else:
                    print(f.text)

            kw = {}
            for c in self.controls:
                options = list(zip(c.labels, c.values))
                cls = w.SelectionSlider if c.kind == "slider" else w.Dropdown
                kw[c.name] = cls(options=options, value=c.value, description=c.label,
                                 style={"description_width": "initial"})
            self._widget = w.interactive(show, **kw)
        return self._widget

    def _repr_mimebundle_(self, include=None, exclude=None):
        """The widget and the html (see the module's docstring), and as metadata of the html
        each figure frame's measured facts, in frame order (None for a text frame)."""
        from depthnotes.page.standard import META_KEY

        data = dict(self.widget()._repr_mimebundle_())
        data["text/plain"] = f"<Explorer {self.title!r}: {len(self.frames)} frames>"
        data["text/html"] = self.to_html()
        if not any(f.png is not None for f in self.frames):
            return data
        return data, {"text/html": {META_KEY: {"frames": [f.facts for f in self.frames]}}}


def stored_frames(output: dict) -> list[tuple[int, bytes, dict | None]]:
    """``(frame number, PNG, facts)`` of every figure frame of an explorer as a notebook
    stores it (``output``: a code cell's output whose ``text/html`` is an explorer), the facts
    from the output's metadata (None where none were stored); [] for any other output."""
    from html.parser import HTMLParser

    from depthnotes.page.standard import META_KEY

    text = output.get("data", {}).get("text/html")
    text = "".join(text) if isinstance(text, list) else text
    if not text or "data-dn-frame" not in text:
        return []
    frames: list[str | None] = []          # each frame's PNG src (None: a text frame)

    class _Frames(HTMLParser):
        def handle_starttag(self, tag, attrs):
            a = dict(attrs)
            if "data-dn-frame" in a:
                frames.append(a.get("src") if tag == "img" else None)

    _Frames().feed(text)
    meta = output.get("metadata", {}).get("text/html", {})
    facts = (meta.get(META_KEY) or {}).get("frames") if isinstance(meta, dict) else None
    facts = facts if facts is not None and len(facts) == len(frames) else [None] * len(frames)
    prefix = "data:image/png;base64,"
    return [(i, base64.b64decode(src[len(prefix):]), facts[i])
            for i, src in enumerate(frames) if src is not None and src.startswith(prefix)]
