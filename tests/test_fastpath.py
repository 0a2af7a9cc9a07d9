"""The speed path: the split product runs when its rule says so, and equals the plain one."""

import pytest
import torch

from depthnotes import ModelConfig, Transformer
from depthnotes.core import fastpath
from depthnotes.core.model import Conv1D


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
    with torch.no_grad():
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
    with torch.set_grad_enabled(case == "gradient"):
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
    """Training, the probes and a plain forward pass run ``Conv1D.forward``, which never looks
    at the speed path: a decode-shaped forward pass outside ``generate`` takes ``x @ w`` even
    where the rule would split, and leaving ``decoding`` puts every linear map's plain forward
    back (also when the block raises)."""
    threads(2)
    cfg = ModelConfig(n_layer=2, d_model=256, n_head=4, vocab_size=64, context=32)
    model = Transformer(cfg, seed=0).eval()
    convs = [m for m in model.modules() if isinstance(m, Conv1D)]
    x = torch.zeros(1, 1, dtype=torch.long)
    with torch.no_grad():
        assert fastpath.takes_split(torch.zeros(1, 256), model.h[0].mlp.c_fc.weight)
        model(x)                                      # one row, 128k-weight matrices
    assert bmm_calls == []
    model.generate(x, 2)
    assert bmm_calls != []
    with pytest.raises(RuntimeError, match="mid-generation"):
        with fastpath.decoding(model):
            raise RuntimeError("mid-generation")
    assert all("forward" not in m.__dict__ for m in convs)
    bmm_calls.clear()
    with torch.no_grad():
        model(x)
    assert bmm_calls == []


def test_decoding_swaps_the_forward_for_its_block_only_and_nests(threads):
    """``decoding(model)`` gives the model's linear maps their ``decode_forward`` inside the
    block (and only that model's); a nested block leaves the swap to the outer one."""
    cfg = ModelConfig(n_layer=1, d_model=32, n_head=2, vocab_size=16, context=8)
    model, other = Transformer(cfg, seed=0), Transformer(cfg, seed=0)
    conv = model.h[0].attn.c_attn
    with fastpath.decoding(model):
        assert conv.forward == conv.decode_forward
        with fastpath.decoding(model):
            pass
        assert conv.forward == conv.decode_forward
        assert "forward" not in other.h[0].attn.c_attn.__dict__
    assert "forward" not in conv.__dict__ and conv.forward == Conv1D.forward.__get__(conv)


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("rows", [1, 8])
def test_decode_forward_equals_forward_bit_for_bit_where_it_does_not_split(threads, rows, bias):
    """Prefill (many rows) and one-thread decoding: ``decode_forward`` is ``forward``."""
    g = torch.Generator().manual_seed(4)
    conv = Conv1D(512, 384, bias)
    with torch.no_grad():
        conv.weight.copy_(torch.randn(512, 384, generator=g))
        if bias:
            conv.bias.copy_(torch.randn(384, generator=g))
    x = torch.randn(rows, 1, 512, generator=g)
    threads(1 if rows == 1 else 2)
    with torch.no_grad():
        assert not fastpath.takes_split(x, conv.weight)
        assert torch.equal(conv.decode_forward(x), conv(x))
