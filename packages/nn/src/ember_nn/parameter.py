"""``Parameter`` and ``Buffer``: tensors that a ``Module`` registers when they are assigned
to one of its attributes.

``Parameter(data)`` is a real subclass instance, as in PyTorch: a detached alias of
``data`` (same storage) made by ``Tensor._make_subclass``; views, ``detach()``, ``.data``
and op results are plain tensors. Its repr reads ``Parameter containing:``, and pickling or
``copy.deepcopy`` give a Parameter back (the core's subclass reducer).

Like PyTorch's own ``Buffer``, ``Buffer(data)`` returns a plain ``ember_tensor.Tensor``
that shares ``data``'s storage and is *marked* as a buffer; ``isinstance(t, Buffer)`` reads
the mark. The mark belongs to the Python object (kept in a table keyed by its id, dropped
with the object). Two members of ``ember_tensor.Tensor`` are wrapped by this module,
additively, once: ``__reduce_ex__`` (the mark survives pickling and deep copies) and a
``persistent`` property, present on buffers only (``AttributeError`` on any other tensor,
as for a PyTorch tensor without the attribute).
"""

from __future__ import annotations

import weakref

import ember_tensor as et

__all__ = ["Buffer", "Parameter", "is_buffer", "is_parameter"]

_PARAMETER = "parameter"
_BUFFER = "buffer"


class _Mark:
    __slots__ = ("ref", "kind", "persistent")

    def __init__(self, ref: weakref.ref, kind: str, persistent: bool) -> None:
        self.ref = ref
        self.kind = kind
        self.persistent = persistent


# id(tensor) -> its mark; an entry leaves with its tensor (the weakref's callback)
_marks: dict[int, _Mark] = {}


def _forget(key: int, ref: weakref.ref) -> None:
    mark = _marks.get(key)
    if mark is not None and mark.ref is ref:
        del _marks[key]


def _mark(t, kind: str, persistent: bool = True) -> None:
    key = id(t)
    ref = weakref.ref(t, lambda r, key=key: _forget(key, r))
    _marks[key] = _Mark(ref, kind, persistent)


def _mark_of(obj) -> _Mark | None:
    mark = _marks.get(id(obj))
    if mark is None or mark.ref() is not obj:
        return None
    return mark


def is_parameter(obj) -> bool:
    """Whether ``obj`` is a tensor made by ``Parameter`` (same as ``isinstance(obj,
    Parameter)``)."""
    return isinstance(obj, Parameter)


def is_buffer(obj) -> bool:
    """Whether ``obj`` is a tensor made by ``Buffer``."""
    mark = _mark_of(obj)
    return mark is not None and mark.kind == _BUFFER


def _check_data(data, what: str):
    if data is None:
        return et.empty(0)
    if not isinstance(data, et.Tensor):
        raise TypeError(f"{what}(): data must be a Tensor, got {type(data).__name__}")
    return data


class _MarkedMeta(type(et.Tensor)):
    """``isinstance(t, Buffer)`` reads the tensor's mark."""

    _kind: str = ""

    def __instancecheck__(cls, obj) -> bool:
        mark = _mark_of(obj)
        return mark is not None and mark.kind == cls._kind


class Parameter(et.Tensor):
    """A tensor that is a module parameter: assigning one to a ``Module`` attribute
    registers it, so that it appears in ``parameters()`` and ``state_dict()``.

    ``Parameter(data=None, requires_grad=True)`` shares ``data``'s storage (an empty
    tensor when ``data`` is None) and is a leaf that requires grad unless
    ``requires_grad=False``.
    """

    def __new__(cls, data=None, requires_grad: bool = True):
        data = _check_data(data, "Parameter")
        return et.Tensor._make_subclass(cls, data, requires_grad)

    def __init__(self, data=None, requires_grad: bool = True) -> None:
        pass  # __new__ made it

    def __repr__(self) -> str:
        return "Parameter containing:\n" + et.Tensor.__repr__(self)

    __str__ = __repr__


class Buffer(et.Tensor, metaclass=_MarkedMeta):
    """A tensor that is module state but not a parameter (PyTorch's ``nn.Buffer``):
    assigning one to a ``Module`` attribute registers it as a buffer, persistent (saved in
    ``state_dict()``) unless ``persistent=False``.

    ``Buffer(data=None, *, persistent=True)`` shares ``data``'s storage and keeps its
    ``requires_grad``.
    """

    _kind = _BUFFER

    def __new__(cls, data=None, *, persistent: bool = True):
        data = _check_data(data, "Buffer")
        t = data.detach()
        if data.requires_grad:
            t.requires_grad_(True)
        _mark(t, _BUFFER, bool(persistent))
        return t


# ---------------------------------------------------------------------------------------
# The members of ember_tensor.Tensor wrapped for marked tensors (installed once)


def _rebuild_marked(rebuild, args, kind: str, requires_grad: bool, persistent: bool):
    return Buffer(rebuild(*args), persistent=persistent)


def _install_tensor_members() -> None:
    tensor = et.Tensor
    if getattr(tensor.__reduce_ex__, "_ember_nn", False):
        return  # already installed (this module was reloaded)
    core_reduce_ex = tensor.__reduce_ex__

    def __reduce_ex__(self, protocol):
        mark = _mark_of(self)
        reduced = core_reduce_ex(self, protocol)
        if mark is None:
            return reduced
        rebuild, args = reduced[0], reduced[1]
        return (
            _rebuild_marked,
            (rebuild, args, mark.kind, bool(self.requires_grad), mark.persistent),
        )

    def _get_persistent(self) -> bool:
        mark = _mark_of(self)
        if mark is None or mark.kind != _BUFFER:
            raise AttributeError("'Tensor' object has no attribute 'persistent'")
        return mark.persistent

    def _set_persistent(self, value: bool) -> None:
        mark = _mark_of(self)
        if mark is None or mark.kind != _BUFFER:
            raise AttributeError(
                "'Tensor' object has no attribute 'persistent' (only tensors made by "
                "ember.nn.Buffer have one)"
            )
        mark.persistent = bool(value)

    __reduce_ex__._ember_nn = True
    tensor.__reduce_ex__ = __reduce_ex__
    tensor.persistent = property(
        _get_persistent, _set_persistent, doc="A Buffer's persistent flag (buffers only)."
    )


_install_tensor_members()
