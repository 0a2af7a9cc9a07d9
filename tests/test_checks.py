"""The shared input checks: each rule refuses what it must and names the field."""

import pytest
import torch

from depthnotes.core.checks import check_choice, check_int, check_number, eval_mode


def test_check_int_refuses_bool_float_and_small_values():
    assert check_int("n_layer", 3) == 3
    with pytest.raises(TypeError, match="n_layer"):
        check_int("n_layer", True)
    with pytest.raises(TypeError, match="n_layer"):
        check_int("n_layer", 2.0)
    with pytest.raises(ValueError, match=r"steps must be an int >= 0, got -1"):
        check_int("steps", -1, minimum=0)


def test_check_number_intervals():
    assert check_number("lr", 1e-3, low=0.0, low_open=True) == 1e-3
    with pytest.raises(ValueError, match=r"lr must be a finite number in \(0, inf\)"):
        check_number("lr", 0.0, low=0.0, low_open=True)
    with pytest.raises(ValueError, match=r"\[0, 1\)"):
        check_number("beta2", 1.0, low=0.0, high=1.0, high_open=True)
    with pytest.raises(ValueError, match="finite"):
        check_number("lr", float("nan"))
    with pytest.raises(TypeError, match="or None"):
        check_number("grad_clip", "1", extra="(or None to turn clipping off)")


def test_check_choice_lists_the_allowed_values():
    assert check_choice("norm", "pre", ("pre", "post")) == "pre"
    with pytest.raises(ValueError, match=r"norm must be one of \['pre', 'post'\], got 'mid'"):
        check_choice("norm", "mid", ("pre", "post"))


def test_eval_mode_restores_the_mode_even_on_error():
    model = torch.nn.Linear(2, 2)
    model.train()
    with eval_mode(model):
        assert not model.training
    assert model.training
    with pytest.raises(RuntimeError):
        with eval_mode(model):
            raise RuntimeError("boom")
    assert model.training
    model.eval()
    with eval_mode(model):
        pass
    assert not model.training
