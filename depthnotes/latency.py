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
* ``memory_bandwidth`` and ``roofline_ms`` — decoding one token reads every weight once, so
  it cannot be faster than (weight bytes read per token) / (memory bandwidth). That bound is
  computed in one place (``_bound_ms``); ``LatencyResult.bound_ms`` applies it to a result.
  How its bytes are counted is ``BANDWIDTH_CONVENTION``.
* ``last_level_cache`` and ``memory_resident`` — the bound holds only for a model whose
  weights do not fit in the CPU's last-level cache; smaller ones are read from cache, faster.
  ``fit_memory_regime`` fits the line through the memory-resident shapes only.
* ``peak_flops``, ``decode_flops``, ``arithmetic_intensity`` and ``ridge_point`` — the other
  half of the roofline: a decode step does ~2 FLOPs per 4-byte weight, far left of the ridge
  point (peak FLOP/s / bandwidth) where arithmetic would start to limit it.
* ``block_scaling`` — along a family of shapes, whether a block's time follows its bytes
  (bandwidth-bound) or stays put as the width changes (overhead-bound).
* ``budget_sweep_shapes`` — chapter 6's trained shapes and their losses, read from its record
  (``BUDGET_SWEEP_RECORD``), for timing the same shapes.
* ``fit_latency`` — the least-squares line ms/token = a + b*L, with R^2: the book's one line
  fit (``fitting.linear_fit``), whose ``intercept`` is a and ``slope`` is b.

How a decode time is measured: one call ``model.generate(prompt, 1 + n)`` runs the prompt
(prefill, which also picks the first new token) and then ``n`` decode steps. A forward
pre-hook on the first block stamps the clock each time a step enters the stack, so each decode
step is timed from its start to the next step's start, everything included (embedding, every
block, the head, the argmax, the Python between them). A round's decode time is the median of
its ``n`` steps, which a single interruption by another process cannot move; the result's
``decode`` is the median (and min-max) of the rounds. The prefill time runs from the call to
the first decode step.

Run it from a shell: ``python -m depthnotes latency --help``.
"""

from __future__ import annotations

import math
import os
import statistics
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Iterable, Sequence

import torch

from .checks import check_int, check_number
from .config import ModelConfig
from .fitting import LinearFit, linear_fit
from .model import Transformer
from .params import count_block_params, count_params
from .runtime import MachineInfo, machine_info, num_threads, progress


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
#: out); the bandwidth is a large copy's rate with its read and its write both counted (the
#: STREAM "copy" convention). Counting the copy's bytes once instead would halve the bandwidth
#: and double every bound.
BANDWIDTH_CONVENTION = ("bytes counted once per token (each weight read once per decode "
                        "step); bandwidth = a large copy's read + write bytes per second")

#: The last-level cache assumed when the operating system does not report one (32 MiB, a
#: common desktop and server L3 size); ``last_level_cache`` says when it is used.
FALLBACK_CACHE_BYTES = 32 * 2**20

_SYSFS_CACHE = Path("/sys/devices/system/cpu/cpu0/cache")


@dataclass(frozen=True)
class CacheSize:
    """The CPU's last-level cache: its size in bytes, its level, and where the size came from."""

    bytes: int
    level: int | None
    source: str   # "sysfs", "sysconf", "sysctl", or "assumed" (FALLBACK_CACHE_BYTES)

    @property
    def megabytes(self) -> float:
        return self.bytes / 1e6


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
        if name in os.sysconf_names:
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


def memory_resident(weight_bytes: int, cache: CacheSize | int) -> bool:
    """The book's rule for when the bandwidth bound applies: the weights one decode step reads
    are larger than the last-level cache, so no token finds them in cache (streaming more than
    the cache holds, in the same order every token, evicts each weight before its next use).
    Smaller models are read from cache, at a rate the memory bound does not limit."""
    size = cache.bytes if isinstance(cache, CacheSize) else cache
    check_int("cache bytes", size, 1)
    return weight_bytes > size


def memory_bandwidth(megabytes: int = 256, repeats: int = 5, threads: int | None = None) -> float:
    """This machine's memory bandwidth in GB/s, from copying a large fp32 array.

    A copy reads and writes every byte, so bytes moved = 2 x size (the convention of the
    STREAM "copy" benchmark; see ``BANDWIDTH_CONVENTION``). The array should be much larger
    than the last-level cache. Returns the best of ``repeats`` (the machine's capability, not
    its noise).
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
    peak FLOP/s / bandwidth (bytes counted as in ``BANDWIDTH_CONVENTION``)."""
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


def roofline_ms(config: ModelConfig, bandwidth_gbs: float) -> float:
    """The memory-bandwidth bound on one decode step of ``config``, in ms."""
    return _bound_ms(decode_weight_bytes(config), bandwidth_gbs)


def decode_flops(config: ModelConfig, batch: int = 1) -> int:
    """FLOPs of one decode step's products with the weights: a multiply and an add per weight
    per sequence, over every block's attention and FFN matrices and the ``[vocab, d]`` head.

    Left out: attention over the KV cache (4 t d per block with t cached positions; under 1 %
    at d = 512 and the chapter's t <= 64), biases, norms and activations (O(d) each)."""
    check_int("batch", batch, 1)
    weights = (config.n_layer * count_block_params(config).weights
               + config.vocab_size * config.d_model)
    return 2 * weights * batch


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


def measure_many(models: Sequence[Transformer | ModelConfig], *, prompt_len: int = 16,
                 new_tokens: int = 32, repeats: int = 5, warmup: int = 1, batch: int = 1,
                 seed: int = 0, threads: int | None = None,
                 desc: str | None = "latency") -> list[LatencyResult]:
    """Decode and prefill timings of several models, measured round-robin.

    ``models`` are ``Transformer``s or ``ModelConfig``s (built with ``seed``, random init: the
    values of the weights do not change the time). Each model decodes ``new_tokens`` tokens
    greedily after a random prompt of ``prompt_len`` tokens, ``batch`` sequences at once.
    ``warmup`` untimed runs first; then ``repeats`` timed rounds over all models.
    """
    check_int("prompt_len", prompt_len, 1)
    check_int("new_tokens", new_tokens, 1)
    check_int("repeats", repeats, 1)
    check_int("warmup", warmup, 0)
    check_int("batch", batch, 1)
    if not models:
        raise ValueError("models is empty: give at least one Transformer or ModelConfig")
    built = []
    for m in models:
        if isinstance(m, ModelConfig):
            m = Transformer(m, seed=seed)
        elif not isinstance(m, Transformer):
            raise TypeError(f"models must hold Transformer or ModelConfig, got {type(m).__name__}")
        if prompt_len + new_tokens + 1 > m.config.context:
            raise ValueError(f"prompt_len + new_tokens + 1 = {prompt_len + new_tokens + 1} exceeds "
                             f"context={m.config.context} of {_shape(m.config)}")
        built.append(m.eval())
    gen = torch.Generator().manual_seed(seed)
    prompts = [torch.randint(0, m.config.vocab_size, (batch, prompt_len), generator=gen)
               for m in built]
    prefill = [[] for _ in built]
    decode = [[] for _ in built]
    with num_threads(threads):
        info = machine_info()
        for m, p in zip(built, prompts):
            for _ in range(warmup):
                m.generate(p, 1 + new_tokens)
        rounds = progress(range(repeats), total=repeats, desc=desc) if desc else range(repeats)
        for _ in rounds:
            for i, (m, p) in enumerate(zip(built, prompts)):
                pre, steps = _time_generate(m, p, new_tokens)
                prefill[i].append(pre)
                decode[i].append(statistics.median(steps))
    return [LatencyResult(
        n_layer=m.config.n_layer, d_model=m.config.d_model, n_head=m.config.n_head,
        vocab_size=m.config.vocab_size, params=count_params(m.config).total,
        weight_bytes=decode_weight_bytes(m.config), batch=batch, prompt_len=prompt_len,
        new_tokens=new_tokens, decode=Timing.of(dec), prefill=Timing.of(pre), machine=info)
        for m, dec, pre in zip(built, decode, prefill)]


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
        return model.head(x).argmax(dim=-1)

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
    kept = [r for r in results if memory_resident(r.weight_bytes, cache)]
    if len({r.n_layer for r in kept}) < 2:
        size = cache.bytes if isinstance(cache, CacheSize) else cache
        raise ValueError(f"fit_memory_regime needs results of >= 2 depths whose weights exceed "
                         f"the cache ({size / 1e6:.1f} MB); got {len(kept)}: add deeper shapes")
    return fit_latency([r.n_layer for r in kept], [r.decode.median for r in kept])


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
    log(bytes per block) across the family (``fitting.linear_fit``). A block whose time is
    set by a fixed cost per operation (dispatching ~20 small kernels) costs about the same at
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
    fit = linear_fit([math.log(b) for b in nbytes], [math.log(t) for t in per_block])
    regime = "overhead-bound" if fit.slope < OVERHEAD_EXPONENT else "bandwidth-bound"
    return BlockScaling(fit.slope, regime, per_block, nbytes)


# -- chapter 6's shapes -------------------------------------------------------------------
#: Chapter 6's budget sweep, whose shapes and losses chapter 7 times: the one place that
#: names the record, so a renamed record is a change of this line.
BUDGET_SWEEP_RECORD = "budget_sweep_300_steps"


@dataclass(frozen=True)
class SweepShape:
    """One trained shape of chapter 6's sweep: its budget, its config, its validation loss."""

    budget: int
    config: ModelConfig
    loss: float                      # mean over the record's seeds
    loss_range: tuple[float, float]  # min and max over the seeds
    seeds: int                       # how many seeds the loss is the mean of


def budget_sweep_shapes(record=None, metric: str = "eval_loss",
                        min_context: int = 0) -> list[SweepShape]:
    """The shapes of chapter 6's budget sweep with their final ``metric``, in the record's order.

    ``record`` is a ``records.Record``, a record name, or None for ``BUDGET_SWEEP_RECORD``.
    Each arm's stored model config is used as it was trained, its context raised to at least
    ``min_context`` (the positions a timing needs; it changes no weight that a step reads)."""
    from .records import Record, load_record

    if not isinstance(record, Record):
        record = load_record(record or BUDGET_SWEEP_RECORD)
    final = record.final(metric)
    shapes = []
    for name in record.arms:
        arm = record.arm(name)
        config = ModelConfig(**arm["model"])
        if config.context < min_context:
            config = config.replace(context=min_context)
        if any(v is None for v in final[name]):
            raise ValueError(f"record {record.name!r}: arm {name!r} has no {metric} for some "
                             f"seed (got {final[name]}); chapter 7 needs one for every seed")
        losses = [float(v) for v in final[name]]
        shapes.append(SweepShape(int(arm["info"]["budget"]), config,
                                 statistics.fmean(losses), (min(losses), max(losses)),
                                 len(losses)))
    return shapes


# -- reporting ----------------------------------------------------------------------------
def format_table(results: Sequence[LatencyResult], bandwidth_gbs: float | None = None,
                 head: Sequence[Timing | None] | None = None) -> str:
    """A plain-text table of results; with a bandwidth, each decode time next to its bound;
    with head timings, the split of each decode step into head and blocks."""
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
        out.append(f"memory bandwidth {bandwidth_gbs:.1f} GB/s; bound = weight bytes read "
                   f"per token / bandwidth; {BANDWIDTH_CONVENTION}")
    return "\n".join(out)


# -- helpers ------------------------------------------------------------------------------
def _shape(c: ModelConfig) -> str:
    return f"(n_layer={c.n_layer}, d_model={c.d_model}, n_head={c.n_head})"
