"""Products (``composite: python`` in ops.yaml): matrix-vector and batched products with their
scaled-accumulate forms, outer-product updates, tensor contractions and einsum, written with
the core's matmul/bmm (BLAS), with PyTorch's names, defaults and errors. Autograd records the
ops they call; they run on every device those ops run on."""

from __future__ import annotations

import ember_tensor as _et

from . import _check_scalar
from .reduction import _wrap

__all__ = [
    "addbmm",
    "addmv",
    "addr",
    "baddbmm",
    "cdist",
    "chain_matmul",
    "cross",
    "einsum",
    "inner",
    "mv",
    "tensordot",
    "vdot",
]



def _scaled_sum(op: str, self, product, beta, alpha):
    """beta * self + alpha * product (self broadcast to product's shape); beta == 0 ignores
    self (NaN and inf included), as PyTorch; integer results take integer factors."""
    try:
        shape = _et.broadcast_shapes(self.shape, product.shape)
    except RuntimeError:
        shape = None
    if shape is None or tuple(shape) != tuple(product.shape):
        raise RuntimeError(f"{op}: the input of shape {list(self.shape)} does not broadcast to "
                           f"the product's shape {list(product.shape)}")
    for factor in (beta, alpha):  # in the result dtype, with PyTorch's overflow check
        if product.dtype != _et.bool:
            _check_scalar(product.dtype, factor)
    if not (product.is_floating_point() or product.is_complex()):
        beta, alpha = int(beta), int(alpha)  # integer results take integer factors
    if product.dtype == _et.bool:  # bool: or / and, as PyTorch's kernels
        scaled = product if alpha else _et.zeros_like(product)
        if not beta:
            return scaled
        return _et.logical_or(scaled, self.expand(product.shape))
    if alpha != 1:
        product = _et.mul(product, alpha)
    if beta == 0:
        return product.clone() if alpha == 1 else product
    return _et.add(product, self if beta == 1 else _et.mul(self, beta))


def mv(self, vec):
    """The matrix-vector product of self (n, m) and vec (m,): shape (n,)."""
    if self.dim() != 2 or vec.dim() != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got 1, {self.dim()}, "
                           f"{vec.dim()}")
    if self.size(1) != vec.size(0):
        raise RuntimeError(f"size mismatch, got input ({self.size(0)}), mat "
                           f"({self.size(0)}x{self.size(1)}), vec ({vec.size(0)})")
    return _et.matmul(self, vec)


def addmv(self, mat, vec, *, beta=1, alpha=1):
    """beta * self + alpha * (mat @ vec)."""
    if mat.dim() != 2 or vec.dim() != 1 or mat.size(1) != vec.size(0):
        raise RuntimeError(f"size mismatch, got input ({', '.join(map(str, self.shape))}), mat "
                           f"({'x'.join(map(str, mat.shape))}), vec "
                           f"({', '.join(map(str, vec.shape))})")
    return _scaled_sum("addmv", self, _et.matmul(mat, vec), beta, alpha)


def addr(self, vec1, vec2, *, beta=1, alpha=1):
    """beta * self + alpha * outer(vec1, vec2) (bool: or / and)."""
    for name, v in (("vec1", vec1), ("vec2", vec2)):
        if v.dim() != 1:
            raise RuntimeError(f"addr: Expected 1-D argument {name}, but got {v.dim()}-D")
    dt = _et.promote_types(self.dtype, _et.promote_types(vec1.dtype, vec2.dtype))
    if dt != _et.bool:
        for name, v in (("beta", beta), ("alpha", alpha)):
            if v is True or v is False:
                raise RuntimeError(f"Boolean {name} only supported for Boolean results.")
    if not (dt.is_floating_point or dt.is_complex):
        for name, v in (("beta", beta), ("alpha", alpha)):
            if isinstance(v, float):
                raise RuntimeError(f"For integral input tensors, argument {name} must not be a "
                                   "floating point number.")
    if vec1.dtype == _et.bool and vec2.dtype == _et.bool:
        outer = _et.logical_and(vec1.unsqueeze(1), vec2.unsqueeze(0))
    else:  # in the result's dtype: int16 vectors of a float32 self do not wrap around
        outer = _et.mul(vec1.to(dt).unsqueeze(1), vec2.to(dt).unsqueeze(0))
    return _scaled_sum("addr", self, outer, beta, alpha)


def _batches(op: str, batch1, batch2):
    if batch1.dim() != 3 or batch2.dim() != 3:
        raise RuntimeError("batch1 must be a 3D tensor" if batch1.dim() != 3
                           else "batch2 must be a 3D tensor")
    if batch1.size(0) != batch2.size(0) or batch1.size(2) != batch2.size(1):
        raise RuntimeError(f"{op}: the batches of shapes {list(batch1.shape)} and "
                           f"{list(batch2.shape)} cannot be multiplied")
    return _et.bmm(batch1, batch2)


def baddbmm(self, batch1, batch2, *, beta=1, alpha=1):
    """beta * self + alpha * bmm(batch1, batch2)."""
    return _scaled_sum("baddbmm", self, _batches("baddbmm", batch1, batch2), beta, alpha)


def addbmm(self, batch1, batch2, *, beta=1, alpha=1):
    """beta * self + alpha * the sum over the batch of batch1[i] @ batch2[i]."""
    product = _et.sum(_batches("addbmm", batch1, batch2), (0,))
    return _scaled_sum("addbmm", self, product.to(_et.result_type(batch1, batch2)), beta,
                       alpha)


def vdot(self, other):
    """The dot product of two 1-d vectors, the first conjugated."""
    if self.dim() != 1 or other.dim() != 1:
        raise RuntimeError(f"1D tensors expected, but got {self.dim()}D and {other.dim()}D "
                           "tensors")
    if self.dtype != other.dtype:
        raise RuntimeError(f"dot : expected both vectors to have same dtype, but found "
                           f"{self.dtype._scalar_type_name} and {other.dtype._scalar_type_name}")
    return _et.dot(_et.conj(self) if self.is_complex() else self, other)


def tensordot(a, b, dims=2):
    """The contraction of a and b over dims: an int n (a's last n with b's first n) or two
    lists of dims, (a's, b's); the result has a's free dims, then b's."""
    if isinstance(dims, _et.Tensor):
        dims = dims.item() if dims.dim() == 0 else dims.tolist()
    if isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > min(a.dim(), b.dim()):
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got "
                               f"dims={dims}")
        da, db = list(range(a.dim() - dims, a.dim())), list(range(dims))
    else:
        da, db = ([d] if isinstance(d, int) else list(d) for d in dims)
    if len(da) != len(db):
        raise RuntimeError(f"both dimension lists should have same length, but got {len(da)} "
                           f"and {len(db)}")
    da = [_wrap(d, a.dim()) if a.dim() else d for d in da]  # out of range: IndexError
    db = [_wrap(d, b.dim()) if b.dim() else d for d in db]
    for x, y in zip(da, db):  # a contracted dim of size 1 broadcasts, as in PyTorch
        if a.size(x) != b.size(y) and 1 in (a.size(x), b.size(y)):
            n = max(a.size(x), b.size(y))
            if a.size(x) == 1:
                a = a.expand([n if d == x else s for d, s in enumerate(a.shape)])
            else:
                b = b.expand([n if d == y else s for d, s in enumerate(b.shape)])
        elif a.size(x) != b.size(y):
            raise RuntimeError(f"contracted dimensions need to match, but first has size "
                               f"{a.size(x)} in dim {x} and second has size {b.size(y)} in dim "
                               f"{y}")
    free_a = [d for d in range(a.dim()) if d not in da]
    free_b = [d for d in range(b.dim()) if d not in db]
    k = 1
    for d in da:
        k *= a.size(d)
    m = n = 1  # the free sizes' products (not -1: with k = 0 the reshape would be ambiguous)
    for d in free_a:
        m *= a.size(d)
    for d in free_b:
        n *= b.size(d)
    left = a.permute(free_a + da).reshape(m, k)
    right = b.permute(db + free_b).reshape(k, n)
    return _et.mm(left, right).reshape([a.size(d) for d in free_a] +
                                       [b.size(d) for d in free_b])


def inner(self, other):
    """The inner product over the last dims (a scalar operand multiplies): shape
    self.shape[:-1] + other.shape[:-1]."""
    if self.dim() == 0 or other.dim() == 0:
        return _et.mul(self, other)
    if self.size(-1) != other.size(-1):
        raise RuntimeError(f"inner() the last dimension must match on both input tensors but "
                           f"got shapes {list(self.shape)} and {list(other.shape)}")
    return tensordot(self, other, ([-1], [-1]))


def chain_matmul(matrices):
    """The product of 2-d matrices, left to right (PyTorch's older linalg.multi_dot)."""
    ms = list(matrices)
    if not ms:
        raise RuntimeError("chain_matmul(): Expected one or more matrices")
    for i, m in enumerate(ms):
        if m.dim() != 2:
            raise RuntimeError(f"chain_matmul(): Expected all tensors to be 2D, but got a "
                               f"{m.dim()}D tensor at index {i}")
    if len(ms) == 1:
        return ms[0].clone()
    return _et.linalg.multi_dot(ms)


def cross(self, other, dim=None):
    """The cross product of 3-vectors along dim (when None, self's first dim of size 3, as
    PyTorch's deprecated default)."""
    if dim is None:
        dim = next((i for i, n in enumerate(self.shape) if n == 3), None)
        if dim is None:
            raise RuntimeError("no dimension of size 3 in input")
    return _et.linalg.cross(self, other, dim=dim)


# --------------------------------------------------------------------- einsum


def _parse(equation: str, operands):
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(operands):
        raise RuntimeError(f"einsum(): {len(terms)} operands were specified in the equation "
                           f"but {len(operands)} were given")
    letters = set()
    subs = []
    ell_dims = 0
    for term, op in zip(terms, operands):
        if "..." in term:
            n = op.dim() - (len(term) - 3)
            if n < 0:
                raise RuntimeError(f"einsum(): the number of subscripts in the equation "
                                   f"({len(term) - 3}) is more than the number of dimensions "
                                   f"({op.dim()}) for operand {len(subs)}")
            ell_dims = max(ell_dims, n)
        elif len(term) != op.dim():
            raise RuntimeError(f"einsum(): the number of subscripts in the equation ({len(term)})"
                               f" does not match the number of dimensions ({op.dim()}) for "
                               f"operand {len(subs)} and no ellipsis was given")
        for ch in term.replace("...", ""):
            if not ch.isalpha():
                raise RuntimeError(f"einsum(): invalid subscript given at index "
                                   f"{eq.index(ch)} in the equation string, subscripts must be "
                                   "in [a-zA-Z]")
            letters.add(ch)
        subs.append(term)
    # the ellipsis' dims get private labels (digits never clash with letters)
    ell = [chr(0x2460 + i) for i in range(ell_dims)]
    labels = []
    for term, op in zip(subs, operands):
        if "..." in term:
            head, tail = term.split("...")
            n = op.dim() - len(head) - len(tail)
            labels.append(list(head) + ell[ell_dims - n:] + list(tail))
        else:
            labels.append(list(term))
    if arrow:
        out = list(rhs.replace("...", "".join(ell))) if "..." in rhs else list(rhs)
        for ch in out:
            if ch not in ell and ch not in letters:
                raise RuntimeError(f"einsum(): output subscript {ch} does not appear in the "
                                   "equation for any input operand")
    else:  # implicit: the ellipsis, then the letters seen once, in alphabetical order
        counts = {}
        for lab in labels:
            for ch in lab:
                counts[ch] = counts.get(ch, 0) + 1
        out = ell + sorted(ch for ch in letters if counts[ch] == 1)
    return labels, out


def _diagonalize(t, labels):
    """t with repeated labels reduced to their diagonal (one dim per distinct label)."""
    while len(set(labels)) != len(labels):
        seen = {}
        for i, ch in enumerate(labels):
            if ch in seen:
                j = seen[ch]
                t = _et.diagonal(t, 0, j, i)  # the diagonal goes last
                labels = [c for k, c in enumerate(labels) if k not in (i, j)] + [ch]
                break
            seen[ch] = i
    return t, labels


def einsum(equation, operands):
    """Einstein summation: the product of the operands over the equation's subscripts
    (``'ij,jk->ik'``), summing the labels missing from the output; ``...`` broadcasts; an
    implicit output is the labels seen once, in alphabetical order. Operands are contracted
    left to right, each pair as one batched matrix product (bmm)."""
    if isinstance(operands, _et.Tensor):
        operands = (operands,)
    ops = list(operands)
    if len(ops) == 1 and isinstance(ops[0], (list, tuple)):
        ops = list(ops[0])
    labels, out = _parse(equation, ops)
    items = [_diagonalize(t, lab) for t, lab in zip(ops, labels)]
    t, lab = _sum_unneeded(*items[0], set(out).union(*(lb for _, lb in items[1:])))
    for i in range(1, len(items)):
        later = set(out).union(*(lb for _, lb in items[i + 1:]))
        other, olab = _sum_unneeded(*items[i], later | set(lab))
        t, lab = _contract(t, lab, other, olab, later)
    t, lab = _sum_unneeded(t, lab, set(out))
    if not lab:
        return t.clone() if len(ops) == 1 and t is ops[0] else t
    r = t.permute([lab.index(ch) for ch in out])
    return r.clone() if len(ops) == 1 else r


def _sum_unneeded(t, lab, needed):
    """t summed over its labels that are not needed."""
    drop = [i for i, ch in enumerate(lab) if ch not in needed]
    if not drop:
        return t, lab
    return _et.sum(t, drop), [ch for i, ch in enumerate(lab) if i not in drop]


def _contract(a, la, b, lb, later):
    """a times b, summing their shared labels that ``later`` (the output and the operands
    still to come) does not need: one bmm over (batch: shared and needed, a's own, shared
    and summed) x (batch, summed, b's own); size-1 dims broadcast."""
    batch = [ch for ch in la if ch in lb and ch in later]
    summed = [ch for ch in la if ch in lb and ch not in later]
    own_a = [ch for ch in la if ch not in lb]
    own_b = [ch for ch in lb if ch not in la]
    size = {}
    for t, lab in ((a, la), (b, lb)):
        for ch, n in zip(lab, t.shape):
            if size.get(ch, 1) == 1:
                size[ch] = n
            elif n not in (1, size[ch]):
                raise RuntimeError(f"einsum(): operands do not broadcast: subscript {ch} has "
                                   f"size {size[ch]} and {n}")
    dt = _et.result_type(a, b)
    a, b = a.to(dt), b.to(dt)

    def arrange(t, lab, order):
        t = t.permute([lab.index(ch) for ch in order])
        return t.expand([size[ch] for ch in order])

    def prod(chs):
        p = 1
        for ch in chs:
            p *= size[ch]
        return p

    nb, m, k, n = prod(batch), prod(own_a), prod(summed), prod(own_b)
    am = arrange(a, la, batch + own_a + summed).reshape(nb, m, k)
    bm = arrange(b, lb, batch + summed + own_b).reshape(nb, k, n)
    r = _et.bmm(am, bm).reshape([size[ch] for ch in batch + own_a + own_b])
    return r, batch + own_a + own_b


def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    """The p-norm distances between the rows of x1 (..., P, M) and of x2 (..., R, M): a
    (..., P, R) tensor. For p = 2, PyTorch's matrix-product form sqrt(|a|² + |b|² - 2 a·b)
    (one GEMM; less accurate for nearby points) when compute_mode asks for it, or by default
    when P or R exceeds 25; the differences directly otherwise."""
    if x1.dim() < 2 or x2.dim() < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X1 got: {x1.dim()}D")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: "
                           f"{x1.shape[-1]} X2: {x2.shape[-1]}")
    if p < 0:
        raise RuntimeError(f"cdist only supports non-negative p values, got {p}")
    if compute_mode not in ("use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist",
                            "donot_use_mm_for_euclid_dist"):
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    use_mm = p == 2 and (compute_mode == "use_mm_for_euclid_dist" or (
        compute_mode == "use_mm_for_euclid_dist_if_necessary"
        and (x1.shape[-2] > 25 or x2.shape[-2] > 25)))
    if use_mm:
        return _euclidean_by_matmul(x1, x2)
    diff = _et.sub(x1.unsqueeze(-2), x2.unsqueeze(-3))
    return _et.norm(diff, p, -1)


def _euclidean_by_matmul(x1, x2):
    """PyTorch's _euclidean_dist: [-2 a, |a|², 1] @ [b, 1, |b|²]^T, clamped at 0, square
    root (the same operands in the same order, so the same rounding)."""
    n1 = _et.sum(_et.mul(x1, x1), -1, keepdim=True)
    n2 = _et.sum(_et.mul(x2, x2), -1, keepdim=True)
    a = _et.cat([_et.mul(x1, -2), n1, _et.ones_like(n1)], -1)
    b = _et.cat([x2, _et.ones_like(n2), n2], -1)
    return _et.sqrt(_et.clamp_min(_et.matmul(a, b.mT), 0))
