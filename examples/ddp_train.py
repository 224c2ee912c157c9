"""Data-parallel training across processes with ``DistributedDataParallel``, and a checkpoint
that rank 0 saves and every rank loads.

    python -m ember.distributed.run --nproc-per-node 2 examples/ddp_train.py [--epochs 4]
    mpiexec -n 2 python examples/ddp_train.py                  # the same under MPI

Each process holds a replica of the model and trains on its own shard of every batch
(``DistributedSampler``); backward averages the gradients across processes, so the
replicas stay identical. After each epoch rank 0 saves the model and optimizer state
(``ember.save``: safe, no code in the file); at the end every rank loads the last
checkpoint into a fresh model and checks it against its replica. Needs the MPI engine:
``pip install "ember-distributed[mpi]"``. The data is a synthetic 4-class problem made from a
seed (nothing is downloaded). Replacing ``ember`` by ``torch`` runs the same program with
PyTorch (``--backend gloo``).
"""

from __future__ import annotations

import argparse
import os

import numpy as np

import ember
import ember.distributed as dist
import ember.nn as nn
import ember.nn.functional as F
import ember.optim as optim
from ember.nn.parallel import DistributedDataParallel as DDP
from ember.utils.data import DataLoader, DistributedSampler, TensorDataset


class Net(nn.Module):
    def __init__(self, features: int = 16, hidden: int = 64, classes: int = 4):
        super().__init__()
        self.fc1 = nn.Linear(features, hidden)
        self.fc2 = nn.Linear(hidden, classes)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


def make_data(n: int = 2048, features: int = 16, classes: int = 4, seed: int = 0):
    """Gaussian blobs around ``classes`` random centres: (inputs float32, labels int64)."""
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((classes, features)) * 2.0
    labels = rng.integers(0, classes, n)
    inputs = centres[labels] + rng.standard_normal((n, features))
    return ember.tensor(inputs, dtype=ember.float32), ember.tensor(labels)


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--epochs", type=int, default=4)
    p.add_argument("--batch-size", type=int, default=64, help="per process")
    p.add_argument("--lr", type=float, default=0.05)
    p.add_argument("--backend", default="gloo")
    p.add_argument("--checkpoint", default="ddp_checkpoint.safetensors")
    return p.parse_args(argv)


def main(argv=None) -> None:
    args = parse_args(argv)
    dist.init_process_group(args.backend)
    rank, world = dist.get_rank(), dist.get_world_size()
    ember.manual_seed(rank)  # different starts: DDP makes every replica rank 0's
    model = DDP(Net())
    opt = optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    inputs, labels = make_data()
    dataset = TensorDataset(inputs, labels)
    sampler = DistributedSampler(dataset, num_replicas=world, rank=rank, shuffle=True, seed=0)
    loader = DataLoader(dataset, batch_size=args.batch_size, sampler=sampler)
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        total = ember.zeros(2, dtype=ember.float64)  # loss sum, sample count
        for x, y in loader:
            opt.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            total += ember.tensor([loss.item() * len(y), len(y)], dtype=ember.float64)
        dist.all_reduce(total)  # the epoch's loss over every process's samples
        if rank == 0:
            ember.save({"epoch": epoch, "model": model.module.state_dict(),
                        "optimizer": opt.state_dict()}, args.checkpoint)
            print(f"epoch {epoch + 1}/{args.epochs}: loss {total[0].item() / total[1].item():.4f} "
                  f"over {int(total[1].item())} samples on {world} processes", flush=True)
    dist.barrier()  # the last checkpoint is written before anyone reads it
    state = ember.load(args.checkpoint)
    fresh = Net()
    fresh.load_state_dict(state["model"])
    same = all(ember.equal(a, b) for a, b in zip(fresh.parameters(), model.module.parameters()))
    with ember.no_grad():
        accuracy = (fresh(inputs).argmax(1) == labels).float().mean().item()
    flags = [None] * world
    dist.all_gather_object(flags, same)
    if rank == 0:
        print(f"checkpoint of epoch {state['epoch'] + 1} loaded on every rank: "
              f"{'identical to the replicas' if all(flags) else 'DIFFERENT'}; "
              f"accuracy {accuracy:.3f}", flush=True)
    dist.destroy_process_group()
    if not all(flags):
        raise SystemExit(1)


if __name__ == "__main__":
    if "RANK" not in os.environ and "PMI_RANK" not in os.environ and \
            "OMPI_COMM_WORLD_RANK" not in os.environ:
        raise SystemExit("start it with: python -m ember.distributed.run --nproc-per-node 2 "
                         "examples/ddp_train.py")
    main()
