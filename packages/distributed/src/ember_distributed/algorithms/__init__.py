"""``torch.distributed.algorithms``: DistributedDataParallel's communication hooks
(``ddp_comm_hooks``)."""
