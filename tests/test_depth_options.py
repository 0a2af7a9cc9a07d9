"""Chapter 8's model options: shared ("looped") blocks, the depth-transfer branch rules and
LayerNorm Scaling: validation, exact parameter counts, and what the forward computes."""

import copy
import math

import pytest
import torch

from depthnotes import ModelConfig, Transformer, count_params
from depthnotes.core.init import residual_output_std
from depthnotes.core.model import KVCache
from depthnotes.measure.probes import residual_stream


pytestmark = pytest.mark.usefixtures("one_thread")   # tests/conftest.py


def cfg(**kw):
    base = dict(n_layer=4, d_model=32, n_head=4, vocab_size=50, context=40)
    base.update(kw)
    return ModelConfig(**base)


def tokens(T=9, B=2, seed=0):
    return torch.randint(0, 50, (B, T), generator=torch.Generator().manual_seed(seed))


# -- validation ----------------------------------------------------------------------------
@pytest.mark.parametrize("change, error, match", [
    (dict(n_unique_blocks=0), ValueError, "n_unique_blocks must be an int >= 1"),
    (dict(n_unique_blocks=2.0), TypeError, "n_unique_blocks"),
    (dict(n_unique_blocks=True), TypeError, "n_unique_blocks"),
    (dict(n_layer=6, n_unique_blocks=4), ValueError,
     r"n_unique_blocks=4 must divide n_layer=6.*\[1, 2, 3, 6\]"),
    (dict(n_unique_blocks=8), ValueError, "must divide n_layer=4"),
    (dict(ln_scaling="1/sqrt(L)"), ValueError, "ln_scaling must be one of"),
    (dict(ln_scaling=None), ValueError, "ln_scaling must be one of"),
    (dict(norm="post", init="normal", ln_scaling="1/sqrt(l)"), ValueError, "norm='pre'"),
    (dict(norm="deepnorm", init="deepnorm", ln_scaling="1/sqrt(l)"), ValueError, "norm='pre'"),
    (dict(branch_scale="1/L^2"), ValueError, "branch_scale must be one of"),
])
def test_bad_options_name_the_field(change, error, match):
    with pytest.raises(error, match=match):
        cfg(**change)


def test_replace_validates_the_new_depth_against_the_sharing():
    looped = cfg(n_layer=4, n_unique_blocks=2)
    assert looped.replace(n_layer=8).n_blocks == 2
    with pytest.raises(ValueError, match="must divide n_layer=5"):
        looped.replace(n_layer=5)


# -- the depth rules ----------------------------------------------------------------------
@pytest.mark.parametrize("rule, expected", [
    ("1/sqrt(2L)", 1 / math.sqrt(32)), ("1/sqrt(L)", 1 / 4), ("1/L", 1 / 16), (1.0, 1.0),
    (0.3, 0.3)])
def test_branch_multiplier_values(rule, expected):
    c = cfg(n_layer=16, branch_scale=rule)
    assert c.branch_multiplier == pytest.approx(expected, rel=1e-12)
    assert Transformer(c.replace(n_layer=16), seed=0).h[5].branch_scale == c.branch_multiplier


def test_depth_rules_count_applications_not_stored_blocks():
    looped = cfg(n_layer=16, n_unique_blocks=1, branch_scale="1/L", init="gpt2")
    assert looped.branch_multiplier == pytest.approx(1 / 16)
    assert residual_output_std(looped) == pytest.approx(0.02 / math.sqrt(32))
    # the drawn weights have that std (4096 draws: the estimate is within a few per cent)
    w = Transformer(looped.replace(d_model=64), seed=0).h[0].attn.c_proj.weight
    assert float(w.detach().std()) == pytest.approx(0.02 / math.sqrt(32), rel=0.05)


def test_ln_multiplier_is_one_over_sqrt_of_the_one_based_layer():
    on, off = cfg(ln_scaling="1/sqrt(l)"), cfg()
    assert [on.ln_multiplier(i) for i in range(4)] == pytest.approx(
        [1, 1 / math.sqrt(2), 1 / math.sqrt(3), 0.5])
    assert [off.ln_multiplier(i) for i in range(4)] == [1.0] * 4


def test_blocks_cycle_in_order():
    c = cfg(n_layer=6, n_unique_blocks=2)
    assert c.n_blocks == 2 and cfg().n_blocks == 4
    assert [c.block_index(i) for i in range(6)] == [0, 1, 0, 1, 0, 1]
    model = Transformer(c, seed=0)
    assert [model.block(i) is model.h[i % 2] for i in range(6)] == [True] * 6


# -- parameter counts ---------------------------------------------------------------------
COUNT_CASES = [dict(), dict(n_unique_blocks=1), dict(n_unique_blocks=2),
               dict(n_unique_blocks=4), dict(n_layer=6, n_unique_blocks=3, bias=False),
               dict(n_unique_blocks=1, tie_embeddings=False, norm="post", init="normal"),
               dict(n_unique_blocks=2, ln_scaling="1/sqrt(l)", branch_scale="1/L"),
               dict(ln_scaling="1/sqrt(l)")]


@pytest.mark.parametrize("kw", COUNT_CASES)
def test_count_params_is_exact_with_shared_blocks(kw):
    c = cfg(**kw)
    model = Transformer(c, seed=0)
    pc = count_params(c)
    assert pc.total == sum(p.numel() for p in model.parameters())
    assert len(model.h) == c.n_blocks == pc.n_blocks
    assert pc.blocks == c.n_blocks * pc.per_block.total
    assert pc.n_layer == c.n_layer


def test_a_looped_model_holds_one_block_and_the_params_of_one_block():
    one = count_params(cfg(n_layer=1))
    looped = count_params(cfg(n_layer=8, n_unique_blocks=1))
    assert looped.total == one.total and looped.approx_12Ld2 == one.approx_12Ld2
    assert count_params(cfg(n_layer=8)).total - looped.total == 7 * one.per_block.total


# -- what the looped forward computes -----------------------------------------------------
@pytest.mark.parametrize("k", [1, 2])
def test_looped_model_equals_applying_the_stored_blocks_by_hand(k):
    model = Transformer(cfg(n_layer=6, n_unique_blocks=k), seed=3).eval()
    idx = tokens()
    with torch.no_grad():
        x = model.embed(idx)
        for i in range(6):
            x = model.h[i % k](x)
        by_hand = model.logits(x)
        assert torch.equal(model(idx)[0], by_hand)


def test_looped_model_equals_distinct_blocks_that_are_copies_of_one_block():
    looped = Transformer(cfg(n_layer=4, n_unique_blocks=1), seed=1).eval()
    distinct = Transformer(cfg(n_layer=4), seed=2).eval()
    for name in ("wte", "wpe", "ln_f"):
        getattr(distinct, name).load_state_dict(getattr(looped, name).state_dict())
    for i in range(4):
        distinct.h[i] = copy.deepcopy(looped.h[0])
    idx = tokens()
    with torch.no_grad():
        assert torch.allclose(looped(idx)[0], distinct(idx)[0], atol=1e-6)
        # and one step apart differs: a block applied 3 times is not the same model
        three = Transformer(cfg(n_layer=3, n_unique_blocks=1), seed=1).eval()
        assert not torch.allclose(three(idx)[0], looped(idx)[0], atol=1e-4)


def test_shared_block_gradient_collects_every_application():
    """d loss / d W of a shared block is the sum over its applications: compare with four
    distinct copies, whose four gradients must add up to it."""
    looped = Transformer(cfg(n_layer=4, n_unique_blocks=1), seed=1)
    distinct = Transformer(cfg(n_layer=4), seed=1)
    distinct.load_state_dict({k: v for k, v in looped.state_dict().items()
                              if not k.startswith("h.")}, strict=False)
    for i in range(4):
        distinct.h[i].load_state_dict(looped.h[0].state_dict())
    idx = tokens()
    looped(idx, targets=idx)[1].backward()
    distinct(idx, targets=idx)[1].backward()
    total = sum(distinct.h[i].mlp.c_fc.weight.grad for i in range(4))
    assert torch.allclose(looped.h[0].mlp.c_fc.weight.grad, total, atol=1e-6)


@pytest.mark.parametrize("kw", [dict(n_unique_blocks=1), dict(n_layer=6, n_unique_blocks=2),
                                dict(ln_scaling="1/sqrt(l)"),
                                dict(n_unique_blocks=1, ln_scaling="1/sqrt(l)",
                                     branch_scale="1/sqrt(L)")])
def test_cached_decoding_equals_the_full_forward(kw):
    c = cfg(**kw)
    model = Transformer(c, seed=4).eval()
    idx = tokens(T=12, B=2, seed=5)
    cache = KVCache(c, batch=2, max_len=12)
    assert cache.k.shape[0] == c.n_layer          # one entry per application
    with torch.no_grad():
        full = model(idx)[0]                                            # (B, 12, V)
        steps = [model(idx[:, :5], cache=cache)[0]]                     # prefill 5
        steps += [model(idx[:, t:t + 1], cache=cache)[0] for t in range(5, 12)]
    assert torch.allclose(torch.cat(steps, dim=1), full, atol=1e-5)
    with_cache = model.generate(idx[:, :4], 8, use_cache=True)
    assert torch.equal(with_cache, model.generate(idx[:, :4], 8, use_cache=False))


def test_skip_names_one_application_of_a_shared_block():
    model = Transformer(cfg(n_layer=4, n_unique_blocks=1), seed=0).eval()
    idx = tokens()
    with torch.no_grad():
        x = model.embed(idx)
        for i in (0, 1, 3):
            x = model.h[0](x, None, i)
        assert torch.equal(model(idx, skip=(2,))[0], model.logits(x))


def test_residual_stream_probe_sees_every_application():
    model = Transformer(cfg(n_layer=6, n_unique_blocks=2), seed=0)
    stream = residual_stream(model, tokens())
    assert len(stream) == 7
    assert not torch.equal(stream[1], stream[3])


# -- LayerNorm Scaling --------------------------------------------------------------------
def test_ln_scaling_at_one_layer_is_the_identity_change():
    """l = 1 multiplies by 1: a one-block model computes exactly the same thing."""
    idx = tokens()
    a = Transformer(cfg(n_layer=1), seed=7).eval()
    b = Transformer(cfg(n_layer=1, ln_scaling="1/sqrt(l)"), seed=7).eval()
    with torch.no_grad():
        assert torch.equal(a(idx)[0], b(idx)[0])


def test_ln_scaling_changes_only_the_blocks_after_the_first():
    idx = tokens()
    off = residual_stream(Transformer(cfg(), seed=7), idx)
    on = residual_stream(Transformer(cfg(ln_scaling="1/sqrt(l)"), seed=7), idx)
    assert torch.equal(off[0], on[0]) and torch.equal(off[1], on[1])
    assert all(not torch.allclose(a, b, atol=1e-6) for a, b in zip(off[2:], on[2:]))


def test_ln_scaling_scales_both_block_norms_by_one_over_sqrt_l_and_adds_no_parameters():
    c = cfg(ln_scaling="1/sqrt(l)")
    model = Transformer(c, seed=7).eval()
    plain = Transformer(cfg(), seed=7)
    assert model.state_dict().keys() == plain.state_dict().keys()
    blk, x = model.h[2], torch.randn(2, 5, 32, generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        m = 1 / math.sqrt(3)                                 # application 2 is layer l = 3
        h = x + blk.attn(blk.ln_1(x) * m)
        expected = h + blk.mlp(blk.ln_2(h) * m)
        assert torch.allclose(blk(x, None, 2), expected, atol=1e-6)
        # the final norm is not scaled: what the head reads is ln_f of the stream
        assert torch.equal(model.features(tokens()), model.ln_f(model.hidden(tokens())))


def test_ln_scaling_shrinks_the_residual_variance_growth_at_init():
    from depthnotes.measure.probes import residual_variance_by_layer
    idx = tokens(T=16, B=4)
    off = residual_variance_by_layer(Transformer(cfg(n_layer=16, init="normal"), seed=0), idx)
    on = residual_variance_by_layer(
        Transformer(cfg(n_layer=16, init="normal", ln_scaling="1/sqrt(l)"), seed=0), idx)
    assert on[-1] < 0.5 * off[-1]
