"""Tests of depthnotes.training.loop: the schedule, validation, determinism, and divergence as a result."""

import math

import pytest
import torch

from depthnotes import ModelConfig, Transformer
from depthnotes.data.corpus import load_corpus
from depthnotes.training.loop import TrainConfig, TrainResult, evaluate, param_groups, train


@pytest.fixture(scope="module")
def corpus():
    return load_corpus()


def tiny(corpus, **kw):
    base = dict(n_layer=2, d_model=32, n_head=2, vocab_size=corpus.vocab_size, context=16,
                norm="pre", init="normal")
    base.update(kw)
    return Transformer(ModelConfig(**base), seed=0)


FAST = TrainConfig(steps=40, batch_size=8, context=16, lr=3e-3, warmup_steps=5, eval_every=20,
                   eval_batches=2)


def test_lr_schedule_warmup_then_cosine():
    c = TrainConfig(steps=11, lr=1.0, warmup_steps=4, decay="cosine", min_lr_ratio=0.1)
    lrs = [c.lr_at(s) for s in range(11)]
    assert lrs[:4] == pytest.approx([0.25, 0.5, 0.75, 1.0])
    assert lrs[4] == pytest.approx(1.0)          # decay starts at the peak
    assert lrs[-1] == pytest.approx(0.1)         # ... and ends at the floor
    assert all(a >= b for a, b in zip(lrs[3:], lrs[4:]))
    lin = TrainConfig(steps=5, lr=1.0, decay="linear", min_lr_ratio=0.0)
    assert [lin.lr_at(s) for s in range(5)] == pytest.approx([1.0, 0.75, 0.5, 0.25, 0.0])
    const = TrainConfig(steps=5, lr=0.5, warmup_steps=2, decay="constant")
    assert [const.lr_at(s) for s in range(5)] == pytest.approx([0.25, 0.5, 0.5, 0.5, 0.5])


@pytest.mark.parametrize("kw, err, field", [
    (dict(steps=0), ValueError, "steps"),
    (dict(steps=1.5), TypeError, "steps"),
    (dict(lr=0.0), ValueError, "lr"),
    (dict(lr=float("nan")), ValueError, "lr"),
    (dict(warmup_steps=-1), ValueError, "warmup_steps"),
    (dict(decay="step"), ValueError, "decay"),
    (dict(grad_clip=0.0), ValueError, "grad_clip"),
    (dict(grad_clip="1"), TypeError, "grad_clip"),
    (dict(blowup_factor=1.0), ValueError, "blowup_factor"),
    (dict(eval_every=-1), ValueError, "eval_every"),
    (dict(min_lr_ratio=2.0), ValueError, "min_lr_ratio"),
    (dict(beta2=1.0), ValueError, "beta2"),
    (dict(eval_seed=-1), ValueError, "eval_seed"),
    (dict(eval_seed=0.5), TypeError, "eval_seed"),
    (dict(block_lr_scale=0.0), ValueError, "block_lr_scale"),
    (dict(block_lr_scale=-0.5), ValueError, "block_lr_scale"),
    (dict(block_lr_scale=float("inf")), ValueError, "block_lr_scale"),
    (dict(block_lr_scale="1/sqrt(L)"), TypeError, "block_lr_scale"),
])
def test_config_validation_names_the_field(kw, err, field):
    with pytest.raises(err, match=field):
        TrainConfig(**kw)


def test_training_lowers_the_loss_and_evaluates_on_schedule(corpus):
    model = tiny(corpus)
    res = train(model, corpus, FAST)
    assert isinstance(res, TrainResult)
    assert not res.diverged and res.diverged_at is None and res.reason is None
    assert res.steps_run == 40 and len(res.train_losses) == 40 and len(res.grad_norms) == 40
    assert res.eval_steps == [20, 40]
    assert res.initial_loss == pytest.approx(math.log(corpus.vocab_size), rel=0.05)
    assert res.final_train_loss < res.initial_loss - 0.5
    assert res.final_eval_loss < math.log(corpus.vocab_size) - 0.5
    assert res.best_eval_loss == min(res.eval_losses)
    assert res.lrs[:5] == pytest.approx([3e-3 * k / 5 for k in range(1, 6)])
    assert "trained 40 steps" in res.summary()


def test_a_fixed_eval_seed_evaluates_every_seed_on_the_same_text(corpus):
    """With ``eval_seed`` the held-out batches do not depend on the run's seed: one model
    scores the same under seeds 1 and 2; without it, the batches (and the loss) differ."""
    model = tiny(corpus)
    fixed = [evaluate(model, lambda g: corpus.get_batch("val", 8, 16, g),
                      FAST.replace(seed=s, eval_seed=0)) for s in (1, 2)]
    drawn = [evaluate(model, lambda g: corpus.get_batch("val", 8, 16, g),
                      FAST.replace(seed=s)) for s in (1, 2)]
    assert fixed[0] == fixed[1]
    assert drawn[0] != drawn[1]


def test_training_is_deterministic(corpus):
    a = train(tiny(corpus), corpus, FAST.replace(steps=10, eval_every=0))
    b = train(tiny(corpus), corpus, FAST.replace(steps=10, eval_every=0))
    assert a.train_losses == b.train_losses and a.eval_losses == b.eval_losses
    c = train(tiny(corpus), corpus, FAST.replace(steps=10, eval_every=0, seed=1))
    assert c.train_losses != a.train_losses


def test_gradient_clipping_caps_the_update(corpus):
    res = train(tiny(corpus), corpus, FAST.replace(steps=3, grad_clip=1e-3, eval_every=0))
    # the recorded norm is the pre-clip norm; clipping on/off changes the trajectory
    off = train(tiny(corpus), corpus, FAST.replace(steps=3, grad_clip=None, eval_every=0))
    assert res.grad_norms[0] == pytest.approx(off.grad_norms[0])
    assert res.train_losses[2] != off.train_losses[2]


def test_blow_up_is_a_result_not_an_exception(corpus):
    model = tiny(corpus, norm="post")
    res = train(model, corpus, FAST.replace(lr=5.0, warmup_steps=0, grad_clip=None,
                                            blowup_factor=2.0))
    assert res.diverged
    assert res.diverged_at is not None and 0 < res.diverged_at < 40
    assert "exceeded 2 x" in res.reason or "not finite" in res.reason
    assert res.steps_run == res.diverged_at
    assert len(res.train_losses) == res.diverged_at + 1
    assert res.summary().startswith(f"diverged at step {res.diverged_at}")


class NanAfter(torch.nn.Module):
    """A fake model whose loss turns NaN at a given step."""

    def __init__(self, bad_step):
        super().__init__()
        self.w = torch.nn.Parameter(torch.ones(()))
        self.calls, self.bad_step = 0, bad_step

    def forward(self, x, targets=None):
        loss = (self.w - 2.0) ** 2 + 1.0
        if self.training:
            if self.calls == self.bad_step:
                loss = loss * float("nan")
            self.calls += 1
        return None, loss


def test_nan_loss_stops_the_run_at_that_step():
    def batches(gen):
        return torch.zeros(1, 1, dtype=torch.long), torch.zeros(1, 1, dtype=torch.long)

    res = train(NanAfter(bad_step=7), batches, TrainConfig(steps=20, lr=0.01))
    assert res.diverged and res.diverged_at == 7
    assert "not finite" in res.reason
    assert math.isnan(res.train_losses[-1]) and res.steps_run == 7
    assert res.eval_losses == []


def test_callable_data_and_on_step_hook():
    """Synthetic-task style data: a function generator -> (x, y), with -100 = ignored target."""
    model = Transformer(ModelConfig(n_layer=1, d_model=16, n_head=2, vocab_size=8, context=4),
                        seed=0)

    def task(gen):
        x = torch.randint(0, 8, (8, 4), generator=gen)
        y = torch.full_like(x, -100)
        y[:, -1] = x[:, 0]                            # copy the first token, scored at the end
        return x, y

    seen = []
    res = train(model, task, TrainConfig(steps=30, lr=1e-2, eval_every=15),
                on_step=lambda step, m: seen.append(step))
    assert seen == list(range(30))
    assert res.eval_steps == [15, 30] and not res.diverged
    assert res.final_eval_loss < math.log(8)
    assert evaluate(model, task, res.config) == pytest.approx(res.final_eval_loss)


def test_bad_data_is_a_type_error():
    with pytest.raises(TypeError, match="data must be"):
        train(torch.nn.Linear(1, 1), [1, 2, 3], TrainConfig(steps=1))
    with pytest.raises(TypeError, match="TrainConfig"):
        train(torch.nn.Linear(1, 1), lambda g: None, {"steps": 1})


@pytest.mark.parametrize("mode", ["train", "eval"])
def test_train_gives_the_model_back_in_its_mode(corpus, mode):
    """train() trains in training mode and restores the caller's mode; evaluate() runs in
    eval mode (seen by the model) and restores it too."""
    model = tiny(corpus)
    model.train(mode == "train")
    seen = []
    model.register_forward_pre_hook(lambda m, args: seen.append(m.training))
    res = train(model, corpus, FAST.replace(steps=3, eval_every=0, eval_batches=1))
    assert model.training == (mode == "train")
    assert seen == [True, True, True, False]          # 3 training steps, 1 evaluation
    seen.clear()
    evaluate(model, lambda g: corpus.get_batch("val", 2, 16, g), res.config)
    assert seen == [False] and model.training == (mode == "train")


def test_train_restores_the_mode_when_the_loop_raises(corpus):
    model = tiny(corpus).eval()

    def broken(gen):
        raise RuntimeError("no batch")

    with pytest.raises(RuntimeError, match="no batch"):
        train(model, broken, FAST.replace(steps=2))
    assert not model.training


# -- block_lr_scale: the blocks' own rate (chapter 8's Depth-muP arm) --------------------------
def _names(model, group):
    ids = {id(p) for p in group["params"]}
    return {n for n, p in model.named_parameters() if id(p) in ids}


def test_default_rate_is_the_two_groups_of_before(corpus):
    model = tiny(corpus)
    params = list(model.parameters())
    groups = param_groups(model, params, TrainConfig())
    assert [g["lr_scale"] for g in groups] == [1.0, 1.0]
    assert [g["weight_decay"] for g in groups] == [TrainConfig().weight_decay, 0.0]
    assert [len(g["params"]) for g in groups] == [
        sum(p.dim() >= 2 for p in params), sum(p.dim() < 2 for p in params)]


def test_block_lr_scale_puts_exactly_the_blocks_at_the_scaled_rate(corpus):
    model = tiny(corpus)
    groups = param_groups(model, list(model.parameters()),
                          TrainConfig(block_lr_scale=0.25, weight_decay=0.1))
    scaled = set().union(*(_names(model, g) for g in groups if g["lr_scale"] == 0.25))
    kept = set().union(*(_names(model, g) for g in groups if g["lr_scale"] == 1.0))
    assert scaled == {n for n, _ in model.named_parameters() if n.startswith("h.")}
    assert {"h.0.attn.c_attn.weight", "h.1.mlp.c_proj.bias", "h.0.ln_1.weight"} <= scaled
    assert kept == {"wte.weight", "wpe.weight", "ln_f.weight", "ln_f.bias"}   # head tied
    # matrices still decay, vectors still do not
    assert all(g["weight_decay"] == (0.0 if all(p.dim() < 2 for p in g["params"]) else 0.1)
               for g in groups if g["params"])


def test_block_lr_scale_scales_the_blocks_first_adam_step_only(corpus):
    """Adam's first step moves a weight by lr * g / (|g| + eps): the blocks' step at a
    quarter of the rate is a quarter of the default's, every other parameter's the same."""
    one = TrainConfig(steps=1, batch_size=4, context=16, lr=1e-2, decay="constant",
                      eval_batches=1)
    steps = {}
    for scale in (1.0, 0.25):
        model = tiny(corpus)
        before = {n: p.detach().clone() for n, p in model.named_parameters()}
        result = train(model, corpus, one.replace(block_lr_scale=scale))
        assert result.lrs == [1e-2]                     # the history keeps the global rate
        steps[scale] = {n: p.detach() - before[n] for n, p in model.named_parameters()}
    for name, step in steps[1.0].items():
        want = step * 0.25 if name.startswith("h.") else step
        assert torch.allclose(steps[0.25][name], want, rtol=1e-4, atol=1e-9), name
    assert steps[1.0]["h.0.attn.c_attn.weight"].abs().max() > 5e-3   # the step is not zero


def test_block_lr_scale_is_refused_for_a_model_without_blocks():
    model = torch.nn.Linear(3, 3)
    with pytest.raises(TypeError, match=r"block_lr_scale=0\.5 .*model\.h"):
        train(model, lambda g: (torch.zeros(2, 3), torch.zeros(2, 3)),
              TrainConfig(steps=1, block_lr_scale=0.5))
    assert len(param_groups(model, list(model.parameters()), TrainConfig())) == 2
