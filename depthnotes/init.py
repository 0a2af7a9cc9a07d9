"""Initialisation schemes, and DeepNet's alpha and beta.

Three schemes (``ModelConfig.init``):

* ``"normal"`` — every weight matrix and both embeddings ~ N(0, 0.02^2); biases 0; LayerNorm
  gains 1. Each block then adds a branch of roughly fixed variance to the residual stream, so
  the stream's variance grows with depth (chapter 4).
* ``"gpt2"`` — as ``"normal"``, but the two projections that write into the residual stream
  (``attn.c_proj`` and ``mlp.c_proj``) use std 0.02/sqrt(2L): "we scale the weights of residual
  layers at initialization by a factor of 1/sqrt(N) where N is the number of residual layers"
  (Radford et al. 2019, section 2.3; a block has two residual layers, so N = 2L).
* ``"deepnorm"`` — DeepNet (Wang et al. 2022, section 4.3 and Figure 2): Xavier-normal init,
  with gain beta for the FFN's two matrices and the attention's value and output projections,
  and gain 1 for the queries and keys (which do not change the scale of what a block writes).
  Beta is chosen per module, never by matching a substring of a parameter's name, and biases
  are not scaled (they start at zero).

Weights are stored ``[in, out]`` (see ``model.Conv1D``); Xavier's fans are symmetric, so the
layout does not change the std.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import nn

from .config import ModelConfig

#: The std of GPT-2's N(0, std^2) init.
GPT2_STD = 0.02

ARCHITECTURES = ("decoder-only", "encoder-only", "encoder-decoder")


@dataclass(frozen=True)
class DeepNormConstants:
    """DeepNet's residual up-weighting alpha and init down-scaling beta.

    For ``"encoder-decoder"`` stacks ``alpha``/``beta`` are the decoder's and
    ``encoder_alpha``/``encoder_beta`` the encoder's; otherwise the encoder fields are None.
    """

    alpha: float
    beta: float
    encoder_alpha: float | None = None
    encoder_beta: float | None = None


def deepnorm_constants(n_layer: int, architecture: str = "decoder-only", *,
                       n_encoder_layer: int | None = None) -> DeepNormConstants:
    """Alpha and beta from DeepNet (Wang et al. 2022, Figure 2 / section 4.3).

    With N encoder layers and M decoder layers:

    - encoder-only: alpha = (2N)^(1/4), beta = (8N)^(-1/4)
    - decoder-only: alpha = (2M)^(1/4), beta = (8M)^(-1/4)
    - encoder-decoder, encoder: alpha = 0.81 (N^4 M)^(1/16), beta = 0.87 (N^4 M)^(-1/16)
    - encoder-decoder, decoder: alpha = (3M)^(1/4), beta = (12M)^(-1/4)

    ``n_layer`` is the depth of the stack the constants are for (N for encoder-only, M for
    decoder-only and for the decoder of an encoder-decoder, whose encoder depth is
    ``n_encoder_layer``).
    """
    _check_layers("n_layer", n_layer)
    if architecture not in ARCHITECTURES:
        raise ValueError(f"architecture must be one of {list(ARCHITECTURES)}, got {architecture!r}")
    if architecture == "encoder-decoder":
        if n_encoder_layer is None:
            raise ValueError("architecture='encoder-decoder' needs n_encoder_layer (the encoder's N)")
        _check_layers("n_encoder_layer", n_encoder_layer)
        n, m = n_encoder_layer, n_layer
        return DeepNormConstants(
            alpha=(3 * m) ** 0.25,
            beta=(12 * m) ** -0.25,
            encoder_alpha=0.81 * (n ** 4 * m) ** (1 / 16),
            encoder_beta=0.87 * (n ** 4 * m) ** (-1 / 16),
        )
    if n_encoder_layer is not None:
        raise ValueError(f"n_encoder_layer is only used with architecture='encoder-decoder', "
                         f"not {architecture!r}")
    return DeepNormConstants(alpha=(2 * n_layer) ** 0.25, beta=(8 * n_layer) ** -0.25)


def _check_layers(name: str, value) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name} must be a positive int, got {value!r}")


def residual_output_std(config: ModelConfig) -> float:
    """Std of the output projections under the "normal" and "gpt2" schemes."""
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
        for emb in (model.wte, model.wpe):
            emb.weight.normal_(0.0, GPT2_STD, generator=gen)
        if model.lm_head is not None:
            model.lm_head.weight.normal_(0.0, GPT2_STD, generator=gen)
        for module in model.modules():
            if isinstance(module, nn.LayerNorm):
                module.weight.fill_(1.0)
                if module.bias is not None:
                    module.bias.zero_()
        for block in model.h:
            _init_block(block, config, gen)


def _init_block(block: nn.Module, config: ModelConfig, gen) -> None:
    d = config.d_model
    attn, mlp = block.attn, block.mlp
    for lin in (attn.c_attn, attn.c_proj, mlp.c_fc, mlp.c_proj):
        if lin.bias is not None:
            lin.bias.zero_()
    if config.init == "deepnorm":
        beta = deepnorm_constants(config.n_layer).beta
        w = attn.c_attn.weight                      # [d, 3d]: columns q | k | v
        _xavier_normal(w[:, : 2 * d], fan_in=d, fan_out=d, gain=1.0, gen=gen)   # W_Q, W_K
        _xavier_normal(w[:, 2 * d:], fan_in=d, fan_out=d, gain=beta, gen=gen)   # W_V
        _xavier_normal(attn.c_proj.weight, fan_in=d, fan_out=d, gain=beta, gen=gen)
        _xavier_normal(mlp.c_fc.weight, fan_in=d, fan_out=config.d_ff, gain=beta, gen=gen)
        _xavier_normal(mlp.c_proj.weight, fan_in=config.d_ff, fan_out=d, gain=beta, gen=gen)
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
