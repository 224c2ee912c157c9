"""Shape and view ops: results against NumPy, view semantics, strides and errors."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import (
    ALL_DTYPES,
    assert_close,
    dtype_name,
    rand_array,
    tensor,
    to_np,
)

# name, fn(lib, x) on a (2, 3, 4) input, numpy reference, returns a view of x
SHAPE_OPS = [
    ("view", lambda lib, x: x.view(6, 4), lambda a: a.reshape(6, 4), True),
    ("view_infer", lambda lib, x: x.view(-1, 12), lambda a: a.reshape(-1, 12), True),
    ("view_tuple", lambda lib, x: x.view((4, -1)), lambda a: a.reshape(4, -1), True),
    ("view_flat", lambda lib, x: x.view(-1), lambda a: a.reshape(-1), True),
    ("reshape", lambda lib, x: x.reshape(3, 8), lambda a: a.reshape(3, 8), None),
    ("reshape_infer", lambda lib, x: x.reshape(-1, 2, 2), lambda a: a.reshape(-1, 2, 2), None),
    ("reshape_fn", lambda lib, x: lib.reshape(x, (24,)), lambda a: a.reshape(24), None),
    ("permute", lambda lib, x: x.permute(2, 0, 1), lambda a: a.transpose(2, 0, 1), True),
    ("permute_neg", lambda lib, x: x.permute(-1, -3, -2), lambda a: a.transpose(2, 0, 1), True),
    ("permute_fn", lambda lib, x: lib.permute(x, (1, 2, 0)), lambda a: a.transpose(1, 2, 0),
     True),
    ("transpose", lambda lib, x: x.transpose(0, 2), lambda a: a.swapaxes(0, 2), True),
    ("transpose_neg", lambda lib, x: lib.transpose(x, -1, -2), lambda a: a.swapaxes(-1, -2),
     True),
    ("mT", lambda lib, x: x.mT, lambda a: a.swapaxes(-1, -2), True),
    ("expand", lambda lib, x: x[:, :1].expand(2, 5, 4), lambda a: np.broadcast_to(
        a[:, :1], (2, 5, 4)), True),
    ("expand_new_dims", lambda lib, x: x.expand(3, -1, -1, -1), lambda a: np.broadcast_to(
        a, (3, 2, 3, 4)), True),
    ("expand_as", lambda lib, x: x[:1].expand_as(x), lambda a: np.broadcast_to(
        a[:1], a.shape), True),
    ("broadcast_to", lambda lib, x: lib.broadcast_to(x[0, :, :1], (2, 3, 3)),
     lambda a: np.broadcast_to(a[0, :, :1], (2, 3, 3)), True),
    ("unsqueeze0", lambda lib, x: x.unsqueeze(0), lambda a: a[None], True),
    ("unsqueeze_neg", lambda lib, x: lib.unsqueeze(x, -1), lambda a: a[..., None], True),
    ("unsqueeze_mid", lambda lib, x: x.unsqueeze(2), lambda a: np.expand_dims(a, 2), True),
    ("squeeze", lambda lib, x: x[:1, :, None, :1].squeeze(), lambda a: a[0, :, 0], True),
    ("squeeze_dim", lambda lib, x: x[:1].squeeze(0), lambda a: a[0], True),
    ("squeeze_noop", lambda lib, x: x.squeeze(1), lambda a: a, True),
    ("squeeze_tuple", lambda lib, x: x[:1, :, :1].squeeze((0, 2)), lambda a: a[0, :, 0], True),
    ("flatten", lambda lib, x: x.flatten(), lambda a: a.reshape(-1), None),
    ("flatten_range", lambda lib, x: x.flatten(1), lambda a: a.reshape(2, 12), None),
    ("flatten_fn", lambda lib, x: lib.flatten(x, 0, 1), lambda a: a.reshape(6, 4), None),
    ("unflatten", lambda lib, x: x.unflatten(2, (2, 2)), lambda a: a.reshape(2, 3, 2, 2), None),
    ("unflatten_infer", lambda lib, x: x.unflatten(-1, (-1, 1)), lambda a: a.reshape(
        2, 3, 4, 1), None),
    ("narrow", lambda lib, x: x.narrow(2, 1, 2), lambda a: a[:, :, 1:3], True),
    ("narrow_fn", lambda lib, x: lib.narrow(x, -2, 0, 1), lambda a: a[:, 0:1], True),
    ("contiguous", lambda lib, x: x.contiguous(), lambda a: a, None),
    ("clone", lambda lib, x: x.clone(), lambda a: a, False),
    ("flip", lambda lib, x: x.flip(0), lambda a: a[::-1], False),
    ("flip_many", lambda lib, x: lib.flip(x, (0, 2)), lambda a: a[::-1, :, ::-1], False),
    ("repeat", lambda lib, x: x.repeat(2, 1, 3), lambda a: np.tile(a, (2, 1, 3)), False),
    ("repeat_more", lambda lib, x: x.repeat(2, 1, 1, 1), lambda a: np.tile(a, (2, 1, 1, 1)),
     False),
    ("tril", lambda lib, x: x.tril(), lambda a: np.tril(a), False),
    ("tril_diag", lambda lib, x: lib.tril(x, diagonal=1), lambda a: np.tril(a, 1), False),
    ("triu", lambda lib, x: x.triu(), lambda a: np.triu(a), False),
    ("triu_neg", lambda lib, x: lib.triu(x, -1), lambda a: np.triu(a, -1), False),
    ("diagonal", lambda lib, x: x.diagonal(0, 1, 2), lambda a: np.diagonal(a, 0, 1, 2), True),
    ("select", lambda lib, x: x.select(1, -1), lambda a: a[:, -1], True),
    ("movedim", lambda lib, x: x.movedim(0, -1), lambda a: np.moveaxis(a, 0, -1), True),
]
SHAPE_IDS = [s[0] for s in SHAPE_OPS]


@pytest.mark.parametrize("layout", ["contig", "transposed", "stepped"])
@pytest.mark.parametrize("name,fn,ref,is_view", SHAPE_OPS, ids=SHAPE_IDS)
def test_shape_op_values(lib, rng, name, fn, ref, is_view, layout):
    if name.startswith("view") and layout != "contig":
        pytest.skip("view of a non-contiguous tensor is tested separately")
    a = rand_array(rng, (2, 3, 4), "float32")
    x = tensor(lib, a, "float32", layout)
    r = fn(lib, x)
    assert_close(r, ref(a), "float32")
    if is_view:
        # the view aliases x: in-place changes of x show through
        x.mul_(2).add_(1)
        assert_close(r, ref(a.astype(np.float64) * 2 + 1), "float32")
    elif is_view is False:
        x.add_(1)
        assert_close(r, ref(a), "float32")


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("name,fn,ref,is_view", SHAPE_OPS, ids=SHAPE_IDS)
def test_shape_op_dtypes(lib, rng, name, fn, ref, is_view, dtype):
    a = rand_array(rng, (2, 3, 4), dtype)
    r = fn(lib, tensor(lib, a, dtype))
    assert dtype_name(r.dtype) == dtype
    assert_close(r, ref(a), dtype)


def test_view_shares_storage_write_through(lib):
    base = lib.zeros(3, 4)
    v = base.view(12)
    v[5] = 7.0
    assert float(base[1, 1]) == 7.0
    t = base.t()
    t[3, 2] = -1.0
    assert float(base[2, 3]) == -1.0
    s = base[1:, ::2]
    s.fill_(3.0)
    expected = np.zeros((3, 4), np.float32)
    expected[1, 1] = 7.0
    expected[2, 3] = -1.0
    expected[1:, ::2] = 3.0
    assert_close(base, expected, "float32")
    assert v.data_ptr() == base.data_ptr()
    assert s.data_ptr() == base.data_ptr() + 4 * base.element_size()
    # a clone does not share
    c = base.clone()
    c.zero_()
    assert_close(base, expected, "float32")
    # unsqueeze/squeeze/permute/narrow views
    base.unsqueeze(0).squeeze(0).permute(1, 0).narrow(0, 0, 1).fill_(9.0)
    expected[:, 0] = 9.0
    assert_close(base, expected, "float32")


def test_reshape_view_or_copy(lib):
    x = lib.arange(12.0).reshape(3, 4)
    r = x.reshape(2, 6)
    assert r.data_ptr() == x.data_ptr()  # contiguous: a view
    rt = x.t().reshape(12)
    assert_close(rt, np.arange(12.0).reshape(3, 4).T.reshape(12), "float32")
    x[0, 0] = 100.0
    assert float(r[0, 0]) == 100.0
    assert float(rt[0]) == 0.0  # non-viewable: copied
    # contiguous() of a contiguous tensor is itself
    assert x.contiguous() is x
    c = x.t().contiguous()
    assert c.is_contiguous() and c.stride() == (3, 1)
    assert_close(c, to_np(x).T, "float32")


def test_view_of_noncontiguous_raises(lib):
    x = lib.arange(12.0).reshape(3, 4).t()
    with pytest.raises(RuntimeError, match="(?i)view"):
        x.view(12)
    with pytest.raises(RuntimeError):
        x.view(2, 6)
    # compatible splits of a non-contiguous tensor are fine
    y = lib.arange(24.0).reshape(4, 6)[:, ::2]
    assert_close(y.view(2, 2, 3), np.arange(24.0).reshape(4, 6)[:, ::2].reshape(2, 2, 3),
                 "float32")


def test_view_incompatible_size_raises(lib):
    x = lib.zeros(3, 4)
    with pytest.raises(RuntimeError, match=r"5, 3|\[5, 3\]|12"):
        x.view(5, 3)
    with pytest.raises(RuntimeError):
        x.reshape(5, -1)
    with pytest.raises(RuntimeError):
        x.view(-1, -1)
    with pytest.raises(RuntimeError):
        x.expand(2, 3)
    with pytest.raises(RuntimeError):
        x.permute(0, 0)
    with pytest.raises(IndexError):
        x.squeeze(3)
    with pytest.raises(IndexError):
        x.transpose(0, 2)
    with pytest.raises(RuntimeError):
        x.unflatten(1, (3, 2))
    with pytest.raises(RuntimeError):
        x.narrow(1, 3, 2)


STRIDES = [
    ("contig", lambda x: x, (12, 4, 1), 0, True),
    ("permute", lambda x: x.permute(2, 0, 1), (1, 12, 4), 0, False),
    ("transpose", lambda x: x.transpose(1, 2), (12, 1, 4), 0, False),
    ("slice", lambda x: x[1:, 1:, ::2], (12, 4, 2), 16, False),
    ("select", lambda x: x[1], (4, 1), 12, True),
    ("narrow", lambda x: x.narrow(2, 1, 2), (12, 4, 1), 1, False),
    ("rows", lambda x: x[:, 1:], (12, 4, 1), 4, False),
    ("unsqueeze", lambda x: x.unsqueeze(1), (12, 12, 4, 1), 0, True),
    ("expand", lambda x: x[:, :1].expand(2, 3, 4), (12, 0, 1), 0, False),
    ("single_row", lambda x: x[:1, :1], (12, 4, 1), 0, True),
]


@pytest.mark.parametrize("name,fn,strides,offset,contig", STRIDES, ids=[s[0] for s in STRIDES])
def test_strides_offsets_contiguity(lib, name, fn, strides, offset, contig):
    x = lib.zeros(2, 3, 4)
    v = fn(x)
    assert v.stride() == strides
    assert tuple(v.stride(i) for i in range(v.dim())) == strides
    assert v.stride(-1) == strides[-1]
    assert v.storage_offset() == offset
    assert v.is_contiguous() == contig


def test_size_and_shape(lib):
    x = lib.zeros(2, 3, 4)
    assert x.size() == (2, 3, 4)
    assert x.shape == (2, 3, 4)
    assert x.size(1) == 3 and x.size(-1) == 4
    assert x.shape[0] == 2 and len(x.shape) == 3
    assert x.numel() == 24 and x.dim() == 3 and x.ndim == 3
    assert len(x) == 2
    assert lib.zeros(()).shape == () and lib.zeros(()).dim() == 0
    with pytest.raises(TypeError):
        len(lib.zeros(()))
    with pytest.raises(IndexError):
        x.size(3)


def test_t_and_T(lib, rng):
    a = rand_array(rng, (3, 5), "int32")
    x = tensor(lib, a)
    assert_close(x.t(), a.T, "int32")
    assert_close(x.T, a.T, "int32")
    assert_close(lib.t(x), a.T, "int32")
    v = rand_array(rng, (4,), "int32")
    assert_close(tensor(lib, v).t(), v, "int32")
    assert_close(lib.tensor(2).t(), np.array(2), "int64")
    with pytest.raises(RuntimeError):
        lib.zeros(2, 3, 4).t()


CAT_CASES = [
    ([(2, 3), (4, 3)], 0),
    ([(2, 3), (2, 5), (2, 1)], 1),
    ([(2, 3), (2, 3)], -1),
    ([(2, 0), (2, 3)], 1),
    ([(1, 2, 3)], 2),
    ([(0, 3), (0, 3)], 0),
]


@pytest.mark.parametrize("layout", ["contig", "transposed"])
@pytest.mark.parametrize("shapes,dim", CAT_CASES, ids=str)
def test_cat(lib, rng, shapes, dim, layout):
    arrs = [rand_array(rng, s, "float32") for s in shapes]
    ts = [tensor(lib, a, "float32", layout) for a in arrs]
    assert_close(lib.cat(ts, dim), np.concatenate(arrs, dim), "float32")
    assert_close(lib.cat(tuple(ts), dim=dim), np.concatenate(arrs, dim), "float32")
    assert_close(lib.concat(ts, dim), np.concatenate(arrs, dim), "float32")


def test_cat_promotes_and_out(lib):
    a = lib.tensor([1, 2], dtype=lib.int32)
    b = lib.tensor([0.5])
    r = lib.cat([a, b])
    assert dtype_name(r.dtype) == "float32"
    assert_close(r, [1.0, 2.0, 0.5], "float32")
    out = lib.empty(3)
    assert lib.cat([a, b], out=out) is out
    assert_close(out, [1.0, 2.0, 0.5], "float32")


def test_cat_stack_errors(lib):
    with pytest.raises(RuntimeError, match=r"(?s)4.*3|3.*4"):
        lib.cat([lib.zeros(3, 4), lib.zeros(2, 3)])
    with pytest.raises(RuntimeError, match=r"(?s)\[3, 4\].*\[2, 3\]|3, 4.*2, 3"):
        lib.stack([lib.zeros(3, 4), lib.zeros(2, 3)])
    with pytest.raises(IndexError):
        lib.cat([lib.zeros(2), lib.zeros(2)], 1)
    with pytest.raises(ValueError):
        lib.cat([])
    with pytest.raises(TypeError):
        lib.cat(lib.zeros(2), lib.zeros(2))


@pytest.mark.parametrize("dim", [0, 1, 2, -1, -3])
def test_stack(lib, rng, dim):
    arrs = [rand_array(rng, (2, 3), "int64") for _ in range(3)]
    assert_close(lib.stack([tensor(lib, a) for a in arrs], dim), np.stack(arrs, dim), "int64")
    zero_d = [lib.tensor(1.0), lib.tensor(2.0)]
    assert_close(lib.stack(zero_d), [1.0, 2.0], "float32")


SPLITS = [
    ("split_int", lambda lib, x: x.split(2), lambda a: np.split(a, [2, 4], 0)),
    ("split_int_dim", lambda lib, x: lib.split(x, 3, dim=1), lambda a: np.split(a, [3], 1)),
    ("split_list", lambda lib, x: x.split([1, 4], 0), lambda a: np.split(a, [1], 0)),
    ("split_list_dim", lambda lib, x: lib.split(x, [2, 0, 2], -1),
     lambda a: np.split(a, [2, 2], 1)),
    ("chunk", lambda lib, x: x.chunk(2), lambda a: np.split(a, [3], 0)),
    ("chunk_dim", lambda lib, x: lib.chunk(x, 4, dim=1), lambda a: np.split(a, [1, 2, 3], 1)),
    ("chunk_uneven", lambda lib, x: x.chunk(3, 1), lambda a: np.split(a, [2], 1)),
    ("unbind", lambda lib, x: x.unbind(), lambda a: [a[i] for i in range(5)]),
    ("unbind_dim", lambda lib, x: lib.unbind(x, 1), lambda a: [a[:, i] for i in range(4)]),
]


@pytest.mark.parametrize("layout", ["contig", "transposed"])
@pytest.mark.parametrize("name,fn,ref", SPLITS, ids=[s[0] for s in SPLITS])
def test_split_chunk_unbind(lib, rng, name, fn, ref, layout):
    a = rand_array(rng, (5, 4), "float32")
    x = tensor(lib, a, "float32", layout)
    parts = fn(lib, x)
    assert isinstance(parts, tuple)
    expected = ref(a)
    assert len(parts) == len(expected)
    for p, e in zip(parts, expected):
        assert_close(p, e, "float32")
    # pieces are views of x
    x.add_(1)
    for p, e in zip(parts, expected):
        assert_close(p, e + 1, "float32")


def test_split_errors(lib):
    with pytest.raises(RuntimeError):
        lib.zeros(5).split([2, 2])
    with pytest.raises(RuntimeError):
        lib.zeros(5).chunk(0)


def test_repeat_and_flip_more(lib, rng):
    a = rand_array(rng, (3,), "int16")
    assert_close(tensor(lib, a).repeat(2, 2), np.tile(a, (2, 2)), "int16")
    assert_close(tensor(lib, a).repeat(0), np.zeros(0), "int16")
    with pytest.raises(RuntimeError):
        lib.zeros(2, 3).repeat(2)
    assert_close(tensor(lib, a).flip(-1), a[::-1], "int16")
    assert_close(lib.zeros(0, 2).flip(0), np.zeros((0, 2)), "float32")


@pytest.mark.parametrize("diag", [-2, -1, 0, 1, 3])
@pytest.mark.parametrize("shape", [(4, 4), (3, 5), (5, 2), (2, 3, 4)], ids=str)
def test_tril_triu(lib, rng, shape, diag):
    a = rand_array(rng, shape, "float64")
    assert_close(tensor(lib, a).tril(diag), np.tril(a, diag), "float64")
    assert_close(lib.triu(tensor(lib, a, "float64", "transposed"), diagonal=diag),
                 np.triu(a, diag), "float64")
    x = tensor(lib, a)
    assert x.tril_(diag) is x
    assert_close(x, np.tril(a, diag), "float64")


def test_zero_size_and_zero_dim_shapes(lib):
    z = lib.zeros(0, 3)
    assert tuple(z.reshape(3, 0).shape) == (3, 0)
    assert tuple(z.reshape(-1, 3).shape) == (0, 3)
    assert tuple(z.t().shape) == (3, 0)
    assert tuple(z.unsqueeze(1).shape) == (0, 1, 3)
    assert tuple(z.flatten().shape) == (0,)
    with pytest.raises(RuntimeError):
        z.view(-1, 0)
    s = lib.tensor(5.0)
    assert tuple(s.reshape(1, 1).shape) == (1, 1)
    assert tuple(s.view(-1).shape) == (1,)
    assert tuple(s.flatten().shape) == (1,)
    assert tuple(s.unsqueeze(0).shape) == (1,)
    assert tuple(s.expand(2, 3).shape) == (2, 3)
    assert tuple(s.squeeze().shape) == ()
    assert tuple(lib.zeros(1, 1).reshape(()).shape) == ()
