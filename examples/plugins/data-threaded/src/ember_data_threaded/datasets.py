"""The file datasets of ember-data (``read_idx``, ``MNIST``, ``NumpyDataset``,
``CSVDataset``, ``ImageFolder``), re-exported unchanged, so that ``ember.data.datasets``
keeps working with this provider."""

from __future__ import annotations

from ember_data.datasets import MNIST, CSVDataset, ImageFolder, NumpyDataset, read_idx

__all__ = ["CSVDataset", "ImageFolder", "MNIST", "NumpyDataset", "read_idx"]
