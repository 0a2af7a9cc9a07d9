"""Decoding speed on a CPU: the products ``model.py`` hands over here, and why.

PLACEHOLDER (being measured).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

SPLIT_MIN_WEIGHTS = 1 << 17
SPLIT_MAX_ROWS = 4


def matmul(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    n = torch.get_num_threads()
    k_in, k_out = w.shape
    rows = x.numel() // k_in if k_in else 0
    if (n < 2 or rows > SPLIT_MAX_ROWS or w.numel() < SPLIT_MIN_WEIGHTS or k_in % n
            or torch.is_grad_enabled() or not w.is_contiguous()):
        return x @ w
    part = k_in // n
    xs = x.reshape(rows, n, part).transpose(0, 1)                        # (n, rows, in/n)
    y = torch.bmm(xs, w.view(n, part, k_out)).sum(dim=0)                 # (rows, out)
    return y.view(*x.shape[:-1], k_out)


def logits(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    return F.linear(x, w)
