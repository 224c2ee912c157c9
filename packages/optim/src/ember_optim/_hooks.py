"""``RemovableHandle``: what the optimizer's ``register_*_hook`` methods return.

ember-optim depends on the tensor core only, so it keeps its own small handle class (the
same contract as ``ember_nn.utils.hooks.RemovableHandle`` and PyTorch's)."""

from __future__ import annotations

import itertools
import weakref

__all__ = ["RemovableHandle"]

_ids = itertools.count()


class RemovableHandle:
    """A hook registered under ``handle.id`` in an ordered dict. ``remove()`` takes it out;
    the handle is also a context manager that removes the hook on exit. The dict is held
    weakly: a handle does not keep its optimizer alive."""

    def __init__(self, hooks_dict: dict) -> None:
        self.hooks_dict_ref = weakref.ref(hooks_dict)
        self.id = next(_ids)

    def remove(self) -> None:
        hooks = self.hooks_dict_ref()
        if hooks is not None:
            hooks.pop(self.id, None)

    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, *exc) -> None:
        self.remove()

    def __repr__(self) -> str:
        return f"<RemovableHandle id={self.id}>"
