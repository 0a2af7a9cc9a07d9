"""Init schemes: measured weight statistics match each scheme; DeepNet's alpha and beta."""

import math

import pytest
import torch

from depthnotes import ModelConfig, Transformer, deepnorm_constants


def cfg(**kw):
    base = dict(n_layer=24, d_model=256, n_head=4, vocab_size=512, context=64)
    base.update(kw)
    return ModelConfig(**base)


def stds(model):
    """Measured std of each weight group, pooled over the blocks."""
    d = model.config.d_model
    groups = {"q": [], "k": [], "v": [], "o": [], "fc": [], "fc_out": []}
    for b in model.h:
        w = b.attn.c_attn.weight
        groups["q"].append(w[:, :d]); groups["k"].append(w[:, d:2 * d]); groups["v"].append(w[:, 2 * d:])
        groups["o"].append(b.attn.c_proj.weight)
        groups["fc"].append(b.mlp.c_fc.weight); groups["fc_out"].append(b.mlp.c_proj.weight)
    return {k: torch.cat([t.flatten() for t in v]).std().item() for k, v in groups.items()}


def test_normal_scheme_all_002():
    m = Transformer(cfg(init="normal"), seed=0)
    for name, s in stds(m).items():
        assert s == pytest.approx(0.02, rel=0.01), name
    assert m.wte.weight.std().item() == pytest.approx(0.02, rel=0.01)
    assert m.wpe.weight.std().item() == pytest.approx(0.02, rel=0.02)


def test_gpt2_scheme_scales_only_residual_outputs():
    L = 24
    s = stds(Transformer(cfg(init="gpt2"), seed=0))
    for name in ("q", "k", "v", "fc"):
        assert s[name] == pytest.approx(0.02, rel=0.01), name
    for name in ("o", "fc_out"):
        assert s[name] == pytest.approx(0.02 / math.sqrt(2 * L), rel=0.01), name


def test_deepnorm_scheme_beta_on_v_o_ffn_not_q_k():
    L, d = 24, 256
    beta = deepnorm_constants(L).beta
    s = stds(Transformer(cfg(norm="deepnorm", init="deepnorm"), seed=0))
    xavier_dd = math.sqrt(2 / (d + d))
    xavier_dff = math.sqrt(2 / (d + 4 * d))
    assert s["q"] == pytest.approx(xavier_dd, rel=0.01)
    assert s["k"] == pytest.approx(xavier_dd, rel=0.01)
    assert s["v"] == pytest.approx(beta * xavier_dd, rel=0.01)
    assert s["o"] == pytest.approx(beta * xavier_dd, rel=0.01)
    assert s["fc"] == pytest.approx(beta * xavier_dff, rel=0.01)
    assert s["fc_out"] == pytest.approx(beta * xavier_dff, rel=0.01)


@pytest.mark.parametrize("init", ["normal", "gpt2"])
def test_biases_zero_and_norm_gains_one(init):
    m = Transformer(cfg(init=init, n_layer=2), seed=0)
    for name, p in m.named_parameters():
        if name.endswith("bias"):
            assert torch.all(p == 0), name
        if ".ln_" in name and name.endswith("weight"):
            assert torch.all(p == 1), name


@pytest.mark.parametrize("M, alpha, beta", [
    # decoder-only: alpha = (2M)^(1/4), beta = (8M)^(-1/4); values worked by hand
    (1, 2 ** 0.25, 8 ** -0.25),
    (8, 2.0, 0.3535533906),      # (16)^(1/4) = 2; (64)^(-1/4) = 1/(2*sqrt 2)
    (32, 2.8284271247, 0.25),    # (64)^(1/4) = 2 sqrt 2; (256)^(-1/4) = 1/4
    (128, 4.0, 0.1767766953),    # (256)^(1/4) = 4; (1024)^(-1/4)
    (1000, 6.6874030498, 0.1057371263),
])
def test_deepnorm_decoder_only(M, alpha, beta):
    c = deepnorm_constants(M)
    assert c.alpha == pytest.approx(alpha, rel=1e-9)
    assert c.beta == pytest.approx(beta, rel=1e-9)
    assert c.encoder_alpha is None


def test_deepnorm_encoder_only_and_encoder_decoder():
    enc = deepnorm_constants(18, "encoder-only")
    assert enc.alpha == pytest.approx(36 ** 0.25) and enc.beta == pytest.approx(144 ** -0.25)
    # 6-layer encoder, 6-layer decoder (the base machine-translation setting)
    ed = deepnorm_constants(6, "encoder-decoder", n_encoder_layer=6)
    assert ed.alpha == pytest.approx(18 ** 0.25)
    assert ed.beta == pytest.approx(72 ** -0.25)
    assert ed.encoder_alpha == pytest.approx(0.81 * (6 ** 5) ** (1 / 16))
    assert ed.encoder_beta == pytest.approx(0.87 * (6 ** 5) ** (-1 / 16))
    # DeepNet's deepest translation model: 200 encoder and 200 decoder layers
    big = deepnorm_constants(200, "encoder-decoder", n_encoder_layer=200)
    assert big.encoder_alpha == pytest.approx(0.81 * (200 ** 5) ** (1 / 16))


@pytest.mark.parametrize("args, kwargs, match", [
    ((0,), {}, "n_layer"),
    ((2.5,), {}, "n_layer"),
    ((6, "decoder"), {}, "architecture"),
    ((6, "encoder-decoder"), {}, "n_encoder_layer"),
    ((6,), {"n_encoder_layer": 6}, "only used with"),
])
def test_deepnorm_bad_input(args, kwargs, match):
    with pytest.raises(ValueError, match=match):
        deepnorm_constants(*args, **kwargs)
