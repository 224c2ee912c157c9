"""The values a checkpoint holds besides tensors, containers and plain values (format
version 2 of ``serialization.py``), and the allow-list that decides which classes ``load``
may rebuild without being told the file is trusted.

Saved as data, loaded without running code the file names:

    {"ndarray": I}                   a NumPy array, stored as tensors[I] (numeric dtypes)
    {"npscalar": [DTYPE, NODE]}      a NumPy scalar (np.float64(1.5), np.int64(3), ...)
    {"complex": [NODE, NODE]}        a Python complex
    {"set": [NODE, ...]}             a set (and "frozenset")
    {"bytes": BASE64}                bytes (and "bytearray")
    {"dtype": NAME} / {"device": S}  ember dtypes and devices

Rebuilt only when allowed (``add_safe_globals`` / ``safe_globals``, PyTorch's names) or when
``load(..., weights_only=False)`` says the file is trusted:

    {"object": [MODULE, QUALNAME], "state": NODE}
        an instance of a plain class (``argparse.Namespace``, a dataclass, ...): its
        ``__dict__`` saved as data; loading makes ``cls.__new__(cls)`` and sets the dict

Unpickled only with ``weights_only=False``:

    {"pickle": I, "type": NAME}     anything else (a whole ``nn.Module``, functions, objects
                                     with their own ``__reduce__``): pickled bytes in
                                     tensors[I] (uint8)
"""

from __future__ import annotations

import base64
import contextlib
import pickle
import sys

from . import _C

__all__ = ["add_safe_globals", "clear_safe_globals", "get_safe_globals", "safe_globals"]

NO_NODE = object()  # encode's answer for a value this module does not handle

# NumPy dtypes a checkpoint stores (as Ember tensors, or as scalars)
NUMPY_DTYPES = frozenset({"bool", "int8", "int16", "int32", "int64", "uint8", "float16",
                          "float32", "float64"})
_SCALAR_DTYPES = NUMPY_DTYPES | {"uint16", "uint32", "uint64", "complex64", "complex128"}

_safe: dict[str, object] = {}  # "module.qualname" -> the allowed class or function


def _name_of(obj) -> str:
    return f"{getattr(obj, '__module__', '?')}.{getattr(obj, '__qualname__', '?')}"


def add_safe_globals(safe_globals) -> None:
    """Allows ``load`` (with the default ``weights_only=True``) to rebuild instances of
    these classes. Entries are classes, or ``(class, "module.qualname")`` pairs naming the
    class as the file does."""
    for entry in safe_globals:
        if isinstance(entry, tuple) and len(entry) == 2:
            obj, name = entry
        else:
            obj, name = entry, _name_of(entry)
        _safe[name] = obj


def get_safe_globals() -> list:
    """The allowed classes (``add_safe_globals``), in the order they were added."""
    return list(_safe.values())


def clear_safe_globals() -> None:
    """Forgets every class ``add_safe_globals`` allowed."""
    _safe.clear()


class safe_globals(contextlib.ContextDecorator):  # noqa: N801 - PyTorch's name
    """``with safe_globals([argparse.Namespace]): load(f)``: the classes are allowed inside
    the block only."""

    def __init__(self, safe_globals) -> None:
        self.entries = list(safe_globals)
        self.saved: dict | None = None

    def __enter__(self):
        self.saved = dict(_safe)
        add_safe_globals(self.entries)
        return self

    def __exit__(self, *exc) -> None:
        _safe.clear()
        _safe.update(self.saved)


# ----------------------------------------------------------------------------- saving


def _plain_class(obj) -> bool:
    """An instance whose state is its ``__dict__`` and whose class can be found again by
    module and qualified name."""
    cls = type(obj)
    if not hasattr(obj, "__dict__") or "<locals>" in cls.__qualname__:
        return False
    if any("__slots__" in vars(k) for k in cls.__mro__[:-1]):
        return False
    for method in ("__reduce_ex__", "__reduce__", "__getstate__", "__setstate__"):
        if getattr(cls, method, None) is not getattr(object, method, None):
            return False
    module = sys.modules.get(cls.__module__)
    found = module
    for part in cls.__qualname__.split("."):
        found = getattr(found, part, None)
    return found is cls


def encode(saver, obj, path: list):
    """The node of ``obj`` if it is one of this module's values, else ``NO_NODE``."""
    np = sys.modules.get("numpy")
    if np is not None and isinstance(obj, np.ndarray) and obj.dtype.name in NUMPY_DTYPES:
        t = _C.from_numpy(np.array(obj, order="C", copy=True))
        return {"ndarray": saver.tensor(t, path)}
    if np is not None and isinstance(obj, np.generic) and obj.dtype.name in _SCALAR_DTYPES:
        return {"npscalar": [obj.dtype.name, saver.encode(obj.item(), path)]}
    if isinstance(obj, complex):
        return {"complex": [saver.encode(obj.real, path), saver.encode(obj.imag, path)]}
    if isinstance(obj, (set, frozenset)):
        tag = "set" if isinstance(obj, set) else "frozenset"
        return {tag: [saver.encode(v, [*path, "<item>"]) for v in obj]}
    if isinstance(obj, (bytes, bytearray)):
        tag = "bytes" if isinstance(obj, bytes) else "bytearray"
        return {tag: base64.b64encode(bytes(obj)).decode("ascii")}
    if isinstance(obj, _C.dtype):
        return {"dtype": str(obj).rsplit(".", 1)[-1]}
    if isinstance(obj, _C.device):
        return {"device": str(obj)}
    if _plain_class(obj):
        mark = saver.mark()
        try:
            state = saver.encode(dict(vars(obj)), [*path, "__dict__"])
            cls = type(obj)
            return {"object": [cls.__module__, cls.__qualname__], "state": state}
        except TypeError:
            saver.rollback(mark)  # a part is not data: the whole object is pickled
    return _pickled(saver, obj, path)


def _pickled(saver, obj, path: list):
    try:
        blob = pickle.dumps(obj, protocol=saver.pickle_protocol)
    except Exception as exc:  # noqa: BLE001 - any pickling failure is the caller's TypeError
        raise TypeError(f"ember_tensor.save: cannot save {_where(path)} of type "
                        f"{type(obj).__qualname__}: it is neither data a checkpoint holds "
                        f"nor picklable ({type(exc).__name__}: {exc})") from exc
    import numpy as np

    data = _C.from_numpy(np.frombuffer(blob, dtype=np.uint8).copy())
    return {"pickle": saver.tensor(data, [*path, "__pickle__"]),
            "type": _name_of(type(obj))}


def _where(path: list) -> str:
    return "the object" if not path else "obj" + "".join(f"[{p!r}]" for p in path)


# ----------------------------------------------------------------------------- loading

_TAGS = frozenset({"ndarray", "npscalar", "complex", "set", "frozenset", "bytes",
                   "bytearray", "dtype", "device", "object", "pickle"})


def is_tag(node: dict) -> bool:
    return bool(node.keys() & _TAGS)


def _refuse(name: str, r) -> None:
    raise pickle.UnpicklingError(
        f"ember_tensor.load: {r.where}: the checkpoint holds an instance of {name}, which is "
        "not allowed by default (weights_only=True rebuilds only tensors, containers, plain "
        f"values and allowed classes). If you trust this class, allow it with "
        f"ember.serialization.add_safe_globals([{name.rsplit('.', 1)[-1]}]) or the "
        "ember.serialization.safe_globals([...]) context manager; if you trust the whole "
        "file, load it with weights_only=False.")


def _class_for(module: str, qualname: str, r):
    name = f"{module}.{qualname}"
    if name in _safe:
        return _safe[name]
    if not r.trusted:
        _refuse(name, r)
    import importlib

    found = importlib.import_module(module)
    for part in qualname.split("."):
        found = getattr(found, part)
    return found


def decode(node: dict, decode_child, tensors, r):
    """The value of a version-2 node (``decode_child`` decodes nested nodes)."""
    if "pickle" in node:
        if node.keys() != {"pickle", "type"} or not isinstance(node["type"], str):
            r.fail(f"ember metadata: bad pickle node {str(node)[:200]}")
        if not r.trusted:
            raise pickle.UnpicklingError(
                f"ember_tensor.load: {r.where}: the checkpoint holds a pickled object of type "
                f"{node['type']} (saved whole, as with ember.save(model, f)): unpickling runs "
                "code the file names, so it is refused by default. If you trust the file, "
                "load it with ember.load(f, weights_only=False).")
        data = _tensor_at(node["pickle"], tensors, r)
        return pickle.loads(bytes(data.numpy().tobytes()))  # noqa: S301 - the caller's trust
    if len(node) == 2 and "object" in node and "state" in node:
        where = node["object"]
        if not (isinstance(where, list) and len(where) == 2 and
                all(isinstance(p, str) for p in where)):
            r.fail(f"ember metadata: bad object node {str(node)[:200]}")
        cls = _class_for(where[0], where[1], r)
        state = decode_child(node["state"])
        if not isinstance(state, dict):
            r.fail("ember metadata: an object's state must be a dict")
        obj = cls.__new__(cls)
        obj.__dict__.update(state)
        return obj
    if len(node) != 1:
        r.fail(f"ember metadata: unknown node {str(node)[:200]}")
    ((tag, value),) = node.items()
    if tag == "ndarray":
        return _tensor_at(value, tensors, r).numpy().copy()
    if tag == "npscalar" and isinstance(value, list) and len(value) == 2 \
            and value[0] in _SCALAR_DTYPES:
        import numpy as np

        return np.dtype(value[0]).type(decode_child(value[1]))
    if tag == "complex" and isinstance(value, list) and len(value) == 2:
        return complex(decode_child(value[0]), decode_child(value[1]))
    if tag in ("set", "frozenset") and isinstance(value, list):
        items = [decode_child(v) for v in value]
        return set(items) if tag == "set" else frozenset(items)
    if tag in ("bytes", "bytearray") and isinstance(value, str):
        try:
            raw = base64.b64decode(value.encode("ascii"), validate=True)
        except (ValueError, UnicodeEncodeError) as exc:  # binascii.Error is a ValueError
            r.fail(f"ember metadata: bad {tag} node: {exc}")
        return raw if tag == "bytes" else bytearray(raw)
    if tag == "dtype" and isinstance(value, str) and isinstance(getattr(_C, value, None),
                                                                _C.dtype):
        return getattr(_C, value)
    if tag == "device" and isinstance(value, str):
        try:
            return _C.device(value)
        except (RuntimeError, ValueError) as exc:
            r.fail(f"ember metadata: bad device {value!r}: {exc}")
    r.fail(f"ember metadata: bad {tag} node {str(node)[:200]}")


def _tensor_at(i, tensors, r):
    if not isinstance(i, int) or isinstance(i, bool) or not 0 <= i < len(tensors):
        r.fail(f"ember metadata: bad tensor index {i!r}")
    return tensors[i]
