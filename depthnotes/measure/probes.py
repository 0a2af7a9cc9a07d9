"""Measurements on a model: what the residual stream, the gradients and the updates look like.

Each probe returns plain data (NumPy arrays or a small dataclass), never a plot, so a notebook
can tabulate it, fit it, plot it or assert on it. All probes run the model's own forward pass
(with hooks, ``Transformer.features``, or ``forward(..., skip=...)`` to remove blocks), in eval
mode, restoring the model's mode afterwards; none changes the weights.

* ``residual_variance_by_layer`` — the variance of the residual stream after the embedding and
  after every block (forward hooks): chapter 4's variance growth (C6, C7) and chapter 5's
  scaled variants (C11).
* ``grad_norm_by_layer`` — the norm of each block's parameter gradient after one backward
  pass (C8, C9).
* ``final_hidden`` and ``UpdateTracker`` — the model's output representation F(x; theta) and
  how far it has moved from its value at initialisation, ||F(x; theta_t) - F(x; theta_0)||,
  step by step: DeepNet's Figure 5 measure (C12).
* ``BlockMoveTracker`` — during training, how far each block's output moves in each step,
  relative to its size at initialisation: what goes wrong in the first steps of a post-norm
  stack that fails (chapter 4).
* ``attention_weights`` — every block's attention pattern, computed from the input its
  attention sees (a forward pre-hook) with the block's own W_Q and W_K: chapter 3's look
  inside a model that chases pointers.
* ``layer_contribution`` — each block's relative contribution ||x_out - x_in|| / ||x_in|| (C10),
  and ``skip_layer_losses`` — the loss with one block removed at a time (C10, chapter 6).

Norms over a (batch, time, d_model) tensor are taken per token (over d_model) and averaged over
the batch and time, so they do not depend on how many tokens were probed.
"""

from __future__ import annotations

import numpy as np
import torch

from depthnotes.core.checks import check_int, eval_mode


def check_probe_input(model, idx: torch.Tensor) -> None:
    """A clear error unless ``model`` is a ``Transformer`` and ``idx`` its (B, T) token ids."""
    if not isinstance(idx, torch.Tensor) or idx.dim() != 2 or idx.dtype != torch.long:
        raise ValueError("idx must be a (batch, time) tensor of token ids (torch.long), got "
                         f"{getattr(idx, 'shape', type(idx).__name__)}")
    if not hasattr(model, "h") or not hasattr(model, "embed"):
        raise TypeError(f"expected a depthnotes Transformer, got {type(model).__name__}")


@torch.no_grad()
def residual_stream(model, idx: torch.Tensor) -> list[torch.Tensor]:
    """The residual stream after the embedding and after each block: L + 1 tensors (B, T, d),
    captured with forward hooks on the blocks during one ordinary forward pass."""
    check_probe_input(model, idx)
    captured: list[torch.Tensor] = []

    def pre_hook(module, args):
        if not captured:                      # the first block's input is the embedding
            captured.append(args[0].detach().clone())

    def hook(module, args, output):
        captured.append(output.detach().clone())

    handles = [model.h[0].register_forward_pre_hook(pre_hook)] if len(model.h) else []
    handles += [block.register_forward_hook(hook) for block in model.h]
    _forward_with_hooks(model, idx, handles)
    return captured


def residual_variance_by_layer(model, idx: torch.Tensor) -> np.ndarray:
    """Variance of the residual stream's entries (over batch, time and d_model) after the
    embedding (entry 0) and after each block (entries 1..L): shape (L + 1,).

    For a pre-norm stack this is the signal that reaches the final LayerNorm; a post-norm block
    ends in a LayerNorm, so its entries sit near 1 by construction.
    """
    return np.array([float(x.var(unbiased=False)) for x in residual_stream(model, idx)])


def grad_norm_by_layer(model, idx: torch.Tensor, targets: torch.Tensor) -> np.ndarray:
    """L2 norm of the gradient of the loss with respect to all parameters of each block, after
    one forward and backward pass on ``(idx, targets)``: shape (L,). The model's ``.grad``
    fields are cleared afterwards."""
    check_probe_input(model, idx)
    model.zero_grad(set_to_none=True)
    _, loss = model(idx, targets=targets)
    loss.backward()
    norms = []
    for block in model.h:
        sq = sum(float(p.grad.pow(2).sum()) for p in block.parameters() if p.grad is not None)
        norms.append(sq ** 0.5)
    model.zero_grad(set_to_none=True)
    return np.array(norms)


@torch.no_grad()
def final_hidden(model, idx: torch.Tensor) -> torch.Tensor:
    """The representation the output head reads, (B, T, d): the last block's output, after the
    final LayerNorm when the model has one (pre-norm). This is F(x; theta) in DeepNet's
    update-size measure (``Transformer.features``, in eval mode)."""
    check_probe_input(model, idx)
    with eval_mode(model):
        return model.features(idx)


def _token_norm(x: torch.Tensor) -> float:
    """Per-token L2 norm over the last dimension, averaged over the other dimensions."""
    return float(x.norm(dim=-1).mean())


class UpdateTracker:
    """Records ||F(x; theta_t) - F(x; theta_0)|| after every training step.

    Build it before training (it stores F(x; theta_0) for the probe batch ``idx``), pass it as
    ``on_step`` to ``depthnotes.training.loop.train``; ``steps`` and ``sizes`` then hold the 1-based
    step numbers and the update sizes (per-token L2 norm, averaged over tokens).
    ``every`` measures only every n-th step (a forward pass per measurement).
    """

    def __init__(self, model, idx: torch.Tensor, every: int = 1):
        check_int("every", every)
        self.idx, self.every = idx, every
        self.reference = final_hidden(model, idx)
        self.steps: list[int] = []
        self.sizes: list[float] = []

    def __call__(self, step: int, model) -> None:
        if (step + 1) % self.every == 0:
            self.steps.append(step + 1)
            self.sizes.append(update_size(model, self.reference, self.idx))


def update_size(model, reference: torch.Tensor, idx: torch.Tensor) -> float:
    """||F(x; theta) - reference||, per token, averaged over tokens (``reference`` is
    ``final_hidden`` of the same ``idx`` at another moment, usually initialisation)."""
    return _token_norm(final_hidden(model, idx) - reference)


class BlockMoveTracker:
    """Records, after every training step t, how far each block's output moved in that step:
    ||x_l(theta_t) - x_l(theta_{t-1})|| / ||x_l(theta_0)|| for blocks l = 1..L (per token,
    averaged over the probe batch ``idx``), where x_l is the residual stream after block l
    (``residual_stream``). Pass it as ``on_step`` to ``training.loop.train``; ``moves`` is
    then an array (steps, L). A block whose output is replaced by an unrelated vector of the
    same size moves by about sqrt(2)."""

    def __init__(self, model, idx: torch.Tensor):
        self.idx = idx
        self.initial = residual_stream(model, idx)[1:]
        self._last = self.initial
        self._moves: list[list[float]] = []

    def __call__(self, step: int, model) -> None:
        now = residual_stream(model, self.idx)[1:]
        self._moves.append([_token_norm(a - b) / _token_norm(r)
                            for a, b, r in zip(now, self._last, self.initial)])
        self._last = now

    @property
    def moves(self) -> np.ndarray:
        return np.array(self._moves).reshape(len(self._moves), len(self.initial))


@torch.no_grad()
def output_sensitivity(model, idx: torch.Tensor, eps: float = 1e-3, seed: int = 0) -> float:
    """How far the output moves when every block matrix moves a little: Liu et al.'s (2020)
    amplification, read at initialisation.

    Each 2-D weight inside the blocks gets ``W + eps * std(W) * N(0, 1)`` (a perturbation of the
    same relative size everywhere, drawn from ``seed``); the result is
    ||F(x; theta + delta) - F(x; theta)|| / ||F(x; theta)||, per token, averaged (``F`` is
    ``final_hidden``). A stack whose output moves more, for the same small change of every
    weight, turns the same small update into a larger change of what it computes: Liu et al.'s
    account of why post-norm needs warm-up and fails when deep. The model is left as it was.
    """
    if not eps > 0:
        raise ValueError(f"eps must be > 0, got {eps!r}")
    before = final_hidden(model, idx)                                  # (B, T, d)
    gen = torch.Generator().manual_seed(int(seed))
    saved = []
    for block in model.h:
        for p in block.parameters():
            if p.ndim == 2:
                saved.append((p, p.detach().clone()))
                noise = torch.randn(p.shape, generator=gen, dtype=p.dtype)
                p.add_(eps * p.std() * noise)
    try:
        after = final_hidden(model, idx)
    finally:
        for p, w in saved:
            p.copy_(w)
    return _token_norm(after - before) / _token_norm(before)


#: The parameter groups a first step can move (``stepped_parameters``): ``"all"``, every
#: parameter of the model; ``"blocks"``, only those inside the residual blocks ``model.h``;
#: ``"deepnet"``, only the four matrices per block that DeepNet's update bound is about.
STEPPED_GROUPS = ("all", "blocks", "deepnet")


def stepped_parameters(model, stepped: str = "all") -> list:
    """The parameters a first step moves. ``"all"``: every parameter (``model.parameters()``).
    ``"blocks"``: every parameter inside the residual blocks and nothing else, per block (d =
    d_model, f = d_ff; biases only when the config has them): ``ln_1`` and ``ln_2`` gains and
    biases (d,), attention ``c_attn`` (d, 3d) = W_Q | W_K | W_V with its bias (3d,), ``c_proj``
    (d, d) = W_O with bias (d,), and the FFN's ``c_fc`` (d, f) and ``c_proj`` (f, d) with biases
    (f,) and (d,). Left out: the token and position embeddings ``wte`` (V, d) and ``wpe``
    (T, d), the unembedding (tied to ``wte``, or ``lm_head`` (V, d)) and a pre-norm stack's
    final LayerNorm ``ln_f`` (d,). Why the second group: the embeddings and head sit outside
    the blocks' sum. ``"deepnet"``: per block only the weights of ``c_attn`` (its W_V columns
    move, ``step_mask``), ``attn.c_proj`` (W_O), ``mlp.c_fc`` (W_1) and ``mlp.c_proj`` (W_2),
    no bias, no LayerNorm, no W_Q or W_K: the matrices DeepNet's bound on the model update
    sums over (Wang et al. 2022, section 4, as we read it: attention reduced to its value
    path, LayerNorm without learned gain or bias), the ones its beta scales."""
    if stepped not in STEPPED_GROUPS:
        raise ValueError(f"stepped must be one of {STEPPED_GROUPS}, got {stepped!r}")
    if stepped == "all":
        return list(model.parameters())
    if stepped == "blocks":
        return list(model.h.parameters())
    return [w for b in model.h for w in (b.attn.c_attn.weight, b.attn.c_proj.weight,
                                         b.mlp.c_fc.weight, b.mlp.c_proj.weight)]


def step_mask(model, stepped: str) -> list:
    """(parameter, mask) pairs whose gradient is multiplied by the mask before a step of
    group ``stepped``: for ``"deepnet"`` each block's fused ``c_attn.weight`` (d, 3d), whose
    W_Q and W_K columns (the first 2d) must not move; none for the other groups. A zero
    gradient entry stays put under SGD and under Adam's first step alike."""
    if stepped != "deepnet":
        return []
    pairs = []
    for b in model.h:
        w = b.attn.c_attn.weight                                        # (d, 3d)
        mask = torch.zeros_like(w)
        mask[:, 2 * (w.shape[1] // 3):] = 1.0                           # W_V's d columns
        pairs.append((w, mask))
    return pairs


def first_step(model, idx: torch.Tensor, targets: torch.Tensor, lr: float,
               optimizer: str = "adam", stepped: str = "all"):
    """A copy of ``model`` after ONE step from where it is, on ``(idx, targets)``: plain SGD
    (no momentum, no weight decay) or Adam's first step, moving only the parameters of group
    ``stepped`` (``stepped_parameters``; the others keep their values, though the gradient
    flows through them). ``model`` is left as it was."""
    import copy

    if optimizer not in ("adam", "sgd"):
        raise ValueError(f"optimizer must be 'adam' or 'sgd', got {optimizer!r}")
    if not lr > 0:
        raise ValueError(f"lr must be > 0, got {lr!r}")
    stepped_copy = copy.deepcopy(model)
    params = stepped_parameters(stepped_copy, stepped)
    opt = (torch.optim.Adam(params, lr=lr) if optimizer == "adam"
           else torch.optim.SGD(params, lr=lr))
    stepped_copy.train()
    _, loss = stepped_copy(idx, targets)
    loss.backward()
    for w, mask in step_mask(stepped_copy, stepped):
        w.grad.mul_(mask)
    opt.step()
    return stepped_copy


def first_update_size(model, idx: torch.Tensor, targets: torch.Tensor, probe: torch.Tensor,
                      lr: float, optimizer: str = "adam", stepped: str = "all") -> float:
    """DeepNet's early-update measure after ONE step from initialisation, ||F(x; theta_1) -
    F(x; theta_0)|| on the ``probe`` batch, for a plain SGD step or Adam's first step
    (``first_step``), every parameter moved or only a group of them (``stepped_parameters``).

    Why both optimisers: DeepNet bounds the update for SGD-like steps, whose size follows the
    gradient; Adam's first step is ``lr * sign(g)`` for every entry (its moments start at g
    and g^2), so every parameter moves by about ``lr`` whatever its gradient, and the output's
    move then grows with the number of parameters moved, that is with depth. A copy of
    ``model`` is stepped; ``model`` is left as it was."""
    reference = final_hidden(model, probe)                            # (B, T, d)
    return update_size(first_step(model, idx, targets, lr, optimizer, stepped), reference,
                       probe)


@torch.no_grad()
def layer_contribution(model, idx: torch.Tensor) -> np.ndarray:
    """Each block's relative contribution ||x_out - x_in|| / ||x_in||, shape (L,).

    For a pre-norm block x_out - x_in is exactly what its two branches add, F(x); for
    post-norm and DeepNorm blocks (which end in a LayerNorm) it is the block's total change.
    Norms are per token, averaged over tokens.
    """
    stream = residual_stream(model, idx)
    return np.array([_token_norm(b - a) / _token_norm(a) for a, b in zip(stream, stream[1:])])


@torch.no_grad()
def skip_layer_losses(model, idx: torch.Tensor, targets: torch.Tensor) -> np.ndarray:
    """The loss on ``(idx, targets)`` with block application i replaced by the identity, for
    each i: shape (L,), L = ``config.n_layer`` (a weight-shared model skips one application
    of its block, not the block everywhere). Compare with the full model's loss
    (``model(idx, targets)[1]``)."""
    check_probe_input(model, idx)
    with eval_mode(model):
        return np.array([float(model(idx, targets, skip=(i,))[1])
                         for i in range(model.config.n_layer)])


@torch.no_grad()
def attention_weights(model, idx: torch.Tensor) -> np.ndarray:
    """Every block's attention probabilities, shape (L, B, n_head, T, T): entry
    [l, b, h, i, j] is how much position i of sequence b attends to position j in block
    application l, head h (causal: zero for j > i; each row sums to 1). A weight-shared
    block has one entry per application.

    The model computes attention inside ``scaled_dot_product_attention``, which does not
    return the weights, so they are recomputed here from the input each attention layer
    receives (captured by a forward pre-hook) and its own W_Q, W_K: the same softmax of
    q k^T / sqrt(head_dim) under the causal mask."""
    check_probe_input(model, idx)
    inputs: list[torch.Tensor] = []
    hooks = [b.attn.register_forward_pre_hook(lambda m, args: inputs.append(args[0]))
             for b in model.h]
    _forward_with_hooks(model, idx, hooks)
    maps = []
    for layer, x in enumerate(inputs):          # one per application; x: (B, T, d)
        attn = model.block(layer).attn
        B, T, d = x.shape
        q, k, _ = attn.c_attn(x).split(d, dim=2)                           # (B, T, d) each
        q = q.view(B, T, attn.n_head, attn.head_dim).transpose(1, 2)       # (B, nh, T, hs)
        k = k.view(B, T, attn.n_head, attn.head_dim).transpose(1, 2)
        scores = q @ k.transpose(-1, -2) / attn.head_dim ** 0.5            # (B, nh, T, T)
        causal = torch.ones(T, T, dtype=torch.bool, device=x.device).tril()
        maps.append(scores.masked_fill(~causal, float("-inf")).softmax(-1))
    return torch.stack(maps).cpu().numpy()                                 # (L, B, nh, T, T)


def _forward_with_hooks(model, idx: torch.Tensor, handles) -> None:
    """One forward pass in eval mode with ``handles`` registered, removed afterwards (also
    if the pass raises)."""
    try:
        with eval_mode(model):
            model(idx)
    finally:
        for h in handles:
            h.remove()
