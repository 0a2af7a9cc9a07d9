"""The chapters' explorers, one per chapter that has one.

Each is an :class:`~depthnotes.page.explorer.Explorer`: its outputs are computed over a
small grid of control values when the notebook runs, and it shows as an ipywidgets explorer
in Jupyter and as a self-contained HTML explorer on the static website (no kernel needed;
see ``page/explorer.py``). The grids are the explorers' controls in both views. Every
explorer has a plain function behind it (tested like any other code).

Explorers from different chapters live here side by side; each is a function that builds and
returns its widget, so importing this module costs nothing until one is called.
"""

from __future__ import annotations

from depthnotes.core.config import ModelConfig
from depthnotes.core.params import count_params


# -- chapter 1: the parameter calculator -------------------------------------------------
def param_breakdown(n_layer: int, d_model: int, n_head: int = 1, ffn_mult: int = 4,
                    vocab_size: int = 50257, context: int = 1024, bias: bool = True,
                    tie_embeddings: bool = True) -> dict[str, int]:
    """Exact parameter groups of one shape, for the calculator and its tests."""
    cfg = ModelConfig(n_layer=n_layer, d_model=d_model, n_head=n_head, d_ff=ffn_mult * d_model,
                      vocab_size=vocab_size, context=context, bias=bias,
                      tie_embeddings=tie_embeddings)
    pc = count_params(cfg)
    blk = pc.per_block
    return {
        "attention weights (4·L·d²)": n_layer * blk.attention_weights,
        "FFN weights (2·L·d·d_ff)": n_layer * blk.ffn_weights,
        "biases and norms": n_layer * (blk.attention_biases + blk.ffn_biases + blk.norms)
        + pc.final_norm,
        "embeddings (and untied head)": pc.embedding,
        "total": pc.total,
        "12·L·d² approximation": pc.approx_12Ld2,
    }


def format_breakdown(parts: dict[str, int]) -> str:
    """The calculator's table as text: exact count and share of the total."""
    total = parts["total"]
    lines = []
    for name, n in parts.items():
        share = "" if name in ("total", "12·L·d² approximation") else f"{100 * n / total:6.1f} %"
        lines.append(f"{name:<30} {n:>15,} {share}")
    return "\n".join(lines)


#: The calculator's grid (the website shows every point of it; see ``explorer``).
PARAM_LAYERS = (1, 2, 4, 8, 12, 24, 48, 96)
PARAM_WIDTHS = tuple(2 ** k for k in range(6, 14))
PARAM_FFN_MULTS = (2, 4, 8)
PARAM_VOCABS = (256, 50257, 128256)


def param_explorer():
    """Controls for L, d, FFN ratio, vocabulary and a tied head -> the exact count, by group."""
    from depthnotes.page.explorer import Control, Explorer

    def show(n_layer, d_model, ffn_mult, vocab_size, tie_embeddings):
        return format_breakdown(param_breakdown(n_layer, d_model, ffn_mult=ffn_mult,
                                                vocab_size=vocab_size,
                                                tie_embeddings=tie_embeddings))

    return Explorer("Parameter calculator: the exact count of one shape, by group", [
        Control("n_layer", "L (layers)", PARAM_LAYERS, 12),
        Control("d_model", "d (width)", PARAM_WIDTHS, 512),
        Control("ffn_mult", "d_ff / d", PARAM_FFN_MULTS, 4),
        Control("vocab_size", "vocab", PARAM_VOCABS, 50257, kind="select"),
        Control("tie_embeddings", "tied head", (True, False), True, kind="select",
                labels=("yes", "no")),
    ], show)


# -- chapters 4 and 5: the residual-stream variance explorer -------------------------------
#: Norm placement and init schemes the explorer offers (label -> ModelConfig fields).
VARIANCE_SCHEMES = {
    "pre-norm, plain init": dict(norm="pre", init="normal"),
    "pre-norm, branch x 1/sqrt(2L)": dict(norm="pre", init="normal", branch_scale="1/sqrt(2L)"),
    "pre-norm, GPT-2 init": dict(norm="pre", init="gpt2"),
    "post-norm": dict(norm="post", init="normal"),
    "DeepNorm": dict(norm="deepnorm", init="deepnorm"),
}


def variance_profile(n_layer: int, scheme: str = "pre-norm, plain init", d_model: int = 64,
                     seed: int = 0, batch: int = 4, context: int = 32):
    """Residual-stream variance after the embedding and each block (L + 1 numbers) of an
    untrained model, on random tokens: what the explorer plots."""
    import torch

    from depthnotes.core.model import Transformer
    from depthnotes.measure.probes import residual_variance_by_layer

    if scheme not in VARIANCE_SCHEMES:
        raise ValueError(f"scheme must be one of {list(VARIANCE_SCHEMES)}, got {scheme!r}")
    cfg = ModelConfig(n_layer=n_layer, d_model=d_model, n_head=2, d_ff=2 * d_model,
                      vocab_size=128, context=context, **VARIANCE_SCHEMES[scheme])
    model = Transformer(cfg, seed=seed)
    idx = torch.randint(0, 128, (batch, context), generator=torch.Generator().manual_seed(seed))
    return residual_variance_by_layer(model, idx)


#: The variance explorer's depths (the website shows every scheme at each).
VARIANCE_LAYERS = (2, 6, 12, 24, 48, 96)


def variance_figure(n_layer: int, scheme: str):
    """The explorer's figure: one scheme's variance profile at depth ``n_layer``."""
    from depthnotes.page.plots import NORM_COLORS, finding, new_figure

    v = variance_profile(n_layer, scheme)
    fig, (ax,) = new_figure(height=3.0, per_row=1)
    ax.plot(range(n_layer + 1), v, "o-", ms=3, color=NORM_COLORS[VARIANCE_SCHEMES[scheme]["norm"]])
    ax.set_ylim(0, None)
    ax.set_xlabel("residual stream after block l (0 = embedding)")
    ax.set_ylabel("variance of the stream")
    finding(ax, f"{scheme}, L = {n_layer}: the variance ends at {v[-1]:.3g}, "
                f"{v[-1] / v[1]:.3g}x its value after block 1")
    return fig


def variance_explorer():
    """Controls for depth and a choice of norm placement / init -> the variance profile."""
    from depthnotes.page.explorer import Control, Explorer

    return Explorer("Residual-stream variance of an untrained model, block by block", [
        Control("n_layer", "L (layers)", VARIANCE_LAYERS, 48),
        Control("scheme", "scheme", tuple(VARIANCE_SCHEMES), "pre-norm, plain init",
                kind="select"),
    ], variance_figure)


# -- chapter 6: the budget explorer ---------------------------------------------------------
def budget_family_rows(budget: int, base: ModelConfig, measured=(), *, tolerance: float = 0.05,
                       d_multiple: int = 2, max_layers: int = 64) -> list[dict]:
    """The fixed-budget family of ``budget`` (shapes within ``tolerance``, L up to
    ``max_layers``), each row with its d/L and, where the sweep trained that shape, its
    measured validation loss (else None). ``measured`` holds ``budget.SweepPoint``s."""
    from depthnotes.core.params import shapes_for_budget

    losses = {(p.budget, p.n_layer, p.d_model): p.val_loss for p in measured}
    shapes = shapes_for_budget(budget, base, tolerance=tolerance, d_multiple=d_multiple,
                               n_layers=range(1, max_layers + 1))
    return [dict(n_layer=s.n_layer, d_model=s.d_model, aspect_ratio=s.aspect_ratio,
                 non_embedding=s.non_embedding,
                 val_loss=losses.get((budget, s.n_layer, s.d_model)))
            for s in shapes]


def format_family(rows: list[dict]) -> str:
    """The explorer's table as text."""
    lines = [f"{'L':>4} {'d':>5} {'d/L':>7} {'non-embedding':>14} {'val loss':>9}"]
    for r in rows:
        loss = "" if r["val_loss"] is None else f"{r['val_loss']:.3f}"
        lines.append(f"{r['n_layer']:>4} {r['d_model']:>5} {r['aspect_ratio']:>7.1f} "
                     f"{r['non_embedding']:>14,} {loss:>9}")
    return "\n".join(lines)


def budget_explorer(base: ModelConfig, measured=(), budgets=(25_000, 50_000, 100_000,
                                                            200_000, 400_000),
                    max_layers=(4, 8, 16, 32, 64)):
    """Pick a budget P -> its family of shapes, their d/L, and the sweep's loss where trained."""
    from depthnotes.page.explorer import Control, Explorer

    def show(budget, max_layers):
        return format_family(budget_family_rows(budget, base, measured, max_layers=max_layers))

    return Explorer("One parameter budget: its family of shapes", [
        Control("budget", "P (params)", tuple(budgets), budgets[0],
                labels=tuple(f"{b:,}" for b in budgets)),
        Control("max_layers", "max L", tuple(max_layers), 16 if 16 in max_layers
                else max_layers[-1]),
    ], show)


# -- chapter 8: looped vs distinct blocks on k-hop induction heads --------------------------
def loop_explorer(looped, *others, ks=(1, 2, 4, 8), lr: float | None = None):
    """Pick a learning rate and a hop count k -> each seed's k-hop accuracy during training
    for every kind of stack run at that rate: one block once, n distinct blocks and one block
    looped n times (``plots.plot_loop_rate_curves`` of ``verdicts.ch8_depth.loop_rate_curves``
    on the records ``looped_induction``, ``looped_induction_low``, ``induction_depth_sweep``
    and ``induction_rate_check``). It opens at learning rate ``lr`` (default: the middle of
    the grid) and k = 4."""
    from depthnotes.page.explorer import Control, Explorer, figure_frame
    from depthnotes.page.plots import new_figure, plot_loop_rate_curves
    from depthnotes.verdicts.ch8_depth import loop_arms, loop_rate_curves

    rates = sorted({lr for by_rate in loop_arms(looped, *others).values() for lr in by_rate})

    def show(lr, k):
        curves = loop_rate_curves(looped, *others, lr=lr, k=k)
        fig, (ax,) = new_figure(height=3.4, per_row=1)
        plot_loop_rate_curves(ax, curves, lr, k)
        return figure_frame(fig, alt=f"{k}-hop accuracy during training at learning rate "
                                     f"{lr:g}, each seed and the mean: "
                                     + ", ".join(curves))

    return Explorer("Looped or distinct blocks on k-hop induction heads", [
        Control("lr", "learning rate", tuple(rates),
                rates[len(rates) // 2] if lr is None else lr),
        Control("k", "k (hops)", tuple(ks), 4 if 4 in ks else ks[0]),
    ], show)


# -- chapter 7: depth and width -> time and bytes per token ---------------------------------
#: The latency explorer's grid (heads of width 64 at every width, as in GPT-2).
LATENCY_LAYERS = (1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64)
LATENCY_WIDTHS = (64, 128, 256, 384, 512, 768, 1024)
#: The cached positions at which the explorer quotes a token's KV-cache bytes.
LATENCY_KV_POSITIONS = 1024
#: Characters of the explorer's longest bar (a token's whole modelled time).
LATENCY_BAR = 28


def latency_shape(base: ModelConfig, n_layer: int, d_model: int) -> ModelConfig:
    """``base`` at depth ``n_layer`` and width ``d_model``, with heads of width 64."""
    return base.replace(n_layer=n_layer, d_model=d_model, n_head=max(1, d_model // 64))


def latency_breakdown(config: ModelConfig, *, bandwidth_gbs: float, dispatch_ms: float,
                      fixed_ms: float, cache) -> dict:
    """One shape's bytes per token and its time per token by chapter 7's model
    (``latency.modelled_ms_per_token``), in parts: streaming the weights at
    ``bandwidth_gbs``, dispatching L blocks, and the fixed cost per token. Also where the
    weights are read from (``cache_regime``) and the KV cache after
    :data:`LATENCY_KV_POSITIONS` positions."""
    from depthnotes.bench.latency import (cache_regime, decode_kv_bytes,
                                          decode_weight_bytes, modelled_ms_per_token,
                                          roofline_ms)

    weights = decode_weight_bytes(config)
    return {
        "params": count_params(config).total,
        "weight_bytes": weights,
        "kv_bytes": decode_kv_bytes(config, LATENCY_KV_POSITIONS),
        "regime": cache_regime(weights, cache),
        "stream_ms": roofline_ms(config, bandwidth_gbs),
        "dispatch_ms": config.n_layer * dispatch_ms,
        "fixed_ms": fixed_ms,
        "model_ms": modelled_ms_per_token(config, bandwidth_gbs, dispatch_ms, fixed_ms),
    }


def _g3(x: float) -> str:
    """``x`` to three significant digits, without an exponent."""
    return f"{x:,.0f}" if abs(x) >= 100 else f"{x:.3g}"


def format_latency(config: ModelConfig, parts: dict, *, bandwidth_gbs: float, cache,
                   measured=()) -> str:
    """The latency explorer's text: ``parts`` (``latency_breakdown``) as bytes, the model's
    time as bars, and the times measured at this width (``measured``: pairs of a config and
    its measured ms per token), kept apart from the model's."""
    import textwrap

    from depthnotes.bench.latency import CACHE_MARGIN, MEMORY_MARGIN

    size = (cache.bytes if hasattr(cache, "bytes") else cache) / 1e6
    where = {"memory": f"from memory (> {MEMORY_MARGIN:g}x the {size:.1f} MB cache)",
             "cache": f"from the cache (< {CACHE_MARGIN:g}x its {size:.1f} MB)",
             "transition": f"partly from the {size:.1f} MB cache"}[parts["regime"]]
    L, d, total = config.n_layer, config.d_model, parts["model_ms"]

    def row(label, value, unit="", tail=""):
        return f"  {label:<26}{_g3(value):>6}{unit} {tail}".rstrip()

    # the bars share out the parts above zero; a measured part below zero (a busy
    # machine's fit) is shown as a number with a note, without a bar
    scale = sum(max(0.0, parts[k]) for k in ("stream_ms", "dispatch_ms", "fixed_ms"))

    def bar(ms):
        if ms < 0:
            return "(below zero in this run)"
        return "\u2588" * max(1, round(LATENCY_BAR * ms / scale)) if ms > 0 else ""

    lines = [f"L = {L}, d = {d}: {_g3(parts['params'] / 1e6)}M parameters",
             "bytes read per token:",
             row("weights", parts["weight_bytes"] / 1e6, " MB", where),
             row(f"KV cache, {LATENCY_KV_POSITIONS:,} positions", parts["kv_bytes"] / 1e6,
                 " MB", "more"),
             f"ms per token by the model: {_g3(total)}"
             + (" (cached weights read faster)" if parts["regime"] == "cache" else ""),
             row(f"weights at {bandwidth_gbs:.1f} GB/s", parts["stream_ms"], "",
                 bar(parts["stream_ms"])),
             row(f"dispatch, {L} block{'s' if L > 1 else ''}", parts["dispatch_ms"], "",
                 bar(parts["dispatch_ms"])),
             row("fixed per token", parts["fixed_ms"], "", bar(parts["fixed_ms"]))]
    timed: dict[int, list[float]] = {}      # depth -> its times (two timings: both)
    for c, ms in measured:
        if c.d_model == d and c.vocab_size == config.vocab_size:
            timed.setdefault(c.n_layer, []).append(ms)
    if timed:
        lines.append(f"measured on this page at d = {d}, ms per token:")
        lines += textwrap.wrap(", ".join(f"L = {n}: " + " and ".join(map(_g3, timed[n]))
                                         for n in sorted(timed)), 66,
                               initial_indent="  ", subsequent_indent="  ")
    else:
        lines.append(f"no shape of width {d} was timed on this page")
    return "\n".join(lines)


def latency_explorer(base: ModelConfig, *, bandwidth_gbs: float, dispatch_ms: float,
                     fixed_ms: float, cache, measured=(), layers=LATENCY_LAYERS,
                     widths=LATENCY_WIDTHS, start=(8, 512)):
    """Controls for depth and width -> a token's bytes and its time by chapter 7's model
    (bytes at the measured read rate plus the measured dispatch costs), with the times the
    chapter measured at that width beside it (``latency_breakdown``, ``format_latency``)."""
    from depthnotes.page.explorer import Control, Explorer

    def show(n_layer, d_model):
        config = latency_shape(base, n_layer, d_model)
        parts = latency_breakdown(config, bandwidth_gbs=bandwidth_gbs,
                                  dispatch_ms=dispatch_ms, fixed_ms=fixed_ms, cache=cache)
        return format_latency(config, parts, bandwidth_gbs=bandwidth_gbs, cache=cache,
                              measured=measured)

    return Explorer("Depth and width: bytes and time per generated token", [
        Control("n_layer", "L (layers)", tuple(layers), start[0]),
        Control("d_model", "d (width)", tuple(widths), start[1]),
    ], show)
