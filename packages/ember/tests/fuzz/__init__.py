"""A differential fuzzer for Ember.

It calls every op of ``ops.yaml`` (through ``ember_tensor/ops_schema.json``) and the rest of
the public Python surface (``ember.*``, ``Tensor`` methods, ``ember.nn.functional``,
``ember.linalg``) with generated arguments, in long-lived child processes, and compares each
call with its PyTorch twin. It reports crashes, hangs, leaked exceptions (``SystemError``) and
divergences from PyTorch, each with a reproducer that can be pasted into Python.

Modules, one job each:

- ``targets``: the callables and their parameters.
- ``recipes``: argument recipes, built in Ember or PyTorch and rendered as source.
- ``generate``: a deterministic call generator (one ``random.Random`` per call index).
- ``compare``: result comparison between the two libraries.
- ``execute``: runs one call in both libraries and classifies the outcome.
- ``explain``: recognises divergences documented in ``docs/differences-from-pytorch.md``.
- ``worker``: the child process loop.
- ``runner``: the parent, which detects crashes and hangs and restarts children.
- ``report``: grouping, the allowlist check and the summary table.

Run it from ``packages/ember/tests`` with ``python -m fuzz --help``.
"""
