"""``ctc_loss`` of ``ember.nn.functional``: the Connectionist Temporal Classification loss
(Graves et al., 2006), the negative log-likelihood of a target sequence summed over every
alignment of it to the input frames, with PyTorch's arguments, reductions and errors.

The forward pass runs the CTC forward recursion in log space over the target extended with
blanks (``blank, l1, blank, l2, ..., blank``: 2 * S + 1 states), one step per frame and
vectorized over the batch and the states; the backward pass runs the backward recursion and
forms PyTorch's gradient, ``exp(lp) - exp(log(sum of alpha * beta over the states of a
class) + nll - lp)`` per frame and class (the gradient through a log-softmax, which is how
log-probabilities reach the loss: PyTorch's own formula, which Ember keeps so that gradients
agree with it on any input). Frames past a sequence's input length get no gradient;
``zero_infinity`` zeroes the loss and gradient of impossible alignments.
"""

from __future__ import annotations

import ember_tensor as et

from . import _reduction

__all__ = ["ctc_loss"]

_NEG_INF = float("-inf")


def _lse(*terms):
    """Elementwise log(sum(exp(terms))), -inf where every term is -inf (no NaN)."""
    top = terms[0]
    for t in terms[1:]:
        top = et.maximum(top, t)
    safe = et.where(et.isinf(top), et.zeros_like(top), top)
    total = sum(et.exp(t - safe) for t in terms)
    return et.log(total) + safe


def _shift(x, by: int, fill=_NEG_INF):
    """x (N, L) moved right along the states by ``by``, ``fill`` coming in."""
    pad = et.full((x.shape[0], by), fill, dtype=x.dtype, device=x.device)
    return et.cat([pad, x[:, :-by]], 1)


def _shift_left(x, by: int, fill=_NEG_INF):
    """x (N, L) moved left along the states by ``by``, ``fill`` coming in."""
    pad = et.full((x.shape[0], by), fill, dtype=x.dtype, device=x.device)
    return et.cat([x[:, by:], pad], 1)


class _CTC:
    """The recursions over (T, N, C) log-probabilities for extended labels ``ext`` (N, L),
    input lengths ``frames`` (N,) and extended lengths ``states`` (N,) = 2 * S_n + 1."""

    def __init__(self, lp, ext, frames, states, blank: int):
        self.lp, self.ext, self.frames, self.states = lp, ext, frames, states
        n, length = ext.shape
        self.emit = et.gather(lp, 2, ext.unsqueeze(0).expand(lp.shape[0], n, length))  # (T,N,L)
        prev2 = _shift(ext, 2, blank) if length > 2 else et.full_like(ext, blank)
        self.pos = et.arange(length, device=lp.device).unsqueeze(0)
        # a label state (odd) may skip the blank before it unless it repeats the label before
        # (PyTorch's rule, which looks at positions only, even if a label equals the blank)
        self.skip = (self.pos % 2 == 1) & (self.pos >= 3) & (ext != prev2)

    def alphas(self):
        """log alpha (T, N, L): the log-probability of the first t + 1 frames ending in
        each state; frozen after a sequence's last frame."""
        emit, skip = self.emit, self.skip
        floor = et.full_like(emit[0], _NEG_INF)
        alpha = et.where(self.pos < 2, emit[0], floor)
        alpha = et.where(self.pos < self.states.unsqueeze(1), alpha, floor)
        out = [alpha]
        for t in range(1, emit.shape[0]):
            two = et.where(skip, _shift(alpha, 2), floor)
            step = _lse(alpha, _shift(alpha, 1), two) + emit[t]
            alpha = et.where((t < self.frames).unsqueeze(1), step, alpha)
            out.append(alpha)
        return et.stack(out)

    def nll(self, alphas):
        """-log p(target | input) (N,): the last frame's two final states."""
        n = self.ext.shape[0]
        last = alphas[self.frames.clamp(min=1) - 1, et.arange(n, device=alphas.device)]  # (N,L)
        end = et.gather(last, 1, (self.states - 1).unsqueeze(1)).squeeze(1)
        before = et.gather(last, 1, (self.states - 2).clamp(min=0).unsqueeze(1)).squeeze(1)
        before = et.where(self.states > 1, before, et.full_like(before, _NEG_INF))
        return -_lse(end, before)

    def betas(self):
        """log beta (T, N, L): the log-probability of frames t.. given state s at frame t
        (frame t's emission included); -inf past a sequence's last frame."""
        emit = self.emit
        floor = et.full_like(emit[0], _NEG_INF)
        final = (self.pos == (self.states - 1).unsqueeze(1)) | (
            self.pos == (self.states - 2).unsqueeze(1))
        skip_next = _shift_left(self.skip.to(et.int64), 2, 0) > 0
        beta = floor
        out = []
        for t in range(emit.shape[0] - 1, -1, -1):
            two = et.where(skip_next, _shift_left(beta, 2), floor)
            step = _lse(beta, _shift_left(beta, 1), two) + emit[t]
            start = et.where(final, emit[t], floor)
            here = (t == self.frames - 1).unsqueeze(1)
            inside = (t < self.frames - 1).unsqueeze(1)
            beta = et.where(here, start, et.where(inside, step, floor))
            out.append(beta)
        return et.stack(out[::-1])


def _ctc_function():
    from ember_autograd import Function

    class CtcLoss(Function):
        @staticmethod
        def forward(ctx, lp, ext, frames, states, blank, zero_infinity):
            ctc = _CTC(lp, ext, frames, states, blank)
            alphas = ctc.alphas()
            nll = ctc.nll(alphas)
            ctx.ctc, ctx.alphas, ctx.nll, ctx.zero_infinity = ctc, alphas, nll, zero_infinity
            if zero_infinity:
                nll = et.where(et.isinf(nll), et.zeros_like(nll), nll)
            return nll

        @staticmethod
        def backward(ctx, grad):
            ctc, nll = ctx.ctc, ctx.nll
            lp = ctc.lp
            ab = ctx.alphas + ctc.betas()  # (T, N, L)
            top = ab.amax(2, keepdim=True)
            top = et.where(et.isinf(top), et.zeros_like(top), top)
            index = ctc.ext.unsqueeze(0).expand(ab.shape)
            mass = et.zeros_like(lp).scatter_add(2, index, et.exp(ab - top))
            lcab = et.log(mass) + top  # per class: log sum of alpha * beta
            g = et.exp(lp) - et.exp(lcab + nll.reshape(1, -1, 1) - lp)
            frames = et.arange(lp.shape[0], device=lp.device).reshape(-1, 1)
            live = (frames < ctc.frames.reshape(1, -1)).unsqueeze(2)
            scale = grad.reshape(1, -1, 1)
            if ctx.zero_infinity:
                live = live & ~et.isinf(nll).reshape(1, -1, 1)
            g = et.where(live, g * scale, et.zeros_like(g))
            return g, None, None, None, None, None

    return CtcLoss


_CTC_FUNCTION = None


def _lengths(name: str, value, n: int, device):
    t = value if isinstance(value, et.Tensor) else et.tensor(list(value) if isinstance(
        value, (list, tuple)) else [value], dtype=et.int64)
    t = t.to(device=device, dtype=et.int64).reshape(-1)
    if t.shape[0] != n:
        raise RuntimeError(f"{name} must be of size batch_size")
    return t


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank: int = 0,
             reduction: str = "mean", zero_infinity: bool = False):
    """The CTC loss of ``log_probs`` ``(T, N, C)`` (or ``(T, C)`` unbatched; log-softmax
    outputs) for ``targets`` ``(N, S)`` padded or 1-D concatenated (``sum(target_lengths)``),
    with each sequence's ``input_lengths`` (<= T) and ``target_lengths``; ``blank`` is the
    blank class. ``reduction='mean'`` divides each loss by its target length, then averages
    over the batch. An impossible alignment costs inf (0 with ``zero_infinity``)."""
    global _CTC_FUNCTION
    reduction = _reduction.check(reduction)
    unbatched = log_probs.dim() == 2
    lp = log_probs.unsqueeze(1) if unbatched else log_probs
    if lp.dim() != 3:
        raise RuntimeError(f"ctc_loss: expected log_probs of 2 or 3 dims, got {log_probs.dim()}")
    steps, n, classes = lp.shape
    if not 0 <= blank < classes:
        raise RuntimeError("blank must be in label range")
    frames = _lengths("input_lengths", input_lengths, n, lp.device)
    lengths = _lengths("target_lengths", target_lengths, n, lp.device)
    where_ = "(while checking arguments for ctc_loss_allocate_outputs)"
    if frames.numel() and int(frames.max()) > steps:
        raise RuntimeError(f"Expected input_lengths to have value at most {steps}, but got value "
                           f"{int(frames.max())} {where_}")
    if lengths.numel() and int(lengths.min()) < 0:
        raise RuntimeError(f"Expected target_lengths to have value at least 0, but got value "
                           f"{int(lengths.min())} {where_}")
    tg = targets.to(device=lp.device, dtype=et.int64)
    if unbatched:
        tg = tg.reshape(1, -1)
    longest = int(lengths.max()) if lengths.numel() else 0
    if tg.dim() == 1:  # concatenated: cut into rows of the longest length
        total = int(lengths.sum())
        if tg.shape[0] != total:
            raise RuntimeError(f"Expected tensor to have size {total} at dimension 0, but got "
                               f"size {tg.shape[0]} for argument #2 'targets' {where_}")
        starts = et.cumsum(lengths, 0) - lengths
        at = starts.unsqueeze(1) + et.arange(max(longest, 1), device=lp.device).unsqueeze(0)
        tg = tg[at.clamp(max=max(total - 1, 0))] if total else et.zeros(
            n, max(longest, 1), dtype=et.int64, device=lp.device)
    elif tg.shape[1] < longest:
        raise RuntimeError(f"Expected tensor to have size at least {longest} at dimension 1, but "
                           f"got size {tg.shape[1]} for argument #2 'targets' {where_}")
    tg = tg[:, :longest]
    ext = et.full((n, 2 * longest + 1), blank, dtype=et.int64, device=lp.device)
    if longest:
        ext[:, 1::2] = et.where(et.arange(longest, device=lp.device).unsqueeze(0)
                                < lengths.unsqueeze(1), tg, et.full_like(tg, blank))
    if _CTC_FUNCTION is None:
        _CTC_FUNCTION = _ctc_function()
    loss = _CTC_FUNCTION.apply(lp, ext, frames, 2 * lengths + 1, blank, zero_infinity)
    if reduction == "mean":
        return (loss / lengths.clamp(min=1).to(loss.dtype)).mean()
    if reduction == "sum":
        return loss.sum()
    return loss.squeeze(0) if unbatched else loss
