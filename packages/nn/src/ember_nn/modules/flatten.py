"""``Flatten`` and ``Unflatten``."""

from __future__ import annotations

from .module import Module

__all__ = ["Flatten", "Unflatten"]


class Flatten(Module):
    """Flattens dims ``start_dim`` to ``end_dim`` into one: ``(N, C, H, W)`` to
    ``(N, C*H*W)`` with the defaults."""

    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        super().__init__()
        self.start_dim = start_dim
        self.end_dim = end_dim

    def forward(self, input):
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    """Splits dim ``dim`` into ``unflattened_size`` (a tuple or list of ints, one may be
    -1). Named dimensions (PyTorch's ``NamedShape``) do not exist in Ember."""

    def __init__(self, dim: int, unflattened_size) -> None:
        super().__init__()
        if isinstance(dim, str):
            raise TypeError(
                "Unflatten: named dimensions are not supported by ember tensors; dim must "
                "be an int"
            )
        self._require_tuple_int(unflattened_size)
        self.dim = dim
        self.unflattened_size = unflattened_size

    @staticmethod
    def _require_tuple_int(value) -> None:
        if isinstance(value, (tuple, list)):
            for idx, elem in enumerate(value):
                if not isinstance(elem, int):
                    raise TypeError(
                        "unflattened_size must be tuple of ints, but found element of type "
                        f"{type(elem).__name__} at pos {idx}"
                    )
            return
        raise TypeError(
            f"unflattened_size must be a tuple of ints, but found type {type(value).__name__}"
        )

    def forward(self, input):
        return input.unflatten(self.dim, self.unflattened_size)

    def extra_repr(self) -> str:
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"
