"""The book's line fit on log-log axes (``depthnotes.core.fitting.log_log_fit``): it is the one
line fit on logs, and every power law the package fits goes through it with the same numbers
the callers computed before they shared it."""

import ast
import math
import statistics
from pathlib import Path

import numpy as np
import pytest

from depthnotes import ModelConfig
from depthnotes.bench.latency import LatencyResult, Timing, block_scaling, decode_block_bytes
from depthnotes.core.fitting import linear_fit, log_log_fit
from depthnotes.verdicts.ch5_fixes import update_exponents
from depthnotes.verdicts.ch7_latency import depth_cost

PACKAGE = Path(__file__).resolve().parents[1] / "depthnotes"


def test_log_log_fit_recovers_a_power_law_and_is_the_line_fit_on_logs():
    x = np.array([6, 12, 24, 48, 96])
    y = 0.3 * x ** 0.7 * np.array([1.0, 1.01, 0.99, 1.02, 0.98])
    fit = log_log_fit(x, y)
    assert fit == linear_fit(np.log(x), np.log(y))             # bit for bit
    assert fit.slope == pytest.approx(0.7, abs=0.02) and fit.r2 > 0.99
    assert np.exp(fit.predict(np.log(x))) == pytest.approx(y, rel=0.03)
    assert log_log_fit([2, 4], [3.0, 12.0]).slope == pytest.approx(2.0, rel=1e-12)


@pytest.mark.parametrize("x, y, name", [([1, 2], [1.0, 0.0], "y"), ([0, 2], [1.0, 2.0], "x"),
                                        ([1, 2], [1.0, math.nan], "y"),
                                        ([-1, 2], [1.0, 2.0], "x")])
def test_log_log_fit_refuses_points_it_cannot_take_the_log_of(x, y, name):
    with pytest.raises(ValueError, match=f"every {name} finite and > 0"):
        log_log_fit(x, y)


def test_update_exponents_give_the_numbers_they_gave_before():
    rng = np.random.default_rng(0)
    depths = [6, 12, 24, 48, 96, 200]
    sizes = {"f": {L: list(rng.random(3) * L ** 0.4 + 0.01) for L in depths}}
    sizes["f"][24][1] = math.nan                                    # a seed with a gap
    before = []
    for s in range(3):
        y = np.array([sizes["f"][L][s] for L in depths])
        ok = np.isfinite(y) & (y > 0)
        before.append(linear_fit(np.log(np.array(depths)[ok]), np.log(y[ok])).slope)
    assert update_exponents(sizes)["f"] == before


def test_block_scaling_gives_the_exponent_it_gave_before():
    configs = [ModelConfig(n_layer=L, d_model=d, n_head=4, vocab_size=256, context=64)
               for L, d in ((4, 64), (8, 128), (12, 256), (24, 512))]
    ms = [0.91, 2.37, 7.1, 39.3]
    per_block = [m / c.n_layer for c, m in zip(configs, ms)]
    nbytes = [decode_block_bytes(c) for c in configs]
    before = linear_fit([math.log(b) for b in nbytes], [math.log(t) for t in per_block]).slope
    assert block_scaling(configs, ms).exponent == before


def test_depth_cost_exponent_is_the_two_point_exponent_to_the_last_bits():
    """Two points: the fitted slope is log(ratio) / log(deep / shallow), which depth_cost wrote
    out before; the two can differ in the last bits (here < 1e-14), never in what is shown."""
    def result(L, ms):
        return LatencyResult(n_layer=L, d_model=64, n_head=2, vocab_size=256, params=1,
                             weight_bytes=10 ** 9, batch=1, prompt_len=4, new_tokens=8,
                             decode=Timing.of(ms), prefill=Timing.of(ms), machine=None)
    rng = np.random.default_rng(1)
    for lo, hi in ((1, 8), (6, 48), (2, 24)):
        shallow = list(rng.random(5) + 1)
        deep = [s * (hi / lo) ** 0.8 * (1 + 0.1 * rng.random()) for s in shallow]
        cost = depth_cost([result(lo, shallow), result(hi, deep)], 1)
        ratio = statistics.median(d / s for d, s in zip(deep, shallow))
        assert cost.exponent == pytest.approx(math.log(ratio) / math.log(hi / lo), rel=1e-14)


def test_no_module_fits_a_line_to_logs_by_hand():
    """A power law is fitted with ``log_log_fit``, not by feeding logs to ``linear_fit``."""
    def takes_log(node):
        return any(isinstance(n, ast.Call) and isinstance(n.func, (ast.Attribute, ast.Name))
                   and getattr(n.func, "attr", getattr(n.func, "id", None)) == "log"
                   for n in ast.walk(node))
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "linear_fit" \
                    and any(takes_log(a) for a in node.args):
                found.append(f"{path.relative_to(PACKAGE)}:{node.lineno}")
    assert [where.split(":")[0] for where in found] == ["core/fitting.py"], found
