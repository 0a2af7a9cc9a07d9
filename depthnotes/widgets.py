"""Interactive explorers for Jupyter (ipywidgets), one per chapter that has one.

A widget needs a running kernel: on the static website its sliders render but do nothing.
Every explorer therefore has a plain function behind it (tested like any other code) and the
chapter shows a static figure that tells the same story without a kernel.

Explorers from different chapters live here side by side; each is a function that builds and
returns its widget, so importing this module costs nothing until one is called.
"""

from __future__ import annotations

from .config import ModelConfig
from .params import count_params


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
