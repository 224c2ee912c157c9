"""Communication hooks of ``DistributedDataParallel.register_comm_hook``
(``torch.distributed.algorithms.ddp_comm_hooks``): ``default_hooks``."""

from . import default_hooks  # noqa: F401
