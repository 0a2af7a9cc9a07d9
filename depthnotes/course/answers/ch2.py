"""What chapter 2's exercises expect, and the hints their checks give (instructor only:
the student edition holds these sealed, ``depthnotes.course.sealed``)."""

from __future__ import annotations

from depthnotes.core.config import ModelConfig
from depthnotes.core.params import count_params
from depthnotes.course.kinds import Mistake, Number


def _preset(name: str, **overrides):
    return count_params(ModelConfig.preset(name, **overrides))


EXERCISES = {
    "2.1": Number(
        expected=lambda g: _preset("gpt2-medium").embedding / _preset("gpt2-medium").total,
        rel=1e-3,
        idea="count_params returns a ParamCount that splits the model into embedding and "
             "non-embedding parts; the fraction is one part over the whole.",
        mistakes=(
            Mistake(lambda g: 100 * _preset("gpt2-medium").embedding
                    / _preset("gpt2-medium").total,
                    "Give a fraction between 0 and 1, not a percentage."),
            Mistake(lambda g: _preset("gpt2-medium").token_embedding
                    / _preset("gpt2-medium").total,
                    "The position table is an embedding too."),
            Mistake(lambda g: _preset("gpt2-medium").embedding
                    / _preset("gpt2-medium").non_embedding,
                    "Divide by the whole model's count, not by the non-embedding part."),
        )),
    "2.2": Number(
        expected=lambda g: 12 * (1536 // 768) ** 2, integer=True,
        idea="Both models must hold the same 12·L·d²: ask how many times more weights one "
             "layer of width 1536 holds than one of width 768.",
        mistakes=(
            Mistake(lambda g: 12 * 1536 // 768,
                    "Doubling the width does not double a layer's weights: they grow with the "
                    "square of d."),
            Mistake(lambda g: 1536 ** 2 // 768 ** 2,
                    "That is how many narrow layers one wide layer is worth; the wide model "
                    "has several layers."),
        )),
    "2.3": Number(
        expected=lambda g: _preset("gpt2-small", tie_embeddings=False).total,
        idea="An untied head is its own vocab_size × d_model matrix; "
             "ModelConfig.preset('gpt2-small', tie_embeddings=False) gives the config to count.",
        mistakes=(
            Mistake(lambda g: _preset("gpt2-small").total,
                    "That is the tied model: untying adds a matrix of its own."),
            Mistake(lambda g: _preset("gpt2-small", tie_embeddings=False).total + 50257,
                    "The head has no bias: only its weight matrix is added."),
        )),
}
