"""The latency bench (depthnotes.latency) and the model's decode layout.

Its command line (``python -m depthnotes latency``) is tested in test_cli.py, the machine
information and thread control (``depthnotes.runtime``) in test_runtime.py.
"""

import json

import pytest
import torch

from depthnotes import ModelConfig, Transformer, count_params
from depthnotes.fitting import LinearFit
from depthnotes.latency import (Timing, decode_weight_bytes, fit_latency, format_table,
                                head_latency, measure_latency, measure_many, memory_bandwidth,
                                roofline_ms)
from depthnotes.runtime import num_threads

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
    """C16 (smoke test): at a fixed width, 24 blocks take longer per token than 1."""
    shallow, deep = measure_many([cfg(n_layer=1, d_model=64), cfg(n_layer=24, d_model=64)],
                                 prompt_len=4, new_tokens=8, repeats=3, threads=1, desc=None)
    assert deep.decode.median > shallow.decode.median


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
