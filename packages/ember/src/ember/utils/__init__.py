"""``ember.utils``: ``ember.utils.data`` is the ``data`` slot's provider (ember-data), as
``torch.utils.data`` is PyTorch's data loading."""

from __future__ import annotations


def __getattr__(name: str):
    if name == "data":
        import ember

        return ember.data
    raise AttributeError(f"module 'ember.utils' has no attribute {name!r}")
