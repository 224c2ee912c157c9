"""Switches for the backends the core runs on (as ``torch.backends``).

``ember_tensor.backends.cuda.matmul.allow_tf32`` (default False, as in PyTorch): float32
matrix products on CUDA may use TF32 tensor cores (10-bit mantissa inputs, float32
accumulation), several times faster on Ampere and newer GPUs.

``ember_tensor.backends.cudnn``: whether CUDA convolutions use cuDNN (``enabled``), how it
picks algorithms (``benchmark``, ``deterministic``), TF32 for float32 (``allow_tf32``,
default True as in PyTorch), ``is_available()`` and ``version()``.

``ember_tensor.backends.mkl.is_available()``: whether the core linked Intel MKL, which then
computes the CPU FFTs of ``ember_tensor.fft``.

``ember_tensor.backends.mkldnn``: whether float32 CPU convolutions run through oneDNN
(``is_available()``, the ``enabled`` switch).

``mps`` and ``openmp``: ``is_available()`` is False (Ember has no Metal backend, and its CPU
threads are its own pool), so programs that ask choose another path.
"""

from . import cuda, cudnn, mkl, mkldnn, mps, openmp

__all__ = ["cuda", "cudnn", "mkl", "mkldnn", "mps", "openmp"]
