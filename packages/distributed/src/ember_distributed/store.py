"""Key-value stores through which the processes of a job meet (``torch.distributed``'s
``Store`` API): ``TCPStore`` (one process serves it, every process connects), ``FileStore`` (a
file on a filesystem every process sees), ``HashStore`` (in one process) and ``PrefixStore``
(a namespace inside another store).

Values are bytes (a ``str`` is stored encoded as UTF-8). ``get`` and ``wait`` block until the
keys exist or the store's timeout passes (``DistStoreError``, a ``RuntimeError``, naming the
keys). ``add`` keeps a counter in the key's value (its decimal digits), as PyTorch's.

The TCP server also knows which rank each client is (``TCPStore(..., rank=)``, set by
``init_process_group``): a client whose connection drops without ``close()`` is recorded as
dead (``dead_ranks()``), which is how the survivors name a rank that died.

>>> s = HashStore()
>>> s.set("a", "1"); s.add("a", 2)
3
>>> s.get("a")
b'3'
"""

from __future__ import annotations

import datetime
import fcntl
import os
import socket
import struct
import threading
import time

__all__ = ["Store", "TCPStore", "FileStore", "HashStore", "PrefixStore", "DistStoreError"]

_DEFAULT_TIMEOUT = datetime.timedelta(seconds=300)


class DistStoreError(RuntimeError):
    """A store operation that did not complete: a timeout, or a server that went away."""


def _seconds(timeout) -> float:
    if isinstance(timeout, datetime.timedelta):
        return timeout.total_seconds()
    return float(timeout)


def _as_bytes(value) -> bytes:
    if isinstance(value, str):
        return value.encode()
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    raise TypeError(f"store values must be str or bytes, not {type(value).__name__}")


class Store:
    """The interface every store implements (``torch.distributed.Store``)."""

    def __init__(self, timeout=_DEFAULT_TIMEOUT) -> None:
        self._timeout = _seconds(timeout)

    @property
    def timeout(self) -> datetime.timedelta:
        return datetime.timedelta(seconds=self._timeout)

    def set_timeout(self, timeout) -> None:
        self._timeout = _seconds(timeout)

    def set(self, key: str, value) -> None:
        raise NotImplementedError

    def get(self, key: str) -> bytes:
        raise NotImplementedError

    def add(self, key: str, amount: int) -> int:
        raise NotImplementedError

    def compare_set(self, key: str, expected_value, desired_value) -> bytes:
        raise NotImplementedError

    def check(self, keys: list[str]) -> bool:
        raise NotImplementedError

    def wait(self, keys: list[str], timeout=None) -> None:
        raise NotImplementedError

    def delete_key(self, key: str) -> bool:
        raise NotImplementedError

    def num_keys(self) -> int:
        raise NotImplementedError

    def dead_ranks(self) -> list[int]:
        """The ranks whose connection dropped without closing (TCPStore only)."""
        return []


def _compare_set(current: bytes | None, expected: bytes, desired: bytes) -> tuple[bool, bytes]:
    """PyTorch's compare_set: (whether the value becomes ``desired``, what the call returns).
    A missing key counts as matching an empty ``expected``."""
    if current is None:
        return (True, desired) if expected == b"" else (False, expected)
    return (True, desired) if current == expected else (False, current)


class _Table:
    """The data of a store and the condition its waiters sleep on (shared by HashStore and
    the TCP server)."""

    def __init__(self) -> None:
        self.data: dict[str, bytes] = {}
        self.cond = threading.Condition()
        self.dead: set[int] = set()

    def set(self, key: str, value: bytes) -> None:
        with self.cond:
            self.data[key] = value
            self.cond.notify_all()

    def add(self, key: str, amount: int) -> int:
        with self.cond:
            n = int(self.data.get(key, b"0")) + amount
            self.data[key] = str(n).encode()
            self.cond.notify_all()
            return n

    def compare_set(self, key: str, expected: bytes, desired: bytes) -> bytes:
        with self.cond:
            swap, result = _compare_set(self.data.get(key), expected, desired)
            if swap:
                self.data[key] = desired
                self.cond.notify_all()
            return result

    def wait(self, keys: list[str], timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        with self.cond:
            while not all(k in self.data for k in keys):
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self.cond.wait(min(left, 1.0))
            return True

    def delete(self, key: str) -> bool:
        with self.cond:
            return self.data.pop(key, None) is not None

    def mark_dead(self, rank: int) -> None:
        with self.cond:
            self.dead.add(rank)
            self.cond.notify_all()


def _timeout_error(keys, timeout: float) -> DistStoreError:
    return DistStoreError(f"Timed out after {timeout:g} seconds waiting for the keys {list(keys)} "
                          "in the store")


class HashStore(Store):
    """A store inside one process (threads share it)."""

    def __init__(self, timeout=_DEFAULT_TIMEOUT) -> None:
        super().__init__(timeout)
        self._table = _Table()

    def set(self, key, value):
        self._table.set(key, _as_bytes(value))

    def get(self, key):
        self.wait([key])
        with self._table.cond:
            return self._table.data[key]

    def add(self, key, amount):
        return self._table.add(key, int(amount))

    def compare_set(self, key, expected_value, desired_value):
        return self._table.compare_set(key, _as_bytes(expected_value), _as_bytes(desired_value))

    def check(self, keys):
        with self._table.cond:
            return all(k in self._table.data for k in keys)

    def wait(self, keys, timeout=None):
        t = self._timeout if timeout is None else _seconds(timeout)
        if not self._table.wait(list(keys), t):
            raise _timeout_error(keys, t)

    def delete_key(self, key):
        return self._table.delete(key)

    def num_keys(self):
        with self._table.cond:
            return len(self._table.data)


# ---------------------------------------------------------------------------- TCP protocol
# A request is one opcode byte and length-prefixed fields; a reply is length-prefixed fields.
_HELLO, _SET, _GET, _ADD, _CAS, _CHECK, _WAIT, _DELETE, _NUM, _DEAD, _BYE = range(11)


def _send_fields(sock: socket.socket, op: int | None, *fields: bytes) -> None:
    parts = [] if op is None else [bytes([op])]
    parts.append(struct.pack("!I", len(fields)))
    for f in fields:
        parts.append(struct.pack("!Q", len(f)))
        parts.append(f)
    sock.sendall(b"".join(parts))


def _recv_exact(sock: socket.socket, n: int) -> bytes:
    buf = bytearray()
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            raise ConnectionError("the store's connection closed")
        buf += chunk
    return bytes(buf)


def _recv_fields(sock: socket.socket) -> list[bytes]:
    (count,) = struct.unpack("!I", _recv_exact(sock, 4))
    out = []
    for _ in range(count):
        (n,) = struct.unpack("!Q", _recv_exact(sock, 8))
        out.append(_recv_exact(sock, n))
    return out


class _Server:
    """The TCP server of a TCPStore: a thread accepting clients, a thread per client."""

    def __init__(self, host: str, port: int) -> None:
        self.table = _Table()
        self.listener = socket.create_server((host, port), reuse_port=False, backlog=1024)
        self.port = self.listener.getsockname()[1]
        self.closed = False
        threading.Thread(target=self._accept, name="ember-store-server", daemon=True).start()

    def _accept(self) -> None:
        while not self.closed:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        rank, said_bye = None, False
        t = self.table
        try:
            while True:
                op = _recv_exact(conn, 1)[0]
                f = _recv_fields(conn)
                if op == _HELLO:
                    rank = int(f[0]) if f[0] else None
                    _send_fields(conn, None)
                elif op == _SET:
                    t.set(f[0].decode(), f[1])
                    _send_fields(conn, None)
                elif op == _GET:
                    key = f[0].decode()
                    ok = t.wait([key], float(f[1]))
                    with t.cond:
                        _send_fields(conn, None, *([t.data[key]] if ok else []))
                elif op == _ADD:
                    _send_fields(conn, None, str(t.add(f[0].decode(), int(f[1]))).encode())
                elif op == _CAS:
                    _send_fields(conn, None, t.compare_set(f[0].decode(), f[1], f[2]))
                elif op == _CHECK:
                    with t.cond:
                        ok = all(k.decode() in t.data for k in f)
                    _send_fields(conn, None, b"1" if ok else b"")
                elif op == _WAIT:
                    ok = t.wait([k.decode() for k in f[1:]], float(f[0]))
                    _send_fields(conn, None, b"1" if ok else b"")
                elif op == _DELETE:
                    _send_fields(conn, None, b"1" if t.delete(f[0].decode()) else b"")
                elif op == _NUM:
                    with t.cond:
                        _send_fields(conn, None, str(len(t.data)).encode())
                elif op == _DEAD:
                    with t.cond:
                        _send_fields(conn, None, *(str(r).encode() for r in sorted(t.dead)))
                elif op == _BYE:
                    said_bye = True
                    _send_fields(conn, None)
                    return
        except (ConnectionError, OSError):
            pass
        finally:
            conn.close()
            if rank is not None and not said_bye and not self.closed:
                t.mark_dead(rank)

    def close(self) -> None:
        self.closed = True
        self.listener.close()


class TCPStore(Store):
    """A store served over TCP by one process (``is_master=True``) to all of them.

    ``TCPStore(host_name, port, world_size=None, is_master=False, timeout=300 s,
    wait_for_workers=True, rank=None)``: the master binds ``port`` (0: any free port, read
    back from ``.port``); clients connect, retrying until the timeout. With ``world_size``
    and ``wait_for_workers``, the master's constructor returns once every process has
    connected. ``rank`` names this client to the server (see ``dead_ranks``)."""

    def __init__(self, host_name: str, port: int, world_size: int | None = None,
                 is_master: bool = False, timeout=_DEFAULT_TIMEOUT, wait_for_workers: bool = True,
                 *, rank: int | None = None) -> None:
        super().__init__(timeout)
        self.host, self._server = host_name, None
        if is_master:
            self._server = _Server("" if host_name in ("", "0.0.0.0") else host_name, port)
            port = self._server.port
        self.port = port
        self._lock = threading.Lock()
        self._sock = self._connect(host_name or "127.0.0.1", port)
        self._request(_HELLO, b"" if rank is None else str(rank).encode())
        if world_size is not None and self._server is None:
            self.add("__ember_store_workers", 1)
        if world_size is not None and is_master:
            self.add("__ember_store_workers", 1)
            if wait_for_workers:
                self._wait_count("__ember_store_workers", world_size)

    def _connect(self, host: str, port: int) -> socket.socket:
        deadline = time.monotonic() + self._timeout
        delay = 0.01
        while True:
            try:
                sock = socket.create_connection((host, port), timeout=max(1.0, self._timeout))
                sock.settimeout(None)
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                return sock
            except OSError as e:
                if time.monotonic() >= deadline:
                    raise DistStoreError(
                        f"TCPStore: could not connect to {host}:{port} within "
                        f"{self._timeout:g} seconds ({e})") from None
                time.sleep(delay)
                delay = min(delay * 2, 1.0)

    def _request(self, op: int, *fields: bytes) -> list[bytes]:
        with self._lock:
            try:
                _send_fields(self._sock, op, *fields)
                return _recv_fields(self._sock)
            except (ConnectionError, OSError) as e:
                raise DistStoreError(f"TCPStore: the connection to {self.host}:{self.port} "
                                     f"failed ({e}); the process serving the store may have "
                                     "exited") from None

    def _wait_count(self, key: str, n: int) -> None:
        deadline = time.monotonic() + self._timeout
        while self.add(key, 0) < n:
            if time.monotonic() >= deadline:
                raise DistStoreError(f"TCPStore: timed out after {self._timeout:g} seconds "
                                     f"waiting for {n} processes to connect")
            time.sleep(0.01)

    def set(self, key, value):
        self._request(_SET, key.encode(), _as_bytes(value))

    def get(self, key):
        reply = self._request(_GET, key.encode(), repr(self._timeout).encode())
        if not reply:
            raise _timeout_error([key], self._timeout)
        return reply[0]

    def add(self, key, amount):
        return int(self._request(_ADD, key.encode(), str(int(amount)).encode())[0])

    def compare_set(self, key, expected_value, desired_value):
        return self._request(_CAS, key.encode(), _as_bytes(expected_value),
                             _as_bytes(desired_value))[0]

    def check(self, keys):
        return bool(self._request(_CHECK, *(k.encode() for k in keys))[0])

    def wait(self, keys, timeout=None):
        t = self._timeout if timeout is None else _seconds(timeout)
        if not self._request(_WAIT, repr(t).encode(), *(k.encode() for k in keys))[0]:
            raise _timeout_error(keys, t)

    def delete_key(self, key):
        return bool(self._request(_DELETE, key.encode())[0])

    def num_keys(self):
        return int(self._request(_NUM)[0])

    def dead_ranks(self):
        return [int(r) for r in self._request(_DEAD)]

    def close(self) -> None:
        """Says goodbye (this rank is not counted as dead) and closes the connection; the
        master also stops serving."""
        sock = getattr(self, "_sock", None)
        if sock is not None:
            try:
                sock.settimeout(1.0)
                self._request(_BYE)
            except (DistStoreError, OSError):
                pass
            sock.close()
            self._sock = None
        if getattr(self, "_server", None) is not None:
            self._server.close()
            self._server = None

    def __del__(self):
        self.close()


class FileStore(Store):
    """A store in a file that every process opens (``torch.distributed.FileStore``; what
    ``init_method="file:///path"`` makes): on one machine, or on a filesystem the machines
    share that supports ``fcntl`` locks.

    ``FileStore(file_name, world_size=-1, timeout=300 s)``. Every change is a record appended
    under an exclusive lock; a process reads the records appended since its last read. With
    ``world_size``, the last of that many processes to ``close()`` removes the file, so the
    next job starts afresh (as PyTorch's). Which rank died is not known to a file
    (``dead_ranks()`` is empty): a collective waiting for a dead rank ends at the group's
    timeout."""

    _SET, _DELETE = 1, 2
    _USERS = "__ember_filestore_closed"

    def __init__(self, file_name: str, world_size: int = -1, timeout=_DEFAULT_TIMEOUT) -> None:
        super().__init__(timeout)
        self.path, self.world_size = os.fspath(file_name), int(world_size)
        self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        self._data: dict[str, bytes] = {}
        self._pos = 0
        self._lock = threading.Lock()

    def _locked(self, exclusive: bool):
        store = self

        class _Held:
            def __enter__(self):
                store._lock.acquire()
                fcntl.flock(store._fd, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
                store._replay()

            def __exit__(self, *exc):
                fcntl.flock(store._fd, fcntl.LOCK_UN)
                store._lock.release()

        return _Held()

    def _replay(self) -> None:
        """Applies the records appended since the last read."""
        end = os.fstat(self._fd).st_size
        if end <= self._pos:
            return
        raw = os.pread(self._fd, end - self._pos, self._pos)
        pos = 0
        while pos + 13 <= len(raw):
            op, klen, vlen = struct.unpack_from("!BIQ", raw, pos)
            if pos + 13 + klen + vlen > len(raw):
                break  # a record being written (never: writers hold the lock)
            key = raw[pos + 13:pos + 13 + klen].decode()
            value = raw[pos + 13 + klen:pos + 13 + klen + vlen]
            if op == self._SET:
                self._data[key] = value
            else:
                self._data.pop(key, None)
            pos += 13 + klen + vlen
        self._pos += pos

    def _append(self, op: int, key: str, value: bytes = b"") -> None:
        k = key.encode()
        record = struct.pack("!BIQ", op, len(k), len(value)) + k + value
        end = os.fstat(self._fd).st_size
        os.pwrite(self._fd, record, end)
        self._replay()

    def set(self, key, value):
        with self._locked(True):
            self._append(self._SET, key, _as_bytes(value))

    def get(self, key):
        self.wait([key])
        with self._locked(False):
            return self._data[key]

    def add(self, key, amount):
        with self._locked(True):
            value = int(self._data.get(key, b"0")) + int(amount)
            self._append(self._SET, key, str(value).encode())
            return value

    def compare_set(self, key, expected_value, desired_value):
        expected, desired = _as_bytes(expected_value), _as_bytes(desired_value)
        with self._locked(True):
            swap, result = _compare_set(self._data.get(key), expected, desired)
            if swap:
                self._append(self._SET, key, desired)
            return result

    def check(self, keys):
        with self._locked(False):
            return all(k in self._data for k in keys)

    def wait(self, keys, timeout=None):
        t = self._timeout if timeout is None else _seconds(timeout)
        deadline = time.monotonic() + t
        while not self.check(keys):
            if time.monotonic() >= deadline:
                raise _timeout_error(keys, t)
            time.sleep(0.005)

    def delete_key(self, key):
        with self._locked(True):
            if key not in self._data:
                return False
            self._append(self._DELETE, key)
            return True

    def num_keys(self):
        with self._locked(False):
            return sum(1 for k in self._data if k != self._USERS)

    def close(self) -> None:
        """Closes the file; with ``world_size``, the last process to close removes it."""
        fd = getattr(self, "_fd", None)
        if fd is None:
            return
        try:
            if self.world_size > 0 and self.add(self._USERS, 1) >= self.world_size:
                os.unlink(self.path)
        except OSError:
            pass
        os.close(fd)
        self._fd = None

    def __del__(self):
        self.close()


class PrefixStore(Store):
    """Every key of ``store`` under ``prefix + "/"`` (``torch.distributed.PrefixStore``)."""

    def __init__(self, prefix: str, store: Store) -> None:
        super().__init__(store.timeout)
        self.prefix, self.underlying_store = prefix, store

    def _k(self, key: str) -> str:
        return f"{self.prefix}/{key}"

    def set(self, key, value):
        self.underlying_store.set(self._k(key), value)

    def get(self, key):
        return self.underlying_store.get(self._k(key))

    def add(self, key, amount):
        return self.underlying_store.add(self._k(key), amount)

    def compare_set(self, key, expected_value, desired_value):
        return self.underlying_store.compare_set(self._k(key), expected_value, desired_value)

    def check(self, keys):
        return self.underlying_store.check([self._k(k) for k in keys])

    def wait(self, keys, timeout=None):
        self.underlying_store.wait([self._k(k) for k in keys], timeout)

    def delete_key(self, key):
        return self.underlying_store.delete_key(self._k(key))

    def num_keys(self):
        return self.underlying_store.num_keys()

    def dead_ranks(self):
        return self.underlying_store.dead_ranks()
