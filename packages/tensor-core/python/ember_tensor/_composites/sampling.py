"""Grid sampling (``grid_sampler``, ``grid_sampler_2d``, ``grid_sampler_3d``: PyTorch's ops
behind ``nn.functional.grid_sample``), composed of core ops so that it is differentiable and
runs on every device: the grid's coordinates are mapped to pixel space (then clipped or
reflected by the padding mode), each interpolation tap is a ``gather`` of the image
flattened per channel, and the taps are summed with their weights (bilinear: products of
``x1 - x`` / ``x - x0`` per axis, in PyTorch's order; bicubic: Keys' cubic convolution with
A = -0.75, each tap's coordinate padded on its own; nearest: coordinates rounded half to
even). So the gradient with respect to the image is a ``scatter_add`` and the one with
respect to the grid flows through the weights, as in PyTorch: the clip of ``'border'``
passes no gradient at or past the edges, the reflection flips its sign.
"""

from __future__ import annotations

import itertools

import ember_tensor as _et

__all__ = ["grid_sampler", "grid_sampler_2d", "grid_sampler_3d"]


def _unnormalize(coord, size: int, align_corners: bool):
    """[-1, 1] to pixel coordinates: the corner pixels' centres (align_corners) or their
    outer edges at -1 and 1."""
    if align_corners:
        return (coord + 1) / 2 * (size - 1)
    return ((coord + 1) * size - 1) / 2


def _clip(coord, size: int):
    """coord clipped to [0, size - 1], NaN to 0; no gradient at or past either end (both as
    PyTorch's vectorized CPU kernel)."""
    zero = _et.zeros_like(coord)
    top = _et.full_like(coord, size - 1)
    return _et.where(coord > 0, _et.where(coord < size - 1, coord, top), zero)


def _reflect(coord, twice_low: int, twice_high: int):
    """coord reflected into [twice_low / 2, twice_high / 2] (the gradient's sign flipping
    with each reflection)."""
    if twice_low == twice_high:
        return _et.zeros_like(coord)
    low = twice_low / 2
    span = (twice_high - twice_low) / 2
    shifted = coord - low
    flip = _et.where(shifted < 0, -_et.ones_like(shifted), _et.ones_like(shifted))
    shifted = shifted * flip
    extra = _et.fmod(shifted, span)
    even = _et.remainder(_et.floor(shifted / span), 2) == 0
    return _et.where(even, extra + low, span - extra + low)


def _pad_coordinates(coord, size: int, padding_mode: str, align_corners: bool):
    if padding_mode == "border":
        return _clip(coord, size)
    if padding_mode == "reflection":
        if align_corners:
            coord = _reflect(coord, 0, 2 * (size - 1))
        else:
            coord = _reflect(coord, -1, 2 * size - 1)
        return _clip(coord, size)
    return coord


def _index(coord):
    """Integer tap coordinates; NaN or out-of-range ones as -100 (outside every image), as
    PyTorch does before it converts them to integers. The weights keep the coordinates as
    they are (a NaN coordinate gives a NaN sample where PyTorch's does)."""
    ok = _et.isfinite(coord) & (_et.abs(coord) < 2.0 ** 31)
    return _et.where(ok, coord, _et.full_like(coord, -100.0)).to(_et.int64)


class _Image:
    """The input seen as (N, C, points) for tap gathers at integer coordinates."""

    def __init__(self, input):
        self.n, self.c = input.shape[:2]
        self.sizes = list(input.shape[2:])  # (D,) H, W
        self.flat = input.reshape(self.n, self.c, -1)

    def tap(self, coords):
        """The values at integer coordinates ``coords`` (x, y[, z]: tensors of the output's
        spatial shape (N, *out)), 0 outside the image: (N, C, *out)."""
        sizes = self.sizes[::-1]  # W, H, (D)
        inside = None
        index = None
        stride = 1
        for c, size in zip(coords, sizes):
            ok = (c >= 0) & (c < size)
            inside = ok if inside is None else inside & ok
            part = c.clamp(0, size - 1) * stride
            index = part if index is None else index + part
            stride *= size
        out_shape = tuple(index.shape[1:])
        index = index.reshape(self.n, 1, -1).expand(self.n, self.c, index[0].numel())
        values = _et.gather(self.flat, 2, index).reshape(self.n, self.c, *out_shape)
        return _et.where(inside.unsqueeze(1), values, _et.zeros_like(values))


def _cubic_weights(t):
    a = -0.75

    def near(x):  # |x| <= 1
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x):  # 1 < |x| < 2
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


_MODES = ("bilinear", "nearest", "bicubic")
_PADDINGS = ("zeros", "border", "reflection")


def grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners):
    """Samples input (N, C, H, W) (or (N, C, D, H, W)) at grid (N, H_out, W_out, 2) (or (N,
    D_out, H_out, W_out, 3)), whose last dim holds (x, y[, z]) in [-1, 1]:
    interpolation_mode 0 bilinear, 1 nearest, 2 bicubic (4-d only); padding_mode 0 zeros,
    1 border, 2 reflection. Result (N, C, *grid's spatial shape). PyTorch's
    torch.grid_sampler, behind nn.functional.grid_sample."""
    return _sample(input.dim() - 2, input, grid, interpolation_mode, padding_mode,
                   align_corners, (4, 5))


def grid_sampler_2d(input, grid, interpolation_mode, padding_mode, align_corners):
    """grid_sampler of a 4-d input (N, C, H, W) at a (N, H_out, W_out, 2) grid."""
    return _sample(2, input, grid, interpolation_mode, padding_mode, align_corners, (4,))


def grid_sampler_3d(input, grid, interpolation_mode, padding_mode, align_corners):
    """grid_sampler of a 5-d input (N, C, D, H, W) at a (N, D_out, H_out, W_out, 3) grid."""
    return _sample(3, input, grid, interpolation_mode, padding_mode, align_corners, (5,))


def _sample(nd: int, input, grid, interpolation_mode, padding_mode, align_corners, ranks):
    """The sampling of nd-d images; ranks: the input ranks the calling op takes."""
    if input.dim() not in ranks or grid.dim() != input.dim():
        expected = " or ".join(f"{r}D" for r in ranks)
        raise RuntimeError(f"grid_sampler(): expected {expected} input and grid with same number "
                           f"of dimensions, but got input with sizes {list(input.shape)} and "
                           f"grid with sizes {list(grid.shape)}")
    if interpolation_mode not in (0, 1, 2) or padding_mode not in (0, 1, 2):
        raise RuntimeError(f"grid_sampler(): interpolation_mode ({interpolation_mode}) must be "
                           f"0, 1 or 2 and padding_mode ({padding_mode}) 0, 1 or 2")
    mode, pad = _MODES[interpolation_mode], _PADDINGS[padding_mode]
    if grid.shape[0] != input.shape[0]:
        raise RuntimeError(f"grid_sampler(): expected grid and input to have same batch size, "
                           f"but got input with sizes {list(input.shape)} and grid with sizes "
                           f"{list(grid.shape)}")
    if grid.shape[-1] != nd:
        raise RuntimeError(f"grid_sampler(): expected grid to have size {nd} in last dimension, "
                           f"but got grid with sizes {list(grid.shape)}")
    if mode == "bicubic" and nd != 2:
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
    if not input.is_floating_point():
        kernel = "grid_sampler_2d_cpu_kernel_impl" if nd == 2 else "grid_sampler_3d_cpu"
        raise NotImplementedError(f'"{kernel}" not implemented for '
                                  f"'{input.dtype._scalar_type_name}'")
    if grid.dtype != input.dtype:
        raise RuntimeError(f"grid_sampler(): expected input and grid to have same dtype, but "
                           f"input has {input.dtype} and grid has {grid.dtype}")
    align_corners = bool(align_corners)
    image = _Image(input)
    sizes = image.sizes[::-1]  # W, H, (D): the order of the grid's coordinates
    pixel = [_unnormalize(grid[..., i], sizes[i], align_corners) for i in range(nd)]
    if mode == "bicubic":
        return _bicubic(image, pixel, sizes, pad, align_corners)
    pixel = [_pad_coordinates(p, s, pad, align_corners) for p, s in zip(pixel, sizes)]
    if mode == "nearest":
        out = image.tap([_index(_et.round(p)) for p in pixel])
        # PyTorch gives the grid a zero gradient here (not none): a link that selects nothing
        link = _et.where(_et.zeros_like(pixel[0], dtype=_et.bool), pixel[0],
                         _et.zeros_like(pixel[0]))
        return out + link.unsqueeze(1)
    low = [_et.floor(p) for p in pixel]
    out = None
    for bits in itertools.product((0, 1), repeat=nd):  # z outermost, x innermost
        bits = bits[::-1]  # (x bit, y bit, z bit)
        weight = None
        for b, p, lo in zip(bits, pixel, low):
            w = p - lo if b else (lo + 1) - p
            weight = w if weight is None else weight * w
        value = image.tap([_index(lo + b) for b, lo in zip(bits, low)])
        term = value * weight.unsqueeze(1)
        out = term if out is None else out + term
    return out


def _bicubic(image, pixel, sizes, padding_mode: str, align_corners: bool):
    x, y = pixel
    x0, y0 = _et.floor(x), _et.floor(y)
    wx, wy = _cubic_weights(x - x0), _cubic_weights(y - y0)
    out = None
    for j in range(4):
        ty = _index(_pad_coordinates(y0 - 1 + j, sizes[1], padding_mode, align_corners))
        row = None
        for i in range(4):
            tx = _index(_pad_coordinates(x0 - 1 + i, sizes[0], padding_mode, align_corners))
            value = image.tap([tx, ty])
            term = value * wx[i].unsqueeze(1)
            row = term if row is None else row + term
        term = row * wy[j].unsqueeze(1)
        out = term if out is None else out + term
    return out
