"""``ember.onnx``: the names of ``torch.onnx`` that programs import, without an exporter.

Ember has no graph capture yet, so it cannot write an ONNX model: ``export`` and
``dynamo_export`` raise ``NotImplementedError`` saying so, and ``is_in_onnx_export()`` is
False (model code that asks takes its eager path). Programs that only import the module, as
PyTorch's word-language-model example does at its top, run unchanged.

>>> import ember.onnx
>>> ember.onnx.is_in_onnx_export()
False
"""

from __future__ import annotations

__all__ = ["dynamo_export", "export", "is_in_onnx_export"]

_NO_EXPORTER = (
    "{name}: Ember has no ONNX exporter (it has no graph capture yet). To export a model "
    "trained with Ember, save its weights as NumPy arrays ({{k: v.numpy() for k, v in "
    "model.state_dict().items()}}), load them into the same model in PyTorch and export it "
    "there with torch.onnx.export"
)


def export(model, args=(), f=None, *unused, **kwargs):
    """``torch.onnx.export``: raises ``NotImplementedError`` (see the module docstring)."""
    raise NotImplementedError(_NO_EXPORTER.format(name="ember.onnx.export"))


def dynamo_export(model, *args, **kwargs):
    """``torch.onnx.dynamo_export``: raises ``NotImplementedError``."""
    raise NotImplementedError(_NO_EXPORTER.format(name="ember.onnx.dynamo_export"))


def is_in_onnx_export() -> bool:
    """False: Ember never runs a model under an ONNX export."""
    return False
