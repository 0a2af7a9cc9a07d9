"""Hand-set weights, no training: the book's own ``Transformer`` solving k-hop induction.

The task is ``data.tasks.InductionHops``: a hop marker at position 0, then letters; one hop
from position p goes to the position just after the last earlier occurrence of p's letter,
and the target at p is the letter k hops away (unscored where the chain runs off the
start). Two circuits are built here, as weights of an ordinary pre-norm ``Transformer``
(``core.model``), and scored with the chapter's own scorer (``training.tasks.query_accuracy``):

* **relay** (chasing): block 1 writes each position's previous letter into it; then every
  hop block does the same read, "the latest position r' before my pointer r whose previous
  letter is the letter at r", and moves the pointer to r'. k hops take ``k + 1`` blocks
  (``data.tasks.chasing_depth``); the hop blocks are identical, weight for weight.
* **doubling**: blocks 1 and 2 as in relay give every position p the pointer sigma(p).
  Each further block reads, at the position its own pointer names, the pointer stored
  there: sigma^j(sigma^j(p)) = sigma^(2j)(p). A second pointer (the "accumulator") adds
  the binary digits of k that are set, so any k takes ``2 + ceil(log2 k)`` blocks
  (``data.tasks.doubling_depth``), the order of Sanford, Hsu & Telgarsky (2024).

What a construction proves, and what it does not. That doubling scores ~1.00 at k = 8 with
5 blocks shows that this architecture, at these sizes, *can* do k hops in 2 + log2 k blocks:
k layers are not needed. It says nothing about what gradient descent finds from a random
init in a laptop's budget; the trained sweep of chapter 3 answers that, and it is a separate
question. Why relay is the easier circuit to *learn*: its read is the same content match in
every block (letter against previous letter, the induction head's match), so one learned
head serves every hop and each block's gradient points the same way. A doubling block must
instead read at an address the block below computed (a position written into the stream),
so the lower block must learn to write an address and the upper one to use it, together,
before either pays off in the loss.

How the stream is laid out. Every quantity is a one-hot vector in its own subspace:
``token`` (the input token), ``pos`` (the position), ``prev`` (the previous token),
``ptr`` and ``ptr_letter`` (a pointer and the letter at it), ``acc`` and ``acc_letter``
(doubling's accumulator). A pointer starts as the identity (the embedding writes
``ptr = pos`` and ``ptr_letter = token``), so the first hop block is the same as the others.
A block moves a pointer by adding the new one-hot (one head, reading by content or by
address) and subtracting the old one (a second head attending to its own position), so a
subspace always holds exactly one one-hot. Large attention logits (tens to thousands)
make the softmax hard to within about exp(-20). The MLPs are zero (their output weights
are zero), so every block is attention plus the residual, through the ordinary forward.

How LayerNorm is handled. Each feature f is stored twice, +f in one coordinate and -f in a
paired one, so every position's stream has mean exactly zero and LayerNorm subtracts
nothing. Its sum of squares is 2 x (number of one-hots held), the same at every position
(the marker position too: it holds a marker one-hot where the others hold letters), so
LayerNorm's divisor is a constant we know for each block; the LayerNorm weight is set to
that constant, so LN(x) = x and the reads see the one-hots unscaled. The final LayerNorm is
set the same way, and an untied head reads the answer's letter subspace.
"""

from __future__ import annotations

import math

import torch

from depthnotes.core.checks import eval_mode
from depthnotes.core.config import ModelConfig
from depthnotes.core.model import Transformer
from depthnotes.data.tasks import IGNORE, InductionHops, chasing_depth, doubling_depth
from depthnotes.training.tasks import query_accuracy

KINDS = ("relay", "doubling")

#: Logit of an exact address match (a position read by address, or a block's own
#: position): the other 64 positions get 0, so they leak exp(-30) each.
ADDRESS = 30.0
#: The relay read's terms: a letter match, a bonus per position (the latest match wins by
#: RECENCY = 20 logits), the sink at position 0 when nothing matches, and the penalty on
#: positions at or after the pointer. MATCH > SINK > RECENCY * 64, so a match beats the
#: sink, which beats any non-match; PENALTY beats them all.
MATCH, SINK, RECENCY, PENALTY = 4000.0, 2000.0, 20.0, 10000.0
#: The head's answer logit (the final LN leaves the answer's one-hot at 1).
ANSWER = 10.0
N_HEAD = 4


def blocks_needed(kind: str, k: int) -> int:
    """Blocks the ``kind`` circuit uses for k hops: relay k + 1, doubling 2 + ceil(log2 k)."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    return chasing_depth(k) if kind == "relay" else doubling_depth(k)


class _Layout:
    """Where each one-hot subspace sits in the stream: +f at ``start + i``, -f at
    ``start + size + i`` (the pairing that keeps the mean zero)."""

    def __init__(self, task: InductionHops):
        V, T = task.vocab_size, task.seq_len
        sizes = {"token": V, "pos": T, "prev": V, "ptr": T, "ptr_letter": V,
                 "acc": T, "acc_letter": V}
        self.size, self.start, at = sizes, {}, 0
        for name, n in sizes.items():
            self.start[name] = at
            at += 2 * n
        self.held = len(sizes)               # one-hots a position holds after block 1
        self.used = at
        # head_dim must hold a read's widest query (T + letters) and value (T + V)
        head_dim = T + V + 8
        self.d_model = max(N_HEAD * head_dim, 8 * math.ceil(at / 8))
        self.d_model = N_HEAD * math.ceil(self.d_model / N_HEAD)
        self.head_dim = self.d_model // N_HEAD

    def plus(self, name: str) -> slice:
        s = self.start[name]
        return slice(s, s + self.size[name])

    def minus(self, name: str) -> slice:
        s = self.start[name] + self.size[name]
        return slice(s, s + self.size[name])


def _config(task: InductionHops, n_layer: int, lay: _Layout) -> ModelConfig:
    return ModelConfig(n_layer=n_layer, d_model=lay.d_model, n_head=N_HEAD, d_ff=4,
                       vocab_size=task.vocab_size, context=task.seq_len,
                       tie_embeddings=False, init="normal")


def _write(w: torch.Tensor, rows, lay: _Layout, name: str, values: torch.Tensor) -> None:
    """Add ``values`` (n, size) into subspace ``name`` of the rows of ``w`` (n, d), paired."""
    w[rows, lay.plus(name)] += values
    w[rows, lay.minus(name)] -= values


def _head(block, h: int, lay: _Layout, terms, values) -> None:
    """Set head ``h`` of ``block``'s attention.

    ``terms``: (query subspace, Mq (size_q, n), key subspace, Mk (size_k, n)); the logit
    between a query with one-hots u and a key with one-hots w is sum u^T Mq Mk^T w.
    ``values``: (source subspace, destination subspace, sign): the head copies the
    attended position's source one-hot into its own destination, times sign.
    """
    d, hd = lay.d_model, lay.head_dim
    W = block.attn.c_attn.weight            # [d, 3d]: W_Q | W_K | W_V, head h at h*hd
    P = block.attn.c_proj.weight            # [d, d]: head outputs -> stream
    q0, k0, v0 = h * hd, d + h * hd, 2 * d + h * hd
    col = 0
    for q_sub, Mq, k_sub, Mk in terms:
        n = Mq.shape[1]
        assert col + n <= hd, "head too narrow for its query"
        # SDPA divides the logits by sqrt(head_dim): multiply it back in on the query side
        W[lay.plus(q_sub), q0 + col:q0 + col + n] += Mq * math.sqrt(hd)
        W[lay.plus(k_sub), k0 + col:k0 + col + n] += Mk
        col += n
    col = 0
    for src, dst, sign in values:
        n = lay.size[src]
        assert n == lay.size[dst] and col + n <= hd, "value does not fit"
        W[lay.plus(src), v0 + col:v0 + col + n] += torch.eye(n)
        rows = range(h * hd + col, h * hd + col + n)
        _write(P, list(rows), lay, dst, sign * torch.eye(n))
        col += n


def _eye(n: int, scale: float = 1.0) -> torch.Tensor:
    return scale * torch.eye(n)


def _letters(task: InductionHops, scale: float) -> torch.Tensor:
    """(V, n_symbols): picks the letter coordinates of a token one-hot (not the markers)."""
    m = torch.zeros(task.vocab_size, task.n_symbols)
    m[:task.n_symbols] = scale * torch.eye(task.n_symbols)
    return m


def _self_erase(block, h: int, lay: _Layout, subs) -> None:
    """Head ``h`` attends to its own position and subtracts the ``subs`` it holds."""
    T = lay.size["pos"]
    _head(block, h, lay, [("pos", _eye(T, ADDRESS), "pos", _eye(T))],
          [(s, s, -1.0) for s in subs])


def _prev_block(block, task, lay) -> None:
    """Block 1: each position p attends to p - 1 and writes its token into ``prev`` (the
    marker position, with no p - 1, attends to itself)."""
    T = lay.size["pos"]
    shift = torch.zeros(T, T)                  # key position q -> one-hot of q + 1
    shift[torch.arange(T - 1), torch.arange(1, T)] = 1.0
    _head(block, 0, lay, [("pos", _eye(T, ADDRESS), "pos", shift)],
          [("token", "prev", 1.0)])


def _hop_block(block, task, lay) -> None:
    """One relay hop: from pointer r (and its letter), attend to the latest r' < r whose
    previous letter is r's letter (the sink, position 0, if none), move the pointer there."""
    T = lay.size["pos"]
    i = torch.arange(T)
    # key position r' against pointer one-hot r: -PENALTY [r' >= r] + RECENCY r' + SINK [r'=0]
    K = -PENALTY * (i[None, :] >= i[:, None]).float() + RECENCY * i[None, :].float()
    K[:, 0] += SINK                                        # K[r, r']
    _head(block, 0, lay,
          [("ptr", _eye(T), "pos", K.T),
           ("ptr_letter", _letters(task, MATCH), "prev", _letters(task, 1.0))],
          [("pos", "ptr", 1.0), ("token", "ptr_letter", 1.0)])
    _self_erase(block, 1, lay, ["ptr", "ptr_letter"])


def _doubling_block(block, task, lay, add_to_acc: bool) -> None:
    """One doubling: ptr = sigma^j becomes sigma^2j by reading ptr at the address ptr; with
    ``add_to_acc`` the accumulator (sigma^a) becomes sigma^(a + j), read at the address acc."""
    T = lay.size["pos"]
    _head(block, 0, lay, [("ptr", _eye(T, ADDRESS), "pos", _eye(T))],
          [("ptr", "ptr", 1.0), ("ptr_letter", "ptr_letter", 1.0)])
    _self_erase(block, 1, lay, ["ptr", "ptr_letter"])
    if add_to_acc:
        _head(block, 2, lay, [("acc", _eye(T, ADDRESS), "pos", _eye(T))],
              [("ptr", "acc", 1.0), ("ptr_letter", "acc_letter", 1.0)])
        _self_erase(block, 3, lay, ["acc", "acc_letter"])


@torch.no_grad()
def _build(task: InductionHops, plan, answer: str) -> Transformer:
    """A Transformer whose blocks follow ``plan`` (setters ``f(block, task, layout)``, one
    per block) and whose head reads the letter subspace ``answer``."""
    if not isinstance(task, InductionHops):
        raise TypeError(f"task must be an InductionHops, got {type(task).__name__}")
    lay = _Layout(task)
    model = Transformer(_config(task, len(plan), lay), seed=0)
    for p in model.parameters():
        p.zero_()
    V, T = task.vocab_size, task.seq_len
    # token v -> token, ptr_letter, acc_letter one-hots; position p -> pos, ptr, acc
    for name in ("token", "ptr_letter", "acc_letter"):
        _write(model.wte.weight, list(range(V)), lay, name, torch.eye(V))
    for name in ("pos", "ptr", "acc"):
        _write(model.wpe.weight, list(range(T)), lay, name, torch.eye(T))
    for b, (block, setter) in enumerate(zip(model.h, plan)):
        held = lay.held - 1 if b == 0 else lay.held       # prev is empty before block 1
        for ln in (block.ln_1, block.ln_2):
            ln.weight.fill_(_ln_scale(held, lay.d_model, model.config.ln_eps))
        setter(block, task, lay)
    model.ln_f.weight.fill_(_ln_scale(lay.held, lay.d_model, model.config.ln_eps))
    model.lm_head[:, lay.plus(answer)] = ANSWER * torch.eye(V)
    return model.eval()


def _ln_scale(held: int, d: int, eps: float) -> float:
    """LayerNorm's divisor for a stream of ``held`` paired one-hots (mean zero, sum of
    squares 2 * held): setting the LN weight to it makes LN(x) = x."""
    return math.sqrt(2 * held / d + eps)


def _check_blocks(kind: str, k: int, blocks: int | None) -> int:
    need = blocks_needed(kind, k)
    if blocks is None:
        return need
    if isinstance(blocks, bool) or not isinstance(blocks, int) or not 1 <= blocks <= need:
        raise ValueError(f"blocks must be an int in 1..{need} for {kind} at k={k} (fewer "
                         f"blocks truncate the circuit), got {blocks!r}")
    return blocks


def relay_model(task: InductionHops, k: int, blocks: int | None = None) -> Transformer:
    """The relay circuit for k hops (k + 1 blocks). ``blocks`` < k + 1 keeps only the first
    blocks, which then answer blocks - 1 hops (the negative control)."""
    n = _check_blocks("relay", k, blocks)
    plan = [_prev_block] + [_hop_block] * (n - 1)       # every hop block the same
    return _build(task, plan, "ptr_letter")


def doubling_model(task: InductionHops, k: int, blocks: int | None = None) -> Transformer:
    """The doubling circuit for k hops (2 + ceil(log2 k) blocks). The pointer doubles in every
    block after the second; when k is not a power of two, the accumulator adds 2^(d-1) in
    doubling block d for each binary digit of k that is set, and the head reads it.
    ``blocks`` fewer than needed keeps only the first blocks (the negative control)."""
    n = _check_blocks("doubling", k, blocks)
    m = blocks_needed("doubling", k) - 2                   # doubling blocks of the full circuit
    power = k == 2 ** m
    plan = [_prev_block, _hop_block]
    for d in range(1, m + 1):
        bit = not power and bool((k >> (d - 1)) & 1)
        plan.append(lambda b, t, lay, bit=bit: _doubling_block(b, t, lay, bit))
    return _build(task, plan[:n], "ptr_letter" if power else "acc_letter")


def score(model: Transformer, task: InductionHops, k: int, n_sequences: int = 256,
          seed: int = 10**9, skip=()) -> float:
    """Accuracy on k-hop queries of fresh sequences: the chapter's scorer
    (``training.tasks.query_accuracy``; only positions whose k-hop answer exists count), of the
    model without the blocks in ``skip`` (indices from 0) if any are given."""
    return query_accuracy(model, task, k, n_sequences, seed, skip=skip)


@torch.no_grad()
def scores_by_blocks(model: Transformer, task: InductionHops, k: int, n_sequences: int = 256,
                     seed: int = 10**9) -> list[float]:
    """``score`` of the model cut after each of its blocks, from one forward pass: entry
    b - 1 is the accuracy of its first b blocks followed by its final norm and head, on
    the sequences ``score`` uses. A circuit built with fewer blocks (``relay_model(task, k,
    blocks=b)``, ``doubling_model(task, k, blocks=b)``) *is* that cut, weight for weight,
    so entry b - 1 equals its ``score`` exactly (tests/test_constructions.py checks it):
    one pass scores a circuit and its one-block-fewer control, instead of two."""
    idx, targets = task.batch(n_sequences, seed=seed + k, hops=k)         # as query_accuracy
    mask = targets != IGNORE
    out = []
    with eval_mode(model):
        x = model.embed(idx)                                              # (N, T, d)
        for i in range(model.config.n_layer):          # the loop of Transformer.hidden
            x = model.block(i)(x, None, i)
            logits = model.logits(x)                                      # (N, T, vocab)
            out.append((logits.argmax(-1)[mask] == targets[mask]).float().mean().item())
    return out


@torch.no_grad()
def shorter_hops_baseline(task: InductionHops, k: int, j: int, n_sequences: int = 256,
                          seed: int = 10**9) -> float:
    """How often the j-hop answer equals the k-hop answer, on the positions ``score`` counts
    and the same sequences: what a model that does j < k hops exactly scores at k."""
    idx, targets = task.batch(n_sequences, seed=seed + k, hops=k)        # (N, T + 1)
    shorter = task.answers(idx[:, 1:], j)                                 # (N, T)
    mask = targets[:, 1:] != IGNORE
    return (shorter[mask] == targets[:, 1:][mask]).float().mean().item()
