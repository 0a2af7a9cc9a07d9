"""Model configuration: one validated dataclass and a few named shapes.

Every experiment in the book is a ``ModelConfig``. It is checked when it is built, so a typo
in a depth sweep fails at once with a message that names the field and what it may be,
instead of failing deep inside PyTorch (or, worse, silently training the wrong model).

This module imports only the standard library: the parameter math in ``params.py`` works
without PyTorch.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Union

#: Where the LayerNorm sits in a block:
#:
#: - ``"post"``: x -> LN(x + s*F(x)) (the original Transformer; no final norm)
#: - ``"pre"``: x -> x + s*F(LN(x)), then one final LN after the last block (GPT-2)
#: - ``"deepnorm"``: x -> LN(alpha*x + F(x)) (DeepNet, Wang et al. 2022; no final norm)
NORMS = ("post", "pre", "deepnorm")

#: How the weights are drawn at initialisation (see ``init.py``):
#:
#: - ``"normal"``: every weight matrix and embedding N(0, 0.02^2)
#: - ``"gpt2"``: as "normal", but the two output projections that write into the residual
#:   stream (attention c_proj, FFN c_proj) use std 0.02/sqrt(2L)
#: - ``"deepnorm"``: DeepNet's beta-scaled Xavier init (only with norm="deepnorm")
INITS = ("normal", "gpt2", "deepnorm")

#: The one named rule accepted for ``branch_scale``: multiply each branch by 1/sqrt(2L).
BRANCH_SCALE_RULES = ("1/sqrt(2L)",)

#: The FFN's activation:
#:
#: - ``"gelu"``: the exact GELU, x * Phi(x) (PyTorch's ``nn.GELU()``, nanoGPT); the default,
#:   because on a CPU it is several times cheaper than the tanh form (torch 2.13, AVX-512:
#:   ~4.8x), which makes a small model's training step a few per cent faster (``benchmarks/``)
#: - ``"gelu_tanh"``: the tanh approximation GPT-2 was trained with; the GPT-2 presets use it,
#:   so that they compute GPT-2's function.
#:
#: The two differ by less than 1e-3 anywhere (checked in the tests).
ACTIVATIONS = ("gelu", "gelu_tanh")

BranchScale = Union[float, str]


@dataclass(frozen=True)
class ModelConfig:
    """The shape and the training-relevant choices of a GPT-style decoder.

    Names follow the book's glossary: ``n_layer`` is L, ``d_model`` is d.
    ``d_ff`` defaults to 4*d_model. ``branch_scale`` multiplies each residual branch F(x)
    (1.0 = off; ``"1/sqrt(2L)"`` = the depth-aware scaling of chapter 5). ``activation`` is
    the FFN's nonlinearity (``ACTIVATIONS``).
    """

    n_layer: int
    d_model: int
    n_head: int
    d_ff: int | None = None
    vocab_size: int = 50257
    context: int = 1024
    bias: bool = True
    tie_embeddings: bool = True
    norm: str = "pre"
    branch_scale: BranchScale = 1.0
    init: str = "gpt2"
    ln_eps: float = 1e-5
    activation: str = "gelu"

    def __post_init__(self) -> None:
        for name in ("n_layer", "d_model", "n_head", "vocab_size", "context"):
            _check_positive_int(name, getattr(self, name))
        if self.d_ff is None:
            object.__setattr__(self, "d_ff", 4 * self.d_model)
        _check_positive_int("d_ff", self.d_ff)
        if self.d_model % self.n_head != 0:
            raise ValueError(
                f"d_model={self.d_model} must be divisible by n_head={self.n_head} "
                f"(each head gets d_model/n_head dimensions); allowed n_head values for this "
                f"d_model: {_divisors(self.d_model)}"
            )
        for name in ("bias", "tie_embeddings"):
            if not isinstance(getattr(self, name), bool):
                raise TypeError(f"{name} must be True or False, got {getattr(self, name)!r}")
        _check_choice("norm", self.norm, NORMS)
        _check_choice("init", self.init, INITS)
        _check_choice("activation", self.activation, ACTIVATIONS)
        _check_branch_scale(self.branch_scale)
        if isinstance(self.ln_eps, bool) or not isinstance(self.ln_eps, (int, float)) \
                or not (self.ln_eps > 0 and math.isfinite(self.ln_eps)):
            raise ValueError(f"ln_eps must be a positive finite number, got {self.ln_eps!r}")
        # Combinations that contradict each other: refuse them rather than guess.
        if self.init == "deepnorm" and self.norm != "deepnorm":
            raise ValueError(
                f"init='deepnorm' is DeepNet's beta-scaled init and only makes sense with "
                f"norm='deepnorm' (got norm={self.norm!r}); use init='normal' or 'gpt2' here"
            )
        if self.norm == "deepnorm" and self.branch_multiplier != 1.0:
            raise ValueError(
                f"branch_scale={self.branch_scale!r} contradicts norm='deepnorm', which already "
                f"up-weights the residual by alpha instead of scaling the branch; use "
                f"branch_scale=1.0 with DeepNorm"
            )

    # -- derived quantities -------------------------------------------------------------
    @property
    def head_dim(self) -> int:
        """Dimensions per attention head, d_model / n_head."""
        return self.d_model // self.n_head

    @property
    def aspect_ratio(self) -> float:
        """Width over depth, d/L (chapter 6)."""
        return self.d_model / self.n_layer

    @property
    def branch_multiplier(self) -> float:
        """The number each residual branch is multiplied by (resolves the named rule)."""
        if isinstance(self.branch_scale, str):
            return 1.0 / math.sqrt(2 * self.n_layer)
        return float(self.branch_scale)

    def replace(self, **changes) -> "ModelConfig":
        """A copy with some fields changed, validated again (``d_ff`` follows ``d_model``
        unless it was set explicitly in ``changes``)."""
        if "d_model" in changes and "d_ff" not in changes and self.d_ff == 4 * self.d_model:
            changes["d_ff"] = None
        return dataclasses.replace(self, **changes)

    @classmethod
    def preset(cls, name: str, **overrides) -> "ModelConfig":
        """A named shape (``PRESETS``), optionally with fields overridden."""
        if not isinstance(name, str) or name not in PRESETS:
            raise ValueError(f"unknown preset {name!r}; known presets: {sorted(PRESETS)}")
        fields = dict(PRESETS[name])
        fields.update(overrides)
        return cls(**fields)


#: Named shapes. The GPT-2 family is from Radford et al. (2019), with GPT-2's tanh GELU; the
#: tiny shapes are sized so that a forward and backward pass takes milliseconds on a laptop CPU.
#: "deepnet-thin" is the shape of DeepNet's update-size experiment (d=64, FFN 128, 2 heads).
PRESETS: dict[str, dict] = {
    "gpt2-small": dict(n_layer=12, d_model=768, n_head=12, activation="gelu_tanh"),
    "gpt2-medium": dict(n_layer=24, d_model=1024, n_head=16, activation="gelu_tanh"),
    "gpt2-large": dict(n_layer=36, d_model=1280, n_head=20, activation="gelu_tanh"),
    "gpt2-xl": dict(n_layer=48, d_model=1600, n_head=25, activation="gelu_tanh"),
    "tiny": dict(n_layer=4, d_model=64, n_head=4, vocab_size=256, context=128),
    "mini": dict(n_layer=6, d_model=128, n_head=4, vocab_size=256, context=256),
    "deepnet-thin": dict(n_layer=100, d_model=64, n_head=2, d_ff=128, vocab_size=256,
                         context=64, norm="deepnorm", init="deepnorm"),
}

GPT2_FAMILY = ("gpt2-small", "gpt2-medium", "gpt2-large", "gpt2-xl")


# -- validation helpers -----------------------------------------------------------------
def _check_positive_int(name: str, value) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be a positive int, got {type(value).__name__} {value!r}")
    if value < 1:
        raise ValueError(f"{name} must be a positive int (>= 1), got {value}")


def _check_choice(name: str, value, allowed: tuple[str, ...]) -> None:
    if value not in allowed:
        raise ValueError(f"{name} must be one of {list(allowed)}, got {value!r}")


def _check_branch_scale(value) -> None:
    if isinstance(value, str):
        if value not in BRANCH_SCALE_RULES:
            raise ValueError(
                f"branch_scale must be a positive number or one of {list(BRANCH_SCALE_RULES)}, "
                f"got {value!r}"
            )
        return
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(
            f"branch_scale must be a positive number or one of {list(BRANCH_SCALE_RULES)}, "
            f"got {type(value).__name__} {value!r}"
        )
    if not (value > 0 and math.isfinite(value)):
        raise ValueError(f"branch_scale must be a positive finite number, got {value!r}")


def _divisors(n: int) -> list[int]:
    return [k for k in range(1, n + 1) if n % k == 0 and k <= 64]
