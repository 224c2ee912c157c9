"""The core's side of sharing memory between processes: a storage adopting another's memory
in place, the sharer's record, _reinterpret, and share_memory_ without a sharer."""

from __future__ import annotations

import numpy as np
import pytest

import ember_tensor as et


def test_adopt_moves_every_view_to_the_new_memory():
    t = et.arange(6.0).reshape(2, 3)
    view = t[1]
    target = et.from_numpy(np.zeros(t._storage_nbytes(), dtype=np.uint8))
    t._adopt_storage_memory(target)
    assert t._storage_data_ptr() == target._storage_data_ptr()
    view.add_(10)  # the view writes into the adopted memory
    np.testing.assert_array_equal(target._reinterpret(et.float32, (2, 3), (3, 1), 0).numpy(),
                                  [[0, 1, 2], [13, 14, 15]])
    with pytest.raises(RuntimeError, match=r"^_adopt_storage_memory: the target storage holds "
                                           r"4 bytes, this one 24$"):
        t._adopt_storage_memory(et.zeros(4, dtype=et.uint8))


def test_storage_record_is_shared_by_views():
    t = et.ones(4)
    assert t._storage_record is None and not t.is_shared()
    record = object()
    t._storage_record = record
    assert t[1:]._storage_record is record and t[2:].is_shared()
    t._storage_record = None
    assert not t.is_shared()


def test_reinterpret_checks_the_storage_bounds():
    b = et.from_numpy(np.arange(16, dtype=np.uint8))
    assert b._reinterpret(et.int32, (2, 2), (1, 2), 0).tolist() == [
        [50462976, 185207048], [117835012, 252579084]]
    assert tuple(b._reinterpret(et.float64, (0, 5), (5, 1), 2).shape) == (0, 5)
    with pytest.raises(RuntimeError, match=r"^_reinterpret: sizes \[3\], strides \[1\] and offset "
                                           r"2 of float32 reach outside the storage of 16 bytes$"):
        b._reinterpret(et.float32, (3,), (1,), 2)
    with pytest.raises(RuntimeError, match=r"^_reinterpret: 1 sizes but 2 strides$"):
        b._reinterpret(et.uint8, (3,), (1, 1), 0)
    with pytest.raises(RuntimeError, match="negative size -1"):
        b._reinterpret(et.uint8, (-1,), (1,), 0)


def test_share_memory_without_a_sharer(monkeypatch):
    monkeypatch.setattr(et, "_memory_sharer", None)
    with pytest.raises(RuntimeError, match="no memory sharer is installed"):
        et.ones(2).share_memory_()
