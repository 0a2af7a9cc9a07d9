"""Input checks shared by every module: one place for each rule about what a field may be.

Every public function of the package validates its arguments with these, so a wrong value
fails at once with a message that names the field and what it may be, instead of failing
deep inside PyTorch. ``bool`` is refused where an int is asked for (``True`` is an ``int`` in
Python, and ``n_layer=True`` is always a mistake). Standard library only: ``config.py`` and
``params.py`` use them without PyTorch.
"""

from __future__ import annotations

import math
from contextlib import contextmanager


def check_int(name: str, value, minimum: int = 1) -> int:
    """``value`` as an int >= ``minimum``; TypeError for a non-int (or bool), else ValueError."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int >= {minimum}, got {type(value).__name__} "
                        f"{value!r}")
    if value < minimum:
        raise ValueError(f"{name} must be an int >= {minimum}, got {value}")
    return value


def check_number(name: str, value, low: float | None = None, high: float | None = None, *,
                 low_open: bool = False, high_open: bool = False, extra: str = "") -> float:
    """``value`` as a finite number in the stated interval (open or closed at each end).

    ``extra`` is appended to the message, e.g. "(or None to turn clipping off)".
    """
    suffix = f" {extra}" if extra else ""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{name} must be a number{suffix}, got {type(value).__name__} "
                        f"{value!r}")
    ok = math.isfinite(value)
    if low is not None:
        ok = ok and (value > low if low_open else value >= low)
    if high is not None:
        ok = ok and (value < high if high_open else value <= high)
    if not ok:
        lo = "(-inf" if low is None else ("(" if low_open else "[") + f"{low:g}"
        hi = "inf)" if high is None else f"{high:g}" + (")" if high_open else "]")
        raise ValueError(f"{name} must be a finite number in {lo}, {hi}{suffix}, got {value!r}")
    return value


def check_choice(name: str, value, allowed) -> object:
    """``value`` if it is one of ``allowed``, else a ValueError that lists them."""
    if value not in allowed:
        raise ValueError(f"{name} must be one of {list(allowed)}, got {value!r}")
    return value


@contextmanager
def eval_mode(model):
    """The body runs with ``model`` in eval mode; its previous mode comes back afterwards,
    also when the body raises (a probe must never leave a model switched)."""
    was_training = model.training
    model.eval()
    try:
        yield model
    finally:
        model.train(was_training)
