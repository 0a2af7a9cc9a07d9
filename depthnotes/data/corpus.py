"""Data made on the machine: a small text corpus that needs no download.

The corpus is ``corpus/python_topics.txt`` (about 465 kB of English prose and code): the
help-topic pages of the Python documentation (the text ``help("topics")`` shows), taken once
from ``pydoc_data.topics`` of CPython 3.11.7, ordered by topic name, curly quotes and dashes
mapped to ASCII, every other non-ASCII character dropped. It is shipped as a fixed file, so the
numbers in the book do not change with the Python version that runs them. Its licence is the
PSF License Agreement (see ``corpus/README.md``); ``build_python_topics_text`` rebuilds it.

Tokens are characters: the vocabulary is the sorted set of characters in the file (94 of
them), so ``vocab_size`` is small and a tiny model's output head is cheap. The first 90 % of
the text is the training split, the last 10 % the validation split (a contiguous cut, so no
validation sentence appears in training).

Batches are drawn by ``get_batch(split, batch_size, context, generator)``: ``batch_size``
random windows of ``context + 1`` characters; ``x`` is the first ``context`` of each window and
``y`` the same window shifted by one. The same generator state gives the same batch.

``unigram_loss(corpus)`` is the loss of a model that ignores the context: the yardstick a run
must end clearly below to count as trained (chapters 4 and 5).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from importlib import resources
from typing import Callable

import torch

from depthnotes.core.checks import check_choice, check_int, check_number

#: The corpora that ship with the package: name -> file under ``depthnotes/corpus``.
CORPORA = {"python_topics": "python_topics.txt"}
SPLITS = ("train", "val")

#: ASCII replacements used when the corpus file was built.
_ASCII_MAP = {"\u2019": "'", "\u2018": "'", "\u201c": '"', "\u201d": '"', "\u2026": "...",
              "\u2014": "--", "\u2013": "-", "\u00df": "ss", "\u00b0": " degrees"}


@dataclass(frozen=True, eq=False)
class CharCorpus:
    """A character-level corpus with train/validation splits of token ids.

    ``train`` and ``val`` are 1-D ``torch.long`` tensors; ``chars`` is the vocabulary
    (``chars[i]`` is the character of token id ``i``).
    """

    name: str
    chars: str
    train: torch.Tensor
    val: torch.Tensor
    _index: dict = field(repr=False, default_factory=dict)

    @property
    def vocab_size(self) -> int:
        return len(self.chars)

    def encode(self, text: str) -> torch.Tensor:
        """Token ids (1-D long tensor) of ``text``; every character must be in the vocabulary."""
        if not isinstance(text, str):
            raise TypeError(f"encode expects a str, got {type(text).__name__}")
        try:
            ids = [self._index[c] for c in text]
        except KeyError as e:
            raise ValueError(f"character {e.args[0]!r} is not in the {self.name!r} vocabulary "
                             f"({self.vocab_size} printable ASCII characters and newline)") from None
        return torch.tensor(ids, dtype=torch.long)

    def decode(self, ids) -> str:
        """The text of token ids (a 1-D tensor or a list of ints)."""
        if isinstance(ids, torch.Tensor):
            if ids.dim() != 1:
                raise ValueError(f"decode expects a 1-D sequence of ids, got shape {tuple(ids.shape)}")
            ids = ids.tolist()
        out = []
        for i in ids:
            if not 0 <= int(i) < self.vocab_size:
                raise ValueError(f"token id {i} is outside the vocabulary [0, {self.vocab_size})")
            out.append(self.chars[int(i)])
        return "".join(out)

    def split(self, split: str) -> torch.Tensor:
        check_choice("split", split, SPLITS)
        return self.train if split == "train" else self.val

    def get_batch(self, split: str, batch_size: int, context: int,
                  generator: torch.Generator | None = None):
        """``(x, y)``, each ``(batch_size, context)`` long tensors: random windows of ``split``
        and the same windows shifted one character to the right (the next-token targets)."""
        check_int("batch_size", batch_size)
        check_int("context", context)
        data = self.split(split)
        if context + 1 > len(data):
            raise ValueError(f"context={context} is too long for the {split!r} split "
                             f"({len(data)} tokens)")
        starts = torch.randint(0, len(data) - context, (batch_size,), generator=generator)
        offsets = torch.arange(context + 1)
        windows = data[starts[:, None] + offsets]                 # (B, T+1)
        return windows[:, :-1].contiguous(), windows[:, 1:].contiguous()

    def batches(self, batch_size: int, context: int, split: str = "train") -> Callable:
        """A function ``generator -> (x, y)`` drawing batches of ``split`` (what
        ``depthnotes.training.loop.train`` accepts as its data)."""
        check_int("batch_size", batch_size)
        check_int("context", context)
        self.split(split)
        return functools.partial(self.get_batch, split, batch_size, context)


def token_entropy(ids) -> float:
    """The entropy of the frequencies of the token ids ``ids`` (any sequence of non-negative
    ints), in nats; ids that never occur add nothing."""
    counts = torch.bincount(torch.as_tensor(ids, dtype=torch.long)).double()
    freq = counts[counts > 0] / counts.sum()
    return float(-(freq * freq.log()).sum())


def unigram_loss(corpus) -> float:
    """The entropy of the training split's character frequencies, in nats: the loss of a
    model that ignores the context (the yardstick of chapters 4 and 5: a run *trained* when it
    ends clearly below it). ``corpus`` needs ``train`` (token ids)."""
    return token_entropy(corpus.train)


def corpus_text(name: str = "python_topics") -> str:
    """The raw text of a shipped corpus."""
    if name not in CORPORA:
        raise ValueError(f"unknown corpus {name!r}; shipped corpora: {sorted(CORPORA)}")
    return resources.files("depthnotes").joinpath("corpus", CORPORA[name]).read_text("ascii")


@functools.lru_cache(maxsize=None)
def _load(name: str, val_fraction: float) -> CharCorpus:
    text = corpus_text(name)
    chars = "".join(sorted(set(text)))
    index = {c: i for i, c in enumerate(chars)}
    ids = torch.tensor([index[c] for c in text], dtype=torch.long)
    n_train = int(round(len(ids) * (1.0 - val_fraction)))
    return CharCorpus(name=name, chars=chars, train=ids[:n_train], val=ids[n_train:],
                      _index=index)


def load_corpus(name: str = "python_topics", val_fraction: float = 0.1) -> CharCorpus:
    """The character-level corpus ``name`` with the last ``val_fraction`` as validation."""
    check_number("val_fraction", val_fraction, 0, 1, low_open=True, high_open=True)
    corpus = _load(name, float(val_fraction))
    # Hand out views that cannot change the cached tensors.
    return CharCorpus(name=corpus.name, chars=corpus.chars, train=corpus.train.clone(),
                      val=corpus.val.clone(), _index=corpus._index)


def build_python_topics_text() -> str:
    """Rebuild the shipped corpus text from this Python's ``pydoc_data.topics``.

    With CPython 3.11.7 this returns the shipped file byte for byte; other versions differ
    slightly (their documentation changed), which is why the book ships the file.
    """
    import pydoc_data.topics as topics

    parts = []
    for key in sorted(topics.topics):
        s = "".join(_ASCII_MAP.get(c, c) for c in topics.topics[key])
        s = "".join(c for c in s if c == "\n" or 32 <= ord(c) < 127)
        parts.append("\n".join(line.rstrip() for line in s.split("\n")).strip("\n"))
    return "\n\n".join(parts) + "\n"

