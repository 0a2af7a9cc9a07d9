"""The model's one speed path: a decode step's matrix-vector products split over the threads.

Decoding one token multiplies a single row by every weight matrix. PyTorch hands such a
product to BLAS, which runs it on one core, and one core streams weights from memory at well
below the machine's bandwidth (chapter 7 measures it). ``matmul`` views ``w`` as ``n``
consecutive blocks of rows ``(n, in/n, out)`` (no copy) and ``x`` as the matching ``n``
pieces, so that ``bmm`` lets ``n`` threads each stream one contiguous block; the ``n`` partial
products are then summed. It is the same product with the sum over ``in`` split in ``n``
parts (so the last bits can differ from ``x @ w``).

It is taken only inside ``decoding()`` (``Transformer.generate`` enters it; nothing else
does, so training, the probes and every forward pass outside generation never consult the
rule), and there only when it pays: two or more threads, no gradient recorded, at most
``SPLIT_MAX_ROWS`` rows (decode steps, batch x 1 token) and at least ``SPLIT_MIN_WEIGHTS``
weights. One-thread runs always take ``x @ w``, bit for bit.

Why it is kept, and what it buys, is measured in ``benchmarks/README.md`` (our decode step
against HF transformers' at GPT-2 small's shape, one and two threads).
"""

from __future__ import annotations

from contextlib import contextmanager

import torch

#: Whether a ``decoding()`` block is running (the split is never considered outside one).
_decoding = False

#: Below this many weights (512 KB of fp32) a product is left to one matmul call: splitting
#: such a small matrix costs more than it saves (measured with two threads: a d = 128 model
#: decodes slower when its 64k-weight matrices are split, while GPT-2 small's 590k-weight
#: attention projection and a d = 256 model's matrices decode faster split).
SPLIT_MIN_WEIGHTS = 1 << 17
#: Products with at most this many rows (decode steps: batch x 1 token) are split.
SPLIT_MAX_ROWS = 4


@contextmanager
def decoding():
    """Inside this block, decode steps' products may take the split (the rule above)."""
    global _decoding
    before, _decoding = _decoding, True
    try:
        yield
    finally:
        _decoding = before


def active() -> bool:
    """Whether a ``decoding()`` block is running (what ``Conv1D.forward`` checks first)."""
    return _decoding


def takes_split(x: torch.Tensor, w: torch.Tensor) -> bool:
    """Whether ``matmul(x, w)`` splits the product over the threads (the rule above)."""
    if not _decoding:
        return False
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
