"""PyTorch's legacy tensor surface that programs still use: the ``Tensor(...)``
constructor, Python subclasses of ``Tensor`` (``class MyTensor(Tensor)``,
``as_subclass``, ``Tensor._make_subclass``), the typed classes ``FloatTensor``,
``LongTensor``, ... (constructors and ``isinstance``, ``ember.cuda.FloatTensor`` too), the
``is_xpu``-style device flags, and pickling of ``device`` objects.

``Tensor(data)`` follows PyTorch's legacy rules: no argument gives an empty float tensor,
ints (or a ``Size``) give an uninitialised float tensor of that shape, a sequence or array
gives a float tensor of its values (the default dtype), and a tensor gives an alias of it
(same storage, its own dtype). A subclass instance is such an alias with the subclass's
type; the results of ops on it are plain tensors (Ember has no ``__torch_function__``
dispatch: docs/differences-from-pytorch.md).

>>> import ember_tensor as et
>>> et.Tensor([1, 2]).dtype, tuple(et.Tensor(2, 3).shape)
(ember.float32, (2, 3))
>>> isinstance(et.ones(2, dtype=et.int64), et.LongTensor)
True
>>> et.LongTensor([1.5, 2.5]).tolist()
[1, 2]
"""

from __future__ import annotations

import numbers

from . import _C

__all__ = ["BFloat16Tensor", "BoolTensor", "ByteTensor", "CharTensor", "DoubleTensor",
           "FloatTensor", "HalfTensor", "IntTensor", "LongTensor", "ShortTensor"]

# the legacy class name of each dtype (ember.FloatTensor is float32 on the CPU)
_CLASSES = {"Float": "float32", "Double": "float64", "Half": "float16",
            "BFloat16": "bfloat16", "Byte": "uint8", "Char": "int8", "Short": "int16",
            "Int": "int32", "Long": "int64", "Bool": "bool"}


def _is_sizes(args) -> bool:
    return all(isinstance(a, numbers.Integral) and not isinstance(a, bool) for a in args)


def _new(name: str, args: tuple, dtype, device):
    """A new tensor by the legacy constructor's rules (see the module docstring)."""
    from . import Size

    if not args:
        return _C.empty([0], dtype=dtype, device=device)
    if len(args) == 1 and isinstance(args[0], _C.Tensor):
        return args[0]
    if len(args) == 1 and isinstance(args[0], Size):
        args = tuple(args[0])
    if _is_sizes(args):
        return _C.empty(list(args), dtype=dtype, device=device)
    if len(args) == 1:
        data = args[0]
        if isinstance(data, (numbers.Number, str, bytes)) or not hasattr(data, "__len__") \
                and not hasattr(data, "__array__"):
            raise TypeError(f"new(): data must be a sequence (got {type(data).__name__})")
        return _C.tensor(data, dtype=dtype, device=device)
    got = ", ".join(type(a).__name__ for a in args)
    raise TypeError(f"{name}() received an invalid combination of arguments - got ({got}), "
                    "expected (), (*sizes), (Size), (sequence) or (Tensor)")


_alias_init = _C.Tensor.__init__  # the binding's: Tensor(data) aliases data
_object_new = _C.Tensor.__new__  # pybind11's: an instance with no tensor behind it yet


def _tensor_new(cls, *args, device=None, size=None):
    """``Tensor(...)`` and ``Subclass(...)``: the legacy constructor runs here, in
    ``__new__``, as in PyTorch, so every instance has its tensor before anything can touch
    it (a subclass with other constructor arguments defines ``__new__``, as in PyTorch)."""
    if size is not None:
        args = (*args, *size)
    obj = _object_new(cls)
    _alias_init(obj, _new(cls.__name__, args, _C.get_default_dtype(), device))
    return obj


def _tensor_init(self, *args, **kwargs):
    """Nothing: ``__new__`` made the tensor (subclasses may define their own)."""


def _make_subclass(cls, data, require_grad: bool = False, **_ignored):
    """An instance of ``cls`` (a subclass of ``Tensor``) aliasing ``data``, detached, with
    ``requires_grad=require_grad``; ``cls.__init__`` is not called (PyTorch's contract)."""
    if not isinstance(cls, type) or not issubclass(cls, _C.Tensor):
        raise TypeError(f"_make_subclass(): cls must be a subclass of Tensor, got {cls!r}")
    if not isinstance(data, _C.Tensor):
        raise TypeError(f"_make_subclass(): data must be a Tensor, got {type(data).__name__}")
    obj = _object_new(cls)
    _alias_init(obj, data)
    if require_grad:
        obj.requires_grad_(True)
    return obj


def _as_subclass(self, cls):
    """``self`` as an instance of ``cls`` (a subclass of ``Tensor``), sharing its storage
    (and, unlike ``_make_subclass``, keeping it in the autograd graph)."""
    if not isinstance(cls, type) or not issubclass(cls, _C.Tensor):
        raise TypeError(f"as_subclass(): cls must be a subclass of Tensor, got {cls!r}")
    obj = _object_new(cls)
    _alias_init(obj, self.view_as(self))
    return obj


class _LegacyTensorType(type):
    """The metaclass of ``FloatTensor`` & co: calling one builds a tensor of its dtype and
    device, ``isinstance`` checks a tensor's dtype and device type."""

    def __call__(cls, *args, device=None, size=None):
        if size is not None:
            args = (*args, *size)
        device = device if device is not None else cls._device
        if len(args) == 1 and isinstance(args[0], _C.Tensor):
            t = args[0]
            if t.dtype != cls.dtype:
                raise TypeError(f"expected {cls.dtype} (got {t.dtype})")
            return t
        return _new(cls.__name__, args, cls.dtype, device)

    def __instancecheck__(cls, obj) -> bool:
        return (isinstance(obj, _C.Tensor) and obj.dtype == cls.dtype
                and obj.device.type == cls._device)

    def __repr__(cls) -> str:
        where = "cuda." if cls._device == "cuda" else ""
        return f"<class 'ember.{where}{cls.__name__}'>"


def _legacy_classes(device: str, module: str) -> dict[str, type]:
    out = {}
    for prefix, dtype in _CLASSES.items():
        name = prefix + "Tensor"
        out[name] = _LegacyTensorType(name, (), {
            "dtype": getattr(_C, dtype), "_device": device, "__module__": module,
            "__doc__": f"The legacy {dtype} tensor type on the {device}: "
                       f"``{name}(data)`` / ``{name}(*sizes)`` and ``isinstance``."})
    return out


_CPU_CLASSES = _legacy_classes("cpu", "ember_tensor")
BFloat16Tensor = _CPU_CLASSES["BFloat16Tensor"]
BoolTensor = _CPU_CLASSES["BoolTensor"]
ByteTensor = _CPU_CLASSES["ByteTensor"]
CharTensor = _CPU_CLASSES["CharTensor"]
DoubleTensor = _CPU_CLASSES["DoubleTensor"]
FloatTensor = _CPU_CLASSES["FloatTensor"]
HalfTensor = _CPU_CLASSES["HalfTensor"]
IntTensor = _CPU_CLASSES["IntTensor"]
LongTensor = _CPU_CLASSES["LongTensor"]
ShortTensor = _CPU_CLASSES["ShortTensor"]
CUDA_CLASSES = _legacy_classes("cuda", "ember_tensor.cuda")


def _rebuild_subclass(cls, data, requires_grad: bool, state: dict):
    obj = _make_subclass(cls, data, requires_grad)
    obj.__dict__.update(state)
    return obj


def _subclass_reducer(base_reduce_ex):
    """``__reduce_ex__`` that keeps a subclass instance's type and ``__dict__`` through
    pickling and ``copy.deepcopy`` (plain tensors reduce as before)."""

    def __reduce_ex__(self, protocol):
        if type(self) is _C.Tensor:
            return base_reduce_ex(self, protocol)
        plain = self.detach()
        return (_rebuild_subclass, (type(self), plain, self.requires_grad,
                                    dict(getattr(self, "__dict__", {}))))

    return __reduce_ex__


def _device_reduce(self):
    return (_C.device, (str(self),))


def install(tensor_class) -> None:
    """The constructor, subclassing helpers, device flags and device pickling."""
    tensor_class.__new__ = _tensor_new
    tensor_class.__init__ = _tensor_init
    tensor_class._make_subclass = staticmethod(_make_subclass)
    tensor_class.as_subclass = _as_subclass
    tensor_class.__reduce_ex__ = _subclass_reducer(tensor_class.__reduce_ex__)
    for flag in ("is_xpu", "is_mps", "is_meta", "is_sparse", "is_sparse_csr", "is_quantized",
                 "is_mkldnn", "is_nested", "is_ipu", "is_hpu", "is_mtia", "is_maia", "is_vulkan"):
        if not hasattr(tensor_class, flag):
            setattr(tensor_class, flag, property(lambda self: False,
                                                 doc="False: Ember has no such device or "
                                                     "layout."))
    _C.device.__reduce__ = _device_reduce
