"""Attention in ``ember.nn.functional``: ``scaled_dot_product_attention`` and
``multi_head_attention_forward`` (what ``MultiheadAttention`` runs), composed of matmuls,
softmax and masks.

Masks follow PyTorch: for ``scaled_dot_product_attention`` a boolean ``attn_mask`` marks
the positions that *take part* (``True`` = attend); for ``multi_head_attention_forward``
and the modules, boolean ``attn_mask``/``key_padding_mask`` mark the positions that are
*left out* (``True`` = masked). Float masks are added to the scores. A query whose every key
is masked gets zero attention weights (and a zero output) from
``scaled_dot_product_attention``, as PyTorch's; the ``need_weights=True`` path of
``multi_head_attention_forward`` gives NaN there, as PyTorch's does.

>>> import ember_tensor as et
>>> from ember_nn import functional as F
>>> q = et.ones(2, 4, 5, 8)  # (batch, heads, L, E)
>>> out = F.scaled_dot_product_attention(q, et.ones(2, 4, 6, 8), et.ones(2, 4, 6, 3),
...                                      is_causal=True)
>>> tuple(out.shape)
(2, 4, 5, 3)
"""

from __future__ import annotations

import math
import warnings

import ember_tensor as et

__all__ = ["multi_head_attention_forward", "scaled_dot_product_attention"]

_NEG_INF = float("-inf")


def _dtype_name(dtype) -> str:
    return str(dtype).rsplit(".", 1)[-1]


def _safe_softmax(scores):
    """Softmax over the last dim that gives 0 (not NaN) on rows where every score is
    -inf, with gradients to match."""
    top = scores.detach().amax(-1, keepdim=True)
    top = et.where(top == _NEG_INF, 0.0, top)
    e = et.exp(scores - top)
    total = e.sum(-1, keepdim=True)
    return e / et.where(total == 0, 1.0, total)


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p: float = 0.0,
                                 is_causal: bool = False, scale=None,
                                 enable_gqa: bool = False):
    """``softmax(query @ key^T * scale + mask) @ value`` over the last two dims: query
    ``(..., L, E)``, key ``(..., S, E)``, value ``(..., S, Ev)`` -> ``(..., L, Ev)`` (batch
    dims broadcast). ``scale`` defaults to ``1 / sqrt(E)``; ``attn_mask`` is boolean (True
    = take part) or float (added), broadcastable to ``(..., L, S)``; ``is_causal`` keeps
    key ``j`` for query ``i`` when ``j <= i``; ``dropout_p`` drops attention weights (always,
    whatever the module mode: pass 0 in eval); ``enable_gqa`` shares each key/value head
    among ``H_q / H_kv`` query heads (dim -3)."""
    name = "scaled_dot_product_attention"
    for arg, t in (("query", query), ("key", key), ("value", value)):
        if t.dim() < 2:
            raise RuntimeError(
                f"{name}: expected {arg} to have at least 2 dimensions, but got a "
                f"{t.dim()}-D tensor"
            )
    if not (query.dtype == key.dtype == value.dtype):
        raise RuntimeError(
            "Expected query, key, and value to have the same dtype, but got query.dtype: "
            f"{_dtype_name(query.dtype)} key.dtype: {_dtype_name(key.dtype)} and "
            f"value.dtype: {_dtype_name(value.dtype)} instead."
        )
    if not query.is_floating_point():
        raise RuntimeError(
            f"{name}: expected floating point query, key and value, but got "
            f"{_dtype_name(query.dtype)}"
        )
    if query.shape[-1] != key.shape[-1]:
        raise RuntimeError(
            f"{name}: query and key must have the same embedding size (last dim), but got "
            f"query {list(query.shape)} and key {list(key.shape)}"
        )
    if key.shape[-2] != value.shape[-2]:
        raise RuntimeError(
            f"{name}: key and value must have the same sequence length (dim -2), but got "
            f"key {list(key.shape)} and value {list(value.shape)}"
        )
    if attn_mask is not None:
        if is_causal:
            raise RuntimeError(
                "_scaled_dot_product_attention: Explicit attn_mask should not be set when "
                "is_causal=True"
            )
        if attn_mask.dtype != et.bool and attn_mask.dtype != query.dtype:
            raise RuntimeError(
                "Expected attn_mask dtype to be bool or float or to match query dtype, but got "
                f"attn_mask.dtype: {_dtype_name(attn_mask.dtype)} and  query.dtype: "
                f"{_dtype_name(query.dtype)} instead."
            )
    if not 0.0 <= dropout_p <= 1.0:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {dropout_p}")
    if enable_gqa and query.dim() >= 3 and key.dim() >= 3:
        hq, hk, hv = query.shape[-3], key.shape[-3], value.shape[-3]
        if hq % hk or hq % hv:
            raise RuntimeError(
                "Number of heads in key and value must divide the number of heads in query, "
                f"but got query heads {hq}, key heads {hk} and value heads {hv}"
            )
        key = _repeat_heads(key, hq // hk)
        value = _repeat_heads(value, hq // hv)
    length, source = query.shape[-2], key.shape[-2]
    factor = 1.0 / math.sqrt(query.shape[-1]) if scale is None else scale
    if is_causal and dropout_p == 0.0 and length >= 2 * _causal_block(length):
        return _causal_by_blocks(query * factor, key, value)
    scores = (query * factor).matmul(key.transpose(-2, -1))
    masked = False
    if is_causal:
        keep = et.ones((length, source), dtype=et.bool, device=query.device).tril()
        scores = scores.masked_fill(keep.logical_not(), _NEG_INF)
    if attn_mask is not None:
        masked = True
        if attn_mask.dtype == et.bool:
            scores = scores.masked_fill(attn_mask.logical_not(), _NEG_INF)
        else:
            scores = scores + attn_mask
    weights = _safe_softmax(scores) if masked else et.softmax(scores, -1)
    if dropout_p > 0.0:
        from .functional import dropout

        weights = dropout(weights, dropout_p, True)
    return weights.matmul(value)


def _causal_block(length: int) -> int:
    """Query rows per block of the causal path: block b attends keys [0, (b + 1) * block)
    only, so the products skip the masked upper triangle ((n + 1) / 2n of the work is left at
    n blocks). Smaller blocks skip more and cost more calls: measured on a 2-core AMD EPYC,
    32 rows were fastest up to 512 queries, 64 at 1024."""
    return 32 if length < 768 else 64


def _causal_by_blocks(query, key, value):
    """Causal attention of scaled queries ``(..., L, E)`` in blocks of ``_causal_block(L)``
    query rows: each block's scores against the keys it can see, the causal mask applied in
    place to the block's diagonal square only. Differentiable through its slices."""
    length, source = query.shape[-2], key.shape[-2]
    block = _causal_block(length)
    key_t = key.transpose(-2, -1)
    outs = []
    for start in range(0, length, block):
        stop = min(start + block, length)
        span = min(stop, source)  # query i sees keys j <= i
        scores = query[..., start:stop, :].matmul(key_t[..., :span])
        if start < span:  # key start + c is hidden from query start + r where c > r
            rows = stop - start
            hidden = et.ones((rows, span - start), dtype=et.bool, device=query.device).triu(1)
            scores[..., start:].masked_fill_(hidden, _NEG_INF)
        outs.append(et.softmax(scores, -1).matmul(value[..., :span, :]))
    return et.cat(outs, -2)


def _repeat_heads(t, repeats: int):
    """``t.repeat_interleave(repeats, dim=-3)``."""
    if repeats == 1:
        return t
    shape = list(t.shape)
    expanded = t.unsqueeze(-3).expand(*shape[:-2], repeats, *shape[-2:])
    return expanded.reshape(*shape[:-3], shape[-3] * repeats, *shape[-2:])


# ----------------------------------------------------------------------------- multi-head


def _none_or_dtype(t):
    if t is None:
        return None
    if isinstance(t, et.Tensor):
        return t.dtype
    raise RuntimeError("input to _none_or_dtype() must be None or ember.Tensor")


def _canonical_mask(mask, mask_name: str, other_type, other_name: str, target_type,
                    check_other: bool = True):
    """A boolean mask (True = masked) as a float mask of ``target_type`` (-inf where
    masked); float masks are returned as they are. Warns, as PyTorch, when the two masks of
    one call have different types."""
    if mask is None:
        return None
    if mask.dtype != et.bool and not mask.is_floating_point():
        raise AssertionError(f"only bool and floating types of {mask_name} are supported")
    if check_other and other_type is not None and mask.dtype != other_type:
        warnings.warn(
            f"Support for mismatched {mask_name} and {other_name} is deprecated. Use same "
            "type for both instead.",
            stacklevel=4,
        )
    if mask.dtype == et.bool:
        zeros = et.zeros(tuple(mask.shape), dtype=target_type, device=mask.device)
        return zeros.masked_fill(mask, _NEG_INF)
    return mask


def _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads) -> bool:
    """Whether the call is batched; PyTorch's rank checks (AssertionErrors, as there)."""
    if query.dim() == 3:
        if key.dim() != 3 or value.dim() != 3:
            raise AssertionError(
                "For batched (3-D) `query`, expected `key` and `value` to be 3-D but found "
                f"{key.dim()}-D and {value.dim()}-D tensors respectively"
            )
        if key_padding_mask is not None and key_padding_mask.dim() != 2:
            raise AssertionError(
                "For batched (3-D) `query`, expected `key_padding_mask` to be `None` or 2-D "
                f"but found {key_padding_mask.dim()}-D tensor instead"
            )
        if attn_mask is not None and attn_mask.dim() not in (2, 3):
            raise AssertionError(
                "For batched (3-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D but "
                f"found {attn_mask.dim()}-D tensor instead"
            )
        return True
    if query.dim() == 2:
        if key.dim() != 2 or value.dim() != 2:
            raise AssertionError(
                "For unbatched (2-D) `query`, expected `key` and `value` to be 2-D but found "
                f"{key.dim()}-D and {value.dim()}-D tensors respectively"
            )
        if key_padding_mask is not None and key_padding_mask.dim() != 1:
            raise AssertionError(
                "For unbatched (2-D) `query`, expected `key_padding_mask` to be `None` or 1-D "
                f"but found {key_padding_mask.dim()}-D tensor instead"
            )
        if attn_mask is not None:
            if attn_mask.dim() not in (2, 3):
                raise AssertionError(
                    "For unbatched (2-D) `query`, expected `attn_mask` to be `None`, 2-D or "
                    f"3-D but found {attn_mask.dim()}-D tensor instead"
                )
            if attn_mask.dim() == 3:
                expected = (num_heads, query.shape[0], key.shape[0])
                if tuple(attn_mask.shape) != expected:
                    raise AssertionError(
                        f"Expected `attn_mask` shape to be {expected} but got "
                        f"{attn_mask.shape}"
                    )
        return False
    raise AssertionError(
        "query should be unbatched 2D or batched 3D tensor but received "
        f"{query.dim()}-D query tensor"
    )


def _linear(x, w, b):
    return et.linear(x, w, b)


def _in_projection(query, key, value, w, b, separate):
    """The q, k, v projections: one matmul when query, key and value are one tensor (the
    self-attention case), two when key is value."""
    if separate is not None:
        w_q, w_k, w_v = separate
        b_q = b_k = b_v = None
        if b is not None:
            b_q, b_k, b_v = b.chunk(3)
        return _linear(query, w_q, b_q), _linear(key, w_k, b_k), _linear(value, w_v, b_v)
    e = query.shape[-1]
    if key is value and query is key:
        q, k, v = _linear(query, w, b).chunk(3, -1)
        return q, k, v
    if key is value:
        w_q, w_kv = w.split([e, 2 * e])
        b_q = b_kv = None
        if b is not None:
            b_q, b_kv = b.split([e, 2 * e])
        k, v = _linear(key, w_kv, b_kv).chunk(2, -1)
        return _linear(query, w_q, b_q), k, v
    w_q, w_k, w_v = w.chunk(3)
    b_q = b_k = b_v = None
    if b is not None:
        b_q, b_k, b_v = b.chunk(3)
    return _linear(query, w_q, b_q), _linear(key, w_k, b_k), _linear(value, w_v, b_v)


def multi_head_attention_forward(query, key, value, embed_dim_to_check: int, num_heads: int,
                                 in_proj_weight, in_proj_bias, bias_k, bias_v,
                                 add_zero_attn: bool, dropout_p: float, out_proj_weight,
                                 out_proj_bias, training: bool = True, key_padding_mask=None,
                                 need_weights: bool = True, attn_mask=None,
                                 use_separate_proj_weight: bool = False, q_proj_weight=None,
                                 k_proj_weight=None, v_proj_weight=None, static_k=None,
                                 static_v=None, average_attn_weights: bool = True,
                                 is_causal: bool = False):
    """Multi-head attention of ``(L, N, E)`` queries over ``(S, N, E_k)`` keys and ``(S, N,
    E_v)`` values (or unbatched ``(L, E)``, ``(S, E_k)``, ``(S, E_v)``): returns ``(output
    (L, N, E), weights)``, the weights ``(N, L, S)`` averaged over heads (``(N, heads, L,
    S)`` with ``average_attn_weights=False``), or ``None`` without ``need_weights``.
    Boolean masks are True where a position is left out; ``attn_mask`` is ``(L, S)`` or
    ``(N * heads, L, S)``, ``key_padding_mask`` ``(N, S)``. ``is_causal`` is a hint that
    ``attn_mask`` is the causal mask (which must be given)."""
    is_batched = _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not is_batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask",
                                       _none_or_dtype(attn_mask), "attn_mask", query.dtype)
    if is_causal and attn_mask is None:
        raise RuntimeError(
            "Need attn_mask if specifying the is_causal hint. You may use the Transformer "
            "module method `generate_square_subsequent_mask` to create this mask."
        )
    if is_causal and key_padding_mask is None and not need_weights:
        attn_mask = None  # the kernel makes the causal mask itself
    else:
        attn_mask = _canonical_mask(attn_mask, "attn_mask", None, "", query.dtype,
                                    check_other=False)
        if key_padding_mask is not None:
            is_causal = False
    if embed_dim != embed_dim_to_check:
        raise AssertionError(
            f"was expecting embedding dimension of {embed_dim_to_check}, but got {embed_dim}"
        )
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if use_separate_proj_weight:
        if tuple(key.shape[:2]) != tuple(value.shape[:2]):
            raise AssertionError(
                f"key's sequence and batch dims {et.Size(key.shape[:2])} do not match value's "
                f"{et.Size(value.shape[:2])}"
            )
        separate = (q_proj_weight, k_proj_weight, v_proj_weight)
        if any(w is None for w in separate):
            raise AssertionError(
                "use_separate_proj_weight is True but q_proj_weight, k_proj_weight or "
                "v_proj_weight is None"
            )
    else:
        if tuple(key.shape) != tuple(value.shape):
            raise AssertionError(f"key shape {key.shape} does not match value shape {value.shape}")
        separate = None
        if in_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is False but in_proj_weight is None")
    q, k, v = _in_projection(query, key, value, in_proj_weight, in_proj_bias, separate)

    if attn_mask is not None:
        if attn_mask.dim() == 2:
            if tuple(attn_mask.shape) != (tgt_len, key.shape[0]):
                raise RuntimeError(
                    f"The shape of the 2D attn_mask is {attn_mask.shape}, but should be "
                    f"{(tgt_len, key.shape[0])}."
                )
            attn_mask = attn_mask.unsqueeze(0)
        elif attn_mask.dim() == 3:
            expected = (bsz * num_heads, tgt_len, key.shape[0])
            if tuple(attn_mask.shape) != expected:
                raise RuntimeError(
                    f"The shape of the 3D attn_mask is {attn_mask.shape}, but should be "
                    f"{expected}."
                )
        else:
            raise RuntimeError(f"attn_mask's dimension {attn_mask.dim()} is not supported")

    from .functional import pad

    if bias_k is not None and bias_v is not None:
        if static_k is not None:
            raise AssertionError("bias cannot be added to static key.")
        if static_v is not None:
            raise AssertionError("bias cannot be added to static value.")
        k = et.cat([k, bias_k.expand(1, bsz, embed_dim)], 0)
        v = et.cat([v, bias_v.expand(1, bsz, embed_dim)], 0)
        if attn_mask is not None:
            attn_mask = pad(attn_mask, (0, 1))
        if key_padding_mask is not None:
            key_padding_mask = pad(key_padding_mask, (0, 1))
    elif bias_k is not None or bias_v is not None:
        raise AssertionError("bias_k and bias_v must be given together")

    # (len, N, E) -> (N * heads, len, head_dim)
    q = q.reshape(tgt_len, bsz * num_heads, head_dim).transpose(0, 1)
    if static_k is None:
        k = k.reshape(k.shape[0], bsz * num_heads, head_dim).transpose(0, 1)
    else:
        if static_k.shape[0] != bsz * num_heads:
            raise AssertionError(
                f"expecting static_k.size(0) of {bsz * num_heads}, but got {static_k.shape[0]}"
            )
        if static_k.shape[2] != head_dim:
            raise AssertionError(
                f"expecting static_k.size(2) of {head_dim}, but got {static_k.shape[2]}"
            )
        k = static_k
    if static_v is None:
        v = v.reshape(v.shape[0], bsz * num_heads, head_dim).transpose(0, 1)
    else:
        if static_v.shape[0] != bsz * num_heads:
            raise AssertionError(
                f"expecting static_v.size(0) of {bsz * num_heads}, but got {static_v.shape[0]}"
            )
        if static_v.shape[2] != head_dim:
            raise AssertionError(
                f"expecting static_v.size(2) of {head_dim}, but got {static_v.shape[2]}"
            )
        v = static_v
    if add_zero_attn:
        zeros = et.zeros((bsz * num_heads, 1, head_dim), dtype=k.dtype, device=k.device)
        k = et.cat([k, zeros], 1)
        v = et.cat([v, zeros], 1)
        if attn_mask is not None:
            attn_mask = pad(attn_mask, (0, 1))
        if key_padding_mask is not None:
            key_padding_mask = pad(key_padding_mask, (0, 1))
    src_len = k.shape[1]
    if key_padding_mask is not None:
        for d, want in enumerate((bsz, src_len)):
            if key_padding_mask.shape[d] != want:
                raise AssertionError(
                    f"Expected key_padded_mask.shape[{d}] to be {want}, but got "
                    f"{key_padding_mask.shape[d]}"
                )
        kpm = (key_padding_mask.reshape(bsz, 1, 1, src_len)
               .expand(bsz, num_heads, 1, src_len).reshape(bsz * num_heads, 1, src_len))
        attn_mask = kpm if attn_mask is None else attn_mask + kpm
    if not training:
        dropout_p = 0.0

    if need_weights:
        scores = (q * math.sqrt(1.0 / head_dim)).matmul(k.transpose(-2, -1))
        if attn_mask is not None:
            scores = scores + attn_mask
        weights = et.softmax(scores, -1)
        if dropout_p > 0.0:
            from .functional import dropout

            weights = dropout(weights, dropout_p, True)
        out = weights.matmul(v)  # (N * heads, L, head_dim)
        out = out.transpose(0, 1).reshape(tgt_len * bsz, embed_dim)
        out = _linear(out, out_proj_weight, out_proj_bias).reshape(tgt_len, bsz, -1)
        weights = weights.reshape(bsz, num_heads, tgt_len, src_len)
        if average_attn_weights:
            weights = weights.mean(1)
        if not is_batched:
            out = out.squeeze(1)
            weights = weights.squeeze(0)
        return out, weights

    if attn_mask is not None:
        if attn_mask.shape[0] == 1 and attn_mask.dim() == 3:
            attn_mask = attn_mask.unsqueeze(0)
        else:
            attn_mask = attn_mask.reshape(bsz, num_heads, -1, src_len)
    q = q.reshape(bsz, num_heads, tgt_len, head_dim)
    k = k.reshape(bsz, num_heads, src_len, head_dim)
    v = v.reshape(bsz, num_heads, src_len, head_dim)
    out = scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal)
    out = out.permute(2, 0, 1, 3).reshape(bsz * tgt_len, embed_dim)
    out = _linear(out, out_proj_weight, out_proj_bias).reshape(tgt_len, bsz, -1)
    if not is_batched:
        out = out.squeeze(1)
    return out, None
