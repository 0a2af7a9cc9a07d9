"""What chapter 7's exercises expect, and the hints their checks give (instructor only:
the student edition holds these sealed, ``depthnotes.course.sealed``)."""

from __future__ import annotations

from depthnotes.core.config import ModelConfig
from depthnotes.core.fitting import LinearFit
from depthnotes.course.kinds import Written, Function, Mistake


def _preset_bytes(name: str = "gpt2-medium") -> int:
    from depthnotes.bench.latency import decode_weight_bytes

    return decode_weight_bytes(ModelConfig.preset(name))


def _decode_bytes(L: int, d: int, V: int) -> int:
    from depthnotes.bench.latency import decode_weight_bytes

    return decode_weight_bytes(ModelConfig(n_layer=L, d_model=d, n_head=4, vocab_size=V))


#: The model exercise 7.2's task names ("how fast could GPT-2 medium decode here"); its shape
#: is the preset's (``core.config.PRESETS``), not typed here.
BOUND_MODEL = "gpt2-medium"


ANSWERS = {
    "7.1": Function(
        forbids=("decode_weight_bytes", "count_params", "numel", "Transformer"),
        cases=lambda: [((L, d, V), _decode_bytes(L, d, V))
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
    "7.2": Function(
        cases=lambda: [((_preset_bytes(), 20.0), _preset_bytes() / 20e9 * 1e3),
                       ((4e9, 8.0), 500.0), ((1e6, 25.0), 0.04)],
        idea="The lower bound is the bytes read per token divided by the rate at which "
             "memory delivers them; mind the units (GB/s and ms).",
        mistakes=(
            Mistake(lambda b, gbs: b / (gbs * 1e9),
                    "That is in seconds: the task asks for milliseconds."),
            Mistake(lambda b, gbs: b / 4 / (gbs * 1e9) * 1e3,
                    "The argument is bytes already: do not divide by 4 again."),
        )),
    "7.3": Function(
        cases=lambda: [((2.0, LinearFit(slope=0.4, intercept=2.5, r2=1.0), 6), 2.0 / 4.9),
                       ((1.0, LinearFit(slope=0.1, intercept=1.5, r2=1.0), 12), 1.0 / 2.7),
                       ((0.5, LinearFit(slope=1.0, intercept=0.6, r2=1.0), 2), 0.5 / 2.6)],
        idea="The line fitted at the large vocabulary is a token's whole time, head included; "
             "the fraction is the head's own time over that total at the depth asked for.",
        mistakes=(
            Mistake(lambda h, fit, L: h / (h + fit.predict(L)),
                    "That line already contains the head (it is most of its intercept): do not "
                    "add the head's time again."),
            Mistake(lambda h, fit, L: h / (L * fit.slope),
                    "A token's time is the whole line at L, intercept included."),
        )),
}

WRITTEN = {
    "7.6": Written(
        model="At batch 1 a decode step is memory-bound: every block's weights (about "
              "12d² numbers) are streamed from memory once per token, and the blocks run one "
              "after another, so the time per token is a fixed part (embedding, head, final "
              "norm) plus L times a block's time: a straight line in L. At equal parameters the "
              "weights streamed are about the same, but each block also pays costs that do not "
              "shrink with its width (launching its operations, norms, small products that do "
              "not reach full bandwidth), and a deeper shape reads more KV cache per token "
              "(L·d numbers per cached position, which is P/(12d)); fewer, wider blocks pay "
              "those costs fewer times.",
        rubric=('identifies decoding at batch 1 as memory-bound: weights streamed once per token',
                'explains the line: blocks run in sequence, each adding its time',
                'explains the equal-parameter gap by per-block costs and/or the larger KV cache of deep shapes'),
        points=3),
}

#: The depth at which exercise 7.3's task has the student try ``head_fraction`` on the chapter's
#: own line ("at 6 blocks"; a test reads the task, so the two cannot drift apart).
HEAD_FRACTION_DEPTH = 6


def _note_7_3(published: dict[str, str]) -> str:
    """Exercise 7.3's sub-question (the head's fraction at ``HEAD_FRACTION_DEPTH`` blocks on
    the chapter's own line) on the machine that built the site: computed from what chapter 7
    published there (``published``: name -> the text its stored outputs show, as the site
    shows it), since it is a timing and depends on the machine."""
    head, a, b = (float(published[n]) for n in ("head_ms", "fit_big_a", "fit_big_b"))
    L = HEAD_FRACTION_DEPTH
    return (f"head_fraction(head_big.median, fit_big, {L}) depends on the machine: it is "
            f"head_ms / fit_big.predict({L}). On the machine that built the site the head took "
            f"{published['head_ms']} ms and the line with the head was {published['fit_big_a']}"
            f" + {published['fit_big_b']}·L ms per token, so at {L} blocks the head is about "
            f"{head / (a + L * b):.0%} of a token's time (the chapter's summary gives its cost "
            f"as {published['head_layers']} blocks' time).")


def _note_7_2(published: dict[str, str]) -> str:
    """Exercise 7.2's sub-question (GPT-2 medium's lowest time per token on this machine): the
    bytes come from the preset's shape, the read rate from what chapter 7 published on the
    machine that built the site (``c16_bw``, GB/s), since it is a measurement."""
    n_bytes = _preset_bytes(BOUND_MODEL)
    gbs = float(published["c16_bw"])
    return (f"bound_ms(decode_weight_bytes(ModelConfig.preset({BOUND_MODEL!r})), bandwidth) "
            f"depends on the machine. GPT-2 medium reads {n_bytes / 1e9:.2f} GB of fp32 "
            f"weights per token; on the machine that built the site memory delivered "
            f"{published['c16_bw']} GB/s, so it could not decode faster than about "
            f"{n_bytes / (gbs * 1e9) * 1e3:.0f} ms per token there.")


#: Answers to the sub-questions of the tasks that no check reads (the instructor's notes):
#: text, or a function of the chapter's published numbers for a note that depends on the
#: machine (``depthnotes.tools.summaries.render_instructor`` passes them).
SUBQUESTIONS = {
    "7.2": _note_7_2,
    "7.3": _note_7_3,
}
