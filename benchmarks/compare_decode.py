"""Side-by-side CPU benchmark: depthnotes' Transformer vs HF transformers (and nanoGPT).

Measures, in one process, with the same thread count, fp32, batch 1, random weights:

* decode ms/token at one shape (default GPT-2 small): ``Transformer.generate`` (KV cache);
  HF ``GPT2LMHeadModel.generate`` (greedy, its KV cache) and a hand-written HF loop over its
  cache; nanoGPT's ``generate`` (no cache; only with ``--nanogpt-path``);
* this machine's memory bandwidth and the bound it puts on decoding (weight bytes per token /
  bandwidth), measured at the start of every round so that each decode time has a bound from
  the same minute; and, for scale, how long the model's own matrix-vector product takes to
  stream the same bytes as one large matrix (the fastest that product reads memory here);
* one training step (forward, backward, AdamW) at a small CPU shape: ours as the book trains it
  (exact GELU, like nanoGPT), ours with GPT-2's tanh GELU, and nanoGPT.

Decode steps are timed from inside each implementation's own generate loop: a pre-hook on its
first block stamps the clock as each step enters the stack, and a round reports the median of
its steps (one interruption by another process cannot move it). Every model is timed once per
round, rounds repeat, and the ratio ours/theirs is taken per round and then its median: a load
that drifts during the run affects both sides of a ratio.
No weights are downloaded (models are built from configs; ``HF_HUB_OFFLINE=1``). Before timing,
HF's random weights are copied into ours and the two must give the same logits (to 1e-4) and the
same greedy tokens: the comparison is between two implementations of one function.

    python benchmarks/compare_decode.py --help
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import sys
import time
from pathlib import Path
from unittest import mock

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")

import torch  # noqa: E402

from depthnotes import ModelConfig, Transformer  # noqa: E402
from depthnotes.bench.latency import _timed, decode_weight_bytes, memory_bandwidth  # noqa: E402
from depthnotes.core import fastpath  # noqa: E402
from depthnotes.core.gpt2_weights import load_gpt2_state_dict  # noqa: E402
from depthnotes.training.runtime import machine_info  # noqa: E402


# -- the contenders: each is a function n -> generate n new tokens after the prompt ------------
def ours_decoder(model: Transformer, prompt: torch.Tensor, split: bool = True):
    """Ours; with ``split=False`` the speed path (``depthnotes.core.fastpath``) is switched off for
    the call, so that the benchmark shows what it buys."""
    def run(n):
        if split:
            return model.generate(prompt, n)
        with mock.patch.object(fastpath, "takes_split", lambda x, w: False):
            return model.generate(prompt, n)
    return run, model.h[0]


def copy_hf_weights(ours: Transformer, hf) -> None:
    """Copy an HF ``GPT2LMHeadModel``'s weights into ours (``depthnotes.core.gpt2_weights``)."""
    load_gpt2_state_dict(ours, hf.state_dict())


def same_function(ours: Transformer, hf, prompt: torch.Tensor, new_tokens: int = 8):
    """With HF's weights copied into ours: the largest logit difference on ``prompt`` and whether
    greedy decoding picks the same ``new_tokens`` tokens. Checks that the two models timed side
    by side compute the same function (GPT-2's, with its tanh GELU), not just the same shapes."""
    copy_hf_weights(ours, hf)
    with torch.inference_mode():
        diff = (ours(prompt)[0] - hf(input_ids=prompt).logits).abs().max().item()
        theirs = hf.generate(prompt, attention_mask=torch.ones_like(prompt), do_sample=False,
                             max_new_tokens=new_tokens, min_new_tokens=new_tokens, pad_token_id=0)
    return diff, torch.equal(ours.generate(prompt, new_tokens), theirs)


def hf_decoders(cfg: ModelConfig, prompt: torch.Tensor, ours: Transformer | None = None):
    try:
        from transformers import GPT2Config, GPT2LMHeadModel
    except ImportError:
        return {}
    hf_cfg = GPT2Config(n_layer=cfg.n_layer, n_embd=cfg.d_model, n_head=cfg.n_head,
                        n_inner=cfg.d_ff, vocab_size=cfg.vocab_size, n_positions=cfg.context,
                        resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0,
                        layer_norm_epsilon=cfg.ln_eps,
                        activation_function="gelu_new" if cfg.activation == "gelu_tanh"
                        else "gelu")
    model = GPT2LMHeadModel(hf_cfg).eval()
    if ours is not None:
        diff, same = same_function(ours, model, prompt)
        print(f"same function: with HF's weights copied into ours, max |logit difference| = "
              f"{diff:.1e} on the prompt; greedy tokens {'identical' if same else 'DIFFERENT'}")
        if not same or diff > 1e-4:
            sys.exit("the two models do not compute the same function: not comparing them")
    mask = torch.ones_like(prompt)

    @torch.inference_mode()
    def generate(n):
        model.generate(prompt, attention_mask=mask, max_new_tokens=n, min_new_tokens=n,
                       do_sample=False, pad_token_id=0)

    # the KV cache's name in HF's outputs and arguments: past_key_values (transformers 4.x
    # and 5.0-5.23) or cache (later 5.x)
    key = "cache" if "cache" in model(input_ids=prompt[:, :1], use_cache=True) else \
        "past_key_values"

    @torch.inference_mode()
    def loop(n):  # the same work without generate()'s bookkeeping
        out = model(input_ids=prompt, use_cache=True, logits_to_keep=1)
        cache, nxt = out[key], out.logits[:, -1].argmax(-1, keepdim=True)
        for _ in range(n - 1):
            out = model(input_ids=nxt, use_cache=True, logits_to_keep=1, **{key: cache})
            cache, nxt = out[key], out.logits[:, -1].argmax(-1, keepdim=True)

    first = model.transformer.h[0]
    return {"HF generate": (generate, first), "HF loop": (loop, first)}


def load_nanogpt(path: str | None):
    if not path:
        return None
    p = Path(path)
    if p.is_dir():
        p = p / "model.py"
    if not p.exists():
        sys.exit(f"--nanogpt-path: no nanoGPT model.py at {p}")
    spec = importlib.util.spec_from_file_location("nanogpt_model", p)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def nanogpt_model(mod, cfg: ModelConfig):
    import contextlib
    import io
    with contextlib.redirect_stdout(io.StringIO()):  # it prints its parameter count
        return mod.GPT(mod.GPTConfig(block_size=cfg.context, vocab_size=cfg.vocab_size,
                                     n_layer=cfg.n_layer, n_head=cfg.n_head,
                                     n_embd=cfg.d_model, dropout=0.0, bias=cfg.bias))


def nanogpt_decoder(mod, cfg: ModelConfig, prompt: torch.Tensor):
    model = nanogpt_model(mod, cfg).eval()
    # nanoGPT samples; top_k=1 makes it greedy, like the others
    return (lambda n: model.generate(prompt, n, temperature=1.0, top_k=1)), \
        model.transformer.h[0]


# -- measuring ------------------------------------------------------------------------------------
def step_times(fn, first_block, n: int, clock) -> list[float]:
    """Generate 1 + n tokens with ``fn`` and return the n decode-step times (ms): a pre-hook
    on the first block stamps the clock as each step enters the stack; a step lasts until the
    next one enters (the last until ``fn`` returns). Every implementation has a first block,
    so all are timed the same way, from inside their own generate loop."""
    stamps = []
    handle = first_block.register_forward_pre_hook(lambda m, a: stamps.append(clock()))
    try:
        fn(1 + n)
        stamps.append(clock())
    finally:
        handle.remove()
    if len(stamps) != n + 2:
        raise RuntimeError(f"expected {n + 2} stamps, got {len(stamps)}")
    return [(b - a) * 1e3 for a, b in zip(stamps[1:], stamps[2:])]


def decode_rounds(contenders: dict, new_tokens: int, rounds: int, warmup: int,
                  clock) -> tuple[dict, list[float]]:
    """Per round, each contender's median decode-step time (ms); and per round the copy
    bandwidth (GB/s) measured at its start."""
    for fn, _ in contenders.values():
        for _ in range(warmup):
            fn(1 + new_tokens)
    out = {k: [] for k in contenders}
    bandwidth = []
    for r in range(rounds):
        bandwidth.append(memory_bandwidth(repeats=3))
        items = list(contenders.items())
        if r % 2:  # alternate the order, so no one always runs right after the same neighbour
            items.reverse()
        for name, (fn, first) in items:
            out[name].append(statistics.median(step_times(fn, first, new_tokens, clock)))
    return out, bandwidth


def stream_reference_ms(n_bytes: int, rounds: int) -> list[float]:
    """ms for the model's matrix-vector product (``fastpath.matmul``, as in a decode step) to
    read ``n_bytes`` of fp32 weights held as one ``[3072, n]`` matrix, best of 3, per round.

    One large product has no per-layer overhead, so this is about the fastest that product
    streams memory on this machine with these threads: a practical floor for a decode step,
    next to the copy-bandwidth bound (a copy streams faster than a matrix-vector product)."""
    w = torch.randn(3072, n_bytes // 4 // 3072)
    x = torch.randn(1, 3072)
    with torch.inference_mode():
        fastpath.matmul(x, w)                   # warm-up
        return [min(_timed(lambda: fastpath.matmul(x, w)) for _ in range(3))
                for _ in range(rounds)]


def train_rounds(cfg: ModelConfig, nanogpt_mod, batch: int, seq: int, rounds: int,
                 warmup: int, clock) -> dict:
    """ms per optimizer step (forward + backward + AdamW) per round: ours as configured (the
    book's default, the exact GELU that nanoGPT also uses), ours with GPT-2's tanh GELU (whose
    CPU kernel is slower), and nanoGPT."""
    g = torch.Generator().manual_seed(0)
    x = torch.randint(0, cfg.vocab_size, (batch, seq), generator=g)
    y = torch.randint(0, cfg.vocab_size, (batch, seq), generator=g)
    models = {"ours": Transformer(cfg, seed=0).train()}
    if cfg.activation != "gelu_tanh":
        models["ours, tanh GELU"] = Transformer(cfg.replace(activation="gelu_tanh"),
                                                seed=0).train()
    if nanogpt_mod is not None:
        models["nanoGPT"] = nanogpt_model(nanogpt_mod, cfg).train()
    steps = {}
    for name, m in models.items():
        opt = torch.optim.AdamW(m.parameters(), lr=1e-4)

        def step(m=m, opt=opt):
            _, loss = m(x, y)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
        steps[name] = step
    for f in steps.values():
        for _ in range(warmup):
            f()
    out = {k: [] for k in steps}
    for r in range(rounds):
        items = list(steps.items())
        if r % 2:
            items.reverse()
        for name, f in items:
            t0 = clock()
            f()
            out[name].append((clock() - t0) * 1e3)
    return out


def ratio(a: list[float], b: list[float]) -> float:
    return statistics.median(x / y for x, y in zip(a, b))


def _spread(v: list[float], fmt: str) -> str:
    """``median (min-max)`` of a list of numbers."""
    return f"{statistics.median(v):{fmt}} ({min(v):{fmt}}-{max(v):{fmt}})"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--preset", default="gpt2-small",
                    help="shape to decode with (a ModelConfig preset; default gpt2-small)")
    ap.add_argument("--threads", type=int, default=2, help="torch threads (default 2)")
    ap.add_argument("--prompt-len", type=int, default=16, help="prompt tokens (default 16)")
    ap.add_argument("--new-tokens", type=int, default=32,
                    help="decode steps timed per round (default 32)")
    ap.add_argument("--rounds", type=int, default=7, help="timed rounds (default 7)")
    ap.add_argument("--warmup", type=int, default=1, help="untimed runs first (default 1)")
    ap.add_argument("--nanogpt-path", default=None,
                    help="a local nanoGPT checkout (or its model.py) to compare with; "
                         "skipped when absent")
    ap.add_argument("--no-hf", action="store_true", help="skip HF transformers")
    ap.add_argument("--no-split-off", action="store_true",
                    help="skip timing ours with the speed path (depthnotes.core.fastpath) off")
    ap.add_argument("--train-preset", default="mini",
                    help="shape for the training-step comparison (default mini)")
    ap.add_argument("--train-batch", type=int, default=16, help="training batch (default 16)")
    ap.add_argument("--train-seq", type=int, default=128, help="training sequence (default 128)")
    ap.add_argument("--no-train", action="store_true", help="skip the training comparison")
    ap.add_argument("--clock", choices=("wall", "thread"), default="wall",
                    help="wall: elapsed time (default); thread: CPU time of the calling thread, "
                         "which a busy machine inflates much less (only with --threads 1, where "
                         "all the work runs on that thread)")
    ap.add_argument("--json", default=None, help="also write the results to this JSON file")
    args = ap.parse_args(argv)

    if args.clock == "thread" and args.threads != 1:
        ap.error("--clock thread needs --threads 1 (other threads' work would not be counted)")
    clock = time.thread_time if args.clock == "thread" else time.perf_counter
    torch.set_num_threads(args.threads)
    cfg = ModelConfig.preset(args.preset)
    prompt = torch.randint(0, cfg.vocab_size, (1, args.prompt_len),
                           generator=torch.Generator().manual_seed(0))
    nano = load_nanogpt(args.nanogpt_path)

    ours = Transformer(cfg, seed=0).eval()
    contenders = {"ours": ours_decoder(ours, prompt)}
    if args.threads > 1 and not args.no_split_off:
        contenders["ours, no split"] = ours_decoder(ours, prompt, split=False)
    if not args.no_hf:
        hf = hf_decoders(cfg, prompt, ours)
        if not hf:
            print("transformers is not installed: skipping HF (pip install transformers)")
        contenders.update(hf)
    if nano is not None:
        contenders["nanoGPT (no cache)"] = nanogpt_decoder(nano, cfg, prompt)

    info = machine_info()
    load_before = os.getloadavg()
    print(f"torch {info.torch_version}, {info.threads} threads, {info.cpu}; "
          f"load average before: {load_before}")
    weight_bytes = decode_weight_bytes(cfg)
    dec, bandwidth = decode_rounds(contenders, args.new_tokens, args.rounds, args.warmup, clock)
    bound = [weight_bytes / (bw * 1e9) * 1e3 for bw in bandwidth]     # ms/token, per round
    stream = stream_reference_ms(weight_bytes, args.rounds)
    result = {"shape": args.preset, "threads": args.threads, "clock": args.clock,
              "load_before": load_before, "torch": info.torch_version,
              "cpu": info.cpu, "bandwidth_gbs": bandwidth, "bound_ms": bound,
              "stream_reference_ms": stream,
              "weight_mb": weight_bytes / 1e6, "decode_ms": dec}
    print(f"\nDecode at {args.preset} (L={cfg.n_layer}, d={cfg.d_model}, vocab={cfg.vocab_size}),"
          f" batch 1, fp32, prompt {args.prompt_len}, {args.new_tokens} new tokens, "
          f"{args.rounds} rounds, {args.clock} clock")
    print("(each round: the median of its decode steps; ratio: median over rounds of ours/it)")
    hf = dec.get("HF generate")
    print(f"{'':22s} {'median ms/token':>16s} {'min':>7s} {'max':>7s} {'ours / it':>10s}"
          + (f" {'it / HF generate (range)':>26s}" if hf else ""))
    for name, v in dec.items():
        vs_hf = ""
        if hf:
            per_round = [a / b for a, b in zip(v, hf)]
            vs_hf = (f" {ratio(v, hf):15.2f} ({min(per_round):.2f}-{max(per_round):.2f})")
        print(f"{name:22s} {statistics.median(v):16.1f} {min(v):7.1f} {max(v):7.1f} "
              f"{ratio(dec['ours'], v):10.2f}{vs_hf}")
    print(f"weights read per token: {weight_bytes / 1e6:.0f} MB")
    print(f"copy bandwidth (r+w), per round: {_spread(bandwidth, '.1f')} GB/s")
    print(f"bound = weights / bandwidth:     {_spread(bound, '.1f')} ms/token; "
          f"ours / bound per round: median {ratio(dec['ours'], bound):.2f} "
          f"(range {min(a / b for a, b in zip(dec['ours'], bound)):.2f}-"
          f"{max(a / b for a, b in zip(dec['ours'], bound)):.2f})")
    print(f"one matrix-vector product streaming the same bytes: {_spread(stream, '.1f')} ms "
          f"({weight_bytes / statistics.median(stream) / 1e6:.0f} GB/s); "
          f"ours / it: {statistics.median(dec['ours']) / statistics.median(stream):.2f}")

    if not args.no_train:
        tcfg = ModelConfig.preset(args.train_preset)
        tr = train_rounds(tcfg, nano, args.train_batch, args.train_seq, args.rounds, 2, clock)
        result["train_ms"] = tr
        print(f"\nOne training step (forward, backward, AdamW) at {args.train_preset} "
              f"(L={tcfg.n_layer}, d={tcfg.d_model}, vocab={tcfg.vocab_size}), "
              f"batch {args.train_batch} x {args.train_seq}")
        for name, v in tr.items():
            vs = ""
            if name != "nanoGPT" and "nanoGPT" in tr:
                per_round = [a / b for a, b in zip(v, tr["nanoGPT"])]
                vs = (f"  {name} / nanoGPT = {ratio(v, tr['nanoGPT']):.3f} "
                      f"(range {min(per_round):.3f}-{max(per_round):.3f})")
            print(f"{name:22s} {statistics.median(v):10.1f} ms  (min {min(v):.1f}, "
                  f"max {max(v):.1f}){vs}")
    print(f"load average after: {os.getloadavg()}")
    result["load_after"] = os.getloadavg()
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
