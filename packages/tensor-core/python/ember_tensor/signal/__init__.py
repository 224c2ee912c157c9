"""Signal processing with PyTorch's ``torch.signal`` names: the window functions of
``ember_tensor.signal.windows``."""

from . import windows

__all__ = ["windows"]
