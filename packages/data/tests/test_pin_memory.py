"""``pin_memory=True``: the pin thread's path, run on a machine without CUDA through a fake
pin (``_pin.pin_tensor`` replaced by a copy that records itself), and the CPU-only
behaviour (a warning, no thread)."""

from __future__ import annotations

import collections
import contextlib
import gc
import multiprocessing
import signal
import threading
import time

import pytest

import data_helpers as H
import ember_data as D
import ember_tensor as et
from ember_data import _pin

Pair = collections.namedtuple("Pair", "a b")
PIN_THREAD = "ember_data_pin"


class FakePin:
    """Stands in for ``Tensor.pin_memory``: a copy, remembered with the thread that made it."""

    def __init__(self):
        self.pinned: dict[int, tuple[et.Tensor, str]] = {}

    def __call__(self, t):
        out = t.clone()
        self.pinned[id(out)] = (out, threading.current_thread().name)
        return out

    def is_pinned(self, t) -> bool:
        return id(t) in self.pinned and self.pinned[id(t)][0] is t

    def thread_of(self, t) -> str:
        return self.pinned[id(t)][1]


@pytest.fixture
def fake_pin(monkeypatch):
    pin = FakePin()
    monkeypatch.setattr(_pin, "accelerator_available", lambda: True)
    monkeypatch.setattr(_pin, "pin_tensor", pin)
    yield pin
    gc.collect()
    assert wait_for(lambda: not pin_threads()), "a pin thread outlived its iterator"


def pin_threads():
    return [t for t in threading.enumerate() if t.name == PIN_THREAD]


def wait_for(condition, seconds: float = 5.0) -> bool:
    deadline = time.monotonic() + seconds
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.02)
    return condition()


@contextlib.contextmanager
def deadline(seconds: float):
    """Fails the test (TimeoutError) instead of hanging past ``seconds``."""

    def expire(signum, frame):
        raise TimeoutError(f"still running after {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


class Nested(D.Dataset):
    """Samples whose batches nest tensors in dicts, tuples, namedtuples and lists."""

    def __init__(self, n: int = 120):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return {
            "x": et.full((3,), float(i)),
            "pair": Pair(et.tensor(i), [et.ones(2) * i]),
            "name": f"s{i}",
        }


def leaves(batch):
    return [batch["x"], batch["pair"].a, batch["pair"].b[0]]


@pytest.mark.parametrize("workers", [0, 2])
def test_batches_are_pinned_in_order_by_the_thread(fake_pin, workers):
    with deadline(60):
        loader = D.DataLoader(Nested(), batch_size=3, num_workers=workers, pin_memory=True)
        got = list(loader)
    assert len(got) == 40
    for k, batch in enumerate(got):
        idx = list(range(3 * k, 3 * k + 3))
        assert batch["x"].tolist() == [[float(i)] * 3 for i in idx]
        assert batch["pair"].a.tolist() == idx
        assert batch["pair"].b[0].tolist() == [[float(i)] * 2 for i in idx]
        assert isinstance(batch["pair"], Pair) and batch["name"] == [f"s{i}" for i in idx]
        assert all(fake_pin.is_pinned(t) for t in leaves(batch))
        assert {fake_pin.thread_of(t) for t in leaves(batch)} == {PIN_THREAD}
    assert not multiprocessing.active_children()


@pytest.mark.parametrize("workers", [0, 2])
def test_shuffled_epochs_match_the_unpinned_loader(fake_pin, workers):
    def epochs(pin):
        g = et.Generator().manual_seed(5)
        loader = D.DataLoader(
            Nested(40),
            batch_size=4,
            shuffle=True,
            generator=g,
            num_workers=workers,
            pin_memory=pin,
            persistent_workers=workers > 0,
        )
        return [[b["pair"].a.tolist() for b in loader] for _ in range(2)]

    assert epochs(True) == epochs(False)


def test_the_thread_pins_the_next_batch_while_this_one_is_used(fake_pin):
    it = iter(D.DataLoader(Nested(12), batch_size=3, pin_memory=True))
    first = next(it)
    assert fake_pin.is_pinned(first["x"])
    # the second batch was handed to the thread before the first was returned
    assert wait_for(lambda: len(fake_pin.pinned) == 6)
    del it


def test_pin_memory_walks_every_container(fake_pin):
    class Custom:
        def pin_memory(self):
            return "custom pinned"

    class Tagged(dict):
        tag = "kept"

    t = et.arange(3.0)
    data = {
        "t": t,
        "list": [t, (t, "s")],
        "pair": Pair(t, b"raw"),
        "custom": Custom(),
        "tagged": Tagged(k=t),
        "n": 4,
        "text": "abc",
    }
    out = _pin.pin_memory(data, "cuda")
    for x in (out["t"], out["list"][0], out["list"][1][0], out["pair"].a, out["tagged"]["k"]):
        assert fake_pin.is_pinned(x) and x.tolist() == [0.0, 1.0, 2.0]
    assert isinstance(out["list"][1], tuple) and out["list"][1][1] == "s"
    assert isinstance(out["pair"], Pair) and out["pair"].b == b"raw"
    assert out["custom"] == "custom pinned"
    assert type(out["tagged"]) is Tagged and out["tagged"].tag == "kept"
    assert (out["n"], out["text"]) == (4, "abc")


def test_a_dataset_error_is_raised_in_its_turn_without_workers(fake_pin):
    it = iter(D.DataLoader(H.Failing(), batch_size=2, pin_memory=True))
    assert [next(it).tolist() for _ in range(3)] == [[0, 1], [2, 3], [4, 5]]
    with pytest.raises(KeyError, match="no sample 7") as info:
        next(it)
    # the original exception, with the frames of the dataset that raised it
    assert any(f.name == "__getitem__" for f in info.traceback)
    assert next(it).tolist() == [8, 9]  # as without pinning, the epoch goes on
    with pytest.raises(StopIteration):
        next(it)


def test_a_worker_error_is_raised_through_the_thread(fake_pin):
    with (
        deadline(60),
        pytest.raises(
            KeyError,
            match=r"Caught KeyError in DataLoader worker "
            r"process \d",
        ) as info,
    ):
        list(D.DataLoader(H.Failing(), batch_size=2, num_workers=2, pin_memory=True))
    assert "no sample 7" in str(info.value) and "Traceback" in str(info.value)
    assert not multiprocessing.active_children()


@pytest.mark.parametrize("workers", [0, 2])
def test_an_error_while_pinning_is_raised_with_its_traceback(monkeypatch, fake_pin, workers):
    def broken(t):
        raise ValueError("cannot pin this")

    monkeypatch.setattr(_pin, "pin_tensor", broken)
    with (
        deadline(60),
        pytest.raises(
            ValueError, match="Caught ValueError in pin memory thread for device 0"
        ) as info,
    ):
        list(D.DataLoader(Nested(6), batch_size=3, num_workers=workers, pin_memory=True))
    assert "cannot pin this" in str(info.value) and "in broken" in str(info.value)
    assert isinstance(info.value.__cause__, ValueError)
    assert not multiprocessing.active_children()


@pytest.mark.parametrize("workers", [0, 2])
def test_breaking_early_does_not_hang_and_the_thread_exits(fake_pin, workers):
    with deadline(30):
        for _ in range(3):
            for k, _batch in enumerate(
                D.DataLoader(Nested(), batch_size=2, num_workers=workers, pin_memory=True)
            ):
                if k == 2:
                    break
        gc.collect()
        assert wait_for(lambda: not pin_threads())
        assert wait_for(lambda: not multiprocessing.active_children())


def test_the_thread_exits_at_the_end_of_an_epoch(fake_pin):
    it = iter(D.DataLoader(Nested(6), batch_size=3, pin_memory=True))
    assert len(pin_threads()) == 1
    assert len(list(it)) == 2
    assert not pin_threads()  # joined before StopIteration, while the iterator lives


def test_persistent_workers_keep_one_thread(fake_pin):
    loader = D.DataLoader(
        Nested(12), batch_size=3, num_workers=2, pin_memory=True, persistent_workers=True
    )
    with deadline(60):
        for _ in range(3):
            got = list(loader)
            assert [b["pair"].a.tolist() for b in got] == [
                [0, 1, 2],
                [3, 4, 5],
                [6, 7, 8],
                [9, 10, 11],
            ]
            assert all(fake_pin.is_pinned(b["x"]) for b in got)
            assert len(pin_threads()) == 1
    del loader, got
    gc.collect()
    assert wait_for(lambda: not multiprocessing.active_children(), 10)


def test_timeout_is_honoured(fake_pin):
    start = time.monotonic()
    with deadline(30), pytest.raises(RuntimeError, match="DataLoader timed out after 1 seconds"):
        list(D.DataLoader(H.Slow(), batch_size=1, num_workers=1, timeout=1, pin_memory=True))
    assert time.monotonic() - start < 3.5  # at the timeout: the sleeping worker is terminated


def test_a_killed_worker_is_reported(fake_pin):
    with (
        deadline(30),
        pytest.raises(
            RuntimeError,
            match=r"DataLoader worker \(pid \d+\) is "
            r"killed by signal: SIGKILL",
        ),
    ):
        list(D.DataLoader(H.Dying(), batch_size=1, num_workers=2, pin_memory=True))
    assert not multiprocessing.active_children()


@pytest.mark.skipif(et.cuda.is_available(), reason="checks the behaviour without a CUDA device")
@pytest.mark.parametrize("workers", [0, 2])
def test_without_cuda_it_warns_and_starts_no_thread(monkeypatch, workers):
    monkeypatch.setattr(_pin, "pin_tensor", pytest.fail)
    with pytest.warns(
        UserWarning, match="'pin_memory' argument is set as true but no accelerator is found"
    ):
        loader = D.DataLoader(Nested(6), batch_size=3, num_workers=workers, pin_memory=True)
    it = iter(loader)
    assert it.pinner is None and not pin_threads()
    assert [b["pair"].a.tolist() for b in it] == [[0, 1, 2], [3, 4, 5]]


def test_pin_memory_device_is_deprecated_and_ignored(fake_pin):
    with pytest.warns(
        UserWarning,
        match="pin_memory_device is deprecated, the current "
        "accelerator will be used as the device,ignore "
        "pin_memory_device='cuda:1'",
    ):
        loader = D.DataLoader(Nested(6), batch_size=3, pin_memory=True, pin_memory_device="cuda:1")
    assert all(fake_pin.is_pinned(b["x"]) for b in loader)
    D.DataLoader(Nested(6), pin_memory_device="cuda:1")  # no warning without pin_memory
