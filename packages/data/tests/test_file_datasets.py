"""The file datasets, on small files the tests write (nothing is downloaded)."""

from __future__ import annotations

import gzip
import struct

import numpy as np
import pytest

import ember_data as D
from ember_data import datasets


def write_idx(path, array: np.ndarray, code: int, compress: bool = False) -> None:
    header = bytes([0, 0, code, array.ndim]) + struct.pack(f">{array.ndim}I", *array.shape)
    data = header + array.astype(array.dtype.newbyteorder(">")).tobytes()
    with (gzip.open if compress else open)(path, "wb") as f:
        f.write(data)


@pytest.mark.parametrize("compress", [False, True])
def test_mnist_from_idx_files(tmp_path, compress):
    rng = np.random.default_rng(0)
    images = rng.integers(0, 256, (7, 28, 28), dtype=np.uint8)
    labels = rng.integers(0, 10, 7).astype(np.uint8)
    suffix = ".gz" if compress else ""
    write_idx(tmp_path / f"t10k-images-idx3-ubyte{suffix}", images, 0x08, compress)
    write_idx(tmp_path / f"t10k-labels-idx1-ubyte{suffix}", labels, 0x08, compress)
    ds = datasets.MNIST(tmp_path, train=False, transform=lambda t: t.float() / 255)
    assert len(ds) == 7
    image, label = ds[3]
    np.testing.assert_allclose(image.numpy(), images[3] / 255, rtol=1e-6)
    assert label == labels[3]
    batch = next(iter(D.DataLoader(ds, batch_size=4)))
    assert tuple(batch[0].shape) == (4, 28, 28) and batch[1].tolist() == labels[:4].tolist()
    with pytest.raises(FileNotFoundError, match=r"train-images-idx3-ubyte\[\.gz\] not found"):
        datasets.MNIST(tmp_path, train=True)
    with pytest.raises(RuntimeError, match="Ember never downloads data"):
        datasets.MNIST(tmp_path, download=True)


def test_read_idx_types_and_errors(tmp_path):
    a = np.arange(12, dtype=np.float32).reshape(3, 4) - 5
    write_idx(tmp_path / "f.idx", a, 0x0D)
    np.testing.assert_array_equal(datasets.read_idx(tmp_path / "f.idx"), a)
    (tmp_path / "bad").write_bytes(b"\x01\x00\x08\x01")
    with pytest.raises(ValueError, match="not an IDX file"):
        datasets.read_idx(tmp_path / "bad")
    write_idx(tmp_path / "short", np.zeros(10, np.uint8), 0x08)
    (tmp_path / "short").write_bytes((tmp_path / "short").read_bytes()[:-3])
    with pytest.raises(ValueError, match="truncated IDX file: 15 bytes, the header announces 18"):
        datasets.read_idx(tmp_path / "short")


def test_numpy_datasets(tmp_path):
    x = np.arange(20.0).reshape(10, 2)
    y = np.arange(10)
    np.save(tmp_path / "x.npy", x)
    np.savez(tmp_path / "xy.npz", x=x, y=y)
    for mmap in (False, True):
        ds = datasets.NumpyDataset(tmp_path / "x.npy", mmap=mmap)
        assert len(ds) == 10 and ds[3].tolist() == [6.0, 7.0]
    ds = datasets.NumpyDataset(tmp_path / "xy.npz", keys=("x", "y"))
    xs, ys = next(iter(D.DataLoader(ds, batch_size=10)))
    np.testing.assert_array_equal(xs.numpy(), x)
    np.testing.assert_array_equal(ys.numpy(), y)
    with pytest.raises(KeyError, match=r"has no arrays \['z'\]"):
        datasets.NumpyDataset(tmp_path / "xy.npz", keys=("z",))


def test_csv_dataset(tmp_path):
    (tmp_path / "d.csv").write_text("a,b,label\n1,2,0\n3.5,4,1\n5,6,1\n")
    ds = datasets.CSVDataset(tmp_path / "d.csv", target_column="label")
    assert len(ds) == 3 and ds.columns == ["a", "b", "label"]
    x, t = ds[1]
    assert x.tolist() == [3.5, 4.0] and t == 1 and isinstance(t, int)
    assert datasets.CSVDataset(tmp_path / "d.csv")[0].tolist() == [1.0, 2.0, 0.0]
    (tmp_path / "bad.csv").write_text("a,b\n1,x\n")
    with pytest.raises(ValueError, match=r"row 2, column 2: 'x' is not a number"):
        datasets.CSVDataset(tmp_path / "bad.csv")
    with pytest.raises(KeyError, match="has no column 'c'"):
        datasets.CSVDataset(tmp_path / "d.csv", target_column="c")


def test_image_folder(tmp_path):
    Image = pytest.importorskip("PIL.Image")
    for cls, color in (("cat", (255, 0, 0)), ("dog", (0, 0, 255))):
        (tmp_path / cls).mkdir()
        for k in range(2):
            Image.new("RGB", (4, 3), color).save(tmp_path / cls / f"{k}.png")
    ds = datasets.ImageFolder(tmp_path, transform=lambda im: np.array(im))
    assert ds.classes == ["cat", "dog"] and ds.class_to_idx == {"cat": 0, "dog": 1}
    assert len(ds) == 4 and ds.targets == [0, 0, 1, 1]
    image, target = ds[2]
    assert image.shape == (3, 4, 3) and target == 1 and image[0, 0].tolist() == [0, 0, 255]
    batch, targets = next(iter(D.DataLoader(ds, batch_size=4)))
    assert tuple(batch.shape) == (4, 3, 4, 3) and targets.tolist() == [0, 0, 1, 1]
