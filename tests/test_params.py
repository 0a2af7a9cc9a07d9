"""count_params is exact: it equals sum(p.numel()) of the built model (claims C1-C4)."""

import itertools

import pytest
import torch

from depthnotes import GPT2_FAMILY, ModelConfig, Transformer, count_params
from depthnotes.core.params import approx_non_embedding


def numel(cfg: ModelConfig) -> int:
    with torch.device("meta"):  # shapes only: GPT-2 XL without allocating 6 GB
        model = Transformer(cfg)
    return sum(p.numel() for p in model.parameters())


GRID = [
    ModelConfig(n_layer=L, d_model=d, n_head=h, norm=norm, bias=bias, tie_embeddings=tie,
                init="deepnorm" if norm == "deepnorm" else "gpt2", vocab_size=97, context=33)
    for (L, d, h), norm, bias, tie in itertools.product(
        [(1, 8, 1), (3, 32, 4), (5, 48, 6)], ["pre", "post", "deepnorm"], [True, False],
        [True, False])
]


@pytest.mark.parametrize("cfg", GRID, ids=lambda c: f"L{c.n_layer}-d{c.d_model}-{c.norm}-"
                         f"bias{int(c.bias)}-tie{int(c.tie_embeddings)}")
def test_count_equals_numel_on_a_grid(cfg):
    assert count_params(cfg).total == numel(cfg)


@pytest.mark.parametrize("name", list(GPT2_FAMILY) + ["tiny", "mini", "deepnet-thin"])
@pytest.mark.parametrize("tie", [True, False])
def test_count_equals_numel_for_presets(name, tie):
    cfg = ModelConfig.preset(name, tie_embeddings=tie)
    assert count_params(cfg).total == numel(cfg)


def test_odd_d_ff_is_counted():
    cfg = ModelConfig(n_layer=2, d_model=64, n_head=4, d_ff=100)
    assert count_params(cfg).total == numel(cfg)


def test_gpt2_small_known_numbers():
    """C3: GPT-2 small, tied embeddings: 124,439,808 parameters."""
    pc = count_params(ModelConfig.preset("gpt2-small"))
    assert pc.total == 124_439_808
    assert pc.per_block.total == 7_087_872
    assert pc.per_block.weights == 12 * 768 ** 2 == 7_077_888
    assert pc.non_embedding == 85_056_000          # 12 blocks + final LayerNorm
    assert pc.token_embedding == 50257 * 768
    assert pc.position_embedding == 1024 * 768


def test_gpt2_family_totals():
    totals = {n: count_params(ModelConfig.preset(n)).total for n in GPT2_FAMILY}
    assert totals == {"gpt2-small": 124_439_808, "gpt2-medium": 354_823_168,
                      "gpt2-large": 774_030_080, "gpt2-xl": 1_557_611_200}


def test_doubling_depth_vs_width():
    """C4: 2x depth doubles the block weights; 2x width quadruples them."""
    base = ModelConfig.preset("gpt2-small")
    w = lambda c: c.n_layer * count_params(c).per_block.weights
    assert w(base.replace(n_layer=24)) == 2 * w(base)
    assert w(base.replace(d_model=1536, n_head=12)) == 4 * w(base)


def test_approximation_share_tends_to_one():
    """C1: the 12 d^2 share of a block grows toward 1 with d."""
    shares = [count_params(ModelConfig(n_layer=1, d_model=d, n_head=1)).per_block.weights
              / count_params(ModelConfig(n_layer=1, d_model=d, n_head=1)).per_block.total
              for d in (16, 64, 256, 1024)]
    assert all(a < b for a, b in zip(shares, shares[1:]))
    assert shares[-1] > 0.998  # 12d^2 / (12d^2 + 13d) at d = 1024
    assert approx_non_embedding(12, 768) == 12 * 12 * 768 ** 2


def test_count_params_rejects_non_config():
    with pytest.raises(TypeError, match="ModelConfig"):
        count_params({"n_layer": 2})
