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

import statistics
import time
from dataclasses import asdict, dataclass
from typing import Iterable, Sequence

import torch

from .checks import check_int, check_number
from .config import ModelConfig
from .fitting import LinearFit, linear_fit
from .model import Transformer
from .params import count_params
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
def memory_bandwidth(megabytes: int = 256, repeats: int = 5, threads: int | None = None) -> float:
    """This machine's memory bandwidth in GB/s, from copying a large fp32 array.

    A copy reads and writes every byte, so bytes moved = 2 x size (the convention of the
    STREAM "copy" benchmark). The array should be much larger than the last-level cache.
    Returns the best of ``repeats`` (the machine's capability, not its noise).
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


def decode_weight_bytes(config: ModelConfig, bytes_per_param: int = 4) -> int:
    """Bytes of weights one decode step reads: every block and the final norm, the whole
    ``[vocab, d]`` head (tied or not), and one row each of the token and position tables."""
    c = count_params(config)
    head = config.vocab_size * config.d_model
    lookups = 2 * config.d_model
    return (c.non_embedding + head + lookups) * bytes_per_param


def roofline_ms(config: ModelConfig, bandwidth_gbs: float) -> float:
    """The memory-bandwidth bound on one decode step of ``config``, in ms."""
    return _bound_ms(decode_weight_bytes(config), bandwidth_gbs)


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
    """One ``model.generate(prompt, 1 + new_tokens)``, timed from inside: a hook on the first
    block stamps the clock each time a step enters the stack. Returns the prefill time (call
    start to the first decode step) and the ``new_tokens`` decode-step times, each from one
    step's entry to the next one's (the last ends when ``generate`` returns), in ms."""
    stamps: list[float] = []
    handle = model.h[0].register_forward_pre_hook(lambda mod, args: stamps.append(
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
        model = Transformer(model.replace(n_layer=1), seed=seed)
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
        out.append(f"memory bandwidth (copy, read+write): {bandwidth_gbs:.1f} GB/s; "
                   f"bound = weight bytes read per token / bandwidth")
    return "\n".join(out)


# -- helpers ------------------------------------------------------------------------------
def _shape(c: ModelConfig) -> str:
    return f"(n_layer={c.n_layer}, d_model={c.d_model}, n_head={c.n_head})"
