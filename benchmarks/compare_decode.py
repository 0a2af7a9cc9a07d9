"""Side-by-side CPU benchmark: depthnotes' Transformer vs HF transformers (and nanoGPT).

Measures, in one process, with the same thread count, fp32, batch 1, random weights:

* decode ms/token at one shape (default GPT-2 small): ``Transformer.generate`` (KV cache);
  HF ``GPT2LMHeadModel.generate`` (greedy, its KV cache) and a hand-written HF loop over its
  cache; nanoGPT's ``generate`` (no cache; only with ``--nanogpt-path``);
* this machine's memory bandwidth and the bound it puts on decoding (weight bytes per token /
  bandwidth);
* one training step (forward, backward, AdamW) at a small CPU shape: ours vs nanoGPT.

Every model is timed once per round, rounds repeat, and the ratio ours/theirs is taken per
round and then its median: a load that drifts during the run affects both sides of a ratio.
No weights are downloaded (models are built from configs; ``HF_HUB_OFFLINE=1``).

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

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")

import torch  # noqa: E402

from depthnotes import ModelConfig, Transformer  # noqa: E402
from depthnotes.latency import (decode_weight_bytes, machine_info,  # noqa: E402
                                memory_bandwidth)


def timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return (time.perf_counter() - t0) * 1e3


# -- the contenders: each is a function n -> generate n new tokens after the prompt ------------
def ours_decoder(cfg: ModelConfig, prompt: torch.Tensor):
    model = Transformer(cfg, seed=0).eval()
    return lambda n: model.generate(prompt, n)


def hf_decoders(cfg: ModelConfig, prompt: torch.Tensor):
    try:
        from transformers import GPT2Config, GPT2LMHeadModel
    except ImportError:
        return {}
    hf_cfg = GPT2Config(n_layer=cfg.n_layer, n_embd=cfg.d_model, n_head=cfg.n_head,
                        n_inner=cfg.d_ff, vocab_size=cfg.vocab_size, n_positions=cfg.context,
                        resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0)
    model = GPT2LMHeadModel(hf_cfg).eval()
    mask = torch.ones_like(prompt)

    @torch.inference_mode()
    def generate(n):
        model.generate(prompt, attention_mask=mask, max_new_tokens=n, min_new_tokens=n,
                       do_sample=False, pad_token_id=0)

    @torch.inference_mode()
    def loop(n):  # the same work without generate()'s bookkeeping
        out = model(input_ids=prompt, use_cache=True, logits_to_keep=1)
        cache, nxt = out.cache, out.logits[:, -1].argmax(-1, keepdim=True)
        for _ in range(n - 1):
            out = model(input_ids=nxt, cache=cache, use_cache=True, logits_to_keep=1)
            cache, nxt = out.cache, out.logits[:, -1].argmax(-1, keepdim=True)

    return {"HF generate": generate, "HF loop": loop}


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
    return lambda n: model.generate(prompt, n, temperature=1.0, top_k=1)


# -- measuring ------------------------------------------------------------------------------------
def decode_rounds(contenders: dict, new_tokens: int, rounds: int, warmup: int) -> dict:
    """ms per decode step of each contender, per round: (t(1 + n) - t(1)) / n."""
    for f in contenders.values():
        for _ in range(warmup):
            f(1 + new_tokens)
    out = {k: [] for k in contenders}
    for r in range(rounds):
        items = list(contenders.items())
        if r % 2:  # alternate the order, so no one always runs right after the same neighbour
            items.reverse()
        for name, f in items:
            first = timed(lambda: f(1))
            total = timed(lambda: f(1 + new_tokens))
            out[name].append(max(total - first, 0.0) / new_tokens)
    return out


def train_rounds(cfg: ModelConfig, nanogpt_mod, batch: int, seq: int, rounds: int,
                 warmup: int) -> dict:
    """ms per optimizer step (forward + backward + AdamW), ours vs nanoGPT, per round."""
    g = torch.Generator().manual_seed(0)
    x = torch.randint(0, cfg.vocab_size, (batch, seq), generator=g)
    y = torch.randint(0, cfg.vocab_size, (batch, seq), generator=g)
    models = {"ours": Transformer(cfg, seed=0).train()}
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
            out[name].append(timed(f))
    return out


def ratio(a: list[float], b: list[float]) -> float:
    return statistics.median(x / y for x, y in zip(a, b))


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
    ap.add_argument("--train-preset", default="mini",
                    help="shape for the training-step comparison (default mini)")
    ap.add_argument("--train-batch", type=int, default=16, help="training batch (default 16)")
    ap.add_argument("--train-seq", type=int, default=128, help="training sequence (default 128)")
    ap.add_argument("--no-train", action="store_true", help="skip the training comparison")
    ap.add_argument("--json", default=None, help="also write the results to this JSON file")
    args = ap.parse_args(argv)

    torch.set_num_threads(args.threads)
    cfg = ModelConfig.preset(args.preset)
    prompt = torch.randint(0, cfg.vocab_size, (1, args.prompt_len),
                           generator=torch.Generator().manual_seed(0))
    nano = load_nanogpt(args.nanogpt_path)

    contenders = {"ours": ours_decoder(cfg, prompt)}
    if not args.no_hf:
        hf = hf_decoders(cfg, prompt)
        if not hf:
            print("transformers is not installed: skipping HF (pip install transformers)")
        contenders.update(hf)
    if nano is not None:
        contenders["nanoGPT (no cache)"] = nanogpt_decoder(nano, cfg, prompt)

    info = machine_info()
    print(f"torch {info.torch_version}, {info.threads} threads, {info.cpu}; "
          f"load average before: {os.getloadavg()}")
    bw = memory_bandwidth()
    bound = decode_weight_bytes(cfg) / (bw * 1e9) * 1e3
    dec = decode_rounds(contenders, args.new_tokens, args.rounds, args.warmup)
    bw_after = memory_bandwidth()
    result = {"shape": args.preset, "threads": args.threads, "torch": info.torch_version,
              "cpu": info.cpu, "bandwidth_gbs": [bw, bw_after],
              "weight_mb": decode_weight_bytes(cfg) / 1e6, "decode_ms": dec}
    bw_best = max(bw, bw_after)
    bound = decode_weight_bytes(cfg) / (bw_best * 1e9) * 1e3
    print(f"\nDecode at {args.preset} (L={cfg.n_layer}, d={cfg.d_model}, vocab={cfg.vocab_size}),"
          f" batch 1, fp32, prompt {args.prompt_len}, {args.new_tokens} new tokens, "
          f"{args.rounds} rounds")
    print(f"{'':22s} {'median ms/token':>16s} {'min':>7s} {'max':>7s} {'ours / it':>10s}")
    for name, v in dec.items():
        print(f"{name:22s} {statistics.median(v):16.1f} {min(v):7.1f} {max(v):7.1f} "
              f"{ratio(dec['ours'], v):10.2f}")
    print(f"memory bandwidth (copy, r+w): {bw:.1f} GB/s before, {bw_after:.1f} GB/s after; "
          f"weights read per token {decode_weight_bytes(cfg) / 1e6:.0f} MB; "
          f"bound {bound:.1f} ms/token; ours / bound = {statistics.median(dec['ours']) / bound:.2f}")
    result["bound_ms"] = bound

    if not args.no_train:
        tcfg = ModelConfig.preset(args.train_preset)
        tr = train_rounds(tcfg, nano, args.train_batch, args.train_seq, args.rounds, 2)
        result["train_ms"] = tr
        print(f"\nOne training step (forward, backward, AdamW) at {args.train_preset} "
              f"(L={tcfg.n_layer}, d={tcfg.d_model}, vocab={tcfg.vocab_size}), "
              f"batch {args.train_batch} x {args.train_seq}")
        for name, v in tr.items():
            print(f"{name:22s} {statistics.median(v):10.1f} ms  (min {min(v):.1f}, "
                  f"max {max(v):.1f})  ours / it = {ratio(tr['ours'], v):.2f}")
    print(f"load average after: {os.getloadavg()}")
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
