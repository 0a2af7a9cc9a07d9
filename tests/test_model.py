"""The Transformer: shapes, causality, the KV cache, norm placements, bad input."""

import pytest
import torch

import depthnotes.core.model
from depthnotes import ModelConfig, Transformer, count_params
from depthnotes.core.model import KVCache


pytestmark = pytest.mark.usefixtures("one_thread")   # tests/conftest.py


def tiny(**kw):
    base = dict(n_layer=3, d_model=32, n_head=4, vocab_size=50, context=40)
    base.update(kw)
    return ModelConfig(**base)


NORM_CASES = [dict(norm="pre"), dict(norm="post", init="normal"),
              dict(norm="deepnorm", init="deepnorm"), dict(norm="pre", branch_scale="1/sqrt(2L)"),
              dict(norm="pre", bias=False, tie_embeddings=False)]


@pytest.mark.parametrize("kw", NORM_CASES)
def test_forward_shapes_and_loss(kw):
    model = Transformer(tiny(**kw), seed=0)
    idx = torch.randint(0, 50, (2, 7), generator=torch.Generator().manual_seed(0))
    logits, loss = model(idx, targets=idx)
    assert logits.shape == (2, 7, 50)
    assert loss.ndim == 0 and torch.isfinite(loss)
    # At init the prediction is near uniform: loss near log(vocab).
    assert abs(loss.item() - torch.log(torch.tensor(50.0)).item()) < 1.0
    assert model(idx)[1] is None


def test_same_seed_same_weights_different_seed_different():
    a, b, c = (Transformer(tiny(), seed=s) for s in (1, 1, 2))
    assert all(torch.equal(p, q) for p, q in zip(a.parameters(), b.parameters()))
    assert not torch.equal(a.h[0].attn.c_attn.weight, c.h[0].attn.c_attn.weight)


@pytest.mark.parametrize("kw", NORM_CASES)
def test_causality_later_tokens_never_change_earlier_logits(kw):
    model = Transformer(tiny(**kw), seed=0).eval()
    g = torch.Generator().manual_seed(1)
    idx = torch.randint(0, 50, (1, 12), generator=g)
    changed = idx.clone()
    changed[0, 8:] = torch.randint(0, 50, (4,), generator=g)
    with torch.no_grad():
        a, _ = model(idx)
        b, _ = model(changed)
    assert torch.allclose(a[:, :8], b[:, :8], atol=1e-6)
    assert not torch.allclose(a[:, 8:], b[:, 8:], atol=1e-6)


@pytest.mark.parametrize("kw", NORM_CASES)
def test_cached_generation_matches_uncached(kw):
    model = Transformer(tiny(**kw), seed=3).eval()
    prompt = torch.randint(0, 50, (2, 5), generator=torch.Generator().manual_seed(2))
    with_cache = model.generate(prompt, 20, use_cache=True)
    without = model.generate(prompt, 20, use_cache=False)
    assert with_cache.shape == (2, 25)
    assert torch.equal(with_cache, without)
    assert torch.equal(with_cache[:, :5], prompt)


def test_cached_logits_match_full_forward():
    """Prefill, single steps and a multi-token chunk through the cache all give the logits
    of one full forward pass."""
    model = Transformer(tiny(), seed=4).eval()
    idx = torch.randint(0, 50, (2, 16), generator=torch.Generator().manual_seed(5))
    with torch.no_grad():
        full, _ = model(idx)
        cache = KVCache(model.config, batch=2, max_len=16)
        parts = [model(idx[:, :6], cache=cache)[0]]
        parts += [model(idx[:, t:t + 1], cache=cache)[0] for t in range(6, 10)]
        parts.append(model(idx[:, 10:], cache=cache)[0])  # a chunk of 6 after a filled cache
    assert cache.length == 16
    assert torch.allclose(torch.cat(parts, dim=1), full, atol=1e-5)


def test_sampling_is_seeded():
    model = Transformer(tiny(), seed=0).eval()
    prompt = torch.zeros(1, 1, dtype=torch.long)
    a = model.generate(prompt, 10, temperature=1.0, top_k=10, seed=7)
    b = model.generate(prompt, 10, temperature=1.0, top_k=10, seed=7)
    assert torch.equal(a, b)


def test_post_and_deepnorm_have_no_final_norm_pre_has_one():
    assert Transformer(tiny(norm="pre")).ln_f is not None
    assert Transformer(tiny(norm="post")).ln_f is None
    assert Transformer(tiny(norm="deepnorm", init="deepnorm")).ln_f is None


def test_blocks_read_alpha_and_the_branch_multiplier_from_the_config():
    from depthnotes import deepnorm_constants
    cfg = tiny(norm="deepnorm", init="deepnorm")
    m = Transformer(cfg)
    assert cfg.residual_alpha == deepnorm_constants(3).alpha == 6 ** 0.25
    assert all(b.alpha == cfg.residual_alpha and b.branch_scale == 1.0 for b in m.h)
    scaled = tiny(branch_scale="1/sqrt(2L)")
    assert Transformer(scaled).h[2].branch_scale == scaled.branch_multiplier == pytest.approx(6 ** -0.5)
    assert Transformer(tiny(norm="post")).h[0].alpha == 1.0


@pytest.mark.parametrize("kw", [dict(norm="pre", branch_scale=0.5),
                                dict(norm="post", init="xavier"),
                                dict(norm="deepnorm", init="deepnorm")])
def test_block_is_the_papers_equations(kw):
    """Pre-norm: x + s*F(LN(x)); post-norm / DeepNorm: LN(a*x + s*F(x)), written out here with
    the block's own modules."""
    cfg = tiny(**kw)
    block = Transformer(cfg, seed=0).h[1]
    a, s = cfg.residual_alpha, cfg.branch_multiplier
    x = torch.randn(2, 5, 32, generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        if cfg.norm == "pre":
            h = x + s * block.attn(block.ln_1(x))
            want = h + s * block.mlp(block.ln_2(h))
        else:
            h = block.ln_1(a * x + s * block.attn(x))
            want = block.ln_2(a * h + s * block.mlp(h))
        assert torch.allclose(block(x), want, atol=1e-6)
        assert not torch.allclose(block(x), x, atol=1e-3)


def test_embedding_has_plain_strides_and_the_untied_head_is_a_plain_parameter():
    m = Transformer(tiny(), seed=0)
    assert m.wte.weight.is_contiguous() and m.wte.weight.view(-1).numel() == 50 * 32
    assert m.lm_head is None
    untied_cfg = tiny(tie_embeddings=False)
    untied = Transformer(untied_cfg, seed=0)
    assert isinstance(untied.lm_head, torch.nn.Parameter)
    assert untied.lm_head.shape == (50, 32) and untied.lm_head.is_contiguous()
    assert not any(isinstance(mod, torch.nn.Linear) for mod in untied.modules())
    assert sum(p.numel() for p in untied.parameters()) == count_params(untied_cfg).total
    x = torch.randn(2, 3, 32)
    with torch.no_grad():
        assert torch.allclose(untied.logits(x), untied.ln_f(x) @ untied.lm_head.T, atol=1e-6)
    # the untied head is trained: it receives a gradient
    idx = torch.randint(0, 50, (2, 6), generator=torch.Generator().manual_seed(1))
    untied(idx, targets=idx)[1].backward()
    assert untied.lm_head.grad is not None and untied.lm_head.grad.abs().sum() > 0


def test_hidden_is_before_the_final_norm_features_after_and_skip_removes_blocks():
    m = Transformer(tiny(), seed=0).eval()
    idx = torch.randint(0, 50, (2, 7), generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        x = m.embed(idx)
        stream = [x]
        for block in m.h:
            stream.append(block(stream[-1]))
        assert torch.equal(m.hidden(idx), stream[-1])
        assert torch.equal(m.features(idx), m.ln_f(stream[-1]))
        # the final norm is applied once: logits from the stream = the head on the features
        assert torch.equal(m.logits(stream[-1]), m.unembed(m.features(idx)))
        assert torch.equal(m(idx)[0], m.unembed(m.features(idx)))
        skipped = m.h[1](m.h[0](x))                       # block 2 left out
        assert torch.equal(m.hidden(idx, skip=(2,)), skipped)
        assert torch.equal(m(idx, skip=(2,))[0], m.logits(skipped))
        post = Transformer(tiny(norm="post", init="xavier"), seed=0)
        assert torch.equal(post.features(idx), post.hidden(idx))   # no final norm
    with pytest.raises(ValueError, match="not with a cache"):
        m.hidden(idx, cache=KVCache(m.config, 2, 7), skip=(0,))


def test_generate_makes_its_cache_on_the_inputs_device(monkeypatch):
    """A model on another device decodes there: its KV cache is made on the input's device
    (the meta device stands in for a GPU: shapes without data)."""
    made = []

    class Recording(KVCache):
        def __init__(self, *args, **kw):
            super().__init__(*args, **kw)
            made.append(self.k.device)

    monkeypatch.setattr(depthnotes.core.model, "KVCache", Recording)
    with torch.device("meta"):
        model = Transformer(tiny(), seed=0)
    prompt = torch.zeros(1, 3, dtype=torch.long, device="meta")
    out = model.generate(prompt, 4)
    assert made == [torch.device("meta")]
    assert out.device.type == "meta" and out.shape == (1, 7)


def test_activation_is_the_exact_gelu_by_default_and_gpt2s_tanh_form_in_gpt2_presets():
    assert tiny().activation == "gelu"
    assert all(ModelConfig.preset(n).activation == "gelu_tanh"
               for n in ("gpt2-small", "gpt2-medium", "gpt2-large", "gpt2-xl"))
    x = torch.linspace(-6, 6, 2001).view(1, 1, -1)
    for activation, expected in (("gelu_tanh", torch.nn.GELU(approximate="tanh")),
                                 ("gelu", torch.nn.GELU())):
        mlp = Transformer(tiny(activation=activation), seed=0).h[0].mlp
        mlp.c_fc.forward = lambda h: h                  # look at the nonlinearity alone
        mlp.c_proj.forward = lambda h: h
        assert torch.equal(mlp(x), expected(x)), activation
    # The two are close: the comment on ACTIVATIONS says "less than 1e-3".
    gap = (torch.nn.GELU()(x) - torch.nn.GELU(approximate="tanh")(x)).abs().max().item()
    assert 1e-5 < gap < 1e-3
    # Same seed, same weights: only the function differs.
    a, b = Transformer(tiny(), seed=0), Transformer(tiny(activation="gelu_tanh"), seed=0)
    assert all(torch.equal(p, q) for p, q in zip(a.parameters(), b.parameters()))


def test_bad_input_is_a_clear_error():
    model = Transformer(tiny(), seed=0)
    with pytest.raises(ValueError, match="context=40"):
        model(torch.zeros(1, 41, dtype=torch.long))
    with pytest.raises(ValueError, match="batch, time"):
        model(torch.zeros(5, dtype=torch.long))
    with pytest.raises(ValueError, match="exceeds context"):
        model.generate(torch.zeros(1, 30, dtype=torch.long), 20)
    with pytest.raises(ValueError, match="max_new_tokens"):
        model.generate(torch.zeros(1, 3, dtype=torch.long), -1)
    with pytest.raises(TypeError, match="ModelConfig"):
        Transformer({"n_layer": 2})
