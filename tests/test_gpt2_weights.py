"""GPT-2 state dicts into the book's Transformer (``depthnotes.core.gpt2_weights``): from a
state dict laid out as Hugging Face's, and from HF's own random-weight ``GPT2LMHeadModel``
(required in CI, where ``transformers`` is installed from requirements.txt)."""

import os

import pytest
import torch

from depthnotes import ModelConfig, Transformer
from depthnotes.core.gpt2_weights import gpt2_names, load_gpt2_state_dict

CFG = ModelConfig(n_layer=2, d_model=32, n_head=4, vocab_size=50, context=16,
                  activation="gelu_tanh")


def hf_layout(model: Transformer) -> dict:
    """``model``'s weights as an HF GPT-2 state dict: prefixed, with the mask buffers and the
    tied head HF stores."""
    sd = {f"transformer.{k}": v.clone() for k, v in model.state_dict().items()}
    for i in range(model.config.n_layer):
        sd[f"transformer.h.{i}.attn.bias"] = torch.ones(1, 1, 16, 16)
    sd["lm_head.weight"] = sd["transformer.wte.weight"]
    return sd


def test_a_state_dict_in_gpt2_layout_loads_name_for_name():
    source, target = Transformer(CFG, seed=1), Transformer(CFG, seed=2)
    idx = torch.randint(0, 50, (2, 9), generator=torch.Generator().manual_seed(0))
    assert not torch.equal(source(idx)[0], target(idx)[0])
    load_gpt2_state_dict(target, hf_layout(source))
    assert torch.equal(source(idx)[0], target(idx)[0])
    assert "lm_head.weight" not in gpt2_names(hf_layout(source))


def test_a_state_dict_that_does_not_fit_names_what_is_wrong():
    sd = hf_layout(Transformer(CFG, seed=1))
    del sd["transformer.h.1.mlp.c_fc.weight"]
    with pytest.raises(ValueError, match="missing.*h.1.mlp.c_fc.weight"):
        load_gpt2_state_dict(Transformer(CFG, seed=0), sd)
    wide = hf_layout(Transformer(CFG.replace(d_model=64), seed=1))
    with pytest.raises(ValueError, match="shape"):
        load_gpt2_state_dict(Transformer(CFG, seed=0), wide)


def test_hf_gpt2_weights_give_hf_gpt2s_logits():
    if os.environ.get("CI"):
        import transformers       # CI installs it: this comparison must run there
    else:
        transformers = pytest.importorskip("transformers")
    hf = transformers.GPT2LMHeadModel(transformers.GPT2Config(
        n_layer=2, n_embd=32, n_head=4, vocab_size=50, n_positions=16,
        activation_function="gelu_new")).eval()
    ours = Transformer(CFG, seed=0).eval()
    load_gpt2_state_dict(ours, hf.state_dict())
    idx = torch.randint(0, 50, (1, 12), generator=torch.Generator().manual_seed(3))
    with torch.no_grad():
        assert (ours(idx)[0] - hf(input_ids=idx).logits).abs().max() < 1e-4
