"""``Module.state_dict`` and ``Module.load_state_dict``, PyTorch's contract: the keys,
their order, the ``_metadata`` attribute, the hooks, ``strict``/``assign`` and the error
message layout (``Error(s) in loading state_dict for ...``)."""

from __future__ import annotations

import warnings
from collections import OrderedDict, namedtuple
from collections.abc import Mapping

import ember_tensor as et
from ember_autograd import no_grad

from ..parameter import Parameter

__all__ = ["EXTRA_STATE_KEY_SUFFIX", "_IncompatibleKeys", "load_state_dict", "state_dict"]

EXTRA_STATE_KEY_SUFFIX = "_extra_state"


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    """What ``load_state_dict`` returns: the keys the module expected but did not get, and
    those it got but does not have."""

    __slots__ = ()

    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


def _has_extra_state(module, method: str) -> bool:
    from .module import Module

    return getattr(type(module), method, None) is not getattr(Module, method)


def save_to_state_dict(module, destination, prefix: str, keep_vars: bool) -> None:
    """The module's own parameters and persistent buffers (not its children's)."""
    for name, param in module._parameters.items():
        if param is not None:
            destination[prefix + name] = param if keep_vars else param.detach()
    for name, buf in module._buffers.items():
        if buf is not None and name not in module._non_persistent_buffers_set:
            destination[prefix + name] = buf if keep_vars else buf.detach()
    if _has_extra_state(module, "get_extra_state"):
        destination[prefix + EXTRA_STATE_KEY_SUFFIX] = module.get_extra_state()


def state_dict(module, args: tuple, destination=None, prefix: str = "", keep_vars=False):
    if args:
        warnings.warn(
            "Positional args are being deprecated, use kwargs instead: "
            "state_dict(destination=..., prefix=..., keep_vars=...).",
            FutureWarning,
            stacklevel=3,
        )
        if destination is None:
            destination = args[0]
        if len(args) > 1 and prefix == "":
            prefix = args[1]
        if len(args) > 2 and keep_vars is False:
            keep_vars = args[2]
    if destination is None:
        destination = OrderedDict()
        destination._metadata = OrderedDict()
    return _state_dict(module, destination, prefix, keep_vars)


def _state_dict(module, destination, prefix: str, keep_vars: bool):
    local_metadata = {"version": module._version}
    if hasattr(destination, "_metadata"):
        destination._metadata[prefix[:-1]] = local_metadata
    for hook in module._state_dict_pre_hooks.values():
        hook(module, prefix, keep_vars)
    module._save_to_state_dict(destination, prefix, keep_vars)
    for name, child in module._modules.items():
        if child is not None:
            child.state_dict(destination=destination, prefix=prefix + name + ".",
                             keep_vars=keep_vars)
    for hook in module._state_dict_hooks.values():
        if hook(module, destination, prefix, local_metadata) is not None:
            raise RuntimeError("state_dict post-hook must return None")
    return destination


def _is_tensor(x) -> bool:
    return isinstance(x, et.Tensor)


def load_from_state_dict(module, state_dict, prefix, local_metadata, strict, missing_keys,
                         unexpected_keys, error_msgs) -> None:
    """Copies into this module's own parameters and persistent buffers the entries of
    ``state_dict`` under ``prefix``, recording missing keys, unexpected keys and errors."""
    for hook in module._load_state_dict_pre_hooks.values():
        hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
             error_msgs)
    local_state = {k: v for k, v in module._parameters.items() if v is not None}
    for k, v in module._buffers.items():
        if v is not None and k not in module._non_persistent_buffers_set:
            local_state[k] = v
    assign = local_metadata.get("assign_to_params_buffers", False)
    for name, param in local_state.items():
        key = prefix + name
        if key not in state_dict:
            if strict:
                missing_keys.append(key)
            continue
        value = state_dict[key]
        if not _is_tensor(value):
            error_msgs.append(
                f'While copying the parameter named "{key}", expected ember.Tensor or '
                f"Tensor-like object from checkpoint but received {type(value)}"
            )
            continue
        if param.dim() == 0 and value.dim() == 1 and value.shape[0] == 1:
            value = value[0]  # a 1-element 1-d tensor loads into a 0-d one (old format)
        if value.shape != param.shape:
            error_msgs.append(
                f"size mismatch for {key}: copying a param with shape {value.shape} from "
                f"checkpoint, the shape in current model is {param.shape}."
            )
            continue
        try:
            with no_grad():
                if assign:
                    if isinstance(param, Parameter):
                        if not isinstance(value, Parameter):
                            value = Parameter(value, requires_grad=param.requires_grad)
                        else:
                            value.requires_grad_(param.requires_grad)
                    setattr(module, name, value)
                else:
                    param.copy_(value)
        except Exception as ex:  # noqa: BLE001 - reported in the error message
            error_msgs.append(
                f'While copying the parameter named "{key}", whose dimensions in the model '
                f"are {param.size()} and whose dimensions in the checkpoint are "
                f"{value.size()}, an exception occurred : {ex.args}."
            )
    extra_key = prefix + EXTRA_STATE_KEY_SUFFIX
    if _has_extra_state(module, "set_extra_state"):
        if extra_key in state_dict:
            module.set_extra_state(state_dict[extra_key])
        elif strict:
            missing_keys.append(extra_key)
    elif strict and extra_key in state_dict:
        unexpected_keys.append(extra_key)
    if strict:
        for key in state_dict:
            if key.startswith(prefix) and key != extra_key:
                head, dot, _ = key[len(prefix):].partition(".")
                if dot:
                    if head not in module._modules:
                        unexpected_keys.append(key)
                elif head not in local_state:
                    unexpected_keys.append(key)


def load_state_dict(module, state_dict, strict: bool = True, assign: bool = False):
    if not isinstance(state_dict, Mapping):
        raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
    missing_keys: list[str] = []
    unexpected_keys: list[str] = []
    error_msgs: list[str] = []
    metadata = getattr(state_dict, "_metadata", None)
    state_dict = OrderedDict(state_dict)
    if metadata is not None:
        state_dict._metadata = metadata

    # iterative walk in PyTorch's order: a module, then its children's subtrees, then the
    # module's post-hooks (which see the keys of its whole subtree)
    stack: list = [(module, state_dict, "")]
    while stack:
        item = stack.pop()
        if not isinstance(item, tuple):
            _run_post_hooks(item, missing_keys, unexpected_keys)
            continue
        mod, local, prefix = item
        local_metadata = {} if metadata is None else dict(metadata.get(prefix[:-1], {}))
        if assign:
            local_metadata["assign_to_params_buffers"] = assign
        mod._load_from_state_dict(local, prefix, local_metadata, True, missing_keys,
                                  unexpected_keys, error_msgs)
        stack.append(mod)
        children = []
        for name, child in mod._modules.items():
            if child is not None:
                child_prefix = prefix + name + "."
                child_local = {k: v for k, v in local.items() if k.startswith(child_prefix)}
                children.append((child, child_local, child_prefix))
        stack.extend(reversed(children))

    if strict:
        if unexpected_keys:
            error_msgs.insert(
                0,
                "Unexpected key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in unexpected_keys)
                ),
            )
        if missing_keys:
            error_msgs.insert(
                0,
                "Missing key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in missing_keys)
                ),
            )
    if error_msgs:
        raise RuntimeError(
            "Error(s) in loading state_dict for {}:\n\t{}".format(
                type(module).__name__, "\n\t".join(error_msgs)
            )
        )
    return _IncompatibleKeys(missing_keys, unexpected_keys)


def _run_post_hooks(module, missing_keys, unexpected_keys) -> None:
    keys = _IncompatibleKeys(missing_keys, unexpected_keys)
    for hook in module._load_state_dict_post_hooks.values():
        if hook(module, keys) is not None:
            raise AssertionError(
                "Hooks registered with ``register_load_state_dict_post_hook`` are not "
                "expected to return new values, if incompatible_keys need to be modified, "
                "it should be done inplace."
            )
