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


# -- chapters 1 and 2: the claims' words from exact counts ----------------------------------
def test_c1_word_needs_a_growing_share_above_the_bar_at_gpt2_width():
    from depthnotes.verdicts.ch1_params import C1_SHARE, block_share_word
    from depthnotes.verdicts.evidence import CONTRADICTED, REPRODUCED

    widths = [16, 768, 1024]
    assert C1_SHARE == 0.998
    assert block_share_word(widths, [0.937, 0.9986, 0.999]) == REPRODUCED
    assert block_share_word(widths, [0.937, 0.997, 0.999]) == CONTRADICTED   # under the bar
    assert block_share_word(widths, [0.937, 0.9990, 0.9989]) == CONTRADICTED  # falls
    with pytest.raises(ValueError, match="768"):
        block_share_word([16, 32], [0.9, 0.95])
    with pytest.raises(ValueError, match="increase"):
        block_share_word([768, 16], [0.9, 0.95])


def test_c2_word_from_the_slopes_and_the_approximation():
    from depthnotes.verdicts.ch1_params import scaling_word
    from depthnotes.verdicts.evidence import CONTRADICTED, REPRODUCED

    assert scaling_word([0.9998, 0.995], [1.994, 1.99], 0.02 - 1e-9) == REPRODUCED
    assert scaling_word([1.02], [2.0], 0.0) == CONTRADICTED           # not linear in L
    assert scaling_word([1.0], [1.97], 0.0) == CONTRADICTED           # not quadratic in d
    assert scaling_word([1.0], [2.0], 0.02) == CONTRADICTED           # 12 L d^2 too far
    with pytest.raises(ValueError, match="slope"):
        scaling_word([], [2.0], 0.0)


def test_c3_and_c4_words_on_gpt2_small_and_on_counts_that_miss():
    from depthnotes.verdicts.ch2_gpt2 import block_count_word, doubling_word
    from depthnotes.verdicts.evidence import CONTRADICTED, REPRODUCED

    small = ModelConfig.preset("gpt2-small")
    pc = count_params(small)
    assert block_count_word(pc.per_block.total, 768, pc.non_embedding) == REPRODUCED
    assert block_count_word(pc.per_block.total, 768, 90_000_000) == CONTRADICTED
    assert block_count_word(7_200_000, 768, pc.non_embedding) == CONTRADICTED
    base = pc.non_embedding
    deep = count_params(small.replace(n_layer=24)).non_embedding
    wide = count_params(small.replace(d_model=1536)).non_embedding
    assert doubling_word(base, deep, wide) == REPRODUCED
    assert doubling_word(base, deep + 10 ** 6, wide) == CONTRADICTED   # not twice
    assert doubling_word(base, deep, 3 * base) == CONTRADICTED         # not four times
    with pytest.raises(TypeError):
        doubling_word(base, float(deep), wide)
