"""Variable-length sequences for the recurrent layers: ``PackedSequence``,
``pack_padded_sequence``, ``pad_packed_sequence``, ``pad_sequence``, ``pack_sequence``,
``unpad_sequence`` and ``unpack_sequence``, with PyTorch's layouts (a packed sequence holds
the time steps one after the other, each with the sequences still running at that step,
longest first).

>>> import ember_tensor as et
>>> from ember_nn.utils.rnn import pack_padded_sequence, pad_packed_sequence
>>> padded = et.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 0.0]])  # (batch, time)
>>> packed = pack_padded_sequence(padded, [3, 2], batch_first=True)
>>> packed.data.tolist(), packed.batch_sizes.tolist()
([1.0, 4.0, 2.0, 5.0, 3.0], [2, 2, 1])
>>> out, lengths = pad_packed_sequence(packed, batch_first=True)
>>> out.tolist(), lengths.tolist()
([[1.0, 2.0, 3.0], [4.0, 5.0, 0.0]], [3, 2])
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

import ember_tensor as et

__all__ = [
    "PackedSequence",
    "pack_padded_sequence",
    "pack_sequence",
    "pad_packed_sequence",
    "pad_sequence",
    "unpack_sequence",
    "unpad_sequence",
]

_PackedSequenceBase = namedtuple(
    "_PackedSequenceBase", ["data", "batch_sizes", "sorted_indices", "unsorted_indices"]
)


def _invert_permutation(permutation):
    if permutation is None:
        return None
    inverse = np.empty(permutation.shape[0], dtype=np.int64)
    inverse[np.asarray(permutation.tolist(), dtype=np.int64)] = np.arange(len(inverse))
    return et.from_numpy(inverse).to(permutation.device)


class PackedSequence(_PackedSequenceBase):
    """The time steps of a batch of variable-length sequences, packed: ``data`` is
    ``(sum(lengths), *)``, ``batch_sizes`` (int64, on the CPU) the number of sequences
    running at each step; ``sorted_indices`` orders the batch by decreasing length and
    ``unsorted_indices`` undoes it (both ``None`` when the input was already sorted). Made by
    ``pack_padded_sequence``/``pack_sequence``, not by hand."""

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if unsorted_indices is None:
            unsorted_indices = _invert_permutation(sorted_indices)
        if batch_sizes is None:  # PackedSequence((data, batch_sizes, ...)) as PyTorch allows
            data, batch_sizes, *rest = data
            sorted_indices = rest[0] if rest else None
            unsorted_indices = rest[1] if len(rest) > 1 else _invert_permutation(sorted_indices)
        if batch_sizes.dim() != 1:
            raise ValueError(
                "PackedSequence: batch_sizes should be a 1-D int64 tensor, but got a "
                f"{batch_sizes.dim()}-D tensor"
            )
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args, **kwargs):
        """``data`` moved/cast as ``Tensor.to`` does, the index tensors moved to its device;
        ``batch_sizes`` stays on the CPU. ``self`` when ``data`` is unchanged."""
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        non_blocking = bool(kwargs.get("non_blocking", False))

        def move(t):
            return None if t is None else t.to(data.device, non_blocking=non_blocking)

        return type(self)(data, self.batch_sizes, move(self.sorted_indices),
                          move(self.unsorted_indices))

    def cuda(self, device=None, non_blocking: bool = False):
        """This sequence on a CUDA device (the current one by default)."""
        return self.to("cuda" if device is None else device, non_blocking=non_blocking)

    def cpu(self):
        """This sequence on the CPU."""
        return self.to("cpu")

    def pin_memory(self):
        """``data`` and the index tensors in pinned host memory (``batch_sizes`` too stays
        where it is, as in PyTorch)."""

        def pin(t):
            return None if t is None else t.pin_memory()

        return type(self)(self.data.pin_memory(), self.batch_sizes, pin(self.sorted_indices),
                          pin(self.unsorted_indices))

    def float(self):
        return self.to(et.float32)

    def double(self):
        return self.to(et.float64)

    @property
    def is_cuda(self) -> bool:
        return self.data.is_cuda

    def is_pinned(self) -> bool:
        return self.data.is_pinned()


def _lengths_list(lengths) -> list[int]:
    if isinstance(lengths, et.Tensor):
        if lengths.dim() != 1:
            raise RuntimeError(
                f"lengths should be a 1-D tensor, but got a {lengths.dim()}-D tensor"
            )
        return [int(v) for v in lengths.tolist()]
    return [int(v) for v in lengths]


def pack_padded_sequence(input, lengths, batch_first: bool = False,
                         enforce_sorted: bool = True) -> PackedSequence:
    """Packs a padded ``(T, B, *)`` (``(B, T, *)`` with ``batch_first``) batch whose
    sequence ``b`` has ``lengths[b]`` steps. With ``enforce_sorted`` the lengths must
    decrease; otherwise the batch is sorted (stably) and the permutation kept."""
    lengths = _lengths_list(lengths)
    batch_dim = 0 if batch_first else 1
    if input.dim() < 2:
        raise ValueError(
            f"pack_padded_sequence: expected an input of at least 2 dimensions (time and "
            f"batch), but got {input.dim()}"
        )
    batch, steps = input.shape[batch_dim], input.shape[1 - batch_dim]
    if len(lengths) != batch:
        raise RuntimeError(
            f"Expected `len(lengths)` to be equal to batch_size, but got {len(lengths)} "
            f"(batch_size={batch})"
        )
    if any(n <= 0 for n in lengths):
        raise RuntimeError(
            "Length of all samples has to be greater than 0, but found an element in "
            "'lengths' that is <= 0"
        )
    if max(lengths) > steps:
        raise RuntimeError(
            f"pack_padded_sequence: a length ({max(lengths)}) is larger than the padded "
            f"sequence length ({steps})"
        )
    if enforce_sorted:
        if any(a < b for a, b in zip(lengths, lengths[1:])):
            raise RuntimeError(
                "`lengths` array must be sorted in decreasing order when `enforce_sorted` is "
                "True. You can pass `enforce_sorted=False` to pack_padded_sequence and/or "
                "pack_sequence to sidestep this requirement if you do not need ONNX "
                "exportability."
            )
        sorted_indices = None
        order = list(range(batch))
    else:
        order = [int(i) for i in np.argsort(-np.asarray(lengths), kind="stable")]
        sorted_indices = et.tensor(order, dtype=et.int64, device=input.device)
        input = input.index_select(batch_dim, sorted_indices)
    if batch_first:
        input = input.transpose(0, 1)
    sorted_lengths = [lengths[i] for i in order]
    batch_sizes = [sum(1 for n in sorted_lengths if n > t) for t in range(sorted_lengths[0])]
    steps_data = [input[t, :bs] for t, bs in enumerate(batch_sizes)]
    data = et.cat(steps_data, 0)
    batch_sizes_t = et.tensor(batch_sizes, dtype=et.int64, device="cpu")  # always on the CPU
    return PackedSequence(data, batch_sizes_t, sorted_indices, None)


def pad_packed_sequence(sequence: PackedSequence, batch_first: bool = False,
                        padding_value: float = 0.0, total_length=None):
    """The inverse of ``pack_padded_sequence``: ``(padded, lengths)`` with ``padded`` of
    shape ``(T, B, *)`` (``(B, T, *)`` with ``batch_first``), ``T = total_length`` or the
    longest length, in the original batch order; ``lengths`` an int64 tensor."""
    data, batch_sizes = sequence.data, [int(b) for b in sequence.batch_sizes.tolist()]
    max_len = len(batch_sizes)
    if total_length is not None:
        if total_length < max_len:
            raise ValueError(
                "Expected total_length to be at least the length of the longest sequence in "
                f"input, but got total_length={total_length} and max sequence length being "
                f"{max_len}"
            )
    else:
        total_length = max_len
    batch = batch_sizes[0]
    feature = tuple(data.shape[1:])
    rows, offset = [], 0
    for bs in batch_sizes:
        step = data[offset:offset + bs]
        offset += bs
        if bs < batch:
            step = et.cat([step, et.full((batch - bs, *feature), padding_value,
                                         dtype=data.dtype, device=data.device)], 0)
        rows.append(step)
    for _ in range(total_length - max_len):
        rows.append(et.full((batch, *feature), padding_value, dtype=data.dtype,
                            device=data.device))
    padded = et.stack(rows, 0)
    lengths = [sum(1 for bs in batch_sizes if bs > b) for b in range(batch)]
    lengths_t = et.tensor(lengths, dtype=et.int64, device="cpu")  # as in PyTorch
    if sequence.unsorted_indices is not None:
        padded = padded.index_select(1, sequence.unsorted_indices)
        lengths_t = lengths_t.index_select(0, sequence.unsorted_indices.cpu())
    if batch_first:
        padded = padded.transpose(0, 1)
    return padded, lengths_t


def pad_sequence(sequences, batch_first: bool = False, padding_value: float = 0.0,
                 padding_side: str = "right"):
    """Stacks ``(L_i, *)`` tensors into a ``(max L, B, *)`` (``(B, max L, *)``) tensor,
    padding each on ``padding_side`` (``'right'`` or ``'left'``) with ``padding_value``."""
    if padding_side not in ("left", "right"):
        raise RuntimeError(
            f"Expected padding_side to be one of left or right, but got {padding_side}."
        )
    if isinstance(sequences, et.Tensor):
        sequences = list(sequences.unbind(0))
    sequences = list(sequences)
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    longest = max(s.shape[0] for s in sequences)
    padded = []
    for s in sequences:
        missing = longest - s.shape[0]
        if missing:
            fill = et.full((missing, *s.shape[1:]), padding_value, dtype=s.dtype,
                           device=s.device)
            s = et.cat([s, fill] if padding_side == "right" else [fill, s], 0)
        padded.append(s)
    return et.stack(padded, 0 if batch_first else 1)


def pack_sequence(sequences, enforce_sorted: bool = True) -> PackedSequence:
    """Packs a list of ``(L_i, *)`` tensors (``pad_sequence`` then
    ``pack_padded_sequence``)."""
    lengths = [s.shape[0] for s in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths,
                                enforce_sorted=enforce_sorted)


def unpad_sequence(padded_sequences, lengths, batch_first: bool = False):
    """The list of ``(lengths[b], *)`` sequences of a padded batch."""
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    return [padded_sequences[b, :n] for b, n in enumerate(_lengths_list(lengths))]


def unpack_sequence(packed_sequences: PackedSequence):
    """The list of sequences of a ``PackedSequence``, in the original order."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
