"""The book's one line fit: y ~ intercept + slope * x by least squares, with R^2, and the same
fit on log-log axes for power laws.

Chapter 4 fits the residual variance against the layer index (C6), chapter 7 the decode time
against depth (C16); both use ``linear_fit``, so both report R^2 the same way. A power law
y ~ x^k is that line through (log x, log y) (``log_log_fit``: its slope is the exponent k),
which chapters 1, 4, 5, 7 and 8 fit. NumPy only.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class LinearFit:
    """y ~ intercept + slope * x, with the coefficient of determination R^2."""

    slope: float
    intercept: float
    r2: float

    def predict(self, x):
        """The fitted line at ``x`` (a number or an array)."""
        return self.intercept + self.slope * np.asarray(x, dtype=float)


def linear_fit(x, y) -> LinearFit:
    """Least-squares line through the points (x, y) and its R^2 (1.0 when y is constant)."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if x.shape != y.shape or x.ndim != 1 or len(x) < 2:
        raise ValueError(f"x and y must be 1-D of the same length >= 2, got {x.shape}, {y.shape}")
    if np.unique(x).size < 2:
        raise ValueError("x needs at least two different values to fit a line")
    slope, intercept = np.polyfit(x, y, 1)
    resid = y - (intercept + slope * x)
    ss_tot = float(((y - y.mean()) ** 2).sum())
    r2 = 1.0 - float((resid ** 2).sum()) / ss_tot if ss_tot > 0 else 1.0
    return LinearFit(float(slope), float(intercept), r2)


def log_log_fit(x, y) -> LinearFit:
    """``linear_fit`` of log y against log x (natural logs): y ~ exp(intercept) * x^slope, so
    ``slope`` is the exponent of a power law and ``predict(np.log(x))`` is log y on the line.
    Every x and y must be finite and > 0 (leave out missing or zero points before fitting)."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    for name, v in (("x", x), ("y", y)):
        if not np.all(np.isfinite(v) & (v > 0)):
            raise ValueError(f"a log-log fit needs every {name} finite and > 0, got {v.tolist()}")
    return linear_fit(np.log(x), np.log(y))
