"""Checkpoints: ``save(obj, f)`` and ``load(f)``, PyTorch's ``torch.save``/``torch.load``.

A checkpoint is a safetensors file (https://github.com/huggingface/safetensors): an 8-byte
little-endian header length, a JSON header ``{name: {"dtype", "shape", "data_offsets"}}``
with a ``__metadata__`` table of strings, then the tensors' bytes, back to back. Any
safetensors reader can open it; the tensors are named by their key paths
(``"layer.weight"``, ``"state.0.exp_avg"``), so ``safetensors.torch.load_file`` reads a
saved state_dict as a torch state_dict.

The structure around the tensors (dicts, lists, tuples, plain values) is a JSON description
in ``__metadata__["ember"]``. Loading parses JSON and reads bytes, nothing else: no pickle,
no imports, no code named by the file. See docs/tensor-core.md ("Checkpoints") for what
round-trips and how.

The description (format version 1)::

    {"format": "ember", "version": 1, "tensors": [DESC, ...], "root": NODE}

    NODE:  null | true | false | INT | FLOAT | STRING    the value itself
           {"float": "nan" | "inf" | "-inf"}             a float JSON has no literal for
           [NODE, ...]                                   a list
           {"tuple": [NODE, ...]}                        a tuple
           {"dict": [[KEY, NODE], ...]}                  a dict (KEY: a plain-value NODE)
           {"odict": [[KEY, NODE], ...]}                 an OrderedDict, with optionally
                                                         "_metadata": NODE (its attribute)
           {"tensor": I}                                 tensors[I] (one object per index)
    DESC:  {"entry": NAME}                               the file's tensor NAME itself
           {"entry": NAME, "shape": [...], "stride": [...], "offset": K}
                                                         a view of NAME's elements
           either with "requires_grad": true when the tensor required grad

and ``"crc32": {NAME: CRC, ...}``: the CRC-32 (``zlib.crc32``) of every entry's bytes, which
``load`` checks, so that a flipped byte of tensor data is a ``CheckpointError`` rather than a
changed weight (files without it, such as other programs' safetensors files, load
unchecked). Every field of the header and of the description is validated before any tensor
data is read.
"""

from __future__ import annotations

import ctypes
import json
import math
import os
import secrets
import struct
import sys
import zlib
from collections import OrderedDict

from . import _C, _torch_checkpoint
from . import _checkpoint_values as _values
from ._checkpoint_values import (
    add_safe_globals,
    clear_safe_globals,
    get_safe_globals,
    safe_globals,
)

__all__ = ["save", "load", "CheckpointError", "add_safe_globals", "clear_safe_globals",
           "get_safe_globals", "safe_globals"]

FORMAT = "ember"
FORMAT_VERSION = 2  # 2: the values of _checkpoint_values.py (written only when present)
METADATA_KEY = "ember"

# safetensors' own limit: a larger header is not a safetensors file
MAX_HEADER_BYTES = 100_000_000
# containers nested deeper than this are refused by save and by load
MAX_DEPTH = 200
# sizes, strides, offsets and element counts a tensor can have
_INT64_MAX = 2**63 - 1

# Ember dtype name <-> safetensors dtype name, and element sizes
_TO_ST = {"float32": "F32", "float64": "F64", "float16": "F16", "bfloat16": "BF16",
          "int8": "I8", "int16": "I16", "int32": "I32", "int64": "I64", "uint8": "U8",
          "bool": "BOOL"}
_FROM_ST = {v: k for k, v in _TO_ST.items()}
_ITEMSIZE = {"F32": 4, "F64": 8, "F16": 2, "BF16": 2, "I8": 1, "I16": 2, "I32": 4, "I64": 8,
             "U8": 1, "BOOL": 1}


class CheckpointError(RuntimeError):
    """A checkpoint file is not a valid safetensors file, or not one Ember can read. The
    message names the file and the problem; ``filename`` holds the file's name."""

    def __init__(self, filename: str, problem: str):
        super().__init__(f"ember_tensor.load: {filename}: {problem}")
        self.filename = filename
        self.problem = problem


def _check_byteorder() -> None:
    if sys.byteorder != "little":  # pragma: no cover - no big-endian CI
        raise RuntimeError("ember_tensor.save/load: checkpoints need a little-endian host")


def _dtype_name(t) -> str:
    return str(t.dtype).rsplit(".", 1)[-1]


def _byte_view(t) -> memoryview:
    """The bytes of a contiguous CPU tensor, without copying (read and write). Through
    ctypes rather than ``.numpy()``: NumPy has no bfloat16. The caller keeps ``t`` alive."""
    n = t.numel() * t.element_size()
    if n == 0:
        return memoryview(b"")
    return memoryview((ctypes.c_ubyte * n).from_address(t.data_ptr())).cast("B")


# ---------------------------------------------------------------------------- saving

class _Saver:
    """Turns obj into (description, entries). An entry is (name, st_dtype, shape, source),
    source a tensor whose contiguous values are the entry's bytes."""

    def __init__(self, pickle_protocol: int = 2):
        self.pickle_protocol = pickle_protocol
        self.version = 1  # 2 once a value of _checkpoint_values is written
        self.objects: list = []  # distinct tensor objects, in order of first appearance
        self.index: dict[int, int] = {}  # id(tensor) -> its index in objects
        self.names: list[str] = []  # the key path of each object's first appearance
        self.used: set[str] = {"__metadata__"}  # reserved by the format
        self.active: set[int] = set()  # ids of the containers being encoded (cycles)

    def mark(self) -> int:
        """A point to ``rollback`` to: the tensors recorded so far."""
        return len(self.objects)

    def rollback(self, mark: int) -> None:
        """Forgets the tensors recorded after ``mark`` (an encoding that was abandoned)."""
        for t in self.objects[mark:]:
            self.index.pop(id(t), None)
        del self.objects[mark:], self.names[mark:]

    def unique(self, name: str) -> str:
        candidate, n = name, 1
        while candidate in self.used:
            n += 1
            candidate = f"{name}#{n}"
        self.used.add(candidate)
        return candidate

    @staticmethod
    def scalar(v):
        if v is None or v is True or v is False:
            return v
        if isinstance(v, int):
            return int(v)
        if isinstance(v, float):
            v = float(v)
            if math.isfinite(v):
                return v
            return {"float": "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf")}
        if isinstance(v, str):
            return str.__str__(v)
        return _NOT_SCALAR

    def encode(self, obj, path: list):
        node = self.scalar(obj)
        if node is not _NOT_SCALAR:
            return node
        if isinstance(obj, _C.Tensor):
            return {"tensor": self.tensor(obj, path)}
        if isinstance(obj, (dict, list, tuple)):
            if id(obj) in self.active:
                raise ValueError(f"ember_tensor.save: {_where(path)} contains itself (a "
                                 "reference cycle), which a checkpoint cannot hold")
            if len(path) >= MAX_DEPTH:
                raise ValueError(f"ember_tensor.save: {_where(path)} is nested more than "
                                 f"{MAX_DEPTH} containers deep")
            self.active.add(id(obj))
            try:
                return self.container(obj, path)
            finally:
                self.active.discard(id(obj))
        if id(obj) in self.active:
            raise ValueError(f"ember_tensor.save: {_where(path)} contains itself (a "
                             "reference cycle), which a checkpoint cannot hold")
        self.active.add(id(obj))
        try:
            node = _values.encode(self, obj, path)
        finally:
            self.active.discard(id(obj))
        self.version = 2
        return node

    def container(self, obj, path: list):
        if isinstance(obj, list):
            return [self.encode(v, [*path, i]) for i, v in enumerate(obj)]
        if isinstance(obj, tuple):
            return {"tuple": [self.encode(v, [*path, i]) for i, v in enumerate(obj)]}
        pairs = []
        for k, v in obj.items():
            key = self.scalar(k)
            if key is _NOT_SCALAR:
                raise TypeError(
                    f"ember_tensor.save: {_where(path)} has a key of type "
                    f"{type(k).__qualname__} ({k!r}); checkpoint dict keys are str, int, "
                    "float, bool or None"
                )
            pairs.append([key, self.encode(v, [*path, k])])
        if not isinstance(obj, OrderedDict):
            return {"dict": pairs}
        node = {"odict": pairs}
        meta = getattr(obj, "_metadata", None)  # nn state_dicts carry module versions here
        if meta is not None:
            node["_metadata"] = self.encode(meta, [*path, "_metadata"])
        return node

    def tensor(self, t, path: list) -> int:
        i = self.index.get(id(t))
        if i is not None:
            return i
        if t.device.type != "cpu":  # pragma: no cover - no CUDA backend yet
            raise RuntimeError(f"ember_tensor.save: {_where(path)} is on {t.device}; "
                               "only CPU tensors can be saved")
        i = self.index[id(t)] = len(self.objects)
        self.objects.append(t)
        self.names.append(".".join(map(str, path)) if path else "tensor")
        return i

    def layout(self):
        """The descriptors of the objects and the file's entries. Objects whose element
        ranges overlap in one storage are stored once: as one of them, when it is
        contiguous and covers all of them, else as the span of storage they cover; the
        others are views of that entry. Everything else is stored as its own values."""
        descs: list[dict] = [{} for _ in self.objects]
        entries: list[tuple] = []
        groups: dict[int, list[int]] = {}
        for i, t in enumerate(self.objects):
            if t.numel() == 0:
                groups[-1 - i] = [i]  # empty tensors share nothing
            else:
                groups.setdefault(t._storage_data_ptr(), []).append(i)
        components = []
        for members in groups.values():
            ranges = sorted((_extent(self.objects[i]), i) for i in members)
            current, hi = [], -1
            for (lo_i, hi_i), i in ranges:
                if current and lo_i >= hi:
                    components.append(current)
                    current = []
                current.append(i)
                hi = max(hi, hi_i) if len(current) > 1 else hi_i
            components.append(current)
        components.sort(key=min)  # entries in the order the objects appeared
        pending = []
        for comp in components:
            comp.sort()
            if len(comp) == 1:
                i = comp[0]
                t = self.objects[i]
                name = self.unique(self.names[i])
                entries.append((i, name, _st_dtype(t, self.names[i]), list(t.shape), t))
                descs[i]["entry"] = name
                continue
            pending.append(comp)
        for comp in pending:  # named after every plain entry, so hidden names never win
            lo = min(_extent(self.objects[i])[0] for i in comp)
            hi = max(_extent(self.objects[i])[1] for i in comp)
            cover = next((i for i in comp if self.objects[i].is_contiguous()
                          and self.objects[i].storage_offset() == lo
                          and self.objects[i].numel() == hi - lo), None)
            first = self.objects[comp[0]]
            if cover is not None:
                t = self.objects[cover]
                name = self.unique(self.names[cover])
                entries.append((comp[0], name, _st_dtype(t, self.names[cover]), list(t.shape),
                                t))
                descs[cover]["entry"] = name
            else:  # no member holds them all: store the storage span they cover
                name = self.unique(f"__ember_storage__.{self.names[comp[0]]}")
                span = first.detach().as_strided((hi - lo,), (1,), lo)
                entries.append((comp[0], name, _st_dtype(first, self.names[comp[0]]), [hi - lo],
                                span))
            for i in comp:
                if i == cover:
                    continue
                t = self.objects[i]
                descs[i].update(entry=name, shape=list(t.shape), stride=list(t.stride()),
                                offset=t.storage_offset() - lo)
        for i, t in enumerate(self.objects):
            if t.requires_grad:
                descs[i]["requires_grad"] = True
        # in file order: widest elements first, so that every tensor's data is aligned;
        # else in the order the objects appeared
        entries.sort(key=lambda e: (-_ITEMSIZE[e[2]], e[0]))
        return descs, [e[1:] for e in entries]


_NOT_SCALAR = object()


def _where(path: list) -> str:
    return "the object" if not path else "obj" + "".join(f"[{p!r}]" for p in path)


def _extent(t) -> tuple[int, int]:
    """The storage elements [lo, hi) that a non-empty tensor can reach."""
    lo = hi = t.storage_offset()
    for size, stride in zip(t.shape, t.stride()):
        step = (size - 1) * stride
        if step < 0:
            lo += step
        else:
            hi += step
    return lo, hi + 1


def _st_dtype(t, name: str) -> str:
    st = _TO_ST.get(_dtype_name(t))
    if st is None:  # pragma: no cover - every Ember dtype has a name
        raise TypeError(f"ember_tensor.save: tensor {name!r} has dtype {t.dtype}, which has "
                        "no safetensors name")
    return st


def _contiguous(t):
    """What ``_write`` writes of an entry's tensor: its values, contiguous."""
    src = t.detach()
    return src if src.is_contiguous() else src.contiguous()


def _crc32(t) -> int:
    return zlib.crc32(_byte_view(t)) if t.numel() else 0


def _build_header(descs, entries, root, version: int) -> bytes:
    """The header bytes, padded with spaces so that the data starts 8-byte aligned."""
    description = {"format": FORMAT, "version": version, "tensors": descs, "root": root,
                   "crc32": {name: _crc32(_contiguous(t)) for name, _st, _shape, t in entries}}
    meta = json.dumps(description, allow_nan=False, separators=(",", ":"))
    header = {"__metadata__": {METADATA_KEY: meta}}
    offset = 0
    for name, st, shape, t in entries:
        nbytes = t.numel() * _ITEMSIZE[st]
        header[name] = {"dtype": st, "shape": shape, "data_offsets": [offset, offset + nbytes]}
        offset += nbytes
    raw = json.dumps(header, allow_nan=False, separators=(",", ":")).encode("ascii")
    raw += b" " * (-(8 + len(raw)) % 8)
    return struct.pack("<Q", len(raw)) + raw


def _write_all(f, data) -> None:
    view = memoryview(data).cast("B") if not isinstance(data, bytes) else memoryview(data)
    while len(view):
        n = f.write(view)
        if n is None or n >= len(view):  # None: a file object that wrote it all
            return
        view = view[n:]


def _write(f, header: bytes, entries: list) -> None:
    _write_all(f, header)
    for _name, _st, _shape, t in entries:
        if t.numel() == 0:
            continue
        src = _contiguous(t)  # a non-contiguous tensor is saved as its values
        _write_all(f, _byte_view(src))
        del src


def save(obj, f, pickle_module=None, pickle_protocol: int = 2, **_ignored) -> None:
    """Saves ``obj`` to ``f``, a path or a writable binary file object, as a safetensors
    file: tensors, dicts/lists/tuples/sets of them and plain values (a ``state_dict``, an
    optimizer's, a training state with the epoch and the arguments), NumPy arrays and
    scalars, complex numbers, bytes, dtypes and devices, and instances of plain classes
    (``argparse.Namespace``, dataclasses) as data; anything else (a whole ``nn.Module``) is
    pickled, and then loads only with ``load(f, weights_only=False)``. ``pickle_module`` is
    accepted for PyTorch's signature and unused; ``pickle_protocol`` is the pickles'.

    Saving to a path is atomic: the file is written under a temporary name in the same
    directory, flushed to disk (``fsync``) and renamed over the target, so an error or a
    crash part-way leaves any previous file intact. A file object is written in place.
    ``TypeError`` for an object a checkpoint cannot hold (nothing is written then).
    """
    _check_byteorder()
    saver = _Saver(pickle_protocol)
    root = saver.encode(obj, [])
    descs, entries = saver.layout()
    header = _build_header(descs, entries, root, saver.version)
    if isinstance(f, (str, os.PathLike)):
        _save_path(os.fsdecode(os.fspath(f)), header, entries)
        return
    if isinstance(f, bytes) or not hasattr(f, "write"):
        raise TypeError(f"ember_tensor.save: f must be a path or a writable binary file "
                        f"object, got {type(f).__qualname__}")
    _write(f, header, entries)
    flush = getattr(f, "flush", None)
    if flush is not None:
        flush()


def _save_path(path: str, header: bytes, entries: list) -> None:
    target = os.path.realpath(path)  # write through a symlink, as open() would
    directory, base = os.path.split(target)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    flags |= getattr(os, "O_CLOEXEC", 0)
    while True:
        tmp = os.path.join(directory, f".{base}.{secrets.token_hex(4)}.tmp")
        try:
            fd = os.open(tmp, flags, 0o666)  # the umask applies, as for open(path, "wb")
            break
        except FileExistsError:  # pragma: no cover - a 32-bit random name taken
            continue
    try:
        try:
            mode = os.stat(target).st_mode & 0o7777
        except OSError:
            mode = None
        if mode is not None and hasattr(os, "fchmod"):
            try:  # an existing file keeps its permissions
                os.fchmod(fd, mode)
            except OSError:  # pragma: no cover
                pass
        with open(fd, "wb", closefd=True) as out:
            _write(out, header, entries)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:  # pragma: no cover
            pass
        raise
    if hasattr(os, "O_DIRECTORY"):  # make the rename itself durable
        try:
            dfd = os.open(directory or ".", os.O_RDONLY | os.O_DIRECTORY)
        except OSError:  # pragma: no cover
            return
        try:
            os.fsync(dfd)
        except OSError:  # pragma: no cover - some file systems refuse
            pass
        finally:
            os.close(dfd)


# ---------------------------------------------------------------------------- loading

class _Entry:
    __slots__ = ("name", "st", "shape", "begin", "end", "numel", "tensor", "used")

    def __init__(self, name, st, shape, begin, end, numel):
        self.name, self.st, self.shape = name, st, shape
        self.begin, self.end, self.numel = begin, end, numel
        self.tensor = None
        self.used = False


def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _no_constants(name):
    raise ValueError(f"{name} is not valid JSON")


def _no_duplicates(pairs):
    out = {}
    for k, v in pairs:
        if k in out:
            raise ValueError(f"duplicate key {k!r}")
        out[k] = v
    return out


def _parse_json(text: str):
    return json.loads(text, object_pairs_hook=_no_duplicates, parse_constant=_no_constants)


class _Reader:
    """Reads a checkpoint from a binary file object; every failure is a CheckpointError."""

    def __init__(self, f, where: str, trusted: bool = False, mapper=None):
        self.f, self.where = f, where
        self.mapper = mapper  # a callable map_location: (tensor, "cpu") -> tensor
        self.trusted = trusted  # weights_only=False: allowed to import and unpickle
        self.version = 1  # the file's format version, once read
        self.readinto = getattr(f, "readinto", None)
        try:
            self.seekable = bool(f.seekable())
        except (AttributeError, OSError, ValueError):
            self.seekable = False

    def fail(self, problem: str):
        raise CheckpointError(self.where, problem)

    def read_upto(self, n: int) -> bytes:
        chunks, got = [], 0
        while got < n:
            b = self.f.read(n - got)
            if not b:
                break
            if not isinstance(b, (bytes, bytearray)):
                self.fail(f"read() gave {type(b).__name__}, not bytes: open the file in "
                          "binary mode ('rb')")
            chunks.append(b)
            got += len(b)
        return b"".join(chunks)

    def read(self, n: int, what: str) -> bytes:
        data = self.read_upto(n)
        if len(data) < n:
            self.fail(f"the file is truncated: {what} needs {n} bytes, only {len(data)} left")
        return data

    def fill(self, view: memoryview, what: str) -> None:
        """Reads len(view) bytes straight into view."""
        got, n = 0, len(view)
        while got < n:
            if self.readinto is not None:
                k = self.readinto(view[got:])
            else:
                b = self.f.read(n - got)
                k = len(b) if b else 0
                view[got:got + k] = b
            if not k:
                self.fail(f"the file is truncated: {what} needs {n} bytes, only {got} left")
            got += k

    def skip(self, n: int, what: str) -> None:
        if self.seekable:
            self.f.seek(n, os.SEEK_CUR)
            return
        while n > 0:
            n -= len(self.read(min(n, 1 << 24), what))


def _header_entries(header, r: _Reader, data_len):
    """The header's entries, validated, in file order, and its __metadata__ table.
    data_len: the bytes after the header when known (they must all be tensor data)."""
    if not isinstance(header, dict):
        r.fail(f"the header is a JSON {type(header).__name__}, not an object")
    meta = header.get("__metadata__", {})
    if not isinstance(meta, dict) or not all(isinstance(v, str) for v in meta.values()):
        r.fail("__metadata__ must be an object of strings")
    entries = []
    for name, info in header.items():
        if name == "__metadata__":
            continue
        what = f"tensor {name!r}"
        if not isinstance(info, dict) or not {"dtype", "shape", "data_offsets"} <= info.keys():
            r.fail(f"{what}: expected an object with dtype, shape and data_offsets, got "
                   f"{json.dumps(info)[:200]}")
        st, shape, offsets = info["dtype"], info["shape"], info["data_offsets"]
        if st not in _FROM_ST:
            r.fail(f"{what} has dtype {st!r}, which Ember does not support (supported: "
                   f"{', '.join(_FROM_ST)})")
        if not isinstance(shape, list) or not all(_is_int(s) and s >= 0 for s in shape):
            r.fail(f"{what}: shape must be a list of non-negative ints, got {shape!r}")
        if math.prod(shape) * _ITEMSIZE[st] > _INT64_MAX:
            r.fail(f"{what}: shape {shape} of {st} has more bytes than a tensor can hold")
        if (not isinstance(offsets, list) or len(offsets) != 2
                or not all(_is_int(o) and o >= 0 for o in offsets) or offsets[0] > offsets[1]):
            r.fail(f"{what}: data_offsets must be [begin, end] with 0 <= begin <= end, got "
                   f"{offsets!r}")
        numel = math.prod(shape)
        begin, end = offsets
        if end - begin != numel * _ITEMSIZE[st]:
            r.fail(f"{what}: shape {shape} of {st} needs {numel * _ITEMSIZE[st]} bytes, but "
                   f"data_offsets {offsets} hold {end - begin}")
        if data_len is not None and end > data_len:
            r.fail(f"{what}: data_offsets {offsets} run past the end of the data "
                   f"({data_len} bytes): the file is truncated or the offsets are wrong")
        entries.append(_Entry(name, st, shape, begin, end, numel))
    entries.sort(key=lambda e: (e.begin, e.end))
    pos, prev = 0, None
    for e in entries:
        if e.begin < pos:
            r.fail(f"tensor {e.name!r} (bytes {e.begin}..{e.end}) overlaps tensor "
                   f"{prev.name!r} (bytes {prev.begin}..{prev.end})")
        if e.begin > pos:
            r.fail(f"bytes {pos}..{e.begin} of the data belong to no tensor (a hole before "
                   f"{e.name!r}); a safetensors file has none")
        pos, prev = e.end, e
    if data_len is not None and pos != data_len:
        r.fail(f"the data is {data_len} bytes, but the tensors end at byte {pos}: "
               f"{data_len - pos} bytes belong to no tensor")
    return entries, meta


def _read_entries(r: _Reader, entries, wanted, crcs=None) -> None:
    """Reads the wanted entries' bytes, in file order, each straight into a new tensor (no
    intermediate buffer), checked against ``crcs`` (name -> CRC-32) when given; the others
    are skipped."""
    pos = 0
    for e in entries:
        if e.name not in wanted:
            continue
        if e.begin > pos:
            r.skip(e.begin - pos, f"tensor {e.name!r}")
        try:
            t = _C.empty(e.shape, dtype=getattr(_C, _FROM_ST[e.st]))
        except (RuntimeError, ValueError, MemoryError) as exc:
            r.fail(f"tensor {e.name!r} of shape {e.shape} cannot be allocated: {exc}")
        r.fill(_byte_view(t), f"tensor {e.name!r}")
        pos = e.end
        if crcs is not None and _crc32(t) != crcs[e.name]:
            r.fail(f"tensor {e.name!r} (bytes {e.begin}..{e.end} of the data) does not match "
                   f"its CRC-32 ({crcs[e.name]:#010x} saved, {_crc32(t):#010x} read): the "
                   "file is corrupted")
        if e.st == "BOOL" and e.numel and bool((t.numpy().view("uint8") > 1).any()):
            r.fail(f"tensor {e.name!r} of dtype BOOL holds bytes other than 0 and 1")
        e.tensor = t


def _check_crcs(crcs, entries, r: _Reader) -> dict:
    """The description's "crc32" table, validated: one CRC-32 for every entry."""
    names = {e.name for e in entries}
    if (not isinstance(crcs, dict) or crcs.keys() != names
            or not all(_is_int(v) and 0 <= v < 2**32 for v in crcs.values())):
        r.fail("ember metadata: 'crc32' must map every tensor of the file to its CRC-32 (an "
               f"int below 2**32), got {json.dumps(crcs)[:200]}")
    return crcs


def _check_desc(desc, i: int, by_name, r: _Reader):
    """(entry, view geometry or None, requires_grad) of the description tensors[i],
    validated against the header's entries before any data is read."""
    what = f"ember metadata: tensors[{i}]"
    if not isinstance(desc, dict) or not isinstance(desc.get("entry"), str):
        r.fail(f"{what} must be an object naming an entry, got {json.dumps(desc)[:200]}")
    unknown = desc.keys() - {"entry", "shape", "stride", "offset", "requires_grad"}
    if unknown:
        r.fail(f"{what} has unknown fields {sorted(unknown)}")
    e = by_name.get(desc["entry"])
    if e is None:
        r.fail(f"{what} names tensor {desc['entry']!r}, which the file does not have")
    flag = desc.get("requires_grad", False)
    if not isinstance(flag, bool):
        r.fail(f"{what}: requires_grad must be true or false, got {flag!r}")
    geometry = [k for k in ("shape", "stride", "offset") if k in desc]
    if not geometry:
        if e.used:
            r.fail(f"{what} is tensor {e.name!r}, which another description already is")
        e.used = True
        return e, None, flag
    if len(geometry) != 3:
        r.fail(f"{what}: a view needs shape, stride and offset")
    shape, stride, offset = desc["shape"], desc["stride"], desc["offset"]
    if (not isinstance(shape, list) or not isinstance(stride, list) or len(shape) != len(stride)
            or not all(_is_int(v) and v >= 0 for v in (*shape, *stride))
            or not _is_int(offset) or offset < 0):
        r.fail(f"{what}: shape and stride must be lists of non-negative ints of one length and "
               f"offset a non-negative int, got {shape!r}, {stride!r} and {offset!r}")
    if 0 in shape:
        last, bad = offset, offset > e.numel
    else:
        last = offset + sum((s - 1) * st for s, st in zip(shape, stride))
        bad = last >= e.numel
    if bad:
        r.fail(f"{what}: a view of shape {shape}, stride {stride} and offset {offset} reaches "
               f"element {last}, but tensor {e.name!r} has {e.numel} elements")
    if math.prod(shape) > _INT64_MAX or max(shape + stride, default=0) > _INT64_MAX:
        r.fail(f"{what}: a view of shape {shape} and stride {stride} has more elements than "
               "a tensor can hold")
    return e, (shape, stride, offset), flag


def _build_tensor(checked, i: int, r: _Reader):
    """(tensor, requires_grad) of the description tensors[i], from ``_check_desc``'s
    result once the data is read."""
    e, geometry, flag = checked
    if geometry is None:
        return e.tensor, flag
    try:  # from a detached alias: whether it requires grad is the description's alone
        return e.tensor.detach().as_strided(*geometry), flag
    except (RuntimeError, ValueError, OverflowError) as exc:
        r.fail(f"ember metadata: tensors[{i}]: cannot make the view: {exc}")


def _decode(node, tensors, r: _Reader, depth: int = 0):
    """The object a metadata node describes. Only the tags below exist: a file can name no
    type, function or module."""
    if node is None or isinstance(node, (bool, int, float, str)):
        return node
    if depth > MAX_DEPTH:  # save nests containers at most MAX_DEPTH deep, leaves one more
        r.fail(f"ember metadata: the structure is nested more than {MAX_DEPTH} deep")
    if isinstance(node, list):
        return [_decode(v, tensors, r, depth + 1) for v in node]
    if isinstance(node, dict):
        if len(node) == 1:
            ((tag, value),) = node.items()
            if tag == "tensor" and _is_int(value) and 0 <= value < len(tensors):
                return tensors[value]
            if tag == "float" and value in ("nan", "inf", "-inf"):
                return float(value)
            if tag == "tuple" and isinstance(value, list):
                return tuple(_decode(v, tensors, r, depth + 1) for v in value)
            if tag in ("dict", "odict") and isinstance(value, list):
                out = {} if tag == "dict" else OrderedDict()
                return _decode_items(out, tag, value, tensors, r, depth)
        elif node.keys() == {"odict", "_metadata"} and isinstance(node["odict"], list):
            out = _decode_items(OrderedDict(), "odict", node["odict"], tensors, r, depth)
            out._metadata = _decode(node["_metadata"], tensors, r, depth + 1)
            return out
        if r.version >= 2 and _values.is_tag(node):
            return _values.decode(node, lambda n: _decode(n, tensors, r, depth + 1), tensors, r)
    r.fail(f"ember metadata: unknown node {json.dumps(node)[:200]}")


def _decode_items(out, tag: str, pairs: list, tensors, r: _Reader, depth: int):
    for pair in pairs:
        if not isinstance(pair, list) or len(pair) != 2:
            r.fail(f"ember metadata: a {tag} item must be a [key, value] pair, got "
                   f"{json.dumps(pair)[:200]}")
        key = pair[0]
        if isinstance(key, dict):  # {"float": "nan"}
            key = _decode(key, (), r, depth + 1)
        if isinstance(key, (list, dict, tuple)):
            r.fail(f"ember metadata: a {tag} key must be a plain value, got "
                   f"{json.dumps(pair[0])[:200]}")
        out[key] = _decode(pair[1], tensors, r, depth + 1)
    return out


def _mapped(r: _Reader, t):
    out = r.mapper(t, "cpu")
    return out if isinstance(out, _C.Tensor) else t


def _where_of(f) -> str:
    name = getattr(f, "name", None)
    if isinstance(name, (str, bytes)) and name:
        return repr(os.fsdecode(name))
    return f"<{type(f).__qualname__}>"


def _check_map_location(map_location) -> None:
    ml = map_location
    if callable(ml) and not isinstance(ml, (str, _C.device)):
        return  # called with each tensor and "cpu" after loading (see load)
    if isinstance(ml, dict):  # {saved location: target}; everything was saved on "cpu"
        ml = ml.get("cpu")
    if ml is None:
        return
    if not isinstance(ml, (str, _C.device)):
        raise TypeError(f"ember_tensor.load: map_location must be None, 'cpu', a device or a "
                        f"dict of them, or a callable, got {type(ml).__qualname__}")
    dev = _C.device(ml) if isinstance(ml, str) else ml
    if dev.type != "cpu":
        raise RuntimeError(
            f"ember_tensor.load: map_location={map_location!r} asks for a {dev.type} device, "
            "but Ember has no CUDA backend yet; load with map_location='cpu' (or None)"
        )


def load(f, map_location=None, pickle_module=None, *, weights_only: bool | None = None,
         mmap: bool | None = None, **_ignored):
    """Loads what ``save`` wrote (or any safetensors file) from ``f``, a path or a readable
    binary file object.

    A file that ``save`` wrote gives back its object: dicts (int keys stay ints),
    OrderedDicts, lists, tuples, sets, plain values, NumPy arrays and scalars and tensors,
    with tensors that overlapped in memory when saved sharing memory again. Any other
    safetensors file gives a dict ``{name: tensor}``.

    By default (``weights_only`` True or None, as in PyTorch since 2.6) loading reads JSON
    and bytes and runs no code the file names: instances of plain classes are rebuilt only
    if their class was allowed with ``add_safe_globals`` or ``safe_globals``, and pickled
    objects (``save(model, f)``) are refused; both are ``pickle.UnpicklingError`` saying how
    to allow them. ``weights_only=False`` states that the file is trusted: classes are
    imported by the names the file gives and pickles are unpickled, which can run any
    code. ``mmap`` is accepted (the data is read into memory either way).

    A ``torch.save`` file (PyTorch's zip format) is read too, under the same rules: its
    tensors, containers and plain values come back as Ember's (``_torch_checkpoint.py``).
    ``map_location``: ``None`` or ``"cpu"``
    (or ``device("cpu")``, or a dict mapping ``"cpu"`` to one of these); another device is
    a ``RuntimeError`` until Ember has a CUDA backend.

    A malformed file (truncated, bad header length, invalid JSON, offsets out of range,
    overlapping or leaving holes, unknown dtype, shape not matching the bytes, malformed
    Ember metadata) is a ``CheckpointError`` (a ``RuntimeError``) naming the file and the
    problem.
    """
    _check_byteorder()
    if weights_only not in (True, False, None):
        raise TypeError(f"ember_tensor.load: weights_only must be a bool, got {weights_only!r}")
    if mmap not in (True, False, None):
        raise TypeError(f"ember_tensor.load: mmap must be a bool, got {mmap!r}")
    _check_map_location(map_location)
    trusted = weights_only is False
    mapper = map_location if callable(map_location) and not isinstance(
        map_location, (str, _C.device)) else None
    if isinstance(f, (str, os.PathLike)):
        path = os.fsdecode(os.fspath(f))
        with open(path, "rb", buffering=0) as fh:
            if _torch_checkpoint.is_torch_zip(fh.read(4)):
                return _torch_checkpoint.load(path, repr(path), trusted, mapper)
            fh.seek(0)
            r = _Reader(fh, repr(path), trusted, mapper)
            return _load(r, os.fstat(fh.fileno()).st_size)
    if isinstance(f, (bytes, bytearray, memoryview)):
        raise TypeError("ember_tensor.load: f must be a path or a binary file object; wrap "
                        "bytes in io.BytesIO")
    if not hasattr(f, "read"):
        raise TypeError(f"ember_tensor.load: f must be a path or a readable binary file "
                        f"object, got {type(f).__qualname__}")
    r = _Reader(f, _where_of(f), trusted, mapper)
    size = None
    if r.seekable:  # the checkpoint is what is left from here: it must all be tensor data
        start = f.tell()
        head = f.read(4)
        f.seek(start)
        if _torch_checkpoint.is_torch_zip(head):
            return _torch_checkpoint.load(f, r.where, trusted, mapper)
        size = f.seek(0, os.SEEK_END) - start
        f.seek(start)
    return _load(r, size)


def _load(r: _Reader, size):
    """size: the file's size from the reader's position, None when unknown (a stream)."""
    head = r.read_upto(8)
    if len(head) < 8:
        r.fail(f"the file is truncated: {len(head)} bytes, but a safetensors file starts "
               "with an 8-byte header length")
    (n,) = struct.unpack("<Q", head)
    if n > MAX_HEADER_BYTES or (size is not None and 8 + n > size):
        hint = ""
        if head.startswith(b"PK\x03\x04"):
            hint = " (it looks like a zip archive, such as a torch.save file)"
        elif head[:1] == b"\x80":
            hint = " (it looks like a pickle, such as a legacy torch.save file)"
        limit = (f"the {size - 8} bytes after it" if size is not None and size - 8 < n
                 else f"the limit of {MAX_HEADER_BYTES}")
        r.fail(f"bad header length {n} (more than {limit}): not a safetensors file, or a "
               f"truncated one{hint}")
    raw = r.read(n, "the JSON header")
    try:
        header = _parse_json(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        r.fail(f"the header is not valid JSON: {exc}")
    data_len = None if size is None else size - 8 - n
    entries, meta = _header_entries(header, r, data_len)
    by_name = {e.name: e for e in entries}
    if METADATA_KEY not in meta:  # a plain safetensors file: {name: tensor}
        _read_entries(r, entries, by_name)
        return {name: by_name[name].tensor for name in header if name != "__metadata__"}
    try:
        desc = _parse_json(meta[METADATA_KEY])
    except (ValueError, RecursionError) as exc:
        r.fail(f"__metadata__[{METADATA_KEY!r}] is not valid JSON: {exc}")
    if not isinstance(desc, dict) or desc.get("format") != FORMAT:
        r.fail(f"__metadata__[{METADATA_KEY!r}] is not an Ember description (no "
               f"\"format\": \"{FORMAT}\")")
    version = desc.get("version")
    if not _is_int(version) or version < 1:
        r.fail(f"ember metadata: bad format version {version!r}")
    if version > FORMAT_VERSION:
        r.fail(f"the file has format version {version}, newer than this Ember reads "
               f"({FORMAT_VERSION}): upgrade ember-tensor-core")
    r.version = version
    descs = desc.get("tensors")
    if not isinstance(descs, list) or "root" not in desc:
        r.fail("ember metadata: 'tensors' (a list) and 'root' are required")
    checked = [_check_desc(d, i, by_name, r) for i, d in enumerate(descs)]
    crcs = _check_crcs(desc["crc32"], entries, r) if "crc32" in desc else None
    _read_entries(r, entries, {e.name for e, _g, _f in checked}, crcs)
    built = [_build_tensor(c, i, r) for i, c in enumerate(checked)]
    for i, (t, flag) in enumerate(built):
        if flag:
            try:
                t.requires_grad_(True)
            except Exception as exc:  # no autograd provider, or one that failed to load
                r.fail(f"tensors[{i}] was saved with requires_grad=True, which cannot be "
                       f"restored here: {type(exc).__name__}: {exc}")
    tensors = [t for t, _ in built]
    if r.mapper is not None:  # PyTorch calls it with each storage and its location
        tensors = [_mapped(r, t) for t in tensors]
    try:
        return _decode(desc["root"], tensors, r)
    except RecursionError:
        r.fail("ember metadata: the structure is nested too deeply")
