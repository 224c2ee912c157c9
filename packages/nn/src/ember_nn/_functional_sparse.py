"""``embedding`` of ``ember.nn.functional``, on the core's ``embedding`` (whose gradient,
``embedding_dense_backward``, skips ``padding_idx`` and honours ``scale_grad_by_freq``), with
``max_norm`` renormalizing the rows it looks up, in place, as PyTorch does."""

from __future__ import annotations

import ember_tensor as et

__all__ = ["embedding"]


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
