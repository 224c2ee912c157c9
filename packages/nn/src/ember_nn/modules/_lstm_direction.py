"""One direction of one LSTM or GRU layer as a single autograd node, with a hand-written
backpropagation through time.

Recorded op by op, a step of the recurrence costs a dozen autograd nodes, and the gradient
of the recurrent weight arrives as one small matrix product per step. As one node, the
forward runs without recording, and the backward collects the gate gradients of all steps
in one ``(T, N, 4H)`` tensor and forms the weight gradient with one product over all of
them: the per-step work left is the product that carries the gradient to the previous
hidden state, and the gate arithmetic.

Second derivatives: when the backward itself is recorded (``create_graph=True``), it
replays the recurrence op by op from the saved inputs and differentiates that, so higher
derivatives are exact (and cost what the op-by-op form costs).
"""

from __future__ import annotations

import ember_autograd as ea
import ember_tensor as et


def _reference(x_proj, h0, c0, w_hh, reverse: bool):
    """The recurrence op by op (recorded when grad mode is on): outputs (T, N, H), h_n, c_n."""
    steps = x_proj.unbind(0)
    order = range(len(steps) - 1, -1, -1) if reverse else range(len(steps))
    h, c = h0, c0
    w_t = w_hh.t()
    outs = [None] * len(steps)
    for t in order:
        i, f, g, o = et.addmm(steps[t], h, w_t).chunk(4, 1)
        c = et.sigmoid(f) * c + et.sigmoid(i) * et.tanh(g)
        h = et.sigmoid(o) * et.tanh(c)
        outs[t] = h
    return et.stack(outs, 0), h, c


class LSTMDirection(ea.Function):
    """``(x_proj (T, N, 4H), h0 (N, H), c0 (N, H), w_hh (4H, H), reverse) -> (outputs
    (T, N, H), h_n, c_n)``, gates i|f|g|o; ``x_proj`` holds the input projections with both
    biases."""

    @staticmethod
    def forward(ctx, x_proj, h0, c0, w_hh, reverse):
        steps, n, four_h = x_proj.shape
        size = four_h // 4
        x_proj, h0, c0, w_hh = (t.contiguous() for t in (x_proj, h0, c0, w_hh))
        acts = et.empty_like(x_proj)  # activated gates, step by step
        cells = et.empty((steps, n, size), dtype=x_proj.dtype, device=x_proj.device)
        outs = et.empty((steps, n, size), dtype=x_proj.dtype, device=x_proj.device)
        et._lstm_forward_(x_proj, h0, c0, w_hh, reverse, acts, cells, outs)
        last = 0 if reverse else steps - 1
        h, c = (outs[last], cells[last]) if steps else (h0, c0)
        ctx.reverse = reverse
        ctx.acts, ctx.cells = acts, cells  # intermediates: no one else can write them
        ctx.save_for_backward(x_proj, h0, c0, w_hh, outs)
        return outs, h.clone(), c.clone()

    @staticmethod
    def backward(ctx, d_outs, d_hn, d_cn):
        x_proj, h0, c0, w_hh, outs = ctx.saved_tensors
        reverse, acts, cells = ctx.reverse, ctx.acts, ctx.cells
        if ea.is_grad_enabled():  # create_graph: differentiate the recorded recurrence
            return _replayed_backward(_reference, (x_proj, h0, c0, w_hh), reverse,
                                      (d_outs, d_hn, d_cn))
        size = h0.shape[1]
        d_gates = et.empty_like(x_proj)
        dh = d_hn.contiguous().clone() if d_hn is not None else et.zeros_like(h0)
        dc = d_cn.contiguous().clone() if d_cn is not None else et.zeros_like(c0)
        et._lstm_backward_(acts, cells, c0, w_hh,
                           d_outs.contiguous() if d_outs is not None else None, reverse,
                           dh, dc, d_gates)
        # the hidden state each step read, in time order
        if reverse:
            h_prev = et.cat([outs[1:], h0.unsqueeze(0)], 0)
        else:
            h_prev = et.cat([h0.unsqueeze(0), outs[:-1]], 0)
        d_w = d_gates.reshape(-1, 4 * size).t().mm(h_prev.reshape(-1, size))
        return d_gates, dh, dc, d_w, None


def _replayed_backward(reference, inputs, reverse, grad_outputs):
    """The backward of a single-node direction under ``create_graph``: ``reference(*inputs,
    reverse)`` recorded op by op and differentiated, so the gradients have a history. One
    gradient per input (None for those not requiring grad), then None for ``reverse``."""
    outputs = reference(*inputs, reverse)
    pairs = [(y, g) for y, g in zip(outputs, grad_outputs) if g is not None]
    wanted = [t for t in inputs if t is not None and t.requires_grad]
    grads = iter(ea.grad([y for y, _ in pairs], wanted, [g for _, g in pairs],
                         create_graph=True, allow_unused=True))
    return (*(next(grads) if t is not None and t.requires_grad else None for t in inputs),
            None)


def lstm_direction(x_proj, h0, c0, w_hh, reverse: bool):
    """One direction of one layer (see ``LSTMDirection``): (outputs, h_n, c_n), in
    ``x_proj``'s dtype. The core's recurrence takes float32 or float64 of one dtype; other
    mixes (float16/bfloat16 projections under ``ember.autocast``, or a bfloat16 model) run
    it in float32 and cast the results (the casts are recorded, so gradients flow back)."""
    parts = (x_proj, h0, c0, w_hh)
    if x_proj.dtype in _KERNEL_DTYPES and all(t.dtype == x_proj.dtype for t in parts):
        return LSTMDirection.apply(x_proj, h0, c0, w_hh, reverse)
    out, h, c = LSTMDirection.apply(*(t.float() for t in parts), reverse)
    return tuple(t.to(x_proj.dtype) for t in (out, h, c))


_KERNEL_DTYPES = (et.float32, et.float64)


# ----------------------------------------------------------------------------- GRU


def _gru_reference(x_proj, h0, w_hh, b_hh, reverse: bool):
    """The GRU recurrence op by op (recorded when grad mode is on): outputs (T, N, H), h_n."""
    steps = x_proj.unbind(0)
    order = range(len(steps) - 1, -1, -1) if reverse else range(len(steps))
    h = h0
    size = h0.shape[1]
    w_t = w_hh.t()
    outs = [None] * len(steps)
    for t in order:
        x = steps[t]
        gh = et.addmm(b_hh, h, w_t) if b_hh is not None else h.mm(w_t)
        r, z = et.sigmoid(x[:, :2 * size] + gh[:, :2 * size]).chunk(2, 1)
        new = et.tanh(x[:, 2 * size:] + r * gh[:, 2 * size:])
        h = new + z * (h - new)
        outs[t] = h
    return et.stack(outs, 0), h


class GRUDirection(ea.Function):
    """``(x_proj (T, N, 3H) with b_ih, h0 (N, H), w_hh (3H, H), b_hh (3H,) or None,
    reverse) -> (outputs (T, N, H), h_n)``, gates r|z|n (PyTorch's: the reset gate scales
    ``h W_hn^T + b_hn``)."""

    @staticmethod
    def forward(ctx, x_proj, h0, w_hh, b_hh, reverse):
        steps, n, three_h = x_proj.shape
        size = three_h // 3
        x_proj, h0, w_hh = (t.contiguous() for t in (x_proj, h0, w_hh))
        b_hh = b_hh.contiguous() if b_hh is not None else None
        acts = et.empty_like(x_proj)  # r, z, n per step
        # h W_hn^T + b_hn
        hidden_n = et.empty((steps, n, size), dtype=x_proj.dtype, device=x_proj.device)
        outs = et.empty((steps, n, size), dtype=x_proj.dtype, device=x_proj.device)
        et._gru_forward_(x_proj, h0, w_hh, b_hh, reverse, acts, hidden_n, outs)
        last = 0 if reverse else steps - 1
        h = outs[last] if steps else h0
        ctx.reverse = reverse
        ctx.acts, ctx.hidden_n = acts, hidden_n
        ctx.has_bias = b_hh is not None
        ctx.save_for_backward(x_proj, h0, w_hh, b_hh, outs)
        return outs, h.clone()

    @staticmethod
    def backward(ctx, d_outs, d_hn):
        x_proj, h0, w_hh, b_hh, outs = ctx.saved_tensors
        reverse, acts, hidden_n = ctx.reverse, ctx.acts, ctx.hidden_n
        if ea.is_grad_enabled():  # create_graph: differentiate the recorded recurrence
            return _replayed_backward(_gru_reference, (x_proj, h0, w_hh, b_hh), reverse,
                                      (d_outs, d_hn))
        size = h0.shape[1]
        d_x = et.empty_like(x_proj)
        d_gh = et.empty_like(x_proj)
        dh = d_hn.contiguous().clone() if d_hn is not None else et.zeros_like(h0)
        et._gru_backward_(acts, hidden_n, outs, h0, w_hh,
                          d_outs.contiguous() if d_outs is not None else None, reverse,
                          dh, d_x, d_gh)
        # the hidden state each step read, in time order
        if reverse:
            h_prev_all = et.cat([outs[1:], h0.unsqueeze(0)], 0)
        else:
            h_prev_all = et.cat([h0.unsqueeze(0), outs[:-1]], 0)
        flat = d_gh.reshape(-1, 3 * size)
        d_w = flat.t().mm(h_prev_all.reshape(-1, size))
        d_b = flat.sum(0) if ctx.has_bias else None
        return d_x, dh, d_w, d_b, None


def gru_direction(x_proj, h0, w_hh, b_hh, reverse: bool):
    """One direction of one GRU layer (see ``GRUDirection``): (outputs, h_n), in ``x_proj``'s
    dtype. The core's recurrence takes tensors of one dtype; other mixes (16-bit projections
    under ``ember.autocast``) run it in float32 and cast the results (the casts are recorded,
    so gradients flow back)."""
    parts = (x_proj, h0, w_hh) + ((b_hh,) if b_hh is not None else ())
    if all(t.dtype == x_proj.dtype for t in parts):
        return GRUDirection.apply(x_proj, h0, w_hh, b_hh, reverse)
    out, h = GRUDirection.apply(*(t.float() if t is not None else None
                                  for t in (x_proj, h0, w_hh, b_hh)), reverse)
    return out.to(x_proj.dtype), h.to(x_proj.dtype)
