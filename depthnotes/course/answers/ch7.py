"""What chapter 7's exercises expect, and the hints their checks give (instructor only:
the student edition holds these sealed, ``depthnotes.course.sealed``)."""

from __future__ import annotations

from depthnotes.core.config import ModelConfig
from depthnotes.course.kinds import Function, Mistake, Number


def _decode_bytes(L: int, d: int, V: int) -> int:
    from depthnotes.bench.latency import decode_weight_bytes

    return decode_weight_bytes(ModelConfig(n_layer=L, d_model=d, n_head=4, vocab_size=V))


EXERCISES = {
    "7.1": Number(
        needs=("fit",), rel=1e-6, expected=lambda g: g["fit"].predict(96),
        idea="The fitted line gives a fixed cost that every token pays plus a cost per block; "
             "evaluate it at the depth asked for.",
        mistakes=(
            Mistake(lambda g: g["fit"].slope * 96,
                    "Every token also pays the line's fixed part, whatever the depth."),
            Mistake(lambda g: 2 * g["fit"].predict(48),
                    "The fixed part is paid once per token, not once per 48 blocks."),
        )),
    "7.2": Function(
        cases=lambda g: [((L, d, V), _decode_bytes(L, d, V))
                         for L, d, V in ((1, 64, 256), (12, 768, 50257), (48, 512, 96))],
        idea="List what one decode step reads — every block's weights, biases and norms, the "
             "final norm, the whole head, one row of each embedding table — and give bytes "
             "at 4 per fp32 number.",
        mistakes=(
            Mistake(lambda L, d, V: _decode_bytes(L, d, V) // 4,
                    "The task asks for bytes: an fp32 number takes 4."),
            Mistake(lambda L, d, V: _decode_bytes(L, d, V) + 4 * (V - 1) * d,
                    "A decode step reads one row of the token table, not all of it (the tied "
                    "head reads the whole matrix once)."),
        )),
    "7.3": Number(
        needs=("bandwidth",), rel=1e-3,
        expected=lambda g: _decode_bytes(24, 1024, 50257) / (g["bandwidth"] * 1e9) * 1e3,
        idea="The lower bound is the bytes read per token divided by the rate at which "
             "memory delivers them; mind the units (GB/s and ms).",
        mistakes=(
            Mistake(lambda g: _decode_bytes(24, 1024, 50257) / (g["bandwidth"] * 1e9),
                    "That is in seconds: the task asks for milliseconds."),
            Mistake(lambda g: _decode_bytes(24, 1024, 50257) / 4 / (g["bandwidth"] * 1e9) * 1e3,
                    "Count bytes, not parameters: fp32 takes 4 bytes each."),
        )),
    "7.4": Number(
        needs=("head", "fit"), rel=0.02,
        expected=lambda g: g["head"].median / g["fit"].predict(6),
        idea="The large-vocabulary line (fit_big) at this depth is a token's whole time, head "
             "included; the fraction is the head's own time over that total.",
        mistakes=(
            Mistake(lambda g: g["head"].median / (g["head"].median + g["fit"].predict(6)),
                    "fit_big's line already contains the head (it is most of its intercept): "
                    "do not add the head's time again."),
            Mistake(lambda g: g["head"].median / (6 * g["fit"].slope),
                    "A token's time is the whole line at L = 6, intercept included."),
        )),
}
