"""The samples of one batch, as the main process and the workers both take them."""

from __future__ import annotations

import itertools

END = object()  # an iterable dataset has no (full) batch left


def fetch(dataset, iterator, index, auto_collation: bool, batch_size, drop_last: bool):
    """A list of samples (``auto_collation``) or one sample, or ``END``. ``iterator``: the
    iterable dataset's iterator (None for a map-style dataset, indexed by ``index``: a list
    of indices, through ``__getitems__`` when the dataset has it, or one index)."""
    if iterator is not None:
        if not auto_collation:
            return next(iterator, END)
        items = list(itertools.islice(iterator, batch_size))
        return END if not items or (drop_last and len(items) < batch_size) else items
    if auto_collation:
        getitems = getattr(dataset, "__getitems__", None)
        return getitems(index) if getitems else [dataset[i] for i in index]
    return dataset[index]
