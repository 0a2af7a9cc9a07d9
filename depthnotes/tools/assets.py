"""The scripts the offline site serves itself: pinned npm packages, fetched and unpacked.

    python -m depthnotes.tools.build --assets    # only this step of the book build

MathJax, require.js and the Jupyter widget manager are fetched from the npm registry with
``npm pack`` (pinned versions, checked against their sha512 integrity) into
``_build/assets/npm/``, and the files the site needs are unpacked into
``_build/assets/static/offline/``. ``_config.yml`` points Sphinx (``mathjax_path``,
``html_static_path``) and myst-nb (``nb_ipywidgets_js``) at them, so no page loads anything
from another host. :func:`fetch_assets` does the work only when the pins change or the folder
is missing. The status page lists the pins (``NPM_ASSETS``).
"""

from __future__ import annotations

import base64
import hashlib
import json
import shutil
import subprocess
import tarfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from depthnotes.tools.book import ROOT


class AssetError(RuntimeError):
    """The offline assets cannot be fetched; the message says what to do."""


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
        raise AssetError("npm is needed to fetch MathJax, require.js and the widget manager for "
                         "the offline site. Install Node.js with npm (Debian: apt-get install "
                         "nodejs npm) and run the build again.")
    result = subprocess.run([npm, "pack", asset.spec, "--json", "--silent",
                             "--pack-destination", str(cache)],
                            capture_output=True, text=True, cwd=cache)
    if result.returncode != 0:
        raise AssetError(f"`npm pack {asset.spec}` failed (exit {result.returncode}):\n"
                         f"{result.stderr.strip()[-2000:]}")
    filename = json.loads(result.stdout)[0]["filename"].replace("@", "").replace("/", "-")
    tarball = cache / filename
    if not tarball.exists():
        raise AssetError(f"`npm pack {asset.spec}` did not write {tarball}")
    got = _integrity(tarball)
    if got != asset.integrity:
        tarball.unlink()
        raise AssetError(f"{asset.spec}: the downloaded tarball's integrity {got} does not match "
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
