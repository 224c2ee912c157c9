"""Datasets over files users already have on disk; nothing here downloads anything.

- ``read_idx`` / ``MNIST``: the IDX format of MNIST-style datasets (gzipped or not);
- ``NumpyDataset``: the rows of ``.npy`` arrays, or of several arrays of an ``.npz`` file;
- ``CSVDataset``: numeric CSV files, features and an optional target column;
- ``ImageFolder``: ``root/<class>/<image>`` trees (needs Pillow).

Samples are tensors (images: Pillow images, as torchvision gives them, unless a
``transform`` says otherwise); ``transform`` / ``target_transform`` run on each sample.
"""

from __future__ import annotations

import csv
import gzip
import os
from pathlib import Path

import numpy as np

import ember_tensor as et

from .dataset import Dataset

# IDX type codes -> big-endian NumPy dtypes
_IDX_TYPES = {0x08: ">u1", 0x09: ">i1", 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8"}


def read_idx(path: str | os.PathLike) -> np.ndarray:
    """The array of an IDX file (``.gz`` read transparently): magic ``0 0 type ndim``, then
    ``ndim`` big-endian uint32 sizes, then the data. Errors name the file and what is
    wrong (bad magic, unknown type, truncated data)."""
    path = Path(path)
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rb") as f:
        data = f.read()
    if len(data) < 4 or data[0] != 0 or data[1] != 0:
        raise ValueError(f"{path}: not an IDX file (its magic number must start with two "
                         "zero bytes)")
    kind, ndim = data[2], data[3]
    if kind not in _IDX_TYPES:
        raise ValueError(f"{path}: unknown IDX data type 0x{kind:02x}")
    header = 4 + 4 * ndim
    shape = tuple(int(s) for s in np.frombuffer(data, ">u4", ndim, 4)) if ndim else ()
    dtype = np.dtype(_IDX_TYPES[kind])
    need = header + int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    if len(data) < need:
        raise ValueError(f"{path}: truncated IDX file: {len(data)} bytes, the header "
                         f"announces {need} (shape {shape}, {dtype.name})")
    return np.frombuffer(data, dtype, offset=header,
                         count=int(np.prod(shape, dtype=np.int64))).reshape(shape).astype(
                             dtype.newbyteorder("="))


class MNIST(Dataset):
    """MNIST (or Fashion-MNIST, KMNIST: same layout) from IDX files in ``root``:
    ``train-images-idx3-ubyte`` / ``train-labels-idx1-ubyte`` (``t10k-...`` for
    ``train=False``), optionally ``.gz``. Samples: (uint8 image tensor (28, 28), int label),
    through ``transform`` / ``target_transform``. ``download=True`` is an error: Ember never
    downloads."""

    def __init__(self, root, train: bool = True, transform=None, target_transform=None,
                 download: bool = False):
        if download:
            raise RuntimeError("MNIST: Ember never downloads data; put the IDX files in "
                               f"{root} yourself (download=False)")
        prefix = "train" if train else "t10k"
        root = Path(root)

        def find(name: str) -> Path:
            for candidate in (root / name, root / (name + ".gz")):
                if candidate.exists():
                    return candidate
            raise FileNotFoundError(f"MNIST: {root / name}[.gz] not found")

        images = read_idx(find(f"{prefix}-images-idx3-ubyte"))
        labels = read_idx(find(f"{prefix}-labels-idx1-ubyte"))
        if images.ndim != 3 or labels.ndim != 1 or len(images) != len(labels):
            raise ValueError(f"MNIST: images {images.shape} and labels {labels.shape} in "
                             f"{root} do not match")
        self.data = et.from_numpy(np.ascontiguousarray(images))
        self.targets = et.from_numpy(labels.astype(np.int64))
        self.transform, self.target_transform = transform, target_transform

    def __len__(self) -> int:
        return self.data.shape[0]

    def __getitem__(self, i):
        image, target = self.data[i], int(self.targets[i].item())
        if self.transform is not None:
            image = self.transform(image)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return image, target


class NumpyDataset(Dataset):
    """The rows of a ``.npy`` array (samples: tensors), or of the arrays ``keys`` of an
    ``.npz`` file (samples: tuples), memory-mapped with ``mmap`` (``.npy`` only)."""

    def __init__(self, path, keys: tuple[str, ...] | None = None, mmap: bool = False,
                 transform=None):
        path = Path(path)
        if path.suffix == ".npz":
            with np.load(path) as f:
                keys = tuple(keys or f.files)
                missing = [k for k in keys if k not in f.files]
                if missing:
                    raise KeyError(f"NumpyDataset: {path} has no arrays {missing} (it has "
                                   f"{f.files})")
                self.arrays = [f[k] for k in keys]
        else:
            if keys is not None:
                raise ValueError(f"NumpyDataset: keys are for .npz files, {path} is not one")
            self.arrays = [np.load(path, mmap_mode="r" if mmap else None)]
        lengths = {len(a) for a in self.arrays}
        if len(lengths) != 1:
            raise ValueError(f"NumpyDataset: the arrays of {path} differ in length: "
                             f"{[len(a) for a in self.arrays]}")
        self.single = path.suffix != ".npz"
        self.transform = transform

    def __len__(self) -> int:
        return len(self.arrays[0])

    def __getitem__(self, i):
        items = tuple(et.from_numpy(np.array(a[i])) for a in self.arrays)
        sample = items[0] if self.single else items
        return self.transform(sample) if self.transform is not None else sample


class CSVDataset(Dataset):
    """A numeric CSV file: samples are (float32 features, target) with ``target_column``
    (a name, with ``header``, or an index; int64 when every target is whole), or the float32
    feature rows alone without it. A non-numeric cell is an error naming its row and
    column."""

    def __init__(self, path, target_column: str | int | None = None, header: bool = True,
                 delimiter: str = ",", transform=None):
        path = Path(path)
        with open(path, newline="") as f:
            rows = list(csv.reader(f, delimiter=delimiter))
        names = rows.pop(0) if header and rows else None
        if isinstance(target_column, str):
            if names is None or target_column not in names:
                raise KeyError(f"CSVDataset: {path} has no column {target_column!r} "
                               f"(columns: {names})")
            target_column = names.index(target_column)
        values = np.empty((len(rows), len(rows[0]) if rows else 0), dtype=np.float64)
        for r, row in enumerate(rows):
            if len(row) != values.shape[1]:
                raise ValueError(f"CSVDataset: {path} row {r + 1 + bool(names)} has "
                                 f"{len(row)} cells, expected {values.shape[1]}")
            for c, cell in enumerate(row):
                try:
                    values[r, c] = float(cell)
                except ValueError:
                    raise ValueError(f"CSVDataset: {path} row {r + 1 + bool(names)}, column "
                                     f"{c + 1}: {cell!r} is not a number") from None
        self.columns = names
        if target_column is None:
            self.features, self.targets = values.astype(np.float32), None
        else:
            target = values[:, target_column]
            self.features = np.delete(values, target_column, axis=1).astype(np.float32)
            whole = np.all(target == np.round(target))
            self.targets = target.astype(np.int64 if whole else np.float32)
        self.transform = transform

    def __len__(self) -> int:
        return len(self.features)

    def __getitem__(self, i):
        x = et.from_numpy(self.features[i].copy())
        if self.transform is not None:
            x = self.transform(x)
        if self.targets is None:
            return x
        return x, self.targets[i].item()


IMAGE_EXTENSIONS = (".jpg", ".jpeg", ".png", ".ppm", ".bmp", ".pgm", ".tif", ".tiff", ".webp")


class ImageFolder(Dataset):
    """Images in ``root/<class name>/...``: ``classes`` (sorted folder names),
    ``class_to_idx``, ``samples`` ((path, class index) pairs, sorted). A sample is (the
    Pillow image in RGB, its class index), through ``transform`` / ``target_transform``.
    Needs Pillow (``pip install pillow``)."""

    def __init__(self, root, transform=None, target_transform=None,
                 extensions: tuple[str, ...] = IMAGE_EXTENSIONS):
        try:
            from PIL import Image
        except ImportError:
            raise ImportError("ImageFolder needs Pillow to read images: "
                              "pip install pillow") from None
        self._open = Image.open
        root = Path(root)
        self.classes = sorted(d.name for d in root.iterdir() if d.is_dir())
        if not self.classes:
            raise FileNotFoundError(f"ImageFolder: no class folders in {root}")
        self.class_to_idx = {c: i for i, c in enumerate(self.classes)}
        self.samples = [(str(p), self.class_to_idx[c]) for c in self.classes
                        for p in sorted((root / c).rglob("*"))
                        if p.suffix.lower() in extensions]
        if not self.samples:
            raise FileNotFoundError(f"ImageFolder: no images with extensions {extensions} "
                                    f"under {root}")
        self.targets = [t for _, t in self.samples]
        self.transform, self.target_transform = transform, target_transform

    def __len__(self) -> int:
        return len(self.samples)

    def __getitem__(self, i):
        path, target = self.samples[i]
        with self._open(path) as image:
            image = image.convert("RGB")
        if self.transform is not None:
            image = self.transform(image)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return image, target
