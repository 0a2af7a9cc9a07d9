"""The built website, checked in a real browser with the network cut off.

Debian's Chromium (``/usr/bin/chromium``, installed by ``.ci/run``), driven by Playwright's
Python package, opens every page of ``_build/html`` served by ``python -m http.server`` on
127.0.0.1. Every request to any other host is blocked and recorded, and Chromium's own DNS
resolves nothing but 127.0.0.1, so the browser has no network but the site. On every page:

- no console error and no uncaught script error; no request leaves 127.0.0.1;
- every formula is typeset by the site's own MathJax;
- every image in the page's content loads and has alt text;
- every widget the page embeds is rendered by the site's own widget manager;
- every explorer (``depthnotes/page/explorer.py``) responds to its controls: moving each one
  shows another precomputed frame (:func:`test_explorers_respond_to_their_controls`);
- every exercise solution is hidden until its toggle is opened.

The same checks run again with every page opened from disk (``file://``), as a student who was
handed the folder would open it. Across the site: the "next" links walk through all pages in
table-of-contents order, and the search box finds chapters. A full-page screenshot of every page
(and of each chapter's first opened solution) goes to ``_build/screenshots/`` for a person to
look at, with ``report.json`` listing what each page held.

The site is built by this test if it is missing or older than any of its sources (notebooks,
``book/``, ``depthnotes/``, the configuration, the recorded notebook timings): it runs the same
``python -m depthnotes.tools.build`` as the README. pytest runs this file last (see
``depthnotes/tools/status.py``), after the notebooks have been checked.

Without Chromium the browser tests are skipped with the reason, except in CI (``CI=true``),
where a missing browser is a failure.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
import urllib.request
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urlparse

import pytest

from depthnotes.tools.assets import AssetError
from depthnotes.tools.build import STAMP_NAME, refresh_site

ROOT = Path(__file__).resolve().parents[1]
SITE = ROOT / "_build" / "html"
SHOTS = ROOT / "_build" / "screenshots"
CHROMIUM = Path(os.environ.get("DEPTHNOTES_CHROMIUM", "/usr/bin/chromium"))
IN_CI = os.environ.get("CI", "").lower() in {"1", "true", "yes"}
#: The launch flags for a headless Chromium on a machine without a network (Playwright adds
#: --headless and a fresh, empty --user-data-dir of its own).
CHROMIUM_FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update",
                  "--disable-sync", "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"]
SKIP_DIRS = {"_static", "_sources", "_images", "_sphinx_design_static"}


def _missing(reason: str):
    if IN_CI:
        pytest.fail(f"{reason} (CI=true: the browser test must run in CI)")
    pytest.skip(reason)


# ---------------------------------------------------------------- the site, built if stale

@pytest.fixture(scope="session")
def site() -> Path:
    try:
        refresh_site(ROOT)           # the run times just recorded: the status page only
    except subprocess.CalledProcessError as e:
        pytest.fail(f"the site build failed (exit {e.returncode}); run "
                    "`.venv/bin/python -m depthnotes.tools.build` to see the warnings")
    except AssetError as e:          # e.g. no npm to fetch the offline assets
        _missing(f"cannot build the site: {e}")
    return SITE


def site_pages(site: Path) -> list[str]:
    """Every page of the site, as paths relative to the site root."""
    pages = []
    for path in sorted(site.rglob("*.html")):
        rel = path.relative_to(site)
        if rel.parts[0] not in SKIP_DIRS:
            pages.append(rel.as_posix())
    return pages


class _Refs(HTMLParser):
    """Collects the URLs a page makes the browser fetch (not plain links)."""

    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag in {"script", "img", "iframe", "source", "audio", "video", "embed"} and a.get("src"):
            self.urls.append(a["src"])
        rels = set((a.get("rel") or "").lower().split())
        if tag == "link" and a.get("href") and rels & {
                "stylesheet", "preload", "icon", "prefetch", "preconnect", "modulepreload",
                "dns-prefetch", "manifest"}:
            self.urls.append(a["href"])
        if tag == "object" and a.get("data"):
            self.urls.append(a["data"])


def _external(url: str) -> bool:
    return url.startswith("//") or urlparse(url).scheme in {"http", "https", "ws", "wss"}


def test_site_builds_within_a_minute(site):
    """The issue's budget: the site builds from the stored outputs in at most 60 s on 2 cores.
    Enforced in CI, which has the machine to itself; elsewhere the time is only reported."""
    elapsed = float((ROOT / "_build" / STAMP_NAME).read_text())
    if not IN_CI:
        pytest.skip(f"the last build took {elapsed:.1f} s (the 60 s budget is checked in CI)")
    assert elapsed <= 60, f"the site build took {elapsed:.1f} s, over the 60 s budget"


def test_html_loads_nothing_from_other_hosts(site):
    """No page's HTML or CSS names a script, stylesheet, image or font on another host
    (a static check that runs even without a browser)."""
    offenders = []
    for rel in site_pages(site):
        parser = _Refs()
        parser.feed((site / rel).read_text(encoding="utf-8"))
        offenders += [f"{rel}: {u}" for u in parser.urls if _external(u)]
    for css in (site / "_static").rglob("*.css"):
        for url in re.findall(r"url\(\s*['\"]?([^'\")]+)", css.read_text(errors="replace")):
            if _external(url):
                offenders.append(f"{css.relative_to(site)}: {url}")
    assert not offenders, "the site loads from other hosts:\n" + "\n".join(offenders)


def test_offline_assets_are_local(site):
    """MathJax, require.js and the widget manager are the site's own files."""
    html = (site / "book" / "intro.html").read_text(encoding="utf-8")
    assert "_static/offline/mathjax/tex-mml-chtml.js" in html
    for name in ("mathjax/tex-mml-chtml.js", "require.js", "widgets/embed-amd.js",
                 "mathjax/output/chtml/fonts/woff-v2/MathJax_Main-Regular.woff"):
        assert (site / "_static" / "offline" / name).is_file(), name


# ---------------------------------------------------------------- the browser

@pytest.fixture(scope="session")
def browser_context(site):
    if not CHROMIUM.exists():
        _missing(f"no Chromium at {CHROMIUM}: install Debian's `chromium` package "
                 "(apt-get install chromium) or set DEPTHNOTES_CHROMIUM to run the browser test")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _missing("the playwright package is not installed (pip install -r requirements.txt)")

    port = _free_port()
    server = subprocess.Popen([sys.executable, "-m", "http.server", str(port), "--bind",
                               "127.0.0.1", "--directory", str(site)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        base = f"http://127.0.0.1:{port}/"
        _wait_for(base)
        SHOTS.mkdir(parents=True, exist_ok=True)
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=str(CHROMIUM), headless=True,
                                        args=CHROMIUM_FLAGS)
            context = browser.new_context(viewport={"width": 1280, "height": 900},
                                          service_workers="block")
            blocked: list[str] = []

            def route(r):
                url = urlparse(r.request.url)
                if url.hostname == "127.0.0.1" or url.scheme in {"file", "data", "blob"}:
                    r.continue_()
                else:
                    blocked.append(r.request.url)
                    r.abort("internetdisconnected")

            context.route("**/*", route)
            yield context, base, blocked
            context.close()
            browser.close()
    finally:
        server.terminate()
        server.wait(timeout=10)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_for(url: str, timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            urllib.request.urlopen(url, timeout=1).close()
            return
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


class PageLog:
    """Console errors, script errors, failed and off-site requests of one page load."""

    def __init__(self, page, blocked: list[str]) -> None:
        self.errors: list[str] = []
        self.failed: list[str] = []
        self.external: list[str] = []
        self._blocked = blocked
        self._start = len(blocked)
        page.on("console", lambda m: m.type == "error" and self.errors.append(
            f"console: {m.text} ({m.location.get('url', '')})"))
        page.on("pageerror", lambda e: self.errors.append(f"uncaught: {e}"))
        page.on("requestfailed", lambda r: self.failed.append(f"{r.url} ({r.failure})"))
        page.on("request", lambda r: urlparse(r.url).hostname not in (None, "127.0.0.1")
                and urlparse(r.url).scheme not in ("data", "blob", "about")
                and self.external.append(r.url))

    def problems(self) -> list[str]:
        blocked = self._blocked[self._start:]
        return (self.errors + [f"request failed: {u}" for u in self.failed]
                + [f"off-site request: {u}" for u in sorted(set(self.external + blocked))])


_MATHJAX_DONE = """async () => {
  if (!window.MathJax) return null;
  if (MathJax.startup && MathJax.startup.promise) await MathJax.startup.promise;
  return true;
}"""

_MATH_STATE = """() => {
  const maths = [...document.querySelectorAll('main .math, article .math')];
  return {total: maths.length,
          raw: maths.filter(m => !m.querySelector('mjx-container')).map(m => m.textContent.slice(0, 80))};
}"""

# Images inside a rendered widget (an Output widget's plot) are drawn by the widget manager,
# which sets no alt text; the static figure each widget has beside it carries the description.
_IMAGES = """() => [...document.querySelectorAll('article img, main img')]
  .filter(img => !img.closest('.widget-subarea'))
  .map(img => ({src: img.getAttribute('src'), ok: img.complete && img.naturalWidth > 0,
                alt: (img.getAttribute('alt') || '').trim()}))"""

_WIDGETS = """() => {
  const views = [...document.querySelectorAll('script[type="application/vnd.jupyter.widget-view+json"]')];
  const rendered = views.filter(v => {
    const prev = v.previousElementSibling;
    return prev && prev.classList.contains('widget-subarea') && prev.querySelector('.jupyter-widgets, .widget-box, .lm-Widget');
  });
  return {views: views.length, rendered: rendered.length,
          texts: rendered.map(v => v.previousElementSibling.textContent)};
}"""


#: The text of every static explorer on the page (its title and controls' labels).
_EXPLORER_TEXTS = """() => [...document.querySelectorAll('.dn-explorer')].map(e =>
  [...e.querySelectorAll('.dn-explorer-title, label')].map(l => l.textContent).join('\\n'))"""

#: Where the "In short" box ends, in pixels from the top of the page (None: no box).
_FINDINGS_BOTTOM = """() => {
  const box = [...document.querySelectorAll('.admonition')].find(
      a => (a.querySelector('.admonition-title') || {}).textContent === 'In short');
  return box ? box.getBoundingClientRect().bottom + window.scrollY : null;
}"""

#: Code, output, maths and table blocks wider than their column (they scroll sideways).
_SIDEWAYS = """() => [...document.querySelectorAll(
    'div.highlight pre, div.cell_output pre:not([hidden]), div.math, mjx-container[display], table')]
  .filter(e => e.scrollWidth > e.clientWidth + 1).length"""


def _shot_name(rel: str) -> str:
    return rel.removesuffix(".html").replace("/", "__") + ".png"


#: How long a page may take to load and go quiet. The API page is about 225,000 px tall; opened
#: from disk while the test run executes notebooks on the other core, it once took over 30 s to
#: reach "network idle" on the CI machine (main at 288da03). A page that never settles still fails,
#: with its name.
PAGE_SETTLE_MS = 120_000


def _load(page, url: str) -> None:
    """Load ``url`` and wait until the network is quiet (scripts, fonts and images fetched)."""
    try:
        page.goto(url, wait_until="load", timeout=PAGE_SETTLE_MS)
        page.wait_for_load_state("networkidle", timeout=PAGE_SETTLE_MS)
    except Exception as error:  # noqa: BLE001 - re-raised with the page's name
        raise AssertionError(f"{url} did not load and settle within "
                             f"{PAGE_SETTLE_MS // 1000} s: {error}") from error


def _check_page(context, base: str, blocked: list[str], rel: str, shots: bool = True) -> dict:
    page = context.new_page()
    log = PageLog(page, blocked)
    problems: list[str] = []
    info: dict = {"page": rel}
    try:
        _load(page, base + rel)
        mathjax = page.evaluate(_MATHJAX_DONE)
        math = page.evaluate(_MATH_STATE)
        info["math"] = math["total"]
        if math["total"] and not mathjax:
            problems.append("the page has math but MathJax did not load")
        problems += [f"math not typeset: {m!r}" for m in math["raw"]]

        for img in page.evaluate(_IMAGES):
            src = img["src"] if len(img["src"] or "") < 100 else img["src"][:60] + "…"
            if not img["ok"]:
                problems.append(f"image did not load: {src}")
            if not img["alt"] or re.search(r"\.(png|jpe?g|svg|gif)$", img["alt"], re.I):
                problems.append(f"image without alt text: {src} (alt={img['alt']!r})")
        info["images"] = len(page.evaluate(_IMAGES))

        widgets = page.evaluate(_WIDGETS)
        if widgets["views"]:
            try:
                page.wait_for_function(_WIDGETS.replace("return {views", "return rendered.length "
                                                        ">= views.length && {views"),
                                       timeout=20_000)
            except Exception:  # noqa: BLE001 - reported below with the counts
                pass
            widgets = page.evaluate(_WIDGETS)
            if widgets["rendered"] < widgets["views"]:
                problems.append(f"only {widgets['rendered']} of {widgets['views']} widgets rendered")
            elif shots:
                first = page.locator(".widget-subarea").first
                first.scroll_into_view_if_needed()
                first.screenshot(path=str(SHOTS / _shot_name(rel).replace(".png", "__widget.png")))
        info["widgets"] = widgets["rendered"]
        info["widget_text"] = widgets["texts"]
        info["explorer_text"] = page.evaluate(_EXPLORER_TEXTS)

        info["findings_bottom"] = page.evaluate(_FINDINGS_BOTTOM)
        info["sideways"] = page.evaluate(_SIDEWAYS)
        info["solutions"] = _check_solutions(page, rel, problems, shots)
        if shots:
            _screenshot(page, SHOTS / _shot_name(rel))
        problems += log.problems()
    finally:
        page.close()
    info["problems"] = problems
    return info


#: A page's screenshot shows at most this many pixels from its top. The API page is about
#: 225,000 px tall; a full-page screenshot of it took 26 s on a busy 2-core machine, and over
#: Playwright's 30 s limit in a test run, for an image no one scrolls through.
SHOT_MAX_HEIGHT = 30_000


def _screenshot(page, path: Path) -> None:
    """A full-page screenshot for a person to look at, cut at ``SHOT_MAX_HEIGHT``."""
    height = page.evaluate("document.documentElement.scrollHeight")
    width = page.viewport_size["width"]
    page.screenshot(path=str(path), full_page=True,
                    clip={"x": 0, "y": 0, "width": width,
                          "height": min(height, SHOT_MAX_HEIGHT)})


def _check_solutions(page, rel: str, problems: list[str], shots: bool = True) -> int:
    """Each cell whose code holds a solution is hidden at first and shown by its toggle."""
    cells = page.locator("div.cell:has(div.cell_input:has-text('BEGIN SOLUTION'))")
    n = cells.count()
    for i in range(n):
        cell = cells.nth(i)
        source = cell.locator("div.cell_input")
        if source.is_visible():
            problems.append(f"solution {i + 1} is visible before its toggle is opened")
            continue
        if cell.locator("div.cell_output").count() and \
                cell.locator("div.cell_output").first.is_visible():
            problems.append(f"solution {i + 1}'s output is visible before its toggle is opened")
            continue
        toggle = cell.locator("details > summary").first
        if toggle.count() == 0:
            problems.append(f"solution {i + 1} has no toggle")
            continue
        toggle.scroll_into_view_if_needed()
        toggle.click()
        try:
            source.wait_for(state="visible", timeout=5_000)
        except Exception:  # noqa: BLE001
            problems.append(f"solution {i + 1} does not show when its toggle is clicked")
            continue
        if i == 0 and shots:
            source.scroll_into_view_if_needed()
            page.wait_for_timeout(600)   # let the toggle's fade-in finish
            page.screenshot(path=str(SHOTS / _shot_name(rel).replace(".png", "__solution.png")))
        toggle.click()   # close it again, so the full-page screenshot shows the reader's view
    return n


@pytest.fixture(scope="session")
def page_reports(browser_context, site):
    context, base, blocked = browser_context
    reports = [_check_page(context, base, blocked, rel) for rel in site_pages(site)]
    (SHOTS / "report.json").write_text(json.dumps(reports, indent=1) + "\n")
    return reports


def test_site_works_opened_as_a_folder(browser_context, site):
    """The same checks with every page opened from disk (file://), as a student who was handed
    the folder would: no server, no network."""
    context, _, blocked = browser_context
    base = site.resolve().as_uri() + "/"
    bad = {}
    for rel in site_pages(site):
        report = _check_page(context, base, blocked, rel, shots=False)
        if report["problems"]:
            bad[rel] = report["problems"]
    assert not bad, "pages with problems when opened from disk:\n" + "\n".join(
        f"{page}:\n  " + "\n  ".join(problems) for page, problems in bad.items())


def test_every_page_in_a_browser(page_reports):
    """No console errors, no off-site requests, math typeset, images with alt text, widgets
    rendered, solutions hidden until opened — on every page."""
    bad = {r["page"]: r["problems"] for r in page_reports if r["problems"]}
    assert not bad, "pages with problems:\n" + "\n".join(
        f"{page}:\n  " + "\n  ".join(problems) for page, problems in bad.items())


def test_every_chapter_says_what_it_found_on_its_first_screen(page_reports):
    """A chapter's "In short" box ends within the first screen (the browser's 900 px), so a
    reader meets the findings before the method. (Blocks that scroll sideways are counted in
    the report, ``sideways``; the findings-first issue's goal for them is 0.)"""
    chapters = [r for r in page_reports if re.search(r"notebooks/\d\d_", r["page"])]
    assert chapters, "no chapter pages found"
    late = {r["page"]: r["findings_bottom"] for r in chapters
            if r["findings_bottom"] is None or r["findings_bottom"] > 900}
    assert not late, f"chapters whose 'In short' box is missing or below 900 px: {late}"


#: Pages whose owners have not yet made every block fit the column (issue 25), each with what
#: scrolls and whose work fixes it. A listed page that fits fails too, so the list only shrinks.
SIDEWAYS_NOT_YET_FIXED: dict[str, str] = {}

#: Every fold and hidden cell opened, so that nothing is measured while invisible.
_OPEN_ALL = """() => { document.querySelectorAll('details').forEach(d => d.open = true);
  document.querySelectorAll('.toggle-hidden, .toggle-details__container').forEach(
      e => e.classList.remove('toggle-hidden')); }"""

#: Every code, output, maths and table block: its widths (0: not rendered, which must not count
#: as fitting). An explorer's hidden frames are not blocks the reader sees (its shown one is).
_BLOCK_WIDTHS = """() => [...document.querySelectorAll(
    'div.highlight pre, div.cell_output pre:not([hidden]), div.math, mjx-container[display], table')]
  .map(e => ({what: e.tagName.toLowerCase() + ' ' + (e.innerText || e.textContent || '')
                 .trim().slice(0, 70).replace(/\\s+/g, ' '),
              scroll: e.scrollWidth, client: e.clientWidth}))"""


def chapter_pages(site: Path) -> list[str]:
    return [rel for rel in site_pages(site) if re.match(r"notebooks/\d\d_", rel)]


def test_every_chapter_fits_its_column_at_1300_px(browser_context, site):
    """At 1300 x 900 px every chapter shows its "In short" box on the first screen, and with
    every fold and hidden cell opened, no code, output, maths or table block is wider than its
    column (``scrollWidth <= clientWidth``), and none is measured while invisible (zero width)."""
    context, base, blocked = browser_context
    chapters = chapter_pages(site)
    assert len(chapters) >= 8, chapters
    late, wide, invisible, measured = {}, {}, {}, 0
    for rel in chapters:
        page = context.new_page()
        try:
            page.set_viewport_size({"width": 1300, "height": 900})
            page.goto(base + rel, wait_until="load", timeout=PAGE_SETTLE_MS)
            page.evaluate(_MATHJAX_DONE)
            bottom = page.evaluate(_FINDINGS_BOTTOM)
            if bottom is None or bottom > 900:
                late[rel] = bottom
            page.evaluate(_OPEN_ALL)
            page.wait_for_timeout(300)
            blocks = page.evaluate(_BLOCK_WIDTHS)
        finally:
            page.close()
        measured += len(blocks)
        if zero := [b["what"] for b in blocks if b["client"] == 0]:
            invisible[rel] = zero
        if over := [f"{b['what']!r}: {b['scroll']} px in {b['client']} px" for b in blocks
                    if b["client"] and b["scroll"] > b["client"] + 1]:
            wide[rel] = over
    assert measured > 100, f"only {measured} blocks measured: the selectors find nothing"
    assert not late, f"chapters whose 'In short' box ends below the first screen: {late}"
    assert not invisible, f"blocks still invisible with every fold opened: {invisible}"
    fixed = [p for p in SIDEWAYS_NOT_YET_FIXED if p not in wide]
    assert not fixed, f"{fixed} now fit: remove them from SIDEWAYS_NOT_YET_FIXED"
    wide = {p: w for p, w in wide.items() if p not in SIDEWAYS_NOT_YET_FIXED}
    assert not wide, "blocks that scroll sideways at 1300 px:\n" + "\n".join(
        f"{p}:\n  " + "\n  ".join(w) for p, w in wide.items())


def test_the_site_exercises_what_it_should(page_reports):
    """The checks above are not vacuous: the site has math, figures and solutions."""
    total = {k: sum(r.get(k, 0) for r in page_reports) for k in ("math", "images", "solutions",
                                                                  "widgets")}
    assert total["math"] > 0 and total["images"] > 0 and total["solutions"] > 0, total


def _widget_labels(notebook: Path) -> list[str]:
    """The labels of the controls a notebook's stored widgets show (their "description")."""
    meta = json.loads(notebook.read_text())["metadata"].get("widgets", {})
    models = meta.get("application/vnd.jupyter.widget-state+json", {}).get("state", {})
    return [m["state"]["description"] for m in models.values() if m["state"].get("description")]


def test_widgets_render(page_reports):
    """Every chapter that stores a widget shows it on its page with the labels of its controls
    (the descriptions stored in the notebook): as its static explorer where the output carries
    one (the site prefers it), else rendered offline by the site's widget manager."""
    expected = {f"notebooks/{nb.stem}.html": labels
                for nb in sorted((ROOT / "notebooks").glob("*.ipynb"))
                if (labels := _widget_labels(nb))}
    assert expected, "no notebook stores a widget: the chapters' explorers are gone"
    reports = {r["page"]: r for r in page_reports}
    for page, labels in expected.items():
        report = reports[page]
        assert report.get("widgets") or report.get("explorer_text"), \
            f"{page}: its widget is neither rendered nor shown as a static explorer"
        text = "\n".join(report["widget_text"] + report["explorer_text"])
        missing = [label for label in labels if label not in text]
        assert not missing, f"{page}: the rendered widget lacks the controls {missing}"


def _open(browser_context, rel: str):
    """A new page of the served site at ``rel``, loaded, with its problem log."""
    context, base, blocked = browser_context
    page = context.new_page()
    log = PageLog(page, blocked)
    _load(page, base + rel)
    return page, log


def test_next_links_walk_the_table_of_contents(browser_context, site):
    """From the first page, the "next" links visit every page of the sidebar, in its order."""
    page, log = _open(browser_context, "book/intro.html")
    sidebar = page.eval_on_selector_all(
        "nav.bd-docs-nav a.reference.internal",
        "links => links.map(a => new URL(a.getAttribute('href'), location.href).pathname)")
    visited = [urlparse(page.url).path]
    for _ in range(len(sidebar) + 5):
        nxt = page.locator("a.right-next")
        if nxt.count() == 0:
            break
        nxt.first.click()
        page.wait_for_load_state("load")
        page.wait_for_load_state("networkidle", timeout=PAGE_SETTLE_MS)  # see _load
        visited.append(urlparse(page.url).path)
    page.close()
    if sidebar and sidebar[0] != visited[0]:   # the sidebar may or may not list the home page
        visited = visited[1:]
    assert len(visited) > 2 and visited == sidebar, \
        f"next links visit {visited}, the sidebar lists {sidebar}"
    assert not log.problems(), log.problems()


def test_search_finds_chapters(browser_context, site):
    """The search box works offline and finds the parameter-counting chapter."""
    page, log = _open(browser_context, "book/intro.html")
    page.keyboard.press("Control+k")
    box = page.locator("input[name='q']:visible").first
    box.fill("parameters")
    box.press("Enter")
    page.wait_for_url("**/search.html?q=parameters*")
    results = page.locator("ul.search li a")
    results.first.wait_for(timeout=15_000)
    hrefs = [results.nth(i).get_attribute("href") for i in range(results.count())]
    page.screenshot(path=str(SHOTS / "search__parameters.png"))
    page.close()
    assert any("01_parameter_math" in (h or "") for h in hrefs), hrefs
    assert not log.problems(), log.problems()


def test_claims_page_links_reach_their_checks(browser_context, site):
    """Each claim's link on the claims page lands on the check for that claim in its chapter."""
    page, log = _open(browser_context, "book/claims.html")
    links = page.eval_on_selector_all(
        "article table a.reference.internal",
        "links => links.map(a => [a.textContent.trim(), a.href])")
    assert links, "the claims page links to no check"
    missing = []
    for claim, href in links:
        # Wait for the network to go quiet before the next link: leaving a chapter while
        # MathJax still fetches its fonts aborts those requests, which the log would count
        # as failures of the site (CI of 9e06446 on a busy machine).
        _load(page, href)
        anchor = href.split("#", 1)[1]
        # Sphinx puts a label's id on an empty span at the top of the labelled section.
        text = page.evaluate("id => { const el = document.getElementById(id);"
                             " const sec = el && (el.closest('section') || el.parentElement);"
                             " return sec ? sec.innerText : null; }", anchor)
        if text is None or f"Check {claim}" not in text or f"Claim {claim}" not in text:
            missing.append(f"{claim}: {href}")
    page.close()
    assert not missing, "claim links that miss their check:\n" + "\n".join(missing)
    assert not log.problems(), log.problems()


# ---------------------------------------------------------------- the explorers, moved

#: The mime type of a widget's view, and the class of an explorer's static HTML.
_WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
_EXPLORER_CLASS = 'class="dn-explorer"'

#: Chapters whose stored explorer output is still a widget alone (no static view), each with
#: who re-executes it. A listed chapter that has its static explorer fails, so the list shrinks.
EXPLORERS_NOT_YET_STATIC: dict[str, str] = {}


def _explorer_outputs(notebook: Path) -> tuple[int, int]:
    """(outputs that show a widget, of which carry a static explorer too) in ``notebook``."""
    widgets = static = 0
    for cell in json.loads(notebook.read_text())["cells"]:
        for out in cell.get("outputs", []):
            data = out.get("data", {})
            if _WIDGET_VIEW in data:
                widgets += 1
                html = data.get("text/html", "")
                static += _EXPLORER_CLASS in ("".join(html) if isinstance(html, list) else html)
    return widgets, static


def _expected_explorers() -> dict[str, int]:
    return {f"notebooks/{nb.stem}.html": n[1]
            for nb in sorted((ROOT / "notebooks").glob("*.ipynb"))
            if (n := _explorer_outputs(nb))[0]}


def test_every_widget_output_has_its_static_explorer():
    """Every stored widget output carries the static explorer the site shows (a widget alone
    would render there with controls that do nothing), except the chapters listed."""
    counts = {page: _explorer_outputs(ROOT / "notebooks" / page.split("/")[1].replace(
        ".html", ".ipynb")) for page in _expected_explorers()}
    assert counts, "no notebook stores a widget: the chapters' explorers are gone"
    dead = {p: c for p, c in counts.items() if c[1] < c[0] and p not in EXPLORERS_NOT_YET_STATIC}
    assert not dead, f"widget outputs without a static explorer ((widgets, static)): {dead}"
    fixed = [p for p in EXPLORERS_NOT_YET_STATIC if p in counts and counts[p][1] == counts[p][0]]
    assert not fixed, (f"{fixed} now have static explorers: remove them from "
                       "EXPLORERS_NOT_YET_STATIC")


#: One explorer's state: the frame its controls point at and what is visible.
_EXPLORER_STATE = """e => {
  const frames = [...e.querySelectorAll('[data-dn-frame]')];
  const shown = frames.filter(f => !f.hidden && f.offsetParent !== null);
  return {frames: frames.length, index: +e.getAttribute('data-dn-shown'),
          shown: shown.map(f => frames.indexOf(f)),
          content: shown.map(f => f.tagName === 'IMG' ? f.getAttribute('src').slice(-200)
                                                      : f.textContent),
          loaded: shown.every(f => f.tagName !== 'IMG' || (f.complete && f.naturalWidth > 0)),
          controls: [...e.querySelectorAll('[data-dn-control]')].map(c => ({
              tag: c.tagName.toLowerCase(), value: +c.value, n: +c.getAttribute('data-n')}))};
}"""


def test_explorers_respond_to_their_controls(browser_context, site):
    """On each page with explorers (network cut, 1300 px wide), every control of every explorer
    is moved as a reader would (arrow keys on a slider, a new option in a list): afterwards
    exactly one frame shows, it is the frame the controls point at, it is loaded, and it
    differs from the one shown before. One screenshot of each explorer before and after."""
    context, base, blocked = browser_context
    expected = {p: n for p, n in _expected_explorers().items() if n}
    assert expected, "no chapter stores a static explorer"
    problems, moved = [], 0
    for rel, n in expected.items():
        page = context.new_page()
        log = PageLog(page, blocked)
        try:
            page.set_viewport_size({"width": 1300, "height": 900})
            page.goto(base + rel, wait_until="load", timeout=PAGE_SETTLE_MS)
            explorers = page.locator(".dn-explorer")
            if explorers.count() != n:
                problems.append(f"{rel}: {explorers.count()} explorers on the page, "
                                f"the notebook stores {n}")
            for i in range(explorers.count()):
                ex = explorers.nth(i)
                ex.scroll_into_view_if_needed()
                shot = SHOTS / _shot_name(rel).replace(".png", f"__explorer{i + 1}")
                ex.screenshot(path=f"{shot}_before.png")
                state = ex.evaluate(_EXPLORER_STATE)
                for k, ctl in enumerate(state["controls"]):
                    where = f"{rel} explorer {i + 1} control {k + 1}"
                    if ctl["n"] < 2:
                        continue
                    before = ex.evaluate(_EXPLORER_STATE)
                    control = ex.locator("[data-dn-control]").nth(k)
                    if ctl["tag"] == "select":
                        control.select_option(index=(ctl["value"] + 1) % ctl["n"])
                    else:
                        control.focus()
                        page.keyboard.press("ArrowLeft" if ctl["value"] == ctl["n"] - 1
                                            else "ArrowRight")
                    after = ex.evaluate(_EXPLORER_STATE)
                    moved += 1
                    values = [c["value"] for c in after["controls"]]
                    want = 0
                    for c, v in zip(after["controls"], values):
                        want = want * c["n"] + v
                    if values == [c["value"] for c in before["controls"]]:
                        problems.append(f"{where}: the control did not move")
                    elif after["shown"] != [want] or after["index"] != want:
                        problems.append(f"{where}: shows frames {after['shown']}, "
                                        f"the controls point at {want}")
                    elif after["content"] == before["content"]:
                        problems.append(f"{where}: what is shown did not change")
                    elif not after["loaded"]:
                        problems.append(f"{where}: the shown frame's image did not load")
                ex.screenshot(path=f"{shot}_after.png")
            problems += [f"{rel}: {p}" for p in log.problems()]
        finally:
            page.close()
    assert moved >= sum(expected.values()), f"only {moved} controls moved"
    assert not problems, "explorers that do not respond:\n" + "\n".join(problems)
