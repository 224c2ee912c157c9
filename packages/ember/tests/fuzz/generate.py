"""Deterministic call generation: ``make_call(seed, index)`` is a pure function of its inputs
(and of the installed targets), so any call of a run can be replayed alone.

Each call picks a target, a call dtype (mostly one the op declares) and a call shape
(0-4 dims, often all dims equal so that shape rules of matmul, conv and pooling hold), then
one recipe per parameter from the parameter's type and name. Mixed in, at low rates: other
dtypes and shapes, 0-size dims, huge or negative sizes, scalars beyond int64, NaN/inf
values, wrong types, views with stride 0, overlap, transposition, a storage offset or steps,
and ``out=`` tensors that are empty, of the wrong dtype or alias an input.
"""

from __future__ import annotations

import math
import random

import numpy as np

from .recipes import Call, DType, Lit, Ref, Seq, Tensor
from .targets import Param, Target, all_targets

DTYPES = ("bool", "uint8", "int8", "int16", "int32", "int64")
DTYPES += ("float16", "bfloat16", "float32", "float64")
FLOATS = ("float16", "bfloat16", "float32", "float64")
INT_RANGE = {
    "uint8": (0, 255),
    "int8": (-128, 127),
    "int16": (-(2**15), 2**15 - 1),
    "int32": (-(2**31), 2**31 - 1),
    "int64": (-(2**63), 2**63 - 1),
}
FLOAT_MAX = {"float16": 65504.0, "bfloat16": 3.3895e38, "float32": 3.4028e38, "float64": 1.79e308}

#: Sizes and ints at or past the edges. None lies in 2**31..2**39: a tensor of such a size
#: is allocatable and would make the fuzzer slow, not find bugs.
EDGE_INTS = (-1, -2, -(2**63), 2**62, 2**63 - 1, 2**63, 2**64, 10**20, -(10**20), 2**40, 2**50)
EDGE_SCALARS = (
    float("nan"), float("inf"), -float("inf"), -0.0, 1e30, -1e300, 5e-324, 1e-40,
    2**63 - 1, -(2**63), 2**63, 10**20, -(10**20), 255, 256, -129, 65504, 65536.0, True, False,
)  # fmt: skip
SMALL_FLOATS = (-2.0, -1.5, -1.0, -0.5, 0.0, 0.5, 1.0, 2.0, 3.0)
SPECIAL_FLOATS = (float("nan"), float("inf"), -float("inf"), -0.0, 1e4, -3e38, 1e-40, 1e-7)
WRONG = (None, "abc", [1, 2], 1.5, 10**20, -(2**63) - 1, float("nan"), True, (), [[1], [2, 3]])

INDEX_NAMES = {"index", "indices", "target", "idx", "labels"}
MASK_NAMES = {"mask", "condition", "attn_mask"}
DIM_NAMES = {"dim", "dim0", "dim1", "dim2", "axis", "axis0", "axis1", "start_dim", "end_dim"}
DIMLIST_NAMES = {"dims", "dim", "source", "destination"}
SHAPE_NAMES = {"size", "shape", "sizes", "input_size", "weight_size", "output_size", "repeats"}
STRINGS = {
    "rounding_mode": ("trunc", "floor"),
    "reduction": ("mean", "sum", "none"),
    "approximate": ("none", "tanh"),
    "mode": ("reduced", "complete", "r", "nearest", "bilinear", "constant", "reflect"),
    "UPLO": ("L", "U"),
    "ord": ("fro", "nuc"),
    "device_type": ("cpu", "cuda"),
}


def round_to(dtype: str, values: list[float]) -> list[float]:
    """``values`` rounded to the nearest value of ``dtype`` (round half to even), as floats."""
    arr = np.asarray(values, dtype=np.float64)
    if dtype == "float64":
        return arr.tolist()
    if dtype == "float16":
        with np.errstate(over="ignore"):
            return arr.astype(np.float16).astype(np.float64).tolist()
    with np.errstate(over="ignore"):
        f32 = arr.astype(np.float32)
    if dtype == "float32":
        return f32.astype(np.float64).tolist()
    bits = f32.view(np.uint32).astype(np.uint64)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000).astype(np.uint32)
    out = rounded.view(np.float32).astype(np.float64)
    return np.where(np.isnan(arr), np.nan, out).tolist()


class Generator:
    """Recipes for one call; all randomness comes from ``rnd``."""

    def __init__(self, rnd: random.Random, target: Target):
        self.rnd = rnd
        self.target = target
        # the dtypes of these tables: the complex and wide unsigned dtypes (issue 25) are not
        # fuzzed yet
        declared = tuple(d for d in (target.dtypes or DTYPES) if d in DTYPES) or DTYPES
        self.dtype = rnd.choice(declared) if rnd.random() < 0.85 else rnd.choice(DTYPES)
        self.shape = self._shape()
        self.count = 0

    # --- shapes and tensors ------------------------------------------------------------------

    def _shape(self) -> tuple:
        rnd = self.rnd
        ndim = rnd.choices((0, 1, 2, 3, 4), (10, 25, 30, 20, 15))[0]
        if rnd.random() < 0.4:
            return (rnd.choice((1, 2, 3)),) * ndim
        return tuple(rnd.choices((0, 1, 2, 3, 4, 5), (4, 20, 25, 25, 15, 11), k=ndim))

    def _variant_shape(self) -> tuple:
        rnd, shape = self.rnd, self.shape
        roll = rnd.random()
        if roll < 0.62:
            return shape
        if roll < 0.77:  # broadcastable against the call shape
            keep = shape[rnd.randint(0, len(shape)) :] if shape else ()
            return tuple(1 if rnd.random() < 0.3 else d for d in keep)
        if roll < 0.87:
            return self._shape()
        if roll < 0.94:
            return ()
        if shape:
            i = rnd.randrange(len(shape))
            return shape[:i] + (0,) + shape[i + 1 :]
        return (0,)

    def _values(self, dtype: str, n: int, role: str) -> list:
        rnd = self.rnd
        if role == "index":
            hi = max(self.shape + (1,))
            return [rnd.choice((0, 0, 1, 1, 2, hi - 1, -1, hi)) for _ in range(n)]
        if dtype == "bool":
            return [rnd.random() < 0.5 for _ in range(n)]
        if dtype in INT_RANGE:
            lo, hi = INT_RANGE[dtype]
            if rnd.random() < 0.75:
                return [min(max(rnd.randint(-3, 3), lo), hi) if lo else rnd.randint(0, 6)
                        for _ in range(n)]  # fmt: skip
            edges = (lo, hi, 0, 1, lo + 1, hi - 1, -1 if lo else 2)
            return [rnd.choice(edges) for _ in range(n)]
        roll = rnd.random()
        if roll < 0.5:
            vals = [rnd.choice(SMALL_FLOATS) for _ in range(n)]
        elif roll < 0.8:
            vals = [round(rnd.gauss(0.0, 3.0), 3) for _ in range(n)]
        else:
            big = FLOAT_MAX[dtype]
            pool = SMALL_FLOATS + SPECIAL_FLOATS + (big, -big)
            vals = [rnd.choice(pool) for _ in range(n)]
        return round_to(dtype, vals)

    def tensor(self, role: str = "", dtype: str | None = None, shape=None) -> Tensor:
        """A tensor recipe; ``role`` is ``index``/``mask`` or empty."""
        rnd = self.rnd
        if dtype is None:
            if role == "index":
                dtype = "int64" if rnd.random() < 0.85 else rnd.choice(DTYPES)
            elif role == "mask":
                dtype = "bool" if rnd.random() < 0.85 else rnd.choice(DTYPES)
            else:
                dtype = self.dtype if rnd.random() < 0.9 else rnd.choice(DTYPES)
        if shape is None:
            shape = self._variant_shape()
        shape = tuple(shape)
        var = f"a{self.count}"
        self.count += 1
        base, views = self._views(shape)
        n = math.prod(base)
        values = tuple(self._values(dtype, n, role if dtype in INT_RANGE else ""))
        grad = dtype in FLOATS and rnd.random() < 0.05
        return Tensor(var, dtype, base, values, views, grad)

    def _views(self, shape: tuple) -> tuple[tuple, tuple]:
        """(base shape, view ops) that give a tensor of ``shape``."""
        rnd = self.rnd
        if rnd.random() >= 0.3:
            return shape, ()
        nd = len(shape)
        kinds = (
            ["offset", "overlap"] + (["step", "expand"] if nd else []) + (["T"] if nd > 1 else [])
        )
        kind = rnd.choice(kinds)
        if kind == "T":
            a, b = sorted(rnd.sample(range(nd), 2))
            base = list(shape)
            base[a], base[b] = base[b], base[a]
            return tuple(base), (("transpose", a, b),)
        if kind == "step":
            d = rnd.randrange(nd)
            base = shape[:d] + (2 * shape[d],) + shape[d + 1 :]
            key = (slice(None),) * d + (slice(None, None, 2),)
            return base, (("getitem", key),)
        if kind == "expand":
            d = rnd.randrange(nd)
            base = shape[:d] + (1,) + shape[d + 1 :]
            return base, (("expand", shape),)
        n = math.prod(shape)
        if kind == "offset":
            return (n + 1,), (("getitem", (slice(1, None),)), ("reshape", shape))
        # Overlap: every stride 1, so neighbouring rows share all but one element.
        length = 1 + sum(d - 1 for d in shape) if n else 1
        return (length,), (("as_strided", shape, (1,) * nd),)

    # --- parameters --------------------------------------------------------------------------

    def scalar(self):
        rnd = self.rnd
        roll = rnd.random()
        if roll < 0.1:
            return Lit(rnd.choice(EDGE_SCALARS))
        if roll < 0.55:
            return Lit(rnd.randint(-3, 4))
        if roll < 0.65:
            return Lit(rnd.random() < 0.5)
        return Lit(rnd.choice(SMALL_FLOATS + (0.25, 1.5, -2.5)))

    def int_(self, name: str):
        rnd = self.rnd
        if rnd.random() < 0.06:
            return Lit(rnd.choice(EDGE_INTS))
        nd = len(self.shape)
        if name in DIM_NAMES or "dim" in name:
            return Lit(rnd.randint(-nd - 1, nd) if rnd.random() < 0.9 else rnd.randint(-4, 4))
        if name in ("padding", "start", "offset", "diagonal", "index", "ignore_index"):
            return Lit(rnd.randint(-3, 3))
        return Lit(rnd.choices((0, 1, 2, 3, 4, 5), (5, 30, 30, 20, 10, 5))[0])

    def int_list(self, name: str):
        rnd = self.rnd
        nd = len(self.shape)
        if name in DIMLIST_NAMES:
            if rnd.random() < 0.6:
                items = rnd.sample(range(nd), nd if name != "dim" else rnd.randint(0, nd))
            else:
                items = [rnd.randint(-nd - 1, nd) for _ in range(rnd.randint(0, 3))]
        elif name in SHAPE_NAMES:
            roll = rnd.random()
            if roll < 0.5:
                items = list(self.shape)
            elif roll < 0.65 and self.shape:
                items = list(self.shape)
                items[rnd.randrange(nd)] = -1
            else:
                items = list(self._shape())
        else:
            items = [rnd.choice((1, 1, 2, 2, 3)) for _ in range(rnd.choice((1, 2, 2, 2, 3)))]
        if items and rnd.random() < 0.08:
            items[rnd.randrange(len(items))] = rnd.choice(EDGE_INTS)
        return Lit(items)

    def index_key(self):
        """A ``__getitem__`` key: ints, slices, None, Ellipsis, lists, index and mask tensors."""
        rnd = self.rnd
        nd = len(self.shape)
        parts = []
        for _ in range(rnd.choice((1, 1, 2, 3))):
            kind = rnd.choices(("int", "slice", "none", "ell", "list", "tensor", "mask"),
                               (30, 30, 8, 6, 8, 12, 6))[0]  # fmt: skip
            if kind == "int":
                parts.append(Lit(rnd.randint(-3, 3)))
            elif kind == "slice":
                start = rnd.choice((None, None, 0, 1, -1, -5, 5))
                stop = rnd.choice((None, None, 1, 2, -1, 10**20))
                step = rnd.choice((None, None, 1, 2, 3, 0, -1))
                parts.append(Lit(slice(start, stop, step)))
            elif kind == "none":
                parts.append(Lit(None))
            elif kind == "ell":
                parts.append(Lit(Ellipsis))
            elif kind == "list":
                parts.append(Lit([rnd.randint(-2, 2) for _ in range(rnd.randint(0, 3))]))
            elif kind == "tensor":
                parts.append(self.tensor("index", shape=(rnd.randint(0, 3),)))
            else:
                parts.append(self.tensor("mask", shape=self.shape[: rnd.randint(0, nd)]))
        if len(parts) == 1 and rnd.random() < 0.7:
            return parts[0]
        return Seq(tuple(parts), is_tuple=True)

    def data(self):
        """Nested lists of numbers for ``tensor``/``as_tensor``/``new_tensor``."""
        rnd = self.rnd
        if rnd.random() < 0.1:
            return Lit(rnd.choice(WRONG + ([1, [2]], [True, 2.5], [2**63])))
        t = self.tensor()
        arr = np.asarray(t.values, dtype=object).reshape(t.base_shape) if t.values else []
        return Lit(arr.tolist() if hasattr(arr, "tolist") else arr)

    def wrong(self, param: Param):
        rnd = self.rnd
        if rnd.random() < 0.2 and "Tensor" not in param.type:
            return self.tensor()
        return Lit(rnd.choice(WRONG))

    def value(self, param: Param):
        """A recipe for ``param``."""
        rnd = self.rnd
        typ = param.type
        optional = typ.endswith("?")
        base = typ.rstrip("?")
        if optional and rnd.random() < 0.25:
            return Lit(None)
        if rnd.random() < 0.05:
            return self.wrong(param)
        name = param.name
        role = "index" if name in INDEX_NAMES else "mask" if name in MASK_NAMES else ""
        if base == "Tensor":
            return self.tensor(role)
        if base == "Tensor|Scalar":
            return self.tensor(role) if rnd.random() < 0.7 else self.scalar()
        if base == "Scalar":
            return self.scalar()
        if base == "int":
            return self.int_(name)
        if base == "int[]":
            return self.int_list(name)
        if base == "bool":
            return Lit(rnd.random() < 0.5)
        if base == "float":
            return Lit(rnd.choice((0.0, 0.1, 0.5, 1.0, 1e-5, -1.0, 2.0, 1)))
        if base == "str":
            return Lit(rnd.choice(STRINGS.get(name, ()) + ("bogus",)))
        if base == "ScalarType":
            return DType(rnd.choice(DTYPES)) if rnd.random() < 0.95 else Lit("float32")
        if base == "Device":
            return Lit(rnd.choice(("cpu", "cpu", "cpu", "cuda")))
        if base == "Generator":
            return Lit(None)  # generators' streams differ by design; random ops compare shapes
        if base == "Tensor[]":
            return Seq(tuple(self.tensor() for _ in range(rnd.randint(0, 3))))
        if base == "Tensor?[]":
            items = (self.tensor("index") if rnd.random() < 0.8 else Lit(None)
                     for _ in range(rnd.randint(0, 3)))  # fmt: skip
            return Seq(tuple(items))
        if base == "index":
            return self.index_key()
        if base == "data":
            return self.data()
        # Unknown type: mostly tensors, which most public callables take.
        roll = rnd.random()
        if roll < 0.6:
            return self.tensor(role)
        if roll < 0.8:
            return self.int_(name)
        return Lit(rnd.choice(WRONG))

    def out_tensor(self, first: Tensor | None):
        rnd = self.rnd
        roll = rnd.random()
        if first is not None and roll < 0.3:
            return Ref(first.var)
        if roll < 0.6:
            return self.tensor(dtype=self.dtype, shape=(0,))
        if roll < 0.9:
            return self.tensor(dtype=self.dtype, shape=self.shape)
        return self.tensor(shape=self.shape)


def make_call(seed: int, index: int) -> Call:
    """Call ``index`` of the run with ``seed``."""
    rnd = random.Random(f"{seed}:{index}")
    targets = all_targets()
    target = targets[rnd.randrange(len(targets))]
    gen = Generator(rnd, target)
    args: list = []
    kwargs: list = []
    positional = True
    first_tensor = None
    # The first parameter always goes by position: the schema names it ``self`` where
    # PyTorch's Python functions name it ``input`` (a known difference, reported once rather
    # than in every call). pybind11 operators and ``argN`` parameters take no keywords.
    no_kw = target.ember.startswith("Tensor.__")
    for i, param in enumerate(target.params):
        if param.name == "out" and target.style == "out":
            kwargs.append(("out", gen.out_tensor(first_tensor)))
            continue
        if param.type == "*int":
            if positional:
                size = gen.int_list("size").value
                args.extend(Lit(v) for v in size)
            continue
        receiver = i == 0 and target.style == "method"
        no_kw = no_kw or param.name.startswith("arg")
        if not receiver and not param.required and rnd.random() < 0.5:
            positional = False
            continue
        recipe = gen.value(param) if not receiver else gen.tensor()
        if first_tensor is None and isinstance(recipe, Tensor):
            first_tensor = recipe
        if receiver or (
            positional and not param.kwonly and (i == 0 or no_kw or rnd.random() < 0.8)
        ):
            args.append(recipe)
        else:
            positional = False
            kwargs.append((param.name, recipe))
    return Call(index, target, tuple(args), tuple(kwargs))
