"""The model's one speed path: a decode step's matrix-vector products split over the threads.

Decoding one token multiplies a single row by every weight matrix. PyTorch hands such a
product to BLAS, which runs it on one core, and one core streams weights from memory at well
below the machine's bandwidth (chapter 7 measures it). ``matmul`` views ``w`` as ``n``
consecutive blocks of rows ``(n, in/n, out)`` (no copy) and ``x`` as the matching ``n``
pieces, so that ``bmm`` lets ``n`` threads each stream one contiguous block; the ``n`` partial
products are then summed. It is the same product with the sum over ``in`` split in ``n``
parts (so the last bits can differ from ``x @ w``).

It is taken only when it pays: with two or more threads, no gradient recorded, at most
``SPLIT_MAX_ROWS`` rows (decode steps, batch x 1 token) and at least ``SPLIT_MIN_WEIGHTS``
weights. Training, prefill and the book's one-thread runs always take ``x @ w``, bit for bit.

Why it is kept (``benchmarks/README.md``): without a speed path our decode step at GPT-2
small's shape, batch 1, is 0.89x HF transformers' (one thread, measured side by side), short
of the 0.85x the book asks for. With two threads the split lets the blocks' products use
both cores (with the head trick below, the two measured 0.46x HF on a quiet machine). The
other trick that was there, storing the tied head column-major, buys time too (0.75x HF at
one thread) but made ``wte.weight.view(-1)`` raise, so it went; the split alone at two
threads is still to be measured on a quiet machine (the README says so).
"""

from __future__ import annotations

import torch

#: Below this many weights (512 KB of fp32) a product is left to one matmul call: splitting
#: such a small matrix costs more than it saves (measured with two threads: a d = 128 model
#: decodes slower when its 64k-weight matrices are split, while GPT-2 small's 590k-weight
#: attention projection and a d = 256 model's matrices decode faster split).
SPLIT_MIN_WEIGHTS = 1 << 17
#: Products with at most this many rows (decode steps: batch x 1 token) are split.
SPLIT_MAX_ROWS = 4


def takes_split(x: torch.Tensor, w: torch.Tensor) -> bool:
    """Whether ``matmul(x, w)`` splits the product over the threads (the rule above)."""
    k_in = w.shape[0]
    rows = x.numel() // k_in if k_in else 0
    n = torch.get_num_threads()
    return (n >= 2 and rows <= SPLIT_MAX_ROWS and w.numel() >= SPLIT_MIN_WEIGHTS
            and k_in % n == 0 and not torch.is_grad_enabled() and w.is_contiguous())


def matmul(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    """``x @ w`` for ``x`` (..., in) and ``w`` [in, out] (row-major); a decode step's few
    rows are split over the threads by blocks of ``w``'s rows (see the module's docstring)."""
    if not takes_split(x, w):
        return x @ w
    n = torch.get_num_threads()
    k_in, k_out = w.shape
    part = k_in // n
    xs = x.reshape(-1, n, part).transpose(0, 1)                          # (n, rows, in/n)
    y = torch.bmm(xs, w.view(n, part, k_out)).sum(dim=0)                 # (rows, out)
    return y.view(*x.shape[:-1], k_out)
