"""A small Sphinx extension with the book's site fixes (listed in ``_config.yml``).

1. **Docstrings that are not valid reST are shown verbatim.** The package's docstrings are
   written for people reading the source — aligned columns, ASCII tables, ``x^2`` — and most are
   also valid reST; those render as usual. For the rest, docutils would report "Unexpected
   indentation" or "Malformed table", which the strict (``-W``) build turns into errors. Each
   docstring is parsed with docutils first and, if it has any problem, autodoc gets the same text
   as a literal block, exactly as written.
2. **No script twice.** sphinx-thebe registers its inline configuration script each time the
   environment reads documents, and a page that declares ``const THEBE_JS_URL`` twice throws a
   console error in the browser. Identical script entries are kept once per page.
3. **The prose's numbers from the stored outputs.** The chapters quote measured numbers with
   MyST's inline ``{eval}`num.name``` role, which JupyterLab (``jupyterlab-myst``) evaluates in
   the kernel. The site is built without a kernel, so this extension replaces myst-nb's
   ``eval`` role (which needs inline execution) with one that reads the text that
   ``depthnotes.page.publish.publish`` glued under ``name`` in the notebook's stored outputs, the
   outputs nbval checks. A page that is not a notebook (the summaries page) may quote a name
   that exactly one notebook publishes. An unknown or ambiguous name is a build error.
4. **Printed output wraps.** ``site_static/depthnotes-site.css`` makes what a cell prints wrap
   at the column's edge, so a long verdict line or a table row does not scroll sideways.
"""

from __future__ import annotations

import copy
import functools
import io
import json
import re
from pathlib import Path

from docutils import nodes
from docutils.frontend import get_default_settings
from docutils.parsers.rst import Parser
from docutils.readers.standalone import Reader as StandaloneReader
from docutils.utils import new_document
from docutils.writers.null import Writer as NullWriter
from sphinx.util.docutils import SphinxRole

_ROLE = re.compile(r":(?:[\w-]+:)+`")      # :py:class:`X` -> `X` (bare docutils knows no roles)


def docstring_problems(text: str) -> str:
    """What docutils reports when it parses ``text`` (empty if the text is clean reST).

    The same parse and transforms as ``docutils.core.publish_doctree``, with the parser and its
    settings made once: building docutils' option parser for every docstring took 3 of the
    site build's 60 s (about 700 docstrings; measured with cProfile)."""
    stream = io.StringIO()
    settings = copy.copy(_settings())
    settings.warning_stream = stream
    try:
        document = new_document("<docstring>", settings)
        _PARSER.parse(_ROLE.sub("`", text), document)
        document.transformer.populate_from_components((_READER, _PARSER, _WRITER))
        document.transformer.apply_transforms()
    except Exception as e:  # noqa: BLE001 - any parser failure means "show it verbatim"
        return f"{type(e).__name__}: {e}"
    return stream.getvalue().strip()


_PARSER = Parser()
#: ``publish_doctree``'s other components: their transforms find problems too (an undefined
#: ``|substitution|`` is reported by the standalone reader's transforms, not the parser).
_READER, _WRITER = StandaloneReader(parser=_PARSER), NullWriter()


@functools.lru_cache(maxsize=1)
def _settings():
    settings = get_default_settings(Parser)
    settings.report_level, settings.halt_level = 2, 5
    settings.file_insertion_enabled = settings.raw_enabled = False
    return settings


def verbatim_if_invalid(lines: list[str]) -> list[str]:
    """``lines`` unchanged if they are valid reST, else the same text as a literal block."""
    if lines and docstring_problems("\n".join(lines)):
        return ["::", ""] + [("    " + line) if line else "" for line in lines] + [""]
    return lines


def _process_docstring(app, what, name, obj, options, lines: list[str]) -> None:
    lines[:] = verbatim_if_invalid(list(lines))


def _script_key(script) -> tuple:
    filename = (script.filename if hasattr(script, "filename") else str(script)) or ""
    attrs = getattr(script, "attributes", {}) or {}
    return filename, tuple(sorted((k, str(v)) for k, v in attrs.items()))


def _dedupe_scripts(app, pagename, templatename, context, doctree) -> None:
    scripts = context.get("script_files")
    if not scripts:
        return
    seen, kept = set(), []
    for script in scripts:
        key = _script_key(script)
        if key not in seen:
            seen.add(key)
            kept.append(script)
    scripts[:] = kept


GLUE_MIME = "application/papermill.record/text/plain"
_PUBLISHED = re.compile(r"num\.([A-Za-z_]\w*)\Z")   # what {eval} may quote: num.<name>


def glued_texts(notebook: Path) -> dict[str, str]:
    """``{name: text}`` of every glue record stored in ``notebook``'s outputs."""
    found = {}
    for cell in json.loads(notebook.read_text(encoding="utf-8")).get("cells", []):
        for out in cell.get("outputs", []):
            name = (out.get("metadata") or {}).get("scrapbook", {}).get("name")
            if name and GLUE_MIME in out.get("data", {}):
                found[name] = out["data"][GLUE_MIME]
    return found


class StoredEvalRole(SphinxRole):
    """``{eval}`num.name``` filled from the stored glue record ``name`` (see the module doc)."""

    def run(self):
        match = _PUBLISHED.match(self.text.strip())
        if not match:
            return self._error(f"{{eval}}`{self.text}`: the book's prose quotes published "
                               "numbers only, as {eval}`num.<name>` (see depthnotes.page.publish)")
        name = match.group(1)
        texts = self._texts()
        here = texts.get(self.env.docname, {})
        if name in here:
            return [nodes.inline(self.rawtext, here[name], classes=["published"])], []
        owners = [doc for doc, found in texts.items() if name in found]
        if len(owners) == 1:
            return [nodes.inline(self.rawtext, texts[owners[0]][name],
                                 classes=["published"])], []
        where = f"published by {', '.join(owners)}" if owners else "published by no notebook"
        return self._error(f"{{eval}}`{self.text}`: {name!r} is {where} (stored outputs; "
                           "run `python -m depthnotes.tools.execute` on the notebook)")

    def _texts(self) -> dict[str, dict[str, str]]:
        cache = getattr(self.env, "_depthnotes_published", None)
        if cache is None:
            cache = {}
            for doc in sorted(self.env.found_docs):
                path = Path(self.env.doc2path(doc))
                if path.suffix == ".ipynb":
                    cache[doc] = glued_texts(path)
            self.env._depthnotes_published = cache
        return cache

    def _error(self, message: str):
        msg = self.inliner.reporter.error(message, line=self.lineno)
        return [self.inliner.problematic(self.rawtext, self.rawtext, msg)], [msg]


def _forget_published(app, env, docnames) -> None:
    env._depthnotes_published = None       # re-read the stored outputs on every build


def _add_static(app) -> None:
    app.config.html_static_path.append(str(Path(__file__).parent / "site_static"))


def setup(app):
    app.add_role("eval", StoredEvalRole(), override=True)   # after myst-nb's own (inline-only)
    app.connect("builder-inited", _add_static)
    app.add_css_file("depthnotes-site.css")
    app.connect("env-before-read-docs", _forget_published)
    app.connect("autodoc-process-docstring", _process_docstring)
    app.connect("html-page-context", _dedupe_scripts, priority=100)   # before any handler returns a template
    return {"parallel_read_safe": True, "parallel_write_safe": True}
