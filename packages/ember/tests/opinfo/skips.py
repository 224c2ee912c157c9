"""OpInfos the harness does not score, each with its reason. A rule matches an OpInfo's
name (``linalg.svd``) by prefix or by exact name."""

from __future__ import annotations

RANDOM = "random or uninitialised values: not comparable across two libraries' generators"

# (prefix, reason): every OpInfo whose name starts with the prefix
PREFIXES: list[tuple[str, str]] = [
    ("masked.", "masked-tensor reductions (torch.masked): not part of Ember's plan"),
    ("sparse.", "sparse layouts: not part of Ember's plan"),
    ("to_sparse", "sparse layouts: not part of Ember's plan"),
    ("_segment_reduce", "a private op over jagged segments (NJT): not part of Ember's plan"),
    ("jiterator_", "CUDA jiterator samples: CUDA-only test ops"),
    ("rand", RANDOM),
    ("new_empty", RANDOM),
    ("empty", RANDOM),
    ("normal", RANDOM),
    ("bernoulli", RANDOM),
    ("multinomial", RANDOM),
    ("uniform", RANDOM),
    ("nn.functional.dropout", RANDOM),
    ("nn.functional.alpha_dropout", RANDOM),
    ("nn.functional.feature_alpha_dropout", RANDOM),
    ("nn.functional.fractional_max_pool", RANDOM),
    ("nn.functional.rrelu", RANDOM),
    ("cauchy", RANDOM),
    ("exponential", RANDOM),
    ("geometric", RANDOM),
    ("log_normal", RANDOM),
]

# exact names
NAMES: dict[str, str] = {
    "resize_": "resizes storage in place: tested by the core's own tests",
    "resize_as_": "resizes storage in place: tested by the core's own tests",
    "item": "a Python number: compared by the core's own tests",
    "nonzero_static": "PyTorch's export helper with a static output size",
}


def reason(name: str) -> str | None:
    """Why the OpInfo ``name`` is not scored, or None."""
    if name in NAMES:
        return NAMES[name]
    for prefix, why in PREFIXES:
        if name.startswith(prefix):
            return why
    return None


# ops whose samples draw random numbers in some settings only (dropout inside attention):
# those samples are left out, the others compared; name -> (predicate on a sample, reason)
RANDOM_SAMPLES: dict[str, tuple] = {
    "nn.functional.scaled_dot_product_attention": (
        lambda s: s.kwargs.get("dropout_p", 0.0) > 0,
        "dropout_p > 0 drops attention weights at random: " + RANDOM),
    "nn.functional.multi_head_attention_forward": (
        lambda s: s.kwargs.get("training", True) and s.args[9] > 0,
        "dropout_p > 0 in training drops attention weights at random: " + RANDOM),
}


# ops with a (values, indices) result whose indices PyTorch leaves unspecified among equal
# values (they depend on its sorting algorithm and the input's size): the values are compared,
# and the indices checked to select them from the input along dim; name -> (the position of
# dim among the sample's args, reason)
UNSPECIFIED_INDICES: dict[str, tuple[int, str]] = {
    "mode": (0, "torch.mode's index among equal values is its sort's choice (the last for "
                "small inputs, any for large ones)"),
    "kthvalue": (1, "torch.kthvalue's index among equal values is its quickselect's choice"),
}

# sorts whose order among equal values PyTorch leaves unspecified unless stable=True (its
# unstable sort permutes ties for large inputs): the indices are checked to sort the input,
# the values compared; name -> reason
SORT_INDICES: dict[str, str] = {
    "sort": "torch.sort(stable=False) orders equal values as its algorithm does; Ember's sort "
            "is always stable",
    "argsort": "torch.argsort(stable=False) orders equal values as its algorithm does; Ember's "
               "sort is always stable",
}

# outputs holding eigenvectors, each defined up to a phase (a sign for real ones): compared
# after scaling every vector so that its largest element is real and positive; name ->
# (output index, reason)
PHASE_FREE_OUTPUTS: dict[str, tuple[int, str]] = {
    "linalg.eigh": (1, "eigenvectors are unique up to sign/phase (LAPACK's choice differs "
                       "between OpenBLAS and MKL)"),
    "linalg.eig": (1, "eigenvectors are unique up to a complex phase (LAPACK's choice differs "
                      "between OpenBLAS and MKL)"),
}

# OpInfos whose PyTorch values are less accurate than Ember's (checked against SciPy and
# mpmath in the core's test_special_kernels.py): compared with wider tolerances for the
# dtypes named; (name prefix, {dtype: (rtol, atol)}, reason)
TOLERANCES: list[tuple[str, dict[str, tuple[float, float]], str]] = [
    ("special.bessel_", {"float64": (1e-5, 1e-6)},
     "PyTorch's Bessel functions of the first and second kind are off by up to ~3e-7 near "
     "x = 5.5 (mpmath agrees with Ember to 1e-16)"),
    ("polygamma", {"float32": (1e-4, 1e-5)},
     "PyTorch computes float32 polygamma in float32: near the poles its reflection loses "
     "~2e-5 (Ember computes in double)"),
    ("special.polygamma", {"float32": (1e-4, 1e-5)},
     "PyTorch computes float32 polygamma in float32: near the poles its reflection loses "
     "~2e-5 (Ember computes in double)"),
    ("special.airy_ai", {"float64": (1e-4, 1e-6), "float32": (1e-4, 1e-5)},
     "PyTorch's airy_ai is off by up to ~2e-5 for negative arguments (SciPy agrees with "
     "Ember)"),
]


def tolerances(name: str) -> dict[str, tuple[float, float]]:
    """The wider tolerances (by dtype name) the OpInfo ``name`` is compared with, if any."""
    for prefix, tols, _why in TOLERANCES:
        if name.startswith(prefix):
            return tols
    return {}


# OpInfos whose PyTorch gradient is wrong (finite differences agree with Ember's): their
# gradient is not scored; name -> reason
WRONG_TORCH_GRADIENTS: dict[str, str] = {
    "as_strided_scatter": "torch 2.13's backward gives self the gradient of the positions src "
                          "is written to, instead of the others",
}
