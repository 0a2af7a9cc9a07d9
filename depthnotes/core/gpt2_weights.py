"""GPT-2's weights in the book's ``Transformer``, from a state dict (no download).

The model's parameter names follow GPT-2's (``wte``, ``wpe``, ``h.{i}.ln_1``, ``attn.c_attn``,
``attn.c_proj``, ``ln_2``, ``mlp.c_fc``, ``mlp.c_proj``, ``ln_f``) and its linear maps are
stored ``[in, out]`` like GPT-2's ``Conv1D``, so a state dict of Hugging Face's
``GPT2LMHeadModel`` (or OpenAI's checkpoint converted to one) maps name for name: the
``transformer.`` prefix goes, the output head is tied to ``wte`` (so ``lm_head.weight`` is
skipped when the model ties its embeddings), and the causal-mask buffers some versions store
(``attn.bias``, ``attn.masked_bias``) are not weights. This is what nanoGPT's
``from_pretrained`` does, minus the download and the transposes: the book never fetches
weights, so the state dict is the caller's (a random-weight model in the tests).
"""

from __future__ import annotations

from collections.abc import Mapping

import torch

from depthnotes.core.model import Transformer

#: Keys of a GPT-2 state dict that are buffers, not weights (per block, after the prefix).
_MASK_BUFFERS = ("attn.bias", "attn.masked_bias")


def gpt2_names(state_dict: Mapping[str, torch.Tensor], tied: bool = True) -> dict:
    """The state dict under the model's names: prefix removed, mask buffers and (when
    ``tied``) the output head dropped."""
    out = {}
    for name, value in state_dict.items():
        name = name.removeprefix("transformer.")
        if name.startswith("h.") and name.split(".", 2)[2] in _MASK_BUFFERS:
            continue
        if name == "lm_head.weight" and tied:
            continue
        out[name] = value
    return out


def load_gpt2_state_dict(model: Transformer, state_dict: Mapping[str, torch.Tensor]) -> None:
    """Copy a GPT-2 state dict into ``model`` in place. Every parameter of the model must be
    given once, with its shape; anything left over or missing is an error that names it."""
    params = dict(model.named_parameters())
    given = gpt2_names(state_dict, tied=model.lm_head is None)
    missing = sorted(set(params) - set(given))
    extra = sorted(set(given) - set(params))
    if missing or extra:
        raise ValueError(f"state dict does not fit this model: missing {missing[:6]}"
                         f"{' ...' if len(missing) > 6 else ''}, unexpected {extra[:6]}"
                         f"{' ...' if len(extra) > 6 else ''} (is the config GPT-2's shape?)")
    for name, value in given.items():
        if tuple(value.shape) != tuple(params[name].shape):
            raise ValueError(f"{name}: the state dict holds shape {tuple(value.shape)}, the "
                             f"model {tuple(params[name].shape)}")
    with torch.no_grad():
        for name, value in given.items():
            params[name].copy_(value)
