"""Initialisation schemes.

Four schemes (``ModelConfig.init``); in all of them biases start at 0, LayerNorm gains at 1,
and the token and position embeddings (and an untied output head) ~ N(0, 0.02^2), GPT-2's
embedding init, so that two schemes differ only in the blocks' matrices:

* ``"normal"`` — every block matrix ~ N(0, 0.02^2). Each block then adds a branch of roughly
  fixed variance to the residual stream, so the stream's variance grows with depth (chapter 4).
* ``"gpt2"`` — as ``"normal"``, but the two projections that write into the residual stream
  (``attn.c_proj`` and ``mlp.c_proj``) use std 0.02/sqrt(2L): "we scale the weights of residual
  layers at initialization by a factor of 1/sqrt(N) where N is the number of residual layers"
  (Radford et al. 2019, section 2.3; a block has two residual layers, so N = 2L).
* ``"xavier"`` — Xavier-normal (Glorot and Bengio 2010): each projection ~ N(0, 2/(fan_in +
  fan_out)) with its own fans (W_Q, W_K, W_V and W_O are d x d each, the FFN's matrices
  d x d_ff and d_ff x d). The init of the post-LN analyses (Xiong et al. 2020, Liu et al.
  2020), valid with every norm placement, so a post-norm baseline can be the papers'.
* ``"deepnorm"`` — DeepNet (Wang et al. 2022, section 4.3 and Figure 2): ``"xavier"`` with gain
  beta (``ModelConfig.init_beta``) on the FFN's two matrices and the attention's value and
  output projections; gain 1 on the queries and keys (which do not change the scale of what a
  block writes). Post-norm with ``"xavier"`` and DeepNorm with ``"deepnorm"`` therefore differ
  only in alpha and beta.

Shared weights (``ModelConfig.n_unique_blocks``): only the stored blocks are drawn, once
each. Every depth-dependent std (GPT-2's 0.02/sqrt(2L), DeepNet's beta) counts L as the number
of *applications*, not of stored blocks. The 1/sqrt(N) argument is about how many branch
outputs are added to the residual stream: a block looped L times adds 2L of them, exactly as
L distinct blocks do, so the stream's variance at init sums 2L terms either way (a looped
block's terms are correlated, which if anything makes the sum larger, not smaller). Scaling by
the stored count instead would give a one-block loop the init of a one-block model, std
0.02/sqrt(2), and let its stream grow with L.

Weights are stored ``[in, out]`` (see ``model.Conv1D``); Xavier's fans are symmetric, so the
layout does not change the std.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from depthnotes.core.config import ModelConfig

#: The std of GPT-2's N(0, std^2) init.
GPT2_STD = 0.02


def residual_output_std(config: ModelConfig) -> float:
    """Std of the two output projections under "normal" (0.02) and "gpt2" (0.02/sqrt(2L)),
    L = ``n_layer``, the number of block applications (also with shared blocks)."""
    if config.init == "gpt2":
        return GPT2_STD / math.sqrt(2 * config.n_layer)
    return GPT2_STD


def init_weights(model: nn.Module, config: ModelConfig, seed: int | None = None) -> None:
    """Draw every parameter of ``model`` (a ``Transformer``) according to ``config.init``.

    With a ``seed`` the draw is reproducible without touching the global RNG.
    """
    gen = None
    if seed is not None:
        gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for emb in (model.wte.weight, model.wpe.weight, model.lm_head):
            if emb is not None:                        # lm_head: None when tied to wte
                emb.normal_(0.0, GPT2_STD, generator=gen)
        for module in model.modules():
            if isinstance(module, nn.LayerNorm):
                module.weight.fill_(1.0)
                if module.bias is not None:
                    module.bias.zero_()
        for block in model.h:                          # the stored blocks, once each
            _init_block(block, config, gen)


def _init_block(block: nn.Module, config: ModelConfig, gen) -> None:
    d, d_ff = config.d_model, config.d_ff
    attn, mlp = block.attn, block.mlp
    for lin in (attn.c_attn, attn.c_proj, mlp.c_fc, mlp.c_proj):
        if lin.bias is not None:
            lin.bias.zero_()
    if config.init in ("xavier", "deepnorm"):
        beta = config.init_beta                     # 1 for "xavier"
        w = attn.c_attn.weight                      # [d, 3d]: columns q | k | v
        _xavier_normal(w[:, : 2 * d], fan_in=d, fan_out=d, gain=1.0, gen=gen)   # W_Q, W_K
        _xavier_normal(w[:, 2 * d:], fan_in=d, fan_out=d, gain=beta, gen=gen)   # W_V
        _xavier_normal(attn.c_proj.weight, fan_in=d, fan_out=d, gain=beta, gen=gen)
        _xavier_normal(mlp.c_fc.weight, fan_in=d, fan_out=d_ff, gain=beta, gen=gen)
        _xavier_normal(mlp.c_proj.weight, fan_in=d_ff, fan_out=d, gain=beta, gen=gen)
        return
    attn.c_attn.weight.normal_(0.0, GPT2_STD, generator=gen)
    mlp.c_fc.weight.normal_(0.0, GPT2_STD, generator=gen)
    out_std = residual_output_std(config)
    attn.c_proj.weight.normal_(0.0, out_std, generator=gen)
    mlp.c_proj.weight.normal_(0.0, out_std, generator=gen)


def _xavier_normal(t: torch.Tensor, fan_in: int, fan_out: int, gain: float, gen) -> None:
    """Xavier/Glorot normal: std = gain * sqrt(2 / (fan_in + fan_out)).

    Fans are given per projection, since W_Q, W_K and W_V share one fused matrix.
    """
    t.normal_(0.0, gain * math.sqrt(2.0 / (fan_in + fan_out)), generator=gen)
