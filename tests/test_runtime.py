"""depthnotes.training.runtime: the machine a number was measured on, thread control, seeds, quiet."""

import random
from pathlib import Path

import numpy as np
import pytest
import torch

from depthnotes.training import runtime
from depthnotes.training.runtime import (cpu_name, machine_info, num_threads, pin, progress,
                                         quiet)


def _cpuinfo_model_name() -> str | None:
    path = Path("/proc/cpuinfo")
    if not path.exists():
        return None
    for line in path.read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return None


def test_machine_info_names_the_cpu():
    """The name is the one /proc/cpuinfo gives, not the fallback."""
    expected = _cpuinfo_model_name()
    if expected is None:
        pytest.skip("no 'model name' in /proc/cpuinfo on this system: nothing to check against")
    m = machine_info()
    assert m.cpu == expected and m.cpu != "unknown"
    assert m.threads == torch.get_num_threads() and m.torch_version == torch.__version__
    assert m.python.count(".") == 2


def test_cpu_name_falls_back_to_platform(monkeypatch):
    def no_file(*args, **kwargs):
        raise OSError("no /proc here")

    monkeypatch.setattr(runtime, "open", no_file, raising=False)   # shadows the builtin
    monkeypatch.setattr(runtime.platform, "processor", lambda: "")
    monkeypatch.setattr(runtime.platform, "machine", lambda: "riscv64")
    assert cpu_name() == "riscv64"
    monkeypatch.setattr(runtime.platform, "machine", lambda: "")
    assert cpu_name() == "unknown"


def test_num_threads_sets_and_restores_the_setting():
    before = torch.get_num_threads()
    other = 2 if before == 1 else 1
    with num_threads(other):
        assert torch.get_num_threads() == other
        assert machine_info().threads == other
    assert torch.get_num_threads() == before
    with pytest.raises(RuntimeError):
        with num_threads(other):
            raise RuntimeError("inside")
    assert torch.get_num_threads() == before                  # restored after an error too
    with num_threads(None):
        assert torch.get_num_threads() == before
    with pytest.raises(ValueError, match="threads"):
        with num_threads(0):
            pass


def test_pin_seeds_everything_and_sets_the_threads():
    before = torch.get_num_threads()
    try:
        pin(seed=3, threads=1)
        assert torch.get_num_threads() == 1
        first = (torch.rand(3), np.random.rand(3), random.random())
        pin(seed=3, threads=1)
        again = (torch.rand(3), np.random.rand(3), random.random())
        assert torch.equal(first[0], again[0]) and np.array_equal(first[1], again[1])
        assert first[2] == again[2]
        pin(seed=4, threads=1)
        assert not torch.equal(first[0], torch.rand(3))
        with pytest.raises(ValueError, match="threads"):
            pin(seed=0, threads=0)
    finally:
        torch.set_num_threads(before)


def test_quiet_turns_progress_bars_off(monkeypatch):
    monkeypatch.setenv("DEPTHNOTES_QUIET", "1")
    items = [1, 2, 3]
    assert quiet() and progress(items) is items
    monkeypatch.setenv("DEPTHNOTES_QUIET", "0")
    assert not quiet()
    monkeypatch.delenv("DEPTHNOTES_QUIET")
    assert not quiet()
    assert list(progress(items, total=3, desc="x")) == items   # a tqdm bar around the same items
