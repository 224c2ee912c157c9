"""Train the digits CNN of ``train_digits.py`` on several processes with
``DistributedDataParallel``, with a checkpoint that rank 0 saves and every rank loads.

    python -m ember.distributed.run --nproc-per-node 2 examples/ddp_train.py [--epochs 12]
    mpiexec -n 2 python examples/ddp_train.py                  # the same under MPI

Each process holds a replica of the model and trains on its own shard of every batch
(``DistributedSampler``; ``--batch-size`` is the global batch, split across the processes);
the batch norms are ``SyncBatchNorm`` (statistics of the whole global batch), and backward
averages the gradients across processes, so N processes take the same steps as one process
with the whole batch and reach the same accuracy. After each epoch rank 0 saves the model and
optimizer state (``ember.save``: safe, no code in the file); at the end every rank loads the
last checkpoint into a fresh model, checks it against its replica and scores it on the test
set. Needs ``scikit-learn`` (the digits ship with it: nothing is downloaded) and the MPI
engine (``pip install "ember-distributed[mpi]"``). Replacing ``ember`` by ``torch`` runs the
same program with PyTorch (``--backend gloo``).
"""

from __future__ import annotations

import argparse
import time

from train_digits import DigitsCNN, evaluate, load_datasets

import ember
import ember.distributed as dist
import ember.nn.functional as F
from ember import nn
from ember.nn.parallel import DistributedDataParallel as DDP
from ember.utils.data import DataLoader, DistributedSampler


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--epochs", type=int, default=12)
    p.add_argument("--batch-size", type=int, default=64, help="global: split across processes")
    p.add_argument("--lr", type=float, default=0.01)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--backend", default="gloo")
    p.add_argument("--checkpoint", default="ddp_checkpoint.safetensors")
    return p.parse_args(argv)


def main(argv=None) -> float:
    args = parse_args(argv)
    try:
        dist.init_process_group(args.backend)
    except ValueError as e:  # not started by a launcher: no RANK, WORLD_SIZE, ...
        raise SystemExit(f"{e}\nstart it with: python -m ember.distributed.run "
                         "--nproc-per-node 2 examples/ddp_train.py") from None
    rank, world = dist.get_rank(), dist.get_world_size()
    if args.batch_size % world:
        raise SystemExit(f"--batch-size {args.batch_size} is not divisible by {world} processes")
    ember.manual_seed(args.seed + rank)  # different starts: DDP makes every replica rank 0's
    model = DDP(nn.SyncBatchNorm.convert_sync_batchnorm(DigitsCNN()))
    opt = ember.optim.Adam(model.parameters(), lr=args.lr)
    train_set, test_set = load_datasets()
    sampler = DistributedSampler(train_set, num_replicas=world, rank=rank, seed=args.seed)
    loader = DataLoader(train_set, batch_size=args.batch_size // world, sampler=sampler,
                        drop_last=True)
    start = time.perf_counter()
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        model.train()
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
            print(f"epoch {epoch + 1}/{args.epochs}: train loss "
                  f"{total[0].item() / total[1].item():.4f} over {int(total[1].item())} "
                  f"samples on {world} process(es)", flush=True)
    seconds = time.perf_counter() - start
    dist.barrier()  # the last checkpoint is written before anyone reads it
    state = ember.load(args.checkpoint)
    fresh = nn.SyncBatchNorm.convert_sync_batchnorm(DigitsCNN())
    fresh.load_state_dict(state["model"])
    same = all(ember.equal(a, b) for a, b in zip(fresh.state_dict().values(),
                                                  model.module.state_dict().values()))
    _, accuracy = evaluate(fresh, DataLoader(test_set, batch_size=256))
    results = [None] * world
    dist.all_gather_object(results, [same, accuracy])
    if rank == 0:
        agree = all(r == [True, accuracy] for r in results)
        print(f"checkpoint of epoch {state['epoch'] + 1} loaded on every rank: "
              f"{'identical to the replicas' if agree else 'DIFFERENT'}; test accuracy "
              f"{accuracy:.4f}; training took {seconds:.1f} s", flush=True)
    dist.destroy_process_group()
    if not all(r[0] for r in results):
        raise SystemExit(1)
    return accuracy


if __name__ == "__main__":
    main()
