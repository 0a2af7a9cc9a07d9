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
"""

from __future__ import annotations

import io
import re

_ROLE = re.compile(r":(?:[\w-]+:)+`")      # :py:class:`X` -> `X` (bare docutils knows no roles)


def docstring_problems(text: str) -> str:
    """What docutils reports when it parses ``text`` (empty if the text is clean reST)."""
    from docutils.core import publish_doctree

    stream = io.StringIO()
    try:
        publish_doctree(_ROLE.sub("`", text), settings_overrides={
            "report_level": 2, "halt_level": 5, "warning_stream": stream,
            "file_insertion_enabled": False, "raw_enabled": False})
    except Exception as e:  # noqa: BLE001 - any parser failure means "show it verbatim"
        return f"{type(e).__name__}: {e}"
    return stream.getvalue().strip()


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


def setup(app):
    app.connect("autodoc-process-docstring", _process_docstring)
    app.connect("html-page-context", _dedupe_scripts, priority=100)   # before any handler returns a template
    return {"parallel_read_safe": True, "parallel_write_safe": True}
