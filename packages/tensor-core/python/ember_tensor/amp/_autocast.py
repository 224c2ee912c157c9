"""``autocast``: a context manager and decorator that turns autocast on for one device type on
this thread, with ``torch.autocast``'s arguments, defaults, nesting and warnings."""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from typing import Any, TypeVar

from .. import _C

F = TypeVar("F", bound=Callable[..., Any])

_DEVICE_TYPES = ("cpu", "cuda")
# the lower-precision dtypes each device type supports (names of ember_tensor dtypes)
_SUPPORTED = {"cpu": ("bfloat16", "float16"), "cuda": ("float16", "bfloat16")}


def _check_device_type(device_type: Any) -> str:
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if device_type not in _DEVICE_TYPES:
        raise RuntimeError(
            f"User specified an unsupported autocast device_type '{device_type}'; "
            f"supported: {', '.join(_DEVICE_TYPES)}"
        )
    return device_type


def is_autocast_available(device_type: str) -> bool:
    """Whether autocast supports ``device_type`` ('cpu' and 'cuda')."""
    return device_type in _DEVICE_TYPES


def is_autocast_enabled(device_type: str = "cuda") -> bool:
    """Whether autocast is on for ``device_type`` on this thread (no argument: CUDA, as in
    PyTorch's legacy form)."""
    return _C._autocast_is_enabled(_check_device_type(device_type))


def set_autocast_enabled(device_type: str, enabled: bool) -> None:
    _C._autocast_set_enabled(_check_device_type(device_type), bool(enabled))


def get_autocast_dtype(device_type: str) -> Any:
    """The lower-precision dtype of ``device_type`` (defaults: float16 for CUDA, bfloat16 for
    the CPU)."""
    return _C._autocast_get_dtype(_check_device_type(device_type))


def set_autocast_dtype(device_type: str, dtype: Any) -> None:
    _C._autocast_set_dtype(_check_device_type(device_type), dtype)


def is_autocast_cache_enabled() -> bool:
    return _C._autocast_is_cache_enabled()


def set_autocast_cache_enabled(enabled: bool) -> None:
    _C._autocast_set_cache_enabled(bool(enabled))


def clear_autocast_cache() -> None:
    """Drops the cached lower-precision casts of weights (done on leaving the outermost region)."""
    _C._autocast_clear_cache()


def _cuda_available() -> bool:
    from .. import cuda

    return cuda.is_available()


class autocast:  # noqa: N801 - PyTorch's name
    """``with autocast("cuda"):`` / ``@autocast("cpu", dtype=ember.bfloat16)``.

    Inside the region, the ops of PyTorch's autocast lists run on tensors of ``device_type`` in
    ``dtype`` (default: ``get_autocast_dtype(device_type)``) or float32; other ops run in their
    inputs' dtype. ``enabled=False`` turns autocast off inside an enabled region. On exit the
    previous state comes back; leaving the outermost region empties the cast cache.
    ``cache_enabled`` (default: the current setting) keeps the casts of float32 leaves that
    require grad for the region's lifetime.

    An unsupported ``dtype``, or ``"cuda"`` without a GPU, warns and disables autocast, as in
    PyTorch; a device type other than 'cpu'/'cuda' is a ``RuntimeError``.
    """

    def __init__(
        self,
        device_type: str,
        dtype: Any = None,
        enabled: bool = True,
        cache_enabled: bool | None = None,
    ) -> None:
        self.device = _check_device_type(device_type)
        self.fast_dtype = get_autocast_dtype(self.device) if dtype is None else dtype
        self._cache_enabled = (
            is_autocast_cache_enabled() if cache_enabled is None else bool(cache_enabled)
        )
        self._enabled = bool(enabled)
        if self.device == "cuda" and self._enabled and not _cuda_available():
            warnings.warn("CUDA is not available. Disabling autocast.", stacklevel=2)
            self._enabled = False
        names = _SUPPORTED[self.device]
        if self._enabled and str(self.fast_dtype).rsplit(".", 1)[-1] not in names:
            shown = " and ".join(f"ember.{n}" for n in names)
            warnings.warn(
                f"In {self.device.upper()} autocast, but the target dtype is not supported. "
                f"Disabling autocast.\n{self.device.upper()} Autocast only supports dtypes of "
                f"{shown} currently.",
                stacklevel=2,
            )
            self._enabled = False
        self._saved: list[tuple[bool, Any, bool]] = []

    def __enter__(self) -> autocast:
        self._saved.append(
            (
                is_autocast_enabled(self.device),
                get_autocast_dtype(self.device),
                is_autocast_cache_enabled(),
            )
        )
        _C._autocast_set_cache_enabled(self._cache_enabled)
        _C._autocast_increment_nesting()
        _C._autocast_set_enabled(self.device, self._enabled)
        _C._autocast_set_dtype(self.device, self.fast_dtype)
        return self

    def __exit__(self, *exc: object) -> None:
        enabled, dtype, cache = self._saved.pop()
        if _C._autocast_decrement_nesting() == 0:
            _C._autocast_clear_cache()
        _C._autocast_set_enabled(self.device, enabled)
        _C._autocast_set_dtype(self.device, dtype)
        _C._autocast_set_cache_enabled(cache)

    def __call__(self, func: F) -> F:
        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with self:
                return func(*args, **kwargs)

        return wrapper  # type: ignore[return-value]
