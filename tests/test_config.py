"""ModelConfig: defaults, presets, and a clear error for every bad value."""

import math

import pytest

from depthnotes import PRESETS, ModelConfig


def test_defaults_and_derived_fields():
    cfg = ModelConfig(n_layer=12, d_model=768, n_head=12)
    assert cfg.d_ff == 4 * 768
    assert cfg.head_dim == 64
    assert cfg.aspect_ratio == 64
    assert cfg.branch_multiplier == 1.0
    assert ModelConfig(n_layer=8, d_model=64, n_head=4,
                       branch_scale="1/sqrt(2L)").branch_multiplier == pytest.approx(1 / math.sqrt(16))


def test_replace_revalidates_and_d_ff_follows_d_model():
    cfg = ModelConfig(n_layer=2, d_model=64, n_head=4)
    assert cfg.replace(d_model=128).d_ff == 512
    assert cfg.replace(d_model=128, d_ff=100).d_ff == 100
    assert ModelConfig(n_layer=2, d_model=64, n_head=4, d_ff=100).replace(d_model=128).d_ff == 100
    with pytest.raises(ValueError, match="n_layer"):
        cfg.replace(n_layer=0)


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_every_preset_builds(name):
    assert ModelConfig.preset(name).n_layer >= 1


def test_unknown_preset_lists_the_known_ones():
    with pytest.raises(ValueError, match="gpt2-small"):
        ModelConfig.preset("gpt2-smal")


BASE = dict(n_layer=2, d_model=64, n_head=4)


@pytest.mark.parametrize("change, error, field", [
    (dict(n_layer=0), ValueError, "n_layer"),
    (dict(n_layer=-3), ValueError, "n_layer"),
    (dict(n_layer=2.0), TypeError, "n_layer"),
    (dict(n_layer=True), TypeError, "n_layer"),
    (dict(d_model=0), ValueError, "d_model"),
    (dict(d_model="64"), TypeError, "d_model"),
    (dict(n_head=0), ValueError, "n_head"),
    (dict(n_head=5), ValueError, "divisible by n_head"),
    (dict(d_ff=0), ValueError, "d_ff"),
    (dict(vocab_size=-1), ValueError, "vocab_size"),
    (dict(context=0), ValueError, "context"),
    (dict(bias=1), TypeError, "bias"),
    (dict(tie_embeddings="yes"), TypeError, "tie_embeddings"),
    (dict(norm="layer"), ValueError, "norm must be one of"),
    (dict(init="uniform"), ValueError, "init must be one of"),
    (dict(branch_scale=0.0), ValueError, "branch_scale"),
    (dict(branch_scale=-1.0), ValueError, "branch_scale"),
    (dict(branch_scale=float("nan")), ValueError, "branch_scale"),
    (dict(branch_scale="1/sqrt(3L)"), ValueError, "branch_scale"),
    (dict(branch_scale=None), TypeError, "branch_scale"),
    (dict(ln_eps=0.0), ValueError, "ln_eps"),
    (dict(ln_eps="small"), TypeError, "ln_eps"),
    (dict(activation="relu"), ValueError, "activation must be one of"),
    # contradictory combinations
    (dict(norm="pre", init="deepnorm"), ValueError, "init='deepnorm'"),
    (dict(norm="deepnorm", init="deepnorm", branch_scale=0.5), ValueError, "branch_scale"),
    (dict(norm="deepnorm", branch_scale="1/sqrt(2L)"), ValueError, "branch_scale"),
])
def test_bad_values_name_the_field(change, error, field):
    with pytest.raises(error, match=field.replace("(", r"\(").replace(")", r"\)")):
        ModelConfig(**{**BASE, **change})


def test_error_for_heads_lists_every_allowed_value():
    with pytest.raises(ValueError, match=r"allowed n_head values .*: \[1, 2, 4, 8, 16, 32, 64\]"):
        ModelConfig(n_layer=2, d_model=64, n_head=3)
    # all of them, also past 64: 768's divisors go up to 768
    with pytest.raises(ValueError, match=r"\[1, 2, 3, 4, 6, 8, .*, 128, 192, 256, 384, 768\]"):
        ModelConfig(n_layer=2, d_model=768, n_head=7)


def test_deepnorm_init_error_points_at_xavier_for_the_post_ln_baseline():
    with pytest.raises(ValueError, match="init='xavier'"):
        ModelConfig(**BASE, norm="pre", init="deepnorm")
    # beta without alpha (chapter 5's ablation): post-norm with DeepNet's init
    beta_only = ModelConfig(**BASE, norm="post", init="deepnorm")
    assert beta_only.residual_alpha == 1.0 and beta_only.init_beta < 1.0
    for norm in ("post", "pre", "deepnorm"):          # xavier is valid with every placement
        assert ModelConfig(**BASE, norm=norm, init="xavier").init_beta == 1.0


def test_an_unset_init_follows_the_norm_and_the_branch_rule():
    """DeepNorm gets DeepNet's init (alpha with its beta), a depth rule the depth-free init
    (not GPT-2's, which would scale by depth again), anything else GPT-2's; an explicit init
    is kept, and a changed norm carries a default init along."""
    assert ModelConfig(**BASE, norm="deepnorm").init == "deepnorm"
    assert ModelConfig(**BASE, norm="deepnorm").init_beta < 1.0
    assert ModelConfig(**BASE, branch_scale="1/sqrt(2L)").init == "normal"
    assert ModelConfig(**BASE, norm="post").init == "gpt2"
    assert ModelConfig(**BASE, norm="deepnorm", init="xavier").init == "xavier"
    assert ModelConfig(**BASE, norm="post").replace(norm="deepnorm").init == "deepnorm"
    assert ModelConfig(**BASE).replace(branch_scale="1/L").init == "normal"
    kept = ModelConfig(**BASE, init="xavier").replace(norm="deepnorm")
    assert kept.init == "xavier"
    assert ModelConfig(**BASE, norm="deepnorm") == ModelConfig(**BASE, norm="deepnorm",
                                                              init="deepnorm")


def test_depth_constants_come_from_the_config():
    """alpha, beta and s: one formula each, read off the config."""
    deep = ModelConfig(n_layer=8, d_model=64, n_head=4, norm="deepnorm", init="deepnorm")
    assert deep.residual_alpha == 2.0                 # (2 * 8)^(1/4)
    assert deep.init_beta == pytest.approx(64 ** -0.25)
    xavier_deep = deep.replace(init="xavier")         # DeepNorm's alpha with beta = 1
    assert (xavier_deep.residual_alpha, xavier_deep.init_beta) == (2.0, 1.0)
    plain = ModelConfig(n_layer=8, d_model=64, n_head=4, norm="post", init="xavier")
    assert (plain.residual_alpha, plain.init_beta, plain.branch_multiplier) == (1.0, 1.0, 1.0)


def test_default_activation_is_not_gpt2s_and_the_preset_is():
    """The trap the docstring names: GPT-2 small's shape alone has the exact GELU."""
    assert ModelConfig(n_layer=12, d_model=768, n_head=12).activation == "gelu"
    assert ModelConfig.preset("gpt2-small").activation == "gelu_tanh"
    assert "not its function" in ModelConfig.__doc__
