"""``grid_sample`` and ``affine_grid`` of ``ember.nn.functional``: sampling an image at
arbitrary normalized coordinates (the core's ``grid_sampler``, _composites/sampling.py), and
the coordinate grids of affine maps (spatial transformer networks), with PyTorch's modes,
padding modes, ``align_corners`` and formulas.
"""

from __future__ import annotations

import warnings

import ember_tensor as et

__all__ = ["affine_grid", "grid_sample"]

_ALIGN_WARNING = (
    "Default grid_sample and affine_grid behavior has changed to align_corners=False since "
    "1.3.0. Please specify align_corners=True if the old behavior is desired. See the "
    "documentation of grid_sample for details."
)


_MODES = {"bilinear": 0, "nearest": 1, "bicubic": 2}
_PADDINGS = {"zeros": 0, "border": 1, "reflection": 2}


def grid_sample(input, grid, mode: str = "bilinear", padding_mode: str = "zeros",
                align_corners=None):
    """Samples ``input`` ``(N, C, H, W)`` (or ``(N, C, D, H, W)``) at ``grid`` ``(N, H_out,
    W_out, 2)`` (or ``(N, D_out, H_out, W_out, 3)``), whose last dim holds (x, y[, z]) in
    [-1, 1]; ``mode`` 'bilinear', 'nearest' or 'bicubic' (4-D only); ``padding_mode``
    'zeros', 'border' or 'reflection' for coordinates outside. Result ``(N, C, *grid's
    spatial shape)``: the core's ``grid_sampler``."""
    if mode not in _MODES:
        raise ValueError("nn.functional.grid_sample(): expected mode to be 'bilinear', "
                         f"'nearest' or 'bicubic', but got: '{mode}'")
    if padding_mode not in _PADDINGS:
        raise ValueError("nn.functional.grid_sample(): expected padding_mode to be 'zeros', "
                         f"'border', or 'reflection', but got: '{padding_mode}'")
    if align_corners is None:
        warnings.warn(_ALIGN_WARNING, stacklevel=2)
        align_corners = False
    return et.grid_sampler(input, grid, _MODES[mode], _PADDINGS[padding_mode], align_corners)


def _base_axis(steps: int, align_corners: bool, like):
    """PyTorch's coordinates of ``steps`` pixel centres along one axis in [-1, 1]."""
    if steps <= 1:
        return et.zeros(1, dtype=like.dtype, device=like.device)
    axis = et.linspace(-1, 1, steps, dtype=like.dtype, device=like.device)
    return axis if align_corners else axis * ((steps - 1) / steps)


def affine_grid(theta, size, align_corners=None):
    """The sampling grid of a batch of affine maps: ``theta`` ``(N, 2, 3)`` for ``size`` ``(N,
    C, H, W)`` gives ``(N, H, W, 2)``; ``(N, 3, 4)`` for ``(N, C, D, H, W)`` gives ``(N, D, H,
    W, 3)``: each output pixel's normalized (x, y[, z]) mapped by theta."""
    if align_corners is None:
        warnings.warn(_ALIGN_WARNING, stacklevel=2)
        align_corners = False
    if not theta.is_floating_point():
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    given, size = size, [int(s) for s in size]
    if len(size) == 4:
        if theta.dim() != 3 or theta.shape[-2] != 2 or theta.shape[-1] != 3:
            raise ValueError(f"Expected a batch of 2D affine matrices of shape Nx2x3 for size "
                             f"{given}. Got {theta.shape}.")
        spatial = size[-2:]
    elif len(size) == 5:
        if theta.dim() != 3 or theta.shape[-2] != 3 or theta.shape[-1] != 4:
            raise ValueError(f"Expected a batch of 3D affine matrices of shape Nx3x4 for size "
                             f"{given}. Got {theta.shape}.")
        spatial = size[-3:]
    else:
        raise NotImplementedError(f"affine_grid only supports 4D and 5D sizes, for 2D and 3D "
                                  f"affine transforms, respectively. Got size {given}.")
    if align_corners and min(spatial) == 1:
        warnings.warn("Since version 1.3.0, affine_grid behavior has changed for unit-size "
                      "grids when align_corners=True. This is not an intended use case of "
                      "affine_grid. See the documentation of affine_grid for details.",
                      stacklevel=2)
    if min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {given}")
    n = size[0]
    axes = [_base_axis(s, align_corners, theta) for s in spatial[::-1]]  # x, y, (z)
    grids = et.meshgrid(*axes[::-1], indexing="ij")  # (z,) y, x varying last
    coords = [g.reshape(-1) for g in grids[::-1]]  # x, y, (z)
    base = et.stack(coords + [et.ones_like(coords[0])], 1)  # (points, nd + 1)
    out = et.matmul(base.unsqueeze(0), theta.transpose(1, 2))  # (N, points, nd)
    return out.reshape(n, *spatial, len(spatial))
