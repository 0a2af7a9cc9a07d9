"""Training every shape of a fixed-parameter family with one recipe (chapter 6), and the
learning-rate rule across widths.

``budget_sweep`` trains every shape of a fixed-P family (``params.shapes_for_budget``) on the
shipped corpus with one recipe and the same number of tokens, and returns one ``SweepPoint``
per shape: its d/L and its final validation loss. The learning rate may follow the width
(``lr_rule="1/d"``: lr = lr_ref * d_ref / d), because Adam's best step size shrinks as a
matrix gets wider, and one fixed rate would favour whichever end of the family it suits.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from depthnotes.core.checks import check_choice
from depthnotes.core.params import BudgetShape


LR_RULES = ("constant", "1/d")


@dataclass(frozen=True)
class SweepPoint:
    """One trained shape of a fixed-budget family."""

    budget: int
    n_layer: int
    d_model: int
    n_head: int
    non_embedding: int
    aspect_ratio: float
    lr: float
    val_loss: float
    diverged: bool

    def as_dict(self, digits: int = 3) -> dict:
        """Plain numbers for JSON, losses and ratios rounded to ``digits`` decimals."""
        d = asdict(self)
        d["aspect_ratio"] = round(self.aspect_ratio, 2)
        d["lr"] = float(f"{self.lr:.4g}")
        d["val_loss"] = round(self.val_loss, digits)
        return d


def lr_for_width(lr_ref: float, d_model: int, d_ref: int, rule: str) -> float:
    """The learning rate a shape of width ``d_model`` gets under ``rule``."""
    check_choice("lr_rule", rule, LR_RULES)
    return lr_ref if rule == "constant" else lr_ref * d_ref / d_model


def budget_sweep(shapes: list[BudgetShape], train_config, *, corpus=None, lr_rule: str = "1/d",
                 d_ref: int = 64, seed: int = 0, on_point=None) -> list[SweepPoint]:
    """Train each shape from ``shapes_for_budget`` with ``train_config`` (the same steps,
    batch and context for all, so the same tokens) and return the sweep points in order.

    ``train_config.lr`` is the rate at width ``d_ref``; ``lr_rule`` says how it follows d.
    Every model is initialised with ``seed``; the batches come from ``train_config.seed``.
    ``on_point(point, model)`` is called after each shape (e.g. to keep one model).
    """
    from depthnotes.data.corpus import load_corpus
    from depthnotes.core.model import Transformer
    from depthnotes.training.loop import train

    check_choice("lr_rule", lr_rule, LR_RULES)
    corpus = load_corpus() if corpus is None else corpus
    points = []
    for s in shapes:
        if s.config.vocab_size != corpus.vocab_size or s.config.context < train_config.context:
            raise ValueError(f"shape L={s.n_layer}, d={s.d_model}: its config needs "
                             f"vocab_size={corpus.vocab_size} and context >= "
                             f"{train_config.context}")
        lr = lr_for_width(train_config.lr, s.d_model, d_ref, lr_rule)
        model = Transformer(s.config, seed=seed)
        result = train(model, corpus, train_config.replace(lr=lr),
                       desc=f"P={s.budget:,} L={s.n_layer} d={s.d_model}")
        point = SweepPoint(s.budget, s.n_layer, s.d_model, s.n_head, s.non_embedding,
                           s.aspect_ratio, lr, result.final_eval_loss, result.diverged)
        points.append(point)
        if on_point is not None:
            on_point(point, model)
    return points
