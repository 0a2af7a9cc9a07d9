"""Build the website from the notebooks' stored (nbval-checked) outputs.

    python -m depthnotes.tools.build             # assets (if missing), generated pages, site
    python -m depthnotes.tools.build --assets    # only fetch the offline assets

Three steps, all part of this one command:

1. **Offline assets.** MathJax, require.js and the Jupyter widget manager are fetched from the
   npm registry with ``npm pack`` (pinned versions, checked against their sha512 integrity) into
   ``_build/assets/npm/``, and the files the site needs are unpacked into
   ``_build/assets/static/offline/``. ``_config.yml`` points Sphinx (``mathjax_path``,
   ``html_static_path``) and myst-nb (``nb_ipywidgets_js``) at them, so no page loads anything
   from another host. This step runs only when the pins change or the folder is missing.
2. **Generated pages.** The claims table (from the notebooks' claim-check cells), the
   execution-status table (from the timings the test run records), the API listing (from the
   modules of ``depthnotes``), the chapters' summaries and their exercises are written to
   ``_build/generated/``; the pages in ``book/`` include them, so they never drift from the
   notebooks.
3. **The site.** Jupyter Book v1 builds the repository with warnings as errors
   (``-W -n --keep-going``): a broken reference, an unknown citation or a missing figure fails
   the build. The site lands in ``_build/html``; open ``_build/html/index.html``.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tarfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: Written after every successful build; the browser test compares source times with it.
STAMP_NAME = ".site-stamp"


class BuildError(RuntimeError):
    """The build cannot go on; the message says what to do."""


@dataclass(frozen=True)
class NpmAsset:
    """One npm package, pinned by version and integrity, and which of its files the site needs."""

    name: str
    version: str
    integrity: str
    #: (folder or file inside the package, destination under ``_static/offline``)
    copy: tuple[tuple[str, str], ...]
    #: files (relative to a copied folder) to leave out
    skip: tuple[str, ...] = field(default=())

    @property
    def spec(self) -> str:
        return f"{self.name}@{self.version}"


_MATHJAX_BUNDLES = ("tex-chtml.js", "tex-chtml-full.js", "tex-chtml-full-speech.js",
                    "tex-svg.js", "tex-svg-full.js", "tex-mml-svg.js", "mml-chtml.js",
                    "mml-svg.js", "node-main.js")

NPM_ASSETS: tuple[NpmAsset, ...] = (
    # MathJax 3, the CHTML output with TeX and MathML input (Sphinx's default bundle), its
    # fonts and the extensions it loads on demand; the unused single-file bundles stay out.
    NpmAsset("mathjax", "3.2.2",
             "sha512-Bt+SSVU8eBG27zChVewOicYs7Xsdt40qm4+UpHyX7k0/O9NliPc+x77k1/FEsPsjKPZGJvtRZM1vO+"
             "geW0OhGw==",
             copy=(("package/es5", "mathjax"), ("package/LICENSE", "mathjax/LICENSE")),
             skip=_MATHJAX_BUNDLES),
    # require.js: the module loader the widget manager's AMD bundle expects.
    NpmAsset("requirejs", "2.3.8",
             "sha512-7/cTSLOdYkNBNJcDMWf+luFvMriVm7eYxp4BcFCsAX0wF421Vyce5SXP17c+Jd5otXKGNehIonFl"
             "yQXSowL6Mw==",
             copy=(("package/require.js", "require.js"),)),
    # The Jupyter widget manager for static pages (ipywidgets 8 = widget protocol 2): the AMD
    # bundle and the icon fonts it loads from its own folder.
    NpmAsset("@jupyter-widgets/html-manager", "1.0.15",
             "sha512-5thBIV6ymNgmPVOHvzx+gGy8ZSKmSazhtGw4/c4xJDVzRhG9PTeQsRjF3FUTopvFi//SABeNz1yp4"
             "7bCrJ3CQA==",
             copy=(("package/dist", "widgets"), ("package/LICENSE", "widgets/LICENSE")),
             skip=("embed.js", "embed.js.map", "embed.js.LICENSE.txt", "libembed-amd.js")),
)


#: Loaded just before the widget manager (``offline/widgets-setup.js``): two things its bundle
#: assumes that do not hold on this site.
WIDGETS_SETUP_JS = """\
// Set-up for the Jupyter widget manager (widgets/embed-amd.js) on this offline site.
(function () {
  // 1. Its icon fonts sit beside it. The bundle derives that folder from its require.js module
  //    name, which by default resolves against the page's own folder: map the name.
  var here = new URL("widgets/", document.currentScript.src).href;
  window.__jupyter_widgets_assets_path__ = here;
  if (window.requirejs) {
    window.requirejs.config({paths: {"@jupyter-widgets/html-manager/dist": here.slice(0, -1)}});
  }
  // 2. Widget labels are typeset through MathJax 2's MathJax.Hub.Queue; this site runs
  //    MathJax 3, which has no Hub. Once MathJax 3 has loaded (it is deferred, so before
  //    DOMContentLoaded), give it that one entry point.
  function addHub() {
    var mj = window.MathJax;
    if (!mj || mj.Hub || !mj.startup) return;
    mj.Hub = {Queue: function () {
      Array.prototype.forEach.call(arguments, function (job) {
        if (Array.isArray(job) && job[0] === "Typeset" && job[2]) {
          mj.startup.promise.then(function () { return mj.typesetPromise([job[2]]); });
        }
      });
    }};
  }
  document.addEventListener("DOMContentLoaded", addHub);
})();
"""


def _write_if_changed(path: Path, text: str) -> None:
    if not path.exists() or path.read_text() != text:
        path.write_text(text)


def _integrity(path: Path) -> str:
    return "sha512-" + base64.b64encode(hashlib.sha512(path.read_bytes()).digest()).decode()


def _npm_pack(asset: NpmAsset, cache: Path) -> Path:
    """The package's tarball in ``cache``, fetched with ``npm pack`` if not there yet."""
    cache.mkdir(parents=True, exist_ok=True)
    for tarball in cache.glob("*.tgz"):
        if _integrity(tarball) == asset.integrity:
            return tarball
    npm = shutil.which("npm")
    if npm is None:
        raise BuildError("npm is needed to fetch MathJax, require.js and the widget manager for "
                         "the offline site. Install Node.js with npm (Debian: apt-get install "
                         "nodejs npm) and run the build again.")
    result = subprocess.run([npm, "pack", asset.spec, "--json", "--silent",
                             "--pack-destination", str(cache)],
                            capture_output=True, text=True, cwd=cache)
    if result.returncode != 0:
        raise BuildError(f"`npm pack {asset.spec}` failed (exit {result.returncode}):\n"
                         f"{result.stderr.strip()[-2000:]}")
    filename = json.loads(result.stdout)[0]["filename"].replace("@", "").replace("/", "-")
    tarball = cache / filename
    if not tarball.exists():
        raise BuildError(f"`npm pack {asset.spec}` did not write {tarball}")
    got = _integrity(tarball)
    if got != asset.integrity:
        tarball.unlink()
        raise BuildError(f"{asset.spec}: the downloaded tarball's integrity {got} does not match "
                         f"the pinned {asset.integrity}; refusing to use it.")
    return tarball


def _unpack(asset: NpmAsset, tarball: Path, dest_root: Path) -> int:
    """Copy the files ``asset.copy`` names from ``tarball`` into ``dest_root``; returns a count."""
    count = 0
    with tarfile.open(tarball, "r:gz") as tar:
        members = [m for m in tar.getmembers() if m.isfile()]
        for src, dest in asset.copy:
            for m in members:
                if m.name == src:
                    rel = ""
                elif m.name.startswith(src + "/"):
                    rel = m.name[len(src) + 1:]
                    if rel in asset.skip:
                        continue
                else:
                    continue
                target = dest_root / dest / rel if rel else dest_root / dest
                target.parent.mkdir(parents=True, exist_ok=True)
                with tar.extractfile(m) as fh:
                    target.write_bytes(fh.read())
                count += 1
    return count


def fetch_assets(root: Path = ROOT, *, quiet: bool = False) -> Path:
    """Make ``_build/assets/static/offline`` hold the pinned assets; returns the static folder.

    Does nothing if the folder already holds exactly these pins. The tarballs are kept in
    ``_build/assets/npm`` so a re-run after ``rm -r _build/assets/static`` needs no network.
    """
    static = root / "_build" / "assets" / "static"
    marker = static / "offline" / "PINS.json"
    pins = {a.spec: a.integrity for a in NPM_ASSETS}
    if marker.exists() and json.loads(marker.read_text()) == pins:
        _write_if_changed(static / "offline" / "widgets-setup.js", WIDGETS_SETUP_JS)
        return static
    start = time.perf_counter()
    offline = static / "offline"
    if offline.exists():
        shutil.rmtree(offline)
    offline.mkdir(parents=True)
    for asset in NPM_ASSETS:
        tarball = _npm_pack(asset, root / "_build" / "assets" / "npm" / asset.name.replace("/", "-"))
        n = _unpack(asset, tarball, offline)
        if not quiet:
            print(f"offline assets: {asset.spec}: {n} files", flush=True)
    _write_if_changed(offline / "widgets-setup.js", WIDGETS_SETUP_JS)
    marker.write_text(json.dumps(pins, indent=1) + "\n")
    if not quiet:
        print(f"offline assets ready in {time.perf_counter() - start:.1f} s", flush=True)
    return static


def generate_pages(root: Path = ROOT) -> list[Path]:
    """Write the generated page fragments into ``_build/generated``; returns the files written."""
    from depthnotes.tools import api_page, claims, status, summaries

    out = root / "_build" / "generated"
    out.mkdir(parents=True, exist_ok=True)
    fragments = {
        "claims.md": claims.render_claims_table(root),
        "status.md": status.render_status(root),
        "api.md": api_page.render_api(root),
        "summaries.md": summaries.render_summaries(root),
        "exercises.md": summaries.render_exercises(root),
    }
    written = []
    for name, text in fragments.items():
        path = out / name
        if not path.exists() or path.read_text() != text:   # unchanged: keep Sphinx's cache
            path.write_text(text)
            written.append(path)
    return written


def site_sources(root: Path = ROOT) -> list[Path]:
    """The files the site is built from (for :func:`site_is_stale`)."""
    from depthnotes.tools.status import RUNS_FILE

    files = [root / "_config.yml", root / "_toc.yml", root / RUNS_FILE]
    files += list((root / "notebooks").glob("*.ipynb"))
    files += [p for p in (root / "book").rglob("*") if p.is_file()]
    files += list((root / "depthnotes").rglob("*.py"))
    return [f for f in files if f.exists()]


def site_is_stale(root: Path = ROOT) -> bool:
    """True if ``_build/html`` is missing or older than any of its sources."""
    stamp = root / "_build" / STAMP_NAME
    if not stamp.exists() or not (root / "_build" / "html" / "index.html").exists():
        return True
    built = stamp.stat().st_mtime
    return any(f.stat().st_mtime > built for f in site_sources(root))


def build_site(root: Path = ROOT) -> float:
    """Fetch assets, generate pages, build the HTML site; returns the wall time in seconds.

    Raises ``subprocess.CalledProcessError`` on any Sphinx warning, ``BuildError`` when an
    asset cannot be fetched or a notebook's claim cell breaks the house format.
    """
    start, started_at = time.perf_counter(), time.time()
    stamp = root / "_build" / STAMP_NAME
    stamp.unlink(missing_ok=True)         # a failed build leaves the site stale
    fetch_assets(root)
    generate_pages(root)
    html = root / "_build" / "html"
    if html.exists():
        shutil.rmtree(html)               # no page of a removed chapter lingers
    jupyter_book = Path(sys.executable).with_name("jupyter-book")
    # --all: a fresh environment and every page written, so every warning is reported and no
    # page keeps scripts or settings from an earlier build.
    subprocess.run([str(jupyter_book), "build", str(root), "--path-output", str(root), "--all",
                    "-W", "-n", "--keep-going"], check=True, cwd=root)
    elapsed = time.perf_counter() - start
    stamp.write_text(f"{elapsed:.1f}\n")
    os.utime(stamp, (started_at, started_at))   # a source edited during the build is newer
    return elapsed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--assets", action="store_true",
                        help="only fetch the offline assets (MathJax, require.js, widget manager)")
    args = parser.parse_args(argv)
    try:
        if args.assets:
            fetch_assets()
            return 0
        elapsed = build_site()
    except (BuildError, ValueError) as e:   # ValueError: a claim cell breaks the house format
        print(f"book build failed: {e}", file=sys.stderr)
        return 1
    except subprocess.CalledProcessError as e:
        print(f"book build failed (exit {e.returncode}); see the warnings above", file=sys.stderr)
        return 1
    print(f"site built in {elapsed:.0f} s: open _build/html/index.html")
    return 0


if __name__ == "__main__":
    sys.exit(main())
