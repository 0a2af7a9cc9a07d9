"""Chapter 8's cheap measurements (``depthnotes.measure.depth_scaling``)."""

import numpy as np
import pytest
import torch

from depthnotes import Transformer
from depthnotes.measure.depth_scaling import (CHAPTER8_RULES, coordinate_check, corpus_batch,
                                              layer_removal_cost, ln_scaling_variance,
                                              small_config)
from depthnotes.measure.probes import skip_layer_losses


pytestmark = pytest.mark.usefixtures("one_thread")   # tests/conftest.py


def test_coordinate_check_order_and_learning_rates():
    pts = coordinate_check([1, 4], lr=2e-3, lr_depth_exponent=0.5, batch_size=2, context=16)
    assert [(p.n_layer, p.branch_scale) for p in pts] == [
        (L, r) for L in (1, 4) for r in CHAPTER8_RULES]
    assert [p.lr for p in pts] == pytest.approx([2e-3] * 3 + [1e-3] * 3)
    # at L = 1 every rule's multiplier is 1: the three models are the same model
    first = [(p.stream_rms, p.stream_change_rms, p.logit_change_rms) for p in pts[:3]]
    assert first[0] == first[1] == first[2]
    assert all(p.stream_change_rms > 0 and p.logit_change_rms > 0 for p in pts)


def test_coordinate_check_shows_the_rules_apart():
    """With a fixed rate the one-step change of the stream grows with depth under the
    standard parameterisation, and under 1/L it does not (the papers' prediction)."""
    pts = {(p.n_layer, p.branch_scale): p for p in coordinate_check([2, 16], batch_size=4)}
    change = {r: pts[16, r].stream_change_rms / pts[2, r].stream_change_rms
              for r in CHAPTER8_RULES}
    assert change[1.0] > 2.0
    assert change[1.0] > change["1/sqrt(L)"] > change["1/L"]
    assert 0.67 < change["1/L"] < 1.5
    assert pts[16, 1.0].stream_rms > 1.5 * pts[2, 1.0].stream_rms


@pytest.mark.parametrize("kw, error, match", [
    (dict(depths=[]), ValueError, "at least one depth"),
    (dict(depths=[0]), ValueError, r"depths\[i\]"),
    (dict(depths=[2], lr=0.0), ValueError, "lr"),
    (dict(depths=[2], lr_depth_exponent="half"), TypeError, "lr_depth_exponent"),
    (dict(depths=[2], base="tiny"), TypeError, "base must be a ModelConfig"),
    (dict(depths=[2], rules=("1/sqrt(3L)",)), ValueError, "branch_scale"),
])
def test_coordinate_check_bad_input(kw, error, match):
    with pytest.raises(error, match=match):
        coordinate_check(**kw)


def test_ln_scaling_variance_same_first_block_smaller_growth():
    v = ln_scaling_variance(16, batch_size=4)
    assert set(v) == {"none", "1/sqrt(l)"}
    assert all(a.shape == (17,) for a in v.values())
    assert v["none"][:2] == pytest.approx(v["1/sqrt(l)"][:2], rel=0, abs=0)
    assert v["1/sqrt(l)"][-1] < 0.5 * v["none"][-1]


def test_layer_removal_cost_is_the_skip_loss_minus_the_full_loss():
    x, y, vocab = corpus_batch(batch_size=2, context=16)
    model = Transformer(small_config(vocab, 16, n_layer=3), seed=0)
    cost = layer_removal_cost(model, x, y)
    with torch.no_grad():
        full = float(model(x, y)[1])
    assert cost.shape == (3,)
    assert np.allclose(cost, skip_layer_losses(model, x, y) - full)
    # A looped model has one cost per application, each skipping that application only.
    looped = Transformer(small_config(vocab, 16, n_layer=4, n_unique_blocks=2), seed=0)
    cost = layer_removal_cost(looped, x, y)
    with torch.no_grad():
        full = float(looped(x, y)[1])
        third = float(looped(x, y, skip=(2,))[1])
    assert cost.shape == (4,) and cost[2] == pytest.approx(third - full)
