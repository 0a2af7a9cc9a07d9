"""The prose as a student sees it in JupyterLab: numbers, citations and labels rendered.

A real JupyterLab (``requirements.txt`` pins it and the ``jupyterlab-myst`` extension) is
started on 127.0.0.1 (a free port, token auth, no browser, settings and workspace in a temporary
folder) on a temporary copy of chapter 2, and Debian's Chromium, driven by Playwright with
every request off 127.0.0.1 blocked, opens the chapter without running anything. The rendered
markdown must show every number the chapter's prose quotes, as the website shows it (the text
``publish`` glued, which the site fills in), and no raw MyST: no ``{eval}``, ``{glue}`` or
``{cite}`` role and no ``(label)=`` target. A screenshot goes to
``_build/screenshots/jupyterlab_02_gpt2_small.png``.

An explorer (``depthnotes/page/explorer.py``) stores two views in one output: an ipywidgets
view and a self-contained ``text/html`` one for the website. In JupyterLab the live widget must
win: a second test opens a copy of chapter 5, runs its explorer's cell in the page's kernel,
and checks that the output is the ipywidgets explorer (not the website's HTML) and that its
controls respond: choosing another scheme and moving the depth slider each change the figure
shown. Screenshot: ``_build/screenshots/jupyterlab_explorer_05_fixes.png``.

How the cell is run, and why (the first version hung in the full suite): the test does not
type Shift+Enter into an editor. It waits until JupyterLab's own objects say the notebook's
kernel is connected and idle (the server starts with ``expose_app_in_browser`` so the page
has ``window.jupyterapp``), selects the cell and runs JupyterLab's ``notebook:run-cell``
command, and reads the cell's execution count from the notebook model. The kernel runs
PyTorch on one thread, as the book's notebooks do (``OMP_NUM_THREADS=1``): with the default
two threads on a machine whose two cores are busy (the browser test in the other xdist
worker), OpenMP's threads wait on each other; measured with two busy loops beside it, the
explorer's 30 variance profiles took 19.0 s (17.5 CPU s) on two threads and 6.8 s on one.
If the cell does not finish in time, the failure says how far JupyterLab got, whether the
kernel was using CPU, and where the kernel's Python threads were (a ``faulthandler`` dump),
instead of only "timeout".

Skipped with the reason when Chromium or ``jupyterlab-myst`` is missing, except in CI
(``CI=true``), where that is a failure (as in ``tests/test_site.py``).
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path
from urllib.parse import urlparse

import pytest

try:
    import psutil                                      # ipykernel's dependency
except ImportError:                                    # pragma: no cover
    psutil = None

from depthnotes.tools.sphinx_site import glued_texts
from test_site import CHROMIUM, CHROMIUM_FLAGS, SHOTS, _free_port, _missing

ROOT = Path(__file__).resolve().parents[1]
CHAPTER = ROOT / "notebooks" / "02_gpt2_small.ipynb"
#: A chapter with a figure explorer, and its explorer's cell (the cell imports what it needs).
EXPLORER_CHAPTER, EXPLORER_CELL = ROOT / "notebooks" / "05_fixes.ipynb", "variance_explorer()"
RAW_MYST = ("{eval}", "{glue", "{cite", ")=")
#: JupyterLab's default windowing may leave cells far below the viewport unrendered; the test
#: reads the whole notebook, so it turns windowing off (it changes only when cells render).
SETTINGS = {"@jupyterlab/notebook-extension/tracker.jupyterlab-settings":
            {"windowingMode": "none"},
            "@jupyterlab/apputils-extension/notification.jupyterlab-settings":
            {"fetchNews": "false"}}
#: A rendered markdown cell: jupyterlab-myst's widget (JupyterLab's own, without the extension).
RENDERED = ".jp-MarkdownCell .myst, .jp-MarkdownCell .jp-RenderedMarkdown"
#: The markdown cells' rendered text, without typeset math (MathJax's text is not prose).
_PROSE_JS = """sel => Array.from(document.querySelectorAll(sel))
  .map(el => { const c = el.cloneNode(true);
               c.querySelectorAll('mjx-container, .MathJax, script').forEach(m => m.remove());
               return c.textContent; }).join('\\n')"""


def _quoted_numbers(path: Path) -> dict[str, str]:
    """``{expression: text}`` of every ``{eval}`` the chapter's prose quotes, as glued."""
    glued = glued_texts(path)
    quoted = {}
    for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
        for expr in cell.get("metadata", {}).get("user_expressions", []):
            quoted[expr["expression"]] = glued[expr["expression"].removeprefix("num.")]
    return quoted


def _get(url: str, timeout: float = 2.0) -> bytes:
    with urllib.request.urlopen(url, timeout=timeout) as r:     # 127.0.0.1 only
        return r.read()


@pytest.fixture
def jupyterlab(tmp_path):
    """A JupyterLab server on a copy of the chapter; yields (base URL, token, notebook name).

    Everything the server and its kernels write is in ``tmp_path`` (settings, workspaces,
    runtime files, the IPython profile), so two servers never share a file. The profile's
    startup file lets the test ask a kernel for its threads' stacks (``SIGUSR1``)."""
    if importlib.util.find_spec("jupyterlab_myst") is None:
        _missing("jupyterlab-myst is not installed (pip install -r requirements.txt)")
    work, settings = tmp_path / "work", tmp_path / "settings"
    work.mkdir()
    for notebook in (CHAPTER, EXPLORER_CHAPTER):
        shutil.copy(notebook, work / notebook.name)
    for name, value in SETTINGS.items():
        (settings / name).parent.mkdir(parents=True, exist_ok=True)
        (settings / name).write_text(json.dumps(value))
    startup = tmp_path / "ipython" / "profile_default" / "startup"
    startup.mkdir(parents=True)
    (startup / "00-stacks.py").write_text(
        "import faulthandler, signal\n"
        f"faulthandler.register(signal.SIGUSR1, all_threads=True,\n"
        f"                      file=open({str(tmp_path / 'kernel_stacks.txt')!r}, 'a'))\n")
    port, token = _free_port(), secrets.token_hex(16)
    env = dict(os.environ, JUPYTERLAB_SETTINGS_DIR=str(settings),
               JUPYTERLAB_WORKSPACES_DIR=str(tmp_path / "workspaces"),
               JUPYTER_RUNTIME_DIR=str(tmp_path / "runtime"),
               IPYTHONDIR=str(tmp_path / "ipython"),
               OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")     # the kernel: one thread
    cmd = [sys.executable, "-m", "jupyterlab", "--no-browser", "--ip=127.0.0.1",
           f"--port={port}", "--port-retries=0", f"--IdentityProvider.token={token}",
           f"--ServerApp.root_dir={work}", "--LabApp.check_for_updates_class="
           "jupyterlab.NeverCheckForUpdate", "--LabApp.expose_app_in_browser=True"]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        cmd.append("--allow-root")                   # CI runs as root
    log = (tmp_path / "jupyterlab.log").open("w")
    server = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT, cwd=work)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                _get(f"{base}/api/status?token={token}")
                break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    pytest.fail("JupyterLab did not start within 30 s:\n"
                                + (tmp_path / "jupyterlab.log").read_text()[-3000:])
                time.sleep(0.3)
        yield base, token, CHAPTER.name, server, tmp_path
    finally:
        try:                                          # stop the kernel the page started
            for kernel in json.loads(_get(f"{base}/api/kernels?token={token}")):
                req = urllib.request.Request(
                    f"{base}/api/kernels/{kernel['id']}?token={token}", method="DELETE")
                urllib.request.urlopen(req, timeout=5).close()
        except OSError:
            pass
        server.terminate()
        try:
            server.wait(timeout=15)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait(timeout=5)
        log.close()


def _sync_playwright():
    if not CHROMIUM.exists():
        _missing(f"no Chromium at {CHROMIUM}: install Debian's `chromium` package")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _missing("the playwright package is not installed (pip install -r requirements.txt)")
    return sync_playwright()


def _offline_page(browser):
    """A page whose requests off 127.0.0.1 are aborted."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})

    def route(r):
        if urlparse(r.request.url).hostname == "127.0.0.1":
            r.continue_()
        else:
            r.abort("internetdisconnected")

    context.route("**/*", route)
    page = context.new_page()
    page.set_default_timeout(30_000)
    return page


def _in_own_thread(test):
    """Run ``test`` in a thread of its own and re-raise what it raised there (a failure, a
    skip). Playwright's sync API refuses to start in a thread where an asyncio event loop is
    marked running, and a test run earlier in the same pytest worker can leave the main thread
    so (both tests here failed that way in a clean-clone CI run on 2026-12-06, where the
    worker's order of files differed from earlier runs); a new thread has no loop."""
    @functools.wraps(test)
    def run(*args, **kwargs):
        raised = []

        def target():
            try:
                test(*args, **kwargs)
            except BaseException as error:  # noqa: BLE001 - re-raised in the test's thread
                raised.append(error)

        thread = threading.Thread(target=target, name=test.__name__)
        thread.start()
        thread.join()
        if raised:
            raise raised[0]
    return run


@contextlib.contextmanager
def _lab_page(url: str):
    """Chromium on ``url`` (a JupyterLab page) with the network off 127.0.0.1 cut; the browser
    is closed after the block, whatever happens in it."""
    with _sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), headless=True,
                                    args=CHROMIUM_FLAGS)
        try:
            page = _offline_page(browser)
            page.goto(url)
            yield page
        finally:
            browser.close()


@_in_own_thread
def test_jupyterlab_shows_the_prose_numbers(jupyterlab):
    base, token, name = jupyterlab[:3]
    quoted = _quoted_numbers(CHAPTER)
    assert len(quoted) >= 20, "chapter 2 should quote its numbers with {eval}"
    with _lab_page(f"{base}/lab/tree/{name}?token={token}") as page:
        page.wait_for_selector(RENDERED)
        # the last quoted number rendered: the markdown pass has reached the end
        page.wait_for_function(
            "t => document.querySelector('.jp-Notebook').textContent.includes(t)",
            arg=list(quoted.values())[-1])
        prose = page.evaluate(_PROSE_JS, RENDERED)
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.locator(RENDERED).filter(has_text="The sizes in the paper").first\
            .scroll_into_view_if_needed()
        page.screenshot(path=str(SHOTS / f"jupyterlab_{CHAPTER.stem}.png"))
    missing = {e: t for e, t in quoted.items() if t not in prose}
    assert not missing, f"numbers the site shows but JupyterLab does not: {missing}"
    raw = [r for r in RAW_MYST if r in prose]
    assert not raw, f"raw MyST in JupyterLab's rendering: {raw}"
    assert "Check C3" in prose and "radford2019language" in prose    # label hid, cite rendered


#: The ``src`` of the image an explorer cell's output shows (the widget's current frame).
_SHOWN_JS = """cell => { const img = cell.querySelector('.jp-OutputArea img');
                         return img ? img.getAttribute('src') : null; }"""
#: True once that image differs from ``before``.
_CHANGED_JS = """([cell, before]) => { const img = cell.querySelector('.jp-OutputArea img');
                                      return !!img && img.getAttribute('src') !== before; }"""
#: JupyterLab's notebook panel of ``path`` (a function body's first line for the scripts below).
_PANEL = """const app = window.jupyterapp;
  const panel = app && Array.from(app.shell.widgets('main'))
                           .find(w => w.context && w.context.path === path);"""
#: True once the notebook is open with its kernel connected and idle (JupyterLab's view).
_READY_JS = """path => { %s
  if (!panel || !panel.context.isReady || !panel.sessionContext.isReady) return false;
  const k = panel.sessionContext.session && panel.sessionContext.session.kernel;
  return !!k && k.connectionStatus === 'connected' && k.status === 'idle'; }""" % _PANEL
#: Select cell ``i`` alone and run it with JupyterLab's command; the command's promise settles
#: when the kernel has replied, and leaves its outcome in ``window.__dnRun``.
_RUN_JS = """([path, i]) => { %s
  app.shell.activateById(panel.id);
  const nb = panel.content;
  nb.activeCellIndex = i; nb.deselectAll();
  window.__dnRun = null;
  app.commands.execute('notebook:run-cell').then(
      ok => { window.__dnRun = 'ok ' + ok; }, err => { window.__dnRun = 'error ' + err; });
  return nb.widgets[i].model.sharedModel.getSource(); }""" % _PANEL
#: What JupyterLab knows about cell ``i`` and the kernel (for the checks and a failure's text).
_STATE_JS = """([path, i]) => { %s
  if (!panel) return {panel: false};
  const k = panel.sessionContext.session && panel.sessionContext.session.kernel;
  const m = panel.content.widgets[i].model;
  return {run: window.__dnRun === undefined ? null : window.__dnRun,
          count: m.executionCount, state: m.executionState,
          kernel: k ? k.status + '/' + k.connectionStatus : 'none',
          dialogs: Array.from(document.querySelectorAll('.jp-Dialog'))
                        .map(d => d.innerText.slice(0, 200))}; }""" % _PANEL


def _kernel_processes(server) -> list:
    if psutil is None:
        return []
    kernels = []
    for c in psutil.Process(server.pid).children(recursive=True):
        try:
            if "ipykernel" in " ".join(c.cmdline()):
                kernels.append(c)
        except psutil.Error:
            pass
    return kernels


def _why_not_run(page, server, tmp_path, path, at) -> str:
    """A failure's text: the cell's and kernel's state, whether the kernel was computing
    (its CPU seconds over 2 s), its threads' stacks, the server's last log lines."""
    try:
        lines = [f"JupyterLab's view: {page.evaluate(_STATE_JS, [path, at])}"]
    except Exception as e:                               # the page itself is broken
        lines = [f"JupyterLab's view: unreadable ({e})"]
    def cpu_seconds(process) -> float:                  # user + system
        return sum(process.cpu_times()[:2])

    for k in _kernel_processes(server):
        before = cpu_seconds(k)
        time.sleep(2)
        after = cpu_seconds(k)
        lines.append(f"kernel {k.pid}: {after:.1f} CPU s, {after - before:.2f} in the last 2 s")
        os.kill(k.pid, signal.SIGUSR1)                   # faulthandler's dump (fixture)
    time.sleep(1)
    stacks = tmp_path / "kernel_stacks.txt"
    if stacks.exists():
        lines.append("kernel stacks:\n" + stacks.read_text()[-4000:])
    lines.append("server log:\n" + (tmp_path / "jupyterlab.log").read_text()[-2000:])
    return "\n".join(lines)


@_in_own_thread
def test_jupyterlab_runs_an_explorer_as_a_live_widget(jupyterlab):
    base, token, _, server, tmp_path = jupyterlab
    path = EXPLORER_CHAPTER.name
    cells = json.loads(EXPLORER_CHAPTER.read_text(encoding="utf-8"))["cells"]
    at = [i for i, c in enumerate(cells) if c["cell_type"] == "code"
          and EXPLORER_CELL in "".join(c["source"])]
    assert len(at) == 1, f"one cell of {path} runs the explorer"
    at = at[0]
    with _lab_page(f"{base}/lab/tree/{path}?token={token}") as page:
        # JupyterLab starts the notebook's kernel itself; wait until it is connected and
        # idle (under load this took 25 s and more)
        try:
            page.wait_for_function(_READY_JS, arg=path, timeout=180_000, polling=500)
        except Exception:
            pytest.fail("the notebook's kernel was not connected and idle within 180 s\n"
                        + _why_not_run(page, server, tmp_path, path, at))
        source = page.evaluate(_RUN_JS, [path, at])
        assert EXPLORER_CELL in source, f"cell {at} is not the explorer's: {source!r}"
        # its first run draws every frame (about 20 s alone, on one thread); the
        # command's promise settles when the kernel replies
        try:
            page.wait_for_function(
                "() => window.__dnRun !== null", timeout=300_000, polling=1000)
        except Exception:
            SHOTS.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(SHOTS / f"jupyterlab_explorer_{EXPLORER_CHAPTER.stem}"
                                             "_failed.png"))
            pytest.fail("the explorer's cell did not finish within 300 s\n"
                        + _why_not_run(page, server, tmp_path, path, at))
        state = page.evaluate(_STATE_JS, [path, at])
        assert state["run"] == "ok true" and state["count"] == 1, \
            f"the cell ran once, without error: {state}"
        cell = page.locator(".jp-Notebook .jp-Cell").nth(at)
        cell.scroll_into_view_if_needed()
        # the output shows one of the two views the explorer's bundle carries
        page.wait_for_function(
            "c => c.querySelector('.jp-OutputArea .widget-interact, "
            ".jp-OutputArea .dn-explorer')", arg=cell.element_handle())
        assert cell.locator(".jp-OutputArea .dn-explorer").count() == 0, \
            "JupyterLab shows the website's html view, not the widget"
        live = cell.locator(".jp-OutputArea .widget-interact")
        live.wait_for()
        select = live.locator(".widget-dropdown select")
        handle = live.locator(".widget-hslider .noUi-handle")
        assert select.count() == 1 and handle.count() == 1, \
            "a choice of scheme and a depth slider"
        page.wait_for_function(_SHOWN_JS, arg=cell.element_handle())
        shown = [cell.evaluate(_SHOWN_JS)]
        options = select.locator("option").all_inner_texts()
        current = select.evaluate("s => s.options[s.selectedIndex].text")
        select.select_option(label=next(o for o in options if o != current))
        page.wait_for_function(_CHANGED_JS, arg=[cell.element_handle(), shown[-1]])
        shown.append(cell.evaluate(_SHOWN_JS))
        handle.focus()
        page.keyboard.press("ArrowLeft")             # one depth down the grid
        page.wait_for_function(_CHANGED_JS, arg=[cell.element_handle(), shown[-1]])
        shown.append(cell.evaluate(_SHOWN_JS))
        SHOTS.mkdir(parents=True, exist_ok=True)
        cell.screenshot(path=str(SHOTS / f"jupyterlab_explorer_{EXPLORER_CHAPTER.stem}.png"))
    assert len(set(shown)) == 3, "each control changed the figure"
    assert all(s.startswith("data:image/png") for s in shown), [s[:30] for s in shown]
