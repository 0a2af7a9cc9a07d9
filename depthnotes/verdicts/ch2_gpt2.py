"""Chapter 2's rules for claims C3 (GPT-2 small holds about 7.08M parameters per block and 85M
outside the embeddings) and C4 (doubling its depth adds about 85M parameters, doubling its
width about 255M), on exact parameter counts.

As in chapter 1 the counts are arithmetic, the same on every machine: a claim's stated
tolerance holds or it does not (``evidence.exact_word``: reproduced, or contradicted here).
"""

from __future__ import annotations

from depthnotes.core.checks import check_int
from depthnotes.verdicts.evidence import exact_word

#: C3: the claimed non-embedding count, and the relative tolerances of the per-block count
#: against 12 d² and of the non-embedding count against ``C3_NON_EMBEDDING``.
C3_NON_EMBEDDING, C3_BLOCK_TOL, C3_TOL = 85e6, 0.002, 0.01
#: C4: the claimed parameters added by twice the depth and by twice the width, within
#: ``C4_TOL`` (relative); the totals must double (within ``DEPTH_RATIO_TOL`` of 2) and
#: about quadruple (within ``WIDTH_RATIO_TOL`` of 4: biases and norms grow only linearly).
C4_ADDED_DEPTH, C4_ADDED_WIDTH, C4_TOL = 85e6, 255e6, 0.01
DEPTH_RATIO_TOL, WIDTH_RATIO_TOL = 0.001, 0.005


def block_count_word(per_block: int, d_model: int, non_embedding: int) -> str:
    """C3's word from GPT-2 small's exact counts: reproduced when one block's count is within
    ``C3_BLOCK_TOL`` of 12 d² and the non-embedding count within ``C3_TOL`` of
    ``C3_NON_EMBEDDING``."""
    for name, v in (("per_block", per_block), ("d_model", d_model),
                    ("non_embedding", non_embedding)):
        check_int(name, v)
    return exact_word(abs(per_block / (12 * d_model * d_model) - 1) < C3_BLOCK_TOL
                      and abs(non_embedding / C3_NON_EMBEDDING - 1) < C3_TOL)


def doubling_word(base: int, deep: int, wide: int) -> str:
    """C4's word from the block parameters of GPT-2 small (``base``), twice as deep
    (``deep``) and twice as wide (``wide``): reproduced when ``deep`` is twice ``base`` and
    ``wide`` about four times it, and the parameters each adds are within ``C4_TOL`` of the
    claimed ``C4_ADDED_DEPTH`` and ``C4_ADDED_WIDTH``."""
    for name, v in (("base", base), ("deep", deep), ("wide", wide)):
        check_int(name, v)
    return exact_word(abs(deep / base - 2) < DEPTH_RATIO_TOL
                      and abs(wide / base - 4) < WIDTH_RATIO_TOL
                      and abs((deep - base) / C4_ADDED_DEPTH - 1) < C4_TOL
                      and abs((wide - base) / C4_ADDED_WIDTH - 1) < C4_TOL)
