"""Exact parameter counts, from a config alone (no PyTorch).

The 12*d^2-per-block rule of thumb leaves out the biases and the LayerNorms. This module counts
everything, piece by piece, for the exact layout ``model.Transformer`` builds, so that for every
config ``count_params(cfg).total == sum(p.numel() for p in Transformer(cfg).parameters())``
(a unit test holds it to that). The approximation is reported beside the exact count so the
book can show how good it is.

With shared weights (``ModelConfig.n_unique_blocks``) only the stored blocks count: a block
applied L times holds its parameters once, which is what ``parameters()`` yields.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from depthnotes.core.checks import check_int, check_number
from depthnotes.core.config import ModelConfig


@dataclass(frozen=True)
class BlockParams:
    """The parameters of one transformer block, by kind."""

    attention_weights: int  # W_Q, W_K, W_V (fused, d x 3d) and W_O (d x d): 4*d^2
    attention_biases: int   # 3d + d when bias=True
    ffn_weights: int        # d x d_ff and d_ff x d: 2*d*d_ff (= 8*d^2 when d_ff = 4d)
    ffn_biases: int         # d_ff + d when bias=True
    norms: int              # two LayerNorms: gain (+ bias) each

    @property
    def total(self) -> int:
        return (self.attention_weights + self.attention_biases + self.ffn_weights
                + self.ffn_biases + self.norms)

    @property
    def weights(self) -> int:
        """The matrices only: what 12*d^2 approximates."""
        return self.attention_weights + self.ffn_weights


@dataclass(frozen=True)
class ParamCount:
    """Every parameter of a ``Transformer``, grouped the way the book talks about them."""

    token_embedding: int     # vocab_size x d
    position_embedding: int  # context x d
    per_block: BlockParams
    n_layer: int             # L, block applications
    final_norm: int          # pre-norm only: one LayerNorm after the last block
    head: int                # 0 when the head is tied to the token embedding
    approx_12Ld2: int        # the rule of thumb, 12 * (stored blocks) * d^2
    n_blocks: int            # stored blocks: L, or n_unique_blocks when weights are shared

    @property
    def blocks(self) -> int:
        """All stored blocks (L of them unless weights are shared)."""
        return self.n_blocks * self.per_block.total

    @property
    def embedding(self) -> int:
        """Token and position embeddings, plus an untied output head."""
        return self.token_embedding + self.position_embedding + self.head

    @property
    def non_embedding(self) -> int:
        """Blocks and final norm: the count scaling laws use (Kaplan et al. 2020)."""
        return self.blocks + self.final_norm

    @property
    def total(self) -> int:
        return self.embedding + self.non_embedding

    def as_dict(self) -> dict:
        """Plain numbers, for tables."""
        d = asdict(self)
        d["per_block"] = self.per_block.total
        d.update(blocks=self.blocks, embedding=self.embedding,
                 non_embedding=self.non_embedding, total=self.total)
        return d


def count_block_params(config: ModelConfig) -> BlockParams:
    """Exact parameters of one block of ``config``."""
    d, d_ff = config.d_model, config.d_ff
    norm_size = 2 * d if config.bias else d  # LayerNorm gain, plus bias when bias=True
    return BlockParams(
        attention_weights=4 * d * d,
        attention_biases=4 * d if config.bias else 0,
        ffn_weights=2 * d * d_ff,
        ffn_biases=(d_ff + d) if config.bias else 0,
        norms=2 * norm_size,
    )


def count_params(config: ModelConfig) -> ParamCount:
    """Exact parameter count of ``Transformer(config)``, grouped (see ``ParamCount``)."""
    if not isinstance(config, ModelConfig):
        raise TypeError(f"count_params expects a ModelConfig, got {type(config).__name__}")
    d = config.d_model
    norm_size = 2 * d if config.bias else d
    return ParamCount(
        token_embedding=config.vocab_size * d,
        position_embedding=config.context * d,
        per_block=count_block_params(config),
        n_layer=config.n_layer,
        final_norm=norm_size if config.norm == "pre" else 0,
        head=0 if config.tie_embeddings else config.vocab_size * d,
        approx_12Ld2=approx_non_embedding(config.n_blocks, d),
        n_blocks=config.n_blocks,
    )


def approx_non_embedding(n_layer: int, d_model: int) -> int:
    """The rule of thumb: 12 * L * d^2 (4d^2 attention + 8d^2 FFN per block)."""
    return 12 * n_layer * d_model * d_model


# -- shapes for a fixed budget (chapter 6) ----------------------------------------------------
@dataclass(frozen=True)
class BudgetShape:
    """One (L, d) whose exact non-embedding count sits near a budget P."""

    n_layer: int
    d_model: int
    n_head: int
    non_embedding: int   # exact, from count_params
    budget: int          # the P it was chosen for
    config: ModelConfig  # the full config (the base config with this shape)

    @property
    def aspect_ratio(self) -> float:
        """Width over depth, d/L (``ModelConfig.aspect_ratio``)."""
        return self.config.aspect_ratio

    @property
    def rel_error(self) -> float:
        """(non_embedding - P) / P: how far from the budget this shape lands."""
        return (self.non_embedding - self.budget) / self.budget


def shapes_for_budget(budget: int, base: ModelConfig, *, tolerance: float = 0.1,
                      n_layers=None, head_dim: int | None = None,
                      d_multiple: int | None = None) -> list[BudgetShape]:
    """Every depth's best width for a non-embedding budget P: the fixed-P family of chapter 6.

    For each L in ``n_layers`` (default 1, 2, ... until even the narrowest allowed width
    overshoots P), pick the width d, a multiple of ``d_multiple``, whose exact
    ``count_params(...).non_embedding`` is closest to ``budget``, and keep it only if it lies
    within ``tolerance`` (relative) of P. Everything else (vocab, context, norm, bias, d_ff
    rule, init) comes from ``base``.

    Heads: with ``head_dim`` set, n_head = d / head_dim and d must be a multiple of it (the
    default ``d_multiple`` is then ``head_dim``); without it, ``base.n_head`` is kept and d
    must be a multiple of it (default ``d_multiple`` = ``base.n_head``). ``d_ff`` follows
    4*d when ``base`` uses the default, else stays fixed.

    Returns the shapes sorted by L (so by increasing depth, decreasing d/L).
    """
    if not isinstance(base, ModelConfig):
        raise TypeError(f"base must be a ModelConfig, got {type(base).__name__}")
    check_int("budget", budget)
    check_number("tolerance", tolerance, 0, 1, low_open=True, high_open=True)
    if head_dim is not None:
        check_int("head_dim", head_dim)
    step = d_multiple if d_multiple is not None else (head_dim or base.n_head)
    check_int("d_multiple", step)
    need = head_dim or base.n_head
    if step % need != 0:
        raise ValueError(f"d_multiple={step} must be a multiple of "
                         f"{'head_dim' if head_dim else 'base.n_head'}={need}")
    keep_ff = base.d_ff != 4 * base.d_model

    def shape(L: int, d: int) -> ModelConfig:
        n_head = d // head_dim if head_dim else base.n_head
        changes = dict(n_layer=L, d_model=d, n_head=n_head)
        changes["d_ff"] = base.d_ff if keep_ff else 4 * d
        return base.replace(**changes)

    def count(L: int, d: int) -> int:
        return count_params(shape(L, d)).non_embedding

    if n_layers is None:
        depths, L = [], 1
        while count(L, step) <= budget * (1 + tolerance):
            depths.append(L)
            L += 1
    else:
        depths = [check_int("n_layers[i]", L) for L in n_layers]
    out = []
    for L in sorted(set(depths)):
        # non_embedding grows monotonically in d: walk up to the first width past P.
        d = step
        while count(L, d) < budget:
            d += step
        best = min((c for c in (d - step, d) if c >= step),
                   key=lambda c: abs(count(L, c) - budget))
        n = count(L, best)
        if abs(n - budget) <= tolerance * budget:
            cfg = shape(L, best)
            out.append(BudgetShape(L, best, cfg.n_head, n, budget, cfg))
    return out
