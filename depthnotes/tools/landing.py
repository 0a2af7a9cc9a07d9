"""The landing page's one figure, taken from the chapter that drew it.

``book/intro.md`` says what the book found, one line per chapter, and shows one figure before
the table of contents. The figure is not drawn twice: it is the stored PNG of the one code
cell tagged ``LANDING_TAG`` in the book's notebooks, copied to ``_build/generated`` by the
build (so the landing page shows exactly what the chapter's code drew, re-checked by nbval
with the rest of the chapter).
"""

from __future__ import annotations

import base64
import json
from pathlib import Path

from depthnotes.tools.book import toc_notebooks

#: The cell tag that marks the landing page's figure.
LANDING_TAG = "landing-figure"
#: Where the build writes it, relative to the repository root (``book/intro.md`` reads it).
LANDING_FILE = "landing_figure.png"


class LandingFigureError(ValueError):
    """No cell, or more than one, is tagged for the landing page, or it stores no PNG."""


def landing_png(root: Path) -> bytes:
    """The PNG stored by the one cell tagged ``LANDING_TAG`` in the book's notebooks."""
    found = []
    for path in toc_notebooks(root):
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        for i, cell in enumerate(cells):
            if LANDING_TAG in cell.get("metadata", {}).get("tags", []):
                found.append((path, i, cell))
    if len(found) != 1:
        where = ", ".join(f"{p.name} cell {i}" for p, i, _ in found) or "none"
        raise LandingFigureError(f"exactly one code cell must be tagged {LANDING_TAG!r} "
                                 f"(found: {where})")
    path, i, cell = found[0]
    pngs = [out["data"]["image/png"] for out in cell.get("outputs", [])
            if "image/png" in out.get("data", {})]
    if len(pngs) != 1:
        raise LandingFigureError(f"{path.name} cell {i} (tagged {LANDING_TAG!r}) stores "
                                 f"{len(pngs)} PNG figures, not 1: run the notebook")
    data = pngs[0]
    return base64.b64decode("".join(data) if isinstance(data, list) else data)
