"""Interactive explorers for Jupyter (ipywidgets), one per chapter that has one.

A widget needs a running kernel: on the static website its sliders render but do nothing.
Every explorer therefore has a plain function behind it (tested like any other code) and the
chapter shows a static figure that tells the same story without a kernel.

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


def param_explorer():
    """Sliders for L, d, FFN ratio and vocabulary -> the exact count, by group."""
    import ipywidgets as w

    def show(n_layer, log2_d, ffn_mult, vocab_size, tie_embeddings):
        print(format_breakdown(param_breakdown(n_layer, 2 ** log2_d, ffn_mult=ffn_mult,
                                               vocab_size=vocab_size,
                                               tie_embeddings=tie_embeddings)))

    return w.interactive(
        show,
        n_layer=w.IntSlider(value=12, min=1, max=96, description="L (layers)"),
        log2_d=w.IntSlider(value=9, min=6, max=13, description="log2 d"),
        ffn_mult=w.IntSlider(value=4, min=1, max=8, description="d_ff / d"),
        vocab_size=w.Dropdown(options=[256, 32000, 50257, 128256], value=50257,
                              description="vocab"),
        tie_embeddings=w.Checkbox(value=True, description="tied head"),
    )


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


def variance_explorer():
    """Sliders for depth and a choice of norm placement / init -> the variance profile."""
    import ipywidgets as w
    import matplotlib.pyplot as plt

    from depthnotes.page.plots import NORM_COLORS

    def show(n_layer, scheme, log_y):
        v = variance_profile(n_layer, scheme)
        colour = NORM_COLORS[VARIANCE_SCHEMES[scheme]["norm"]]
        fig, ax = plt.subplots(figsize=(6.4, 3.4))
        ax.plot(range(n_layer + 1), v, "o-", ms=3, color=colour)
        if log_y:
            ax.set_yscale("log")
        ax.set_xlabel("residual stream after block l (0 = embedding)")
        ax.set_ylabel("variance of the stream")
        ax.set_title(f"{scheme}, L = {n_layer}: final variance {v[-1]:.3g}")
        plt.show()

    return w.interactive(
        show,
        n_layer=w.IntSlider(value=48, min=1, max=200, description="L (layers)"),
        scheme=w.Dropdown(options=list(VARIANCE_SCHEMES), value="pre-norm, plain init",
                          description="scheme"),
        log_y=w.Checkbox(value=False, description="log y"),
    )


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
                                                            200_000, 400_000)):
    """Pick a budget P -> its family of shapes, their d/L, and the sweep's loss where trained."""
    import ipywidgets as w

    def show(budget, max_layers):
        print(format_family(budget_family_rows(budget, base, measured, max_layers=max_layers)))

    return w.interactive(
        show,
        budget=w.SelectionSlider(options=list(budgets), value=budgets[0],
                                 description="P (params)"),
        max_layers=w.IntSlider(value=16, min=1, max=64, description="max L"),
    )


# -- chapter 8: looped vs distinct blocks on k-hop chasing ----------------------------------
def loop_explorer(looped, sweep):
    """Pick a number of block applications n and a hop count k -> each seed's k-hop accuracy
    during training for one block once, n distinct blocks and one block looped n times
    (``plots.plot_loop_curves`` of the records ``looped_khop`` and ``khop_depth_sweep``)."""
    import ipywidgets as w
    import matplotlib.pyplot as plt

    from depthnotes.page.plots import new_figure, plot_loop_curves

    loops = sorted(looped.arm(a)["info"]["loops"] for a in looped.arms)
    hops = list(range(1, sweep.config["data"]["max_hops"] + 1))

    def show(n, k):
        fig, (ax,) = new_figure(height=3.4)
        plot_loop_curves(ax, looped, sweep, n, k)
        plt.show()

    return w.interactive(
        show,
        n=w.SelectionSlider(options=[1, *loops], value=loops[0],
                            description="n (applications)"),
        k=w.SelectionSlider(options=hops, value=min(2, hops[-1]), description="k (hops)"),
    )
