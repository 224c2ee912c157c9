"""``ember.nn.utils.prune``: pruning of parameters with masks (PyTorch's
``torch.nn.utils.prune``).

Pruning ``module.<name>`` moves the parameter to ``<name>_orig``, adds a buffer
``<name>_mask`` (1 keeps an entry, 0 prunes it) and a forward pre-hook that sets the plain
attribute ``module.<name> = <name>_orig * <name>_mask`` before each forward. Pruning the
same tensor again combines the masks (a ``PruningContainer``); ``remove`` makes the pruned
values permanent.

>>> import ember_tensor as et
>>> import ember_nn as nn
>>> from ember_nn.utils import prune
>>> m = prune.l1_unstructured(nn.Linear(4, 3), name="weight", amount=0.5)
>>> sorted(m.state_dict())
['bias', 'weight_mask', 'weight_orig']
>>> int(m.weight_mask.sum()), prune.is_pruned(m)
(6, True)
>>> m = prune.remove(m, "weight")
>>> sorted(m.state_dict()), int((m.weight == 0).sum())
(['bias', 'weight'], 6)
"""

from __future__ import annotations

import numbers
from abc import ABC, abstractmethod
from collections.abc import Iterable

import ember_tensor as et

from .convert_parameters import parameters_to_vector

__all__ = [
    "BasePruningMethod",
    "CustomFromMask",
    "Identity",
    "L1Unstructured",
    "LnStructured",
    "PruningContainer",
    "RandomStructured",
    "RandomUnstructured",
    "custom_from_mask",
    "global_unstructured",
    "identity",
    "is_pruned",
    "l1_unstructured",
    "ln_structured",
    "random_structured",
    "random_unstructured",
    "remove",
]


class BasePruningMethod(ABC):
    """The base class of pruning methods: a subclass defines ``compute_mask(t,
    default_mask)`` (and ``PRUNING_TYPE``: ``"unstructured"``, ``"structured"`` with a
    ``dim`` attribute, or ``"global"``). An instance is the forward pre-hook that
    recomputes the pruned tensor."""

    _tensor_name: str

    def __call__(self, module, inputs) -> None:
        """The forward pre-hook: ``module.<name> = <name>_orig * <name>_mask``."""
        setattr(module, self._tensor_name, self.apply_mask(module))

    @abstractmethod
    def compute_mask(self, t, default_mask):
        """The new mask of ``t``, given the mask of earlier prunings ``default_mask`` (same
        shape as ``t``; 1 keeps an entry, 0 prunes it)."""

    def apply_mask(self, module):
        """``<name>_orig * <name>_mask`` of ``module`` (the mask cast to the dtype)."""
        if self._tensor_name is None:
            raise AssertionError(f"Module {module} has to be pruned")
        mask = getattr(module, self._tensor_name + "_mask")
        orig = getattr(module, self._tensor_name + "_orig")
        return mask.to(dtype=orig.dtype) * orig

    @classmethod
    def apply(cls, module, name, *args, importance_scores=None, **kwargs):
        """Prunes ``module.<name>`` with ``cls(*args, **kwargs)`` (combined with an earlier
        pruning of the same tensor in a ``PruningContainer``), computing the mask from
        ``importance_scores`` (same shape as the parameter; the parameter itself by
        default). Returns the method (or the container) registered as the hook. When
        computing the mask fails the module is left as it was."""

        def composite_method():
            old_method = None
            found = 0
            hooks_to_remove = []
            for k, hook in module._forward_pre_hooks.items():
                if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
                    old_method = hook
                    hooks_to_remove.append(k)
                    found += 1
            if found > 1:
                raise AssertionError(
                    "Avoid adding multiple pruning hooks to the same tensor "
                    f"{name} of module {module}. Use a PruningContainer."
                )
            for k in hooks_to_remove:
                del module._forward_pre_hooks[k]
            method = cls(*args, **kwargs)
            method._tensor_name = name
            if old_method is not None:
                if isinstance(old_method, PruningContainer):
                    old_method.add_pruning_method(method)
                    method = old_method
                else:
                    container = PruningContainer(old_method)
                    container.add_pruning_method(method)
                    method = container
            return method

        method = composite_method()
        orig = getattr(module, name)
        if importance_scores is not None:
            if importance_scores.shape != orig.shape:
                raise AssertionError(
                    f"importance_scores should have the same shape as parameter {name} of "
                    f"{module}, got {importance_scores.shape} vs {orig.shape}"
                )
        else:
            importance_scores = orig

        if not isinstance(method, PruningContainer):
            # first pruning of this tensor: the parameter moves to <name>_orig
            module.register_parameter(name + "_orig", orig)
            del module._parameters[name]
            default_mask = et.ones_like(orig)
        else:
            default_mask = getattr(module, name + "_mask").detach().clone()

        try:
            mask = method.compute_mask(importance_scores, default_mask=default_mask)
            module.register_buffer(name + "_mask", mask)
            setattr(module, name, method.apply_mask(module))
            module.register_forward_pre_hook(method)
        except Exception:
            if not isinstance(method, PruningContainer):
                orig = getattr(module, name + "_orig")
                module.register_parameter(name, orig)
                del module._parameters[name + "_orig"]
            raise
        return method

    def prune(self, t, default_mask=None, importance_scores=None):
        """``t`` times the mask this method computes (from ``importance_scores`` when
        given), without any module."""
        if importance_scores is not None:
            if importance_scores.shape != t.shape:
                raise AssertionError(
                    "importance_scores should have the same shape as tensor t, got "
                    f"{importance_scores.shape} vs {t.shape}"
                )
        else:
            importance_scores = t
        default_mask = default_mask if default_mask is not None else et.ones_like(t)
        return t * self.compute_mask(importance_scores, default_mask=default_mask)

    def remove(self, module) -> None:
        """Makes the pruning permanent: the parameter ``<name>_orig`` (the same object)
        takes the pruned values and becomes ``<name>`` again; the mask goes."""
        if self._tensor_name is None:
            raise AssertionError(
                f"Module {module} has to be pruned before pruning can be removed"
            )
        weight = self.apply_mask(module)
        if hasattr(module, self._tensor_name):
            delattr(module, self._tensor_name)
        orig = module._parameters[self._tensor_name + "_orig"]
        orig.data = weight.detach()
        del module._parameters[self._tensor_name + "_orig"]
        del module._buffers[self._tensor_name + "_mask"]
        setattr(module, self._tensor_name, orig)


class PruningContainer(BasePruningMethod):
    """A sequence of pruning methods applied one after the other to the same tensor; the
    mask of the last one is computed on the entries the earlier ones kept (for
    ``"structured"`` methods: on the channels that still have an unpruned entry)."""

    def __init__(self, *args) -> None:
        self._pruning_methods: tuple = ()
        if len(args) == 1:
            self._tensor_name = args[0]._tensor_name
            self.add_pruning_method(args[0])
        else:
            for method in args:
                self.add_pruning_method(method)

    def add_pruning_method(self, method) -> None:
        """Appends ``method`` (a ``BasePruningMethod`` on the same tensor name)."""
        if not isinstance(method, BasePruningMethod) and method is not None:
            raise TypeError(f"{type(method)} is not a BasePruningMethod subclass")
        if method is not None and self._tensor_name != method._tensor_name:
            raise ValueError(
                "Can only add pruning methods acting on the parameter named "
                f"'{self._tensor_name}' to PruningContainer {self}. "
                f"Found '{method._tensor_name}'"
            )
        self._pruning_methods += (method,)

    def __len__(self) -> int:
        return len(self._pruning_methods)

    def __iter__(self):
        return iter(self._pruning_methods)

    def __getitem__(self, idx):
        return self._pruning_methods[idx]

    def compute_mask(self, t, default_mask):
        """The new mask: the last method's ``compute_mask`` applied to the part of ``t``
        that ``default_mask`` still keeps, written into a copy of ``default_mask``."""
        method = self._pruning_methods[-1]
        mask = default_mask
        new_mask = mask.to(dtype=t.dtype)
        if method.PRUNING_TYPE == "unstructured":
            slc = mask == 1
        elif method.PRUNING_TYPE == "structured":
            if not hasattr(method, "dim"):
                raise AttributeError(
                    'Pruning methods of PRUNING_TYPE "structured" need to have the '
                    "attribute `dim` defined."
                )
            n_dims = t.dim()
            dim = method.dim
            if dim < 0:
                dim = n_dims + dim
            if dim < 0:
                raise IndexError(f"Index is out of bounds for tensor with dimensions {n_dims}")
            # the channels along dim that still have an unpruned entry
            keep_channel = mask.sum(dim=[d for d in range(n_dims) if d != dim]) != 0
            slc = [slice(None)] * n_dims
            slc[dim] = keep_channel
            slc = tuple(slc)
        elif method.PRUNING_TYPE == "global":
            slc = tuple([slice(None)] * len(t.shape))
        else:
            raise ValueError(f"Unrecognized PRUNING_TYPE {method.PRUNING_TYPE}")
        partial_mask = method.compute_mask(t[slc], default_mask=mask[slc])
        if new_mask is mask:
            new_mask = mask.clone()
        new_mask[slc] = partial_mask.to(dtype=new_mask.dtype)
        return new_mask


class Identity(BasePruningMethod):
    """Prunes nothing: the mask is all ones (for code that expects a pruned tensor)."""

    PRUNING_TYPE = "unstructured"

    def compute_mask(self, t, default_mask):
        return default_mask

    @classmethod
    def apply(cls, module, name):
        """Adds the pruning reparametrization to ``module.<name>`` with an all-ones
        mask."""
        return super().apply(module, name)


class RandomUnstructured(BasePruningMethod):
    """Prunes ``amount`` entries (an int) or that fraction of them (a float in [0, 1]),
    chosen at random among those not pruned yet."""

    PRUNING_TYPE = "unstructured"

    def __init__(self, amount) -> None:
        _validate_pruning_amount_init(amount)
        self.amount = amount

    def compute_mask(self, t, default_mask):
        tensor_size = t.nelement()
        nparams_toprune = _compute_nparams_toprune(self.amount, tensor_size)
        _validate_pruning_amount(nparams_toprune, tensor_size)
        mask = default_mask.clone()
        if nparams_toprune != 0:
            prob = et.rand_like(t)
            topk = et.topk(prob.reshape(-1), k=nparams_toprune)
            mask.view(-1)[topk.indices] = 0
        return mask

    @classmethod
    def apply(cls, module, name, amount):
        """Prunes ``module.<name>`` at random (see the class)."""
        return super().apply(module, name, amount=amount)


class L1Unstructured(BasePruningMethod):
    """Prunes the ``amount`` entries (an int) or that fraction of them (a float in
    [0, 1]) of smallest absolute value."""

    PRUNING_TYPE = "unstructured"

    def __init__(self, amount) -> None:
        _validate_pruning_amount_init(amount)
        self.amount = amount

    def compute_mask(self, t, default_mask):
        tensor_size = t.nelement()
        nparams_toprune = _compute_nparams_toprune(self.amount, tensor_size)
        _validate_pruning_amount(nparams_toprune, tensor_size)
        mask = default_mask.clone()
        if nparams_toprune != 0:
            topk = et.topk(et.abs(t).reshape(-1), k=nparams_toprune, largest=False)
            mask.view(-1)[topk.indices] = 0
        return mask

    @classmethod
    def apply(cls, module, name, amount, importance_scores=None):
        """Prunes the smallest entries of ``module.<name>`` (of ``importance_scores`` when
        given)."""
        return super().apply(module, name, amount=amount, importance_scores=importance_scores)


class RandomStructured(BasePruningMethod):
    """Prunes ``amount`` whole channels (an int) or that fraction of them (a float in
    [0, 1]) along ``dim``, chosen at random."""

    PRUNING_TYPE = "structured"

    def __init__(self, amount, dim: int = -1) -> None:
        _validate_pruning_amount_init(amount)
        self.amount = amount
        self.dim = dim

    def compute_mask(self, t, default_mask):
        """Raises ``ValueError`` for a tensor of fewer than 2 dimensions or an ``amount``
        larger than the number of channels, ``IndexError`` for a ``dim`` out of range."""
        _validate_structured_pruning(t)
        _validate_pruning_dim(t, self.dim)
        tensor_size = t.shape[self.dim]
        nparams_toprune = _compute_nparams_toprune(self.amount, tensor_size)
        _validate_pruning_amount(nparams_toprune, tensor_size)
        if nparams_toprune == 0:
            return default_mask
        prob = et.rand(tensor_size)
        threshold = et.kthvalue(prob, k=nparams_toprune).values
        channel_mask = prob > threshold
        mask = et.zeros_like(t)
        slc = [slice(None)] * len(t.shape)
        slc[self.dim] = channel_mask
        mask[tuple(slc)] = 1
        mask *= default_mask.to(dtype=mask.dtype)
        return mask

    @classmethod
    def apply(cls, module, name, amount, dim=-1):
        """Prunes random channels of ``module.<name>`` along ``dim``."""
        return super().apply(module, name, amount=amount, dim=dim)


class LnStructured(BasePruningMethod):
    """Prunes the ``amount`` channels (an int) or that fraction of them (a float in
    [0, 1]) along ``dim`` of smallest ``n``-norm (``n`` as ``ember.norm``'s ``p``: a
    number, ``inf``, ``-inf``, ``"fro"`` or ``"nuc"``)."""

    PRUNING_TYPE = "structured"

    def __init__(self, amount, n, dim: int = -1) -> None:
        _validate_pruning_amount_init(amount)
        self.amount = amount
        self.n = n
        self.dim = dim

    def compute_mask(self, t, default_mask):
        """Raises ``ValueError`` for a tensor of fewer than 2 dimensions or an ``amount``
        larger than the number of channels, ``IndexError`` for a ``dim`` out of range."""
        _validate_structured_pruning(t)
        _validate_pruning_dim(t, self.dim)
        tensor_size = t.shape[self.dim]
        nparams_toprune = _compute_nparams_toprune(self.amount, tensor_size)
        nparams_tokeep = tensor_size - nparams_toprune
        _validate_pruning_amount(nparams_toprune, tensor_size)
        norm = _compute_norm(t, self.n, self.dim)
        topk = et.topk(norm, k=nparams_tokeep, largest=True)
        if nparams_toprune == 0:
            return default_mask
        mask = et.zeros_like(t)
        slc = [slice(None)] * len(t.shape)
        slc[self.dim] = topk.indices
        mask[tuple(slc)] = 1
        mask *= default_mask.to(dtype=mask.dtype)
        return mask

    @classmethod
    def apply(cls, module, name, amount, n, dim, importance_scores=None):
        """Prunes the channels of ``module.<name>`` (of ``importance_scores`` when given)
        of smallest ``n``-norm along ``dim``."""
        return super().apply(module, name, amount=amount, n=n, dim=dim,
                             importance_scores=importance_scores)


class CustomFromMask(BasePruningMethod):
    """Prunes with a given ``mask`` (same shape as the tensor)."""

    PRUNING_TYPE = "global"

    def __init__(self, mask) -> None:
        self.mask = mask

    def compute_mask(self, t, default_mask):
        if default_mask.shape != self.mask.shape:
            raise AssertionError(
                f"default_mask shape {default_mask.shape} must match self.mask shape "
                f"{self.mask.shape}"
            )
        return default_mask * self.mask.to(dtype=default_mask.dtype)

    @classmethod
    def apply(cls, module, name, mask):
        """Prunes ``module.<name>`` with ``mask``."""
        return super().apply(module, name, mask=mask)


def identity(module, name):
    """Adds the pruning reparametrization (``<name>_orig``, ``<name>_mask``) to
    ``module.<name>`` with an all-ones mask. Returns ``module``.

    >>> import ember_nn as nn
    >>> from ember_nn.utils import prune
    >>> m = prune.identity(nn.Linear(2, 3), "bias")
    >>> m.bias_mask.tolist()
    [1.0, 1.0, 1.0]
    """
    Identity.apply(module, name)
    return module


def random_unstructured(module, name, amount):
    """Prunes ``amount`` entries of ``module.<name>`` (an int, or a float in [0, 1]: that
    fraction, rounded) chosen at random among the unpruned ones. Returns ``module``.

    Raises ``TypeError`` for an ``amount`` that is not a number, ``ValueError`` for a
    negative ``amount``, a float above 1 or an int above the number of entries.

    >>> import ember_nn as nn
    >>> from ember_nn.utils import prune
    >>> m = prune.random_unstructured(nn.Linear(2, 3), "weight", amount=1)
    >>> int((m.weight_mask == 0).sum())
    1
    """
    RandomUnstructured.apply(module, name, amount)
    return module


def l1_unstructured(module, name, amount, importance_scores=None):
    """Prunes the ``amount`` entries of ``module.<name>`` (an int, or a float in [0, 1]:
    that fraction, rounded) of smallest absolute value (of ``importance_scores``, same
    shape, when given), among the unpruned ones. Returns ``module``.

    Raises ``TypeError`` for an ``amount`` that is not a number, ``ValueError`` for a
    negative ``amount``, a float above 1 or an int above the number of entries.

    >>> import ember_tensor as et
    >>> import ember_nn as nn
    >>> from ember_nn.utils import prune
    >>> m = nn.Linear(3, 1)
    >>> m.weight = nn.Parameter(et.tensor([[0.5, -0.1, 2.0]]))
    >>> prune.l1_unstructured(m, "weight", amount=1).weight.tolist()
    [[0.5, -0.0, 2.0]]
    """
    L1Unstructured.apply(module, name, amount=amount, importance_scores=importance_scores)
    return module


def random_structured(module, name, amount, dim):
    """Prunes ``amount`` channels (an int, or a float in [0, 1]: that fraction) of
    ``module.<name>`` along ``dim``, chosen at random. Returns ``module``.

    >>> import ember_nn as nn
    >>> from ember_nn.utils import prune
    >>> m = prune.random_structured(nn.Linear(4, 3), "weight", amount=1, dim=0)
    >>> (m.weight_mask.sum(dim=1) == 0).sum().item()
    1
    """
    RandomStructured.apply(module, name, amount, dim)
    return module


def ln_structured(module, name, amount, n, dim, importance_scores=None):
    """Prunes the ``amount`` channels (an int, or a float in [0, 1]: that fraction) of
    ``module.<name>`` along ``dim`` with the smallest ``n``-norm (of
    ``importance_scores`` when given). Returns ``module``.

    >>> import ember_tensor as et
    >>> import ember_nn as nn
    >>> from ember_nn.utils import prune
    >>> m = nn.Linear(2, 3)
    >>> m.weight = nn.Parameter(et.tensor([[1.0, 1.0], [0.1, 0.1], [3.0, 0.0]]))
    >>> prune.ln_structured(m, "weight", amount=1, n=2, dim=0).weight_mask.tolist()
    [[1.0, 1.0], [0.0, 0.0], [1.0, 1.0]]
    """
    LnStructured.apply(module, name, amount, n, dim, importance_scores=importance_scores)
    return module


def global_unstructured(parameters, pruning_method, importance_scores=None, **kwargs) -> None:
    """Prunes the ``(module, name)`` pairs of ``parameters`` together, as if they were one
    tensor: ``pruning_method`` (an ``"unstructured"`` class such as ``L1Unstructured``,
    built with ``**kwargs``) picks the entries over all of them (by
    ``importance_scores[(module, name)]`` when given). Each tensor gets a
    ``CustomFromMask`` pruning with its part of the mask.

    Raises ``TypeError`` when ``parameters`` is not iterable, ``importance_scores`` not a
    dict or the method not ``"unstructured"``.

    >>> import ember_tensor as et
    >>> import ember_nn as nn
    >>> from ember_nn.utils import prune
    >>> a, b = nn.Linear(2, 1), nn.Linear(2, 1)
    >>> a.weight = nn.Parameter(et.tensor([[1.0, 4.0]]))
    >>> b.weight = nn.Parameter(et.tensor([[3.0, 2.0]]))
    >>> prune.global_unstructured([(a, "weight"), (b, "weight")],
    ...                           pruning_method=prune.L1Unstructured, amount=2)
    >>> a.weight_mask.tolist(), b.weight_mask.tolist()
    ([[0.0, 1.0]], [[1.0, 0.0]])
    """
    if not isinstance(parameters, Iterable):
        raise TypeError("global_unstructured(): parameters is not an Iterable")
    importance_scores = importance_scores if importance_scores is not None else {}
    if not isinstance(importance_scores, dict):
        raise TypeError("global_unstructured(): importance_scores must be of type dict")
    parameters = list(parameters)
    relevant_importance_scores = parameters_to_vector(
        [importance_scores.get((module, name), getattr(module, name))
         for module, name in parameters]
    )
    default_mask = parameters_to_vector(
        [getattr(module, name + "_mask", et.ones_like(getattr(module, name)))
         for module, name in parameters]
    )
    container = PruningContainer()
    container._tensor_name = "temp"
    method = pruning_method(**kwargs)
    method._tensor_name = "temp"
    if method.PRUNING_TYPE != "unstructured":
        raise TypeError(
            'Only "unstructured" PRUNING_TYPE supported for the `pruning_method`. Found '
            f"method {pruning_method} of type {method.PRUNING_TYPE}"
        )
    container.add_pruning_method(method)
    final_mask = container.compute_mask(relevant_importance_scores, default_mask)
    pointer = 0
    for module, name in parameters:
        param = getattr(module, name)
        num_param = param.numel()
        param_mask = final_mask[pointer:pointer + num_param].view_as(param)
        custom_from_mask(module, name, mask=param_mask)
        pointer += num_param


def custom_from_mask(module, name, mask):
    """Prunes ``module.<name>`` with ``mask`` (same shape; combined with an earlier mask).
    Returns ``module``.

    >>> import ember_tensor as et
    >>> import ember_nn as nn
    >>> from ember_nn.utils import prune
    >>> m = prune.custom_from_mask(nn.Linear(5, 3), "bias", mask=et.tensor([0, 1, 0]))
    >>> m.bias_mask.tolist()
    [0.0, 1.0, 0.0]
    """
    CustomFromMask.apply(module, name, mask)
    return module


def remove(module, name):
    """Makes the pruning of ``module.<name>`` permanent: the parameter (the former
    ``<name>_orig``, same object) holds the pruned values; ``<name>_mask`` and the hook
    go. Returns ``module``.

    Raises ``ValueError`` when ``module.<name>`` is not pruned.

    >>> import ember_nn as nn
    >>> from ember_nn.utils import prune
    >>> m = prune.remove(prune.random_unstructured(nn.Linear(5, 7), "weight", 3), "weight")
    >>> sorted(m.state_dict()), int((m.weight == 0).sum())
    (['bias', 'weight'], 3)
    """
    for k, hook in module._forward_pre_hooks.items():
        if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            return module
    raise ValueError(
        f"Parameter '{name}' of module {module} has to be pruned before pruning can be "
        "removed"
    )


def is_pruned(module) -> bool:
    """Whether ``module`` or one of its submodules has a pruning hook.

    >>> import ember_nn as nn
    >>> from ember_nn.utils import prune
    >>> m = nn.Sequential(nn.Linear(2, 2), nn.Linear(2, 2))
    >>> prune.is_pruned(m)
    False
    >>> _ = prune.identity(m[1], "weight")
    >>> prune.is_pruned(m)
    True
    """
    for _, submodule in module.named_modules():
        for hook in submodule._forward_pre_hooks.values():
            if isinstance(hook, BasePruningMethod):
                return True
    return False


def _validate_pruning_amount_init(amount) -> None:
    """``amount`` is a non-negative int or a float in [0, 1]."""
    if not isinstance(amount, numbers.Real):
        raise TypeError(f"Invalid type for amount: {amount}. Must be int or float.")
    if (isinstance(amount, numbers.Integral) and amount < 0) or (
        not isinstance(amount, numbers.Integral)
        and (float(amount) > 1.0 or float(amount) < 0.0)
    ):
        raise ValueError(
            f"amount={amount} should either be a float in the range [0, 1] or a "
            "non-negative integer"
        )


def _validate_pruning_amount(amount, tensor_size) -> None:
    """An int ``amount`` is at most ``tensor_size``."""
    if isinstance(amount, numbers.Integral) and amount > tensor_size:
        raise ValueError(
            f"amount={amount} should be smaller than the number of parameters to "
            f"prune={tensor_size}"
        )


def _validate_structured_pruning(t) -> None:
    shape = t.shape
    if len(shape) <= 1:
        raise ValueError(
            "Structured pruning can only be applied to multidimensional tensors. Found "
            f"tensor of shape {shape} with {len(shape)} dims"
        )


def _compute_nparams_toprune(amount, tensor_size):
    """An int ``amount`` as is; a float one as that fraction of ``tensor_size``,
    rounded."""
    if isinstance(amount, numbers.Integral):
        return amount
    return round(amount * tensor_size)


def _validate_pruning_dim(t, dim) -> None:
    if dim >= t.dim():
        raise IndexError(f"Invalid index {dim} for tensor of size {t.shape}")


def _compute_norm(t, n, dim):
    """The ``n``-norm of each slice of ``t`` along ``dim`` (a 1-d tensor)."""
    dims = list(range(t.dim()))
    if dim < 0:
        dim = dims[dim]
    dims.remove(dim)
    return et.norm(t, p=n, dim=dims)
