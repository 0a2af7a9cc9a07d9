"""How long one generated token takes on a CPU, and why (chapter 7).

Decoding with a KV cache runs every block once per new token, one after the other, so the
time per token should grow linearly with depth: ms/token = a + b*L. This module measures it
honestly and returns plain data (dataclasses; plots live in the notebooks):

* ``measure_latency`` / ``measure_many`` — per-token decode time (KV cache, batch 1 by
  default, greedy, after warm-up) and prefill time, over several repeats, reported as median
  and min-max. Several models are measured round-robin (repeat 1 of each, then repeat 2 of
  each, ...), so a slow drift of the machine's load spreads over all of them instead of
  biasing one. Each result records the thread count, the torch version and the CPU.
* ``head_latency`` — the time of the parts that do not depend on depth: the token and
  position lookup, the final norm and the output head. At GPT-2's vocabulary (50,257) and a
  small width the head is many layers' worth of work and hides the depth effect.
* ``measure_rounds`` with ``read_probe`` — decoding one token reads every weight once, so on
  one core it cannot be faster than (weight bytes read per token) / (one core's read rate).
  The read rate is the decode's own roof: a matrix-vector product over a weight larger than
  twice the last-level cache, timed in the same rounds as the models (``read_probe_bytes``).
  The bound is computed in one place (``_bound_ms``); ``LatencyResult.bound_ms`` applies it.
  How its bytes are counted is ``BANDWIDTH_CONVENTION``. ``memory_bandwidth`` is a different
  convention (a copy's read + write bytes, ``COPY_CONVENTION``), kept for comparison.
* ``last_level_cache`` and ``cache_regime`` — the bound holds only for a model whose weights
  are well beyond the CPU's last-level cache ("memory"); well inside it they are read from
  cache ("cache"); near its size neither holds ("transition"). ``memory_resident`` is the
  first case, ``fit_memory_regime`` fits the line through those shapes only, and
  ``sweep_depths`` picks depths from the cache size so that at least three are memory-resident.
* ``peak_flops``, ``decode_flops``, ``arithmetic_intensity`` and ``ridge_point`` — the other
  half of one core's roofline: a decode step does ~2 FLOPs per 4-byte weight, far left of the
  ridge point (peak FLOP/s / read rate) where arithmetic would start to limit it.
* ``block_scaling`` — along a family of shapes, whether a block's time follows its bytes
  (bandwidth-bound) or stays put as the width changes (overhead-bound).
* ``budget_sweep_shapes`` — chapter 6's trained shapes and their losses (each at its best
  rate of chapter 6's grid, ``ch6_budget.basin_grid``), for timing the same shapes.
* ``fit_latency`` — the least-squares line ms/token = a + b*L, with R^2: the book's one line
  fit (``fitting.linear_fit``), whose ``intercept`` is a and ``slope`` is b;
  ``round_intercepts`` refits it round by round, to show how far the intercept moves.
* ``paired_ratios`` — comparisons made round by round (both timings share each round's load);
  chapter 7's verdicts judge them with the evidence library (``verdicts.ch7_latency``).
* ``machine_busy`` — when the load leaves no free core, a two-thread timing says nothing.

How a decode time is measured: one call ``model.generate(prompt, 1 + n)`` runs the prompt
(prefill, which also picks the first new token) and then ``n`` decode steps. A forward
pre-hook on the token embedding stamps the clock each time a step enters the stack, so each decode
step is timed from its start to the next step's start, everything included (embedding, every
block, the head, the argmax, the Python between them). A round's decode time is the median of
its ``n`` steps, which a single interruption by another process cannot move; the result's
``decode`` is the median (and min-max) of the rounds, and its ``samples`` are in round order,
so two results of one call can be compared round by round. The prefill time runs from the
call to the first decode step.

Run it from a shell: ``python -m depthnotes latency --help``.
"""

from __future__ import annotations

import math
import os
import statistics
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Callable, Iterable, Sequence

import torch

from depthnotes.core.checks import check_int, check_number
from depthnotes.core.config import ModelConfig
from depthnotes.core.fastpath import matmul
from depthnotes.core.fitting import LinearFit, linear_fit, log_log_fit
from depthnotes.core.model import Transformer
from depthnotes.core.params import count_block_params, count_params
from depthnotes.training.runtime import MachineInfo, machine_info, num_threads, progress


# -- plain data ---------------------------------------------------------------------------
@dataclass(frozen=True)
class Timing:
    """Repeated measurements of one quantity (milliseconds): median, min, max, all samples."""

    median: float
    min: float
    max: float
    samples: tuple[float, ...]

    @classmethod
    def of(cls, samples: Iterable[float]) -> "Timing":
        s = tuple(float(v) for v in samples)
        if not s:
            raise ValueError("a Timing needs at least one sample")
        return cls(statistics.median(s), min(s), max(s), s)

    @property
    def spread(self) -> float:
        """(max - min) / median: how noisy the repeats were."""
        return (self.max - self.min) / self.median if self.median > 0 else float("nan")


@dataclass(frozen=True)
class LatencyResult:
    """One shape's decode and prefill timings (milliseconds)."""

    n_layer: int
    d_model: int
    n_head: int
    vocab_size: int
    params: int               # all parameters
    weight_bytes: int         # bytes of weights read to decode one token (see decode_weight_bytes)
    batch: int
    prompt_len: int
    new_tokens: int
    decode: Timing            # ms per decode step (one new token for each of `batch` sequences);
                              # each sample is one round's median over its new_tokens steps
    prefill: Timing           # ms to run the prompt and pick the first token
    machine: MachineInfo

    @property
    def ms_per_token(self) -> float:
        """Median ms per decode step (batch 1: per generated token)."""
        return self.decode.median

    def bound_ms(self, bandwidth_gbs: float) -> float:
        """The memory-bandwidth bound on this shape's decode step at ``bandwidth_gbs``, in ms."""
        return _bound_ms(self.weight_bytes, bandwidth_gbs)

    def as_dict(self) -> dict:
        """Flat plain numbers, for tables and JSON."""
        d = asdict(self)
        d["decode_ms"], d["decode_min"], d["decode_max"] = (
            self.decode.median, self.decode.min, self.decode.max)
        d["prefill_ms"] = self.prefill.median
        d.update({f"machine_{k}": v for k, v in d.pop("machine").items()})
        del d["decode"], d["prefill"]
        return d


# -- the machine --------------------------------------------------------------------------
#: How every bound in the book counts bytes. A decode step's bytes are the weights it reads,
#: each counted once per token (writes of the small activations and the KV cache are left
#: out); the rate is one core's read rate in a matrix-vector product over a weight larger than
#: twice the last-level cache (``measure_rounds(read_probe=...)``): the decode's own kind of
#: traffic, reads only, measured in the same rounds as the decode.
BANDWIDTH_CONVENTION = ("one core; bytes counted once per token (each weight read once per "
                        "decode step); rate = one core's matrix-vector read rate over a weight "
                        "> 2x the last-level cache, bytes read per second")

#: How ``memory_bandwidth`` counts: a large copy reads and writes each byte, and both are
#: counted (the STREAM "copy" convention). It is not the decode's convention: a decode only
#: reads. A core whose reads and writes share one limit shows a copy rate close to its read
#: rate; one whose writes cost extra (write-allocate reads the destination first: three
#: transfers for two counted) shows less; the two can differ by a factor of up to about 2
#: either way, so the chapter measures both and prints their ratio rather than assuming one.
COPY_CONVENTION = "one core; a large copy's read + write bytes per second"

#: The last-level cache assumed when the operating system does not report one (32 MiB, a
#: common desktop and server L3 size); ``last_level_cache`` says when it is used.
FALLBACK_CACHE_BYTES = 32 * 2**20

_SYSFS_CACHE = Path("/sys/devices/system/cpu/cpu0/cache")


@dataclass(frozen=True)
class CacheSize:
    """The CPU's last-level cache: its size in bytes, its level, and where the size came from."""

    bytes: int
    level: int | None
    source: str   # "sysfs", "sysconf", "sysctl", "assumed" (FALLBACK_CACHE_BYTES), "measured"
    # with "measured" (``usable_cache``): the cache as first found; and each size it probed,
    # (bytes, its fastest read rate over memory's fastest)
    reported: "CacheSize | None" = None
    probes: tuple[tuple[int, float], ...] = ()

    @property
    def megabytes(self) -> float:
        return self.bytes / 1e6

    @property
    def said(self) -> str:
        """Where the size came from, in words, with the probes behind a measured one."""
        tried = ", ".join(f"{b / 1e6:.0f} MB at {x:.2f}x" for b, x in self.probes)
        if self.source == "measured":
            r = self.reported
            of = ("assumed (the operating system reported none)" if r.source == "assumed"
                  else "the operating system reports")
            return (f"measured: of the {r.megabytes:.1f} MB {of}, one core reads "
                    f"{self.megabytes:.1f} MB at least {FAST_READ_FACTOR:g} times as fast as "
                    f"a matrix from memory (read rate over memory's: {tried})")
        where = ("assumed: the operating system did not report it" if self.source == "assumed"
                 else f"level {self.level}, as the operating system reports it")
        return where + (f"; read rate over memory's: {tried}" if tried else "")


def last_level_cache(sysfs: str | os.PathLike = _SYSFS_CACHE) -> CacheSize:
    """The size of the largest data cache of CPU 0, as the operating system reports it.

    Tried in order: Linux's ``/sys/devices/system/cpu/cpu0/cache/index*/`` (``level``,
    ``type``, ``size``); ``os.sysconf("SC_LEVEL3_CACHE_SIZE")`` and its level 2 (glibc);
    macOS's ``sysctl hw.l3cachesize`` / ``hw.l2cachesize``. When none answers, the size is
    ``FALLBACK_CACHE_BYTES`` with ``source="assumed"``, so a page can say it guessed.
    """
    found = _cache_from_sysfs(Path(sysfs))
    if found is None:
        found = _cache_from_sysconf()
    if found is None and sys.platform == "darwin":
        found = _cache_from_sysctl()
    return found or CacheSize(FALLBACK_CACHE_BYTES, None, "assumed")


#: ``usable_cache``: a core reads a matrix "fast" when it reads it at least this many times as
#: fast as a matrix from memory (``read_probe_bytes`` of the reported cache), judged on the
#: fastest of ``USABLE_ROUNDS`` rounds of each (each round times both, one after the other).
FAST_READ_FACTOR = 1.5
USABLE_ROUNDS = 3
#: ``usable_cache`` halves its probe down to this size at the least.
USABLE_MIN_BYTES = 2**20


def usable_cache(cache: CacheSize,
                 read_gbs: Callable[[int], float] | None = None) -> CacheSize:
    """The part of the last-level cache one core reads fast, measured: ``cache`` itself when
    the core reads a matrix of half its size ``FAST_READ_FACTOR`` times as fast as a matrix
    from memory (a laptop's usual case); otherwise the largest of a quarter, an eighth, ... of
    it (not below ``USABLE_MIN_BYTES``) that it reads that fast, as a ``CacheSize`` with
    ``source`` "measured" and the reported one in ``reported``. When no size down to
    ``USABLE_MIN_BYTES`` reads that fast, the probe cannot tell a cache from memory on this
    machine and the reported size is kept. Either way ``probes`` holds each size tried with
    the ratio of its read rate to memory's.

    Why: on a server CPU the last-level cache is shared by many cores (and, on a cloud
    machine, with other tenants); under that sharing one core may read only part of it fast.
    On one of this project's CI machines the system reports 273 MB, and one core reads a
    128 MiB matrix at 1.1 times its rate from memory and a 64 MiB one at 2.2 times: sized from
    the reported number, chapter 7's "memory-resident" models would hold 2 GB of weights and
    take minutes to time, for what a 300 MB model shows. The memory threshold the chapter
    then uses, ``MEMORY_MARGIN`` x the usable size, is the first halving measured not fast.

    ``read_gbs(nbytes)`` is one core's read rate in GB/s over a matrix of ``nbytes`` in the
    decode's layout (default: ``_ReadProbe``, the median of its products); tests pass their
    own.
    """
    if not isinstance(cache, CacheSize):
        raise TypeError(f"cache must be a CacheSize (last_level_cache()), got "
                        f"{type(cache).__name__}")
    if read_gbs is not None and not callable(read_gbs):
        raise TypeError(f"read_gbs must be a function of a size in bytes returning GB/s, got "
                        f"{type(read_gbs).__name__}")
    built: dict[int, _ReadProbe] = {}               # each size's matrix, written once

    def probe_gbs(nbytes: int) -> float:                # one core, as every probe here
        if nbytes not in built:
            built[nbytes] = _ReadProbe(nbytes)
        with num_threads(1):
            return built[nbytes].gbs()

    rate = read_gbs or probe_gbs
    memory = read_probe_bytes(cache)
    probes = []

    def fast(size: int) -> bool:
        # the fastest of the rounds for each (a busy machine only slows a read), timed in
        # turn so that both see the same load
        pairs = [(rate(size), rate(memory)) for _ in range(USABLE_ROUNDS)]
        probes.append((size, max(p[0] for p in pairs) / max(p[1] for p in pairs)))
        return probes[-1][1] >= FAST_READ_FACTOR

    size = cache.bytes // 2
    if fast(size):
        return replace(cache, probes=tuple(probes))
    while size // 2 >= USABLE_MIN_BYTES:
        size //= 2
        if fast(size):
            return CacheSize(size, cache.level, "measured", reported=cache,
                             probes=tuple(probes))
    return replace(cache, probes=tuple(probes))      # no size told apart from memory


def _cache_from_sysfs(root: Path) -> CacheSize | None:
    best = None
    for index in sorted(root.glob("index*")):
        try:
            kind = (index / "type").read_text().strip()
            level = int((index / "level").read_text())
            size = _parse_size((index / "size").read_text())
        except (OSError, ValueError):
            continue
        if kind in ("Data", "Unified") and size and (best is None or level > best.level):
            best = CacheSize(size, level, "sysfs")
    return best


def _parse_size(text: str) -> int:
    """Bytes of a sysfs cache size such as ``32768K``, ``1M`` or ``512``."""
    text = text.strip().upper()
    scale = {"K": 2**10, "M": 2**20, "G": 2**30}.get(text[-1:], 1)
    return int(text.rstrip("KMG")) * scale


def _cache_from_sysconf() -> CacheSize | None:
    for level in (3, 2):
        name = f"SC_LEVEL{level}_CACHE_SIZE"
        if name in getattr(os, "sysconf_names", {}):     # no sysconf on Windows
            try:
                size = os.sysconf(name)
            except (OSError, ValueError):
                continue
            if size > 0:
                return CacheSize(size, level, "sysconf")
    return None


def _cache_from_sysctl() -> CacheSize | None:
    for level in (3, 2):
        try:
            out = subprocess.run(["sysctl", "-n", f"hw.l{level}cachesize"], capture_output=True,
                                 text=True, timeout=5).stdout.strip()
            size = int(out)
        except (OSError, ValueError, subprocess.SubprocessError):
            continue
        if size > 0:
            return CacheSize(size, level, "sysctl")
    return None


#: ``cache_regime``'s margins, as multiples of the last-level cache: weights above
#: ``MEMORY_MARGIN`` x cache are read from memory, below ``CACHE_MARGIN`` x cache from cache,
#: and in between neither rule holds ("transition"): the L3 is shared with other cores and
#: programs, may be a victim cache (holding only what the L2 evicted), and replaces lines by
#: a policy that is not strict LRU, so weights near its size are partly in cache.
MEMORY_MARGIN = 2.0
CACHE_MARGIN = 0.5

REGIMES = ("cache", "transition", "memory")


def _cache_bytes(cache: CacheSize | int) -> int:
    size = cache.bytes if isinstance(cache, CacheSize) else cache
    check_int("cache bytes", size, 1)
    return size


def cache_regime(weight_bytes: int, cache: CacheSize | int) -> str:
    """Where one decode step's weights are read from, by the book's one rule: ``"memory"`` when
    they exceed ``MEMORY_MARGIN`` x the last-level cache (streaming more than the cache holds,
    in the same order every token, evicts each weight before its next use), ``"cache"`` when
    they are below ``CACHE_MARGIN`` x the cache, ``"transition"`` in between (neither regime:
    such depths are shown but not fitted)."""
    size = _cache_bytes(cache)
    check_int("weight_bytes", weight_bytes, 0)
    if weight_bytes > MEMORY_MARGIN * size:
        return "memory"
    if weight_bytes < CACHE_MARGIN * size:
        return "cache"
    return "transition"


def memory_resident(weight_bytes: int, cache: CacheSize | int) -> bool:
    """True when ``cache_regime`` says ``"memory"``: where the memory-bound applies and the
    chapter fits its line."""
    return cache_regime(weight_bytes, cache) == "memory"


def first_memory_depth(config: ModelConfig, cache: CacheSize | int) -> int:
    """The smallest depth at ``config``'s width whose weights are memory-resident."""
    size = _cache_bytes(cache)
    fixed = decode_weight_bytes(config.replace(n_layer=1)) - decode_block_bytes(config)
    need = MEMORY_MARGIN * size - fixed            # bytes the blocks must exceed
    L = max(1, math.floor(need / decode_block_bytes(config)) + 1)
    while not memory_resident(decode_weight_bytes(config.replace(n_layer=L)), size):
        L += 1                                    # guards the rounding above
    return L


def sweep_depths(config: ModelConfig, cache: CacheSize | int,
                 memory_factors: Sequence[int] = (1, 2, 4)) -> list[int]:
    """Depths for a depth sweep at ``config``'s width, chosen from the cache size: powers of
    two below the first memory-resident depth L_m (cache-resident and transition points, for
    the picture) and L_m times each of ``memory_factors`` (the fitted points; three by
    default, spanning a factor 4). With a 32 MiB cache at d = 512 that is 1, 2, 4, 6, 12, 24;
    with a 128 MiB cache, 1, 2, 4, 8, 16, 22, 44, 88: the sweep takes about four times as long
    and its deepest model holds 1.1 GB of weights (``measure_rounds`` then builds the largest
    ones afresh each round instead of keeping them all)."""
    L_m = first_memory_depth(config, cache)
    below = [2**k for k in range(L_m.bit_length()) if 2**k < L_m]
    return below + [L_m * f for f in memory_factors]


def read_probe_bytes(cache: CacheSize | int) -> int:
    """Bytes of the weight the read-rate probe streams: twice the memory regime's threshold
    (2 x ``MEMORY_MARGIN`` x cache), so that no part of it is read from cache. A measured
    cache (``usable_cache``) sizes the probe from the whole reported cache: what one core
    does not read fast is still cache, read more slowly, not memory."""
    if isinstance(cache, CacheSize) and cache.reported is not None:
        cache = cache.reported                    # a measured part is never larger
    return int(2 * MEMORY_MARGIN * _cache_bytes(cache))


def memory_bandwidth(megabytes: int = 256, repeats: int = 5, threads: int | None = None) -> float:
    """One core's (at the default one thread) copy rate in GB/s, from copying a large fp32 array.

    A copy reads and writes every byte, so bytes moved = 2 x size (``COPY_CONVENTION``, the
    STREAM "copy" benchmark's; not the decode's ``BANDWIDTH_CONVENTION``, which counts reads
    only). The array should be much larger than the last-level cache. Returns the best of
    ``repeats``, measured once: under load it is one moment's rate, not the machine's.
    """
    check_int("megabytes", megabytes, 1)
    check_int("repeats", repeats, 1)
    with num_threads(threads):
        src = torch.ones(megabytes * 2**20 // 4)
        dst = torch.empty_like(src)
        dst.copy_(src)  # touch both arrays once
        best = float("inf")
        for _ in range(repeats):
            t0 = time.perf_counter()
            dst.copy_(src)
            best = min(best, time.perf_counter() - t0)
    return 2 * src.numel() * 4 / best / 1e9


def peak_flops(n: int = 1024, repeats: int = 5, threads: int | None = None) -> float:
    """This machine's compute roof in GFLOP/s: the best of ``repeats`` fp32 products of two
    ``n x n`` matrices (2 n^3 FLOPs each). A square product reuses each number ~n times from
    cache, so memory does not limit it: it runs near the speed of the arithmetic units."""
    check_int("n", n, 16)
    check_int("repeats", repeats, 1)
    gen = torch.Generator().manual_seed(0)
    a, b = torch.randn(n, n, generator=gen), torch.randn(n, n, generator=gen)
    with num_threads(threads):
        a @ b  # warm-up
        best = min(_timed(lambda: a @ b) for _ in range(repeats)) / 1e3
    return 2 * n**3 / best / 1e9


def ridge_point(peak_gflops: float, bandwidth_gbs: float) -> float:
    """FLOPs per byte above which a computation is limited by arithmetic rather than memory:
    peak FLOP/s / bandwidth. The ridge is in the bandwidth's convention: with the decode's read
    rate (``BANDWIDTH_CONVENTION``) it is in FLOPs per byte read."""
    check_number("peak_gflops", peak_gflops, low=0.0, low_open=True)
    check_number("bandwidth_gbs", bandwidth_gbs, low=0.0, low_open=True)
    return peak_gflops / bandwidth_gbs


def roof_gflops(intensity: float, peak_gflops: float, bandwidth_gbs: float) -> float:
    """The roofline: the highest GFLOP/s a computation of ``intensity`` FLOPs per byte can
    reach, min(peak, intensity x bandwidth)."""
    return min(peak_gflops, intensity * bandwidth_gbs)


def decode_weight_bytes(config: ModelConfig, bytes_per_param: int = 4) -> int:
    """Bytes of weights one decode step reads: every block application and the final norm,
    the whole ``[vocab, d]`` head (tied or not), and one row each of the token and position
    tables. A weight-shared ("looped") block is counted once per application: the step runs
    it L times, and whether the repeats come from cache is for the measurement to show."""
    c = count_params(config)
    blocks = c.n_layer * c.per_block.total          # applications, not stored blocks
    head = config.vocab_size * config.d_model
    lookups = 2 * config.d_model
    return (blocks + c.final_norm + head + lookups) * bytes_per_param


def decode_kv_bytes(config: ModelConfig, positions: int, bytes_per_value: int = 4) -> int:
    """Bytes of KV cache one decode step reads with ``positions`` positions cached: every
    block application keeps a key and a value of width d per position, 2 L t d values.

    At equal parameters P ~ 12 L d^2, d ~ sqrt(P / 12 L), so the cache grows like L d ~ sqrt(L):
    the deep end of an equal-P family reads more cache per token whatever the runtime, the
    memory side of depth on a CPU next to the weights (``decode_weight_bytes``), which are the
    same for every shape of the family."""
    check_int("positions", positions, 0)
    check_int("bytes_per_value", bytes_per_value, 1)
    return 2 * config.n_layer * positions * config.d_model * bytes_per_value


def roofline_ms(config: ModelConfig, bandwidth_gbs: float) -> float:
    """The memory-bandwidth bound on one decode step of ``config``, in ms."""
    return _bound_ms(decode_weight_bytes(config), bandwidth_gbs)


def block_bound_ms(config: ModelConfig, bandwidth_gbs: float) -> float:
    """The part of one block's time that streaming its weights at ``bandwidth_gbs`` takes, ms:
    the first of the two parts the chapter splits a memory-resident block's time into (the
    other is the dispatch cost per block, measured on tiny widths)."""
    return _bound_ms(decode_block_bytes(config), bandwidth_gbs)


def modelled_ms_per_token(config: ModelConfig, bandwidth_gbs: float, dispatch_ms: float,
                          fixed_ms: float) -> float:
    """A decode step's time by the chapter's model, in ms: its weight bytes streamed at
    ``bandwidth_gbs`` (``roofline_ms``), plus ``dispatch_ms`` per block and ``fixed_ms`` per
    token (what a width-64 stack, whose bytes are negligible, takes per block and at zero
    blocks). A model's number, not a measurement: it leaves out what neither streaming nor
    dispatch accounts for, and it reads every weight at the memory rate, so it overstates
    the streaming time of weights that fit in the cache. The two measured terms are taken
    as measured, below zero too (a busy machine can tilt a two-point line), never refused:
    a timing on a busy machine does not stop a page."""
    check_number("dispatch_ms", dispatch_ms)   # a fitted slope
    check_number("fixed_ms", fixed_ms)         # an extrapolation to zero blocks
    return roofline_ms(config, bandwidth_gbs) + config.n_layer * dispatch_ms + fixed_ms


def decode_flops(config: ModelConfig, batch: int = 1) -> int:
    """FLOPs of one decode step's products with the weights: a multiply and an add per weight
    per sequence, over every block's attention and FFN matrices and the ``[vocab, d]`` head.

    Left out: attention over the KV cache, 4 t d per block with t cached positions, which is
    t / (6 d) of the block's 24 d^2 (``attention_flop_share``: 1.3 % at d = 512 and t = 40,
    the chapter's longest decode; 10 % at its 320-token context); and biases, norms and
    activations (O(d) each)."""
    check_int("batch", batch, 1)
    weights = (config.n_layer * count_block_params(config).weights
               + config.vocab_size * config.d_model)
    return 2 * weights * batch


def attention_flop_share(d_model: int, positions: int) -> float:
    """FLOPs of one block's attention over ``positions`` cached positions (4 t d: scores and
    weighted sum) relative to its weight products (24 d^2): what ``decode_flops`` leaves out."""
    check_int("d_model", d_model, 1)
    check_int("positions", positions, 0)
    return 4 * positions * d_model / (24 * d_model**2)


def arithmetic_intensity(config: ModelConfig, batch: int = 1) -> float:
    """FLOPs per byte of one decode step: ``decode_flops`` / ``decode_weight_bytes``. About
    2 FLOPs per 4-byte weight at batch 1 (0.5), growing with the batch, which reuses each
    weight it reads once for every sequence."""
    return decode_flops(config, batch) / decode_weight_bytes(config)


def decode_block_bytes(config: ModelConfig, bytes_per_param: int = 4) -> int:
    """Bytes of one block's weights, biases and norms: what one more block adds to a step."""
    return count_block_params(config).total * bytes_per_param


def _bound_ms(weight_bytes: int, bandwidth_gbs: float) -> float:
    """The bound itself: the time to stream ``weight_bytes`` once at ``bandwidth_gbs``, in ms."""
    check_number("bandwidth_gbs", bandwidth_gbs, low=0.0, low_open=True)
    return weight_bytes / (bandwidth_gbs * 1e9) * 1e3


# -- measuring ----------------------------------------------------------------------------
def _timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return (time.perf_counter() - t0) * 1e3


#: ``measure_rounds`` keeps the models it builds from configs while their weights total at
#: most this many bytes; the rest are built for their turn in each round and freed after it,
#: so a long sweep needs memory for the kept ones plus one more, not for all at once.
RESIDENT_BYTES_CAP = 2**30


@dataclass(frozen=True)
class Rounds:
    """What one ``measure_rounds`` call measured: a result per model and, with a read probe,
    one core's read rate in GB/s (one sample per round, in the same rounds)."""

    results: list[LatencyResult]
    read_gbs: Timing | None
    read_probe_bytes: int | None


def measure_rounds(models: Sequence[Transformer | ModelConfig], *, prompt_len: int = 16,
                   new_tokens: int = 32, repeats: int = 5, warmup: int = 1, batch: int = 1,
                   seed: int = 0, threads: int | None = None, read_probe: int | None = None,
                   resident_cap: int = RESIDENT_BYTES_CAP,
                   desc: str | None = "latency") -> Rounds:
    """Decode and prefill timings of several models, measured round-robin.

    ``models`` are ``Transformer``s or ``ModelConfig``s (built with ``seed``, random init: the
    values of the weights do not change the time). Each model decodes ``new_tokens`` tokens
    greedily after a random prompt of ``prompt_len`` tokens, ``batch`` sequences at once.
    ``warmup`` untimed runs first, each a prefill and one decode step (every operation a timed
    call runs, at its shapes; further steps would only repeat them); then ``repeats`` timed
    rounds over all models. Configs are
    built once and kept while their weights total at most ``resident_cap`` bytes; the others
    are rebuilt (same seed, same weights) for each round and freed after their turn.

    With ``read_probe`` (bytes; ``read_probe_bytes(cache)``), each round also times a
    matrix-vector product over an fp32 weight of that size in the decode's layout (one row
    times a ``[d, n]`` matrix) and records bytes read per second: one core's read rate, the
    decode's own roof, under the same load as the decodes of that round.
    """
    check_int("prompt_len", prompt_len, 1)
    check_int("new_tokens", new_tokens, 1)
    check_int("repeats", repeats, 1)
    check_int("warmup", warmup, 0)
    check_int("batch", batch, 1)
    check_int("resident_cap", resident_cap, 0)
    if read_probe is not None:
        check_int("read_probe", read_probe, 4096)
    if not models:
        raise ValueError("models is empty: give at least one Transformer or ModelConfig")
    configs = []
    for m in models:
        if not isinstance(m, (Transformer, ModelConfig)):
            raise TypeError(f"models must hold Transformer or ModelConfig, got {type(m).__name__}")
        c = m if isinstance(m, ModelConfig) else m.config
        if prompt_len + new_tokens + 1 > c.context:
            raise ValueError(f"prompt_len + new_tokens + 1 = {prompt_len + new_tokens + 1} exceeds "
                             f"context={c.context} of {_shape(c)}")
        configs.append(c)
    kept: dict[int, Transformer] = {i: m.eval() for i, m in enumerate(models)
                                    if isinstance(m, Transformer)}
    budget = resident_cap
    for i, c in enumerate(configs):          # keep configs in order while they fit the cap
        if i not in kept and count_params(c).total * 4 <= budget:
            kept[i] = Transformer(c, seed=seed).eval()
            budget -= count_params(c).total * 4

    def model(i: int) -> Transformer:
        return kept[i] if i in kept else Transformer(configs[i], seed=seed).eval()

    gen = torch.Generator().manual_seed(seed)
    prompts = [torch.randint(0, c.vocab_size, (batch, prompt_len), generator=gen)
               for c in configs]
    probe = _ReadProbe(read_probe) if read_probe is not None else None
    prefill = [[] for _ in configs]
    decode = [[] for _ in configs]
    read = []
    with num_threads(threads):
        info = machine_info()
        for i, p in enumerate(prompts):
            m = model(i)
            for _ in range(warmup):
                m.generate(p, 2)              # the prefill and one decode step
            del m
        rounds = progress(range(repeats), total=repeats, desc=desc) if desc else range(repeats)
        for _ in rounds:
            for i, p in enumerate(prompts):
                m = model(i)
                pre, steps = _time_generate(m, p, new_tokens)
                del m                         # a rebuilt model is freed before the next
                prefill[i].append(pre)
                decode[i].append(statistics.median(steps))
            if probe is not None:
                read.append(probe.gbs())
    results = [LatencyResult(
        n_layer=c.n_layer, d_model=c.d_model, n_head=c.n_head,
        vocab_size=c.vocab_size, params=count_params(c).total,
        weight_bytes=decode_weight_bytes(c), batch=batch, prompt_len=prompt_len,
        new_tokens=new_tokens, decode=Timing.of(dec), prefill=Timing.of(pre), machine=info)
        for c, dec, pre in zip(configs, decode, prefill)]
    return Rounds(results, Timing.of(read) if read else None, read_probe)


def measure_many(models: Sequence[Transformer | ModelConfig], **kw) -> list[LatencyResult]:
    """``measure_rounds(models, **kw).results``: the timings without the read probe's rate."""
    return measure_rounds(models, **kw).results


class _ReadProbe:
    """A matrix-vector product over ``nbytes`` of fp32 weight, in the decode's layout."""

    CALLS = 5

    def __init__(self, nbytes: int, d: int = 512):
        cols = max(1, nbytes // 4 // d)
        self.w = torch.ones(d, cols)                  # [d, n]: written once, all pages touched
        self.x = torch.ones(1, d)                     # [1, d]
        self.nbytes = self.w.numel() * 4

    @torch.inference_mode()
    def gbs(self) -> float:
        """Bytes read per second, in GB/s, from the median of ``CALLS`` products."""
        times = [_timed(lambda: matmul(self.x, self.w)) for _ in range(self.CALLS)]   # ms
        return self.nbytes / (statistics.median(times) / 1e3) / 1e9


def _time_generate(model: Transformer, prompt: torch.Tensor, new_tokens: int):
    """One ``model.generate(prompt, 1 + new_tokens)``, timed from inside: a hook on the token
    embedding stamps the clock each time a step enters the model (once per step, also when a
    weight-shared block runs several times in it). Returns the prefill time (call
    start to the first decode step) and the ``new_tokens`` decode-step times, each from one
    step's entry to the next one's (the last ends when ``generate`` returns), in ms."""
    stamps: list[float] = []
    handle = model.wte.register_forward_pre_hook(lambda mod, args: stamps.append(
        time.perf_counter()))
    try:
        t0 = time.perf_counter()
        model.generate(prompt, 1 + new_tokens)
        stamps.append(time.perf_counter())
    finally:
        handle.remove()
    # stamps: [prefill enters, step 1 enters, ..., step n enters, generate returned]
    if len(stamps) != new_tokens + 2:
        raise RuntimeError(f"expected {new_tokens + 2} time stamps, got {len(stamps)}")
    prefill = (stamps[1] - t0) * 1e3
    steps = [(b - a) * 1e3 for a, b in zip(stamps[1:], stamps[2:])]
    return prefill, steps


def measure_latency(model: Transformer | ModelConfig, **kw) -> LatencyResult:
    """``measure_many`` for one model (same keyword arguments)."""
    return measure_many([model], **kw)[0]


@torch.inference_mode()
def head_latency(model: Transformer | ModelConfig, *, calls: int = 20, repeats: int = 5,
                 batch: int = 1, seed: int = 0, threads: int | None = None) -> Timing:
    """ms for the depth-independent part of one decode step: look up one token and its
    position, apply the final norm (pre-norm) and the output head, take the argmax.

    Subtract its median from a decode time to get the time spent in the blocks.
    """
    check_int("calls", calls, 1)
    check_int("repeats", repeats, 1)
    if isinstance(model, ModelConfig):
        # only the embeddings and head matter here: build the model without blocks
        model = Transformer(model.replace(n_layer=1, n_unique_blocks=None), seed=seed)
    idx = torch.zeros(batch, 1, dtype=torch.long)

    def step():
        x = model.embed(idx, start=0)[:, -1, :]
        return model.logits(x).argmax(dim=-1)

    with num_threads(threads):
        step()
        samples = [_timed(lambda: [step() for _ in range(calls)]) / calls for _ in range(repeats)]
    return Timing.of(samples)


def fit_latency(n_layers: Sequence[float], ms: Sequence[float]) -> LinearFit:
    """The least-squares line ms = a + b * L through the points, and its R^2.

    The book's one line fit: ``intercept`` is a (ms every token costs whatever the depth:
    embedding, head, overhead), ``slope`` is b (ms per block), ``predict(L)`` the line."""
    return linear_fit(n_layers, ms)


def fit_memory_regime(results: Sequence[LatencyResult], cache: CacheSize | int) -> LinearFit:
    """``fit_latency`` through the results whose weights exceed the cache (``memory_resident``).

    Shapes that fit in cache read their weights faster than memory delivers them, so their
    points sit below the memory regime's line; fitting through them tilts the line and can
    make its intercept negative. Needs two memory-resident depths."""
    kept = _memory_results(results, cache)
    return fit_latency([r.n_layer for r in kept], [r.decode.median for r in kept])


def _memory_results(results: Sequence[LatencyResult], cache) -> list[LatencyResult]:
    kept = [r for r in results if memory_resident(r.weight_bytes, cache)]
    if len({r.n_layer for r in kept}) < 2:
        size = _cache_bytes(cache)
        raise ValueError(f"fit_memory_regime needs results of >= 2 depths whose weights exceed "
                         f"{MEMORY_MARGIN:g} x the cache ({MEMORY_MARGIN * size / 1e6:.1f} MB); "
                         f"got {len(kept)}: add deeper shapes (see sweep_depths)")
    return kept


def round_intercepts(results: Sequence[LatencyResult], cache: CacheSize | int) -> Timing:
    """The memory-regime line's intercept fitted round by round (each round's median step
    times of one ``measure_rounds`` call), as a ``Timing``: its min-max is how far one round's
    load moves the intercept, the honest error bar of a number read off the far end of a line."""
    kept = _memory_results(results, cache)
    rounds = {len(r.decode.samples) for r in kept}
    if len(rounds) != 1:
        raise ValueError(f"results must come from one measure_rounds call (same number of "
                         f"rounds), got round counts {sorted(rounds)}")
    L = [r.n_layer for r in kept]
    return Timing.of(fit_latency(L, [r.decode.samples[k] for r in kept]).intercept
                     for k in range(rounds.pop()))


# -- comparing timings under a changing load -------------------------------------------------
def paired_ratios(a: Timing, b: Timing) -> Timing:
    """a / b round by round, for two timings of one ``measure_rounds`` call (or of calls made
    in the same rounds): each round's load is shared by both, so it cancels in the ratio, and
    the ratios' min-max is the comparison's spread."""
    if len(a.samples) != len(b.samples):
        raise ValueError(f"paired timings need the same number of rounds, got "
                         f"{len(a.samples)} and {len(b.samples)}")
    return Timing.of(x / y for x, y in zip(a.samples, b.samples))


#: How many times a page measures a timing comparison before it reports what is still
#: within noise (``measure_until_settled``).
ATTEMPTS = 3


@dataclass(frozen=True)
class Settled:
    """What ``measure_until_settled`` returns: the last measurement, the comparisons that were
    still unsettled in it (empty when every one was told apart), and how many passes it took."""

    result: object
    unsettled: tuple[str, ...]
    passes: int


def measure_until_settled(measure, unsettled, attempts: int = ATTEMPTS) -> Settled:
    """Run ``measure()`` again while ``unsettled(result)`` names comparisons that the rounds
    could not tell apart, at most ``attempts`` times.

    A timing taken while other programs run can blur a comparison that a quiet machine shows
    plainly; measuring again is the remedy, and what stays blurred after ``attempts`` passes is
    reported (within noise), never raised: the page's verdict rule then reads it as such."""
    check_int("attempts", attempts, 1)
    for passes in range(1, attempts + 1):
        result = measure()
        problems = tuple(unsettled(result))
        if not problems:
            break
    return Settled(result, problems, passes)


def machine_busy(info: MachineInfo, cores: int | None = None) -> bool:
    """True when the 1-minute load average is at least ``cores`` - 1 (``os.cpu_count()`` by
    default): no second core is free, so a two-thread timing measures the other programs'
    scheduling, not the split. An unknown load counts as not busy."""
    cores = cores or os.cpu_count() or 1
    return info.load_average is not None and info.load_average >= cores - 1


#: ``block_scaling``'s cut: a family whose time per block grows more slowly than the square
#: root of its bytes per block (exponent < 0.5) is overhead-bound, else bandwidth-bound.
OVERHEAD_EXPONENT = 0.5


@dataclass(frozen=True)
class BlockScaling:
    """How a family's time per block follows its bytes per block: ms ~ bytes^exponent."""

    exponent: float   # 0: a block costs the same at any width; 1: time proportional to bytes
    regime: str       # "overhead-bound" (exponent < OVERHEAD_EXPONENT) or "bandwidth-bound"
    ms_per_block: tuple[float, ...]
    bytes_per_block: tuple[int, ...]


def block_scaling(configs: Sequence[ModelConfig], ms_per_token: Sequence[float]) -> BlockScaling:
    """Which regime a family of shapes (different L and d) decodes in, by a stated rule.

    Each shape's time per block is its ms/token divided by L; its bytes per block are
    ``decode_block_bytes``. The exponent is the slope of log(time per block) against
    log(bytes per block) across the family (``fitting.log_log_fit``). A block whose time is
    set by a fixed cost per operation (dispatching its small kernels) costs about the same at
    any width: exponent near 0, *overhead-bound*. A block whose time is set by streaming its
    weights costs time in proportion to them: exponent near 1, *bandwidth-bound*. The cut is
    ``OVERHEAD_EXPONENT``. Dividing by L leaves each token's fixed cost in the per-block time,
    which nudges the exponent of an overhead-bound family up, not down."""
    if len(configs) != len(ms_per_token):
        raise ValueError(f"configs and ms_per_token must have the same length, got "
                         f"{len(configs)} and {len(ms_per_token)}")
    per_block = tuple(float(m) / c.n_layer for c, m in zip(configs, ms_per_token))
    nbytes = tuple(decode_block_bytes(c) for c in configs)
    if min(per_block) <= 0:
        raise ValueError(f"ms_per_token must be > 0, got {list(ms_per_token)}")
    fit = log_log_fit(nbytes, per_block)
    regime = "overhead-bound" if fit.slope < OVERHEAD_EXPONENT else "bandwidth-bound"
    return BlockScaling(fit.slope, regime, per_block, nbytes)


# -- reporting ----------------------------------------------------------------------------
def format_table(results: Sequence[LatencyResult], bandwidth_gbs: float | None = None,
                 head: Sequence[Timing | None] | None = None) -> str:
    """A plain-text table of results; with a bandwidth (one core's read rate, in the
    convention of ``BANDWIDTH_CONVENTION``), each decode time next to its one-core bound; with
    head timings, the split of each decode step into head and blocks."""
    cols = ["L", "d", "heads", "vocab", "params", "batch", "prompt",
            "decode ms/step (min-max)", "prefill ms"]
    if head is not None:
        cols += ["head ms", "blocks ms"]
    if bandwidth_gbs:
        cols += ["bound ms", "x bound"]
    rows = []
    for i, r in enumerate(results):
        row = [r.n_layer, r.d_model, r.n_head, r.vocab_size, f"{r.params / 1e6:.1f}M", r.batch,
               r.prompt_len, f"{r.decode.median:.2f} ({r.decode.min:.2f}-{r.decode.max:.2f})",
               f"{r.prefill.median:.1f}"]
        if head is not None:
            h = head[i]
            row += ([f"{h.median:.2f}", f"{r.decode.median - h.median:.2f}"] if h else ["", ""])
        if bandwidth_gbs:
            bound = r.bound_ms(bandwidth_gbs)
            row += [f"{bound:.2f}", f"{r.decode.median / bound:.2f}"]
        rows.append([str(v) for v in row])
    widths = [max(len(c), *(len(row[j]) for row in rows)) for j, c in enumerate(cols)]
    line = lambda cells: "  ".join(c.rjust(w) for c, w in zip(cells, widths))  # noqa: E731
    out = [line(cols), line(["-" * w for w in widths])] + [line(row) for row in rows]
    if results:
        m = results[0].machine
        out.append(f"torch {m.torch_version}, {m.threads} threads, {m.cpu}, "
                   f"load average {m.load_average:.2f}" if m.load_average is not None else
                   f"torch {m.torch_version}, {m.threads} threads, {m.cpu}")
    if bandwidth_gbs:
        out.append(f"read rate {bandwidth_gbs:.1f} GB/s; bound = weight bytes read per token "
                   f"/ read rate ({BANDWIDTH_CONVENTION})")
    return "\n".join(out)


# -- helpers ------------------------------------------------------------------------------
def _shape(c: ModelConfig) -> str:
    return f"(n_layer={c.n_layer}, d_model={c.d_model}, n_head={c.n_head})"
