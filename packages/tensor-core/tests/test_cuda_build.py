"""What a CUDA build contains, checked without a GPU: the CUDA kernels registered with the
dispatcher, and the errors a CUDA request gets when no device is there.

It runs everywhere: ``EMBER_CUDA_TEST_DEVICE`` does not apply. That every op with CUDA
kernels is exercised by a CUDA test file is op_registry's check
(test_op_registry.py::test_every_cuda_kernel_is_exercised_by_a_cuda_test_file)."""

import pytest

import ember_tensor as et
from ember_tensor import _C

built = _C._cuda_is_built()
no_device = _C._cuda_device_count() == 0

# the ops whose CUDA kernels this build must carry (src/ember/ops/<family>/*_cuda.cu)
CORE_CUDA_OPS = set(
    "copy clone contiguous fill zero zeros ones empty full add sub mul div neg abs exp log sqrt "
    "tanh sigmoid relu sum mean mm bmm matmul eq lt where maximum clamp pow softmax log_softmax "
    "argmax max_dim uniform normal randint arange cat index_select gather embedding nll_loss "
    "native_layer_norm".split()
)


def test_build_info_reports_cuda():
    assert _C._build_info()["cuda"] is built


@pytest.mark.skipif(not built, reason="a build without CUDA")
def test_every_op_has_a_cuda_kernel_registered_with_the_dispatcher():
    registered = set(_C._cuda_kernel_coverage())
    missing = set(_C._cuda_kernel_coverage(registered=False))
    assert CORE_CUDA_OPS <= registered
    assert not registered & missing
    assert {"cumsum", "sort", "topk", "linalg_svd", "conv2d", "_index"} <= registered
    assert missing == set()  # every op with per-device kernels has its CUDA kernel


@pytest.mark.skipif(built, reason="a build with CUDA")
def test_a_cpu_only_build_registers_no_cuda_kernel():
    assert _C._cuda_kernel_coverage() == []


@pytest.mark.skipif(not no_device, reason="a CUDA device is present")
@pytest.mark.parametrize(
    "make",
    [
        lambda: et.zeros(2, device="cuda"),
        lambda: et.ones(2).cuda(),
        lambda: et.ones(2).to("cuda:0"),
        lambda: et.tensor([1.0], device="cuda"),
        lambda: et.full((2,), 1.0, device="cuda"),
    ],
)
def test_asking_for_cuda_without_a_device_is_a_clear_error(make):
    with pytest.raises(RuntimeError, match="device cuda(:0)? is not available: "):
        make()


def test_cpu_tensors_are_not_pinned_and_stay_put():
    x = et.ones(3)
    assert not x.is_pinned()
    assert x.cpu() is x
    assert x.to("cpu") is x
    assert x.__dlpack_device__() == (1, 0)
