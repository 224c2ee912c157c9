"""The rendezvous stores: TCPStore between threads of this process (one serves), HashStore,
PrefixStore; torch.distributed's store semantics (blocking get, counters, compare_set)."""

from __future__ import annotations

import datetime
import threading
import time

import pytest

from ember_distributed import DistStoreError, FileStore, HashStore, PrefixStore, TCPStore
from ember_distributed._testing import describe, run_ranks


def _pair():
    master = TCPStore("127.0.0.1", 0, is_master=True, timeout=datetime.timedelta(seconds=5))
    client = TCPStore("127.0.0.1", master.port, timeout=datetime.timedelta(seconds=5))
    return master, client


@pytest.mark.parametrize("kind", ["tcp", "hash"])
def test_set_get_add_check_delete(kind):
    a, b = _pair() if kind == "tcp" else (HashStore(),) * 2
    a.set("k", "v")
    assert b.get("k") == b"v"
    b.set("bin", b"\x00\xff")
    assert a.get("bin") == b"\x00\xff"
    assert a.add("n", 2) == 2 and b.add("n", 3) == 5 and a.get("n") == b"5"
    assert a.check(["k", "n"]) and not a.check(["k", "missing"])
    assert b.compare_set("k", "v", "w") == b"w" and a.get("k") == b"w"
    assert b.compare_set("k", "nope", "x") == b"w"  # unchanged: the current value
    assert b.compare_set("fresh", "", "y") == b"y"
    assert a.num_keys() >= 4
    assert b.delete_key("k") and not b.delete_key("k")
    with pytest.raises(TypeError, match="str or bytes"):
        a.set("bad", 3)


@pytest.mark.parametrize("kind", ["tcp", "hash"])
def test_get_blocks_until_set_and_times_out_naming_the_key(kind):
    a, b = _pair() if kind == "tcp" else (HashStore(timeout=datetime.timedelta(seconds=5)),) * 2
    threading.Timer(0.2, lambda: a.set("late", "1")).start()
    t0 = time.monotonic()
    assert b.get("late") == b"1"
    assert time.monotonic() - t0 >= 0.15
    with pytest.raises(
        DistStoreError,
        match=r"Timed out after 0.3 seconds waiting for the keys "
        r"\['never'\]",
    ):
        b.wait(["never"], datetime.timedelta(seconds=0.3))
    b.set_timeout(datetime.timedelta(seconds=0.2))
    with pytest.raises(DistStoreError, match="never2"):
        b.get("never2")


def test_prefix_store_namespaces_keys():
    base = HashStore()
    p = PrefixStore("job", base)
    p.set("a", "1")
    assert base.get("job/a") == b"1" and p.get("a") == b"1"
    assert p.add("c", 4) == 4 and p.check(["a", "c"]) and not base.check(["a"])


def test_a_client_that_disappears_is_reported_dead_and_one_that_closes_is_not():
    master = TCPStore("127.0.0.1", 0, is_master=True, timeout=datetime.timedelta(seconds=5), rank=0)
    polite = TCPStore("127.0.0.1", master.port, rank=1)
    rude = TCPStore("127.0.0.1", master.port, rank=2)
    polite.close()
    rude._sock.close()  # as a killed process's connection
    deadline = time.monotonic() + 5
    while master.dead_ranks() != [2] and time.monotonic() < deadline:
        time.sleep(0.02)
    assert master.dead_ranks() == [2]


def test_master_waits_for_workers_and_clients_retry_connecting():
    from ember_distributed._testing import free_port

    port = free_port()
    got = {}

    def client():
        got["c"] = TCPStore("127.0.0.1", port, world_size=2, timeout=datetime.timedelta(seconds=5))

    th = threading.Thread(target=client)
    th.start()  # before the server exists: it retries
    time.sleep(0.2)
    master = TCPStore(
        "127.0.0.1", port, world_size=2, is_master=True, timeout=datetime.timedelta(seconds=5)
    )
    th.join(5)
    assert "c" in got and master.add("__ember_store_workers", 0) == 2
    with pytest.raises(DistStoreError, match="could not connect"):
        TCPStore("127.0.0.1", free_port(), timeout=datetime.timedelta(seconds=0.3))


def test_file_store_between_two_openers(tmp_path):
    """Two FileStores on one file stand for two processes: what one writes the other reads."""
    path = tmp_path / "store"
    a, b = FileStore(str(path), 2, timeout=2), FileStore(str(path), 2, timeout=2)
    a.set("k", "v")
    assert b.get("k") == b"v" and b.check(["k"]) and not b.check(["k", "missing"])
    assert a.add("n", 5) == 5 and b.add("n", -2) == 3 and a.get("n") == b"3"
    assert b.compare_set("c", "", "first") == b"first"  # a missing key matches ""
    assert a.compare_set("c", "wrong", "x") == b"first"
    assert a.compare_set("c", "first", "second") == b"second" and b.get("c") == b"second"
    assert a.compare_set("missing", "x", "y") == b"x"
    assert b.num_keys() == 3
    assert a.delete_key("k") and not b.delete_key("k") and not b.check(["k"])
    with pytest.raises(DistStoreError, match=r"Timed out after 0.2 seconds .* keys \['k'\]"):
        b.wait(["k"], datetime.timedelta(seconds=0.2))
    a.close()
    assert path.exists()  # one of the two processes still has it open
    b.close()
    assert not path.exists()  # the last one removed it


FILE_RENDEZVOUS = """
dist.init_process_group("gloo", init_method="file://" + os.environ["STORE_FILE"], rank=rank,
                        world_size=world)
t = et.full((3,), float(rank + 1))
dist.all_reduce(t)
report(t=t.tolist(), backend=dist.get_backend())
dist.destroy_process_group()
"""


def test_file_rendezvous(tmp_path):
    path = tmp_path / "rendezvous"
    pytest.importorskip("mpi4py")
    ranks = run_ranks(FILE_RENDEZVOUS, 3, env={"STORE_FILE": str(path)})
    assert all(r.returncode == 0 for r in ranks), describe(ranks)
    for r in ranks:
        assert r.results == {"t": [6.0, 6.0, 6.0], "backend": "gloo"}
    assert not path.exists()
