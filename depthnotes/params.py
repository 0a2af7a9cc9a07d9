"""Exact parameter counts, from a config alone (no PyTorch).

The 12*d^2-per-block rule of thumb leaves out the biases and the LayerNorms. This module counts
everything, piece by piece, for the exact layout ``model.Transformer`` builds, so that for every
config ``count_params(cfg).total == sum(p.numel() for p in Transformer(cfg).parameters())``
(a unit test holds it to that). The approximation is reported beside the exact count so the
book can show how good it is.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from .config import ModelConfig


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
    n_layer: int
    final_norm: int          # pre-norm only: one LayerNorm after the last block
    head: int                # 0 when the head is tied to the token embedding
    approx_12Ld2: int        # the rule of thumb, 12 * L * d^2

    @property
    def blocks(self) -> int:
        """All L blocks."""
        return self.n_layer * self.per_block.total

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
        approx_12Ld2=approx_non_embedding(config.n_layer, d),
    )


def approx_non_embedding(n_layer: int, d_model: int) -> int:
    """The rule of thumb: 12 * L * d^2 (4d^2 attention + 8d^2 FFN per block)."""
    return 12 * n_layer * d_model * d_model
