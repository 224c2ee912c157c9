"""Tensor printing for Ember.

``tensor_repr`` renders a tensor exactly the way PyTorch renders ``repr()`` of a
tensor with the same values, dtype and shape (with ``ember.`` in place of
``torch.`` in dtype names).  ``set_printoptions`` / ``get_printoptions`` follow
PyTorch's semantics (profiles ``"default"``, ``"short"`` and ``"full"``).

All formatting is done from a NumPy array holding the tensor's values; the
tensor itself is only asked for its metadata (shape, dtype, device, autograd
state) and for that array.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator
from typing import Any

__all__ = ["get_printoptions", "printoptions", "set_printoptions", "tensor_repr"]

_PREFIX = "tensor("
# Dtypes that are not spelled out in the repr of a non-empty tensor.
_IMPLICIT_DTYPES = frozenset({"float32", "complex64", "int64", "bool"})
# The default floating dtype: the only one left implicit for empty tensors.
_DEFAULT_FLOAT = "float32"

_PROFILES: dict[str, dict[str, Any]] = {
    "default": {"precision": 4, "threshold": 1000, "edgeitems": 3, "linewidth": 80},
    "short": {"precision": 2, "threshold": 1000, "edgeitems": 2, "linewidth": 80},
    "full": {"precision": 4, "threshold": math.inf, "edgeitems": 3, "linewidth": 80},
}


# Same key order as PyTorch's get_printoptions().
_FIELDS = ("precision", "threshold", "edgeitems", "linewidth", "sci_mode")


class _Options:
    __slots__ = _FIELDS

    def __init__(self) -> None:
        self.precision: int = 4
        self.threshold: float = 1000
        self.edgeitems: int = 3
        self.linewidth: int = 80
        self.sci_mode: bool | None = None

    def as_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in _FIELDS}


_OPTS = _Options()


def set_printoptions(
    precision: int | None = None,
    threshold: float | None = None,
    edgeitems: int | None = None,
    linewidth: int | None = None,
    profile: str | None = None,
    sci_mode: bool | None = None,
) -> None:
    """Set options for printing tensors (PyTorch semantics).

    Args:
        precision: digits after the decimal point for floating point values (default 4).
        threshold: total number of elements above which the repr is summarised (default 1000).
        edgeitems: items kept at the start and end of each summarised dimension (default 3).
        linewidth: characters per line used for wrapping (default 80).
        profile: ``"default"``, ``"short"`` or ``"full"``; applied first, so explicit
            arguments override it.  Unknown names are ignored.
        sci_mode: ``True`` / ``False`` force scientific / fixed notation; ``None``
            (also the value when the argument is omitted) picks automatically.
    """
    if profile is not None and profile in _PROFILES:
        for name, value in _PROFILES[profile].items():
            setattr(_OPTS, name, value)
    if precision is not None:
        _OPTS.precision = precision
    if threshold is not None:
        _OPTS.threshold = threshold
    if edgeitems is not None:
        _OPTS.edgeitems = edgeitems
    if linewidth is not None:
        _OPTS.linewidth = linewidth
    _OPTS.sci_mode = sci_mode


def get_printoptions() -> dict[str, Any]:
    """Return the current print options as a dict (keys as in ``set_printoptions``)."""
    return _OPTS.as_dict()


@contextlib.contextmanager
def printoptions(**kwargs: Any) -> Iterator[None]:
    """Context manager temporarily changing the print options."""
    saved = _OPTS.as_dict()
    set_printoptions(**kwargs)
    try:
        yield
    finally:
        for name, value in saved.items():
            setattr(_OPTS, name, value)


# --------------------------------------------------------------------------------------
# Value extraction
# --------------------------------------------------------------------------------------


def _dtype_name(t: Any) -> str:
    return str(t.dtype).rsplit(".", 1)[-1]


def _values(t: Any) -> Any:
    """The tensor's values as a NumPy array (bfloat16 is widened to float32)."""
    import numpy as np

    src = t
    if str(src.device) != "cpu" and hasattr(src, "cpu"):
        src = src.cpu()
    if _dtype_name(src) == "bfloat16":
        src = src.float()
    try:
        arr = src.numpy()
    except RuntimeError:
        # e.g. a core that refuses .numpy() on tensors requiring grad
        if not hasattr(src, "detach"):
            raise
        arr = src.detach().numpy()
    return np.asarray(arr).reshape(tuple(t.shape))


def _summarized(arr: Any, edgeitems: int) -> Any:
    """The elements that remain visible once ``arr`` is summarised."""
    import numpy as np

    if arr.ndim == 0:
        return arr
    if arr.ndim == 1:
        if arr.shape[0] > 2 * edgeitems:
            # Note: with edgeitems == 0 the tail slice ``arr[-0:]`` is the whole
            # array, which is what PyTorch does as well.
            return np.concatenate((arr[:edgeitems], arr[-edgeitems:]))
        return arr
    if not edgeitems:
        return arr.reshape(-1)[:0]
    n = arr.shape[0]
    rows = range(n)
    if n > 2 * edgeitems:
        rows = list(range(edgeitems)) + list(range(n - edgeitems, n))
    return np.concatenate([_summarized(arr[i], edgeitems).reshape(-1) for i in rows])


# --------------------------------------------------------------------------------------
# Element formatting
# --------------------------------------------------------------------------------------


class _Formatter:
    """Decides notation and column width from the values that will be shown."""

    def __init__(self, shown: Any, floating: bool) -> None:
        import numpy as np

        self.floating = floating
        self.int_mode = True
        self.sci_mode = False
        self.width = 1
        prec = _OPTS.precision
        flat = shown.reshape(-1)
        if not floating:
            for v in flat.tolist():
                self.width = max(self.width, len(str(v)))
        else:
            finite = flat[np.isfinite(flat) & (flat != 0)]
            # Without any nonzero finite value everything prints in integer style
            # ("0.", "nan", "inf"), whatever sci_mode says.
            if finite.size:
                self._measure_floats(finite, prec)

    def _measure_floats(self, finite: Any, prec: int) -> None:
        import numpy as np

        mags = np.abs(finite.astype(np.float64))
        lo = float(mags.min())
        hi = float(mags.max())
        values = finite.tolist()
        self.int_mode = bool(np.all(finite == np.ceil(finite)))
        spread = hi / lo > 1000.0 or hi > 1.0e8
        if _OPTS.sci_mode is not None:
            self.sci_mode = bool(_OPTS.sci_mode)
        elif self.int_mode:
            self.sci_mode = spread
        else:
            self.sci_mode = spread or lo < 1.0e-4
        if self.sci_mode:
            lengths = [len(f"{v:.{prec}e}") for v in values]
        elif self.int_mode:
            lengths = [len(f"{v:.0f}") + 1 for v in values]
        else:
            lengths = [len(f"{v:.{prec}f}") for v in values]
        self.width = max(self.width, *lengths)

    def __call__(self, value: Any) -> str:
        if not self.floating:
            text = str(value)
        elif self.sci_mode:
            text = f"{value:{self.width}.{_OPTS.precision}e}"
        elif self.int_mode:
            text = f"{value:.0f}"
            if math.isfinite(value):
                text += "."
        else:
            text = f"{value:.{_OPTS.precision}f}"
        return text.rjust(self.width)


class _ComplexFormatter:
    """A complex value as PyTorch writes it: the real part in the real parts' format, the
    imaginary part in the imaginary parts' format, then ``j`` (``1.5000-2.0000j``)."""

    def __init__(self, shown: Any) -> None:
        self.real = _Formatter(shown.real, True)
        self.imag = _Formatter(shown.imag, True)
        # the width PyTorch lays rows out by: both parts and the "j"
        self.width = self.real.width + self.imag.width + 1

    def __call__(self, value: complex) -> str:
        imag = (self.imag(value.imag) + "j").lstrip()
        return self.real(value.real) + (imag if imag[0] in "+-" else "+" + imag)


# --------------------------------------------------------------------------------------
# Layout
# --------------------------------------------------------------------------------------


def _row(arr: Any, indent: int, summarize: bool, fmt: Any) -> str:
    edge = _OPTS.edgeitems
    per_line = max(1, math.floor((_OPTS.linewidth - indent) / (fmt.width + 2)))
    if summarize and not edge:
        items = ["..."]
    elif summarize and arr.shape[0] > 2 * edge:
        items = [fmt(v) for v in arr[:edge].tolist()]
        items.append(" ...")
        items += [fmt(v) for v in arr[-edge:].tolist()]
    else:
        items = [fmt(v) for v in arr.tolist()]
    lines = [", ".join(items[i : i + per_line]) for i in range(0, len(items), per_line)]
    return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"


def _block(arr: Any, indent: int, summarize: bool, fmt: Any) -> str:
    if arr.ndim == 0:
        return fmt(arr.item())
    if arr.ndim == 1:
        return _row(arr, indent, summarize, fmt)
    edge = _OPTS.edgeitems
    n = arr.shape[0]
    if summarize and n > 2 * edge:
        parts = [_block(arr[i], indent + 1, summarize, fmt) for i in range(edge)]
        parts.append("...")
        parts += [_block(arr[i], indent + 1, summarize, fmt) for i in range(n - edge, n)]
    else:
        parts = [_block(arr[i], indent + 1, summarize, fmt) for i in range(n)]
    sep = "," + "\n" * (arr.ndim - 1) + " " * (indent + 1)
    return "[" + sep.join(parts) + "]"


def _contents(t: Any, indent: int) -> str:
    arr = _values(t)
    summarize = arr.size > _OPTS.threshold
    shown = _summarized(arr, _OPTS.edgeitems) if summarize else arr
    fmt: Any
    if getattr(t.dtype, "is_complex", False):
        fmt = _ComplexFormatter(shown)
    else:
        fmt = _Formatter(shown, bool(t.dtype.is_floating_point))
    return _block(arr, indent, summarize, fmt)


def _join_suffixes(body: str, suffixes: list[str], indent: int) -> str:
    out = [body]
    # Same (slightly generous) measure of the last line that PyTorch uses.
    line_len = len(body) - body.rfind("\n") + 1
    for suffix in suffixes:
        if line_len + len(suffix) + 2 > _OPTS.linewidth:
            out.append(",\n" + " " * indent + suffix)
            line_len = indent + len(suffix)
        else:
            out.append(", " + suffix)
            line_len += len(suffix) + 2
    out.append(")")
    return "".join(out)


def tensor_repr(t: Any) -> str:
    """``repr()`` of an Ember tensor, matching PyTorch's output."""
    indent = len(_PREFIX)
    suffixes: list[str] = []
    device = str(t.device)
    if device != "cpu":
        suffixes.append(f"device='{device}'")

    name = _dtype_name(t)
    if t.numel() == 0:
        if t.dim() != 1:
            suffixes.append("size=" + str(tuple(int(s) for s in t.shape)))
        if name != _DEFAULT_FLOAT:
            suffixes.append("dtype=" + str(t.dtype))
        body = "[]"
    else:
        if not _OPTS.edgeitems:
            # With edgeitems == 0 the values may all be elided, so the shape is
            # always spelled out.
            suffixes.append("size=" + str(tuple(int(s) for s in t.shape)))
        if name not in _IMPLICIT_DTYPES:
            suffixes.append("dtype=" + str(t.dtype))
        body = _contents(t, indent)

    grad_fn = getattr(t, "grad_fn", None)
    if grad_fn is not None:
        suffixes.append(f"grad_fn=<{type(grad_fn).__name__}>")
    elif getattr(t, "requires_grad", False):
        suffixes.append("requires_grad=True")
    return _join_suffixes(_PREFIX + body, suffixes, indent)
