"""Reading ``torch.save`` files (the zip format PyTorch has written since 1.6), so that
``ember.load`` opens published ``.pt``/``.pth`` checkpoints without PyTorch installed.

A torch checkpoint is a zip archive: ``<name>/data.pkl`` (a pickle of the saved object,
whose tensors refer by persistent id to storages), ``<name>/data/<key>`` (each storage's
raw bytes), ``<name>/byteorder``. The pickle is read by a restricted unpickler, as
PyTorch's ``weights_only=True`` does: the globals it may name are the tensor and parameter
rebuilders, storage types, dtypes, devices, ``torch.Size``, ``OrderedDict`` and a few
builtins, each mapped onto Ember's own; any other class is allowed only through
``serialization.add_safe_globals`` or with ``weights_only=False`` (and a class of PyTorch's
then needs PyTorch installed). Storages are read once each, so tensors that shared one in
PyTorch share memory again.
"""

from __future__ import annotations

import collections
import importlib
import pickle
import zipfile

from . import _C
from . import _checkpoint_values as _values

_STORAGE_DTYPES = {
    "FloatStorage": "float32", "DoubleStorage": "float64", "HalfStorage": "float16",
    "BFloat16Storage": "bfloat16", "LongStorage": "int64", "IntStorage": "int32",
    "ShortStorage": "int16", "CharStorage": "int8", "ByteStorage": "uint8",
    "BoolStorage": "bool", "ComplexFloatStorage": "complex64",
    "ComplexDoubleStorage": "complex128", "UInt16Storage": "uint16",
    "UInt32Storage": "uint32", "UInt64Storage": "uint64",
}
_DTYPES = {"float32", "float64", "float16", "bfloat16", "int64", "int32", "int16", "int8",
           "uint8", "bool", "complex64", "complex128", "uint16", "uint32", "uint64",
           "float", "double", "half", "long", "int", "short", "cfloat", "cdouble"}
_BUILTINS = {"set": set, "frozenset": frozenset, "complex": complex, "slice": slice,
             "range": range, "bytearray": bytearray}


def _fail(where: str, problem: str):
    """A CheckpointError (the file is not a torch checkpoint Ember can read)."""
    from .serialization import CheckpointError

    raise CheckpointError(where, problem)


class _StorageType:
    def __init__(self, dtype) -> None:
        self.dtype = dtype


def _rebuild_tensor(storage, offset, size, stride, requires_grad=False, hooks=None,
                    metadata=None):
    t = storage.detach().as_strided(tuple(size), tuple(stride), int(offset))
    if requires_grad:
        t.requires_grad_(True)
    return t


def _rebuild_parameter(data, requires_grad, hooks, state=None):
    # the core has no Parameter (it is ember.nn's): a tensor that requires grad, which
    # load_state_dict copies into the module's parameters
    if requires_grad and not data.requires_grad:
        data.requires_grad_(True)
    return data


def _rebuild_from_type(func, new_type, args, state):
    return func(*args)


_TORCH_GLOBALS = {
    ("torch._utils", "_rebuild_tensor_v2"): _rebuild_tensor,
    ("torch._utils", "_rebuild_tensor"): _rebuild_tensor,
    ("torch._utils", "_rebuild_parameter"): _rebuild_parameter,
    ("torch._utils", "_rebuild_parameter_with_state"): _rebuild_parameter,
    ("torch._tensor", "_rebuild_from_type_v2"): _rebuild_from_type,
    ("torch", "device"): _C.device,
    ("collections", "OrderedDict"): collections.OrderedDict,
}


class _Unpickler(pickle.Unpickler):
    def __init__(self, data, archive: zipfile.ZipFile, prefix: str, where: str,
                 trusted: bool) -> None:
        import io

        super().__init__(io.BytesIO(data))
        self.archive, self.prefix, self.where, self.trusted = archive, prefix, where, trusted
        self.storages: dict[str, object] = {}

    def find_class(self, module: str, name: str):
        found = _TORCH_GLOBALS.get((module, name))
        if found is not None:
            return found
        if module == "torch" and name in _STORAGE_DTYPES:
            return _StorageType(getattr(_C, _STORAGE_DTYPES[name]))
        if module == "torch" and name in _DTYPES:
            return getattr(_C, name) if hasattr(_C, name) else getattr(_C, {
                "float": "float32", "double": "float64", "half": "float16", "long": "int64",
                "int": "int32", "short": "int16", "cfloat": "complex64",
                "cdouble": "complex128"}[name])
        if module == "torch" and name == "Size":
            from . import Size

            return Size
        if module in ("builtins", "__builtin__") and name in _BUILTINS:
            return _BUILTINS[name]
        full = f"{module}.{name}"
        if full in _values._safe:
            return _values._safe[full]
        if not self.trusted:
            raise pickle.UnpicklingError(
                f"ember_tensor.load: {self.where}: the torch checkpoint names {full}, which "
                "is not allowed by default (Ember rebuilds tensors, containers and plain "
                "values of torch.save files). If you trust this class, allow it with "
                "ember.serialization.add_safe_globals; if you trust the whole file, load it "
                "with weights_only=False.")
        return getattr(importlib.import_module(module), name)

    def persistent_load(self, pid):
        if not (isinstance(pid, tuple) and len(pid) >= 5 and pid[0] == "storage"):
            _fail(self.where, f"unknown persistent id {str(pid)[:100]} in the torch archive")
        storage_type, key, numel = pid[1], str(pid[2]), pid[4]
        if key not in self.storages:
            dtype = storage_type.dtype if isinstance(storage_type, _StorageType) else None
            if dtype is None:
                _fail(self.where, f"storage {key} has an unknown type {storage_type!r}")
            self.storages[key] = self._read_storage(key, dtype, int(numel))
        return self.storages[key]

    def _read_storage(self, key: str, dtype, numel: int):
        from .serialization import _byte_view

        try:
            raw = self.archive.read(f"{self.prefix}/data/{key}")
        except (KeyError, zipfile.BadZipFile, OSError) as exc:
            _fail(self.where, f"storage {key} cannot be read from the torch archive: {exc}")
        if numel < 0:
            _fail(self.where, f"storage {key} has a negative size {numel}")
        t = _C.empty([numel], dtype=dtype)
        view = _byte_view(t)
        if len(raw) != len(view):
            _fail(self.where, f"storage {key} holds {len(raw)} bytes, but {numel} elements of "
                              f"{dtype} need {len(view)}")
        view[:] = raw
        return t


def is_torch_zip(head) -> bool:
    return isinstance(head, bytes) and head.startswith(b"PK\x03\x04")


def load(f, where: str, trusted: bool, mapper=None):
    """The object a ``torch.save`` zip file holds (``f``: a path or a seekable binary file
    object positioned at the archive)."""
    try:
        archive = zipfile.ZipFile(f)
    except (zipfile.BadZipFile, OSError) as exc:
        _fail(where, f"not a readable torch.save archive (a zip file): {exc}")
    with archive:
        names = archive.namelist()
        pkl = [n for n in names if n.endswith("/data.pkl") or n == "data.pkl"]
        if len(pkl) != 1:
            _fail(where, "a zip archive without one data.pkl: not a torch.save archive")
        prefix = pkl[0][: -len("/data.pkl")] if "/" in pkl[0] else ""
        order = f"{prefix}/byteorder"
        if order in names and archive.read(order).strip() not in (b"little", b""):
            _fail(where, "a big-endian torch checkpoint, which Ember cannot read")
        unpickler = _Unpickler(archive.read(pkl[0]), archive, prefix, where, trusted)
        try:
            obj = unpickler.load()
        except (EOFError, ValueError, TypeError, IndexError, AttributeError) as exc:
            _fail(where, f"the torch archive's data.pkl is damaged: {type(exc).__name__}: {exc}")
    if mapper is not None:
        obj = _map_tensors(obj, mapper)
    return obj


def _map_tensors(obj, mapper):
    if isinstance(obj, _C.Tensor):
        out = mapper(obj, "cpu")
        return out if isinstance(out, _C.Tensor) else obj
    if isinstance(obj, dict):
        for k in list(obj):
            obj[k] = _map_tensors(obj[k], mapper)
        return obj
    if isinstance(obj, list):
        return [_map_tensors(v, mapper) for v in obj]
    if isinstance(obj, tuple) and type(obj) is tuple:
        return tuple(_map_tensors(v, mapper) for v in obj)
    return obj
