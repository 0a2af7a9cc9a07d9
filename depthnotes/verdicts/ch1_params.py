"""Chapter 1's rules for claims C1 (a block holds about 12 d² weights) and C2 (the
non-embedding count grows linearly in depth and quadratically in width), on exact parameter
counts.

The counts are arithmetic on a configuration, the same on every machine: a claim's stated
tolerance holds or it does not, and the word is the evidence library's for exact checks
(``evidence.exact_word``: reproduced, or contradicted here).
"""

from __future__ import annotations

from collections.abc import Sequence

from depthnotes.core.checks import check_number
from depthnotes.verdicts.evidence import exact_word

#: C1: at GPT-2 small's width (``C1_WIDTH``) the block's 12 d² matrices must be more than this
#: share of its exact parameter count.
C1_SHARE, C1_WIDTH = 0.998, 768
#: C2: the log-log slopes of the non-embedding count must lie within ``SLOPE_TOL_L`` of 1 in
#: depth and ``SLOPE_TOL_D`` of 2 in width, and L·12·d² within ``APPROX_TOL`` (relative) of
#: every exact count.
SLOPE_TOL_L, SLOPE_TOL_D, APPROX_TOL = 0.01, 0.02, 0.02


def block_share_word(widths: Sequence[int], shares: Sequence[float]) -> str:
    """C1's word: ``shares[i]`` is 12 d² over one block's exact count at ``widths[i]``
    (increasing). Reproduced when the share grows with every wider d and exceeds ``C1_SHARE``
    at d = ``C1_WIDTH``."""
    widths, shares = list(widths), [check_number("share", s, 0.0, 1.0) for s in shares]
    if len(widths) != len(shares) or widths != sorted(set(widths)):
        raise ValueError(f"widths must increase and match shares one to one, got {widths}")
    if C1_WIDTH not in widths:
        raise ValueError(f"widths must include d = {C1_WIDTH}, got {widths}")
    grows = all(a < b for a, b in zip(shares, shares[1:]))
    return exact_word(grows and shares[widths.index(C1_WIDTH)] > C1_SHARE)


def scaling_word(slopes_L: Sequence[float], slopes_d: Sequence[float],
                 approx_err: float) -> str:
    """C2's word from the log-log slopes of the non-embedding count in depth (one per width)
    and in width (one per depth), and the largest relative error of L·12·d² against the exact
    counts: reproduced when every slope lies within its tolerance of 1 (depth) and 2 (width)
    and the error is below ``APPROX_TOL``."""
    if not slopes_L or not slopes_d:
        raise ValueError("scaling_word needs at least one slope in depth and one in width")
    check_number("approx_err", approx_err, low=0.0)
    return exact_word(all(abs(s - 1) < SLOPE_TOL_L for s in slopes_L)
                      and all(abs(s - 2) < SLOPE_TOL_D for s in slopes_d)
                      and approx_err < APPROX_TOL)
