"""PyTorch's OpInfo database (``torch.testing._internal.common_methods_invocations.op_db``)
run against Ember: see harness.py."""
