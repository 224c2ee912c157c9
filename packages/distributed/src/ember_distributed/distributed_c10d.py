"""Process groups and collectives: ``torch.distributed``'s API on an existing communication
engine (``mpi.py``).

A job is ``world_size`` processes, each with a ``rank``; ``init_process_group`` makes the
default group of all of them, ``new_group`` subgroups. Collectives take global ranks
(``src``, ``dst``) or ranks within the group (``group_src``, ``group_dst``), run in the order
each process issues them, and with ``async_op=True`` return a ``Work`` instead of waiting.
Tensors are contiguous CPU tensors of the same dtype on every rank (the engine sees their
memory; nothing is copied but bfloat16/float16 reductions, which sum in float32).

Errors: not initialized (PyTorch's RuntimeError), a non-member group, a rank out of range
(ValueError naming it), a non-contiguous or non-CPU tensor, mismatched list lengths; a
collective that does not complete within the group's timeout is a ``DistBackendError``
naming it and the ranks that did not reach it.
"""

from __future__ import annotations

import ctypes
import datetime
import enum
import io
import os

import numpy as np

import ember_tensor as et

from . import nccl_collectives as _nc
from . import work as _work
from .store import FileStore, PrefixStore, Store, TCPStore
from .work import DistBackendError, DistError, Work

__all__ = [
    "Backend", "ReduceOp", "GroupMember", "group", "ProcessGroup", "Work", "DistError",
    "DistBackendError", "default_pg_timeout", "is_available", "is_initialized",
    "is_mpi_available", "is_gloo_available", "is_nccl_available", "is_torchelastic_launched",
    "init_process_group", "destroy_process_group", "new_group", "get_rank", "get_world_size",
    "get_backend", "get_global_rank", "get_group_rank", "get_process_group_ranks",
    "all_reduce", "broadcast", "reduce", "all_gather", "all_gather_into_tensor", "gather",
    "scatter", "reduce_scatter", "reduce_scatter_tensor", "all_to_all", "all_to_all_single",
    "send", "recv", "isend", "irecv", "barrier", "monitored_barrier", "broadcast_object_list",
    "all_gather_object", "gather_object", "scatter_object_list",
]

default_pg_timeout = datetime.timedelta(minutes=30)


class Backend(str):
    """A backend name: ``Backend("GLOO") == "gloo"``. ``gloo`` runs on the MPI engine
    (Ember has no engine of its own; see docs/distributed.md)."""

    UNDEFINED = "undefined"
    GLOO = "gloo"
    NCCL = "nccl"
    MPI = "mpi"

    def __new__(cls, name: str):
        if not isinstance(name, str):
            raise ValueError(f"Backend constructor parameter must be string-ish, got {name!r}")
        value = name.lower()
        if value not in (cls.GLOO, cls.NCCL, cls.MPI, cls.UNDEFINED):
            raise ValueError(f"Invalid backend: '{name}'")
        return super().__new__(cls, value)


class ReduceOp(enum.Enum):
    """The reductions of ``all_reduce``, ``reduce`` and the reduce-scatters."""

    SUM = 0
    AVG = 1
    PRODUCT = 2
    MIN = 3
    MAX = 4
    BAND = 5
    BOR = 6
    BXOR = 7

    def __repr__(self) -> str:
        return f"<RedOpType.{self.name}: {self.value}>"


class ProcessGroup:
    """Ranks that run collectives together: ``rank()`` and ``size()`` within the group."""

    def __init__(self, engine, ranks: list[int], backend: str, store: Store | None,
                 timeout: datetime.timedelta, name: str, rank: int) -> None:
        # engine: the MPI engine of CPU tensors (None for "nccl" alone); the NCCL
        # communicator of CUDA tensors is made by the group's first CUDA collective
        self._engine, self._ranks, self._backend = engine, list(ranks), backend
        self._store, self._timeout, self._name = store, timeout, name
        self._rank = rank
        self._seq = 0
        self._device_comm = None
        self.timeout_s = timeout.total_seconds()

    def rank(self) -> int:
        return self._rank

    def device_comm(self, device_index: int):
        """The group's NCCL communicator on CUDA device ``device_index`` (made on first use,
        collectively: rank 0 draws the unique id and the others receive it through the
        store, or through the CPU engine under mpiexec)."""
        comm = self._device_comm
        if comm is not None:
            if comm.device_index != device_index:
                raise RuntimeError(f"ember.distributed: {self.describe()} runs its CUDA "
                                   f"collectives on cuda:{comm.device_index}, got a tensor on "
                                   f"cuda:{device_index} (one device per process)")
            return comm
        from . import nccl

        mine = nccl.unique_id() if self._rank == 0 else b""
        if self._store is not None:
            key = f"nccl_unique_id/{self._name}"
            if self._rank == 0:
                self._store.set(key, mine)
            uid = self._store.get(key)
        else:
            box = [_byte_tensor(mine) if mine else et.zeros(128, dtype=et.uint8)]
            broadcast(box[0], group=self, group_src=0)
            uid = bytes(box[0].numpy())
        self._device_comm = nccl.Communicator.create(uid, self.size(), self._rank,
                                                     device_index)
        return self._device_comm

    def free(self) -> None:
        if self._engine is not None:
            _work.call(self._engine.free)
        if self._device_comm is not None:
            self._device_comm.free()
            self._device_comm = None

    def size(self) -> int:
        return len(self._ranks)

    def name(self) -> str:
        return self._name

    @property
    def group_name(self) -> str:
        return self._name

    def describe(self) -> str:
        return f"process group {self._name!r} of {self.size()} ranks"

    def __repr__(self) -> str:
        return f"ProcessGroup({self._name!r}, backend={self._backend}, ranks={self._ranks})"


    def _next(self) -> int:
        self._seq += 1
        return self._seq

    def mark_arrival(self) -> None:
        """Records in the store that this rank has issued every operation of the group up to
        the last one (called by a rank that has waited a second: the ranks that never record
        an operation are the ones that did not reach it)."""
        if self._store is None:
            return
        try:
            self._store.set(f"arrived/{self._name}/{_rank_in_world()}", str(self._seq))
        except Exception:
            pass

    def missing(self, seq: int) -> list[int]:
        """Global ranks of the group that have not issued operation ``seq`` of it (empty
        when unknown: no store)."""
        if self._store is None:
            return []
        out = []
        try:
            for r in self._ranks:
                key = f"arrived/{self._name}/{r}"
                reached = int(self._store.get(key)) if self._store.check([key]) else 0
                if reached < seq:
                    out.append(r)
        except Exception:  # the store itself is gone (its rank died): say nothing more
            return []
        return out

    def dead_ranks(self) -> list[int]:
        if self._store is None:
            return []
        try:
            return [r for r in self._store.dead_ranks() if r in self._ranks]
        except Exception:
            return [self._ranks[0]] if _rank_in_world() != self._ranks[0] else []


class _World:
    """The state of the default group."""

    pg: ProcessGroup | None = None
    rank = -1
    groups: dict[str, ProcessGroup] = {}
    group_count = 0


def _rank_in_world() -> int:
    return _World.rank


class GroupMember:
    """``GroupMember.WORLD`` (the default group) and ``NON_GROUP_MEMBER`` (what ``new_group``
    returns on a rank that is not in the new group)."""

    NON_GROUP_MEMBER = object()

    class _WorldDescriptor:
        def __get__(self, obj, owner):
            return _World.pg

    WORLD = _WorldDescriptor()


class _GroupNamespace:
    """``dist.group.WORLD``: the default process group."""

    @property
    def WORLD(self):
        return _World.pg


group = _GroupNamespace()


# ---------------------------------------------------------------------------- availability


def is_available() -> bool:
    """True: process groups can be made (a backend's engine is checked when one is)."""
    return True


def is_initialized() -> bool:
    return _World.pg is not None


def is_mpi_available() -> bool:
    """Whether mpi4py is installed (the engine of the ``mpi`` and ``gloo`` backends)."""
    import importlib.util

    return importlib.util.find_spec("mpi4py") is not None


def is_gloo_available() -> bool:
    return is_mpi_available()


def is_nccl_available() -> bool:
    """Whether the NCCL library is installed (the ``nvidia-nccl-cu13`` wheel, or the
    system's): the engine of the ``nccl`` backend (which also needs a GPU)."""
    from . import nccl

    return nccl.library_path() is not None


def is_torchelastic_launched() -> bool:
    """Whether this process was started by ``python -m ember.distributed.run``."""
    return os.environ.get("TORCHELASTIC_RUN_ID") is not None


# ---------------------------------------------------------------------------- setup


def _parse_backend(backend) -> str:
    """The backend's name (``"gloo"``, ``"mpi"``, ``"nccl"``, or PyTorch's per-device form
    ``"cpu:gloo,cuda:nccl"``); None: gloo, with nccl for CUDA tensors when NCCL and a GPU
    are there (PyTorch's default)."""
    if backend is None:
        if is_nccl_available() and et.cuda.is_available():
            return "cpu:gloo,cuda:nccl"
        return Backend.GLOO
    name = str(backend).lower()
    if ":" not in name:
        return Backend(name)
    pairs = {}
    for part in name.split(","):
        device, _, engine = part.partition(":")
        if device not in ("cpu", "cuda") or Backend(engine) == Backend.UNDEFINED:
            raise ValueError(f"Invalid backend: '{backend}'")
        if (device == "cuda") != (engine == Backend.NCCL):
            raise ValueError(f"Invalid backend: '{backend}' (CUDA tensors go to nccl, CPU "
                             "tensors to gloo or mpi)")
        pairs[device] = engine
    return ",".join(f"{d}:{e}" for d, e in sorted(pairs.items()))


def _cpu_backend(name: str) -> str | None:
    """The backend of CPU tensors in a backend's name (None: nccl alone)."""
    if name == Backend.NCCL:
        return None
    return name.split("cpu:")[1].split(",")[0] if "cpu:" in name else name


def _nccl_ready(name: str) -> None:
    """Whether a backend asking for nccl can have it: its library, and a GPU."""
    if "nccl" not in name:
        return
    from . import nccl

    nccl.load()
    if not et.cuda.is_available():
        raise RuntimeError("ProcessGroupNCCL is only supported with GPUs, no GPUs found!")


def _env_int(name: str) -> int:
    v = os.environ.get(name)
    if v is None:
        raise ValueError(f"Error initializing torch.distributed using env:// rendezvous: "
                         f"environment variable {name} expected, but not set")
    return int(v)


def _rendezvous(init_method: str, rank: int, world_size: int, timeout) -> tuple:
    """(store, rank, world_size) from an init method."""
    if init_method.startswith("env://"):
        rank = _env_int("RANK") if rank < 0 else rank
        world_size = _env_int("WORLD_SIZE") if world_size < 0 else world_size
        addr = os.environ.get("MASTER_ADDR")
        if addr is None:
            raise ValueError("Error initializing torch.distributed using env:// rendezvous: "
                             "environment variable MASTER_ADDR expected, but not set")
        port = _env_int("MASTER_PORT")
    elif init_method.startswith("tcp://"):
        if rank < 0 or world_size < 0:
            raise ValueError("init_process_group: tcp:// rendezvous needs rank and world_size")
        hostport = init_method[len("tcp://"):].split("?")[0].rstrip("/")
        addr, _, port_s = hostport.rpartition(":")
        if not addr or not port_s.isdigit():
            raise ValueError(f"init_process_group: cannot read host:port from {init_method!r}")
        addr, port = addr.strip("[]"), int(port_s)
    elif init_method.startswith("file://"):
        if world_size < 0:
            raise ValueError("init_process_group: file:// rendezvous needs world_size")
        if rank < 0:
            rank = _env_int("RANK")
        path = init_method[len("file://"):].split("?")[0]
        if not 0 <= rank < world_size:
            raise ValueError(f"init_process_group: rank {rank} is out of range for world_size "
                             f"{world_size}")
        return FileStore(path, world_size, timeout), rank, world_size
    else:
        raise ValueError(f"init_process_group: unsupported init_method {init_method!r} "
                         "(env://, tcp:// or file://, or pass store=)")
    if not 0 <= rank < world_size:
        raise ValueError(f"init_process_group: rank {rank} is out of range for world_size "
                         f"{world_size}")
    store = TCPStore(addr, port, world_size, rank == 0, timeout, rank=rank)
    return store, rank, world_size


def _mpi_launched_without_env() -> bool:
    mpi_env = ("PMI_RANK", "PMIX_RANK", "OMPI_COMM_WORLD_RANK", "MPI_LOCALRANKID")
    return "RANK" not in os.environ and any(v in os.environ for v in mpi_env)


def init_process_group(backend=None, init_method=None, timeout=None, world_size: int = -1,
                       rank: int = -1, store: Store | None = None, group_name: str = "",
                       pg_options=None, device_id=None) -> None:
    """Makes the default process group of ``world_size`` processes, this one ``rank``.

    ``backend``: ``"mpi"``, ``"gloo"`` (both the MPI engine) or ``"nccl"``; ``init_method``
    ``"env://"`` (default: ``MASTER_ADDR``, ``MASTER_PORT``, ``RANK``, ``WORLD_SIZE``),
    ``"tcp://host:port"`` or ``"file:///path"`` (a ``FileStore``) with ``rank`` and
    ``world_size``, or a ``store``. Under ``mpiexec``
    (no ``RANK`` in the environment) the MPI world gives the ranks. ``timeout``: how long a
    collective may wait for the others (default 30 minutes)."""
    if _World.pg is not None:
        raise ValueError("trying to initialize the default process group twice!")
    name = _parse_backend(backend)
    _nccl_ready(name)
    timeout = default_pg_timeout if timeout is None else timeout
    if not isinstance(timeout, datetime.timedelta):
        raise TypeError(f"Expected timeout argument to be of type datetime.timedelta, got "
                        f"{type(timeout).__name__}")
    from . import mpi

    if store is None and (init_method is None or init_method == "env://") and \
            _mpi_launched_without_env():
        engine = _work.call(mpi.world_engine)
        rank, world_size = engine.rank(), engine.size()
        store = None
        if "MASTER_ADDR" in os.environ and "MASTER_PORT" in os.environ:
            store = TCPStore(os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"]),
                             world_size, rank == 0, timeout, rank=rank)
    else:
        if store is None:
            store, rank, world_size = _rendezvous(init_method or "env://", rank, world_size,
                                                  timeout)
        elif rank < 0 or world_size < 0:
            raise ValueError("init_process_group: a store needs rank and world_size")
        engine = None
        if _cpu_backend(name) is not None:
            engine = _work.call(lambda: mpi.connect(PrefixStore("ember_mpi", store), rank,
                                                    world_size))
    _World.rank = rank
    _World.pg = ProcessGroup(engine, list(range(world_size)), name, store, timeout,
                             group_name or "default", rank)
    _World.groups = {_World.pg.name(): _World.pg}


def _default() -> ProcessGroup:
    if _World.pg is None:
        raise RuntimeError("Default process group has not been initialized, please make sure "
                           "to call init_process_group.")
    return _World.pg


def _resolve(group) -> ProcessGroup:
    pg = _default()
    if group is None or group is GroupMember.WORLD:
        return pg
    if group is GroupMember.NON_GROUP_MEMBER:
        raise ValueError("Invalid process group specified: this rank is not a member of it")
    if not isinstance(group, ProcessGroup):
        raise TypeError(f"group must be a ProcessGroup, not {type(group).__name__}")
    return group


def destroy_process_group(group=None) -> None:
    """Frees a group (None: the default one and every group)."""
    if _World.pg is None:
        raise ValueError("Default process group has not been initialized, please make sure "
                         "to call init_process_group.")
    pgs = list(_World.groups.values()) if group is None or group is _World.pg else [group]
    for pg in pgs:
        _World.groups.pop(pg.name(), None)
        try:
            pg.free()
        except Exception:
            pass
    if group is None or group is _World.pg:
        store = _World.pg._store
        _World.pg, _World.rank = None, -1
        if isinstance(store, (TCPStore, FileStore)):
            store.close()


def new_group(ranks=None, timeout=None, backend=None, pg_options=None,
              use_local_synchronization: bool = False, group_desc=None):
    """A group of ``ranks`` (global ranks; None: all). Every rank of the default group must
    call it, in the same order; a rank not in ``ranks`` gets ``GroupMember.NON_GROUP_MEMBER``."""
    pg = _default()
    world = pg.size()
    ranks = list(range(world)) if ranks is None else sorted(int(r) for r in ranks)
    for r in ranks:
        if not 0 <= r < world:
            raise ValueError(f"new_group: rank {r} is out of range for world_size {world}")
    if len(set(ranks)) != len(ranks):
        raise ValueError(f"new_group: duplicate ranks in {ranks}")
    kind = pg._backend if backend is None else _parse_backend(backend)
    _nccl_ready(kind)
    _World.group_count += 1
    name = str(_World.group_count)
    me = _World.rank
    member = me in ranks
    sub = None
    if pg._engine is not None:
        sub = _work.call(lambda: pg._engine.split(0 if member else None, me))
    if not member:
        return GroupMember.NON_GROUP_MEMBER
    timeout = pg._timeout if timeout is None else timeout
    if sub is not None and _cpu_backend(kind) is None:  # nccl alone: no CPU engine
        _work.call(sub.free)
        sub = None
    child = ProcessGroup(sub, ranks, kind, pg._store, timeout, name, ranks.index(me))
    _World.groups[name] = child
    return child


def get_rank(group=None) -> int:
    """This process's rank in ``group`` (the default group: the global rank); -1 when it is
    not a member."""
    if group is GroupMember.NON_GROUP_MEMBER:
        return -1
    return _resolve(group).rank()


def get_world_size(group=None) -> int:
    if group is GroupMember.NON_GROUP_MEMBER:
        return -1
    return _resolve(group).size()


def get_backend(group=None) -> str:
    return _resolve(group)._backend


def get_process_group_ranks(group) -> list[int]:
    return list(_resolve(group)._ranks)


def get_global_rank(group, group_rank: int) -> int:
    ranks = _resolve(group)._ranks
    if not 0 <= group_rank < len(ranks):
        raise ValueError(f"Group rank {group_rank} is not part of the group")
    return ranks[group_rank]


def get_group_rank(group, global_rank: int) -> int:
    ranks = _resolve(group)._ranks
    if global_rank not in ranks:
        raise ValueError(f"Global rank {global_rank} is not part of group {group}")
    return ranks.index(global_rank)


# ---------------------------------------------------------------------------- tensors


def _check_tensor(op: str, t, arg: str = "tensor") -> None:
    """A contiguous tensor (whether the group's backend takes its device is checked when the
    operation starts: ``_launch``, ``_on_device``)."""
    if not isinstance(t, et.Tensor):
        raise TypeError(f"{op}: {arg} must be a Tensor, not {type(t).__name__}")
    if not t.is_contiguous():
        raise ValueError(f"{op}: Tensors must be contiguous ({arg} of shape "
                         f"{tuple(t.shape)} has strides {t.stride()})")


def _bytes(t) -> np.ndarray:
    """The memory of a contiguous CPU tensor as a writable uint8 array (no copy, any dtype:
    bfloat16 has no NumPy dtype); the array keeps the tensor alive."""
    n = t.numel() * t.element_size()
    if n == 0:
        return np.empty(0, np.uint8)
    raw = (ctypes.c_uint8 * n).from_address(t.data_ptr())
    raw.tensor = t
    return np.frombuffer(raw, np.uint8)


_MPI_OP = {ReduceOp.SUM: "SUM", ReduceOp.PRODUCT: "PROD", ReduceOp.MIN: "MIN",
           ReduceOp.MAX: "MAX", ReduceOp.BAND: "BAND", ReduceOp.BOR: "BOR", ReduceOp.BXOR: "BXOR",
           ReduceOp.AVG: "SUM"}


_FLOAT16 = (et.bfloat16, et.float16)
_NOT_PLAIN = frozenset([*_FLOAT16, et.bool])  # dtypes MPI cannot sum as they are
_SUM = ReduceOp.SUM


def _reduce_plan(op_name: str, t, op) -> tuple:
    """(array to reduce in place, engine op, finish()): bfloat16/float16 reduce in a float32
    copy, bool through uint8 with the logical form of the op; AVG divides afterwards."""
    dt = t.dtype
    if op is _SUM and dt not in _NOT_PLAIN:  # the common case: as fast as can be
        return (t.detach() if t.requires_grad else t).numpy(), "SUM", None
    if not isinstance(op, ReduceOp):
        raise TypeError(f"{op_name}: op must be a ReduceOp, not {type(op).__name__}")
    d = t.detach()
    if dt.is_complex and op in (ReduceOp.MIN, ReduceOp.MAX):
        raise TypeError(f"{op_name}: ReduceOp.{op.name} is not defined for complex tensors")
    bitwise = op in (ReduceOp.BAND, ReduceOp.BOR, ReduceOp.BXOR)
    if bitwise and (dt.is_floating_point or dt.is_complex):
        raise TypeError(f"{op_name}: ReduceOp.{op.name} needs an integer or bool tensor, got "
                        f"{dt}")
    if op == ReduceOp.AVG and not (dt.is_floating_point or dt.is_complex):
        raise TypeError(f"{op_name}: ReduceOp.AVG needs a floating point or complex tensor, "
                        f"got {dt}")
    mpi_op = _MPI_OP[op]
    if dt == et.bool:
        mpi_op = {"SUM": "BOR", "MAX": "BOR", "PROD": "BAND", "MIN": "BAND"}.get(mpi_op, mpi_op)
        return d.numpy().reshape(-1).view(np.uint8), mpi_op, None
    if dt in _FLOAT16:
        wide = d.float()
        return wide.numpy().reshape(-1), mpi_op, lambda: d.copy_(wide)
    return d.numpy().reshape(-1), mpi_op, None


def _launch(op_name: str, pg: ProcessGroup, start, async_op: bool, finish=None, outputs=None):
    """Starts ``start(engine)`` for ``pg`` (``finish()`` after it completed); waits unless
    ``async_op`` (``outputs``: the tensors it writes, its future's value)."""
    if pg._engine is None:
        raise RuntimeError(f"{op_name}: No backend type associated with device type cpu (the "
                           f"{pg._backend} backend takes CUDA tensors; use backend="
                           "'cpu:gloo,cuda:nccl' for both)")
    engine = pg._engine
    if async_op:
        return _work.launch(op_name, pg, pg._next(), lambda: start(engine), finish, True,
                            outputs)
    _work.run(op_name, pg, pg._next(), lambda: start(engine), finish)
    return None


def _on_device(op_name: str, pg: ProcessGroup, t, start, async_op: bool, outputs=None):
    """Runs ``start(communicator)`` (a function of ``nccl_collectives``) for CUDA tensor
    ``t``: queued on the current stream, not waited for (as PyTorch's NCCL backend)."""
    if "nccl" not in pg._backend:
        raise RuntimeError(f"{op_name}: the {pg._backend} backend takes CPU tensors, got a "
                           f"tensor on {t.device} (use backend='nccl' or "
                           "'cpu:gloo,cuda:nccl')")
    comm = pg.device_comm(t.device.index if t.device.index is not None else
                          et.cuda.current_device())
    w = _work.launch(op_name, pg, pg._next(), lambda: start(comm), None, async_op, outputs)
    if async_op:
        return w
    w.wait()
    return None


def _group_peer(op: str, pg: ProcessGroup, rank, group_rank, arg: str) -> int:
    """A peer as a rank of ``pg``, from a global rank or a group rank (one of them)."""
    if rank is not None and group_rank is not None:
        raise ValueError(f"{op}: pass {arg} or group_{arg}, not both")
    if group_rank is None:
        if rank is None:
            rank = 0
        if rank not in pg._ranks:
            raise ValueError(f"{op}: {arg} rank {rank} is not part of {pg.describe()} "
                             f"(ranks {pg._ranks})")
        return pg._ranks.index(rank)
    if not 0 <= group_rank < pg.size():
        raise ValueError(f"{op}: group_{arg} {group_rank} is out of range for "
                         f"{pg.describe()}")
    return group_rank


def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op: bool = False):
    """Reduces ``tensor`` over the group; every rank gets the result, in place."""
    pg = _resolve(group)
    _check_tensor("all_reduce", tensor)
    if tensor.is_cuda:
        return _on_device("all_reduce", pg, tensor, lambda c: _nc.all_reduce(c, tensor, op),
                          async_op, [tensor])
    buf, mpi_op, finish = _reduce_plan("all_reduce", tensor, op)
    n = pg.size()

    if op is not ReduceOp.AVG and finish is None:
        return _launch("all_reduce", pg, lambda e: e.all_reduce(buf, mpi_op), async_op,
                       outputs=[tensor])

    def done():
        if op == ReduceOp.AVG:
            buf[...] /= n
        if finish is not None:
            finish()

    return _launch("all_reduce", pg, lambda e: e.all_reduce(buf, mpi_op), async_op, done,
                   [tensor])


def broadcast(tensor, src=None, group=None, async_op: bool = False, group_src=None):
    """Copies ``tensor`` of rank ``src`` into ``tensor`` of every rank."""
    pg = _resolve(group)
    root = _group_peer("broadcast", pg, src, group_src, "src")
    _check_tensor("broadcast", tensor)
    if tensor.is_cuda:
        return _on_device("broadcast", pg, tensor, lambda c: _nc.broadcast(c, tensor, root),
                          async_op, [tensor])
    buf = _bytes(tensor)
    return _launch("broadcast", pg, lambda e: e.broadcast(buf, root), async_op, outputs=[tensor])


def reduce(tensor, dst=None, op=ReduceOp.SUM, group=None, async_op: bool = False,
           group_dst=None):
    """Reduces ``tensor`` over the group into ``tensor`` of rank ``dst`` (the others' are
    left as they are, as PyTorch's MPI and Gloo backends)."""
    pg = _resolve(group)
    root = _group_peer("reduce", pg, dst, group_dst, "dst")
    _check_tensor("reduce", tensor)
    if tensor.is_cuda:
        return _on_device("reduce", pg, tensor, lambda c: _nc.reduce(c, tensor, op, root),
                          async_op)
    if pg.rank() == root:
        buf, mpi_op, finish = _reduce_plan("reduce", tensor, op)
    else:  # the others send a copy: the engine may use their buffer as scratch
        _, mpi_op, _ = _reduce_plan("reduce", tensor, op)
        buf, _, _ = _reduce_plan("reduce", tensor.detach().clone(), op)
        finish = None
    n = pg.size()
    mine = pg.rank() == root

    def done():
        if mine and op == ReduceOp.AVG:
            buf[...] /= n
        if finish is not None:
            finish()

    return _launch("reduce", pg, lambda e: e.reduce(buf, mpi_op, root), async_op, done)


def _same_device(op: str, a, b) -> None:
    if a.device != b.device:
        raise ValueError(f"{op}: input and output must be on one device, got {a.device} and "
                         f"{b.device}")


def _check_same(op: str, ref, others, arg: str) -> None:
    for i, t in enumerate(others):
        _check_tensor(op, t, f"{arg}[{i}]")
        if t.device != ref.device:
            raise ValueError(f"{op}: {arg}[{i}] is on {t.device}, the input tensor on "
                             f"{ref.device}")
        if t.dtype != ref.dtype or t.numel() != ref.numel():
            raise ValueError(f"{op}: {arg}[{i}] has dtype {t.dtype} and {t.numel()} elements; "
                             f"expected {ref.dtype} and {ref.numel()} (as the input tensor)")


def _list_of(op: str, v, arg: str, n: int, what: str = "tensor") -> list:
    if not isinstance(v, (list, tuple)):
        raise TypeError(f"{op}: {arg} must be a list, not {type(v).__name__}")
    if len(v) != n:
        raise ValueError(f"{op}: {arg} must have one {what} per rank of the group ({n}), got "
                         f"{len(v)}")
    return list(v)


def all_gather(tensor_list, tensor, group=None, async_op: bool = False):
    """``tensor_list[r]`` becomes rank r's ``tensor``, on every rank."""
    pg = _resolve(group)
    _check_tensor("all_gather", tensor)
    outs = _list_of("all_gather", tensor_list, "tensor_list", pg.size())
    _check_same("all_gather", tensor, outs, "tensor_list")
    if tensor.is_cuda:
        return _on_device("all_gather", pg, tensor, lambda c: _nc.all_gather(c, outs, tensor),
                          async_op)
    send = _bytes(tensor).copy()
    recv = np.empty(send.size * pg.size(), np.uint8)
    targets = [_bytes(t) for t in outs]

    def done():
        for r, t in enumerate(targets):
            t[:] = recv[r * send.size:(r + 1) * send.size]

    return _launch("all_gather", pg, lambda e: e.all_gather(send, recv), async_op, done)


def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op: bool = False):
    """``output_tensor`` (``world_size * n`` elements: concatenated or stacked) becomes every
    rank's ``input_tensor`` in rank order."""
    pg = _resolve(group)
    _check_tensor("all_gather_into_tensor", input_tensor, "input_tensor")
    _check_tensor("all_gather_into_tensor", output_tensor, "output_tensor")
    if output_tensor.dtype != input_tensor.dtype or \
            output_tensor.numel() != input_tensor.numel() * pg.size():
        raise ValueError(f"all_gather_into_tensor: output_tensor must have world_size "
                         f"({pg.size()}) times the input's {input_tensor.numel()} elements of "
                         f"dtype {input_tensor.dtype}, got {output_tensor.numel()} of "
                         f"{output_tensor.dtype}")
    _same_device("all_gather_into_tensor", input_tensor, output_tensor)
    if input_tensor.is_cuda:
        return _on_device("all_gather_into_tensor", pg, input_tensor,
                          lambda c: _nc.all_gather_into_tensor(c, output_tensor, input_tensor),
                          async_op)
    send, recv = _bytes(input_tensor), _bytes(output_tensor)
    return _launch("all_gather_into_tensor", pg, lambda e: e.all_gather(send, recv), async_op)


def gather(tensor, gather_list=None, dst=None, group=None, async_op: bool = False,
           group_dst=None):
    """``gather_list[r]`` of rank ``dst`` becomes rank r's ``tensor``; the others pass no
    list."""
    pg = _resolve(group)
    root = _group_peer("gather", pg, dst, group_dst, "dst")
    _check_tensor("gather", tensor)
    mine = pg.rank() == root
    if mine:
        outs = _list_of("gather", gather_list, "gather_list", pg.size())
        _check_same("gather", tensor, outs, "gather_list")
        targets = [_bytes(t) for t in outs]
    elif gather_list:
        raise ValueError("gather: Argument ``gather_list`` must NOT be specified on non-"
                         "destination ranks.")
    if tensor.is_cuda:
        outs = outs if mine else None
        return _on_device("gather", pg, tensor, lambda c: _nc.gather(c, tensor, outs, root),
                          async_op)
    send = _bytes(tensor).copy()
    recv = np.empty(send.size * pg.size(), np.uint8) if mine else None

    def done():
        if mine:
            for r, t in enumerate(targets):
                t[:] = recv[r * send.size:(r + 1) * send.size]

    return _launch("gather", pg, lambda e: e.gather(send, recv, root), async_op, done)


def scatter(tensor, scatter_list=None, src=None, group=None, async_op: bool = False,
            group_src=None):
    """Rank r's ``tensor`` becomes ``scatter_list[r]`` of rank ``src``."""
    pg = _resolve(group)
    root = _group_peer("scatter", pg, src, group_src, "src")
    _check_tensor("scatter", tensor)
    mine = pg.rank() == root
    send = None
    ins = None
    if mine:
        ins = _list_of("scatter", scatter_list, "scatter_list", pg.size())
        _check_same("scatter", tensor, ins, "scatter_list")
    elif scatter_list:
        raise ValueError("scatter: Argument ``scatter_list`` must NOT be specified on non-"
                         "source ranks.")
    if tensor.is_cuda:
        return _on_device("scatter", pg, tensor, lambda c: _nc.scatter(c, tensor, ins, root),
                          async_op)
    if mine:
        send = np.concatenate([_bytes(t) for t in ins]) if ins else np.empty(0, np.uint8)
    recv = _bytes(tensor)
    return _launch("scatter", pg, lambda e: e.scatter(send, recv, root), async_op)


def reduce_scatter_tensor(output, input, op=ReduceOp.SUM, group=None, async_op: bool = False):
    """Block r of ``input`` (``world_size`` blocks of ``output.numel()`` elements), reduced
    over the group, becomes rank r's ``output``."""
    pg = _resolve(group)
    _check_tensor("reduce_scatter_tensor", output, "output")
    _check_tensor("reduce_scatter_tensor", input, "input")
    if input.dtype != output.dtype or input.numel() != output.numel() * pg.size():
        raise ValueError(f"reduce_scatter_tensor: input must have world_size ({pg.size()}) "
                         f"times the output's {output.numel()} elements of dtype "
                         f"{output.dtype}, got {input.numel()} of {input.dtype}")
    _same_device("reduce_scatter_tensor", input, output)
    if input.is_cuda:
        return _on_device("reduce_scatter_tensor", pg, input,
                          lambda c: _nc.reduce_scatter_tensor(c, output, input, op), async_op)
    send, mpi_op, _ = _reduce_plan("reduce_scatter_tensor", input.detach().clone(), op)
    recv, _, finish = _reduce_plan("reduce_scatter_tensor", output, op)
    n = pg.size()

    def done():
        if op == ReduceOp.AVG:
            recv[...] /= n
        if finish is not None:
            finish()

    return _launch("reduce_scatter_tensor", pg, lambda e: e.reduce_scatter(send, recv, mpi_op),
                   async_op, done)


def reduce_scatter(output, input_list, op=ReduceOp.SUM, group=None, async_op: bool = False):
    """``output`` of rank r becomes ``input_list[r]`` reduced over the group."""
    pg = _resolve(group)
    _check_tensor("reduce_scatter", output, "output")
    ins = _list_of("reduce_scatter", input_list, "input_list", pg.size())
    _check_same("reduce_scatter", output, ins, "input_list")
    flat = et.cat([t.detach().reshape(-1) for t in ins]) if ins else output.new_empty(0)
    return reduce_scatter_tensor(output, flat, op, pg, async_op)


def all_to_all_single(output, input, output_split_sizes=None, input_split_sizes=None,
                      group=None, async_op: bool = False):
    """Rank r sends block j of ``input`` (rows ``input_split_sizes[j]`` along dim 0, or an
    equal split) to rank j, and receives block r of each rank into ``output`` in rank
    order."""
    pg = _resolve(group)
    _check_tensor("all_to_all_single", output, "output")
    _check_tensor("all_to_all_single", input, "input")
    n = pg.size()
    if input.dtype != output.dtype:
        raise ValueError(f"all_to_all_single: input is {input.dtype}, output {output.dtype}")
    row_in = input[0].numel() if input.dim() and input.shape[0] else 0
    row_out = output[0].numel() if output.dim() and output.shape[0] else 0

    def counts(sizes, t, row, arg):
        rows = t.shape[0] if t.dim() else 1
        if sizes is None or len(sizes) == 0:
            if rows % n:
                raise ValueError(f"all_to_all_single: {arg} has {rows} rows, not divisible by "
                                 f"world_size {n}; pass its split sizes")
            sizes = [rows // n] * n
        sizes = [int(s) for s in sizes]
        if len(sizes) != n or sum(sizes) != rows:
            raise ValueError(f"all_to_all_single: {arg} split sizes {sizes} must be {n} "
                             f"numbers adding up to its {rows} rows")
        return [s * row * t.element_size() for s in sizes]

    send_counts = counts(input_split_sizes, input, row_in or 1, "input")
    recv_counts = counts(output_split_sizes, output, row_out or 1, "output")
    _same_device("all_to_all_single", input, output)
    if input.is_cuda:
        return _on_device("all_to_all_single", pg, input, lambda c: _nc.all_to_all_single(
            c, output, input, send_counts, recv_counts), async_op)
    send, recv = _bytes(input), _bytes(output)
    return _launch("all_to_all_single", pg,
                   lambda e: e.all_to_all(send, send_counts, recv, recv_counts), async_op)


def all_to_all(output_tensor_list, input_tensor_list, group=None, async_op: bool = False):
    """``output_tensor_list[j]`` of rank r becomes ``input_tensor_list[r]`` of rank j."""
    pg = _resolve(group)
    n = pg.size()
    ins = _list_of("all_to_all", input_tensor_list, "input_tensor_list", n)
    outs = _list_of("all_to_all", output_tensor_list, "output_tensor_list", n)
    for i, t in enumerate(ins):
        _check_tensor("all_to_all", t, f"input_tensor_list[{i}]")
    for i, t in enumerate(outs):
        _check_tensor("all_to_all", t, f"output_tensor_list[{i}]")
    if len({t.dtype for t in ins + outs}) > 1:
        raise ValueError("all_to_all: every input and output tensor must have the same dtype")
    if ins and len({t.device for t in ins + outs}) > 1:
        raise ValueError("all_to_all: every input and output tensor must be on one device")
    if ins and ins[0].is_cuda:
        return _on_device("all_to_all", pg, ins[0], lambda c: _nc.all_to_all(c, outs, ins),
                          async_op)
    send = np.concatenate([_bytes(t) for t in ins]) if ins else np.empty(0, np.uint8)
    send_counts = [_bytes(t).size for t in ins]
    targets = [_bytes(t) for t in outs]
    recv_counts = [t.size for t in targets]
    recv = np.empty(sum(recv_counts), np.uint8)

    def done():
        pos = 0
        for t in targets:
            t[:] = recv[pos:pos + t.size]
            pos += t.size

    return _launch("all_to_all", pg, lambda e: e.all_to_all(send, send_counts, recv, recv_counts),
                   async_op, done)


def _p2p(op: str, pg: ProcessGroup, peer, group_peer, arg: str):
    if peer is None and group_peer is None:
        return None
    r = _group_peer(op, pg, peer, group_peer, arg)
    if r == pg.rank():
        raise ValueError(f"Invalid {arg} rank: {op} to or from the same rank ({peer})")
    return r


def isend(tensor, dst=None, group=None, tag: int = 0, group_dst=None) -> Work:
    """Sends ``tensor`` to rank ``dst``; returns the Work to wait on."""
    pg = _resolve(group)
    _check_tensor("isend", tensor)
    peer = _p2p("isend", pg, dst, group_dst, "dst")
    if peer is None:
        raise ValueError("isend: dst or group_dst is required")
    if tensor.is_cuda:
        return _on_device("send", pg, tensor, lambda c: _nc.send(c, tensor, peer), True)
    buf = _bytes(tensor)
    return _launch("send", pg, lambda e: e.send(buf, peer, tag), True)


def irecv(tensor, src=None, group=None, tag: int = 0, group_src=None) -> Work:
    """Receives into ``tensor`` from rank ``src`` (None: any rank); the Work's ``result()``
    is the sender's rank in the group."""
    pg = _resolve(group)
    _check_tensor("irecv", tensor)
    peer = _p2p("irecv", pg, src, group_src, "src")
    if tensor.is_cuda:
        return _on_device("recv", pg, tensor, lambda c: _nc.recv(c, tensor, peer), True)
    buf = _bytes(tensor)
    box = []

    def start(e):
        box.append(e.recv(buf, peer, tag))
        return box[0]

    return _launch("recv", pg, start, True, lambda: box[0].source)


def send(tensor, dst=None, group=None, tag: int = 0, group_dst=None) -> None:
    isend(tensor, dst, group, tag, group_dst).wait()


def recv(tensor, src=None, group=None, tag: int = 0, group_src=None) -> int:
    """Receives into ``tensor``; returns the sender's global rank."""
    pg = _resolve(group)
    w = irecv(tensor, src, group, tag, group_src)
    if tensor.is_cuda:  # from src (NCCL cannot receive from any rank)
        w.wait()
        return pg._ranks[_p2p("recv", pg, src, group_src, "src")]
    return pg._ranks[w.result()]


def barrier(group=None, async_op: bool = False, device_ids=None):
    """Waits until every rank of the group has reached it."""
    pg = _resolve(group)
    if pg._engine is None:  # nccl alone: on the current device, as PyTorch
        index = et.cuda.current_device()
        return _on_device("barrier", pg, et.empty(0, device=f"cuda:{index}"),
                          lambda c: _nc.barrier(c), async_op)
    return _launch("barrier", pg, lambda e: e.barrier(), async_op)


def monitored_barrier(group=None, timeout=None, wait_all_ranks: bool = False) -> None:
    """A barrier through the store that, past ``timeout``, raises naming the ranks that did
    not reach it (all of them with ``wait_all_ranks``, else the first)."""
    pg = _resolve(group)
    if pg._store is None:
        raise RuntimeError("monitored_barrier needs a rendezvous store (env:// or tcp://)")
    seconds = pg.timeout_s if timeout is None else (
        timeout.total_seconds() if hasattr(timeout, "total_seconds") else float(timeout))
    seq = pg._next()
    key = f"monitored/{pg.name()}/{seq}"
    me = _World.rank
    pg._store.set(f"{key}/{me}", "1")
    keys = [f"{key}/{r}" for r in pg._ranks]
    try:
        pg._store.wait(keys, datetime.timedelta(seconds=seconds))
    except Exception:
        missing = [r for r in pg._ranks if not pg._store.check([f"{key}/{r}"])]
        shown = missing if wait_all_ranks else missing[:1]
        raise DistBackendError(
            f"ember.distributed: monitored_barrier of {pg.describe()} timed out after "
            f"{seconds:g} seconds; rank{'s' if len(shown) > 1 else ''} "
            f"{', '.join(map(str, shown))} did not reach it") from None


# ---------------------------------------------------------------------------- objects


def _encode(obj) -> bytes:
    buf = io.BytesIO()
    et.save(obj, buf)
    return buf.getvalue()


def _decode(data: bytes):
    """Loads with Ember's safe loader: data, tensors and allowed classes only."""
    return et.load(io.BytesIO(data))


def _exchange_sizes(pg: ProcessGroup, n: int) -> list[int]:
    dev = _object_device(pg)
    mine = et.tensor([n], dtype=et.int64, device=dev)
    sizes = [et.zeros(1, dtype=et.int64, device=dev) for _ in range(pg.size())]
    all_gather(sizes, mine, pg)
    return [int(s.item()) for s in sizes]


def _byte_tensor(data: bytes, dev="cpu"):
    if not data:
        return et.empty(0, dtype=et.uint8, device=dev)
    return et.tensor(np.frombuffer(data, np.uint8).copy()).to(dev)


def _object_device(pg: ProcessGroup) -> str:
    """Where object collectives put their bytes: the CPU, or the current CUDA device when
    the group has nccl alone (as PyTorch)."""
    return "cpu" if pg._engine is not None else f"cuda:{et.cuda.current_device()}"


def broadcast_object_list(object_list: list, src=None, group=None, device=None,
                          group_src=None) -> None:
    """The entries of ``object_list`` on every rank become rank ``src``'s (same length on
    every rank), through Ember's checkpoint format: data and tensors, never code."""
    pg = _resolve(group)
    dev = _object_device(pg)
    root = _group_peer("broadcast_object_list", pg, src, group_src, "src")
    mine = pg.rank() == root
    data = _encode(list(object_list)) if mine else b""
    size = et.tensor([len(data)], dtype=et.int64, device=dev)
    broadcast(size, group=pg, group_src=root)
    buf = _byte_tensor(data, dev) if mine else et.empty(int(size.item()), dtype=et.uint8,
                                                        device=dev)
    broadcast(buf, group=pg, group_src=root)
    if not mine:
        values = _decode(bytes(buf.cpu().numpy()))
        object_list[:] = values[:len(object_list)]


def all_gather_object(object_list: list, obj, group=None) -> None:
    """``object_list[r]`` becomes rank r's ``obj`` on every rank."""
    pg = _resolve(group)
    dev = _object_device(pg)
    _list_of("all_gather_object", object_list, "object_list", pg.size(), "entry")
    data = _encode(obj)
    sizes = _exchange_sizes(pg, len(data))
    width = max(sizes)
    mine = _byte_tensor(data + bytes(width - len(data)), dev)
    outs = [et.empty(width, dtype=et.uint8, device=dev) for _ in sizes]
    all_gather(outs, mine, pg)
    for r, (t, n) in enumerate(zip(outs, sizes)):
        object_list[r] = _decode(bytes(t.cpu().numpy()[:n]))


def gather_object(obj, object_gather_list=None, dst=None, group=None, group_dst=None) -> None:
    """``object_gather_list[r]`` of rank ``dst`` becomes rank r's ``obj``."""
    pg = _resolve(group)
    dev = _object_device(pg)
    root = _group_peer("gather_object", pg, dst, group_dst, "dst")
    mine = pg.rank() == root
    if mine:
        _list_of("gather_object", object_gather_list, "object_gather_list", pg.size(), "entry")
    data = _encode(obj)
    sizes = _exchange_sizes(pg, len(data))
    width = max(sizes)
    outs = [et.empty(width, dtype=et.uint8, device=dev) for _ in sizes] if mine else None
    gather(_byte_tensor(data + bytes(width - len(data)), dev), outs, group=pg, group_dst=root)
    if mine:
        for r, (t, n) in enumerate(zip(outs, sizes)):
            object_gather_list[r] = _decode(bytes(t.cpu().numpy()[:n]))


def scatter_object_list(scatter_object_output_list: list, scatter_object_input_list=None,
                        src=None, group=None, group_src=None) -> None:
    """``scatter_object_output_list[0]`` of rank r becomes ``scatter_object_input_list[r]``
    of rank ``src``."""
    pg = _resolve(group)
    dev = _object_device(pg)
    root = _group_peer("scatter_object_list", pg, src, group_src, "src")
    mine = pg.rank() == root
    if mine:
        _list_of("scatter_object_list", scatter_object_input_list, "scatter_object_input_list",
                 pg.size(), "entry")
        blobs = [_encode(o) for o in scatter_object_input_list]
    else:
        blobs = [b""] * pg.size()
    width = et.tensor([max(len(b) for b in blobs)], dtype=et.int64, device=dev)
    broadcast(width, group=pg, group_src=root)
    w = int(width.item())
    lens = et.tensor([len(b) for b in blobs], dtype=et.int64, device=dev)
    broadcast(lens, group=pg, group_src=root)
    out = et.empty(w, dtype=et.uint8, device=dev)
    ins = [_byte_tensor(b + bytes(w - len(b)), dev) for b in blobs] if mine else None
    scatter(out, ins, group=pg, group_src=root)
    n = int(lens[pg.rank()].item())
    scatter_object_output_list[0] = _decode(bytes(out.cpu().numpy()[:n]))
