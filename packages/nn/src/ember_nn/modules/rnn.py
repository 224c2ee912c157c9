"""Recurrent layers: ``RNN`` (tanh/relu), ``LSTM`` (with ``proj_size``), ``GRU`` and the
cells ``RNNCell``, ``LSTMCell``, ``GRUCell``.

PyTorch's parameter names (``weight_ih_l0``, ``bias_hh_l1_reverse``, ``weight_hr_l0``,
...), layouts (gates stacked as i|f|g|o for the LSTM and r|z|n for the GRU), registration
order and initialisation (every parameter from U(-1/sqrt(hidden_size),
1/sqrt(hidden_size))), so state dicts move between the two libraries. Inputs are
``(L, N, H_in)`` (``(N, L, H_in)`` with ``batch_first``), unbatched ``(L, H_in)``, or a
``PackedSequence``.

The recurrence is a Python loop over time steps of core ops; each layer and direction
first projects the inputs of all time steps with one matrix product (both biases folded
in where the cell allows), so a step costs one ``addmm`` and the gate arithmetic. On
unpacked input, an LSTM direction without projection and a GRU direction are each one
autograd node with a hand-written backward (``_lstm_direction``): the recurrent weight
gradient is one product over all steps.

>>> import ember_tensor as et
>>> import ember_nn as nn
>>> lstm = nn.LSTM(8, 16, num_layers=2, batch_first=True)
>>> out, (h, c) = lstm(et.randn(4, 5, 8))
>>> tuple(out.shape), tuple(h.shape), tuple(c.shape)
((4, 5, 16), (2, 4, 16), (2, 4, 16))
"""

from __future__ import annotations

import math
import numbers
import warnings

import ember_tensor as et

from .. import functional as F
from .. import init
from ..parameter import Parameter
from ..utils.rnn import PackedSequence
from ._lstm_direction import gru_direction, lstm_direction
from .module import Module

__all__ = ["GRU", "GRUCell", "LSTM", "LSTMCell", "RNN", "RNNBase", "RNNCell", "RNNCellBase"]

_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}


def _dtype_text(dtype) -> str:
    return str(dtype)


def _shape_text(t) -> str:
    return "[" + ", ".join(str(s) for s in t.shape) + "]"


# ----------------------------------------------------------------------------- one layer


def _autocasting(input) -> bool:
    """Whether an ember.autocast region is active for input's device (there, a layer's
    input may come in the region's lower precision while its weights stay float32)."""
    amp = getattr(et, "amp", None)
    return amp is not None and amp.is_autocast_enabled(input.device.type)


def _run_direction(mode: str, steps, batch_sizes, h0, c0, w_hh, b_hh, w_hr, reverse: bool):
    """Runs one direction of one layer over the projected inputs ``steps`` (one ``(n_t,
    G)`` tensor per time step, ``n_t = batch_sizes[t]`` non-increasing) from ``h0``/``c0``
    (``(N, H)``). Returns (the per-step outputs, in time order; h_n; c_n)."""
    order = range(len(steps) - 1, -1, -1) if reverse else range(len(steps))
    n0 = batch_sizes[order[0]] if len(steps) else h0.shape[0]
    h = h0 if n0 == h0.shape[0] else h0[:n0]
    c = None
    if c0 is not None:
        c = c0 if n0 == c0.shape[0] else c0[:n0]
    w_hh_t = w_hh.t()
    w_hr_t = w_hr.t() if w_hr is not None else None
    outs = [None] * len(steps)
    done_h, done_c = [], []  # rows whose sequence ended (forward direction, packed input)
    for t in order:
        n = batch_sizes[t]
        rows = h.shape[0]
        if n < rows:  # forward: the last sequences ended before this step
            done_h.append(h[n:])
            h = h[:n]
            if c is not None:
                done_c.append(c[n:])
                c = c[:n]
        elif n > rows:  # reverse: more sequences start at this step (from their h0)
            h = et.cat([h, h0[rows:n]], 0)
            if c is not None:
                c = et.cat([c, c0[rows:n]], 0)
        x = steps[t]
        if mode == "LSTM":
            gates = et.addmm(x, h, w_hh_t)
            i, f, g, o = gates.chunk(4, 1)
            c = et.sigmoid(f) * c + et.sigmoid(i) * et.tanh(g)
            h = et.sigmoid(o) * et.tanh(c)
            if w_hr_t is not None:
                h = h.mm(w_hr_t)
        elif mode == "GRU":
            gh = et.addmm(b_hh, h, w_hh_t) if b_hh is not None else h.mm(w_hh_t)
            size = h.shape[1]
            r, z = et.sigmoid(x[:, :2 * size] + gh[:, :2 * size]).chunk(2, 1)
            new = et.tanh(x[:, 2 * size:] + r * gh[:, 2 * size:])
            h = new + z * (h - new)
        else:
            pre = et.addmm(x, h, w_hh_t)
            h = et.tanh(pre) if mode == "RNN_TANH" else et.relu(pre)
        outs[t] = h
    if done_h:
        h = et.cat([h] + done_h[::-1], 0)
        if c is not None:
            c = et.cat([c] + done_c[::-1], 0)
    return outs, h, c


# ----------------------------------------------------------------------------- RNNBase


class RNNBase(Module):
    """What ``RNN``, ``LSTM`` and ``GRU`` share: arguments, parameters, the layer loop."""

    def __init__(self, mode: str, input_size: int, hidden_size: int, num_layers: int = 1,
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, proj_size: int = 0, device=None,
                 dtype=None) -> None:
        super().__init__()
        if mode not in _GATES:
            raise ValueError(f"Unrecognized RNN mode: {mode}")
        if (not isinstance(dropout, numbers.Number) or isinstance(dropout, bool)
                or not 0 <= dropout <= 1):
            raise ValueError(
                "dropout should be a number in range [0, 1] representing the probability of "
                "an element being zeroed"
            )
        if dropout > 0 and num_layers == 1:
            warnings.warn(
                "dropout option adds dropout after all but last recurrent layer, so non-zero "
                f"dropout expects num_layers greater than 1, but got dropout={dropout} and "
                f"num_layers={num_layers}",
                stacklevel=3,
            )
        if not isinstance(hidden_size, int) or isinstance(hidden_size, bool):
            raise TypeError(
                f"hidden_size should be of type int, got: {type(hidden_size).__name__}"
            )
        if not isinstance(num_layers, int) or isinstance(num_layers, bool):
            raise TypeError(
                f"num_layers should be of type int, got: {type(num_layers).__name__}"
            )
        if hidden_size <= 0:
            raise ValueError("hidden_size must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError(
                "proj_size should be a positive integer or zero to disable projections"
            )
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if proj_size and mode != "LSTM":
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        directions = 2 if bidirectional else 1
        gate_size = _GATES[mode] * hidden_size
        real_hidden = proj_size if proj_size > 0 else hidden_size
        self._flat_weights_names = []
        self._all_weights = []
        for layer in range(num_layers):
            for direction in range(directions):
                layer_input = input_size if layer == 0 else real_hidden * directions
                suffix = "_reverse" if direction == 1 else ""
                shapes = [("weight_ih", (gate_size, layer_input)),
                          ("weight_hh", (gate_size, real_hidden))]
                if bias:
                    shapes += [("bias_ih", (gate_size,)), ("bias_hh", (gate_size,))]
                if proj_size > 0:
                    shapes.append(("weight_hr", (proj_size, hidden_size)))
                names = []
                for kind, shape in shapes:
                    name = f"{kind}_l{layer}{suffix}"
                    self.register_parameter(
                        name, Parameter(et.empty(shape, dtype=dtype, device=device))
                    )
                    names.append(name)
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    @property
    def _flat_weights(self) -> list:
        return [getattr(self, n) for n in self._flat_weights_names]

    @property
    def all_weights(self) -> list:
        """The parameters of each layer and direction, in PyTorch's order."""
        return [[getattr(self, n) for n in names] for names in self._all_weights]

    def flatten_parameters(self) -> None:
        """Nothing to do: Ember keeps no fused weight buffer (cuDNN's, in PyTorch)."""

    def reset_parameters(self) -> None:
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size != 0:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        return s

    def __setstate__(self, state) -> None:
        super().__setstate__(state)
        if "proj_size" not in self.__dict__:
            self.proj_size = 0

    # -- forward ---------------------------------------------------------------------------

    def _name(self) -> str:
        return type(self).__name__

    def _hidden_shape(self, batch: int, cell: bool = False) -> tuple:
        directions = 2 if self.bidirectional else 1
        size = self.hidden_size if cell or not self.proj_size else self.proj_size
        return (self.num_layers * directions, batch, size)

    def _check_hidden(self, hx, expected: tuple, what: str) -> None:
        if tuple(hx.shape) != expected:
            raise RuntimeError(f"Expected {what} size {expected}, got {_shape_text(hx)}")

    def _check_input(self, input, batch_sizes) -> None:
        if not input.is_floating_point():
            raise ValueError(
                f"{self._name()}: expected a floating point input, but got "
                f"{_dtype_text(input.dtype)}"
            )
        weight = self.weight_ih_l0
        if input.dtype != weight.dtype and not _autocasting(input):
            raise ValueError(
                f"{self._name()} input dtype ({_dtype_text(input.dtype)}) does not match "
                f"weight dtype ({_dtype_text(weight.dtype)}). Convert input: "
                f"input.to({_dtype_text(weight.dtype)}), or convert model: "
                f"model.to({_dtype_text(input.dtype)})"
            )
        expected_dim = 2 if batch_sizes is not None else 3
        if input.dim() != expected_dim:
            raise RuntimeError(
                f"input must have {expected_dim} dimensions, got {input.dim()}"
            )
        if self.input_size != input.shape[-1]:
            raise RuntimeError(
                "input.size(-1) must be equal to input_size. Expected "
                f"{self.input_size}, got {input.shape[-1]}"
            )

    def forward(self, input, hx=None):
        name = self._name()
        is_lstm = self.mode == "LSTM"
        packed = isinstance(input, PackedSequence)
        sorted_indices = unsorted_indices = None
        if packed:
            input, batch_sizes_t, sorted_indices, unsorted_indices = input
            batch_sizes = [int(b) for b in batch_sizes_t.tolist()]
            batch = batch_sizes[0]
            batched = True
        else:
            batch_sizes_t = None
            if input.dim() not in (2, 3):
                raise ValueError(
                    f"{name}: Expected input to be 2D or 3D, got {input.dim()}D "
                    + ("tensor instead" if not is_lstm else "instead")
                )
            batched = input.dim() == 3
            if batched and self.batch_first:
                input = input.transpose(0, 1)
            if not batched:
                input = input.unsqueeze(1)
            if input.shape[0] == 0:
                raise RuntimeError("Expected sequence length to be larger than 0 in RNN")
            batch = input.shape[1]
            batch_sizes = [batch] * input.shape[0]
        # hidden state
        if hx is not None:
            if is_lstm:
                if not isinstance(hx, (tuple, list)) or len(hx) != 2:
                    raise RuntimeError(
                        f"{name}: hx must be a tuple (h_0, c_0) of two tensors"
                    )
                h0, c0 = hx
                if not packed:
                    if batched and (h0.dim() != 3 or c0.dim() != 3):
                        raise RuntimeError(
                            "For batched 3-D input, hx and cx should also be 3-D but got "
                            f"({h0.dim()}-D, {c0.dim()}-D) tensors"
                        )
                    if not batched and (h0.dim() != 2 or c0.dim() != 2):
                        raise RuntimeError(
                            "For unbatched 2-D input, hx and cx should also be 2-D but got "
                            f"({h0.dim()}-D, {c0.dim()}-D) tensors"
                        )
                    if not batched:
                        h0, c0 = h0.unsqueeze(1), c0.unsqueeze(1)
            else:
                h0, c0 = hx, None
                if not packed:
                    if batched and h0.dim() != 3:
                        raise RuntimeError(
                            "For batched 3-D input, hx should also be 3-D but got "
                            f"{h0.dim()}-D tensor"
                        )
                    if not batched and h0.dim() != 2:
                        raise RuntimeError(
                            "For unbatched 2-D input, hx should also be 2-D but got "
                            f"{h0.dim()}-D tensor"
                        )
                    if not batched:
                        h0 = h0.unsqueeze(1)
            if sorted_indices is not None:
                h0 = h0.index_select(1, sorted_indices)
                c0 = c0.index_select(1, sorted_indices) if c0 is not None else None
        self._check_input(input, batch_sizes_t)
        if hx is None:
            h0 = et.zeros(self._hidden_shape(batch), dtype=input.dtype, device=input.device)
            c0 = (et.zeros(self._hidden_shape(batch, cell=True), dtype=input.dtype,
                           device=input.device) if is_lstm else None)
        elif is_lstm:
            self._check_hidden(h0, self._hidden_shape(batch), "hidden[0]")
            self._check_hidden(c0, self._hidden_shape(batch, cell=True), "hidden[1]")
        else:
            self._check_hidden(h0, self._hidden_shape(batch), "hidden")

        output, h_n, c_n = self._layers(input, packed, batch_sizes, h0, c0)

        if packed:
            if unsorted_indices is not None:
                h_n = h_n.index_select(1, unsorted_indices)
                c_n = c_n.index_select(1, unsorted_indices) if c_n is not None else None
            output = PackedSequence(output, batch_sizes_t, sorted_indices, unsorted_indices)
        else:
            if not batched:
                output = output.squeeze(1)
                h_n = h_n.squeeze(1)
                c_n = c_n.squeeze(1) if c_n is not None else None
            elif self.batch_first:
                output = output.transpose(0, 1)
        return output, ((h_n, c_n) if is_lstm else h_n)

    def _layers(self, input, packed: bool, batch_sizes, h0, c0):
        """All layers and directions; ``input`` is ``(T, N, H_in)`` or packed data."""
        directions = 2 if self.bidirectional else 1
        fold_bias = self.mode != "GRU"
        layer_input = input
        h_n, c_n = [], []
        for layer in range(self.num_layers):
            outputs = []
            for direction in range(directions):
                weights = self.all_weights[layer * directions + direction]
                w_ih, w_hh = weights[0], weights[1]
                b_ih = b_hh = w_hr = None
                if self.bias:
                    b_ih, b_hh = weights[2], weights[3]
                if self.proj_size:
                    w_hr = weights[-1]
                # the input projection of every time step at once, as one 2-d product
                # (its weight gradient is then one product too, and the bias gradient a
                # sum over one dim)
                flat = layer_input if packed else layer_input.reshape(-1, layer_input.shape[-1])
                if b_ih is not None:
                    proj = et.addmm(b_ih + b_hh if fold_bias else b_ih, flat, w_ih.t())
                else:
                    proj = flat.mm(w_ih.t())
                k = layer * directions + direction
                if self.mode == "LSTM" and not packed and w_hr is None:
                    out, h, c = lstm_direction(
                        proj.reshape(layer_input.shape[0], -1, proj.shape[-1]), h0[k], c0[k],
                        w_hh, direction == 1,
                    )
                    outputs.append(out)
                    h_n.append(h)
                    c_n.append(c)
                    continue
                if self.mode == "GRU" and not packed:
                    out, h = gru_direction(
                        proj.reshape(layer_input.shape[0], -1, proj.shape[-1]), h0[k], w_hh,
                        b_hh, direction == 1,
                    )
                    outputs.append(out)
                    h_n.append(h)
                    continue
                if packed:
                    steps = list(proj.split(batch_sizes, 0))
                else:
                    steps = list(proj.reshape(layer_input.shape[0], -1, proj.shape[-1]).unbind(0))
                outs, h, c = _run_direction(
                    self.mode, steps, batch_sizes, h0[k], c0[k] if c0 is not None else None,
                    w_hh, b_hh, w_hr, reverse=direction == 1,
                )
                outputs.append(et.cat(outs, 0) if packed else et.stack(outs, 0))
                h_n.append(h)
                if c is not None:
                    c_n.append(c)
            layer_output = outputs[0] if directions == 1 else et.cat(outputs, -1)
            if self.dropout and self.training and layer < self.num_layers - 1:
                layer_output = F.dropout(layer_output, self.dropout, True)
            layer_input = layer_output
        return layer_input, et.stack(h_n, 0), (et.stack(c_n, 0) if c_n else None)


class RNN(RNNBase):
    """Elman RNN: ``h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh)`` (``relu`` with
    ``nonlinearity='relu'``), ``num_layers`` stacked, optionally bidirectional, dropout
    between layers in training. ``forward(input, hx=None) -> (output, h_n)``."""

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1,
                 nonlinearity: str = "tanh", bias: bool = True, batch_first: bool = False,
                 dropout: float = 0.0, bidirectional: bool = False, device=None,
                 dtype=None) -> None:
        if nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(
                f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or 'relu'."
            )
        super().__init__(mode, input_size, hidden_size, num_layers, bias, batch_first,
                         dropout, bidirectional, 0, device, dtype)
        self.nonlinearity = nonlinearity


class LSTM(RNNBase):
    """Long short-term memory: gates ``i, f, g, o`` from ``x_t W_ih^T + b_ih + h_{t-1}
    W_hh^T + b_hh``, ``c_t = sigmoid(f) * c_{t-1} + sigmoid(i) * tanh(g)``, ``h_t =
    sigmoid(o) * tanh(c_t)`` (times ``W_hr^T`` with ``proj_size``).
    ``forward(input, (h_0, c_0)=None) -> (output, (h_n, c_n))``."""

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1,
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, proj_size: int = 0, device=None,
                 dtype=None) -> None:
        super().__init__("LSTM", input_size, hidden_size, num_layers, bias, batch_first,
                         dropout, bidirectional, proj_size, device, dtype)


class GRU(RNNBase):
    """Gated recurrent unit: ``r, z = sigmoid(...)``, ``n = tanh(x W_in^T + b_in + r *
    (h W_hn^T + b_hn))``, ``h_t = (1 - z) * n + z * h_{t-1}``.
    ``forward(input, hx=None) -> (output, h_n)``."""

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1,
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, device=None, dtype=None) -> None:
        super().__init__("GRU", input_size, hidden_size, num_layers, bias, batch_first,
                         dropout, bidirectional, 0, device, dtype)


# ----------------------------------------------------------------------------- cells


class RNNCellBase(Module):
    """What the cells share: ``weight_ih`` ``(chunks * hidden, input)``, ``weight_hh``
    ``(chunks * hidden, hidden)``, ``bias_ih``/``bias_hh``, all from U(-1/sqrt(hidden),
    1/sqrt(hidden))."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool, num_chunks: int,
                 device=None, dtype=None) -> None:
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        self.weight_ih = Parameter(et.empty((num_chunks * hidden_size, input_size),
                                            dtype=dtype, device=device))
        self.weight_hh = Parameter(et.empty((num_chunks * hidden_size, hidden_size),
                                            dtype=dtype, device=device))
        if bias:
            self.bias_ih = Parameter(et.empty((num_chunks * hidden_size,), dtype=dtype,
                                              device=device))
            self.bias_hh = Parameter(et.empty((num_chunks * hidden_size,), dtype=dtype,
                                              device=device))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        nonlinearity = getattr(self, "nonlinearity", "tanh")
        if nonlinearity != "tanh":
            s += f", nonlinearity={nonlinearity}"
        return s

    def reset_parameters(self) -> None:
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def _prepare(self, input, hx, states: int):
        """Checks the input and hidden state(s); returns (input, [states], batched)."""
        name = type(self).__name__
        if input.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.dim()}D instead")
        if input.shape[-1] != self.input_size:
            raise RuntimeError(
                f"input has inconsistent input_size: got {input.shape[-1]} expected "
                f"{self.input_size}"
            )
        if input.dtype != self.weight_ih.dtype and not _autocasting(input):
            raise ValueError(
                f"{name} input dtype ({input.dtype}) does not match weight dtype "
                f"({self.weight_ih.dtype})"
            )
        batched = input.dim() == 2
        if not batched:
            input = input.unsqueeze(0)
        if hx is None:
            zeros = et.zeros((input.shape[0], self.hidden_size), dtype=input.dtype,
                             device=input.device)
            return input, [zeros] * states, batched
        if states == 2:
            if not isinstance(hx, (tuple, list)) or len(hx) != 2:
                raise RuntimeError("lstm_cell expects two hidden states")
            hs = list(hx)
        else:
            hs = [hx]
        out = []
        for k, h in enumerate(hs):
            if h.dim() != input.dim() - (0 if batched else 1):
                kind = "batched 2-D" if batched else "unbatched 1-D"
                raise RuntimeError(
                    f"{name}: for {kind} input, the hidden state should be "
                    f"{2 if batched else 1}-D, but got a {h.dim()}-D tensor"
                )
            h = h if batched else h.unsqueeze(0)
            if h.shape[0] != input.shape[0]:
                raise RuntimeError(
                    f"Input batch size {input.shape[0]} doesn't match hidden{k} batch size "
                    f"{h.shape[0]}"
                )
            if h.shape[1] != self.hidden_size:
                raise RuntimeError(
                    f"hidden{k} has inconsistent hidden_size: got {h.shape[1]}, expected "
                    f"{self.hidden_size}"
                )
            out.append(h)
        return input, out, batched


class RNNCell(RNNCellBase):
    """One Elman step: ``h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh)`` (or ``relu``).
    ``forward(input, hx=None) -> h'``; input ``(N, H_in)`` or ``(H_in)``."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 nonlinearity: str = "tanh", device=None, dtype=None) -> None:
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(
                f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or 'relu'."
            )
        super().__init__(input_size, hidden_size, bias, 1, device, dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        x, (h,), batched = self._prepare(input, hx, 1)
        pre = F.linear(x, self.weight_ih, self.bias_ih) + F.linear(h, self.weight_hh,
                                                                   self.bias_hh)
        out = et.tanh(pre) if self.nonlinearity == "tanh" else et.relu(pre)
        return out if batched else out.squeeze(0)


class LSTMCell(RNNCellBase):
    """One LSTM step. ``forward(input, (h, c)=None) -> (h', c')``."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device=None,
                 dtype=None) -> None:
        super().__init__(input_size, hidden_size, bias, 4, device, dtype)

    def forward(self, input, hx=None):
        x, (h, c), batched = self._prepare(input, hx, 2)
        gates = F.linear(x, self.weight_ih, self.bias_ih) + F.linear(h, self.weight_hh,
                                                                     self.bias_hh)
        i, f, g, o = gates.chunk(4, 1)
        c = et.sigmoid(f) * c + et.sigmoid(i) * et.tanh(g)
        h = et.sigmoid(o) * et.tanh(c)
        return (h, c) if batched else (h.squeeze(0), c.squeeze(0))


class GRUCell(RNNCellBase):
    """One GRU step. ``forward(input, hx=None) -> h'``."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device=None,
                 dtype=None) -> None:
        super().__init__(input_size, hidden_size, bias, 3, device, dtype)

    def forward(self, input, hx=None):
        x, (h,), batched = self._prepare(input, hx, 1)
        gi = F.linear(x, self.weight_ih, self.bias_ih)
        gh = F.linear(h, self.weight_hh, self.bias_hh)
        ir, iz, i_n = gi.chunk(3, 1)
        hr, hz, h_n = gh.chunk(3, 1)
        r = et.sigmoid(ir + hr)
        z = et.sigmoid(iz + hz)
        new = et.tanh(i_n + r * h_n)
        out = new + z * (h - new)
        return out if batched else out.squeeze(0)
