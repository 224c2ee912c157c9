"""``embedding`` of ``ember.nn.functional``, on the core's ``embedding`` (whose gradient,
``embedding_dense_backward``, skips ``padding_idx`` and honours ``scale_grad_by_freq``), with
``max_norm`` renormalizing the rows it looks up, in place, as PyTorch does; and
``embedding_bag``, the bags' sums (``index_add``), means or maxima (``scatter_reduce``) of
those rows."""

from __future__ import annotations

import ember_tensor as et

__all__ = ["embedding", "embedding_bag"]


def _renorm_rows_(weight, input, max_norm: float, norm_type: float) -> None:
    """Rescales, in place and without recording, each row of ``weight`` that ``input``
    looks up and whose ``norm_type``-norm exceeds ``max_norm`` to norm ``max_norm``."""
    from ember_autograd import no_grad

    with no_grad():
        flat = input.reshape(-1).long()
        if flat.numel() == 0:
            return
        seen = et.zeros(weight.shape[0], dtype=et.int64, device=weight.device).index_add(
            0, flat, et.ones(flat.shape[0], dtype=et.int64, device=weight.device))
        rows = (seen > 0).nonzero().reshape(-1)
        picked = weight.index_select(0, rows)
        norms = picked.norm(norm_type, 1, keepdim=True)
        scale = et.where(norms > max_norm, max_norm / (norms + 1e-7), 1.0).to(weight.dtype)
        weight[rows] = picked * scale


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type: float = 2.0,
              scale_grad_by_freq: bool = False, sparse: bool = False):
    """The rows of ``weight`` (num_embeddings, embedding_dim) at the int64/int32 indices
    ``input``: a tensor of shape ``input.shape + (embedding_dim,)``. The row ``padding_idx``
    gets no gradient; ``scale_grad_by_freq`` divides each row's gradient by the number of
    times the batch uses it; ``max_norm`` first renormalizes the looked-up rows in place.
    ``sparse=True`` is accepted and gives a dense gradient (Ember has no sparse tensors)."""
    if padding_idx is not None:
        if padding_idx > 0:
            assert padding_idx < weight.shape[0], "Padding_idx must be within num_embeddings"
        elif padding_idx < 0:
            assert padding_idx >= -weight.shape[0], "Padding_idx must be within num_embeddings"
            padding_idx = weight.shape[0] + padding_idx
    else:
        padding_idx = -1
    if max_norm is not None:
        _renorm_rows_(weight, input.contiguous(), max_norm, norm_type)
    return et.embedding(weight, input, padding_idx, scale_grad_by_freq, sparse)


def _bags(input, offsets, include_last_offset: bool):
    """(flat indices, the bag of each, the number of bags) of embedding_bag's input: a 2-D
    input is one bag per row; a 1-D one is cut at ``offsets``."""
    if input.dim() == 2:
        if offsets is not None:
            raise ValueError(
                "if input is 2D, then offsets has to be None, as input is treated is a "
                "mini-batch of fixed length sequences. However, found offsets of type "
                f"{type(offsets)}")
        rows, size = input.shape
        bag = et.arange(rows, device=input.device).repeat_interleave(size)
        return input.reshape(-1), bag, rows
    if input.dim() != 1:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension "
                         f"{input.dim()}")
    if offsets is None:
        raise ValueError("offsets has to be a 1D Tensor but got None")
    if offsets.dim() != 1:
        raise ValueError("offsets has to be a 1D Tensor")
    starts = offsets[:-1] if include_last_offset else offsets
    if offsets.numel() and int(offsets[0]) != 0:
        raise RuntimeError("offsets[0] has to be 0, i.e., the first sequence in the mini-batch "
                           f"has to start from position 0. However, got {int(offsets[0])}")
    positions = et.arange(input.shape[0], device=input.device)
    bag = et.searchsorted(starts.to(et.int64), positions, right=True) - 1
    return input, bag, starts.shape[0]


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type: float = 2,
                  scale_grad_by_freq: bool = False, mode: str = "mean", sparse: bool = False,
                  per_sample_weights=None, include_last_offset: bool = False,
                  padding_idx=None):
    """The sums, means or maxima of bags of ``weight``'s rows, without the intermediate
    ``(bags, bag size, dim)`` tensor of ``embedding``: ``(B, N)`` indices are B bags of N;
    1-D indices are cut into bags at ``offsets`` (B starts, or B + 1 with
    ``include_last_offset``). ``per_sample_weights`` (mode 'sum' only) scales each row;
    entries equal to ``padding_idx`` are left out of their bag (an empty bag gives zeros).
    ``max_norm``, ``scale_grad_by_freq`` and ``sparse`` act as in ``embedding``. Result:
    ``(B, embedding_dim)``."""
    if input.dtype not in (et.int64, et.int32):
        raise RuntimeError("Expected tensor for argument #1 'indices' to have one of the "
                           "following scalar types: Long, Int; but got "
                           f"{input.dtype} instead (while checking arguments for embedding_bag)")
    if weight.dim() != 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension "
                         f"{weight.dim()}")
    if mode not in ("sum", "mean", "max"):
        raise ValueError("mode has to be one of sum, mean or max")
    if per_sample_weights is not None:
        if mode != "sum":
            raise NotImplementedError(
                "embedding_bag: per_sample_weights was not None. per_sample_weights is only "
                f"supported for mode='sum' (got mode='{mode}'). Please open a feature request "
                "on GitHub.")
        if tuple(per_sample_weights.shape) != tuple(input.shape):
            raise ValueError(
                f"embedding_bag: If per_sample_weights ({tuple(per_sample_weights.shape)}) is "
                f"not None, then it must have the same shape as the input "
                f"({tuple(input.shape)})")
    flat, bag, count = _bags(input, offsets, include_last_offset)
    num = weight.shape[0]
    if flat.numel() and bool(((flat < 0) | (flat >= num)).any()):
        at = int(((flat < 0) | (flat >= num)).nonzero().reshape(-1)[0])
        raise RuntimeError(f"Index {at} of input takes value {int(flat[at])} which is not in "
                           f"the valid range [0, {num})")
    if padding_idx is not None and padding_idx < 0:
        padding_idx += num
    rows = embedding(flat, weight, padding_idx, max_norm, norm_type, scale_grad_by_freq)
    keep = (flat != padding_idx) if padding_idx is not None else et.ones_like(flat, dtype=et.bool)
    if per_sample_weights is not None:
        rows = rows * per_sample_weights.reshape(-1, 1).to(rows.dtype)
    dim = weight.shape[1]
    zeros = et.zeros(count, dim, dtype=rows.dtype, device=rows.device)
    members = et.zeros(count, dtype=rows.dtype, device=rows.device).index_add(
        0, bag, keep.to(rows.dtype))
    if mode == "max":
        floor = et.full_like(rows, float("-inf"))
        picked = et.where(keep.unsqueeze(1), rows, floor)
        out = zeros.scatter_reduce(0, bag.unsqueeze(1).expand(-1, dim), picked, "amax",
                                   include_self=False)
        return et.where((members > 0).unsqueeze(1), out, zeros)
    out = zeros.index_add(0, bag, et.where(keep.unsqueeze(1), rows, et.zeros_like(rows)))
    if mode == "mean":
        out = out / et.clamp(members, min=1).unsqueeze(1)
    return out
