"""What a character-level model writes: a prompt continued one sampled character at a time.

A loss in nats per character is hard to picture; a few lines of generated text are not. The
chapters show what a trained and an untrained (or stalled) model write from the same prompt,
with the same random numbers, so that the only difference between two samples is the model.
Chapter 6 samples the models its record stores; records that keep no weights sample at the end
of each run instead (an arm's ``info["sample"]``, ``experiments.spec``), and store the text.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

#: The words every sample continues: a phrase of the corpus's English prose (it occurs once
#: in the shipped text, followed by "implementation of").
PROMPT = "The example above shows part of the"


@dataclass(frozen=True)
class SampleSpec:
    """How to sample: ``chars`` characters after ``prompt``, each drawn from the softmax of
    the logits over ``temperature`` (below 1: sharper than the model's own distribution), from
    a generator seeded with ``seed``."""

    prompt: str = PROMPT
    chars: int = 200
    temperature: float = 0.7
    seed: int = 0

    def __post_init__(self):
        if not isinstance(self.prompt, str) or not self.prompt:
            raise ValueError(f"SampleSpec.prompt must be a non-empty string, got {self.prompt!r}")
        if not isinstance(self.chars, int) or self.chars < 1:
            raise ValueError(f"SampleSpec.chars must be a whole number >= 1, got {self.chars!r}")
        if not self.temperature > 0:
            raise ValueError(f"SampleSpec.temperature must be > 0, got {self.temperature!r}")

    def as_dict(self) -> dict:
        return asdict(self)


def continue_text(model, corpus, spec: SampleSpec = SampleSpec()) -> str:
    """``spec.prompt`` followed by ``spec.chars`` characters that ``model`` samples, each
    conditioned on the last ``model.config.context`` characters (the window it was trained
    on). The model is put in eval mode; no gradient is kept."""
    import torch

    gen = torch.Generator().manual_seed(spec.seed)
    ids = corpus.encode(spec.prompt)[None]                              # (1, T)
    model.eval()
    with torch.no_grad():
        for _ in range(spec.chars):
            logits, _ = model(ids[:, -model.config.context:])          # (1, T', V)
            p = torch.softmax(logits[0, -1] / spec.temperature, dim=-1)  # (V,)
            nxt = torch.multinomial(p, 1, generator=gen)                 # (1,)
            ids = torch.cat([ids, nxt[None]], dim=1)
    return spec.prompt + corpus.decode(ids[0, len(spec.prompt):])


def wrapped(text: str, width: int = 72) -> str:
    """``text`` for a page's output column: each of its own lines (a sample keeps its line
    breaks and indentation) broken into pieces of at most ``width`` characters, tabs as four
    spaces. The characters are all kept, in order."""
    if width < 1:
        raise ValueError(f"wrapped: width must be >= 1, got {width!r}")
    pieces = []
    for line in text.replace("\t", "    ").split("\n"):
        pieces += [line[i:i + width] for i in range(0, len(line), width)] or [""]
    return "\n".join(pieces)


def header(spec: SampleSpec = SampleSpec(), width: int = 72) -> str:
    """What a page prints above its samples, so that the prompt is not read as the page's own
    text: the prompt, marked as such, and how the rest was drawn (then each sample is printed
    from its continuation on)."""
    import textwrap

    return textwrap.fill(
        f'Prompt: "{spec.prompt}" (held-out text), then {spec.chars} characters sampled at '
        f"temperature {spec.temperature:g} with the same random numbers for every model, so "
        "some runs of letters recur from one model to the next.", width) + "\n"
