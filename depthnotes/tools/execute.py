"""Re-execute notebooks in place, so their stored outputs are what the code computes now.

    python -m depthnotes.tools.execute                 # every notebook in notebooks/
    python -m depthnotes.tools.execute notebooks/03_*.ipynb

Runs each notebook in a fresh kernel from its own folder (as Jupyter and nbval do), with
``DEPTHNOTES_QUIET=1`` so no progress bar lands in the outputs, and without per-cell timing
metadata, so a re-run that computes the same numbers leaves the file unchanged. Prints each
notebook's wall time. A notebook that raises stops with the error; nothing is written for it.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def execute_notebook(path: Path, timeout: int = 600) -> float:
    """Execute ``path`` in place; returns the wall time in seconds."""
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    os.environ["DEPTHNOTES_QUIET"] = "1"
    client = NotebookClient(nb, timeout=timeout, kernel_name="python3", record_timing=False,
                            resources={"metadata": {"path": str(path.parent)}})
    start = time.perf_counter()
    client.execute()
    elapsed = time.perf_counter() - start
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
    nbformat.write(nb, path)
    return elapsed


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
