"""The book's one line fit: y ~ intercept + slope * x by least squares, with R^2.

Chapter 4 fits the residual variance against the layer index (C6), chapter 7 the decode time
against depth (C16); both use this function, so both report R^2 the same way. NumPy only.
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
