"""Re-execute notebooks in place, so their stored outputs are what the code computes now.

    python -m depthnotes.tools.execute                 # every notebook in notebooks/
    python -m depthnotes.tools.execute notebooks/03_*.ipynb

Runs each notebook in a fresh kernel from its own folder (as Jupyter and nbval do), with
``DEPTHNOTES_QUIET=1`` so no progress bar lands in the outputs, and without per-cell timing
metadata, so a re-run that computes the same numbers leaves the file unchanged. The prose's
inline ``{eval}`` expressions are evaluated where they stand and stored with their cell
(``depthnotes.tools.expressions``), as JupyterLab stores them. Prints each
notebook's wall time. A notebook that raises stops with the error; nothing is written for it.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from pathlib import Path

from depthnotes.tools.book import ROOT


def execute_notebook(path: Path, timeout: int = 600) -> float:
    """Execute ``path`` in place; returns the wall time in seconds."""
    import nbformat

    from depthnotes.tools.expressions import ExpressionClient

    nb = nbformat.read(path, as_version=4)
    nb.metadata.pop("widgets", None)  # the run stores fresh widget state
    os.environ["DEPTHNOTES_QUIET"] = "1"
    client = ExpressionClient(nb, timeout=timeout, kernel_name="python3", record_timing=False,
                            resources={"metadata": {"path": str(path.parent)}})
    start = time.perf_counter()
    client.execute()
    elapsed = time.perf_counter() - start
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
    path.write_text(_stable_widget_ids(nbformat.writes(nb)) + "\n", encoding="utf-8")
    return elapsed


_HEX32 = r"[0-9a-f]{32}"
_WIDGET_MIME = "application/vnd.jupyter.widget-view+json"


def _stable_widget_ids(text: str) -> str:
    """Replace ipywidgets' random model ids (uuid4 hex) by sequential ones, numbered in the
    order a walk from the cell outputs through the stored widget state first meets them, so
    re-running an unchanged notebook leaves the file byte for byte the same."""
    nb = json.loads(text)
    state = (nb.get("metadata", {}).get("widgets", {})
             .get("application/vnd.jupyter.widget-state+json", {}).get("state", {}))
    order: list[str] = []

    def visit(model_id: str) -> None:
        if model_id in order:
            return
        order.append(model_id)
        fields = state.get(model_id, {}).get("state", {})
        for key in sorted(fields):
            for ref in re.findall(r"IPY_MODEL_(" + _HEX32 + ")", json.dumps(fields[key])):
                visit(ref)

    for cell in nb.get("cells", []):
        for out in cell.get("outputs", []):
            view = out.get("data", {}).get(_WIDGET_MIME)
            if view:
                visit(view["model_id"])
    # Models no output refers to: order them by content, not by their random id.
    rest = sorted((m for m in state if m not in order),
                  key=lambda m: re.sub(_HEX32, "", json.dumps(state[m], sort_keys=True)))
    for model_id in rest:
        visit(model_id)
    new_ids = {old: f"{i + 1:032x}" for i, old in enumerate(order)}
    out = re.sub(r"(?<![0-9a-f])" + _HEX32 + r"(?![0-9a-f])",
                 lambda m: new_ids.get(m.group(0), m.group(0)), text)
    return json.dumps(json.loads(out), indent=1, sort_keys=True, ensure_ascii=False)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", type=Path,
                        help="notebooks to run (default: every notebooks/*.ipynb)")
    parser.add_argument("--timeout", type=int, default=600, help="seconds per cell (default 600)")
    args = parser.parse_args(argv)
    paths = args.notebooks or sorted((ROOT / "notebooks").glob("*.ipynb"))
    for path in paths:
        if not path.exists():
            parser.error(f"no such notebook: {path}")
        print(f"{path.name}: ", end="", flush=True)
        print(f"{execute_notebook(path.resolve(), args.timeout):.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
