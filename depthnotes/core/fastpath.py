"""The model's one speed path: a decode step's matrix-vector products split over the threads.

Decoding one token multiplies a single row by every weight matrix. PyTorch hands such a
product to BLAS, which runs it on one core, and one core streams weights from memory at well
below the machine's bandwidth (chapter 7 measures it). ``split`` views ``w`` as ``n``
consecutive blocks of rows ``(n, in/n, out)`` (no copy) and ``x`` as the matching ``n``
pieces, so that ``bmm`` lets ``n`` threads each stream one contiguous block; the ``n`` partial
products are then summed. It is the same product with the sum over ``in`` split in ``n``
parts (so the last bits can differ from ``x @ w``).

The model's linear maps (``model.Conv1D``) have a plain ``forward``, which is what training,
the probes and every forward pass run: it never looks at this module. ``decoding(model)``,
which ``Transformer.generate`` enters and nothing else does, swaps each linear map's
``forward`` for its ``decode_forward`` for the length of the block and puts the plain one
back afterwards. ``decode_forward`` takes the split only when it pays (``takes_split``): two
or more threads, no gradient recorded, at most ``SPLIT_MAX_ROWS`` rows (decode steps, batch
x 1 token) and at least ``SPLIT_MIN_WEIGHTS`` weights; otherwise, as in prefill and in every
one-thread run, it computes exactly what ``forward`` computes, bit for bit.

Why it is kept, and what it buys, is measured in ``benchmarks/README.md`` (our decode step
against HF transformers' at GPT-2 small's shape, one and two threads).
"""

from __future__ import annotations

from contextlib import contextmanager

import torch
from torch import nn

#: Below this many weights (512 KB of fp32) a product is left to one matmul call: splitting
#: such a small matrix costs more than it saves (measured with two threads: a d = 128 model
#: decodes slower when its 64k-weight matrices are split, while GPT-2 small's 590k-weight
#: attention projection and a d = 256 model's matrices decode faster split).
SPLIT_MIN_WEIGHTS = 1 << 17
#: Products with at most this many rows (decode steps: batch x 1 token) are split.
SPLIT_MAX_ROWS = 4


@contextmanager
def decoding(model: nn.Module):
    """Inside this block, every submodule of ``model`` that has a ``decode_forward`` (the
    linear maps) runs it in place of its ``forward``; on leaving, the plain ``forward`` is
    back. A module already swapped by an enclosing block is left to that block."""
    swapped = [m for m in model.modules()
               if hasattr(type(m), "decode_forward") and "forward" not in m.__dict__]
    for m in swapped:
        m.forward = m.decode_forward
    try:
        yield
    finally:
        for m in swapped:
            del m.forward


def takes_split(x: torch.Tensor, w: torch.Tensor) -> bool:
    """Whether a decode step's product ``x @ w`` is split over the threads (the rule above)."""
    k_in = w.shape[0]
    rows = x.numel() // k_in if k_in else 0
    n = torch.get_num_threads()
    return (n >= 2 and rows <= SPLIT_MAX_ROWS and w.numel() >= SPLIT_MIN_WEIGHTS
            and k_in % n == 0 and not torch.is_grad_enabled() and w.is_contiguous())


def split(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    """``x @ w`` for ``x`` (..., in) and ``w`` [in, out] (row-major), split over the threads by
    blocks of ``w``'s rows; for the products ``takes_split`` accepts."""
    n = torch.get_num_threads()
    k_in, k_out = w.shape
    part = k_in // n
    xs = x.reshape(-1, n, part).transpose(0, 1)                          # (n, rows, in/n)
    y = torch.bmm(xs, w.view(n, part, k_out)).sum(dim=0)                 # (rows, out)
    return y.view(*x.shape[:-1], k_out)


def matmul(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    """The product as a decode step takes it: ``split`` when ``takes_split`` says so, else
    ``x @ w`` (what the benchmarks' and chapter 7's streaming probes time)."""
    return split(x, w) if takes_split(x, w) else x @ w
