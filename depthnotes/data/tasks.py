"""The book's synthetic multi-step data: k-hop pointer chasing (chapter 3, claim C5).

(The text corpus lives in ``data.corpus``; this module holds the synthetic tasks whose answer
needs k dependent steps, and ``training.tasks`` trains on them.)

The task
--------
Each sequence first lists a random permutation ``f`` of ``n_nodes`` symbols as a table, the
value ``f(i)`` written at position ``i``; then a separator; then ``n_queries`` query symbols
``x``. At every query position the model must output ``f^k(x) = f(f(...f(x)))`` (k hops)::

    positions   0    1    2   ...  n-1    n     n+1   n+2  ...
    tokens     f(0) f(1) f(2) ... f(n-1) SEP    x_1   x_2  ...
    targets     -    -    -   ...   -     -   f^k(x_1) f^k(x_2) ...

Why it is serial: the address of hop j is the *result* of hop j-1. One attention layer can
read the table at one address per query (attend to position x, copy the symbol there); it
cannot read at an address it does not know yet. A direct solution therefore chains k lookups
through k layers. (Cleverer circuits exist in principle — composing the table with itself,
"pointer doubling", needs only about log2 k rounds — but under a causal mask a table entry
can only see the entries to its left, so most of that shortcut is not available here.)
The permutation is fresh in every sequence, so nothing can be memorised: the table must be
read. A permutation keeps every answer uniformly distributed (chance = 1/n_nodes).

Two layouts of the queries (``layout``):

- ``"query_tokens"`` (above): one token per (k, x), its own embedding for each pair. The model
  must learn separately, for every query token, which symbol it names.
- ``"hop_marker"``: each query is two tokens, a hop marker ``H_k`` and then the start symbol
  ``x`` itself (the same token as the symbol ``x`` in the table); the answer is due at ``x``::

    tokens     f(0) ... f(n-1) SEP  H_k1  x_1      H_k2  x_2      ...
    targets     -   ...   -     -    -   f^k1(x_1)  -   f^k2(x_2)  ...

  A query then names its start with the very token the table uses for it, so the read that
  answers one hop ("attend to the position of the symbol I hold") is the same for the query
  and for a symbol a block has just copied out of the table. Chapter 3's calibration runs
  found that on sixteen symbols this layout learns two hops within a few thousand steps
  where the other does not (see the chapter).

Targets at table and separator positions are -100, which ``torch.nn.functional.cross_entropy``
ignores, so ``Transformer(cfg)(idx, targets)`` trains on the queries only.

Chapter 3's depth sweep at one parameter budget runs from a shell:
``python -m depthnotes khop --help``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from depthnotes.core.checks import check_choice, check_int

#: Target value the loss ignores (PyTorch's cross_entropy default ``ignore_index``).
IGNORE = -100

#: How a query is written (see the module docstring).
LAYOUTS = ("query_tokens", "hop_marker")


@dataclass(frozen=True)
class PointerChasing:
    """k-hop pointer chasing over a random permutation of ``n_nodes`` symbols, k = 1..max_hops.

    Token ids: ``0 .. n_nodes-1`` are the table's symbols and ``n_nodes`` is the separator.
    With ``layout="query_tokens"`` a query "k hops from x" is the single token
    ``query_token(k, x)``; with ``"hop_marker"`` it is the marker ``hop_marker(k)`` followed
    by the symbol x. Either way one sequence mixes queries of different k, and one trained
    model can be scored on every k separately. ``vocab_size`` is ``n_nodes + 1 + max_hops *
    n_nodes`` or ``n_nodes + 1 + max_hops``, ``seq_len`` is ``n_nodes + 1`` plus one or two
    tokens per query.
    """

    max_hops: int
    n_nodes: int = 8
    n_queries: int = 8
    layout: str = "query_tokens"

    def __post_init__(self) -> None:
        check_int("max_hops", self.max_hops, 1)
        check_int("n_nodes", self.n_nodes, 2)
        check_int("n_queries", self.n_queries, 1)
        check_choice("layout", self.layout, LAYOUTS)

    @property
    def hops(self) -> tuple:
        """The k's a query may ask for: 1..max_hops."""
        return tuple(range(1, self.max_hops + 1))

    @property
    def _per_query(self) -> int:
        """Tokens per query: 1 (query_tokens) or 2 (hop_marker)."""
        return 1 if self.layout == "query_tokens" else 2

    @property
    def vocab_size(self) -> int:
        if self.layout == "hop_marker":
            return self.n_nodes + 1 + self.max_hops
        return self.n_nodes + 1 + self.max_hops * self.n_nodes

    @property
    def sep(self) -> int:
        """The separator's token id."""
        return self.n_nodes

    @property
    def seq_len(self) -> int:
        return self.n_nodes + 1 + self._per_query * self.n_queries

    @property
    def answer_positions(self) -> torch.Tensor:
        """The positions at which answers are due, one per query, (n_queries,) int64."""
        n, per = self.n_nodes, self._per_query
        return torch.arange(self.n_queries) * per + n + per

    @property
    def chance(self) -> float:
        """Accuracy of guessing: answers are uniform over the symbols."""
        return 1.0 / self.n_nodes

    def query_token(self, hops, start):
        """Token id of the query "follow ``hops`` pointers from ``start``" (ints or tensors;
        layout "query_tokens")."""
        if self.layout != "query_tokens":
            raise ValueError(f"query_token is for layout 'query_tokens'; this task's layout "
                             f"is {self.layout!r} (see hop_marker)")
        return self.n_nodes + 1 + (hops - 1) * self.n_nodes + start

    def hop_marker(self, hops):
        """Token id of the marker "follow ``hops`` pointers from the next symbol" (ints or
        tensors; layout "hop_marker")."""
        if self.layout != "hop_marker":
            raise ValueError(f"hop_marker is for layout 'hop_marker'; this task's layout "
                             f"is {self.layout!r} (see query_token)")
        return self.n_nodes + hops

    def queries(self, idx: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``(hops, starts)``, each (B, n_queries): the k and x of every query of a batch
        ``idx`` (B, seq_len), read back from its tokens."""
        n = self.n_nodes
        q = idx[:, n + 1:]                                        # (B, per * n_queries)
        if self.layout == "hop_marker":
            return q[:, 0::2] - n, q[:, 1::2]
        q = q - (n + 1)
        return q // n + 1, q % n

    def batch(self, batch_size: int, seed: int,
              hops: int | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """``(idx, targets)``, both ``(batch_size, seq_len)`` int64; the same seed gives the
        same batch (``sample`` with a generator seeded by ``seed``)."""
        return self.sample(batch_size, torch.Generator().manual_seed(int(seed)), hops)

    def sample(self, batch_size: int, generator: torch.Generator,
               hops: int | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """``(idx, targets)``, both ``(batch_size, seq_len)`` int64, drawn from ``generator``
        (the form ``train.train`` calls a batch function with). Each query's k is drawn
        uniformly from 1..max_hops, or is ``hops`` for every query when given. Targets are
        -100 except at the query positions."""
        check_int("batch_size", batch_size, 1)
        if hops is not None and check_int("hops", hops, 1) > self.max_hops:
            raise ValueError(f"hops must be None or an int in 1..{self.max_hops}, got {hops!r}")
        gen = generator
        n, q = self.n_nodes, self.n_queries
        table = torch.argsort(torch.rand(batch_size, n, generator=gen), dim=1)  # (B, n): f
        starts = torch.randint(0, n, (batch_size, q), generator=gen)           # (B, q): x
        ks = torch.randint(1, self.max_hops + 1, (batch_size, q), generator=gen)
        if hops is not None:
            ks = torch.full_like(ks, hops)
        answers = starts.clone()
        for k in range(1, self.max_hops + 1):                                   # f^k(x)
            answers = torch.where(ks >= k, torch.gather(table, 1, answers), answers)
        sep = torch.full((batch_size, 1), self.sep, dtype=torch.long)
        if self.layout == "hop_marker":                                         # H_k, x pairs
            queries = torch.stack([self.hop_marker(ks), starts], dim=2).reshape(batch_size, -1)
        else:
            queries = self.query_token(ks, starts)                              # (B, q)
        idx = torch.cat([table, sep, queries], dim=1)                           # (B, seq_len)
        targets = torch.full_like(idx, IGNORE)
        targets[:, self.answer_positions] = answers
        return idx, targets


@dataclass(frozen=True)
class InductionHops:
    """k-hop induction heads over ``length`` symbols of an ``n_symbols``-letter alphabet.

    The task of Sanford, Hsu & Telgarsky (2024), in our own code. A sequence is a hop marker
    ``H_k`` and then ``length`` random symbols, no symbol twice in a row::

        positions   0     1    2    3   ...  T
        tokens     H_k   s_0  s_1  s_2  ... s_{T-1}
        targets     -    a_0  a_1  a_2  ... a_{T-1}     a_t = s[sigma^k(t)]

    One hop from position t, ``sigma(t)``, is the position just after the last earlier
    occurrence of the symbol at t (what an induction head copies: "last time I saw this
    symbol, what came next?"). ``k`` hops repeat it. Every position is a query, so a
    sequence gives ``length`` answers; a position whose chain runs off the start has no
    answer and its target is -100 (ignored by the loss and the scores).

    Why depth, and why doubling is open here: ``sigma(t) < t`` always (no symbol repeats
    at once), so every pointer points left, the causal mask allows every read, and a block
    can compose the map with itself: positions that know ``sigma^j`` learn ``sigma^(2j)``
    by reading it at ``sigma^j(t)``. One hop takes two blocks (one to write each position's
    previous symbol into it, one to find the match), and each further block can double the
    hops: ``2 + ceil(log2 k)`` blocks for k hops (``doubling_depth``), against ``k + 1`` for
    a chain of single hops (``chasing_depth``). The symbols are fresh in every sequence, so
    nothing can be memorised.

    ``hops`` are the k's a sequence may ask for (each sequence draws one, uniformly). Token
    ids: ``0 .. n_symbols-1`` are the symbols, ``n_symbols + i`` is the marker of ``hops[i]``.
    """

    hops: tuple = (1, 2, 4, 8)
    n_symbols: int = 4
    length: int = 64

    def __post_init__(self) -> None:
        if not isinstance(self.hops, tuple) or not self.hops:
            raise TypeError(f"hops must be a non-empty tuple of ints, got {self.hops!r}")
        for k in self.hops:
            check_int("hops", k, 1)
        if list(self.hops) != sorted(set(self.hops)):
            raise ValueError(f"hops must be increasing and distinct, got {self.hops}")
        check_int("n_symbols", self.n_symbols, 3)
        check_int("length", self.length, 2)

    @property
    def max_hops(self) -> int:
        return self.hops[-1]

    @property
    def vocab_size(self) -> int:
        return self.n_symbols + len(self.hops)

    @property
    def seq_len(self) -> int:
        return self.length + 1

    def hop_marker(self, hops):
        """Token id of the marker of ``hops`` (an int in ``self.hops``)."""
        if hops not in self.hops:
            raise ValueError(f"hops must be one of {self.hops}, got {hops!r}")
        return self.n_symbols + self.hops.index(hops)

    def symbols(self, batch_size: int, generator: torch.Generator) -> torch.Tensor:
        """(batch_size, length) int64: each symbol uniform over the ones unlike the last."""
        a, T = self.n_symbols, self.length
        first = torch.randint(0, a, (batch_size, 1), generator=generator)
        steps = torch.randint(1, a, (batch_size, T - 1), generator=generator)
        return torch.cat([first, first + torch.cumsum(steps, 1)], 1) % a

    def hop_positions(self, s: torch.Tensor, hops) -> torch.Tensor:
        """``sigma^k(t)`` for every position of symbols ``s`` (B, length), -1 where the
        chain runs off the start; (B, length) int64. ``hops`` is one k for every row or a
        (B,) tensor of them (k = 0 gives t itself)."""
        hops = torch.as_tensor(hops, dtype=torch.long).expand(s.shape[0])     # (B,)
        if (hops < 0).any():
            raise ValueError(f"hops must be >= 0, got {hops.min().item()}")
        B, T = s.shape
        at = torch.arange(T).expand(B, T)
        seen = torch.stack([torch.where(s == c, at, -1) for c in range(self.n_symbols)])
        latest = torch.cummax(seen, dim=2).values                      # (a, B, T): up to t
        before = torch.cat([torch.full_like(latest[..., :1], -1), latest[..., :-1]], 2)
        last = torch.gather(before, 0, s[None]).squeeze(0)             # (B, T): before t
        sigma = torch.where(last >= 0, last + 1, last)                 # one hop
        pos = at
        for j in range(int(hops.max()) if B else 0):
            step = torch.where(pos >= 0, torch.gather(sigma, 1, pos.clamp(min=0)), pos)
            pos = torch.where((hops > j)[:, None], step, pos)
        return pos

    def chain_spans(self, s: torch.Tensor, hops) -> torch.Tensor:
        """How far back each position's ``hops``-hop answer lies, ``t - sigma^k(t)``, for
        symbols ``s`` (B, length); -1 where the chain runs off the start. A chain spanning
        more positions than a block reads around itself cannot be answered by a window of
        reads standing in for hops (chapter 3's long-chain score)."""
        pos = self.hop_positions(s, hops)
        return torch.where(pos >= 0, torch.arange(s.shape[1]) - pos, -1)

    def answers(self, s: torch.Tensor, hops) -> torch.Tensor:
        """``s[sigma^k(t)]`` at every position, -100 where there is none; (B, length)."""
        pos = self.hop_positions(s, hops)
        return torch.where(pos >= 0, torch.gather(s, 1, pos.clamp(min=0)), IGNORE)

    def batch(self, batch_size: int, seed: int,
              hops: int | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """``(idx, targets)``, both ``(batch_size, seq_len)`` int64, from ``seed``."""
        return self.sample(batch_size, torch.Generator().manual_seed(int(seed)), hops)

    def sample(self, batch_size: int, generator: torch.Generator,
               hops: int | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """``(idx, targets)`` drawn from ``generator``: each sequence's k drawn uniformly
        from ``self.hops`` (or ``hops`` for all), its symbols fresh."""
        check_int("batch_size", batch_size, 1)
        which = torch.randint(0, len(self.hops), (batch_size,), generator=generator)
        if hops is not None:
            which = torch.full_like(which, self.hop_marker(hops) - self.n_symbols)
        ks = torch.tensor(self.hops)[which]                                   # (B,)
        s = self.symbols(batch_size, generator)                               # (B, T)
        none = torch.full((batch_size, 1), IGNORE, dtype=torch.long)
        targets = torch.cat([none, self.answers(s, ks)], 1)                   # (B, T + 1)
        idx = torch.cat([(self.n_symbols + which)[:, None], s], 1)            # (B, T + 1)
        return idx, targets


def chasing_depth(hops: int) -> int:
    """Blocks a chain of single hops needs on ``InductionHops``: one to bring each
    position's previous symbol in, then one per hop."""
    return check_int("hops", hops, 1) + 1


def doubling_depth(hops: int) -> int:
    """Blocks the doubling circuit of chapter 3 needs on ``InductionHops``: two for the first
    hop, then one per doubling, ``2 + ceil(log2 k)``. This is our count for the circuit the
    chapter draws (the idea behind Sanford, Hsu & Telgarsky 2024's depth of order log k; we
    do not rely on their exact constant, and the sweep's k's are powers of two)."""
    return 2 + math.ceil(math.log2(check_int("hops", hops, 1)))


#: Chapter 3's long chains: a ``hops``-hop query whose answer lies at least this many
#: positions back (``InductionHops.chain_spans``). On four letters one hop spans at most
#: 8 positions 97 % of the time, so a window of a few reads can stand in for one or two
#: hops on short chains but not on these.
LONG_SPAN = 25
