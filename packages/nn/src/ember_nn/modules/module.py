"""``Module``: the base class of every layer and model, with PyTorch's contract.

A module's state lives in three ordered dicts: ``_parameters``, ``_buffers`` and
``_modules``. Assigning a ``Parameter``, a ``Buffer`` or a ``Module`` to an attribute
registers it there; reading the attribute reads it back. Everything else about a module
(iteration over members, ``state_dict``, hooks, dtype and device moves) is built on those
three dicts; the hooks, the state-dict machinery and the moves live in helper modules
(``_hooks``, ``_state``, ``_convert``) so that this class stays a readable summary.
"""

from __future__ import annotations

import functools
import inspect
from collections import OrderedDict

import ember_tensor as et

from ..parameter import Buffer, Parameter
from ..utils.hooks import RemovableHandle
from . import _convert, _hooks, _state
from ._state import _IncompatibleKeys

__all__ = ["Module"]


def _typename(obj) -> str:
    """PyTorch's ``typename``: ``ember.FloatTensor`` for a tensor, the qualified class name
    otherwise."""
    if isinstance(obj, et.Tensor):
        names = {"float32": "Float", "float64": "Double", "float16": "Half",
                 "bfloat16": "BFloat16", "int64": "Long", "int32": "Int", "int16": "Short",
                 "int8": "Char", "uint8": "Byte", "bool": "Bool"}
        kind = names.get(str(obj.dtype).rsplit(".", 1)[-1], "")
        return f"ember.{kind}Tensor"
    cls = type(obj)
    module = cls.__module__
    if module in (None, "builtins"):
        return cls.__qualname__
    return f"{module}.{cls.__qualname__}"


def _addindent(text: str, spaces: int) -> str:
    """Every line but the first indented by ``spaces`` (blank lines stay blank)."""
    lines = text.split("\n")
    if len(lines) == 1:
        return text
    first, rest = lines[0], lines[1:]
    return "\n".join([first] + [(" " * spaces + line) if line.strip() else "" for line in rest])


class Module:
    """Base class of all neural-network modules. Subclasses call ``super().__init__()``
    first, assign their parameters, buffers and submodules as attributes, and define
    ``forward``; calling the module runs ``forward`` with the module's hooks around it.

    >>> import ember_tensor as et
    >>> from ember_nn import Module, Parameter
    >>> class Scale(Module):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.weight = Parameter(et.ones(3))
    ...     def forward(self, x):
    ...         return x * self.weight
    >>> [name for name, _ in Scale().named_parameters()]
    ['weight']
    """

    dump_patches: bool = False
    _version: int = 1
    training: bool
    call_super_init: bool = False

    def __init__(self, *args, **kwargs) -> None:
        if not self.call_super_init and kwargs:
            raise TypeError(
                f"{type(self).__name__}.__init__() got an unexpected keyword argument "
                f"'{next(iter(kwargs))}'"
            )
        if not self.call_super_init and args:
            raise TypeError(
                f"{type(self).__name__}.__init__() takes 1 positional argument but "
                f"{len(args) + 1} were given"
            )
        setattr_ = super().__setattr__
        setattr_("training", True)
        setattr_("_parameters", {})
        setattr_("_buffers", {})
        setattr_("_non_persistent_buffers_set", set())
        setattr_("_backward_pre_hooks", OrderedDict())
        setattr_("_backward_hooks", OrderedDict())
        setattr_("_forward_hooks", OrderedDict())
        setattr_("_forward_hooks_with_kwargs", OrderedDict())
        setattr_("_forward_hooks_always_called", OrderedDict())
        setattr_("_forward_pre_hooks", OrderedDict())
        setattr_("_forward_pre_hooks_with_kwargs", OrderedDict())
        setattr_("_state_dict_hooks", OrderedDict())
        setattr_("_state_dict_pre_hooks", OrderedDict())
        setattr_("_load_state_dict_pre_hooks", OrderedDict())
        setattr_("_load_state_dict_post_hooks", OrderedDict())
        setattr_("_modules", {})
        if self.call_super_init:
            super().__init__(*args, **kwargs)

    def forward(self, *args, **kwargs):
        """The computation of the module; every subclass defines it."""
        raise NotImplementedError(
            f'Module [{type(self).__name__}] is missing the required "forward" function'
        )

    # ------------------------------------------------------------------ calling

    def __call__(self, *args, **kwargs):
        if (
            self._forward_pre_hooks
            or self._forward_hooks
            or self._backward_hooks
            or self._backward_pre_hooks
        ):
            return _hooks.call_with_hooks(self, args, kwargs)
        return self.forward(*args, **kwargs)

    # ------------------------------------------------------------------ registration

    def register_buffer(self, name: str, tensor, persistent: bool = True) -> None:
        """Adds a buffer: module state that is not a parameter (a running mean, say).
        Persistent buffers are part of ``state_dict()``; ``None`` registers the name
        without a tensor."""
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError(f"buffer name should be a string. Got {_typename(name)}")
        if "." in name:
            raise KeyError('buffer name can\'t contain "."')
        if name == "":
            raise KeyError('buffer name can\'t be empty string ""')
        if hasattr(self, name) and name not in self._buffers:
            raise KeyError(f"attribute '{name}' already exists")
        if tensor is not None and not isinstance(tensor, et.Tensor):
            raise TypeError(
                f"cannot assign '{_typename(tensor)}' object to buffer '{name}' "
                "(ember Tensor or None required)"
            )
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def register_parameter(self, name: str, param) -> None:
        """Adds a parameter (a ``Parameter`` or ``None``) under ``name``."""
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError(f"parameter name should be a string. Got {_typename(name)}")
        if "." in name:
            raise KeyError('parameter name can\'t contain "."')
        if name == "":
            raise KeyError('parameter name can\'t be empty string ""')
        if hasattr(self, name) and name not in self._parameters:
            raise KeyError(f"attribute '{name}' already exists")
        if param is None:
            self._parameters[name] = None
        elif not isinstance(param, Parameter):
            raise TypeError(
                f"cannot assign '{_typename(param)}' object to parameter '{name}' "
                "(ember.nn.Parameter or None required)"
            )
        elif param.grad_fn is not None:
            raise ValueError(
                f"Cannot assign non-leaf Tensor to parameter '{name}'. Model parameters "
                f"must be created explicitly. To express '{name}' as a function of another "
                "Tensor, compute the value in the forward() method."
            )
        else:
            self._parameters[name] = param

    def add_module(self, name: str, module) -> None:
        """Adds a child module (or ``None``) under ``name``."""
        if not isinstance(module, Module) and module is not None:
            raise TypeError(f"{_typename(module)} is not a Module subclass")
        if not isinstance(name, str):
            raise TypeError(f"module name should be a string. Got {_typename(name)}")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        if "." in name:
            raise KeyError(f'module name can\'t contain ".", got: {name}')
        if name == "":
            raise KeyError('module name can\'t be empty string ""')
        self._modules[name] = module

    def register_module(self, name: str, module) -> None:
        """Same as ``add_module``."""
        self.add_module(name, module)

    def get_submodule(self, target: str) -> Module:
        """The submodule at the dotted path ``target`` (``""`` is the module itself)."""
        if target == "":
            return self
        mod = self
        for item in target.split("."):
            if not hasattr(mod, item):
                raise AttributeError(mod._get_name() + " has no attribute `" + item + "`")
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                raise AttributeError("`" + item + "` is not an nn.Module")
        return mod

    def set_submodule(self, target: str, module: Module, strict: bool = False) -> None:
        """Replaces (or, unless ``strict``, adds) the submodule at the dotted path."""
        if target == "":
            raise ValueError("Cannot set the submodule without a target name!")
        if not isinstance(module, Module):
            raise ValueError(f"`module` is not an nn.Module, found {type(module)}")
        parent_path, _, name = target.rpartition(".")
        parent = self.get_submodule(parent_path)
        if strict and not hasattr(parent, name):
            raise AttributeError(parent._get_name() + " has no attribute `" + name + "`")
        if hasattr(parent, name) and not isinstance(getattr(parent, name), Module):
            raise AttributeError("`" + name + "` is not an nn.Module")
        setattr(parent, name, module)

    def get_parameter(self, target: str) -> Parameter:
        """The parameter at the dotted path ``target``."""
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, name):
            raise AttributeError(mod._get_name() + " has no attribute `" + name + "`")
        param = getattr(mod, name)
        if not isinstance(param, Parameter):
            raise AttributeError("`" + name + "` is not an nn.Parameter")
        return param

    def get_buffer(self, target: str):
        """The buffer at the dotted path ``target``."""
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, name):
            raise AttributeError(mod._get_name() + " has no attribute `" + name + "`")
        buf = getattr(mod, name)
        if name not in mod._buffers:
            raise AttributeError("`" + name + "` is not a buffer")
        return buf

    def get_extra_state(self):
        """Extra state saved in ``state_dict()`` under ``<prefix>_extra_state``: define it
        (with ``set_extra_state``) in a subclass that has such state."""
        raise RuntimeError(
            "Reached a code path in Module.get_extra_state() that should never be called."
        )

    def set_extra_state(self, state) -> None:
        """Restores what ``get_extra_state`` returned (see there)."""
        raise RuntimeError(
            "Reached a code path in Module.set_extra_state() that should never be called."
        )

    # ------------------------------------------------------------------ attributes

    def __getattr__(self, name: str):
        d = self.__dict__
        for store in ("_parameters", "_buffers", "_modules"):
            members = d.get(store)
            if members is not None and name in members:
                return members[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name: str, value) -> None:
        d = self.__dict__

        def remove_from(*stores) -> None:
            for store in stores:
                if name in store:
                    if isinstance(store, dict):
                        del store[name]
                    else:
                        store.discard(name)

        params = d.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            remove_from(d, self._buffers, self._modules, self._non_persistent_buffers_set)
            self.register_parameter(name, value)
            return
        if params is not None and name in params:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{_typename(value)}' as parameter '{name}' "
                    "(ember.nn.Parameter or None expected)"
                )
            self.register_parameter(name, value)
            return
        modules = d.get("_modules")
        if isinstance(value, Module):
            if modules is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            remove_from(d, self._parameters, self._buffers, self._non_persistent_buffers_set)
            modules[name] = value
            return
        if modules is not None and name in modules:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{_typename(value)}' as child module '{name}' "
                    "(ember.nn.Module or None expected)"
                )
            modules[name] = value
            return
        buffers = d.get("_buffers")
        if isinstance(value, Buffer) or (buffers is not None and name in buffers):
            if value is not None and not isinstance(value, et.Tensor):
                raise TypeError(
                    f"cannot assign '{_typename(value)}' as buffer '{name}' "
                    "(ember.nn.Buffer, ember.Tensor or None expected)"
                )
            if isinstance(value, Buffer):
                persistent = value.persistent
            else:
                persistent = name not in self._non_persistent_buffers_set
            if buffers is None:
                raise AttributeError("cannot assign buffer before Module.__init__() call")
            _register_buffer_as_attribute(self, name, value, persistent)
            return
        object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        if name in self._parameters:
            del self._parameters[name]
        elif name in self._buffers:
            del self._buffers[name]
            self._non_persistent_buffers_set.discard(name)
        elif name in self._modules:
            del self._modules[name]
        else:
            object.__delattr__(self, name)

    def __getstate__(self) -> dict:
        return self.__dict__.copy()

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        # modules pickled by an older version may lack some of the newer dicts
        for name in (
            "_forward_pre_hooks",
            "_forward_pre_hooks_with_kwargs",
            "_forward_hooks",
            "_forward_hooks_with_kwargs",
            "_forward_hooks_always_called",
            "_backward_hooks",
            "_backward_pre_hooks",
            "_state_dict_hooks",
            "_state_dict_pre_hooks",
            "_load_state_dict_pre_hooks",
            "_load_state_dict_post_hooks",
        ):
            if name not in self.__dict__:
                object.__setattr__(self, name, OrderedDict())
        if "_non_persistent_buffers_set" not in self.__dict__:
            object.__setattr__(self, "_non_persistent_buffers_set", set())

    def __dir__(self) -> list[str]:
        keys = (
            dir(type(self))
            + list(self.__dict__)
            + list(self._parameters)
            + list(self._modules)
            + list(self._buffers)
        )
        return sorted(k for k in keys if not k[0].isdigit())

    # ------------------------------------------------------------------ iteration

    def _named_members(self, get_members, prefix="", recurse=True, remove_duplicate=True):
        seen: set[int] = set()
        if recurse:
            modules = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate)
        else:
            modules = [(prefix, self)]
        for module_prefix, module in modules:
            for name, value in get_members(module):
                if value is None or id(value) in seen:
                    continue
                if remove_duplicate:
                    seen.add(id(value))
                yield module_prefix + ("." if module_prefix else "") + name, value

    def parameters(self, recurse: bool = True):
        """The module's parameters (and, with ``recurse``, its submodules'), each once."""
        for _, param in self.named_parameters(recurse=recurse):
            yield param

    def named_parameters(self, prefix: str = "", recurse: bool = True,
                         remove_duplicate: bool = True):
        """``(dotted name, parameter)`` pairs; a parameter shared by several modules comes
        once unless ``remove_duplicate=False``."""
        yield from self._named_members(
            lambda m: m._parameters.items(), prefix, recurse, remove_duplicate
        )

    def buffers(self, recurse: bool = True):
        """The module's buffers (and, with ``recurse``, its submodules')."""
        for _, buf in self.named_buffers(recurse=recurse):
            yield buf

    def named_buffers(self, prefix: str = "", recurse: bool = True,
                      remove_duplicate: bool = True):
        """``(dotted name, buffer)`` pairs."""
        yield from self._named_members(
            lambda m: m._buffers.items(), prefix, recurse, remove_duplicate
        )

    def children(self):
        """The direct submodules, each once."""
        for _, module in self.named_children():
            yield module

    def named_children(self):
        """``(name, submodule)`` of the direct submodules, each once."""
        seen: set[int] = set()
        for name, module in self._modules.items():
            if module is not None and id(module) not in seen:
                seen.add(id(module))
                yield name, module

    def modules(self, remove_duplicate: bool = True):
        """This module and all its submodules, depth first, each once."""
        for _, module in self.named_modules(remove_duplicate=remove_duplicate):
            yield module

    def named_modules(self, memo: set | None = None, prefix: str = "",
                      remove_duplicate: bool = True):
        """``(dotted name, module)`` for this module (name ``prefix``) and all its
        submodules, depth first, in registration order."""
        if memo is None:
            memo = set()
        # an explicit stack instead of recursion: deep models cannot hit the recursion limit
        stack = [(prefix, self)]
        while stack:
            name, module = stack.pop()
            if module in memo:
                continue
            if remove_duplicate:
                memo.add(module)
            yield name, module
            children = [
                (name + ("." if name else "") + child_name, child)
                for child_name, child in module._modules.items()
                if child is not None
            ]
            stack.extend(reversed(children))

    # ------------------------------------------------------------------ modes and grads

    def train(self, mode: bool = True):
        """Sets training mode (``self.training``) here and in every submodule."""
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for module in self.children():
            module.train(mode)  # a subclass may override train()
        return self

    def eval(self):
        """Same as ``train(False)``."""
        return self.train(False)

    def share_memory(self):
        """Moves every parameter and buffer, and every gradient already allocated, into
        memory shared between processes (``Tensor.share_memory_``, which needs a
        multiprocessing provider such as ember-mp); the tensors stay the same objects.
        Returns self."""
        for p in self.parameters():
            p.share_memory_()
            if p.grad is not None:
                p.grad.share_memory_()
        for b in self.buffers():
            b.share_memory_()
        return self

    def requires_grad_(self, requires_grad: bool = True):
        """Sets ``requires_grad`` of every parameter."""
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Resets the gradients of every parameter: to ``None`` (default), or to zeros in
        place with ``set_to_none=False``."""
        for p in self.parameters():
            if p.grad is None:
                continue
            if set_to_none:
                p.grad = None
            else:
                grad = p.grad
                if grad.grad_fn is not None:
                    # a gradient with history (create_graph=True): detached, then zeroed. Not
                    # detach_(): the core cannot detach a view in place (see the docs)
                    grad = grad.detach()
                    p.grad = grad
                else:
                    grad.requires_grad_(False)
                grad.zero_()

    def apply(self, fn):
        """Calls ``fn(module)`` on every submodule (children first) and then on this
        module; returns self."""
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    # ------------------------------------------------------------------ dtype and device

    def _apply(self, fn, recurse: bool = True):
        return _convert.apply_to_tensors(self, fn, recurse)

    def to(self, *args, **kwargs):
        """Moves and/or casts the parameters and buffers: ``to(device)``, ``to(dtype)``,
        ``to(tensor)``, ``to(device, dtype)``. Only floating-point tensors change dtype.
        Returns self."""
        device, dtype, non_blocking = _convert.parse_to(args, kwargs)
        return self._apply(_convert.convert_fn(device, dtype, non_blocking))

    def float(self):
        """Casts floating-point parameters and buffers to float32."""
        return self._apply(lambda t: t.float() if t.is_floating_point() else t)

    def double(self):
        """Casts floating-point parameters and buffers to float64."""
        return self._apply(lambda t: t.double() if t.is_floating_point() else t)

    def half(self):
        """Casts floating-point parameters and buffers to float16."""
        return self._apply(lambda t: t.half() if t.is_floating_point() else t)

    def bfloat16(self):
        """Casts floating-point parameters and buffers to bfloat16."""
        return self._apply(lambda t: t.bfloat16() if t.is_floating_point() else t)

    def type(self, dst_type):
        """Casts every parameter and buffer (integer ones too, as in PyTorch) to
        ``dst_type``: a dtype or a legacy type name (``"ember.DoubleTensor"``). Returns
        self."""
        return self._apply(lambda t: t.type(dst_type))

    def cpu(self):
        """Moves parameters (with their gradients) and buffers to the CPU. Returns self."""
        return self._apply(lambda t: t.cpu())

    def cuda(self, device=None):
        """Moves parameters (with their gradients) and buffers to a CUDA device: the current
        one, or ``device`` (an index, ``"cuda:1"`` or an ``ember.device``). Returns self."""
        if device is None:
            target = et.device("cuda")
        elif isinstance(device, int) and not isinstance(device, bool):
            target = et.device(f"cuda:{device}")
        else:
            target = et.device(device)
        if target.type != "cuda":
            raise RuntimeError(f"Invalid device, must be cuda device, got {target}")
        return self._apply(lambda t: t.to(target))

    # ------------------------------------------------------------------ hooks

    def register_forward_pre_hook(self, hook, *, prepend: bool = False,
                                  with_kwargs: bool = False) -> RemovableHandle:
        """``hook(module, args)`` (or, ``with_kwargs``, ``hook(module, args, kwargs)``)
        runs before ``forward``; a non-None result replaces the arguments."""
        handle = RemovableHandle(
            self._forward_pre_hooks, extra_dict=self._forward_pre_hooks_with_kwargs
        )
        self._forward_pre_hooks[handle.id] = hook
        if with_kwargs:
            self._forward_pre_hooks_with_kwargs[handle.id] = True
        if prepend:
            self._forward_pre_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_forward_hook(self, hook, *, prepend: bool = False,
                              with_kwargs: bool = False,
                              always_call: bool = False) -> RemovableHandle:
        """``hook(module, args, output)`` (or ``hook(module, args, kwargs, output)``) runs
        after ``forward``; a non-None result replaces the output. With ``always_call`` it
        also runs when ``forward`` raises."""
        handle = RemovableHandle(
            self._forward_hooks,
            extra_dict=[self._forward_hooks_with_kwargs, self._forward_hooks_always_called],
        )
        self._forward_hooks[handle.id] = hook
        if with_kwargs:
            self._forward_hooks_with_kwargs[handle.id] = True
        if always_call:
            self._forward_hooks_always_called[handle.id] = True
        if prepend:
            self._forward_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_full_backward_pre_hook(self, hook, prepend: bool = False) -> RemovableHandle:
        """``hook(module, grad_output)`` runs when the gradients with respect to the
        module's outputs are computed; a non-None result replaces ``grad_output``."""
        handle = RemovableHandle(self._backward_pre_hooks)
        self._backward_pre_hooks[handle.id] = hook
        if prepend:
            self._backward_pre_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_full_backward_hook(self, hook, prepend: bool = False) -> RemovableHandle:
        """``hook(module, grad_input, grad_output)`` runs when the gradients with respect
        to the module's inputs are computed; a non-None result replaces ``grad_input``."""
        handle = RemovableHandle(self._backward_hooks)
        self._backward_hooks[handle.id] = hook
        if prepend:
            self._backward_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_state_dict_pre_hook(self, hook) -> RemovableHandle:
        """``hook(module, prefix, keep_vars)`` runs before ``state_dict`` saves."""
        handle = RemovableHandle(self._state_dict_pre_hooks)
        self._state_dict_pre_hooks[handle.id] = hook
        return handle

    def register_state_dict_post_hook(self, hook) -> RemovableHandle:
        """``hook(module, state_dict, prefix, local_metadata)`` runs after ``state_dict``
        saved this module's subtree; it may change ``state_dict`` in place."""
        handle = RemovableHandle(self._state_dict_hooks)
        self._state_dict_hooks[handle.id] = hook
        return handle

    def register_load_state_dict_pre_hook(self, hook) -> RemovableHandle:
        """``hook(module, state_dict, prefix, local_metadata, strict, missing_keys,
        unexpected_keys, error_msgs)`` runs before this module loads its entries."""
        handle = RemovableHandle(self._load_state_dict_pre_hooks)
        self._load_state_dict_pre_hooks[handle.id] = functools.partial(hook, self)
        return handle

    def register_load_state_dict_post_hook(self, hook) -> RemovableHandle:
        """``hook(module, incompatible_keys)`` runs after this module's subtree loaded;
        it may edit the key lists in place."""
        handle = RemovableHandle(self._load_state_dict_post_hooks)
        self._load_state_dict_post_hooks[handle.id] = hook
        return handle

    def _register_state_dict_hook(self, hook) -> RemovableHandle:
        """PyTorch's private form of ``register_state_dict_post_hook`` (the old
        ``utils.spectral_norm`` uses it): ``hook(module, state_dict, prefix,
        local_metadata)`` runs after ``state_dict`` saved this module's subtree. The hook is
        stored as given, so that ``isinstance`` finds it in ``_state_dict_hooks``; unlike
        PyTorch's, it must return None (a returned dict does not replace ``state_dict``)."""
        handle = RemovableHandle(self._state_dict_hooks)
        self._state_dict_hooks[handle.id] = hook
        return handle

    def _register_load_state_dict_pre_hook(self, hook, with_module: bool = False
                                           ) -> RemovableHandle:
        """PyTorch's private form of ``register_load_state_dict_pre_hook``:
        ``hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
        error_msgs)`` (with ``with_module``, the module comes first) runs before this module
        loads its entries, and may edit ``state_dict`` in place. Without ``with_module`` the
        hook is stored as given (``isinstance`` finds it in ``_load_state_dict_pre_hooks``)."""
        handle = RemovableHandle(self._load_state_dict_pre_hooks)
        self._load_state_dict_pre_hooks[handle.id] = (
            functools.partial(hook, self) if with_module else hook
        )
        return handle

    # ------------------------------------------------------------------ state dict

    def _save_to_state_dict(self, destination, prefix: str, keep_vars: bool) -> None:
        _state.save_to_state_dict(self, destination, prefix, keep_vars)

    def state_dict(self, *args, destination=None, prefix: str = "", keep_vars: bool = False):
        """An ``OrderedDict`` of every parameter and persistent buffer, keyed by dotted
        name; tensors are detached unless ``keep_vars``."""
        return _state.state_dict(self, args, destination, prefix, keep_vars)

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict,
                              missing_keys, unexpected_keys, error_msgs) -> None:
        _state.load_from_state_dict(self, state_dict, prefix, local_metadata, strict,
                                    missing_keys, unexpected_keys, error_msgs)

    def load_state_dict(self, state_dict, strict: bool = True,
                        assign: bool = False) -> _IncompatibleKeys:
        """Copies parameters and buffers from ``state_dict`` (``assign=True``: takes its
        tensors instead). With ``strict``, missing or unexpected keys are an error; returns
        ``(missing_keys, unexpected_keys)`` either way."""
        return _state.load_state_dict(self, state_dict, strict, assign)

    # ------------------------------------------------------------------ repr

    def _get_name(self) -> str:
        return type(self).__name__

    def extra_repr(self) -> str:
        """The module's own settings, shown inside its repr (subclasses override it)."""
        return ""

    def __repr__(self) -> str:
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = [
            f"({key}): " + _addindent(repr(module), 2) for key, module in self._modules.items()
        ]
        lines = extra_lines + child_lines
        text = self._get_name() + "("
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                text += extra_lines[0]
            else:
                text += "\n  " + "\n  ".join(lines) + "\n"
        return text + ")"


def _register_buffer_as_attribute(module: Module, name: str, value, persistent: bool) -> None:
    """Attribute assignment of a buffer goes through ``register_buffer`` (a subclass may
    override it), passing ``persistent`` where its signature takes it."""
    register = module.register_buffer
    if getattr(register, "__func__", None) is Module.register_buffer:
        register(name, value, persistent)
        return
    if "persistent" in inspect.signature(register).parameters:
        register(name, value, persistent)
    elif not persistent:
        raise RuntimeError(
            "Registering a non-persistent buffer on a Module subclass that implements "
            "register_buffer() without the persistent argument is not allowed."
        )
    else:
        register(name, value)
