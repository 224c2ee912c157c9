"""The paper's Table 1 models, each written once against a library namespace so that the
Ember model and its PyTorch twin have the same architecture and the same parameter names
and shapes.

Every model module defines:

- ``NAME`` and ``UNIT`` (what its throughput counts: ``"images"``, ``"tokens"`` or
  ``"samples"``);
- ``DEFAULTS``: ``{"cpu": {...}, "cuda": {...}}``, the batch size and model sizes of a run
  on each device (small on CPU);
- ``build(lib, **sizes)``: the model, a ``lib.nn.Module``, where ``lib`` is ``ember`` or
  ``torch`` (the model uses ``lib.nn``, ``lib.nn.functional`` and ``lib``'s tensor
  functions only);
- ``make_batch(rng, batch_size, **sizes)``: a synthetic batch as NumPy arrays, ``(inputs,
  targets)`` with ``inputs`` a tuple of the model's positional arguments;
- ``units(batch_size, **sizes)``: how many of ``UNIT`` one batch holds;
- ``loss(lib, output, targets)``: the training loss, a scalar tensor.

``build``, ``make_batch`` and ``units`` take the sizes of ``DEFAULTS`` (less
``batch_size``) as keyword arguments, and ignore those that are not theirs, so that one
dict of sizes serves all three.

``ember_model(name, **sizes)`` and ``torch_model(name, **sizes)`` build the two twins;
``copy_weights(src, dst, dst_lib)`` copies every parameter and buffer from one to the other
(through NumPy), and ``to_lib(lib, arrays, device)`` hands a batch to a library.
"""

from __future__ import annotations

import importlib

import numpy as np

MODEL_NAMES = ("alexnet", "vgg19", "resnet50", "mobilenet_v2", "gnmt", "ncf")


def module(name: str):
    """The module of the model ``name`` (one of ``MODEL_NAMES``)."""
    if name not in MODEL_NAMES:
        raise ValueError(f"unknown model {name!r}; the models are {', '.join(MODEL_NAMES)}")
    return importlib.import_module(f"{__name__}.{name}")


def ember_model(name: str, **sizes):
    """The Ember (``ember.nn``) model ``name``."""
    import ember

    return module(name).build(ember, **sizes)


def torch_model(name: str, **sizes):
    """The PyTorch twin of the model ``name``."""
    import torch

    return module(name).build(torch, **sizes)


def _numpy(tensor) -> np.ndarray:
    tensor = tensor.detach()
    if str(tensor.device) != "cpu":
        tensor = tensor.cpu()
    return np.array(tensor.numpy())  # a copy: the destination must not share memory


def copy_weights(src, dst, dst_lib) -> None:
    """Loads ``src``'s state dict (parameters and buffers) into ``dst``, a model of the same
    architecture in library ``dst_lib``, keeping ``dst``'s device."""
    device = next(iter(dst.parameters())).device
    state = {k: dst_lib.from_numpy(_numpy(v)).to(device) for k, v in src.state_dict().items()}
    dst.load_state_dict(state)


def to_lib(lib, arrays, device="cpu"):
    """``arrays`` (a NumPy array or a tuple of them, nested) as ``lib`` tensors on
    ``device``."""
    if isinstance(arrays, tuple):
        return tuple(to_lib(lib, a, device) for a in arrays)
    return lib.from_numpy(np.ascontiguousarray(arrays)).to(device)


def image_batch(rng, batch_size: int, image_size: int = 224, num_classes: int = 1000, **_):
    """The CNNs' ``make_batch``: standard normal images ``(N, 3, S, S)`` and class labels
    ``(N,)``."""
    images = rng.standard_normal((batch_size, 3, image_size, image_size), dtype=np.float32)
    labels = rng.integers(0, num_classes, batch_size, dtype=np.int64)
    return (images,), labels


def images_in_batch(batch_size: int, **_) -> int:
    """The CNNs' ``units``: one image per sample."""
    return batch_size


def classification_loss(lib, output, targets):
    """Cross entropy of ``(N, C)`` logits against class labels ``(N,)``."""
    return lib.nn.functional.cross_entropy(output, targets)


def init_cnn(lib, model, linear_std: float | None = 0.01) -> None:
    """The initialisation torchvision gives VGG, ResNet and MobileNetV2: convolutions from
    He's normal (fan out, ReLU gain) with zero bias, batch norms at weight 1 and bias 0, and
    linear layers from N(0, ``linear_std``) with zero bias (``None``: left at the library's
    default). Keeps the activations' scale through the depth, so that every layer shapes
    the output."""
    nn = lib.nn
    for m in model.modules():
        if isinstance(m, nn.Conv2d):
            nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
            if m.bias is not None:
                nn.init.zeros_(m.bias)
        elif isinstance(m, nn.BatchNorm2d):
            nn.init.ones_(m.weight)
            nn.init.zeros_(m.bias)
        elif isinstance(m, nn.Linear) and linear_std is not None:
            nn.init.normal_(m.weight, 0.0, linear_std)
            nn.init.zeros_(m.bias)
