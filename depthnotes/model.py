"""A GPT-style decoder whose depth, norm placement and residual scaling are configuration.

Layout and parameter names follow GPT-2 (``wte``, ``wpe``, ``h[i].ln_1``, ``attn.c_attn``,
``attn.c_proj``, ``ln_2``, ``mlp.c_fc``, ``mlp.c_proj``, ``ln_f``), so a GPT-2 state dict maps
onto it name for name. One block, three placements of the LayerNorm::

    pre:       x = x + s*Attn(LN1(x));   x = x + s*MLP(LN2(x))      (+ final LN after block L)
    post:      x = LN1(a*x + s*Attn(x)); x = LN2(a*x + s*MLP(x))    with a = 1
    deepnorm:  the post form with a = alpha(L) from DeepNet and s = 1

``s`` is ``config.branch_multiplier`` (1, or 1/sqrt(2L)). Post-norm and DeepNorm are one
code path: DeepNorm is post-norm with the residual up-weighted by alpha. The FFN's GELU is the
exact one by default and GPT-2's tanh form in the GPT-2 presets (``config.ACTIVATIONS``).

Weights of the linear maps are stored ``[in, out]`` (GPT-2's ``Conv1D`` layout), because on a
CPU ``x @ W`` with ``W`` contiguous ``[in, out]`` streams the weights faster than ``nn.Linear``'s
``[out, in]``; decoding one token is bound by how fast the weights stream (chapter 7).

The output head is the largest matrix of a small model (``[vocab, d]``: 38.6M of GPT-2 small's
124M parameters). It is tied to the token embedding, which GPT-2 names ``wte.weight`` with shape
``[vocab, d]``. That shape is kept, but the matrix is *stored* column-major (``[d, vocab]`` in
memory, see ``_store_transposed``), so the head's ``x @ wte.weight.T`` streams it in the fast
layout while the embedding, the tying and training are unchanged. One consequence:
``wte.weight.view(-1)`` raises (use ``reshape(-1)`` or ``flatten()``, which work on any layout).
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from .config import ModelConfig
from .init import deepnorm_constants, init_weights


class Conv1D(nn.Module):
    """A linear map y = x @ W + b with W stored [in, out] (GPT-2's name for it)."""

    def __init__(self, n_in: int, n_out: int, bias: bool):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(n_in, n_out))
        self.bias = nn.Parameter(torch.zeros(n_out)) if bias else None

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # (..., in) -> (..., out)
        y = _few_rows_matmul(x, self.weight)
        # in place: y is new and its matmul's backward does not need it; saves an allocation
        return y.add_(self.bias) if self.bias is not None else y


class KVCache:
    """Keys and values of every layer, preallocated for ``max_len`` positions.

    Writing a step's keys in place (instead of ``torch.cat``) keeps each decode step's cost
    independent of how much has been cached. ``length`` counts the positions filled so far.
    """

    def __init__(self, config: ModelConfig, batch: int, max_len: int,
                 dtype: torch.dtype = torch.float32, device=None):
        shape = (config.n_layer, batch, config.n_head, max_len, config.head_dim)
        # Uninitialised: attention only ever reads positions < length, which are written first.
        self.k = torch.empty(shape, dtype=dtype, device=device)  # (L, B, nh, T_max, hs)
        self.v = torch.empty(shape, dtype=dtype, device=device)
        self.max_len = max_len
        self.length = 0


class CausalSelfAttention(nn.Module):
    def __init__(self, config: ModelConfig):
        super().__init__()
        self.n_head, self.head_dim = config.n_head, config.head_dim
        self.c_attn = Conv1D(config.d_model, 3 * config.d_model, config.bias)  # W_Q|W_K|W_V
        self.c_proj = Conv1D(config.d_model, config.d_model, config.bias)      # W_O

    def forward(self, x: torch.Tensor, cache: KVCache | None = None,
                layer: int = 0) -> torch.Tensor:
        B, T, d = x.shape
        q, k, v = self.c_attn(x).split(d, dim=2)                             # 3 x (B, T, d)
        q = q.view(B, T, self.n_head, self.head_dim).transpose(1, 2)         # (B, nh, T, hs)
        k = k.view(B, T, self.n_head, self.head_dim).transpose(1, 2)
        v = v.view(B, T, self.n_head, self.head_dim).transpose(1, 2)
        mask, causal = None, T > 1
        if cache is not None:
            start = cache.length
            cache.k[layer, :, :, start:start + T] = k
            cache.v[layer, :, :, start:start + T] = v
            k = cache.k[layer, :, :, : start + T]                            # (B, nh, start+T, hs)
            v = cache.v[layer, :, :, : start + T]
            if start > 0 and T > 1:  # new queries see the whole cache and their own past
                mask = torch.ones(T, start + T, dtype=torch.bool, device=x.device).tril(start)
                causal = False
            elif start > 0:          # one new query: it may see every cached position
                causal = False
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=causal)
        y = y.transpose(1, 2).reshape(B, T, d)                               # (B, T, d)
        return self.c_proj(y)


class MLP(nn.Module):
    def __init__(self, config: ModelConfig):
        super().__init__()
        self.c_fc = Conv1D(config.d_model, config.d_ff, config.bias)
        self.c_proj = Conv1D(config.d_ff, config.d_model, config.bias)
        # GELU's approximation argument in PyTorch's spelling: "tanh" (GPT-2's) or "none" (exact)
        self.approximate = "tanh" if config.activation == "gelu_tanh" else "none"

    def forward(self, x: torch.Tensor) -> torch.Tensor:                      # (B, T, d)
        return self.c_proj(F.gelu(self.c_fc(x), approximate=self.approximate))


class Block(nn.Module):
    """One transformer block; the norm placement decides how the branches are added."""

    def __init__(self, config: ModelConfig):
        super().__init__()
        self.ln_1 = nn.LayerNorm(config.d_model, eps=config.ln_eps, bias=config.bias)
        self.attn = CausalSelfAttention(config)
        self.ln_2 = nn.LayerNorm(config.d_model, eps=config.ln_eps, bias=config.bias)
        self.mlp = MLP(config)
        self.pre_norm = config.norm == "pre"
        self.branch_scale = config.branch_multiplier
        self.alpha = deepnorm_constants(config.n_layer).alpha if config.norm == "deepnorm" else 1.0

    def forward(self, x: torch.Tensor, cache: KVCache | None = None,
                layer: int = 0) -> torch.Tensor:                             # (B, T, d)
        s, a = self.branch_scale, self.alpha
        if self.pre_norm:
            x = x + _scaled(s, self.attn(self.ln_1(x), cache, layer))
            return x + _scaled(s, self.mlp(self.ln_2(x)))
        x = self.ln_1(_scaled(a, x) + _scaled(s, self.attn(x, cache, layer)))
        return self.ln_2(_scaled(a, x) + _scaled(s, self.mlp(x)))


def _scaled(c: float, x: torch.Tensor) -> torch.Tensor:
    """``c * x``, skipping the multiplication when ``c`` is exactly 1 (one op less per call,
    which matters when a decode step is ~20 small ops per block)."""
    return x if c == 1.0 else c * x


class Transformer(nn.Module):
    """GPT-style decoder: embeddings, ``n_layer`` blocks, (final norm), tied head."""

    def __init__(self, config: ModelConfig, seed: int | None = None):
        super().__init__()
        if not isinstance(config, ModelConfig):
            raise TypeError(f"Transformer expects a ModelConfig, got {type(config).__name__}")
        self.config = config
        self.wte = nn.Embedding(config.vocab_size, config.d_model)
        self.wpe = nn.Embedding(config.context, config.d_model)
        self.h = nn.ModuleList(Block(config) for _ in range(config.n_layer))
        self.ln_f = (nn.LayerNorm(config.d_model, eps=config.ln_eps, bias=config.bias)
                     if config.norm == "pre" else None)
        # Tied: the head reuses wte.weight ([vocab, d]); untied: its own [vocab, d] matrix.
        self.lm_head = (None if config.tie_embeddings
                        else nn.Linear(config.d_model, config.vocab_size, bias=False))
        init_weights(self, config, seed=seed)
        self.wte.weight = _store_transposed(self.wte.weight)
        if self.lm_head is not None:
            self.lm_head.weight = _store_transposed(self.lm_head.weight)

    # -- the forward pass ---------------------------------------------------------------
    def embed(self, idx: torch.Tensor, start: int = 0) -> torch.Tensor:
        """Token plus position embeddings of ``idx`` (B, T) -> (B, T, d)."""
        T = idx.shape[1]
        if start + T > self.config.context:
            raise ValueError(f"sequence of {start + T} positions exceeds context="
                             f"{self.config.context}")
        pos = torch.arange(start, start + T, device=idx.device)
        return self.wte(idx) + self.wpe(pos)

    def head(self, x: torch.Tensor) -> torch.Tensor:
        """Final norm (pre-norm only) and the output head: (B, T, d) -> (B, T, vocab)."""
        if self.ln_f is not None:
            x = self.ln_f(x)
        w = self.wte.weight if self.lm_head is None else self.lm_head.weight  # [vocab, d]
        return _few_rows_matmul(x, w.t())  # w.t(): [d, vocab], contiguous (_store_transposed)

    def hidden(self, idx: torch.Tensor, cache: KVCache | None = None) -> torch.Tensor:
        """The residual stream after the last block, (B, T, d), for token ids ``idx`` (B, T);
        with a ``cache``, ``idx`` continues the cached positions and the cache is extended."""
        if idx.dim() != 2:
            raise ValueError(f"idx must have shape (batch, time), got {tuple(idx.shape)}")
        start = 0 if cache is None else cache.length
        x = self.embed(idx, start)                                           # (B, T, d)
        for i, block in enumerate(self.h):
            x = block(x, cache, i)
        if cache is not None:
            cache.length += idx.shape[1]
        return x

    def forward(self, idx: torch.Tensor, targets: torch.Tensor | None = None,
                cache: KVCache | None = None):
        """Logits (B, T, vocab) for token ids ``idx`` (B, T), and the mean cross-entropy
        against ``targets`` (B, T) when given (else None)."""
        logits = self.head(self.hidden(idx, cache))                          # (B, T, V)
        loss = None
        if targets is not None:
            loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), targets.reshape(-1))
        return logits, loss

    # -- generation ----------------------------------------------------------------------
    @torch.inference_mode()
    def generate(self, idx: torch.Tensor, max_new_tokens: int, use_cache: bool = True,
                 temperature: float = 0.0, top_k: int | None = None,
                 seed: int | None = None) -> torch.Tensor:
        """Continue ``idx`` (B, T) by ``max_new_tokens`` tokens; returns (B, T + new).

        Greedy when ``temperature`` is 0 (the default). With ``use_cache`` the prompt is run
        once (prefill) and each new token costs one step through the stack with the cached
        keys and values; without it the whole sequence is recomputed every token.
        """
        if isinstance(max_new_tokens, bool) or not isinstance(max_new_tokens, int) \
                or max_new_tokens < 0:
            raise ValueError(f"max_new_tokens must be an int >= 0, got {max_new_tokens!r}")
        if temperature < 0:
            raise ValueError(f"temperature must be >= 0 (0 = greedy), got {temperature}")
        total = idx.shape[1] + max_new_tokens
        if total > self.config.context:
            raise ValueError(f"prompt ({idx.shape[1]}) + max_new_tokens ({max_new_tokens}) = "
                             f"{total} exceeds context={self.config.context}")
        gen = torch.Generator().manual_seed(seed) if seed is not None else None
        cache = KVCache(self.config, idx.shape[0], total,
                        dtype=self.wte.weight.dtype) if use_cache else None
        out = [idx]
        step_input = idx
        for _ in range(max_new_tokens):
            if cache is None:
                step_input = torch.cat(out, dim=1)
            x = self.hidden(step_input, cache)                             # (B, T, d)
            logits = self.head(x[:, -1, :])        # only the last position's logits: (B, V)
            nxt = _pick(logits, temperature, top_k, gen)                   # (B, 1)
            out.append(nxt)
            step_input = nxt
        return torch.cat(out, dim=1)


#: Below this many weights (512 KB of fp32) a product is left to one matmul call: splitting
#: such a small matrix costs more than it saves (measured with two threads: a d = 128 model
#: decodes slower when its 64k-weight matrices are split, while GPT-2 small's 590k-weight
#: attention projection and a d = 256 model's matrices decode faster split).
SPLIT_MIN_WEIGHTS = 1 << 17
#: Products with at most this many rows (decode steps: batch x 1 token) are split.
SPLIT_MAX_ROWS = 4


def _few_rows_matmul(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    """``x @ w`` for ``w`` [in, out] (row-major); when ``x`` has only a few rows and no gradient
    is recorded, the product is split over the threads by blocks of ``w``'s rows.

    Decoding one token multiplies a single row by every weight matrix. BLAS runs such a
    matrix-vector product on one core, and one core streams weights from memory at well below
    the machine's bandwidth (chapter 7 measures it). Viewing ``w`` as ``n`` consecutive blocks
    of rows ``(n, in/n, out)`` (no copy) and ``x`` as the matching ``n`` pieces, ``bmm`` lets
    ``n`` threads each stream one contiguous block; the ``n`` partial products are then summed.
    It is the same product with the sum over ``in`` split in ``n`` parts (so the last bits can
    differ from ``x @ w``). Training (gradients on) and long inputs always take ``x @ w``.
    """
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


def _store_transposed(weight: nn.Parameter) -> nn.Parameter:
    """The same ``[vocab, d]`` parameter (same values, shape and name), stored column-major.

    ``weight.t()`` is then a contiguous ``[d, vocab]`` matrix, the layout in which ``x @ W``
    streams fastest on a CPU; the embedding's row lookup works on either layout. Values are
    copied exactly, so the init (drawn before) is untouched.
    """
    return nn.Parameter(weight.detach().t().contiguous().t(), requires_grad=weight.requires_grad)


def _pick(logits: torch.Tensor, temperature: float, top_k: int | None, gen) -> torch.Tensor:
    """Next token from last-position logits (B, V): argmax, or a sample."""
    if temperature == 0:
        return logits.argmax(dim=-1, keepdim=True)
    logits = logits / temperature
    if top_k is not None:
        kth = torch.topk(logits, min(top_k, logits.size(-1))).values[:, [-1]]
        logits = logits.masked_fill(logits < kth, -math.inf)
    return torch.multinomial(F.softmax(logits, dim=-1), 1, generator=gen)
