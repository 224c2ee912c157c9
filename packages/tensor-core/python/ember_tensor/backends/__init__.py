"""Switches for the backends the core runs on (as ``torch.backends``).

``ember_tensor.backends.cuda.matmul.allow_tf32`` (default False, as in PyTorch): float32
matrix products on CUDA may use TF32 tensor cores (10-bit mantissa inputs, float32
accumulation), several times faster on Ampere and newer GPUs.
"""

from . import cuda

__all__ = ["cuda"]
