"""``RemovableHandle``: what the ``register_*_hook`` methods of ``Module`` return."""

from __future__ import annotations

import itertools
import weakref

__all__ = ["RemovableHandle"]

_ids = itertools.count()


class RemovableHandle:
    """A registered hook, kept under ``handle.id`` in a dict (and flags in ``extra_dict``,
    one dict or a list of dicts). ``remove()`` takes it out of all of them; it is also a
    context manager that removes the hook on exit. The dicts are held weakly: a handle does
    not keep its module alive."""

    def __init__(self, hooks_dict: dict, *, extra_dict=None) -> None:
        self.hooks_dict_ref = weakref.ref(hooks_dict)
        self.id = next(_ids)
        if extra_dict is None:
            extras: tuple = ()
        elif isinstance(extra_dict, dict):
            extras = (extra_dict,)
        else:
            extras = tuple(extra_dict)
        self.extra_dict_ref = tuple(weakref.ref(d) for d in extras)

    def remove(self) -> None:
        for ref in (self.hooks_dict_ref, *self.extra_dict_ref):
            d = ref()
            if d is not None:
                d.pop(self.id, None)

    def __getstate__(self):
        return (self.hooks_dict_ref(), self.id, tuple(ref() for ref in self.extra_dict_ref))

    def __setstate__(self, state) -> None:
        global _ids
        hooks, self.id = state[0], state[1]
        if hooks is None:  # the dict is gone: a handle whose remove() does nothing
            hooks = self._orphan = {}
        self.hooks_dict_ref = weakref.ref(hooks)
        self.extra_dict_ref = tuple(
            weakref.ref(d) for d in (state[2] if len(state) > 2 else ()) if d is not None
        )
        nxt = next(_ids)
        if nxt <= self.id:
            _ids = itertools.count(self.id + 1)
        else:
            _ids = itertools.count(nxt)

    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, *exc) -> None:
        self.remove()
