"""Real models' depth and width, as their papers report them (chapter 6, claim C15).
"""

from __future__ import annotations

from dataclasses import dataclass

from depthnotes.core.config import PRESETS, aspect_ratio
from depthnotes.core.params import approx_non_embedding


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
#: al. 2023, Table 2), Gopher and Chinchilla (Hoffmann et al. 2022, Table 4); and sub-billion
#: models built to run on CPUs and phones, which go deep and thin on purpose: MobileLLM (Liu
#: et al. 2024, its 125M and 350M models), SmolLM2 (Allal et al. 2025, the 135M and 360M
#: models' released configurations) and Qwen2.5-0.5B (Qwen Team 2024, Table 1 and its
#: released configuration: 24 layers, hidden size 896).
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
    PublishedShape("MobileLLM", "125M", 30, 576, "liu2024mobilellm"),
    PublishedShape("MobileLLM", "350M", 32, 960, "liu2024mobilellm"),
    PublishedShape("SmolLM2", "135M", 30, 576, "allal2025smollm2"),
    PublishedShape("SmolLM2", "360M", 32, 960, "allal2025smollm2"),
    PublishedShape("Qwen2.5", "0.5B", 24, 896, "qwen2024qwen25"),
)


@dataclass(frozen=True)
class DistinctShape:
    """One (L, d) and every published model that has it (``names``: "family name")."""

    n_layer: int
    d_model: int
    names: tuple[str, ...]

    @property
    def aspect_ratio(self) -> float:
        return aspect_ratio(self.n_layer, self.d_model)

    @property
    def approx_non_embedding(self) -> int:
        return approx_non_embedding(self.n_layer, self.d_model)


def distinct_shapes(shapes=PUBLISHED_SHAPES) -> tuple[DistinctShape, ...]:
    """Each (L, d) of ``shapes`` once, in first-seen order. A median over models would count
    12 x 768 three times (GPT-2 small, GPT-3 125M, Pythia 160M) because three families
    copied one shape; a statement about where designers put d/L counts each design once."""
    names: dict[tuple[int, int], list[str]] = {}
    for s in shapes:
        names.setdefault((s.n_layer, s.d_model), []).append(f"{s.family} {s.name}")
    return tuple(DistinctShape(L, d, tuple(n)) for (L, d), n in names.items())
