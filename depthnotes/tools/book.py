"""The book's layout, read by several tools: its root folder, the notebooks its table of
contents lists (in reading order), and a notebook's title.

Kept apart so the tools that need it (claims, status, summaries, the student version) import
it and not one another.
"""

from __future__ import annotations

from pathlib import Path

#: The repository: ``_toc.yml``, ``_config.yml``, ``notebooks/``, ``book/``.
ROOT = Path(__file__).resolve().parents[2]


def toc_notebooks(root: Path) -> list[Path]:
    """The notebooks listed (not commented out) in ``_toc.yml``, in reading order."""
    import yaml

    toc = yaml.safe_load((root / "_toc.yml").read_text())
    files: list[str] = []

    def walk(node):
        if isinstance(node, dict):
            if "file" in node:
                files.append(node["file"])
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(toc)
    return [root / f"{f}.ipynb" for f in files if (root / f"{f}.ipynb").exists()]


def notebook_title(nb, fallback: str) -> str:
    """The first level-1 heading of a notebook's markdown, or ``fallback``."""
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            for line in cell.source.splitlines():
                if line.startswith("# "):
                    return line[2:].strip()
    return fallback
