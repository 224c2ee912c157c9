"""ember_tensor: Ember's n-dimensional tensor library (CPU), usable on its own like NumPy.

The names follow PyTorch: ``ember_tensor.tensor``, ``zeros``, ``float32``, ``Tensor``...
This module is the only importer of the compiled extension ``ember_tensor._C``.
"""

from __future__ import annotations

import builtins as _builtins
import ctypes as _ctypes
import os as _os


def _preload_blas() -> None:
    # The extension links libscipy_openblas.so; loading it first by path lets the dynamic
    # loader resolve it wherever pip put the wheel.
    # find_spec, not import: importing scipy_openblas32 costs more than the whole core
    import importlib.util

    spec = importlib.util.find_spec("scipy_openblas32")
    if spec is None or not spec.submodule_search_locations:
        return
    path = _os.path.join(spec.submodule_search_locations[0], "lib", "libscipy_openblas.so")
    if not _os.path.exists(path):
        return
    # OpenBLAS reads its settings once, when loaded. Its threads spin for 2**28 cycles
    # (~0.1 s) after each product before they sleep, keeping a core busy long after; 2**24
    # (~6 ms) is enough. Shorter is worse: at 2**18-2**20, waking the sleeping threads cost
    # up to 14 ms a product on the development machine (a 512x512 product takes 2.7 ms).
    # A value the user set is kept, and the process environment is left as it was.
    key = "OPENBLAS_THREAD_TIMEOUT"
    added = key not in _os.environ
    if added:
        _os.environ[key] = "24"
    try:
        _ctypes.CDLL(path, mode=_ctypes.RTLD_GLOBAL)
    finally:
        if added:
            del _os.environ[key]


_preload_blas()

try:
    from . import _C
except ImportError as e:  # pragma: no cover - depends on the installation
    raise ImportError(
        f"ember_tensor: the compiled core could not be loaded ({e}). Reinstall with "
        "`pip install ./packages/tensor-core` (needs a C++17 compiler)."
    ) from e

from . import _printing  # noqa: E402  (the BLAS preload must run first)
from ._C import Generator, Tensor, device, dtype  # noqa: E402
from ._printing import get_printoptions, set_printoptions  # noqa: E402

# The autograd provider's interface to the core (DESIGN §3: one hook, no derivatives here);
# other packages use these names, never _C itself. See docs/tensor-core.md.
_set_autograd_hook = _C._set_autograd_hook
_get_autograd_hook = _C._get_autograd_hook
_set_autograd_hook_enabled = _C._set_autograd_hook_enabled
_force_autograd_hook = _C._force_autograd_hook
_set_autograd_loader = _C._set_autograd_loader


# ember.multiprocessing's CUDA sharing (ember_mp._cuda, docs/multiprocessing.md); both raise
# RuntimeError without CUDA.
def _cuda_ipc_export(tensor):
    """(device, mem_handle, segment_size, offset, nbytes, event, event_handle) of a CUDA
    tensor's storage: the 64-byte IPC handle of the caching allocator's segment that holds
    it, the storage's byte offset there and its size, and an interprocess
    ``ember_tensor.cuda.Event`` recorded on the current stream after the work queued so far,
    with its 64-byte handle. Keep the tensor (and the event) alive while receivers use it."""
    device, mem_handle, segment_size, offset, nbytes, event, event_handle = \
        _C._cuda_ipc_export(tensor)
    from .cuda.streams import Event

    owned = Event(interprocess=True)  # destroys the event when dropped
    owned._handle, owned._device_index = _builtins.int(event), _builtins.int(device)
    return device, mem_handle, segment_size, offset, nbytes, owned, event_handle


def _cuda_ipc_import(device, mem_handle, segment_size, offset, nbytes, event_handle=None):
    """A uint8 CUDA tensor over ``nbytes`` at ``offset`` of a segment another process
    exported (``_cuda_ipc_export``); the current stream first waits on its event. The segment
    is mapped once per process and unmapped with the last tensor over it."""
    return _C._cuda_ipc_import(device, mem_handle, segment_size, offset, nbytes, event_handle)


__version__ = "0.1.0"


class Size(tuple):
    """The shape of a tensor: a tuple of ints, printed as ``ember.Size([2, 3])``."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"ember.Size({list(self)})"

    def numel(self) -> int:
        n = 1
        for s in self:
            n *= s
        return n


_C._set_size_type(Size)


def _dtype_by_name(name: str) -> dtype:
    return getattr(_C, name)


def is_tensor(obj) -> bool:
    """True if obj is an ember tensor."""
    return isinstance(obj, Tensor)


def _tensor_arg(op: str, input) -> Tensor:
    if not isinstance(input, Tensor):
        raise TypeError(
            f"{op}(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}"
        )
    return input


def is_complex(input: Tensor) -> bool:
    """True if input's dtype is complex (complex64 or complex128)."""
    return _tensor_arg("is_complex", input).dtype.is_complex


def is_floating_point(input: Tensor) -> bool:
    """True if input's dtype is a real floating dtype."""
    return _tensor_arg("is_floating_point", input).dtype.is_floating_point


def is_conj(input: Tensor) -> bool:
    """Always False: Ember computes conjugates eagerly (no lazy conjugate bit)."""
    _tensor_arg("is_conj", input)
    return False


def resolve_conj(input: Tensor) -> Tensor:
    """input itself: no Ember tensor carries a lazy conjugate bit to resolve."""
    return _tensor_arg("resolve_conj", input)


def numel(input: Tensor) -> int:
    return input.numel()


def nonzero(input: Tensor, *, as_tuple: bool = False):
    """Indices of nonzero elements: an (n, ndim) int64 tensor, or one 1-d tensor per dim."""
    idx = _C.nonzero(input)
    if not as_tuple:
        return idx
    if input.dim() == 0:  # one index tensor holding 0 for each nonzero (at most one)
        return (_C.zeros(idx.shape[0], dtype=_C.int64),)
    return tuple(idx.t().unbind(0))


def isclose(input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08,
            equal_nan: bool = False) -> Tensor:
    """Elementwise ``|input - other| <= atol + rtol * |other|`` (bool, broadcast); infinities
    are close only to themselves, NaN only to NaN with ``equal_nan``. RuntimeError if the
    dtypes differ, as in PyTorch."""
    if not isinstance(input, Tensor) or not isinstance(other, Tensor):
        raise TypeError(
            f"isclose(): argument 'input' and 'other' must be Tensors, got "
            f"{type(input).__name__} and {type(other).__name__}"
        )
    if equal_nan is not True and equal_nan is not False:  # (bool is the dtype in this module)
        raise TypeError(f"isclose(): argument 'equal_nan' must be bool, not "
                        f"{type(equal_nan).__name__}")
    if input.dtype != other.dtype:
        names = {"float32": "Float", "float64": "Double", "float16": "Half", "int64": "Long",
                 "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte",
                 "complex64": "ComplexFloat", "complex128": "ComplexDouble"}
        a, b = (str(t.dtype).rsplit(".", 1)[-1] for t in (input, other))
        raise RuntimeError(
            f"isclose: {names.get(a, a.capitalize())} did not match {names.get(b, b.capitalize())}"
        )
    for name, tol in (("rtol", rtol), ("atol", atol)):
        if not tol >= 0:  # NaN too
            raise RuntimeError(f"{name} must be greater than or equal to zero, but got {tol}")
    # floats, as PyTorch's parser reads them (2**70 too; float is the dtype in this module)
    rtol, atol = _builtins.float(rtol), _builtins.float(atol)
    exact = _C.eq(input, other)  # bools too are compared by value (True - False is 1)
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        input, other = input.to(_C.float64), other.to(_C.float64)
    diff = (input - other).abs()  # complex: the modulus of the difference
    close = _C.logical_or(exact, _C.logical_and(_C.isfinite(diff),
                                                diff <= atol + rtol * other.abs()))
    if equal_nan:
        close = _C.logical_or(close, _C.logical_and(_C.isnan(input), _C.isnan(other)))
    return close


def allclose(input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08,
             equal_nan: bool = False) -> bool:
    """Whether ``isclose`` holds for every element (a Python bool)."""
    return _builtins.bool(isclose(input, other, rtol, atol, equal_nan).all())


def broadcast_shapes(*shapes) -> Size:
    """The shape that tensors of the given shapes broadcast to; RuntimeError if none."""
    out: list[int] = []
    for shape in shapes:
        shape = (shape,) if isinstance(shape, _builtins.int) else tuple(shape)
        if _builtins.any(s < 0 for s in shape):
            raise ValueError("Attempting to broadcast a dimension with negative length!")
        if len(shape) > len(out):
            out = [1] * (len(shape) - len(out)) + out
        for i, s in enumerate(shape):
            j = len(out) - len(shape) + i
            if out[j] == 1:
                out[j] = s
            elif s not in (1, out[j]):
                raise RuntimeError(
                    f"broadcast_shapes: shape mismatch: objects cannot be broadcast to a single "
                    f"shape (size {s} vs {out[j]} at dimension {j})"
                )
    return Size(out)


def as_tensor(data, dtype=None, device=None) -> Tensor:
    """data as a tensor; shares memory when data is a tensor or NumPy array of that dtype."""
    if isinstance(data, Tensor):
        return data if dtype is None else data.to(dtype)
    try:
        import numpy as np
    except ImportError:  # pragma: no cover
        np = None
    if np is not None and isinstance(data, np.ndarray):
        try:
            t = _C.from_numpy(data)
        except (TypeError, ValueError):
            return _C.tensor(data, dtype=dtype, device=device)
        return t if dtype is None else t.to(dtype)
    return _C.tensor(data, dtype=dtype, device=device)


# ---- Tensor members that are plain Python (not on any hot path) ----

def _iter(self):
    if self.dim() == 0:
        raise TypeError("iteration over a 0-d tensor")
    return iter(self.unbind(0))


def _array(self, dtype=None, copy=None):
    import numpy as np

    arr = self.detach().numpy() if self.dtype != _C.bfloat16 else self.detach().float().numpy()
    if dtype is not None and arr.dtype != np.dtype(dtype):
        return arr.astype(dtype)
    if copy:
        return arr.copy()
    return arr


def _refuse_non_leaf(self):
    if self.requires_grad and getattr(self, "grad_fn", None) is not None:
        raise RuntimeError(
            "Cowardly refusing to serialize non-leaf tensor which requires_grad, since autograd "
            "does not support crossing process boundaries.  If you just want to transfer the "
            "data, call detach() on the tensor before serializing (e.g., putting it on the queue).")


def _reduce_ex(self, protocol):
    import numpy as np

    _refuse_non_leaf(self)
    values = np.array(_array(self), order="C", copy=True)  # ascontiguousarray makes 0-d 1-d
    dtype_name = str(self.dtype).split(".")[1]
    return (_rebuild_tensor, (values, dtype_name, self.requires_grad))


def _rebuild_tensor(values, dtype_name, requires_grad):
    t = _C.tensor(values, dtype=_dtype_by_name(dtype_name))
    if requires_grad:
        t.requires_grad_()
    return t


_memory_sharer = None


def _set_memory_sharer(sharer) -> None:
    """Installs ``sharer(tensor)``, which moves a tensor's storage into memory shared between
    processes and sets its ``_storage_record``: the multiprocessing provider's hook (the core
    itself knows nothing of segments and strategies)."""
    global _memory_sharer
    _memory_sharer = sharer


def _share_memory_(self):
    """Moves the storage into shared memory (no-op when it is there already); returns self.
    Every view of the storage follows. Needs a multiprocessing provider (ember-mp)."""
    if self._storage_record is None:
        if _memory_sharer is None:
            raise RuntimeError("share_memory_: no memory sharer is installed; import "
                               "ember.multiprocessing (or ember_mp, from the ember-mp package)")
        _memory_sharer(self)
    return self


def _is_shared(self) -> bool:
    """Whether the storage lives in memory shared between processes (always for CUDA
    tensors: they are sent as CUDA IPC handles, as in PyTorch)."""
    return self.is_cuda or self._storage_record is not None


def _format(self, spec):
    if self.dim() == 0:
        return self.item().__format__(spec)
    return object.__format__(self, spec)


def _new_factory(fn):
    def method(self, *size, dtype=None, device=None, requires_grad=False, **kw):
        return fn(*size, dtype=self.dtype if dtype is None else dtype,
                  device=self.device if device is None else device,
                  requires_grad=requires_grad, **kw)

    method.__name__ = "new_" + fn.__name__
    return method


def _new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad=False):
    return _C.full(size, fill_value, dtype=self.dtype if dtype is None else dtype,
                   device=self.device if device is None else device, requires_grad=requires_grad)


def _new_tensor(self, data, *, dtype=None, device=None, requires_grad=False):
    return _C.tensor(data, dtype=self.dtype if dtype is None else dtype, device=device,
                     requires_grad=requires_grad)


def _type_as(self, other):
    return self.to(other.dtype)


def _view_as(self, other):
    return self.view(other.shape)


def _reshape_as(self, other):
    return self.reshape(other.shape)


def _nonzero_method(self, *, as_tuple=False):
    return nonzero(self, as_tuple=as_tuple)


def _repr(self):
    return _printing.tensor_repr(self)


def _polygamma(self, n):
    """Tensor.polygamma(n): polygamma(n, self)."""
    return _C.polygamma(_order("polygamma", n), self)


def _polygamma_(self, n):
    """Tensor.polygamma_(n): self := polygamma(n, self)."""
    return _C.polygamma(_order("polygamma_", n), self, out=self)


def _order(name, n):
    if isinstance(n, (_builtins.bool, _C.Tensor)) or not hasattr(type(n), "__index__"):
        raise TypeError(f"{name}(): argument 'n' must be int, not {type(n).__name__}")
    return n


for _name, _fn in {
    "__iter__": _iter,
    "__array__": _array,
    "__reduce_ex__": _reduce_ex,
    "__format__": _format,
    "share_memory_": _share_memory_,
    "is_shared": _is_shared,
    "__repr__": _repr,
    "__str__": _repr,
    "new_zeros": _new_factory(_C.zeros),
    "new_ones": _new_factory(_C.ones),
    "new_empty": _new_factory(_C.empty),
    "new_full": _new_full,
    "new_tensor": _new_tensor,
    "type_as": _type_as,
    "view_as": _view_as,
    "reshape_as": _reshape_as,
    "nonzero": _nonzero_method,
    "polygamma": _polygamma,
    "polygamma_": _polygamma_,
    "is_floating_point": lambda self: self.dtype.is_floating_point,
    "is_signed": lambda self: self.dtype.is_signed,
    "is_complex": lambda self: self.dtype.is_complex,
    "__complex__": lambda self: _builtins.complex(self.item()),  # one element, as float(x)
    # Ember computes conjugates eagerly (conj() of a complex tensor is a new tensor): no
    # tensor carries PyTorch's lazy conjugate or negative bits
    "is_conj": lambda self: False,
    "is_neg": lambda self: False,
    "resolve_conj": lambda self: self,
    "resolve_neg": lambda self: self,
}.items():
    setattr(Tensor, _name, _fn)


def _set_part(part):
    def setter(self, value):
        getattr(_C, part)(self).copy_(value)

    return setter


Tensor.real = property(_C.real, _set_part("real"),
                       doc="The real parts (a view; self for real tensors).")
Tensor.imag = property(_C.imag, _set_part("imag"),
                       doc="The imaginary parts of a complex tensor (a view).")
Tensor.__array_priority__ = 1000  # NumPy defers binary operators to Tensor
Tensor.T = property(lambda self: self.permute(*reversed(range(self.dim()))))


def _conjugate_transpose(self, name: str, matrices_only: bool = False):
    """The conjugate transpose of the last two dimensions (the transpose of a real tensor,
    a view; the conjugate of a complex one is a new tensor, as Ember's conj is eager). As
    PyTorch: 0-d tensors give their conjugate with a deprecation warning, 1-d tensors (and
    for ``H`` anything but matrices) a RuntimeError."""
    if self.dim() == 0:
        import warnings

        warnings.warn(f"{name} is deprecated on 0-D tensors. Consider using x.conj().",
                      UserWarning, stacklevel=3)
        return self.conj()
    if matrices_only and self.dim() != 2:
        hint = " For batches of matrices, consider using tensor.mH" if self.dim() > 2 else ""
        raise RuntimeError(
            f"tensor.H is only supported on matrices (2-D tensors). Got {self.dim()}-D tensor."
            + hint
        )
    if self.dim() < 2:
        raise RuntimeError(
            f"tensor.{name.removeprefix('Tensor.')} is only supported on matrices or batches "
            f"of matrices. Got {self.dim()}-D tensor."
        )
    return self.transpose(-2, -1).conj()


def _adjoint(self):
    """The conjugate transpose of the last two dimensions (``mH``)."""
    return _conjugate_transpose(self, "adjoint()")


Tensor.adjoint = _adjoint
Tensor.mH = property(lambda self: _conjugate_transpose(self, "Tensor.mH"),
                     doc=_conjugate_transpose.__doc__)
Tensor.H = property(lambda self: _conjugate_transpose(self, "Tensor.H", matrices_only=True),
                    doc="The conjugate transpose of a matrix (2-D tensors only).")


# The array API members of Tensor; the namespace itself (ember_tensor.array_api) is imported
# on first use, so that `import ember_tensor` stays fast.
def _array_namespace(self, /, *, api_version=None):
    from .array_api._creation import _tensor_array_namespace

    return _tensor_array_namespace(self, api_version=api_version)


def _to_device(self, device, /, *, stream=None):
    from .array_api._creation import _tensor_to_device

    return _tensor_to_device(self, device, stream=stream)


def _mT(self):
    from .array_api._creation import _tensor_mT

    return _tensor_mT(self)


Tensor.__array_namespace__ = _array_namespace
Tensor.to_device = _to_device
Tensor.mT = property(_mT, doc="The transpose of the last two dimensions (a view).")
Tensor.__module__ = "ember_tensor"


# Tensor(...) (PyTorch's legacy constructor), Python subclasses, FloatTensor & co
from . import _legacy  # noqa: E402
from ._legacy import *  # noqa: E402, F403

_legacy.install(Tensor)


from . import _torch_overloads  # noqa: E402
from ._torch_overloads import fill, norm, resolve_neg, scatter, zero_  # noqa: E402
from ._type_info import finfo, iinfo  # noqa: E402

_torch_overloads.install(Tensor)

# ---- the public namespace: every op of ops.yaml plus the hand-written ones ----

# OutOfMemoryError lives in ember_tensor.cuda, LinAlgError in ember_tensor.linalg
_PRIVATE = {"Tensor", "dtype", "device", "Generator", "LinAlgError", "OutOfMemoryError"}
__all__ = ["Tensor", "dtype", "device", "Generator", "Size", "is_tensor", "numel", "nonzero",
           "as_tensor", "broadcast_shapes", "isclose", "allclose", "set_printoptions",
           "get_printoptions", "is_complex", "is_floating_point", "is_conj", "resolve_conj",
           "fill", "norm", "resolve_neg", "scatter", "zero_", "finfo", "iinfo",
           *_legacy.__all__]
for _name in dir(_C):
    if _name.startswith(("_fused_", "_lstm_", "_gru_", "_softmax_back", "_log_softmax_back",
                         "_fft_")):
        # kernels for other packages (PyTorch's names where it has them): not in __all__
        globals()[_name] = getattr(_C, _name)
        continue
    if _name.startswith(("_", "linalg_")) or _name in _PRIVATE or _name in globals():
        continue  # the linalg_* ops and LinAlgError live in ember_tensor.linalg
    globals()[_name] = getattr(_C, _name)
    __all__.append(_name)

# PyTorch's dtype aliases (they shadow builtins in this namespace only, as in torch)
_ALIASES = {"float": "float32", "double": "float64", "half": "float16", "long": "int64",
            "int": "int32", "short": "int16", "cfloat": "complex64", "cdouble": "complex128"}
for _alias, _target in _ALIASES.items():
    globals()[_alias] = getattr(_C, _target)
    __all__.append(_alias)

del _name, _fn, _alias, _target

# The composite layer: the ops ops.yaml declares with a Python body (composite: python), with
# their variants (function with out=, method, in-place).
from . import _composites  # noqa: E402

_composites.install(globals(), Tensor)
__all__ += [_row[0] for _row in _composites._table.OPS if "function" in _row[1]]

from . import fft, linalg, signal, special  # noqa: E402, F401  (torch.fft's, .linalg's, ...)

__all__ += ["fft", "linalg", "signal", "special"]

# PyTorch's other names for ops (arccos, multiply, moveaxis, det, torch.abs_, ...)
from . import _aliases  # noqa: E402

__all__ += _aliases.install(globals(), Tensor, linalg)

from . import serialization  # noqa: E402  (checkpoints: safetensors files, never pickle)
from .serialization import load, save  # noqa: E402

__all__ += ["save", "load", "serialization"]

# The plug points for out-of-tree packages (docs/plugins.md): kernel overrides, and the C API
# table of compiled plugins (ember_plugin.h, in get_include()), which installs host allocators.
from . import library  # noqa: E402
from .library import get_include  # noqa: E402, F401  (numpy.get_include's counterpart)

_C_API = _C._C_API

__all__ += ["library"]

# torch.cuda's, torch.backends' and torch.profiler's places; importing them does not
# initialise CUDA
from . import backends, cuda, profiler  # noqa: E402

__all__ += ["backends", "cuda", "profiler"]

# torch.accelerator's, torch.jit's and torch.compiler's places; ember.compile is the
# identity until Ember has a compiler (compiler.py)
from . import accelerator, compiler, jit  # noqa: E402
from .compiler import compile  # noqa: E402, A004

__all__ += ["accelerator", "compiler", "jit", "compile"]

# torch.sparse's COO tensors, as far as graph networks use them (sparse.py)
from . import sparse  # noqa: E402
from .sparse import sparse_coo, sparse_coo_tensor, spmm, strided  # noqa: E402

Tensor.to_sparse = sparse.to_sparse
Tensor.layout = property(lambda self: strided, doc="ember.strided: dense tensors' layout.")
__all__ += ["sparse", "sparse_coo", "sparse_coo_tensor", "spmm", "strided"]

# torch.amp's place, and torch.autocast / is_autocast_enabled / get_autocast_dtype
from . import amp  # noqa: E402
from .amp import autocast, get_autocast_dtype, is_autocast_enabled  # noqa: E402

__all__ += ["amp", "autocast", "get_autocast_dtype", "is_autocast_enabled"]
