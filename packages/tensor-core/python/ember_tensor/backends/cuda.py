"""CUDA backend switches: ``matmul.allow_tf32``."""

from .. import _C

__all__ = ["matmul"]


class _MatmulSettings:
    """``matmul.allow_tf32``: whether float32 CUDA matrix products may run in TF32."""

    __slots__ = ()

    @property
    def allow_tf32(self) -> bool:
        return _C._cuda_allow_tf32()

    @allow_tf32.setter
    def allow_tf32(self, allow: bool) -> None:
        _C._cuda_set_allow_tf32(bool(allow))

    def __repr__(self) -> str:
        return f"<ember_tensor.backends.cuda.matmul allow_tf32={self.allow_tf32}>"


matmul = _MatmulSettings()
