"""``ember.nn.utils.parametrize``: express a parameter or buffer of a module as a function
of other tensors (PyTorch's ``torch.nn.utils.parametrize``).

After ``register_parametrization(module, "weight", P)``, reading ``module.weight`` computes
``P(original)``; the unconstrained tensor lives in
``module.parametrizations.weight.original`` (or ``original0``, ``original1``, ... when
``P.right_inverse`` returns several tensors), so ``state_dict()`` keys read
``parametrizations.weight.original``. The module's class is replaced by a subclass
``Parametrized<Class>`` that holds a property per parametrized name.

>>> import ember_tensor as et
>>> import ember_nn as nn
>>> from ember_nn.utils import parametrize
>>> class Symmetric(nn.Module):
...     def forward(self, X):
...         return X.triu() + X.triu(1).mT
>>> m = parametrize.register_parametrization(nn.Linear(3, 3), "weight", Symmetric())
>>> type(m).__name__, parametrize.is_parametrized(m, "weight")
('ParametrizedLinear', True)
>>> bool((m.weight == m.weight.mT).all())
True
>>> sorted(m.state_dict())
['bias', 'parametrizations.weight.original']
"""

from __future__ import annotations

import collections.abc
import copyreg
from contextlib import contextmanager
from copy import deepcopy

import ember_tensor as et
from ember_autograd import no_grad

from ..modules.container import ModuleDict, ModuleList
from ..modules.module import Module
from ..parameter import Parameter

__all__ = [
    "ParametrizationList",
    "cached",
    "is_parametrized",
    "register_parametrization",
    "remove_parametrizations",
    "transfer_parametrizations_and_params",
    "type_before_parametrizations",
]

# the cache of parametrized values, active while at least one ``cached()`` block runs
_cache_enabled = 0
_cache: dict = {}


@contextmanager
def cached():
    """Within the block, each parametrized tensor is computed once, on first access, and
    the value is reused until the outermost ``cached()`` block exits (useful when a
    parametrized weight is read several times in one forward pass, as in an RNN loop).

    >>> import ember_tensor as et
    >>> import ember_nn as nn
    >>> from ember_nn.utils import parametrize
    >>> class Double(nn.Module):
    ...     def forward(self, X):
    ...         return 2 * X
    >>> m = parametrize.register_parametrization(nn.Linear(2, 2), "weight", Double())
    >>> with parametrize.cached():
    ...     m.weight is m.weight
    True
    >>> m.weight is m.weight
    False
    """
    global _cache, _cache_enabled
    _cache_enabled += 1
    try:
        yield
    finally:
        _cache_enabled -= 1
        if not _cache_enabled:
            _cache = {}


def _register_parameter_or_buffer(module: Module, name: str, value) -> None:
    if isinstance(value, Parameter):
        module.register_parameter(name, value)
    else:
        module.register_buffer(name, value)


def _maybe_set(dest, src) -> None:
    """PyTorch's ``dest.set_(src)``: ``dest`` (the same Python object, so a Parameter
    stays the optimizer's Parameter) takes ``src``'s storage, shape and strides."""
    dest.data = src


class ParametrizationList(ModuleList):
    """The parametrizations of one tensor of a module, in registration order, and the
    tensor(s) they are applied to: ``module.parametrizations[tensor_name]``.

    ``ParametrizationList(modules, original, unsafe=False)``: when the first
    parametrization has no ``right_inverse`` (or it returns one tensor), the unconstrained
    tensor is ``self.original`` (the same object as ``original``, a Parameter or a
    buffer); when ``right_inverse`` returns a sequence, they are ``original0``,
    ``original1``, ... Calling the list (no argument) gives the parametrized value. Made
    by ``register_parametrization``; not meant to be built by hand.

    Raises ``ValueError`` when ``modules`` is empty, when ``right_inverse`` returns
    something else than a tensor or a sequence of tensors or changes a single tensor's
    dtype or device, and (unless ``unsafe``) when the parametrization does not return a
    tensor of ``original``'s dtype and shape.

    >>> import ember_tensor as et
    >>> import ember_nn as nn
    >>> from ember_nn.utils import parametrize
    >>> class Scale(nn.Module):
    ...     def forward(self, X):
    ...         return 3 * X
    >>> m = parametrize.register_parametrization(nn.Linear(2, 2), "weight", Scale())
    >>> plist = m.parametrizations.weight
    >>> type(plist).__name__, len(plist), tuple(plist.original.shape)
    ('ParametrizationList', 1, (2, 2))
    """

    def __init__(self, modules, original, unsafe: bool = False) -> None:
        if len(modules) == 0:
            raise ValueError("ParametrizationList requires one or more modules.")
        super().__init__(modules)
        self.unsafe = unsafe

        original_shape = original.shape
        original_dtype = original.dtype

        # the initial value of the unconstrained tensor(s): right_inverse through the list,
        # last registered first (a NotImplementedError there means "identity")
        with no_grad():
            new = original
            for module in reversed(self):
                if hasattr(module, "right_inverse"):
                    try:
                        new = module.right_inverse(new)
                    except NotImplementedError:
                        pass

        if not isinstance(new, et.Tensor) and not isinstance(new, collections.abc.Sequence):
            raise ValueError(
                "'right_inverse' must return a Tensor or a Sequence of tensors (list, "
                f"tuple...). Got {type(new).__name__}"
            )

        self.is_tensor = isinstance(new, et.Tensor)
        self.ntensors = 1 if self.is_tensor else len(new)

        if self.is_tensor:
            if original.dtype != new.dtype:
                raise ValueError(
                    "When `right_inverse` outputs one tensor, it may not change the dtype.\n"
                    f"original.dtype: {original.dtype}\n"
                    f"right_inverse(original).dtype: {new.dtype}"
                )
            if original.device != new.device:
                raise ValueError(
                    "When `right_inverse` outputs one tensor, it may not change the device.\n"
                    f"original.device: {original.device}\n"
                    f"right_inverse(original).device: {new.device}"
                )
            # the original object keeps its identity (an optimizer may hold it already)
            with no_grad():
                _maybe_set(original, new)
            _register_parameter_or_buffer(self, "original", original)
        else:
            for i, value in enumerate(new):
                if not isinstance(value, et.Tensor):
                    raise ValueError(
                        "'right_inverse' must return a Tensor or a Sequence of tensors "
                        "(list, tuple...). "
                        f"Got element {i} of the sequence with type {type(value).__name__}."
                    )
                if isinstance(original, Parameter):
                    value = Parameter(value, original.requires_grad)
                value.requires_grad_(original.requires_grad)
                _register_parameter_or_buffer(self, f"original{i}", value)

        if not self.unsafe:
            # consistency checks: the parametrized value keeps the dtype and the shape
            Z = self()
            if not isinstance(Z, et.Tensor):
                raise ValueError(
                    f"A parametrization must return a tensor. Got {type(Z).__name__}."
                )
            if Z.dtype != original_dtype:
                raise ValueError(
                    "Registering a parametrization may not change the dtype of the tensor, "
                    "unless `unsafe` flag is enabled.\n"
                    f"unparametrized dtype: {original_dtype}\n"
                    f"parametrized dtype: {Z.dtype}"
                )
            if Z.shape != original_shape:
                raise ValueError(
                    "Registering a parametrization may not change the shape of the tensor, "
                    "unless `unsafe` flag is enabled.\n"
                    f"unparametrized shape: {original_shape}\n"
                    f"parametrized shape: {Z.shape}"
                )

    def right_inverse(self, value) -> None:
        """Stores in ``original`` (or ``original0``, ...) the unconstrained value(s) whose
        parametrization is ``value``: the ``right_inverse`` of each parametrization, last
        registered first. This is what assigning ``module.<tensor_name> = value`` runs.

        Raises ``RuntimeError`` when a parametrization has no ``right_inverse``, and
        ``ValueError`` when the result does not match the stored tensors (type, number,
        dtype)."""
        with no_grad():
            for module in reversed(self):
                if not hasattr(module, "right_inverse"):
                    raise RuntimeError(
                        f"parametrization {type(module).__name__} does not implement "
                        "right_inverse."
                    )
                value = module.right_inverse(value)
            if self.is_tensor:
                if not isinstance(value, et.Tensor):
                    raise ValueError(
                        f"`right_inverse` should return a tensor. Got {type(value).__name__}"
                    )
                if value.dtype != self.original.dtype:
                    raise ValueError(
                        f"The tensor returned by `right_inverse` has dtype {value.dtype} "
                        f"while `original` has dtype {self.original.dtype}"
                    )
                _maybe_set(self.original, value)
            else:
                if not isinstance(value, collections.abc.Sequence):
                    raise ValueError(
                        "'right_inverse' must return a sequence of tensors. "
                        f"Got {type(value).__name__}."
                    )
                if len(value) != self.ntensors:
                    raise ValueError(
                        "'right_inverse' must return a sequence of tensors of length "
                        f"{self.ntensors}. Got a sequence of length {len(value)}."
                    )
                for i, tensor in enumerate(value):
                    original_i = getattr(self, f"original{i}")
                    if not isinstance(tensor, et.Tensor):
                        raise ValueError(
                            f"`right_inverse` must return a sequence of tensors. "
                            f"Got element {i} of type {type(tensor).__name__}"
                        )
                    if original_i.dtype != tensor.dtype:
                        raise ValueError(
                            f"Tensor {i} returned by `right_inverse` has dtype "
                            f"{tensor.dtype} while `original{i}` has dtype "
                            f"{original_i.dtype}"
                        )
                    _maybe_set(original_i, tensor)

    def forward(self):
        """The parametrized value: the first parametrization applied to the original
        tensor(s), then each following one to the previous result."""
        if self.is_tensor:
            x = self[0](self.original)
        else:
            x = self[0](*(getattr(self, f"original{i}") for i in range(self.ntensors)))
        for module in list(self)[1:]:
            x = module(x)
        return x


def _inject_new_class(module: Module) -> None:
    """Gives ``module`` a class of its own, ``Parametrized<Class>`` (a subclass of its
    class), where the properties of its parametrized tensors can live."""
    cls = module.__class__

    def default_deepcopy(self, memo):
        # the class's own __getstate__ refuses (below), so deepcopy goes through __dict__
        replica = memo.get(id(self))
        if replica is not None:
            return replica
        replica = self.__new__(self.__class__)
        memo[id(self)] = replica
        replica.__dict__ = deepcopy(self.__dict__, memo)
        for slot in copyreg._slotnames(self.__class__):
            if hasattr(self, slot):
                setattr(replica, slot, deepcopy(getattr(self, slot), memo))
        return replica

    def getstate(self):
        raise RuntimeError(
            "Serialization of parametrized modules is only supported through state_dict(). "
            "See:\nhttps://pytorch.org/tutorials/beginner/saving_loading_models.html"
            "#saving-loading-a-general-checkpoint-for-inference-and-or-resuming-training"
        )

    namespace = {"__getstate__": getstate}
    if not hasattr(cls, "__deepcopy__"):
        namespace["__deepcopy__"] = default_deepcopy
    module.__class__ = type(f"Parametrized{cls.__name__}", (cls,), namespace)


def _inject_property(module: Module, tensor_name: str) -> None:
    """Adds to the module's (injected) class a property ``tensor_name`` that reads the
    parametrized value and whose setter runs ``right_inverse``."""
    if hasattr(module, tensor_name):
        raise AssertionError(f"Module already has an attribute named '{tensor_name}'")

    def get_parametrized(self):
        parametrization = self.parametrizations[tensor_name]
        if not _cache_enabled:
            return parametrization()
        key = (id(self), tensor_name)
        value = _cache.get(key)
        if value is None:
            value = parametrization()
            _cache[key] = value
        return value

    def set_original(self, value) -> None:
        self.parametrizations[tensor_name].right_inverse(value)

    setattr(module.__class__, tensor_name, property(get_parametrized, set_original))


def register_parametrization(module: Module, tensor_name: str, parametrization: Module, *,
                             unsafe: bool = False) -> Module:
    """Makes ``module.<tensor_name>`` read ``parametrization(original)``, where
    ``original`` is the former parameter or buffer, now kept (with its identity) in
    ``module.parametrizations[tensor_name].original``; gradients flow through
    ``parametrization`` into it. Registering again on the same name chains the
    parametrizations (``p2(p1(original))``). Returns ``module``.

    ``parametrization`` is a ``Module`` whose ``forward`` takes the tensor. An optional
    ``right_inverse(X)`` gives the initial unconstrained value (a tensor, or a sequence of
    tensors stored as ``original0``, ``original1``, ...) and makes ``module.<tensor_name>
    = X`` possible. The parametrization's training mode is set to the module's. With
    ``unsafe=False`` (default) the parametrization may not change the tensor's dtype or
    shape, and ``forward`` and ``right_inverse`` are called once to check it.

    Raises ``ValueError`` when ``module`` has no parameter, buffer or parametrized tensor
    named ``tensor_name``, or when the checks fail.

    >>> import ember_tensor as et
    >>> import ember_nn as nn
    >>> from ember_nn.utils import parametrize
    >>> class Symmetric(nn.Module):
    ...     def forward(self, X):
    ...         return X.triu() + X.triu(1).mT
    ...     def right_inverse(self, A):
    ...         return A.triu()
    >>> m = parametrize.register_parametrization(nn.Linear(3, 3), "weight", Symmetric())
    >>> A = et.ones(3, 3)
    >>> m.weight = A  # runs right_inverse
    >>> bool(et.allclose(m.weight, A))
    True
    >>> [name for name, _ in m.named_parameters()]
    ['bias', 'parametrizations.weight.original']
    """
    parametrization.train(module.training)
    if is_parametrized(module, tensor_name):
        if not unsafe:
            Y = getattr(module, tensor_name)
            X = parametrization(Y)
            if not isinstance(X, et.Tensor):
                raise ValueError(
                    f"A parametrization must return a tensor. Got {type(X).__name__}."
                )
            if X.dtype != Y.dtype:
                raise ValueError(
                    "Registering a parametrization may not change the dtype of the tensor, "
                    "unless the `unsafe` flag is enabled.\n"
                    f"module.{tensor_name}.dtype: {Y.dtype}\n"
                    f"parametrization(module.{tensor_name}).dtype: {X.dtype}"
                )
            if X.shape != Y.shape:
                raise ValueError(
                    "Registering a parametrization may not change the shape of the tensor, "
                    "unless the `unsafe` flag is enabled.\n"
                    f"module.{tensor_name}.shape: {Y.shape}\n"
                    f"parametrization(module.{tensor_name}).shape: {X.shape}"
                )
            if hasattr(parametrization, "right_inverse"):
                try:
                    Z = parametrization.right_inverse(X)
                except NotImplementedError:
                    pass
                else:
                    if not isinstance(Z, et.Tensor):
                        raise ValueError(
                            "parametrization.right_inverse must return a tensor. Got: "
                            f"{type(Z).__name__}"
                        )
                    if Z.dtype != Y.dtype:
                        raise ValueError(
                            "The tensor returned by parametrization.right_inverse must have "
                            f"the same dtype as module.{tensor_name}, unless the `unsafe` "
                            "flag is enabled.\n"
                            f"module.{tensor_name}.dtype: {Y.dtype}\n"
                            f"returned dtype: {Z.dtype}"
                        )
                    if Z.shape != Y.shape:
                        raise ValueError(
                            "The tensor returned by parametrization.right_inverse must have "
                            f"the same shape as module.{tensor_name}, unless the `unsafe` "
                            "flag is enabled.\n"
                            f"module.{tensor_name}.shape: {Y.shape}\n"
                            f"returned shape: {Z.shape}"
                        )
        plist = module.parametrizations[tensor_name]
        plist.append(parametrization)
        plist.unsafe |= unsafe
    elif tensor_name in module._buffers or tensor_name in module._parameters:
        original = getattr(module, tensor_name)
        plist = ParametrizationList([parametrization], original, unsafe=unsafe)
        delattr(module, tensor_name)
        if not is_parametrized(module):
            _inject_new_class(module)
            module.parametrizations = ModuleDict()
        _inject_property(module, tensor_name)
        module.parametrizations[tensor_name] = plist
    else:
        raise ValueError(
            f"Module '{module}' does not have a parameter, a buffer, or a parametrized "
            f"element with name '{tensor_name}'"
        )
    return module


def is_parametrized(module: Module, tensor_name: str | None = None) -> bool:
    """Whether ``module`` has a parametrization on ``tensor_name`` (with ``None``: on any
    tensor).

    >>> import ember_nn as nn
    >>> from ember_nn.utils import parametrize
    >>> parametrize.is_parametrized(nn.Linear(2, 2))
    False
    """
    parametrizations = getattr(module, "parametrizations", None)
    if parametrizations is None or not isinstance(parametrizations, ModuleDict):
        return False
    if tensor_name is None:
        return len(parametrizations) > 0
    return tensor_name in parametrizations


def remove_parametrizations(module: Module, tensor_name: str,
                            leave_parametrized: bool = True) -> Module:
    """Removes the parametrizations on ``module.<tensor_name>``, which becomes a plain
    parameter (or buffer) again: with ``leave_parametrized=True`` it keeps its current
    parametrized value, otherwise it is the unparametrized ``original``. When the tensor
    was a single ``original``, that same object is what the module holds afterwards.
    Once nothing is parametrized, the module gets its original class back. Returns
    ``module``.

    Raises ``ValueError`` when ``module.<tensor_name>`` is not parametrized, or with
    ``leave_parametrized=False`` when the parametrization depends on several tensors.

    >>> import ember_tensor as et
    >>> import ember_nn as nn
    >>> from ember_nn.utils import parametrize
    >>> class Double(nn.Module):
    ...     def forward(self, X):
    ...         return 2 * X
    >>> m = parametrize.register_parametrization(nn.Linear(2, 2), "weight", Double())
    >>> w = m.weight.detach().clone()
    >>> m = parametrize.remove_parametrizations(m, "weight")
    >>> type(m).__name__, bool(et.equal(m.weight, w)), isinstance(m.weight, nn.Parameter)
    ('Linear', True, True)
    """
    if not is_parametrized(module, tensor_name):
        raise ValueError(f"Module {module} does not have a parametrization on {tensor_name}")

    plist = module.parametrizations[tensor_name]
    if plist.is_tensor:
        original = plist.original
        if leave_parametrized:
            with no_grad():
                t = getattr(module, tensor_name)
                _maybe_set(original, t)
    else:
        if not leave_parametrized:
            raise ValueError(
                "Cannot leave unparametrized (`leave_parametrized=False`) a tensor that is "
                "parametrized in terms of a sequence of tensors."
            )
        t = getattr(module, tensor_name)
        # a fresh Parameter when the value requires grad (from the originals), else a buffer
        original = Parameter(t.detach()) if t.requires_grad else t

    delattr(module.__class__, tensor_name)
    del module.parametrizations[tensor_name]
    _register_parameter_or_buffer(module, tensor_name, original)

    if not is_parametrized(module):
        delattr(module, "parametrizations")
        module.__class__ = module.__class__.__bases__[0]
    return module


def type_before_parametrizations(module: Module) -> type:
    """The module's class as it was before any parametrization (its class when it has
    none).

    >>> import ember_nn as nn
    >>> from ember_nn.utils import parametrize
    >>> class Double(nn.Module):
    ...     def forward(self, X):
    ...         return 2 * X
    >>> m = parametrize.register_parametrization(nn.Linear(2, 2), "weight", Double())
    >>> type(m).__name__, parametrize.type_before_parametrizations(m).__name__
    ('ParametrizedLinear', 'Linear')
    """
    if is_parametrized(module):
        return module.__class__.__bases__[0]
    return type(module)


def transfer_parametrizations_and_params(from_module: Module, to_module: Module,
                                         tensor_name: str | None = None) -> Module:
    """Registers on ``to_module`` the parametrizations of ``from_module`` (those of
    ``tensor_name``, or all of them) and makes it share ``from_module``'s original
    tensors; a name ``to_module`` lacks is first created as a Parameter holding
    ``from_module``'s parametrized value. Does nothing when ``from_module`` is not
    parametrized. Returns ``to_module``.

    >>> import ember_nn as nn
    >>> from ember_nn.utils import parametrize
    >>> class Double(nn.Module):
    ...     def forward(self, X):
    ...         return 2 * X
    >>> a = parametrize.register_parametrization(nn.Linear(2, 2), "weight", Double())
    >>> b = parametrize.transfer_parametrizations_and_params(a, nn.Linear(2, 2))
    >>> b.parametrizations.weight.original is a.parametrizations.weight.original
    True
    """
    if is_parametrized(from_module):
        names = list(from_module.parametrizations) if tensor_name is None else [tensor_name]
        for name in names:
            if not hasattr(to_module, name):
                setattr(to_module, name, Parameter(getattr(from_module, name)))
            source = from_module.parametrizations[name]
            for parametrization in source:
                register_parametrization(to_module, name, parametrization)
            target = to_module.parametrizations[name]
            if hasattr(source, "original"):
                target.original = source.original
            else:
                i = 0
                while hasattr(source, f"original{i}"):
                    setattr(target, f"original{i}", getattr(source, f"original{i}"))
                    i += 1
    return to_module
