"""The side-by-side benchmark script runs (a smoke test at a tiny shape), and its check that
ours and HF's GPT-2 compute the same function holds (only where transformers is installed: it
is an optional extra, not a dependency of the book)."""

import importlib.util
import json
from pathlib import Path

import pytest
import torch

from depthnotes import ModelConfig, Transformer

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "compare_decode.py"


def load_script():
    spec = importlib.util.spec_from_file_location("compare_decode", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_benchmark_runs_at_a_tiny_shape(tmp_path, capsys):
    bench = load_script()
    out = tmp_path / "result.json"
    before = torch.get_num_threads()
    try:
        assert bench.main(["--preset", "tiny", "--train-preset", "tiny", "--threads", "1",
                           "--rounds", "1", "--new-tokens", "2", "--no-hf", "--train-batch", "2",
                           "--train-seq", "8", "--json", str(out)]) == 0
    finally:
        torch.set_num_threads(before)
    result = json.loads(out.read_text())
    assert set(result["decode_ms"]) == {"ours"}
    assert set(result["train_ms"]) == {"ours", "ours, tanh GELU"}
    assert len(result["bandwidth_gbs"]) == len(result["bound_ms"]) == 1
    assert result["bound_ms"][0] > 0
    assert "ours / bound per round" in capsys.readouterr().out


@pytest.mark.parametrize("activation", ["gelu_tanh", "gelu"])
def test_ours_and_hf_gpt2_compute_the_same_function(activation):
    transformers = pytest.importorskip("transformers")
    bench = load_script()
    cfg = ModelConfig(n_layer=2, d_model=64, n_head=4, vocab_size=97, context=32,
                      activation=activation)
    hf = transformers.GPT2LMHeadModel(transformers.GPT2Config(
        n_layer=2, n_embd=64, n_head=4, vocab_size=97, n_positions=32,
        activation_function="gelu_new" if activation == "gelu_tanh" else "gelu")).eval()
    prompt = torch.randint(0, 97, (1, 9), generator=torch.Generator().manual_seed(0))
    diff, same = bench.same_function(Transformer(cfg, seed=1).eval(), hf, prompt)
    assert same and diff < 1e-4
    # ...and the check notices a different activation (the two GELUs differ by < 1e-3)
    other = cfg.replace(activation="gelu" if activation == "gelu_tanh" else "gelu_tanh")
    with torch.no_grad():
        for p in hf.parameters():
            p.mul_(20)                          # large weights: the GELUs' gap shows
    diff, _ = bench.same_function(Transformer(other, seed=1).eval(), hf, prompt)
    assert diff > 1e-4


def test_ours_with_the_split_off_decodes_without_it(monkeypatch):
    """The benchmark's "ours, no split" contender really takes the plain product (it switches
    the rule off for the call), and "ours" really splits, at two threads and a d = 256 shape."""
    bench = load_script()
    calls = []
    real = torch.bmm
    monkeypatch.setattr(torch, "bmm", lambda a, b: calls.append(1) or real(a, b))
    before = torch.get_num_threads()
    cfg = ModelConfig(n_layer=1, d_model=256, n_head=4, vocab_size=64, context=16)
    model = Transformer(cfg, seed=0).eval()
    prompt = torch.zeros(1, 2, dtype=torch.long)
    try:
        torch.set_num_threads(2)
        bench.ours_decoder(model, prompt, split=False)[0](3)
        assert calls == []
        bench.ours_decoder(model, prompt, split=True)[0](3)
        assert calls
    finally:
        torch.set_num_threads(before)
