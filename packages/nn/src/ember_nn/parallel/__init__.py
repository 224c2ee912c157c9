"""``ember.nn.parallel``: ``DataParallel`` and ``data_parallel`` for programs written for
PyTorch's single-process multi-GPU wrapper.

Ember runs the wrapped module on one device: with no CUDA device (or one), exactly what
PyTorch does; with several, Ember does not replicate the module per GPU and split the batch
(PyTorch recommends ``DistributedDataParallel`` over ``DataParallel`` for that, and so does
Ember) but moves the module to the first of ``device_ids`` and runs the whole batch there,
saying so once. State-dict keys carry the ``module.`` prefix, as in PyTorch.

>>> import ember_tensor as et
>>> import ember_nn as nn
>>> model = nn.DataParallel(nn.Linear(3, 2))
>>> list(model.state_dict())
['module.weight', 'module.bias']
>>> tuple(model(et.ones(4, 3)).shape)
(4, 2)
"""

from __future__ import annotations

from .data_parallel import DataParallel, data_parallel

__all__ = ["DataParallel", "data_parallel"]
