"""Init schemes: measured weight statistics match each scheme's formula; DeepNet's alpha and
beta."""

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


def xavier_stds(d, d_ff, beta):
    """Xavier-normal std, sqrt(2 / (fan_in + fan_out)), per projection; gain beta on V, O, FFN."""
    dd, dff = math.sqrt(2 / (d + d)), math.sqrt(2 / (d + d_ff))
    return {"q": dd, "k": dd, "v": beta * dd, "o": beta * dd, "fc": beta * dff,
            "fc_out": beta * dff}


@pytest.mark.parametrize("norm", ["post", "pre", "deepnorm"])
def test_xavier_scheme_every_projection_by_its_fans(norm):
    """init="xavier" (the post-LN papers' init) works with every norm placement."""
    m = Transformer(cfg(norm=norm, init="xavier", d_ff=384, n_layer=4), seed=0)
    s = stds(m)
    for name, want in xavier_stds(256, 384, beta=1.0).items():
        assert s[name] == pytest.approx(want, rel=0.01), name
    assert m.config.init_beta == 1.0


def test_deepnorm_scheme_beta_on_v_o_ffn_not_q_k():
    L, d = 24, 256
    beta = deepnorm_constants(L).beta
    c = cfg(norm="deepnorm", init="deepnorm")
    assert c.init_beta == beta
    s = stds(Transformer(c, seed=0))
    for name, want in xavier_stds(d, 4 * d, beta).items():
        assert s[name] == pytest.approx(want, rel=0.01), name
    assert s["v"] < 0.5 * s["q"]                     # beta = (8 * 24)^(-1/4) = 0.27


def test_post_norm_xavier_and_deepnorm_differ_only_in_alpha_and_beta():
    """Same seed: the embeddings, Q and K are drawn identically; V, O and the FFN differ by
    exactly the factor beta; the block adds with alpha instead of 1."""
    post = Transformer(cfg(norm="post", init="xavier", n_layer=4), seed=3)
    deep = Transformer(cfg(norm="deepnorm", init="deepnorm", n_layer=4), seed=3)
    beta, d = deep.config.init_beta, 256
    assert torch.equal(post.wte.weight, deep.wte.weight)
    assert torch.equal(post.wpe.weight, deep.wpe.weight)
    for bp, bd in zip(post.h, deep.h):
        wp, wd = bp.attn.c_attn.weight, bd.attn.c_attn.weight
        assert torch.equal(wp[:, :2 * d], wd[:, :2 * d])                 # W_Q, W_K
        for a, b in ((wp[:, 2 * d:], wd[:, 2 * d:]), (bp.attn.c_proj.weight, bd.attn.c_proj.weight),
                     (bp.mlp.c_fc.weight, bd.mlp.c_fc.weight),
                     (bp.mlp.c_proj.weight, bd.mlp.c_proj.weight)):
            assert torch.allclose(beta * a, b, rtol=1e-5, atol=1e-9)
        assert (bp.alpha, bd.alpha) == (1.0, deep.config.residual_alpha)


@pytest.mark.parametrize("init, norm", [("normal", "pre"), ("gpt2", "pre"), ("xavier", "post"),
                                        ("deepnorm", "deepnorm")])
def test_biases_zero_norm_gains_one_embeddings_gpt2s(init, norm):
    m = Transformer(cfg(init=init, norm=norm, n_layer=2, tie_embeddings=False), seed=0)
    for name, p in m.named_parameters():
        if name.endswith("bias"):
            assert torch.all(p == 0), name
        if ".ln_" in name and name.endswith("weight"):
            assert torch.all(p == 1), name
    # the embeddings (and an untied head) are N(0, 0.02^2) in every scheme
    for w in (m.wte.weight, m.lm_head):
        assert w.mean().abs().item() < 1e-3 and w.std().item() == pytest.approx(0.02, rel=0.02)


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


@pytest.mark.parametrize("value, error", [(0, ValueError), (2.5, TypeError), (True, TypeError)])
def test_deepnorm_bad_input(value, error):
    with pytest.raises(error, match="n_layer"):
        deepnorm_constants(value)


@pytest.mark.parametrize("M", [6, 12, 24, 48, 100, 200, 1000])
def test_deepnorm_constants_balance_the_update_bound(M):
    """Chapter 5's table (formerly a notebook check, C12): alpha grows and beta falls with
    depth, and DeepNet's decoder-only choice makes the sum over the 2M sub-layers of
    (v^2 + w^2) / alpha^2 with v = w = beta equal to 1 at every depth: the SGD update bound
    of DeepNet's Theorem stays Theta(lr) whatever M."""
    c, deeper = deepnorm_constants(M), deepnorm_constants(M + 1)
    assert deeper.alpha > c.alpha and deeper.beta < c.beta
    assert 2 * M * (2 * c.beta ** 2) / c.alpha ** 2 == pytest.approx(1.0, rel=1e-12)
