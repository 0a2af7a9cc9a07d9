"""Reproducibility, progress and the machine: what every notebook and every record sets up.

``pin`` fixes the thread count and the seeds. With the same seed and thread count, PyTorch on
a CPU repeats itself bit for bit across processes; 1 and 2 threads differ in the last digits,
and training amplifies that, so every notebook pins both. The book uses one thread: its models
are small enough that a second thread mostly adds synchronisation (on a busy 2-core machine,
training ran many times slower with two), and one thread gives the same numbers on any laptop
whatever its core count. Chapter 7 varies the thread count on purpose, and says so.

``machine_info`` and ``num_threads`` say and set what a timing or a record depends on besides
the code: the CPU, the thread count, the versions.

``progress`` wraps long loops in a tqdm bar when a person runs the notebook in Jupyter, and
stays silent when ``DEPTHNOTES_QUIET`` is set, as the tests and the notebook runner do, so
stored outputs never contain a progress bar's timings.
"""

from __future__ import annotations

import os
import platform
import random
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np
import torch

from depthnotes.core.checks import check_int

#: Threads every notebook runs with; results are bitwise repeatable at a fixed count.
BOOK_THREADS = 1


def pin(seed: int = 0, threads: int = BOOK_THREADS) -> None:
    """Fix torch's intra-op thread count and seed torch, numpy and ``random``."""
    check_int("threads", threads, 1)
    torch.set_num_threads(threads)
    torch.manual_seed(seed)
    np.random.seed(seed)
    random.seed(seed)


def quiet() -> bool:
    """True when progress bars must stay off (tests, the notebook runner, the book build)."""
    return os.environ.get("DEPTHNOTES_QUIET", "") not in ("", "0")


@contextmanager
def no_inner_progress():
    """The body runs quiet (no progress bars from the loops it calls), the setting restored
    after: ``parallel`` runs jobs in-process under it, so one bar counts all of them."""
    before = os.environ.get("DEPTHNOTES_QUIET")
    os.environ["DEPTHNOTES_QUIET"] = "1"
    try:
        yield
    finally:
        if before is None:
            del os.environ["DEPTHNOTES_QUIET"]
        else:
            os.environ["DEPTHNOTES_QUIET"] = before


def progress(iterable, total: int | None = None, desc: str | None = None):
    """``iterable`` with a tqdm bar in Jupyter, or as it is when quiet."""
    if quiet():
        return iterable
    from tqdm.auto import tqdm

    return tqdm(iterable, total=total, desc=desc, leave=False)


# -- the machine a number was measured on, and its thread count ------------------------
@dataclass(frozen=True)
class MachineInfo:
    """What a timing depends on besides the model."""

    cpu: str
    threads: int
    torch_version: str
    python: str
    load_average: float | None  # 1-minute load average when measured (None if unknown)

    @property
    def load_text(self) -> str:
        """"load average 0.7", or "load average unknown" where the OS does not report it
        (Windows), for a page's printout."""
        if self.load_average is None:
            return "load average unknown"
        return f"load average {self.load_average:.1f}"


def cpu_name() -> str:
    """The CPU's model name (from /proc/cpuinfo on Linux), or what ``platform`` knows."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown"


def machine_info() -> MachineInfo:
    """The CPU, thread count, versions and load a measurement was taken with."""
    try:
        load = os.getloadavg()[0]
    except (OSError, AttributeError):
        load = None
    return MachineInfo(cpu=cpu_name(), threads=torch.get_num_threads(),
                       torch_version=torch.__version__, python=platform.python_version(),
                       load_average=load)


@contextmanager
def num_threads(threads: int | None):
    """Run the body with torch's intra-op thread count set to ``threads`` (None: unchanged)."""
    if threads is None:
        yield
        return
    check_int("threads", threads, 1)
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        yield
    finally:
        torch.set_num_threads(before)
