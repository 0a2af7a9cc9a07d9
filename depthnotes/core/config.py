"""Model configuration: one validated dataclass, a few named shapes, and the depth-dependent
constants of the papers.

Every experiment in the book is a ``ModelConfig``. It is checked when it is built, so a typo
in a depth sweep fails at once with a message that names the field and what it may be,
instead of failing deep inside PyTorch (or, worse, silently training the wrong model).

The numbers that depend on the depth L are computed here, once each, and read from the
config by the model and the init: ``branch_multiplier`` (1, or one of ``BRANCH_SCALE_RULES``),
``ln_multiplier`` (LayerNorm scaling, 1/sqrt(l)), ``residual_alpha`` and ``init_beta``
(DeepNet's alpha and beta, from ``deepnorm_constants``). GPT-2's scaled init std
0.02/sqrt(2L) is ``init.residual_output_std``.

Depth means *applications*: ``n_layer`` = L is how many times a block is applied, also when
weights are shared (``n_unique_blocks``). Every depth rule above counts applications, because
each application adds one more pair of branches to the residual stream (see ``n_unique_blocks``).

This module imports only the standard library: the parameter math in ``params.py`` works
without PyTorch.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Union

from depthnotes.core.checks import check_choice, check_int, check_number

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
#: - ``"xavier"``: Xavier-normal matrices (the post-LN analyses' init; post- or pre-norm)
#: - ``"deepnorm"``: DeepNet's init, "xavier" with gain beta on W_V, W_O and the FFN (with
#:   norm="deepnorm", or with norm="post" for beta without alpha, chapter 5's ablation)
INITS = ("normal", "gpt2", "xavier", "deepnorm")


def default_init(norm: str, branch_scale) -> str:
    """The init a config gets when it names none: ``"deepnorm"`` for DeepNorm, ``"normal"``
    when ``branch_scale`` is a depth rule (the rule is then the only depth-dependent factor),
    else GPT-2's ``"gpt2"``."""
    if norm == "deepnorm":
        return "deepnorm"
    return "normal" if isinstance(branch_scale, str) else "gpt2"


#: The named rules accepted for ``branch_scale`` (each branch F(x) is multiplied by s(L)):
#:
#: - ``"1/sqrt(2L)"``: chapter 5's depth-aware scaling, one factor per branch with 2L branches
#:   (the multiplier form of GPT-2's 1/sqrt(N) init argument, N = 2L residual layers).
#: - ``"1/sqrt(L)"``: the block multiplier of Depth-muP (Yang et al. 2023, "Tensor Programs
#:   VI") and of Bordelon et al. (2023), "a residual branch scale of 1/sqrt(depth)".
#: - ``"1/L"``: CompleteP (Dey et al. 2025), the residual multiplier L^-alpha with alpha = 1.
#:
#: What the book's option does NOT include. The papers pair the multiplier with other rules,
#: which these configs leave out, so that the branch multiplier is the one thing that changes:
#:
#: - All three papers build on muP (width-wise scaling of init, learning rates and the output
#:   multiplier); the book's models use the standard parameterisation at fixed width.
#: - Learning rate: with Adam, the depth rules also scale the learning rate of the hidden
#:   (block) weights, as (L/L_base)^(alpha - 1) in CompleteP's reference implementation:
#:   L^(-1/2) for alpha = 1/2 (Depth-muP with Adam), a depth-independent rate for alpha = 1
#:   (CompleteP). CompleteP also scales Adam's epsilon for the hidden weights by L^(-alpha).
#:   The learning rate is the trainer's, not the model's: a chapter that wants these rules
#:   passes the scaled rate (``depth_scaling.coordinate_check`` takes ``lr_depth_exponent``).
#: - Init: none of the three changes the init with depth (hidden weights keep their muP /
#:   standard std); in particular they do not also use GPT-2's 0.02/sqrt(2L), so use
#:   ``init="normal"`` with these rules, or the depth scaling is applied twice at init.
#: - The papers write the multiplier relative to a base depth, (L/L_base)^-alpha; here
#:   L_base = 1, which differs from theirs only by a depth-independent constant.
BRANCH_SCALE_RULES = ("1/sqrt(2L)", "1/sqrt(L)", "1/L")

#: ``ln_scaling``, LayerNorm Scaling (Sun et al. 2025, "The Curse of Depth in Large Language
#: Models"): ``"none"``, or ``"1/sqrt(l)"``: the output of both LayerNorms of the block at
#: (1-based) layer l, the one before attention and the one before the FFN, is multiplied by
#: 1/sqrt(l). The final LayerNorm (``ln_f``) is not scaled. That is how the authors' code does
#: it (their LLaMA decoder layer multiplies the output of ``input_layernorm`` and of
#: ``post_attention_layernorm`` by 1/sqrt(layer_index + 1); the model's final norm is left
#: alone). Pre-norm only: it scales the input of a branch, which post-norm blocks do not
#: normalise. The paper recommends not combining it with a depth-scaled init ("combining LNS
#: with Scaled Initialization ... diminishes the effectiveness of LNS"), i.e. use
#: ``init="normal"`` rather than ``"gpt2"`` with it; the config allows both so the combination
#: can be measured.
LN_SCALING_RULES = ("none", "1/sqrt(l)")

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
    (1.0 = off; ``"1/sqrt(2L)"`` = the depth-aware scaling of chapter 5; ``"1/sqrt(L)"`` and
    ``"1/L"`` the depth-transfer rules of chapter 8, see ``BRANCH_SCALE_RULES``).
    ``activation`` is the FFN's nonlinearity (``ACTIVATIONS``).

    ``n_unique_blocks`` shares weights across depth ("looped" depth, Universal Transformer
    style): None means every block is distinct; k means only k distinct blocks are stored and
    they are applied in a cycle, block i % k at application i (i = 0 .. L-1), so the stack
    B_0 .. B_{k-1} is looped L/k times (k = 1: one block applied L times). k must divide L, so
    each stored block is applied equally often. ``n_layer`` stays the number of applications.
    ``ln_scaling`` is LayerNorm Scaling (``LN_SCALING_RULES``; pre-norm only).

    ``init`` left unset (None) follows from the other choices (``default_init``): DeepNet's
    init for ``norm="deepnorm"`` (its alpha and beta belong together), the depth-free
    ``"normal"`` when a depth rule already scales each branch (GPT-2's init would scale by
    depth a second time), else ``"gpt2"``. An init named explicitly is kept (``init="xavier"``
    with DeepNorm is alpha without beta, on purpose).

    The default activation is the exact GELU, so ``ModelConfig(n_layer=12, d_model=768,
    n_head=12)`` has GPT-2 small's shape but not its function (GPT-2 uses the tanh form);
    ``ModelConfig.preset("gpt2-small")`` is GPT-2 small, tanh GELU included.
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
    init: str | None = None
    ln_eps: float = 1e-5
    activation: str = "gelu"
    n_unique_blocks: int | None = None
    ln_scaling: str = "none"

    def __post_init__(self) -> None:
        for name in ("n_layer", "d_model", "n_head", "vocab_size", "context"):
            check_int(name, getattr(self, name))
        if self.d_ff is None:
            object.__setattr__(self, "d_ff", 4 * self.d_model)
        check_int("d_ff", self.d_ff)
        if self.d_model % self.n_head != 0:
            raise ValueError(
                f"d_model={self.d_model} must be divisible by n_head={self.n_head} "
                f"(each head gets d_model/n_head dimensions); allowed n_head values for this "
                f"d_model (its divisors): {_divisors(self.d_model)}"
            )
        for name in ("bias", "tie_embeddings"):
            if not isinstance(getattr(self, name), bool):
                raise TypeError(f"{name} must be True or False, got {getattr(self, name)!r}")
        check_choice("norm", self.norm, NORMS)
        if self.init is None:
            object.__setattr__(self, "init", default_init(self.norm, self.branch_scale))
        check_choice("init", self.init, INITS)
        check_choice("activation", self.activation, ACTIVATIONS)
        if isinstance(self.branch_scale, str):
            check_choice("branch_scale", self.branch_scale, BRANCH_SCALE_RULES)
        else:
            check_number("branch_scale", self.branch_scale, 0, low_open=True,
                         extra=f"(or one of {list(BRANCH_SCALE_RULES)})")
        check_number("ln_eps", self.ln_eps, 0, low_open=True)
        if self.n_unique_blocks is not None:
            check_int("n_unique_blocks", self.n_unique_blocks)
            if self.n_layer % self.n_unique_blocks != 0:
                raise ValueError(
                    f"n_unique_blocks={self.n_unique_blocks} must divide n_layer={self.n_layer} "
                    f"(the stored blocks are applied in a cycle, each equally often); allowed: "
                    f"None (every block distinct) or a divisor of n_layer: {_divisors(self.n_layer)}"
                )
        check_choice("ln_scaling", self.ln_scaling, LN_SCALING_RULES)
        if self.ln_scaling != "none" and self.norm != "pre":
            raise ValueError(
                f"ln_scaling={self.ln_scaling!r} scales the LayerNorm in front of each branch, "
                f"which only a pre-norm block has (got norm={self.norm!r}); use norm='pre' or "
                f"ln_scaling='none'"
            )
        # Combinations that contradict each other: refuse them rather than guess.
        if self.init == "deepnorm" and self.norm == "pre":
            raise ValueError(
                f"init='deepnorm' is DeepNet's beta-scaled init for a post-norm stack (with "
                f"norm='deepnorm', or norm='post' for beta without alpha), got norm='pre'; for "
                f"pre-norm use init='xavier' (the same init without beta), or 'normal' / 'gpt2'"
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
        """Width over depth, d/L (chapter 6; ``aspect_ratio``)."""
        return aspect_ratio(self.n_layer, self.d_model)

    # -- the depth-dependent constants: one place each ----------------------------------
    @property
    def n_blocks(self) -> int:
        """How many distinct blocks the model stores: ``n_unique_blocks``, or L."""
        return self.n_layer if self.n_unique_blocks is None else self.n_unique_blocks

    def block_index(self, layer: int) -> int:
        """Which stored block is applied at (0-based) application ``layer``: layer % n_blocks
        (the stored blocks are looped in order)."""
        return layer % self.n_blocks

    @property
    def branch_multiplier(self) -> float:
        """s, the number each residual branch F(x) is multiplied by: ``branch_scale``, or for a
        named rule 1/sqrt(2L), 1/sqrt(L) or 1/L, with L = n_layer (applications)."""
        if isinstance(self.branch_scale, str):
            L = self.n_layer
            return {"1/sqrt(2L)": 1.0 / math.sqrt(2 * L), "1/sqrt(L)": 1.0 / math.sqrt(L),
                    "1/L": 1.0 / L}[self.branch_scale]
        return float(self.branch_scale)

    def ln_multiplier(self, layer: int) -> float:
        """The number the block LayerNorms' output is multiplied by at (0-based) application
        ``layer``: 1, or 1/sqrt(layer + 1) with ``ln_scaling="1/sqrt(l)"`` (l is 1-based)."""
        return 1.0 if self.ln_scaling == "none" else 1.0 / math.sqrt(layer + 1)

    @property
    def residual_alpha(self) -> float:
        """a, the number the residual x is multiplied by before a post-norm block adds its
        branch: DeepNet's alpha with norm="deepnorm", else 1."""
        return deepnorm_constants(self.n_layer).alpha if self.norm == "deepnorm" else 1.0

    @property
    def init_beta(self) -> float:
        """The Xavier gain of W_V, W_O and the FFN's matrices: DeepNet's beta with
        init="deepnorm", else 1 (init="xavier" is the same init with beta = 1)."""
        return deepnorm_constants(self.n_layer).beta if self.init == "deepnorm" else 1.0

    def replace(self, **changes) -> "ModelConfig":
        """A copy with some fields changed, validated again (``d_ff`` follows ``d_model``, and
        an init that was the default follows ``norm`` and ``branch_scale``, unless set
        explicitly in ``changes``)."""
        if "d_model" in changes and "d_ff" not in changes and self.d_ff == 4 * self.d_model:
            changes["d_ff"] = None
        if ({"norm", "branch_scale"} & set(changes) and "init" not in changes
                and self.init == default_init(self.norm, self.branch_scale)):
            changes["init"] = None
        return dataclasses.replace(self, **changes)

    @classmethod
    def preset(cls, name: str, **overrides) -> "ModelConfig":
        """A named shape (``PRESETS``), optionally with fields overridden."""
        if not isinstance(name, str) or name not in PRESETS:
            raise ValueError(f"unknown preset {name!r}; known presets: {sorted(PRESETS)}")
        fields = dict(PRESETS[name])
        fields.update(overrides)
        return cls(**fields)


#: Named shapes. The GPT-2 family is from Radford et al. (2019), with GPT-2's tanh GELU
#: (``activation="gelu_tanh"``): ``ModelConfig(n_layer=12, d_model=768, n_head=12)`` alone
#: has the exact GELU, so it is GPT-2 small's shape but not GPT-2 small's function. The tiny
#: shapes are sized so that a forward and backward pass takes milliseconds on a laptop CPU.
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


def aspect_ratio(n_layer: int, d_model: int) -> float:
    """Width over depth, d/L: the number chapter 6 sorts shapes by. (Here rather than in
    ``params.py``, which imports this module: config, params and budget all call it.)"""
    return d_model / n_layer


# -- DeepNet's constants ------------------------------------------------------------------
@dataclass(frozen=True)
class DeepNormConstants:
    """DeepNet's residual up-weighting alpha and init down-scaling beta for a decoder."""

    alpha: float
    beta: float


def deepnorm_constants(n_layer: int) -> DeepNormConstants:
    """Alpha and beta of a decoder-only stack of ``n_layer`` = M layers (DeepNet, Wang et al.
    2022, Figure 2 / section 4.3): alpha = (2M)^(1/4), beta = (8M)^(-1/4).

    (DeepNet gives other constants for encoders and encoder-decoders; the book's models are
    decoders, so only these are here.)
    """
    check_int("n_layer", n_layer)
    return DeepNormConstants(alpha=(2 * n_layer) ** 0.25, beta=(8 * n_layer) ** -0.25)


def _divisors(n: int) -> list[int]:
    """Every divisor of ``n``, in increasing order."""
    return [k for k in range(1, n + 1) if n % k == 0]
