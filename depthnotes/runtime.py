"""Reproducibility and progress: the two things every notebook sets up first.

``pin`` fixes the thread count and the seeds. With the same seed and thread count, PyTorch on
a CPU repeats itself bit for bit across processes; 1 and 2 threads differ in the last digits,
and training amplifies that, so every notebook pins both. The book uses one thread: its models
are small enough that a second thread mostly adds synchronisation (on a busy 2-core machine,
training ran many times slower with two), and one thread gives the same numbers on any laptop
whatever its core count. Chapter 7 varies the thread count on purpose, and says so.

``progress`` wraps long loops in a tqdm bar when a person runs the notebook in Jupyter, and
stays silent when ``DEPTHNOTES_QUIET`` is set, as the tests and the notebook runner do, so
stored outputs never contain a progress bar's timings.
"""

from __future__ import annotations

import os
import random

import numpy as np
import torch

#: Threads every notebook runs with; results are bitwise repeatable at a fixed count.
BOOK_THREADS = 1


def pin(seed: int = 0, threads: int = BOOK_THREADS) -> None:
    """Fix torch's intra-op thread count and seed torch, numpy and ``random``."""
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
        raise ValueError(f"threads must be a positive int, got {threads!r}")
    torch.set_num_threads(threads)
    torch.manual_seed(seed)
    np.random.seed(seed)
    random.seed(seed)


def quiet() -> bool:
    """True when progress bars must stay off (tests, the notebook runner, the book build)."""
    return os.environ.get("DEPTHNOTES_QUIET", "") not in ("", "0")


def progress(iterable, total: int | None = None, desc: str | None = None):
    """``iterable`` with a tqdm bar in Jupyter, or as it is when quiet."""
    if quiet():
        return iterable
    from tqdm.auto import tqdm

    return tqdm(iterable, total=total, desc=desc, leave=False)
