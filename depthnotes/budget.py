"""Splitting a fixed parameter budget between depth and width (chapter 6, claims C14, C15).

* ``budget_sweep`` trains every shape of a fixed-P family (``params.shapes_for_budget``) on the
  shipped corpus with one recipe and the same number of tokens, and returns one
  ``SweepPoint`` per shape: its d/L and its final validation loss.
* ``basin`` reads the flat middle off a sweep: the shapes whose loss is within a stated margin
  of the best one.
* ``PUBLISHED_SHAPES`` lists real models' (L, d) as their papers give them, for the C15 table.

The training recipe is a ``train.TrainConfig``; the learning rate may follow the width
(``lr_rule="1/d"``: lr = lr_ref * d_ref / d), because Adam's best step size shrinks as a
matrix gets wider, and one fixed rate would favour whichever end of the family it happens to
suit. Both rules are available so a reader can compare them.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from .checks import check_choice
from .config import PRESETS, ModelConfig, aspect_ratio
from .params import BudgetShape, approx_non_embedding, shapes_for_budget

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
    from .data import load_corpus
    from .model import Transformer
    from .train import train

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


def basin(points: list[SweepPoint], margin: float) -> list[SweepPoint]:
    """The points whose loss is within ``margin`` (in nats) of the best point's loss."""
    ok = [p for p in points if not p.diverged]
    if not ok:
        return []
    best = min(p.val_loss for p in ok)
    return [p for p in ok if p.val_loss <= best + margin]


@dataclass(frozen=True)
class PublishedShape:
    """A real model's depth and width, as its paper reports them."""

    family: str
    name: str
    n_layer: int
    d_model: int
    cite: str   # key in book/references.bib

    @property
    def aspect_ratio(self) -> float:
        """Width over depth, d/L."""
        return aspect_ratio(self.n_layer, self.d_model)

    @property
    def approx_non_embedding(self) -> int:
        """12 * L * d^2: the rule of thumb (the real models differ in FFN size and norms)."""
        return approx_non_embedding(self.n_layer, self.d_model)


def _gpt2(name: str) -> PublishedShape:
    p = PRESETS[name]
    return PublishedShape("GPT-2", name.removeprefix("gpt2-"), p["n_layer"], p["d_model"],
                          "radford2019language")


#: Shapes from the papers: GPT-2 (Radford et al. 2019; the presets in ``config.py``), GPT-3
#: (Brown et al. 2020, Table 2.1), Pythia (Biderman et al. 2023, Table 1), LLaMA (Touvron et
#: al. 2023, Table 2), Gopher and Chinchilla (Hoffmann et al. 2022, Table 4).
PUBLISHED_SHAPES: tuple[PublishedShape, ...] = (
    *(_gpt2(n) for n in ("gpt2-small", "gpt2-medium", "gpt2-large", "gpt2-xl")),
    PublishedShape("GPT-3", "125M", 12, 768, "brown2020language"),
    PublishedShape("GPT-3", "350M", 24, 1024, "brown2020language"),
    PublishedShape("GPT-3", "760M", 24, 1536, "brown2020language"),
    PublishedShape("GPT-3", "1.3B", 24, 2048, "brown2020language"),
    PublishedShape("GPT-3", "2.7B", 32, 2560, "brown2020language"),
    PublishedShape("GPT-3", "6.7B", 32, 4096, "brown2020language"),
    PublishedShape("GPT-3", "13B", 40, 5140, "brown2020language"),
    PublishedShape("GPT-3", "175B", 96, 12288, "brown2020language"),
    PublishedShape("Pythia", "70M", 6, 512, "biderman2023pythia"),
    PublishedShape("Pythia", "160M", 12, 768, "biderman2023pythia"),
    PublishedShape("Pythia", "410M", 24, 1024, "biderman2023pythia"),
    PublishedShape("Pythia", "1B", 16, 2048, "biderman2023pythia"),
    PublishedShape("Pythia", "1.4B", 24, 2048, "biderman2023pythia"),
    PublishedShape("Pythia", "12B", 36, 5120, "biderman2023pythia"),
    PublishedShape("LLaMA", "7B", 32, 4096, "touvron2023llama"),
    PublishedShape("LLaMA", "13B", 40, 5120, "touvron2023llama"),
    PublishedShape("LLaMA", "33B", 60, 6656, "touvron2023llama"),
    PublishedShape("LLaMA", "65B", 80, 8192, "touvron2023llama"),
    PublishedShape("Chinchilla", "70B", 80, 8192, "hoffmann2022training"),
    PublishedShape("Gopher", "280B", 80, 16384, "hoffmann2022training"),
)
