"""``python -m depthnotes latency``: per-token decode latency of model shapes on this CPU.

The measuring is ``depthnotes.bench.latency``'s; this module only turns options into its calls and
prints its table (chapter 7 explains what the columns mean).
"""

from __future__ import annotations

import json

from depthnotes.core.config import PRESETS, ModelConfig
from depthnotes.bench.latency import (BANDWIDTH_CONVENTION, MEMORY_MARGIN, cache_regime,
                                      fit_latency, fit_memory_regime, format_table,
                                      head_latency, last_level_cache, measure_rounds,
                                      memory_resident, read_probe_bytes, usable_cache)
from depthnotes.training.runtime import num_threads

DESCRIPTION = """\
Measure per-token decode latency (KV cache, greedy, random weights) of one or more model
shapes on this machine, and print a table: decode ms per step (median and min-max over the
repeats), prefill ms, and each shape's one-core bound: its weight bytes / one core's read
rate, measured by a matrix-vector product over a weight of 4x the last-level cache in the
same rounds as the decodes.

Shapes start from --preset and are changed by --d-model, --n-head, --vocab-size, --context;
--n-layer takes several depths, and one model is measured per depth (round-robin). With two
or more depths the table ends with the fit ms/token = a + b*L, where each depth's weights are
read from (cache, transition or memory: memory above 2x the last-level cache, cache below
0.5x; the cache is the part of it one core reads fast, measured as chapter 7 does), and,
with two or more memory-resident depths, the same fit through those only.

examples:
  python -m depthnotes latency                                  # GPT-2 small
  python -m depthnotes latency --preset mini --d-model 256 --n-head 4 --n-layer 2 8 32 --head
  python -m depthnotes latency --n-layer 12 --threads 1 --batch 4
"""


def add_arguments(p) -> None:
    """The ``latency`` command's options."""
    shape = p.add_argument_group("shape (start from a preset, then change fields)")
    shape.add_argument("--preset", default="gpt2-small", choices=sorted(PRESETS),
                       help="named shape to start from (default: gpt2-small)")
    shape.add_argument("--n-layer", type=int, nargs="+", metavar="L",
                       help="one or more depths to measure (default: the preset's)")
    shape.add_argument("--d-model", type=int, metavar="D", help="width d (default: the preset's)")
    shape.add_argument("--n-head", type=int, metavar="H",
                       help="attention heads; must divide --d-model (default: the preset's)")
    shape.add_argument("--vocab-size", type=int, metavar="V",
                       help="vocabulary, i.e. rows of the output head (default: the preset's)")
    shape.add_argument("--context", type=int, metavar="C",
                       help="maximum positions; must hold prompt + new tokens + 1")
    run = p.add_argument_group("how to measure")
    run.add_argument("--prompt-len", type=int, default=16, metavar="N",
                     help="prompt tokens run before decoding (default: 16)")
    run.add_argument("--new-tokens", type=int, default=32, metavar="N",
                     help="decode steps timed per repeat (default: 32)")
    run.add_argument("--repeats", type=int, default=5, metavar="N",
                     help="timed repeats; the table shows their median and min-max (default: 5)")
    run.add_argument("--warmup", type=int, default=1, metavar="N",
                     help="untimed runs before the repeats (default: 1)")
    run.add_argument("--batch", type=int, default=1, metavar="B",
                     help="sequences decoded at once (default: 1)")
    run.add_argument("--threads", type=int, default=None, metavar="T",
                     help="torch intra-op threads (default: torch's current setting)")
    run.add_argument("--seed", type=int, default=0, help="seed of the random weights and prompt")
    out = p.add_argument_group("what to report")
    out.add_argument("--head", action="store_true",
                     help="also time the depth-independent part (embedding lookup, final norm, "
                          "output head) and split each decode step into head and blocks")
    out.add_argument("--no-bandwidth", action="store_true",
                     help="skip measuring one core's read rate and the bound column")
    out.add_argument("--json", metavar="PATH", help="also write the results as JSON to PATH")


def run(args, parser) -> int:
    """Measure and print; bad shapes or options exit with a message naming them (status 2)."""
    overrides = {k: getattr(args, k) for k in ("d_model", "n_head", "vocab_size", "context")
                 if getattr(args, k) is not None}
    for opt, minimum in (("prompt_len", 1), ("new_tokens", 1), ("repeats", 1), ("batch", 1),
                         ("warmup", 0), ("threads", 1)):
        value = getattr(args, opt)
        if value is not None and value < minimum:
            parser.error(f"--{opt.replace('_', '-')} must be >= {minimum}, got {value}")
    try:
        base = ModelConfig.preset(args.preset, **overrides)
        depths = args.n_layer or [base.n_layer]
        configs = [base.replace(n_layer=L) for L in depths]
    except (ValueError, TypeError) as e:  # the config names the field and what it may be
        parser.error(f"bad shape: {e}")
    need = args.prompt_len + args.new_tokens + 1
    if need > base.context:
        parser.error(f"--prompt-len + --new-tokens + 1 = {need} exceeds the context of "
                     f"{base.context} positions; lower them or raise --context")
    cache = usable_cache(last_level_cache())   # the part one core reads fast, as chapter 7
    with num_threads(args.threads):
        rounds = measure_rounds(configs, prompt_len=args.prompt_len,
                                new_tokens=args.new_tokens, repeats=args.repeats,
                                warmup=args.warmup, batch=args.batch, seed=args.seed,
                                read_probe=None if args.no_bandwidth else read_probe_bytes(cache),
                                desc=None)
        heads = ([head_latency(c, batch=args.batch, seed=args.seed) for c in configs]
                 if args.head else None)
    results = rounds.results
    bw = rounds.read_gbs.median if rounds.read_gbs else None
    print(format_table(results, bw, heads))
    if len(set(depths)) >= 2:
        fit = fit_latency(depths, [r.decode.median for r in results])
        print(f"fit: ms/token = {fit.intercept:.2f} + {fit.slope:.3f} * L   "
              f"(R^2 = {fit.r2:.3f})")
        where = ", ".join(f"L={r.n_layer}: {cache_regime(r.weight_bytes, cache)}"
                          for r in results)
        print(f"last-level cache {cache.megabytes:.1f} MB ({cache.said}); weights read from "
              f"(memory above {MEMORY_MARGIN:g}x the cache): {where}")
        resident = [r.n_layer for r in results if memory_resident(r.weight_bytes, cache)]
        if len(set(resident)) >= 2:
            fm = fit_memory_regime(results, cache)
            print(f"fit in the memory regime: ms/token = {fm.intercept:.2f} + "
                  f"{fm.slope:.3f} * L   (R^2 = {fm.r2:.3f})")
        if heads:
            blocks = [r.decode.median - h.median for r, h in zip(results, heads)]
            f2 = fit_latency(depths, blocks)
            print(f"fit without the head: ms/token = {f2.intercept:.2f} + {f2.slope:.3f} * L   "
                  f"(R^2 = {f2.r2:.3f})")
    if args.json:
        payload = {"results": [r.as_dict() for r in results], "bandwidth_gbs": bw,
                   "bandwidth_range_gbs": ([rounds.read_gbs.min, rounds.read_gbs.max]
                                           if rounds.read_gbs else None),
                   "bandwidth_convention": BANDWIDTH_CONVENTION,
                   "head_ms": [h.median for h in heads] if heads else None}
        with open(args.json, "w") as f:
            json.dump(payload, f, indent=1)
    return 0
