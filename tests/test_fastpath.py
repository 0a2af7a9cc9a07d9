"""The speed path: the split product runs when its rule says so, and equals the plain one."""

import pytest
import torch

from depthnotes import ModelConfig, Transformer
from depthnotes.core import fastpath


@pytest.fixture
def threads():
    """Set the thread count for one test; the session's count comes back afterwards."""
    before = torch.get_num_threads()
    yield torch.set_num_threads
    torch.set_num_threads(before)


@pytest.fixture
def bmm_calls(monkeypatch):
    """Records the shapes of every ``torch.bmm`` call (the split's one batched product)."""
    calls = []
    real = torch.bmm

    def spy(a, b):
        calls.append((tuple(a.shape), tuple(b.shape)))
        return real(a, b)

    monkeypatch.setattr(torch, "bmm", spy)
    return calls


@pytest.mark.parametrize("rows", [1, 3])
def test_split_runs_for_a_decode_step_and_equals_the_plain_product(threads, bmm_calls, rows):
    threads(2)
    g = torch.Generator().manual_seed(0)
    x, w = torch.randn(rows, 1, 512, generator=g), torch.randn(512, 384, generator=g)
    with torch.no_grad(), fastpath.decoding():
        assert fastpath.takes_split(x, w)
        y = fastpath.matmul(x, w)
    assert bmm_calls == [((2, rows, 256), (2, 256, 384))]      # two blocks of 256 rows of w
    assert y.shape == (rows, 1, 384)
    assert torch.allclose(y, x @ w, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("case", ["one thread", "gradient", "many rows", "small matrix",
                                  "odd rows of w"])
def test_plain_product_everywhere_else_bit_for_bit(threads, bmm_calls, case):
    threads(1 if case == "one thread" else 2)
    g = torch.Generator().manual_seed(1)
    k_in = 511 if case == "odd rows of w" else 512
    k_out = 64 if case == "small matrix" else 384
    x = torch.randn(8 if case == "many rows" else 1, k_in, generator=g)
    w = torch.randn(k_in, k_out, generator=g)
    with torch.set_grad_enabled(case == "gradient"), fastpath.decoding():
        assert not fastpath.takes_split(x, w)
        assert torch.equal(fastpath.matmul(x, w), x @ w)
    assert bmm_calls == []


def test_a_model_decodes_through_the_split_and_picks_the_same_tokens(threads, bmm_calls):
    """At d = 256, W_QKV and the FFN's two matrices have >= 128k weights (W_O, 64k, does not):
    with two threads each decode step splits those three per block, and greedy decoding picks
    the tokens one thread picks."""
    cfg = ModelConfig(n_layer=2, d_model=256, n_head=4, vocab_size=64, context=32)
    model = Transformer(cfg, seed=0).eval()
    prompt = torch.randint(0, 64, (1, 5), generator=torch.Generator().manual_seed(2))
    threads(1)
    one = model.generate(prompt, 6)
    assert bmm_calls == []
    threads(2)
    two = model.generate(prompt, 6)
    assert len(bmm_calls) == 5 * 3 * cfg.n_layer                  # 5 decode steps after prefill
    assert torch.equal(one, two)


def test_outside_generation_the_split_is_never_taken(threads, bmm_calls):
    """A decode-shaped product outside ``decoding()`` (training, probes, a plain forward pass)
    takes ``x @ w``, and the model's own forward pass never enters ``decoding()``."""
    threads(2)
    g = torch.Generator().manual_seed(3)
    x, w = torch.randn(1, 1, 512, generator=g), torch.randn(512, 384, generator=g)
    with torch.no_grad():
        assert not fastpath.takes_split(x, w)
        assert torch.equal(fastpath.matmul(x, w), x @ w)
    cfg = ModelConfig(n_layer=2, d_model=256, n_head=4, vocab_size=64, context=32)
    model = Transformer(cfg, seed=0).eval()
    with torch.no_grad():
        model(torch.zeros(1, 1, dtype=torch.long))          # one row, 128k-weight matrices
    assert bmm_calls == []
    assert not fastpath.active()
