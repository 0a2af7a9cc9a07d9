"""The prose as a student sees it in JupyterLab: numbers, citations and labels rendered.

A real JupyterLab (``requirements.txt`` pins it and the ``jupyterlab-myst`` extension) is
started on 127.0.0.1 (a free port, token auth, no browser, settings and workspace in a temporary
folder) on a temporary copy of chapter 2, and Debian's Chromium, driven by Playwright with
every request off 127.0.0.1 blocked, opens the chapter without running anything. The rendered
markdown must show every number the chapter's prose quotes, as the website shows it (the text
``publish`` glued, which the site fills in), and no raw MyST: no ``{eval}``, ``{glue}`` or
``{cite}`` role and no ``(label)=`` target. A screenshot goes to
``_build/screenshots/jupyterlab_02_gpt2_small.png``.

Skipped with the reason when Chromium or ``jupyterlab-myst`` is missing, except in CI
(``CI=true``), where that is a failure (as in ``tests/test_site.py``).
"""

from __future__ import annotations

import importlib.util
import json
import os
import secrets
import shutil
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from urllib.parse import urlparse

import pytest

from depthnotes.tools.sphinx_site import glued_texts
from test_site import CHROMIUM, CHROMIUM_FLAGS, SHOTS, _free_port, _missing

ROOT = Path(__file__).resolve().parents[1]
CHAPTER = ROOT / "notebooks" / "02_gpt2_small.ipynb"
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
    """A JupyterLab server on a copy of the chapter; yields (base URL, token, notebook name)."""
    if importlib.util.find_spec("jupyterlab_myst") is None:
        _missing("jupyterlab-myst is not installed (pip install -r requirements.txt)")
    work, settings = tmp_path / "work", tmp_path / "settings"
    work.mkdir()
    shutil.copy(CHAPTER, work / CHAPTER.name)
    for name, value in SETTINGS.items():
        (settings / name).parent.mkdir(parents=True, exist_ok=True)
        (settings / name).write_text(json.dumps(value))
    port, token = _free_port(), secrets.token_hex(16)
    env = dict(os.environ, JUPYTERLAB_SETTINGS_DIR=str(settings),
               JUPYTERLAB_WORKSPACES_DIR=str(tmp_path / "workspaces"),
               JUPYTER_RUNTIME_DIR=str(tmp_path / "runtime"))
    cmd = [sys.executable, "-m", "jupyterlab", "--no-browser", "--ip=127.0.0.1",
           f"--port={port}", "--port-retries=0", f"--IdentityProvider.token={token}",
           f"--ServerApp.root_dir={work}", "--LabApp.check_for_updates_class="
           "jupyterlab.NeverCheckForUpdate"]
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
        yield base, token, CHAPTER.name
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


def test_jupyterlab_shows_the_prose_numbers(jupyterlab):
    if not CHROMIUM.exists():
        _missing(f"no Chromium at {CHROMIUM}: install Debian's `chromium` package")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _missing("the playwright package is not installed (pip install -r requirements.txt)")
    base, token, name = jupyterlab
    quoted = _quoted_numbers(CHAPTER)
    assert len(quoted) >= 20, "chapter 2 should quote its numbers with {eval}"
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), headless=True,
                                    args=CHROMIUM_FLAGS)
        try:
            context = browser.new_context(viewport={"width": 1280, "height": 900})
            blocked: list[str] = []

            def route(r):
                if urlparse(r.request.url).hostname == "127.0.0.1":
                    r.continue_()
                else:
                    blocked.append(r.request.url)
                    r.abort("internetdisconnected")

            context.route("**/*", route)
            page = context.new_page()
            page.set_default_timeout(30_000)
            page.goto(f"{base}/lab/tree/{name}?token={token}")
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
        finally:
            browser.close()
    missing = {e: t for e, t in quoted.items() if t not in prose}
    assert not missing, f"numbers the site shows but JupyterLab does not: {missing}"
    raw = [r for r in RAW_MYST if r in prose]
    assert not raw, f"raw MyST in JupyterLab's rendering: {raw}"
    assert "Check C3" in prose and "radford2019language" in prose    # label hid, cite rendered
