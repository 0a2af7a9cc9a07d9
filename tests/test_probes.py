"""Tests of depthnotes.measure.probes: each probe against a direct computation, and the chapter 4–5
claims they measure, at unit-test size."""

import numpy as np
import pytest
import torch

from depthnotes import ModelConfig, Transformer
from depthnotes.core.fitting import linear_fit
from depthnotes.measure.probes import (UpdateTracker, final_hidden, grad_norm_by_layer,
                                       layer_contribution, residual_stream,
                                       residual_variance_by_layer, skip_layer_losses,
                                       update_size)


def model(**kw):
    base = dict(n_layer=6, d_model=32, n_head=2, vocab_size=50, context=16, norm="pre",
                init="normal")
    base.update(kw)
    return Transformer(ModelConfig(**base), seed=0)


def batch(B=4, T=16, V=50, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randint(0, V, (B, T), generator=g), torch.randint(0, V, (B, T), generator=g)


def manual_stream(m, idx):
    xs = [m.embed(idx)]
    for block in m.h:
        xs.append(block(xs[-1]))
    return xs


@torch.no_grad()
def test_residual_stream_matches_a_manual_forward():
    m, (x, _) = model(), batch()
    got = residual_stream(m, x)
    want = manual_stream(m, x)
    assert len(got) == m.config.n_layer + 1
    for a, b in zip(got, want):
        assert torch.allclose(a, b, atol=1e-6)
    v = residual_variance_by_layer(m, x)
    assert v.shape == (7,)
    assert v[-1] == pytest.approx(float(want[-1].var(unbiased=False)), rel=1e-5)


def test_pre_norm_variance_grows_linearly_C6():
    """C6: in an untrained pre-norm stack the stream's variance grows about linearly."""
    m, (x, _) = model(n_layer=24), batch()
    v = residual_variance_by_layer(m, x)
    assert v[-1] > 5 * v[0]
    fit = linear_fit(np.arange(len(v)), v)
    assert fit.slope > 0 and fit.r2 > 0.97


def test_post_norm_stream_is_normalised():
    m, (x, _) = model(norm="post"), batch()
    v = residual_variance_by_layer(m, x)
    assert np.allclose(v[1:], 1.0, atol=0.02)


def test_scaled_inits_keep_the_variance_down_C11():
    """C11: 1/sqrt(2L) branch scaling and GPT-2's output-projection init shrink the growth."""
    x, _ = batch()
    plain = residual_variance_by_layer(model(n_layer=24), x)[-1]
    scaled = residual_variance_by_layer(model(n_layer=24, branch_scale="1/sqrt(2L)"), x)[-1]
    gpt2 = residual_variance_by_layer(model(n_layer=24, init="gpt2"), x)[-1]
    assert scaled < plain / 3 and gpt2 < plain / 3


def test_grad_norm_by_layer_matches_autograd_and_clears_grads():
    m, (x, y) = model(), batch()
    g = grad_norm_by_layer(m, x, y)
    assert g.shape == (6,) and np.all(g > 0)
    assert all(p.grad is None for p in m.parameters())
    _, loss = m(x, targets=y)
    loss.backward()
    want = torch.cat([p.grad.flatten() for p in m.h[2].parameters()]).norm()
    assert g[2] == pytest.approx(float(want), rel=1e-4)


def test_final_hidden_and_update_tracker():
    m, (x, y) = model(), batch()
    h = final_hidden(m, x)
    assert h.shape == (4, 16, 32)
    assert update_size(m, h, x) == 0.0
    tracker = UpdateTracker(m, x, every=2)
    opt = torch.optim.SGD(m.parameters(), lr=0.1)
    for step in range(4):
        opt.zero_grad()
        m(x, targets=y)[1].backward()
        opt.step()
        tracker(step, m)
    assert tracker.steps == [2, 4]
    assert 0 < tracker.sizes[0] < tracker.sizes[1]
    with pytest.raises(ValueError, match="every"):
        UpdateTracker(m, x, every=0)


@torch.no_grad()
def test_layer_contribution_is_branch_over_input():
    m, (x, _) = model(), batch()
    c = layer_contribution(m, x)
    xs = manual_stream(m, x)
    want = (xs[4] - xs[3]).norm(dim=-1).mean() / xs[3].norm(dim=-1).mean()
    assert c.shape == (6,) and c[3] == pytest.approx(float(want), rel=1e-5)
    # a block whose branches write nothing contributes nothing, and skipping it costs nothing
    for lin in (m.h[3].attn.c_proj, m.h[3].mlp.c_proj):
        lin.weight.zero_()
        lin.bias.zero_()
    assert layer_contribution(m, x)[3] == 0.0
    _, y = batch()
    full = float(m(x, targets=y)[1])
    skipped = skip_layer_losses(m, x, y)
    assert skipped.shape == (6,)
    assert skipped[3] == pytest.approx(full, abs=1e-6)
    assert not np.allclose(skipped, full)


@pytest.mark.parametrize("probe", ["final_hidden", "skip_layer_losses", "residual_stream"])
def test_probes_restore_training_mode_also_when_the_forward_raises(probe):
    m, (x, y) = model(), batch()
    m.train()

    def boom(module, args):
        assert not module.training          # the probe switched the model to eval mode
        raise RuntimeError("boom")

    handle = m.h[2].register_forward_pre_hook(boom)
    run = {"final_hidden": lambda: final_hidden(m, x),
           "skip_layer_losses": lambda: skip_layer_losses(m, x, y),
           "residual_stream": lambda: residual_stream(m, x)}[probe]
    with pytest.raises(RuntimeError, match="boom"):
        run()
    handle.remove()
    assert m.training and all(mod.training for mod in m.modules())
    m.eval()
    run()
    assert not m.training                    # ...and an eval-mode model stays in eval mode


def test_final_hidden_is_the_normed_output_the_head_reads():
    m, (x, _) = model(), batch()
    with torch.no_grad():
        want = m.ln_f(manual_stream(m, x)[-1])
    assert torch.equal(final_hidden(m, x), want)
    with torch.no_grad():
        assert torch.allclose(m.logits(manual_stream(m, x)[-1]),
                              final_hidden(m, x) @ m.wte.weight.T, atol=1e-5)


def test_probes_reject_bad_input():
    m = model()
    with pytest.raises(ValueError, match="idx"):
        residual_variance_by_layer(m, torch.zeros(16, dtype=torch.long))
    with pytest.raises(TypeError, match="Transformer"):
        residual_variance_by_layer(torch.nn.Linear(2, 2), torch.zeros(1, 2, dtype=torch.long))


def test_output_sensitivity_grows_with_depth_for_xavier_post_norm_not_pre_norm():
    """Liu et al.'s amplification at initialisation: the same relative nudge of every block
    matrix moves a Xavier post-norm stack's output more the deeper it is (about L^0.5 here),
    a pre-norm stack's hardly (L^0.07); the model's weights are restored afterwards."""
    import math

    from depthnotes.core.config import ModelConfig
    from depthnotes.core.model import Transformer
    from depthnotes.measure.probes import output_sensitivity

    idx = torch.randint(0, 32, (2, 32), generator=torch.Generator().manual_seed(0))

    def exponent(norm):
        s = [output_sensitivity(Transformer(ModelConfig(
            n_layer=L, d_model=64, n_head=2, d_ff=128, vocab_size=32, context=32,
            norm=norm, init="xavier"), seed=0), idx, seed=0) for L in (4, 32)]
        return math.log(s[1] / s[0]) / math.log(8)

    assert exponent("post") > 0.3
    assert abs(exponent("pre")) < 0.2
    model = Transformer(ModelConfig(n_layer=2, d_model=64, n_head=2, vocab_size=32,
                                    context=32), seed=1)
    before = [p.detach().clone() for p in model.parameters()]
    output_sensitivity(model, idx)
    assert all(torch.equal(a, b) for a, b in zip(before, model.parameters()))
    with pytest.raises(ValueError, match="eps"):
        output_sensitivity(model, idx, eps=0)


def test_deepnorms_first_adam_step_grows_with_depth_its_first_sgd_step_does_not():
    """DeepNet bounds SGD-like updates; Adam's first step moves every entry by about lr, so
    the output's move grows with the number of blocks moved. Measured here on a small DeepNorm
    stack at L = 4 and 32, one seed."""
    import math

    from depthnotes.core.config import ModelConfig
    from depthnotes.core.model import Transformer
    from depthnotes.measure.probes import first_update_size

    g = torch.Generator().manual_seed(0)
    x, y = torch.randint(0, 32, (4, 32), generator=g), torch.randint(0, 32, (4, 32), generator=g)
    probe = torch.randint(0, 32, (2, 32), generator=g)

    def exponent(opt, lr):
        s = [first_update_size(Transformer(ModelConfig(
            n_layer=L, d_model=32, n_head=2, d_ff=64, vocab_size=32, context=32,
            norm="deepnorm"), seed=0), x, y, probe, lr, opt) for L in (4, 32)]
        return math.log(s[1] / s[0]) / math.log(8)

    adam, sgd = exponent("adam", 1e-3), exponent("sgd", 1e-1)
    assert adam > 0.25 and adam > sgd + 0.25, (adam, sgd)
    with pytest.raises(ValueError, match="optimizer"):
        first_update_size(Transformer(ModelConfig(n_layer=1, d_model=32, n_head=2,
                                                  vocab_size=32, context=32)),
                          x, y, probe, 1e-3, "lion")


def test_a_blocks_only_first_step_moves_every_block_parameter_and_nothing_else():
    """``stepped="blocks"``: one SGD step moves every parameter inside the blocks and leaves
    the embeddings, the tied head and the final LayerNorm as they were; ``"all"`` moves the
    embeddings too. The update it causes is smaller than the whole model's but not zero, and
    the model given is never changed."""
    from depthnotes.measure.probes import (first_step, first_update_size,
                                           stepped_parameters)

    m = model(n_layer=3)                                 # pre-norm: it has a final LayerNorm
    idx, y = batch()
    before = {name: p.detach().clone() for name, p in m.named_parameters()}
    blocks = first_step(m, idx, y, lr=0.1, optimizer="sgd", stepped="blocks")
    every = first_step(m, idx, y, lr=0.1, optimizer="sgd", stepped="all")
    moved = {name: not torch.equal(p, before[name]) for name, p in blocks.named_parameters()}
    assert all(moved[n] for n in moved if n.startswith("h.")), moved
    outside = [n for n in moved if not n.startswith("h.")]
    assert {"wte.weight", "wpe.weight", "ln_f.weight"} <= set(outside)
    assert not any(moved[n] for n in outside), moved
    assert not torch.equal(dict(every.named_parameters())["wte.weight"], before["wte.weight"])
    assert all(torch.equal(p, before[n]) for n, p in m.named_parameters())   # untouched
    assert len(stepped_parameters(m, "blocks")) == sum(1 for _ in m.h.parameters())
    probe, _ = batch(B=2, seed=1)
    part, whole = (first_update_size(m, idx, y, probe, 0.1, "sgd", s)
                   for s in ("blocks", "all"))
    assert 0 < part < whole, (part, whole)
    with pytest.raises(ValueError, match="stepped"):
        stepped_parameters(m, "embeddings")


def test_a_deepnet_first_step_moves_only_w_v_w_o_and_the_ffn_matrices():
    """``stepped="deepnet"``: per block only W_V (the last d columns of the fused c_attn), W_O
    and both FFN weight matrices move; W_Q, W_K, every bias, every LayerNorm and everything
    outside the blocks keep their values. Its update is smaller than the blocks' one."""
    from depthnotes.measure.probes import first_step, first_update_size

    m = model(n_layer=3)
    idx, y = batch()
    before = {name: p.detach().clone() for name, p in m.named_parameters()}
    stepped = dict(first_step(m, idx, y, lr=0.1, optimizer="sgd",
                              stepped="deepnet").named_parameters())
    d = m.config.d_model
    moving = ("attn.c_proj.weight", "mlp.c_fc.weight", "mlp.c_proj.weight")
    for name, p in stepped.items():
        delta = p - before[name]
        if name.endswith("attn.c_attn.weight"):
            assert torch.count_nonzero(delta[:, :2 * d]) == 0, name       # W_Q, W_K
            assert torch.count_nonzero(delta[:, 2 * d:]) > 0, name        # W_V
        elif name.startswith("h.") and name.endswith(moving):
            assert torch.count_nonzero(delta) > 0, name
        else:
            assert torch.count_nonzero(delta) == 0, name
    probe, _ = batch(B=2, seed=1)
    part, blocks = (first_update_size(m, idx, y, probe, 0.1, "sgd", s)
                    for s in ("deepnet", "blocks"))
    assert 0 < part < blocks, (part, blocks)


def test_the_init_response_probe_passes_its_stepped_group_on():
    """The record probe's ``stepped`` reaches every step it takes: blocks-only updates differ
    from whole-model ones at the same rate, and an unknown group is refused."""
    from depthnotes.data.corpus import load_corpus
    from depthnotes.measure.record_probes import InitResponseProbe

    corpus = load_corpus()
    m = model(n_layer=2, vocab_size=corpus.vocab_size)
    kw = dict(batch_size=2, context=8, eps=None, sgd_lr=None, adam_lrs=[], sgd_lrs=[1e-2])
    got = {s: InitResponseProbe(m, corpus, stepped=s, **kw).result(m)["sgd_updates"][0]
           for s in ("all", "blocks")}
    assert 0 < got["blocks"] < got["all"], got
    with pytest.raises(ValueError, match="stepped"):
        InitResponseProbe(m, corpus, stepped="head", **kw)


def test_block_move_tracker_measures_each_blocks_step_against_a_direct_computation():
    """Per step and block: ||x_l(t) - x_l(t-1)|| / ||x_l(0)||, from the model's own stream;
    an untouched model moves by zero, a block whose output is replaced moves by its size."""
    from depthnotes.measure.probes import BlockMoveTracker

    m = model(n_layer=3)
    idx, _ = batch()
    tracker = BlockMoveTracker(m, idx)
    start = residual_stream(m, idx)
    tracker(0, m)                                           # nothing changed
    assert tracker.moves.shape == (1, 3) and np.allclose(tracker.moves, 0.0)
    with torch.no_grad():
        for p in m.h[2].parameters():                       # change the last block only
            p.add_(0.5)
    tracker(1, m)
    now = residual_stream(m, idx)

    def rel(a, b, r):
        return float((a - b).norm(dim=-1).mean() / r.norm(dim=-1).mean())

    expected = [rel(a, b, b) for a, b in zip(now[1:], start[1:])]
    assert tracker.moves.shape == (2, 3)
    assert np.allclose(tracker.moves[1], expected, rtol=1e-5)
    assert tracker.moves[1, 0] == 0.0 and tracker.moves[1, 2] > 0.1    # block 3 moved
