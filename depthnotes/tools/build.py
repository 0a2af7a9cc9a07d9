"""Build the website from the notebooks' stored (nbval-checked) outputs.

    python -m depthnotes.tools.build

Runs Jupyter Book v1 on the repository root with warnings as errors (``-W -n --keep-going``),
so a broken reference, an unknown citation or a missing figure fails the build. The site lands
in ``_build/html``; open ``_build/html/index.html``.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def build_site(root: Path = ROOT) -> float:
    """Build the HTML site; returns the wall time in seconds. Raises on any warning."""
    start = time.perf_counter()
    jupyter_book = Path(sys.executable).with_name("jupyter-book")
    subprocess.run([str(jupyter_book), "build", str(root), "--path-output",
                    str(root), "-W", "-n", "--keep-going"], check=True, cwd=root)
    return time.perf_counter() - start


def main() -> int:
    try:
        elapsed = build_site()
    except subprocess.CalledProcessError as e:
        print(f"book build failed (exit {e.returncode}); see the warnings above", file=sys.stderr)
        return 1
    print(f"site built in {elapsed:.0f} s: open _build/html/index.html")
    return 0


if __name__ == "__main__":
    sys.exit(main())
