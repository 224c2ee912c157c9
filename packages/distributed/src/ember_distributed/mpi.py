"""The ``"mpi"`` engine (also what ``"gloo"`` names): collectives of an MPI library, through
``mpi4py``, on NumPy views of contiguous CPU tensors (zero-copy).

MPI is loaded on first use, never at import: an installation without ``mpi4py`` imports
``ember_distributed`` and says what to install when a process group needs it
(``pip install "ember-distributed[mpi]"``, or ``mpi4py`` built against the cluster's own
MPI). The communicator comes from one of two places:

- **launched by ``mpiexec``** (``MPI_COMM_WORLD`` has more than one process): that world,
  as PyTorch's MPI backend;
- **launched any other way** (``python -m ember.distributed.run``, or processes started by
  hand with ``env://`` / ``tcp://`` rendezvous): every process starts as an MPI singleton,
  rank 0 opens an MPI port and publishes its name in the rendezvous store, the others
  connect to it one at a time (``MPI_Comm_connect`` / ``accept`` / ``Intercomm_merge``) and
  the merged communicator is reordered by rank. MPICH 4 supports this; MPICH 5.0 breaks it
  (pmodels/mpich#7805), and Open MPI needs its own runtime for it: both are refused with a
  message that says what to do.

Every call into MPI is made under ``work.lock``.
"""

from __future__ import annotations

__all__ = ["load", "world_engine", "connect", "Engine"]

_MPI = None


def load():
    """The ``mpi4py.MPI`` module, initialised once (serialized threading: every call is made
    under ``work.lock``; not finalized at exit while an operation is stuck)."""
    global _MPI
    if _MPI is None:
        try:
            import mpi4py
        except ImportError:
            raise RuntimeError(
                "ember.distributed: the 'mpi' (and 'gloo') backend needs mpi4py and an MPI "
                "library: pip install \"ember-distributed[mpi]\" (MPICH from PyPI), or mpi4py "
                "built against your cluster's MPI") from None
        import sys

        if "mpi4py.MPI" not in sys.modules:
            mpi4py.rc.thread_level = "serialized"
            mpi4py.rc.finalize = False
        from mpi4py import MPI

        _MPI = MPI
        if not mpi4py.rc.finalize:
            import atexit

            atexit.register(_finalize)
    return _MPI


def _finalize() -> None:
    from . import work

    if _MPI is not None and not work.stuck and not _MPI.Is_finalized():
        _MPI.Finalize()


def world_engine() -> Engine:
    return Engine(load().COMM_WORLD.Dup())


def _check_singleton_support(MPI) -> None:
    version = MPI.Get_library_version()
    if version.startswith("MPICH Version:") and version.split()[2].startswith("5.0"):
        raise RuntimeError(
            "ember.distributed: MPICH 5.0 cannot connect processes that were not started by "
            "mpiexec (pmodels/mpich#7805). Launch with mpiexec -n N, or install MPICH 4: "
            "pip install \"mpich>=4.3,<5\"")
    if "Open MPI" in version:
        raise RuntimeError(
            "ember.distributed: with Open MPI, processes must be started by mpirun / mpiexec "
            "(it cannot connect independently started processes without its runtime); or use "
            "MPICH 4: pip install \"mpich>=4.3,<5\"")


def connect(store, rank: int, world_size: int) -> Engine:
    """The engine of a communicator of ``world_size`` singleton processes met through
    ``store``, ordered by ``rank``."""
    MPI = load()
    if world_size == 1:
        return Engine(MPI.COMM_SELF.Dup())
    _check_singleton_support(MPI)
    if rank == 0:
        port = MPI.Open_port()
        store.set("mpi_port", port)
        comm = MPI.COMM_SELF.Dup()
    else:
        port = store.get("mpi_port").decode()
        inter = MPI.COMM_SELF.Connect(port, root=0)
        comm = inter.Merge(high=True)
        inter.Free()
    while comm.Get_size() < world_size:  # admit the next process, whichever connects first
        inter = comm.Accept(port, root=0)
        merged = inter.Merge(high=False)
        inter.Free()
        comm.Free()
        comm = merged
    ordered = comm.Split(0, rank)
    comm.Free()
    if rank == 0:
        MPI.Close_port(port)
    return Engine(ordered)


class _Received:
    """An ``Irecv`` request that keeps the status (the sender's rank, for ``src=None``)."""

    def __init__(self, request, status) -> None:
        self.request, self.status = request, status

    def Test(self) -> bool:  # noqa: N802  (MPI's name, as the other requests)
        return self.request.Test(self.status)

    @property
    def source(self) -> int:
        return self.status.Get_source()


class Engine:
    """The operations of one communicator on NumPy arrays (contiguous, in this process's
    memory), each started without blocking: it returns the MPI request (``Test()``), or None
    when there was nothing to do. Reductions take an MPI op name: SUM, PROD, MIN, MAX, BAND,
    BOR, BXOR. The caller holds ``work.lock``."""

    def __init__(self, comm) -> None:
        self.comm = comm
        self.MPI = load()
        self._rank, self._size = comm.Get_rank(), comm.Get_size()

    def rank(self) -> int:
        return self._rank

    def size(self) -> int:
        return self._size

    def _op(self, op: str):
        return getattr(self.MPI, op)

    def all_reduce(self, buf, op: str):
        if self._size == 1 or not buf.size:
            return None
        return self.comm.Iallreduce(self.MPI.IN_PLACE, buf, op=self._op(op))

    def broadcast(self, buf, root: int):
        if self._size == 1 or not buf.size:
            return None
        return self.comm.Ibcast(buf, root=root)

    def reduce(self, buf, op: str, root: int):
        if self._size == 1 or not buf.size:
            return None
        if self._rank == root:
            return self.comm.Ireduce(self.MPI.IN_PLACE, buf, op=self._op(op), root=root)
        return self.comm.Ireduce(buf, None, op=self._op(op), root=root)

    def all_gather(self, send, recv):
        """recv: ``size()`` blocks of ``send.size`` elements."""
        return self.comm.Iallgather(send, recv)

    def gather(self, send, recv, root: int):
        return self.comm.Igather(send, recv, root=root)

    def scatter(self, send, recv, root: int):
        return self.comm.Iscatter(send, recv, root=root)

    def reduce_scatter(self, send, recv, op: str):
        """send: ``size()`` blocks of ``recv.size`` elements; block r reduced into rank r."""
        return self.comm.Ireduce_scatter_block(send, recv, op=self._op(op))

    def all_to_all(self, send, send_counts, recv, recv_counts):
        """Block i of send (send_counts[i] elements) goes to rank i; recv holds the blocks
        received from each rank in rank order."""
        import numpy as np

        sd = np.concatenate([[0], np.cumsum(send_counts)[:-1]]).astype(np.int64)
        rd = np.concatenate([[0], np.cumsum(recv_counts)[:-1]]).astype(np.int64)
        return self.comm.Ialltoallv([send, (list(send_counts), list(sd))],
                                    [recv, (list(recv_counts), list(rd))])

    def send(self, buf, dst: int, tag: int):
        return self.comm.Isend(buf, dest=dst, tag=tag)

    def recv(self, buf, src: int | None, tag: int) -> _Received:
        """Its ``source`` is the rank the message came from (any rank when ``src`` is None)."""
        source = self.MPI.ANY_SOURCE if src is None else src
        return _Received(self.comm.Irecv(buf, source=source, tag=tag), self.MPI.Status())

    def barrier(self):
        return self.comm.Ibarrier()

    def split(self, color: int | None, key: int):
        """A sub-engine of the ranks that pass the same color (None: not a member);
        blocking, collective over this engine's ranks."""
        sub = self.comm.Split(self.MPI.UNDEFINED if color is None else color, key)
        return None if sub == self.MPI.COMM_NULL else Engine(sub)

    def free(self) -> None:
        if self.comm is not None and not self.MPI.Is_finalized():
            self.comm.Free()
        self.comm = None
