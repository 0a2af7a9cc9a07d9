"""The latency bench (depthnotes.bench.latency) and the model's decode layout.

Its command line (``python -m depthnotes latency``) is tested in test_cli.py, the machine
information and thread control (``depthnotes.training.runtime``) in test_runtime.py.
"""

import copy
import json
import math
import os
import statistics

import pytest
import torch

from depthnotes import ModelConfig, Transformer, count_params
from depthnotes.bench import latency
from depthnotes.verdicts import ch7_latency
from depthnotes.core.fitting import LinearFit
from depthnotes.bench.latency import (BANDWIDTH_CONVENTION, CACHE_MARGIN, COPY_CONVENTION,
                                      FALLBACK_CACHE_BYTES, MEMORY_MARGIN, OVERHEAD_EXPONENT,
                                      CacheSize, LatencyResult, Timing, arithmetic_intensity,
                                      attention_flop_share, block_bound_ms, block_scaling,
                                      cache_regime, decode_block_bytes, decode_flops,
                                      decode_weight_bytes, first_memory_depth, fit_latency,
                                      fit_memory_regime, format_table, head_latency,
                                      last_level_cache, machine_busy, measure_latency,
                                      measure_many, measure_rounds, memory_bandwidth,
                                      memory_resident, paired_ratios, peak_flops,
                                      read_probe_bytes, ridge_point, roof_gflops, roofline_ms,
                                      round_intercepts, sweep_depths)
from depthnotes.verdicts.ch7_latency import roof_limit, versus_one, versus_spread
from depthnotes.verdicts.ch7_latency import (C17_CAVEAT_FACTOR, C17_MIN_RATIO, DepthCost,
                                             budget_sweep_shapes, c17_verdict, depth_cost)
from depthnotes.experiments.records import Record, load_record
from depthnotes.training.runtime import MachineInfo, num_threads

TINY = dict(n_layer=2, d_model=32, n_head=4, vocab_size=64, context=64)


def cfg(**kw):
    return ModelConfig(**{**TINY, **kw})


# -- plain data and arithmetic ------------------------------------------------------------
def test_timing_summarises_samples():
    t = Timing.of([3.0, 1.0, 2.0, 10.0])
    assert (t.median, t.min, t.max) == (2.5, 1.0, 10.0)
    assert t.samples == (3.0, 1.0, 2.0, 10.0)
    assert t.spread == pytest.approx(9.0 / 2.5)
    with pytest.raises(ValueError, match="at least one"):
        Timing.of([])


def test_fit_recovers_a_line_and_r2():
    """fit_latency is the book's one line fit: intercept a, slope b (ms per block), R^2."""
    fit = fit_latency([1, 2, 4, 8], [3.0 + 0.5 * L for L in (1, 2, 4, 8)])
    assert isinstance(fit, LinearFit)
    assert fit.intercept == pytest.approx(3.0) and fit.slope == pytest.approx(0.5)
    assert fit.r2 == pytest.approx(1.0)
    assert fit.predict(96) == pytest.approx(51.0)
    noisy = fit_latency([1, 2, 3, 4], [1.0, 3.0, 2.0, 4.0])
    assert noisy.slope == pytest.approx(0.8) and noisy.r2 == pytest.approx(0.64)


def test_fit_rejects_too_few_points():
    with pytest.raises(ValueError, match=">= 2"):
        fit_latency([1], [2.0])
    with pytest.raises(ValueError, match="two different values"):
        fit_latency([4, 4], [1.0, 2.0])
    with pytest.raises(ValueError, match="same length"):
        fit_latency([1, 2, 3], [1.0, 2.0])


def test_weight_bytes_of_gpt2_small():
    c = ModelConfig.preset("gpt2-small")
    expected = (count_params(c).non_embedding + 50257 * 768 + 2 * 768) * 4
    assert decode_weight_bytes(c) == expected
    assert 490e6 < expected < 500e6  # ~495 MB: blocks 340 MB + head 154 MB
    # an untied head reads its own matrix instead of the embedding's: the same bytes
    assert decode_weight_bytes(c.replace(tie_embeddings=False)) == expected
    assert roofline_ms(c, 25.0) == pytest.approx(expected / 25e9 * 1e3)
    with pytest.raises(ValueError, match="bandwidth_gbs"):
        roofline_ms(c, 0.0)
    with pytest.raises(TypeError, match="bandwidth_gbs"):
        roofline_ms(c, "25")


def test_memory_bandwidth_is_a_positive_rate():
    bw = memory_bandwidth(megabytes=8, repeats=2)
    assert 0.1 < bw < 10_000  # GB/s
    with pytest.raises(ValueError, match="megabytes"):
        memory_bandwidth(megabytes=0)


# -- the cache and the memory regime ------------------------------------------------------
def _fake_sysfs(root, entries):
    """A /sys/devices/system/cpu/cpu0/cache look-alike: (level, type, size) per index."""
    root.mkdir()
    for i, (level, kind, size) in enumerate(entries):
        d = root / f"index{i}"
        d.mkdir()
        (d / "level").write_text(f"{level}\n")
        (d / "type").write_text(f"{kind}\n")
        (d / "size").write_text(f"{size}\n")
    return root


def test_last_level_cache_reads_the_largest_data_level_from_sysfs(tmp_path):
    root = _fake_sysfs(tmp_path / "a", [(1, "Data", "32K"), (1, "Instruction", "32K"),
                                        (2, "Unified", "1024K"), (3, "Unified", "32768K")])
    assert last_level_cache(root) == CacheSize(32 * 2**20, 3, "sysfs")
    # an instruction cache never counts, even at the highest level
    other = _fake_sysfs(tmp_path / "b", [(1, "Data", "48K"), (2, "Unified", "2M"),
                                         (3, "Instruction", "8M")])
    assert last_level_cache(other) == CacheSize(2 * 2**20, 2, "sysfs")
    assert latency._parse_size("512") == 512 and latency._parse_size("1G") == 2**30


def test_last_level_cache_falls_back_to_sysconf_then_to_a_stated_guess(tmp_path, monkeypatch):
    monkeypatch.setattr(latency.sys, "platform", "linux")
    monkeypatch.setattr(os, "sysconf_names", {"SC_LEVEL3_CACHE_SIZE": 1,
                                              "SC_LEVEL2_CACHE_SIZE": 2})
    monkeypatch.setattr(os, "sysconf", lambda name: {"SC_LEVEL3_CACHE_SIZE": 0,
                                                     "SC_LEVEL2_CACHE_SIZE": 2**21}[name])
    assert last_level_cache(tmp_path) == CacheSize(2**21, 2, "sysconf")   # no L3: the L2
    monkeypatch.setattr(os, "sysconf_names", {})
    guess = last_level_cache(tmp_path)
    assert guess == CacheSize(FALLBACK_CACHE_BYTES, None, "assumed")


def _rates(fast_below: int, fast: float = 30.0, slow: float = 13.0):
    """A read rate per probe size: ``fast`` GB/s up to ``fast_below`` bytes, ``slow`` above,
    and the sizes asked, in order."""
    asked: list[int] = []

    def rate(nbytes: int) -> float:
        asked.append(nbytes)
        return fast if nbytes <= fast_below else slow
    return rate, asked


def test_usable_cache_keeps_the_reported_size_when_a_core_reads_half_of_it_fast():
    reported = CacheSize(32 * 2**20, 3, "sysfs")
    rate, asked = _rates(fast_below=16 * 2**20)
    got = latency.usable_cache(reported, rate)
    assert (got.bytes, got.source, got.reported) == (reported.bytes, "sysfs", None)
    assert got.probes == ((16 * 2**20, 30.0 / 13.0),)
    # each round times the half, then the memory probe (4x the reported cache)
    memory = latency.read_probe_bytes(reported)
    assert asked == [16 * 2**20, memory] * latency.USABLE_ROUNDS
    assert "as the operating system reports it; read rate over memory's: 17 MB at 2.31x" \
        in got.said


def test_usable_cache_measures_the_part_a_core_reads_fast_on_a_shared_cache():
    """A server's 260 MiB L3 of which one core reads 64 MiB fast (the CI Xeon of
    2026-12-06): the largest halving read at least FAST_READ_FACTOR x the memory rate."""
    reported = CacheSize(260 * 2**20, 3, "sysfs")
    rate, asked = _rates(fast_below=65 * 2**20)
    got = latency.usable_cache(reported, rate)
    assert got == CacheSize(65 * 2**20, 3, "measured", reported=reported,
                            probes=((130 * 2**20, 1.0), (65 * 2**20, 30.0 / 13.0)))
    assert sorted(set(asked)) == [65 * 2**20, 130 * 2**20, 4 * 260 * 2**20]
    assert got.said.startswith("measured: of the 272.6 MB the operating system reports, one "
                               "core reads 68.2 MB at least 1.5 times as fast")
    # the memory probe stays sized from the whole reported cache, never from the part
    assert latency.read_probe_bytes(got) == latency.read_probe_bytes(reported)
    # a rate only 1.4x memory's is not fast, at any size: the reported size is kept
    rate, asked = _rates(fast_below=65 * 2**20, fast=13.0 * 1.4)
    kept = latency.usable_cache(reported, rate)
    assert (kept.bytes, kept.source) == (reported.bytes, "sysfs")
    assert min(b for b, _ in kept.probes) >= latency.USABLE_MIN_BYTES
    assert len(kept.probes) == 8                    # 130 MiB down to 1.02 MiB
    with pytest.raises(TypeError, match="read_gbs must be a function"):
        latency.usable_cache(reported, "fast")
    with pytest.raises(TypeError, match="cache must be a CacheSize"):
        latency.usable_cache(260 * 2**20)


def test_usable_cache_says_when_the_size_it_starts_from_was_assumed_or_tiny():
    """An assumed cache (no size reported) is measured the same way and says it was
    assumed; a cache under twice USABLE_MIN_BYTES is probed at its half only."""
    assumed = CacheSize(FALLBACK_CACHE_BYTES, None, "assumed")
    got = latency.usable_cache(assumed, _rates(fast_below=4 * 2**20)[0])
    assert got.source == "measured" and got.bytes == 4 * 2**20
    assert "MB assumed (the operating system reported none), one core reads 4.2 MB" in got.said
    tiny = CacheSize(3 * 2**20 // 2, 2, "sysfs")
    rate, asked = _rates(fast_below=0)
    got = latency.usable_cache(tiny, rate)
    assert got.bytes == tiny.bytes and [b for b, _ in got.probes] == [tiny.bytes // 2]


def test_the_machine_reports_a_plausible_cache():
    cache = last_level_cache()
    assert 2**15 <= cache.bytes <= 2**31 and cache.megabytes == cache.bytes / 1e6


def test_cache_regime_has_a_transition_band_between_its_margins():
    """Weights near the cache's size are neither regime: memory only above MEMORY_MARGIN x
    the cache, cache only below CACHE_MARGIN x it."""
    cache = CacheSize(1000, 3, "sysfs")
    assert (MEMORY_MARGIN, CACHE_MARGIN) == (2.0, 0.5)
    assert cache_regime(499, cache) == "cache" and cache_regime(500, cache) == "transition"
    assert cache_regime(1001, cache) == "transition" and cache_regime(2000, cache) == "transition"
    assert cache_regime(2001, cache) == "memory" and memory_resident(2001, 1000)
    assert not memory_resident(1500, cache) and not memory_resident(10, 1000)
    with pytest.raises(ValueError, match="cache bytes"):
        memory_resident(10, 0)
    assert read_probe_bytes(cache) == 4000 and memory_resident(read_probe_bytes(cache), cache)


@pytest.mark.parametrize("llc_mib", [8, 32, 128, 256])
def test_sweep_depths_have_three_memory_resident_depths_at_any_cache(llc_mib):
    base = ModelConfig(n_layer=1, d_model=512, n_head=8, vocab_size=256, context=64)
    cache = llc_mib * 2**20
    depths = sweep_depths(base, cache)
    regimes = [cache_regime(decode_weight_bytes(base.replace(n_layer=L)), cache) for L in depths]
    assert depths == sorted(set(depths)) and regimes.count("memory") == 3
    assert regimes[-3:] == ["memory"] * 3
    L_m = first_memory_depth(base, cache)
    assert memory_resident(decode_weight_bytes(base.replace(n_layer=L_m)), cache)
    assert L_m == 1 or not memory_resident(
        decode_weight_bytes(base.replace(n_layer=L_m - 1)), cache)
    if llc_mib == 32:
        assert depths == [1, 2, 4, 6, 12, 24]
    if llc_mib == 128:                      # the numbers sweep_depths' docstring states
        assert (L_m, depths[-1]) == (22, 88)


def _result(L: int, ms, weight_bytes: int) -> LatencyResult:
    t = Timing.of(ms if isinstance(ms, (list, tuple)) else [ms])
    return LatencyResult(L, 64, 4, 256, 0, weight_bytes, 1, 8, 12, t, t,
                         MachineInfo("cpu", 1, torch.__version__, "3.11", None))


def test_fit_memory_regime_leaves_out_the_cache_resident_and_transition_shapes():
    """Cache-resident points below the memory line tilt a fit through all points (its
    intercept goes negative); the memory-regime fit recovers the line."""
    line = [_result(L, 0.2 + 1.0 * L, 100 * L) for L in (4, 8, 16, 32)]
    cached = [_result(1, 0.5, 100), _result(2, 1.0, 200)]       # faster than the line
    fit = fit_memory_regime(cached + line, CacheSize(150, 3, "sysfs"))   # memory: > 300
    assert fit.intercept == pytest.approx(0.2) and fit.slope == pytest.approx(1.0)
    tilted = fit_latency([1, 2, 4, 8, 16, 32], [0.5, 1.0] + [0.2 + L for L in (4, 8, 16, 32)])
    assert tilted.intercept < 0 < fit.intercept
    with pytest.raises(ValueError, match="2 depths whose weights exceed 2 x the cache"):
        fit_memory_regime(cached + line, 1000)      # 3200 bytes: only L = 32 is > 2000


def test_round_intercepts_refit_each_round():
    # round 0 lies on 1 + L, round 1 on 3 + L, round 2 on 2 + L
    res = [_result(L, [1.0 + L, 3.0 + L, 2.0 + L], 1000 * L) for L in (4, 8, 16)]
    a = round_intercepts(res, 100)
    assert a.samples == pytest.approx((1.0, 3.0, 2.0)) and a.median == pytest.approx(2.0)
    with pytest.raises(ValueError, match="one measure_rounds call"):
        round_intercepts(res + [_result(32, [33.0], 32000)], 100)


# -- comparing under load ------------------------------------------------------------------
def test_paired_ratios_cancel_a_load_shared_by_the_round():
    a, b = Timing.of([2.0, 4.0, 6.0]), Timing.of([1.0, 2.0, 3.0])   # round 2 three times slower
    r = paired_ratios(a, b)
    assert r.samples == (2.0, 2.0, 2.0)
    assert versus_spread(r, 1.5) == "above" and versus_spread(r, 2.5) == "below"
    # unpaired, the ranges overlap: the medians alone would hide how clear the ratio is
    assert a.min < b.max
    assert versus_spread(Timing.of([0.9, 1.0, 1.1]), 1.0) == "within noise"
    # one slow round does not veto a ratio that the other rounds put far above the threshold
    assert versus_spread(Timing.of([2.0, 2.02, 1.98, 2.01, 0.9]), 1.0) == "above"
    assert versus_spread(Timing.of([2.0, 0.5, 1.2]), 1.0) == "within noise"
    with pytest.raises(ValueError, match="same number of rounds"):
        paired_ratios(a, Timing.of([1.0]))
    # a ratio differs from 1 only when its mean is beyond the margin, and separated from 1
    assert versus_one(Timing.of([1.06, 1.2, 1.1])) == "above"
    assert versus_one(Timing.of([1.003, 1.03, 1.1])) == "within noise"
    assert versus_one(Timing.of([0.9, 0.94, 0.92])) == "below"
    assert versus_one(Timing.of([1.003, 1.03, 1.1]), margin=0.0) == "above"


def test_roof_limit_judges_the_ridge_round_by_round():
    # peak 40 GFLOP/s: read rates of 10 GB/s put the ridge at 4 FLOPs per byte
    read = Timing.of([10.0, 10.5, 9.5, 10.2, 9.8])
    assert roof_limit(0.5, 40.0, read) == "memory-bound"
    assert roof_limit(20.0, 40.0, read) == "compute-bound"
    # one slow round (ridge 40) among ridges near 4 does not move a far-off intensity
    slow = Timing.of([10.0, 10.5, 9.5, 10.2, 1.0])
    assert roof_limit(0.5, 40.0, slow) == "memory-bound"
    # rounds on both sides of the intensity: within noise, never an error
    mixed = Timing.of([5.0, 20.0, 10.0])                 # ridges 8, 2, 4
    assert roof_limit(4.0, 40.0, mixed) == "within noise"
    with pytest.raises(ValueError, match="at least"):   # too few rounds to judge
        roof_limit(0.5, 40.0, Timing.of([10.0]))
    with pytest.raises(ValueError, match="at least 3"):
        versus_one(Timing.of([1.06, 1.2]))


def test_machine_busy_when_no_second_core_is_free():
    info = lambda load: MachineInfo("cpu", 1, "t", "3", load)  # noqa: E731
    assert machine_busy(info(1.0), cores=2) and not machine_busy(info(0.5), cores=2)
    assert not machine_busy(info(2.5), cores=8) and not machine_busy(info(None), cores=2)


def _family(ratios, L=(1, 8), memory=False):
    return DepthCost(L[0], L[1], Timing.of(ratios),
                     math.log(statistics.median(ratios)) / math.log(L[1] / L[0]), memory)


def test_c17_verdict_is_one_rule():
    cached = [_family([5.0, 5.5, 5.2]), _family([4.0, 4.2, 4.4])]
    strong_mem = _family([4.0, 4.1, 3.9], memory=True)           # k = 0.67 of 0.67..0.82
    weak_mem = _family([1.8, 1.9, 2.0], memory=True)             # k = 0.31 < 0.5 x 0.67
    assert (C17_MIN_RATIO, C17_CAVEAT_FACTOR) == (1.5, 0.5)
    v = c17_verdict(cached + [strong_mem])
    assert v.word == "reproduced" and v.cache_exponent == cached[1].exponent
    assert v.not_slower == v.under_ratio == v.memory_under_ratio == v.memory_flat == ()
    v = c17_verdict(cached + [weak_mem])
    assert v.word == "reproduced in part" and v.memory_flat == (weak_mem,)
    assert v.memory_flat[0].exponent == pytest.approx(0.31, abs=0.005)
    assert v.memory_under_ratio == ()                            # 1.8x and up: above 1.5x
    # a memory-bound family slower in every round, but one round under 1.5x and the mean
    # (2.83) under 3 standard errors above it: that part does not hold
    odd = _family([1.4, 3.5, 3.6], memory=True)
    v = c17_verdict(cached + [odd])
    assert v.word == "reproduced in part" and v.memory_under_ratio == (odd,)
    assert v.memory_flat == ()
    # ... a cache-resident one: not shown; and not clearly slower at all: not shown
    weak_cached = _family([1.4, 5.0, 5.1])
    v = c17_verdict([weak_cached, strong_mem])
    assert v.word == "not shown here" and v.under_ratio == (weak_cached,)
    flat_mem = _family([0.9, 1.8, 1.9], memory=True)
    v = c17_verdict(cached + [flat_mem])
    assert v.word == "not shown here" and v.not_slower == (flat_mem,)
    # one slow round no longer vetoes: five rounds whose mean is 3.7 standard errors above
    # 1.5x count as above it, though one round (1.4x) is under it
    v = c17_verdict([_family([1.4, 3.0, 3.05, 2.95, 3.02]), strong_mem])
    assert v.word == "reproduced" and v.under_ratio == ()
    # without a cache-resident family there is no exponent to weigh a memory-bound one by
    v = c17_verdict([weak_mem])
    assert v.word == "reproduced" and v.cache_exponent is None and v.memory_flat == ()
    # the exponent compares families over different depth ranges: 2x over L = 6..12 is k = 1
    assert _family([2.0] * 3, L=(6, 12)).exponent == pytest.approx(1.0)
    with pytest.raises(ValueError, match="at least one family"):
        c17_verdict([])


def test_depth_cost_pairs_the_ends_of_a_family_by_round():
    fam = [_result(1, [1.0, 2.0], 10), _result(4, [2.0, 4.0], 40), _result(8, [4.0, 8.0], 80)]
    cost = depth_cost(fam, 1000)
    assert (cost.shallow, cost.deep) == (1, 8) and cost.ratio.samples == (4.0, 4.0)
    assert cost.exponent == pytest.approx(2 / 3) and not cost.memory_bound
    assert depth_cost(fam, 1).memory_bound


# -- the roofline ---------------------------------------------------------------------------
def test_decode_flops_are_two_per_matrix_weight_and_grow_with_the_batch():
    c = ModelConfig.preset("gpt2-small")
    matrices = 12 * (4 * 768**2 + 2 * 768 * 3072) + 50257 * 768
    assert decode_flops(c) == 2 * matrices
    assert decode_flops(c, batch=4) == 8 * matrices
    # what decode_flops leaves out is small at the chapter's decode lengths (its docstring)
    assert attention_flop_share(512, 40) == pytest.approx(40 / (6 * 512))
    assert attention_flop_share(512, 40) < 0.014 and attention_flop_share(512, 320) < 0.11
    # 2 FLOPs per 4-byte weight, a little less as biases and norms are read too
    assert 0.49 < arithmetic_intensity(c) < 0.5
    assert arithmetic_intensity(c, 16) == pytest.approx(16 * arithmetic_intensity(c))
    assert decode_block_bytes(c) == 4 * count_params(c).per_block.total
    with pytest.raises(ValueError, match="batch"):
        decode_flops(c, batch=0)


def test_ridge_point_and_roof():
    assert ridge_point(100.0, 25.0) == pytest.approx(4.0)
    assert roof_gflops(0.5, 100.0, 25.0) == pytest.approx(12.5)   # left of the ridge
    assert roof_gflops(16.0, 100.0, 25.0) == pytest.approx(100.0)  # right of it
    with pytest.raises(ValueError, match="peak_gflops"):
        ridge_point(0.0, 25.0)


def test_peak_flops_is_a_positive_rate():
    assert 0.1 < peak_flops(n=128, repeats=2, threads=1) < 1e5   # GFLOP/s
    with pytest.raises(ValueError, match="n must"):
        peak_flops(n=8)


def test_the_bandwidth_convention_is_printed_with_every_bound():
    res = [_result(1, 1.0, 10**6)]
    assert BANDWIDTH_CONVENTION in format_table(res, bandwidth_gbs=20.0)
    assert "one core" in BANDWIDTH_CONVENTION and "once per token" in BANDWIDTH_CONVENTION
    assert "read per second" in BANDWIDTH_CONVENTION
    assert "one core" in COPY_CONVENTION and "read + write" in COPY_CONVENTION
    c = ModelConfig(n_layer=3, d_model=64, n_head=4, vocab_size=256, context=64)
    assert block_bound_ms(c, 20.0) == pytest.approx(decode_block_bytes(c) / 20e9 * 1e3)


# -- regimes of a family ------------------------------------------------------------------
FAMILY = [ModelConfig(n_layer=L, d_model=d, n_head=2, vocab_size=64, context=64)
          for L, d in ((1, 64), (2, 46), (4, 32), (8, 22))]


def test_block_scaling_tells_overhead_from_bandwidth():
    flat = block_scaling(FAMILY, [0.05 * c.n_layer for c in FAMILY])   # same ms per block
    assert flat.exponent == pytest.approx(0.0, abs=1e-9) and flat.regime == "overhead-bound"
    streams = block_scaling(FAMILY, [c.n_layer * decode_block_bytes(c) / 1e7 for c in FAMILY])
    assert streams.exponent == pytest.approx(1.0) and streams.regime == "bandwidth-bound"
    assert streams.bytes_per_block == tuple(decode_block_bytes(c) for c in FAMILY)
    assert 0 < OVERHEAD_EXPONENT < 1
    with pytest.raises(ValueError, match="same length"):
        block_scaling(FAMILY, [1.0])
    with pytest.raises(ValueError, match="> 0"):
        block_scaling(FAMILY, [1.0, 0.0, 1.0, 1.0])


# -- chapter 6's shapes ---------------------------------------------------------------------
def test_budget_sweep_shapes_read_chapter_6s_best_rates():
    from depthnotes.verdicts.ch6_budget import basin_grid

    _, basins, record = basin_grid()
    shapes = budget_sweep_shapes(min_context=100)
    # the same loss per shape as chapter 6's basins
    chosen = {s.label: s.summary.mean for b in basins.values() for s in b.shapes}
    assert [s.loss for s in shapes] == pytest.approx([chosen[a] for a in record.arms])
    assert len(shapes) == len(record.arms)
    final = record.final("eval_loss")
    for s, arm in zip(shapes, record.arms):
        info = record.arm(arm)["info"]
        assert (s.budget, s.config.n_layer, s.config.d_model) == (
            info["budget"], info["n_layer"], info["d_model"])
        trained = record.arm(arm)["model"]["context"]
        assert s.config.context == max(100, trained) and s.seeds == len(record.seeds)
        assert s.steps == record.arm(arm)["recipe"]["steps"]
        assert s.loss == pytest.approx(sum(final[arm]) / len(final[arm]))


def test_budget_sweep_shapes_average_the_seeds():
    data = json.loads(load_record("budget_basin").path.read_text())
    seed = data["config"]["seeds"][0]          # one seed of the record, then a second one
    data["runs"] = [r for r in data["runs"] if r["seed"] == seed]
    data["config"]["seeds"] = [seed, seed + 1]
    extra = []
    for r in data["runs"]:
        r2 = copy.deepcopy(r)
        r2["seed"], r2["final"]["eval_loss"] = seed + 1, round(r["final"]["eval_loss"] + 0.1, 5)
        extra.append(r2)
    data["runs"] += extra
    first = budget_sweep_shapes(Record.from_dict(data))[0]
    lo = data["runs"][0]["final"]["eval_loss"]
    assert first.seeds == 2 and first.loss_range == pytest.approx((lo, lo + 0.1))
    assert first.loss == pytest.approx(lo + 0.05)
    assert first.config.context == data["config"]["arms"][0]["model"]["context"]
    data["runs"][0]["final"]["eval_loss"] = None   # e.g. a run that stopped early
    with pytest.raises(ValueError, match="has no eval_loss for some seed"):
        budget_sweep_shapes(Record.from_dict(data))


# -- measuring ----------------------------------------------------------------------------
def test_measure_many_returns_one_result_per_model():
    models = [cfg(n_layer=1), Transformer(cfg(n_layer=3), seed=1)]
    res = measure_many(models, prompt_len=4, new_tokens=3, repeats=2, warmup=0, desc=None)
    assert [r.n_layer for r in res] == [1, 3]
    for r in res:
        assert len(r.decode.samples) == 2 and r.decode.median >= 0 and r.prefill.median > 0
        assert r.weight_bytes == decode_weight_bytes(cfg(n_layer=r.n_layer))
        assert r.machine.threads == torch.get_num_threads()
        assert r.machine.torch_version == torch.__version__
        d = r.as_dict()
        assert d["decode_ms"] == r.decode.median and "machine_cpu" in d
        json.dumps(d)  # plain data
    assert res[1].bound_ms(20.0) == pytest.approx(roofline_ms(cfg(n_layer=3), 20.0))
    table = format_table(res, bandwidth_gbs=20.0, head=[None, None])
    assert "bound ms" in table and "torch" in table
    assert f"{res[1].bound_ms(20.0):.2f}" in table.splitlines()[3]   # L=3's row: its bound


def test_measure_rounds_rebuilds_over_the_cap_and_probes_the_read_rate():
    """Configs over the resident cap are built afresh each round (same seed: same result
    shape); the read probe gives one rate per round."""
    r = measure_rounds([cfg(n_layer=1), cfg(n_layer=2)], prompt_len=3, new_tokens=2,
                       repeats=2, warmup=1, resident_cap=0, read_probe=2**20, desc=None)
    assert [x.n_layer for x in r.results] == [1, 2]
    assert all(len(x.decode.samples) == 2 for x in r.results)
    assert len(r.read_gbs.samples) == 2 and 0.01 < r.read_gbs.median < 10_000
    assert r.read_probe_bytes == 2**20
    assert measure_rounds([cfg()], prompt_len=3, new_tokens=2, repeats=1,
                          desc=None).read_gbs is None
    with pytest.raises(ValueError, match="read_probe"):
        measure_rounds([cfg()], read_probe=10, desc=None)


def test_measure_rounds_warms_up_with_a_prefill_and_one_step_then_times_whole_calls(
        monkeypatch):
    """A warm-up call runs the prefill and one decode step (the operations a timed call runs);
    each timed round decodes ``new_tokens`` steps after it."""
    model = Transformer(cfg(n_layer=1), seed=0)
    calls = []
    plain = model.generate
    monkeypatch.setattr(model, "generate", lambda p, n: calls.append(n) or plain(p, n))
    measure_rounds([model], prompt_len=3, new_tokens=4, repeats=2, warmup=2, desc=None)
    assert calls == [2, 2, 5, 5]


def test_measure_latency_with_threads_and_batch():
    r = measure_latency(cfg(), prompt_len=3, new_tokens=2, repeats=1, warmup=0, batch=2,
                        threads=1, desc=None)
    assert r.batch == 2 and r.machine.threads == 1


def test_measure_rejects_bad_input():
    with pytest.raises(ValueError, match="context=64"):
        measure_latency(cfg(), prompt_len=40, new_tokens=30, repeats=1, desc=None)
    with pytest.raises(ValueError, match="repeats"):
        measure_latency(cfg(), repeats=0)
    with pytest.raises(TypeError, match="new_tokens"):
        measure_latency(cfg(), new_tokens=2.5)
    with pytest.raises(TypeError, match="Transformer or ModelConfig"):
        measure_many([{"n_layer": 2}])
    with pytest.raises(ValueError, match="empty"):
        measure_many([])


def test_head_latency_is_a_timing():
    t = head_latency(cfg(vocab_size=1000), calls=3, repeats=2)
    assert isinstance(t, Timing) and t.median > 0 and len(t.samples) == 2


def test_deeper_is_slower_per_token():
    """C16 (smoke test): at a fixed width, 24 blocks take longer per token than 1. Each
    model's fastest round is compared: a busy machine only adds time, so the minima are what
    a quiet one would show (24 times the work leaves a wide margin)."""
    shallow, deep = measure_many([cfg(n_layer=1, d_model=64), cfg(n_layer=24, d_model=64)],
                                 prompt_len=4, new_tokens=8, repeats=3, threads=1, desc=None)
    assert deep.decode.min > shallow.decode.min


# -- decoding ------------------------------------------------------------------------------
def test_generate_picks_the_argmax_of_the_full_forward():
    model = Transformer(cfg(), seed=2).eval()
    prompt = torch.randint(0, 64, (2, 9), generator=torch.Generator().manual_seed(3))
    with torch.no_grad():
        logits, _ = model(prompt)
    first = model.generate(prompt, 1)[:, -1]
    assert torch.equal(first, logits[:, -1].argmax(-1))


def test_the_seeded_init_draws_the_token_table_first():
    a, b = Transformer(cfg(), seed=5), Transformer(cfg(), seed=5)
    assert torch.equal(a.wte.weight, b.wte.weight)
    g = torch.Generator().manual_seed(5)
    expected = torch.empty(64, 32).normal_(0.0, 0.02, generator=g)  # wte is drawn first
    assert torch.equal(a.wte.weight, expected)


def test_decoding_with_two_threads_matches_one_thread():
    """The thread split changes only the order weights are read: the same greedy tokens."""
    model = Transformer(cfg(d_model=512, n_head=8, vocab_size=2048, n_layer=2), seed=0).eval()
    prompt = torch.randint(0, 2048, (1, 5), generator=torch.Generator().manual_seed(1))
    with num_threads(1):
        one = model.generate(prompt, 10)
    with num_threads(2):
        two = model.generate(prompt, 10)
    assert torch.equal(one, two)


def test_a_looped_model_is_timed_once_per_step_and_reads_its_block_per_application():
    from depthnotes.bench.latency import decode_weight_bytes, head_latency, measure_latency

    looped = ModelConfig(n_layer=4, d_model=32, n_head=2, vocab_size=50, context=32,
                         n_unique_blocks=1)
    distinct = looped.replace(n_unique_blocks=None)
    assert decode_weight_bytes(looped) == decode_weight_bytes(distinct)
    r = measure_latency(looped, new_tokens=3, prompt_len=2, repeats=1)
    assert r.n_layer == 4 and r.decode.median > 0
    assert head_latency(looped, calls=2, repeats=1).median > 0


# -- C16's rule -------------------------------------------------------------------------------
def _c16(times_by_depth: dict, head_ms: float = 0.2):
    big = 10 ** 9                     # every shape memory-resident for a 1 MB cache
    runs = [_result(L, ms, big) for L, ms in times_by_depth.items()]
    return ch7_latency.c16_verdict(runs, 10 ** 6, latency.Timing.of([head_ms, head_ms + 0.1]))


def test_c16_reads_each_depths_fastest_round_so_one_busy_round_does_not_bend_the_line():
    line = _c16({6: [1.0 + 6, 30.0, 7.2], 12: [1.0 + 12, 13.1, 13.2], 24: [25.0, 26.0, 99.0]})
    assert line.ms == (7.0, 13.0, 25.0)
    assert line.interval_slopes == pytest.approx((1.0, 1.0))
    assert line.word() == ch7_latency.REPRODUCED


def test_c16_is_not_shown_when_the_interval_slopes_disagree_although_r2_is_high():
    line = _c16({6: [7.0], 12: [13.0], 24: [31.0]})        # slopes 1.0 then 1.5
    assert line.fit.r2 > 0.98 and line.slope_spread == pytest.approx(1.5)
    assert line.word() == ch7_latency.NOT_SHOWN


def test_c16_is_in_part_when_the_intercept_is_below_the_heads_own_time():
    line = _c16({6: [4.0, 4.1, 4.05], 12: [10.0, 10.1, 10.05], 24: [22.0, 22.1, 22.05]},
                head_ms=0.5)                                         # a = -2 ms, every round
    assert line.straight and not line.intercept_physical
    assert line.word() == ch7_latency.IN_PART


def test_c16_reads_the_intercept_round_by_round_against_the_heads_time():
    """A point intercept a little under the head's time is not clearly under it when the
    rounds' intercepts straddle it; it is when every round's is under it."""
    straddle = _c16({6: [6.9, 7.3, 7.0], 12: [12.9, 13.1, 13.0], 24: [24.9, 25.0, 25.1]},
                    head_ms=0.95)     # fastest rounds: a = 0.9; by round 0.9, 1.37, 1.0
    assert line_intercept_below(straddle) and straddle.intercept_physical
    assert straddle.word() == ch7_latency.REPRODUCED
    under = _c16({6: [6.0, 6.1, 6.05], 12: [12.0, 12.1, 12.05], 24: [24.0, 24.1, 24.05]},
                 head_ms=0.5)         # every round's intercept is 0: clearly under 0.5
    assert not under.intercept_physical and under.word() == ch7_latency.IN_PART


def line_intercept_below(line) -> bool:
    return line.fit.intercept < line.head_ms


def test_c16_needs_three_depths_to_test_straightness():
    assert _c16({6: [7.0], 12: [13.0]}).word() == ch7_latency.NOT_TESTABLE


def test_c16_said_names_the_clause_that_decided_the_word():
    full = _c16({6: [7.0, 7.1, 7.05], 12: [13.0, 13.1, 13.05], 24: [25.0, 25.1, 25.05]})
    part = _c16({6: [4.0, 4.1, 4.05], 12: [10.0, 10.1, 10.05], 24: [22.0, 22.1, 22.05]},
                head_ms=0.5)
    two = _c16({6: [7.0], 12: [13.0]})
    assert full.said().endswith("not clearly below the head's own time, reproduced")
    assert part.said().endswith("(linear over the measured depths only), reproduced in part")
    assert two.said() == two.word() == ch7_latency.NOT_TESTABLE


def test_c16_head_part_is_a_fixed_cost_per_token_on_constructed_lines():
    from depthnotes.core.fitting import LinearFit as Line
    from depthnotes.verdicts.ch7_latency import (HEAD_INTERCEPT_SHARE, HEAD_SLOPE_FACTOR,
                                                 head_word)

    yes, no = ch7_latency.REPRODUCED, ch7_latency.NOT_SHOWN
    assert (HEAD_INTERCEPT_SHARE, HEAD_SLOPE_FACTOR) == (0.5, 1.5)
    small, blocks = Line(1.3, 0.25, 1.0), Line(1.3, 0.1, 0.99)     # (slope, intercept, R^2)

    def word(big, fit_blocks=blocks, head=7.81, fit_small=small):
        return head_word(fit_small, big, fit_blocks, head)

    # chapter 7's own run: 0.25 + 1.3 L, then 7.95 + 1.304 L with a 7.81 ms head
    assert word(Line(1.304, 7.95, 1.0)) == yes
    # the intercept rises by no more than half the head: the head is not a fixed cost
    assert word(Line(1.304, 4.0, 1.0)) == no
    # the slope per block moves by 1.5x or more (either way)
    assert word(Line(1.95, 7.95, 1.0)) == word(Line(1.3 / 1.5, 7.95, 1.0)) == no
    assert word(Line(1.9, 7.95, 1.0)) == yes
    # the blocks alone do not lie on a line (R^2 at the bar is not above it)
    assert word(Line(1.304, 7.95, 1.0), fit_blocks=Line(1.3, 0.1, 0.9)) == no
    # a busy machine's flat small-vocabulary line gives a word, not an error
    assert word(Line(1.3, 9.0, 1.0), fit_small=Line(0.0, 2.0, 0.1)) == no
    with pytest.raises(ValueError, match="head_ms"):
        word(small, head=-1.0)


def test_kv_cache_bytes_count_a_key_and_a_value_per_block_and_position():
    cfg = ModelConfig(n_layer=12, d_model=768, n_head=12)
    assert latency.decode_kv_bytes(cfg, 1024) == 2 * 12 * 1024 * 768 * 4      # 75.5 MB
    assert latency.decode_kv_bytes(cfg, 0) == 0
    # equal parameters (12 L d^2 fixed): 4x the depth, half the width, twice the cache
    deep = ModelConfig(n_layer=48, d_model=384, n_head=6)
    assert latency.decode_kv_bytes(deep, 100) == 2 * latency.decode_kv_bytes(cfg, 100)
    with pytest.raises(ValueError, match="positions"):
        latency.decode_kv_bytes(cfg, -1)


def test_machine_probes_work_without_sysconf_or_a_load_average(monkeypatch):
    """Windows has neither os.sysconf_names nor os.getloadavg: the probes fall back."""
    from depthnotes.bench import latency
    from depthnotes.training import runtime

    monkeypatch.delattr(latency.os, "sysconf_names", raising=False)
    assert latency._cache_from_sysconf() is None
    monkeypatch.delattr(runtime.os, "getloadavg", raising=False)
    info = runtime.machine_info()
    assert info.load_average is None and info.load_text == "load average unknown"
    assert not latency.machine_busy(info)
    assert runtime.MachineInfo("x", 1, "2", "3.11", 0.74).load_text == "load average 0.7"


def test_the_decode_model_is_bytes_at_the_read_rate_plus_dispatch_per_block_and_token():
    """``modelled_ms_per_token`` (chapter 7's explorer): each of its three parts moves it."""
    c = ModelConfig(n_layer=8, d_model=512, n_head=8, vocab_size=256, context=64)
    stream = decode_weight_bytes(c) / (20.0 * 1e9) * 1e3
    t = latency.modelled_ms_per_token(c, 20.0, 0.4, 0.2)
    assert t == pytest.approx(stream + 8 * 0.4 + 0.2)
    assert latency.modelled_ms_per_token(c, 40.0, 0.4, 0.2) == pytest.approx(
        stream / 2 + 8 * 0.4 + 0.2)
    # eight more blocks: their bytes streamed and their dispatch, nothing else
    assert latency.modelled_ms_per_token(c.replace(n_layer=16), 20.0, 0.4, 0.2) - t == \
        pytest.approx(8 * (block_bound_ms(c, 20.0) + 0.4))
    assert latency.modelled_ms_per_token(c, 20.0, 0.0, 0.0) == pytest.approx(
        roofline_ms(c, 20.0))
    # measured terms below zero (a busy machine's fit) are taken as they are, not refused
    assert latency.modelled_ms_per_token(c, 20.0, -0.1, -0.2) == pytest.approx(
        stream - 8 * 0.1 - 0.2)
    with pytest.raises(ValueError, match="dispatch_ms"):
        latency.modelled_ms_per_token(c, 20.0, float("nan"), 0.2)
    with pytest.raises(ValueError, match="bandwidth_gbs"):
        latency.modelled_ms_per_token(c, 0.0, 0.1, 0.2)
