"""Every op of the op registry (op_registry.py) that has CUDA kernels, run on the device
under test against the CPU: the row's own lambda and samples, for each of its dtypes.

The hand-written CUDA test files (test_cuda_ops*.py) sweep each kernel's paths (block
strategies, large sizes, layouts); this file makes sure that no op with a CUDA kernel is
left out, and that a new op's row is run on CUDA as soon as it is added. Results must have
the CPU's dtype and shape, live on the device, and hold the CPU's values within the central
tolerance table (conftest.TOLERANCES, scaled as the row says); where the CPU raises, the
device raises the same type with the same message. Rows compared by shape only (random ops,
uninitialised memory) are compared by shape and dtype here too.

Runs only where a GPU is present; skipped elsewhere (``EMBER_CUDA_TEST_DEVICE=cpu``, as in
``nox -s cuda_cpu_mode``, runs it against the CPU, which checks the tests themselves).
"""

from __future__ import annotations

import zlib

import pytest

import ember_tensor as et
from cuda_testing import DEV, requires_device
from op_registry import ROWS, Row, compare_results, sample_args

WIDE_UNSIGNED = ("uint16", "uint32", "uint64")

pytestmark = requires_device


def _on_device(x):
    if isinstance(x, et.Tensor):
        return x.to(DEV)
    if isinstance(x, (list, tuple)):
        return type(x)(_on_device(v) for v in x)
    if isinstance(x, dict):
        return {k: _on_device(v) for k, v in x.items()}
    return x


def _takes_device(row: Row) -> bool:
    return any(arg["name"] == "device" for e in row.entries for arg in e["args"])


def _cases():
    for row in ROWS:
        if row.cuda == "kernel" and not row.skip:
            marks = []
            if row.cuda_xfail:  # a known gap of the CUDA kernel; the CPU mode passes
                marks = [pytest.mark.xfail(DEV == "cuda", reason=row.cuda_xfail, strict=True)]
            for dt in row.test_dtypes:
                yield pytest.param(row, dt, id=f"{row.name}-{dt}", marks=marks)


@pytest.mark.parametrize(("row", "dt"), list(_cases()))
def test_op_matches_cpu(row: Row, dt: str):
    refused = DEV == "cuda" and dt in row.cuda_refuses
    for i, sample in enumerate(row.samples):
        where = f"{row.name}, sample {i} {sample!r}, {dt}"
        seed = zlib.crc32(f"{row.name}/{dt}/{i}".encode())
        # two builds of the same values: in-place ops change their arguments
        cpu_args, cpu_kwargs = sample_args(sample, dt, seed)["ember_tensor"]
        dev_args, dev_kwargs = _on_device(sample_args(sample, dt, seed)["ember_tensor"])
        if _takes_device(row):
            dev_kwargs = {**dev_kwargs, "device": DEV}
        if refused:  # the device refuses the dtype, as PyTorch's CUDA build does
            with pytest.raises(NotImplementedError, match="CUDA"):
                row.call(et, dev_args, dev_kwargs)
            continue
        try:
            want = row.call(et, cpu_args, cpu_kwargs)
        except Exception as cpu_error:  # noqa: BLE001 - the error is the expectation
            with pytest.raises(type(cpu_error)) as dev_error:
                row.call(et, dev_args, dev_kwargs)
            assert str(dev_error.value) == str(cpu_error), where
            continue
        if DEV == "cuda" and dt in WIDE_UNSIGNED:
            # PyTorch's CUDA build moves uint16/32/64 but computes little on them: a kernel may
            # refuse them with a NotImplementedError naming CUDA; what it computes must match
            try:
                got = row.call(et, dev_args, dev_kwargs)
            except NotImplementedError as error:
                assert "CUDA" in str(error), where
                continue
            compare_results(row, got, want, where, on_device=DEV)
            continue
        compare_results(row, row.call(et, dev_args, dev_kwargs), want, where, on_device=DEV)
