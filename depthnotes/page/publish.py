"""Numbers a notebook hands to its prose: formatted once, shown the same everywhere.

A chapter's markdown quotes what its code measured with an inline expression,
``{eval}`num.slope_L```. One call in the code cell publishes the numbers::

    publish(slope_L=(slope, ".4f"), n_blocks=12, verdict="stalls")

Each value is formatted here, before anything stores it: a float must come with its format
spec (``(value, ".4f")``), so a full-precision float never reaches a stored output (the last
bits of a float differ between machines; the page shows only the digits its format keeps).
Integers and strings are shown as they are; an integer may also take a spec (``(n, ",")``).

The formatted text then goes three ways, all the same string:

- ``num.<name>`` in the kernel, which JupyterLab (with ``jupyterlab-myst``) evaluates for the
  ``{eval}`` roles when the notebook runs or is opened with stored results;
- a myst-nb glue record named ``<name>`` (a hidden display output), which nbval compares on
  every test run and from which the website fills the same ``{eval}`` roles
  (``depthnotes.tools.sphinx_site``), since the site is built without a kernel;

Not part of the core: ``config``, ``params``, ``model`` and ``init`` never import it.
"""

from __future__ import annotations

import numbers
import re
from types import SimpleNamespace

__all__ = ["Shown", "num", "publish", "format_value"]

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


class Shown(str):
    """A published number as the page shows it. Its ``repr`` is the bare text, so Jupyter
    displays ``0.9998``, not ``'0.9998'``, both inline in JupyterLab and in the glue record."""

    __slots__ = ()

    def __repr__(self) -> str:
        return str(self)


#: Every value published in this kernel, by name: ``{eval}`num.slope_L``` reads it.
num = SimpleNamespace()


def format_value(name: str, value) -> Shown:
    """``value`` formatted as the page shows it; a clear error for what cannot be shown.

    ``(number, spec)`` is ``format(number, spec)``; an ``int`` or a ``str`` stands as it is.
    A bare float, a bool or anything else is refused, so that no float is glued unrounded.
    """
    if isinstance(value, tuple):
        if len(value) != 2 or not isinstance(value[1], str):
            raise TypeError(f"publish: {name} must be (number, format spec), e.g. (x, '.3f'); "
                            f"got {value!r}")
        number, spec = value
        if isinstance(number, bool) or not isinstance(number, numbers.Real):
            raise TypeError(f"publish: {name}: {type(number).__name__} is not a real number")
        if not isinstance(number, numbers.Integral) and not spec.strip(",_"):
            raise ValueError(f"publish: {name}: a float needs a precision in its format spec "
                             f"(e.g. '.3f', '.2e', ',.0f'), got {spec!r}")
        if isinstance(number, numbers.Integral):
            number = int(number)
        else:
            number = float(number)
        return Shown(format(number, spec))
    if isinstance(value, bool):
        raise TypeError(f"publish: {name} is a bool; publish the word the page shows instead")
    if isinstance(value, numbers.Integral):
        return Shown(str(int(value)))
    if isinstance(value, str):
        return Shown(value)
    if isinstance(value, numbers.Real):
        raise TypeError(f"publish: {name} is a {type(value).__name__} ({value!r}); give the "
                        f"digits the page shows: {name}=(value, '.3f')")
    raise TypeError(f"publish: {name}: cannot show a {type(value).__name__}; allowed: "
                    "(number, spec), int or str")


#: The mime-type prefix of a glue record that is stored, not shown (myst-nb's ``GLUE_PREFIX``).
GLUE_PREFIX = "application/papermill.record/"


def _glue(name: str, text: Shown) -> None:
    """The record ``myst_nb.glue(name, text, display=False)`` displays, displayed here:
    importing ``myst_nb.ext.glue`` imports nbformat and jsonschema, which cost a kernel about
    3 s of CPU at a chapter's first ``publish`` (``tests/test_pages.py`` checks the two agree)."""
    from IPython.core.formatters import format_display_data
    from IPython.display import display

    bundle, metadata = format_display_data(text)
    metadata["scrapbook"] = dict(name=name, mime_prefix=GLUE_PREFIX)
    display({GLUE_PREFIX + k: v for k, v in bundle.items()}, raw=True, metadata=metadata)


def publish(**values) -> None:
    """Format each value (see :func:`format_value`), store it as ``num.<name>`` and glue it
    under ``<name>`` for the website. Returns nothing, so that a ``publish(...)`` at the end of
    a cell displays nothing."""
    from importlib.util import find_spec

    # with myst-nb installed (the site's install), a glue record; a student's light install
    # (the notebooks extra) has none: the page's {eval} roles read num.<name>
    glue = _glue if find_spec("myst_nb") is not None else None

    if not values:
        raise ValueError("publish: give at least one name=value")
    shown = {}
    for name, value in values.items():
        if not _NAME.match(name):
            raise ValueError(f"publish: {name!r} is not a valid name (letters, digits, _)")
        shown[name] = format_value(name, value)
    for name, text in shown.items():
        setattr(num, name, text)
        if glue is not None:
            glue(name, text)
