"""A GPT-style decoder whose depth, norm placement and residual scaling are configuration.

Layout and parameter names follow GPT-2 (``wte``, ``wpe``, ``h[i].ln_1``, ``attn.c_attn``,
``attn.c_proj``, ``ln_2``, ``mlp.c_fc``, ``mlp.c_proj``, ``ln_f``), so a GPT-2 state dict maps
onto it name for name. One block, three placements of the LayerNorm, one residual rule
``a*x + s*F`` (``Block.residual``)::

    pre:       x = x + s*Attn(LN1(x));   x = x + s*MLP(LN2(x))      (+ final LN after block L)
    post:      x = LN1(a*x + s*Attn(x)); x = LN2(a*x + s*MLP(x))    with a = 1
    deepnorm:  the post form with a = alpha(L) from DeepNet and s = 1

``s`` is ``config.branch_multiplier`` (1, or a depth rule) and ``a`` is
``config.residual_alpha``. With ``ln_scaling="1/sqrt(l)"`` a pre-norm block at application l
(1-based) multiplies LN1(x) and LN2(x) by ``config.ln_multiplier`` = 1/sqrt(l) (LayerNorm
Scaling). The FFN's GELU is the exact one by default and GPT-2's tanh form in the GPT-2
presets (``config.ACTIVATIONS``).

Depth is counted in *applications*. With ``n_unique_blocks`` = k the module list ``h`` holds
only k blocks (so ``parameters()`` counts each once) and the forward applies block i % k at
application i = 0 .. L-1. Everything indexed by depth follows the application, not the stored
block: the KV cache has one entry per application (a shared block sees different inputs each
time, so its keys and values differ), ``skip`` names applications, and LayerNorm Scaling uses
the application's l.

Decoding one token reads every weight once; on a CPU that is bound by how fast the weights
stream from memory (chapter 7). The one speed path the model takes for it is in
``fastpath.py``, next to the benchmark that measured it (``benchmarks/README.md``).
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from depthnotes.core import fastpath
from depthnotes.core.checks import check_int, check_number
from depthnotes.core.config import ModelConfig
from depthnotes.core.init import init_weights


class Conv1D(nn.Module):
    """A linear map y = x @ W + b with W stored [in, out]: GPT-2's ``Conv1D`` layout, kept so
    that GPT-2's (and HF's) state dicts load name for name and without transposes."""

    def __init__(self, n_in: int, n_out: int, bias: bool):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(n_in, n_out))
        self.bias = nn.Parameter(torch.zeros(n_out)) if bias else None

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # (..., in) -> (..., out)
        if self.bias is None:
            return x @ self.weight
        # b + x @ W in one call, as GPT-2's Conv1D does (one op less per linear map)
        return torch.addmm(self.bias, x.reshape(-1, x.shape[-1]), self.weight).view(
            *x.shape[:-1], self.weight.shape[1])

    def decode_forward(self, x: torch.Tensor) -> torch.Tensor:
        """The forward inside ``fastpath.decoding`` (``generate``): a decode step's few rows
        split over the threads when ``fastpath.takes_split`` says so, else ``forward``."""
        if fastpath.takes_split(x, self.weight):
            y = fastpath.split(x, self.weight)
            return y if self.bias is None else y + self.bias
        return Conv1D.forward(self, x)


class KVCache:
    """Keys and values of every layer, preallocated for ``max_len`` positions.

    One entry per application of a block (``n_layer`` of them), also when blocks are shared.

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
    """One transformer block; the norm placement decides where the LayerNorms sit."""

    def __init__(self, config: ModelConfig):
        super().__init__()
        self.ln_1 = nn.LayerNorm(config.d_model, eps=config.ln_eps, bias=config.bias)
        self.attn = CausalSelfAttention(config)
        self.ln_2 = nn.LayerNorm(config.d_model, eps=config.ln_eps, bias=config.bias)
        self.mlp = MLP(config)
        self.pre_norm = config.norm == "pre"
        self.alpha = config.residual_alpha             # a: 1, or DeepNet's alpha
        self.branch_scale = config.branch_multiplier   # s: 1, or a depth rule of L
        # LayerNorm Scaling's multiplier of application `layer`, or None when it is off (then
        # the forward does not multiply at all, so "none" computes exactly what it did before)
        self.ln_multiplier = None if config.ln_scaling == "none" else config.ln_multiplier

    def residual(self, x: torch.Tensor, branch: torch.Tensor) -> torch.Tensor:
        """a*x + s*F(x): how every placement adds a branch to the stream."""
        if self.alpha == 1.0 and self.branch_scale == 1.0:
            return x + branch  # the same sum without two multiplications by 1: ~2 % of a
            #                    training step (measured, benchmarks/README.md)
        return self.alpha * x + self.branch_scale * branch

    def branch_input(self, ln: nn.LayerNorm, x: torch.Tensor, layer: int) -> torch.Tensor:
        """A pre-norm branch's input LN(x), times 1/sqrt(layer + 1) under LayerNorm Scaling."""
        h = ln(x)
        return h if self.ln_multiplier is None else h * self.ln_multiplier(layer)

    def forward(self, x: torch.Tensor, cache: KVCache | None = None,
                layer: int = 0) -> torch.Tensor:                             # (B, T, d)
        """The block applied at (0-based) application ``layer``: the index of its KV-cache
        entry and, under LayerNorm Scaling, its depth l = layer + 1."""
        if self.pre_norm:                                    # x + s*F(LN(x))
            h = self.branch_input(self.ln_1, x, layer)
            x = self.residual(x, self.attn(h, cache, layer))
            h = self.branch_input(self.ln_2, x, layer)
            return self.residual(x, self.mlp(h))
        x = self.ln_1(self.residual(x, self.attn(x, cache, layer)))          # LN(a*x + s*F(x))
        return self.ln_2(self.residual(x, self.mlp(x)))


class Transformer(nn.Module):
    """GPT-style decoder: embeddings, ``n_layer`` block applications, (final norm), head.

    ``h`` holds the ``config.n_blocks`` stored blocks (L of them unless ``n_unique_blocks``
    shares weights); ``block(i)`` is the one applied at application i.

    The head is tied to the token embedding ``wte.weight`` ([vocab, d]) by default; untied, it
    is its own [vocab, d] parameter ``lm_head`` (a plain parameter: the head is one product).
    """

    def __init__(self, config: ModelConfig, seed: int | None = None):
        super().__init__()
        if not isinstance(config, ModelConfig):
            raise TypeError(f"Transformer expects a ModelConfig, got {type(config).__name__}")
        self.config = config
        self.wte = nn.Embedding(config.vocab_size, config.d_model)
        self.wpe = nn.Embedding(config.context, config.d_model)
        self.h = nn.ModuleList(Block(config) for _ in range(config.n_blocks))
        self.ln_f = (nn.LayerNorm(config.d_model, eps=config.ln_eps, bias=config.bias)
                     if config.norm == "pre" else None)
        self.lm_head = (None if config.tie_embeddings
                        else nn.Parameter(torch.empty(config.vocab_size, config.d_model)))
        init_weights(self, config, seed=seed)

    def block(self, layer: int) -> Block:
        """The stored block applied at (0-based) application ``layer`` (``config.block_index``)."""
        return self.h[self.config.block_index(layer)]

    # -- the forward pass ---------------------------------------------------------------
    def embed(self, idx: torch.Tensor, start: int = 0) -> torch.Tensor:
        """Token plus position embeddings of ``idx`` (B, T) -> (B, T, d)."""
        T = idx.shape[1]
        if start + T > self.config.context:
            raise ValueError(f"sequence of {start + T} positions exceeds context="
                             f"{self.config.context}")
        pos = torch.arange(start, start + T, device=idx.device)
        return self.wte(idx) + self.wpe(pos)

    def hidden(self, idx: torch.Tensor, cache: KVCache | None = None,
               skip=()) -> torch.Tensor:
        """The residual stream after the last block, *before* the final norm, (B, T, d), for
        token ids ``idx`` (B, T). The model's one loop over its blocks.

        With a ``cache``, ``idx`` continues the cached positions and the cache is extended.
        Applications whose index (0 .. L-1) is in ``skip`` are left out (the identity in their
        place), which is how the probes remove a block (not together with a cache); with shared
        weights an index names one application of a stored block, not all of them.
        """
        if idx.dim() != 2:
            raise ValueError(f"idx must have shape (batch, time), got {tuple(idx.shape)}")
        if cache is not None and skip:
            raise ValueError("skip removes blocks from a full forward pass; not with a cache")
        start = 0 if cache is None else cache.length
        x = self.embed(idx, start)                                           # (B, T, d)
        stored = list(self.h)   # ModuleList lookups: ~0.5 % of a decode step (benchmarks/)
        for i in range(self.config.n_layer):
            if i not in skip:
                x = stored[self.config.block_index(i)](x, cache, i)
        if cache is not None:
            cache.length += idx.shape[1]
        return x

    def final_norm(self, x: torch.Tensor) -> torch.Tensor:
        """The final LayerNorm of a pre-norm stack; post-norm and DeepNorm have none."""
        return x if self.ln_f is None else self.ln_f(x)

    def features(self, idx: torch.Tensor, skip=()) -> torch.Tensor:
        """What the output head reads, (B, T, d): the last block's output *after* the final
        norm. F(x; theta) in DeepNet's update-size measure (``probes.final_hidden``)."""
        return self.final_norm(self.hidden(idx, skip=skip))

    def logits(self, stream: torch.Tensor) -> torch.Tensor:
        """The residual stream (..., d) -> logits (..., vocab): the final norm, then the output
        head (``unembed``). Give it the stream, not ``features``, which are already normed."""
        return self.unembed(self.final_norm(stream))

    def unembed(self, features: torch.Tensor) -> torch.Tensor:
        """The output head alone: features after the final norm (..., d) -> logits (..., vocab)."""
        w = self.wte.weight if self.lm_head is None else self.lm_head        # [vocab, d]
        return F.linear(features, w)                                         # x @ w.T

    def forward(self, idx: torch.Tensor, targets: torch.Tensor | None = None,
                cache: KVCache | None = None, skip=()):
        """Logits (B, T, vocab) for token ids ``idx`` (B, T), and the mean cross-entropy
        against ``targets`` (B, T) when given (else None). ``cache`` and ``skip`` as in
        ``hidden``."""
        logits = self.logits(self.hidden(idx, cache, skip))                    # (B, T, V)
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
        keys and values; without it the whole sequence is recomputed every token. The cache
        and the sampling generator live on ``idx``'s device (the model's).
        """
        check_int("max_new_tokens", max_new_tokens, minimum=0)
        check_number("temperature", temperature, 0, extra="(0 = greedy)")
        total = idx.shape[1] + max_new_tokens
        if total > self.config.context:
            raise ValueError(f"prompt ({idx.shape[1]}) + max_new_tokens ({max_new_tokens}) = "
                             f"{total} exceeds context={self.config.context}")
        gen = None
        if seed is not None and temperature > 0:
            gen = torch.Generator(device=idx.device).manual_seed(seed)
        cache = KVCache(self.config, idx.shape[0], total, dtype=self.wte.weight.dtype,
                        device=idx.device) if use_cache else None
        out = [idx]
        step_input = idx
        with fastpath.decoding(self):   # the decode steps' products may split over threads
            for _ in range(max_new_tokens):
                if cache is None:
                    step_input = torch.cat(out, dim=1)
                x = self.hidden(step_input, cache)                         # (B, T, d)
                logits = self.logits(x[:, -1, :])    # only the last position's logits: (B, V)
                nxt = _pick(logits, temperature, top_k, gen)               # (B, 1)
                out.append(nxt)
                step_input = nxt
        return torch.cat(out, dim=1)


def _pick(logits: torch.Tensor, temperature: float, top_k: int | None, gen) -> torch.Tensor:
    """Next token from last-position logits (B, V): argmax, or a sample."""
    if temperature == 0:
        return logits.argmax(dim=-1, keepdim=True)
    logits = logits / temperature
    if top_k is not None:
        kth = torch.topk(logits, min(top_k, logits.size(-1))).values[:, [-1]]
        logits = logits.masked_fill(logits < kth, -math.inf)
    return torch.multinomial(F.softmax(logits, dim=-1), 1, generator=gen)
