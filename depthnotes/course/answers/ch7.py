"""What chapter 7's exercises expect, and the hints their checks give (instructor only:
the student edition holds these sealed, ``depthnotes.course.sealed``)."""

from __future__ import annotations

from depthnotes.core.config import ModelConfig
from depthnotes.core.fitting import LinearFit
from depthnotes.course.kinds import Written, Function, Mistake


def _decode_bytes(L: int, d: int, V: int) -> int:
    from depthnotes.bench.latency import decode_weight_bytes

    return decode_weight_bytes(ModelConfig(n_layer=L, d_model=d, n_head=4, vocab_size=V))


#: The model and the position exercise 7.2's task names ("GPT-2 medium (24 blocks, d = 1,024) at
#: position 1,000"); the model's shape is the preset's (``core.config.PRESETS``), not typed here.
BOUND_MODEL = "gpt2-medium"
BOUND_POSITION = 1000


def _step_bytes(L: int, d: int, position: int) -> int:
    """What exercise 7.2's decode step streams: 12d² fp32 weights per block and the KV cache of
    ``position`` earlier tokens (the library's count of it, ``decode_kv_bytes``)."""
    from depthnotes.bench.latency import decode_kv_bytes

    cache = decode_kv_bytes(ModelConfig(n_layer=L, d_model=d, n_head=1), position)
    return 4 * 12 * d * d * L + cache


def _step_ms(L: int, d: int, position: int, gbs: float) -> float:
    return _step_bytes(L, d, position) / (gbs * 1e9) * 1e3


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
        forbids=("decode_kv_bytes",),
        # position 0 (weights alone), GPT-2 large's shape near its window, a cache past the
        # weights (position over 6d), one block, and several widths and rates
        cases=lambda: [((L, d, t, gbs), _step_ms(L, d, t, gbs))
                       for L, d, t, gbs in ((36, 1280, 0, 20.0), (36, 1280, 1000, 20.0),
                                            (12, 768, 300, 12.5), (6, 256, 8192, 8.0),
                                            (1, 64, 100, 1.0), (48, 1600, 2048, 50.0))],
        idea="At batch 1 a step reads each block's weights once, and in every block also the "
             "key and the value stored for each earlier position; add up the bytes of both "
             "over the blocks and ask how long memory takes to deliver them.",
        mistakes=(
            Mistake(lambda L, d, t, gbs: 4 * 12 * d * d * L / (gbs * 1e9) * 1e3,
                    "A step after a prompt also reads the KV cache: every block reads what it "
                    "stored for each earlier position."),
            Mistake(lambda L, d, t, gbs: 4 * L * (12 * d * d + d * t) / (gbs * 1e9) * 1e3,
                    "Each cached position holds both a key and a value in every block: a step "
                    "reads the two."),
            Mistake(lambda L, d, t, gbs: _step_bytes(L, d, t) / (gbs * 1e9),
                    "That is in seconds: the task asks for milliseconds."),
            Mistake(lambda L, d, t, gbs: _step_bytes(L, d, t) / (gbs * 2**30) * 1e3,
                    "The task's GB is 10^9 bytes (a GiB, 2^30 bytes, is another unit)."),
            Mistake(lambda L, d, t, gbs: 4 * (12 * d * d * L + 2 * d * t) / (gbs * 1e9) * 1e3,
                    "Every block keeps its own keys and values (its attention caches what it "
                    "computed): the cache is read in each block, as the weights are."),
            Mistake(lambda L, d, t, gbs: _step_bytes(L, d, t) / 4 / (gbs * 1e9) * 1e3,
                    "Memory delivers bytes: an fp32 number takes 4."),
            Mistake(lambda L, d, t, gbs: (_step_bytes(L, d, t) + 4 * 13 * d * L)
                    / (gbs * 1e9) * 1e3,
                    "Count only the 12d² matrix weights of each block, as the task says (its "
                    "biases and norms are left out here, unlike exercise 7.1)."),
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
    """Exercise 7.2's sub-questions: (a) where the cache reads as many bytes as the weights,
    and (b) GPT-2 medium's lowest time per step at ``BOUND_POSITION`` on this machine. The
    shape comes from the preset, the read rate from what chapter 7 published on the machine
    that built the site (``c16_bw``, GB/s), since it is a measurement."""
    from depthnotes.bench.latency import decode_kv_bytes

    config = ModelConfig.preset(BOUND_MODEL)
    L, d, t = config.n_layer, config.d_model, BOUND_POSITION
    weights = _step_bytes(L, d, 0)
    cache = _step_bytes(L, d, t) - weights
    # the weights over one position's cache: L is in both, so it cancels
    crossing = weights // decode_kv_bytes(config, 1)
    ms = _step_ms(L, d, t, float(published["c16_bw"]))
    return (f"(a) A block reads 12d² weight numbers and 2d cache numbers per earlier "
            f"position, so the cache reads as many bytes as the weights at position 6d "
            f"whatever the depth (both terms are per block, so L cancels): at position "
            f"{crossing:,} for d = {d:,}, beyond GPT-2 medium's {config.context:,}-token "
            f"window. (b) step_bound_ms({L}, {d}, {t}, bandwidth) depends on the machine. "
            f"At position {t:,} GPT-2 medium ({L} blocks) reads {weights / 1e9:.2f} GB of "
            f"block weights and {cache / 1e9:.2f} GB of cache ({cache / weights:.0%} of the "
            f"weights), {(weights + cache) / 1e9:.2f} GB per step; on the machine that built "
            f"the site memory delivered {published['c16_bw']} GB/s, so a step there could not "
            f"take less than about {ms:.0f} ms, at most about "
            f"{1e3 / ms:.0f} tokens per second (the head, left out here, "
            f"adds {4 * config.vocab_size * d / 1e9:.2f} GB more per step).")


#: Answers to the sub-questions of the tasks that no check reads (the instructor's notes):
#: text, or a function of the chapter's published numbers for a note that depends on the
#: machine (``depthnotes.tools.summaries.render_instructor`` passes them).
SUBQUESTIONS = {
    "7.2": _note_7_2,
    "7.3": _note_7_3,
}
