"""Formula helpers for shape, view, indexing and linear-algebra ops (see formulas.py)."""

from __future__ import annotations

import ember_tensor as et  # noqa: F401

__all__: list[str] = []
