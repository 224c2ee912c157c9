"""PyTorch's ModuleInfo database (``torch.testing._internal.common_modules.module_db``) run
against ``ember_nn``: see harness.py."""
