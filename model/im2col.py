"""The im2col walks: im2col (PTX 5.5.4), im2col::w and im2col::w::128 (5.5.5), read as
docs/spec.md, "The im2col walk", describes.

Tensor dimensions: 0 is C, then the spatial ones W, H, D (as many as the rank allows:
rank 3 NWC, 4 NHWC, 5 NDHWC), and the last is N.

im2col. In each spatial dimension the filter-base positions run over the half-open range
``[lower_corner, dim + upper_corner)`` stepped by that dimension's traversal stride. The
walk starts at the request's spatial coordinates and visits Pixels-per-Column positions
like an odometer, W fastest: after each pixel W steps by its stride; once it reaches the
end of its range it restarts at the lower corner and H steps, and so on; when the
outermost spatial dimension restarts, N steps by one. Each position reads the pixel at
position + im2col offset; N and C are plain starts.

im2col::w. Only W walks (H and D are the request's coordinates, the box is 1 high and
deep): its range is ``[lower_W, dim_W + upper_W)``, the walk starts at the request's W
(which may lie left of the range), and a restart of W steps N. ``wOffset`` is added to
lower W, upper W and W. After the Pixels-per-Column main pixels come ``wHalo`` halo
pixels: the positions that continue the last main pixel's W by the stride, in the same
image, without restarting (docs/decisions.md).

im2col::w::128. As im2col::w with 128 main pixels, in four groups of 32; each group is
followed by its own ``wHalo`` halo pixels, continuing that group's last W.
"""

from dataclasses import dataclass

import numpy as np

from .request import Request
from .tensormap import TensorMap
from .traversal import RowWalk, register_rows
from .types import AccessMode, Operation

__all__ = ["PixelWalk", "im2col_pixels", "W128_GROUP"]

U64 = np.uint64
W128_GROUP = 32


@dataclass(frozen=True)
class PixelWalk:
    """The pixels of one im2col request, in shared-memory row order.

    Attributes
    ----------
    access : ndarray of int64, shape (pixels, rank - 1)
        Tensor coordinates read for each pixel, dimensions 1..rank-1 (W, H, D, N).
    halo : ndarray of bool, shape (pixels,)
        The pixel is a halo pixel (im2col::w, ::w::128).
    """
    access: np.ndarray
    halo: np.ndarray


def _odometer_digit(t, start, lower, end, step):
    """Value and carry of one odometer digit after ``t`` increments.

    The digit starts at ``start`` and steps by ``step``; once it reaches ``end`` it
    restarts at ``lower`` and carries one into the next digit. Its first pass (from
    ``start``) has at least one position; every later pass has the full range.
    """
    first = max(1, -(-(end - start) // step))
    full = max(1, -(-(end - lower) // step))
    later = np.maximum(t - first, 0)
    in_first = t < first
    value = np.where(in_first, start + t * step, lower + (later % full) * step)
    carry = np.where(in_first, 0, 1 + later // full)
    return value, carry


def _im2col_main(tm, req, count):
    """Access coordinates (count, rank - 1) of an im2col walk of ``count`` pixels."""
    spatial = tm.rank - 2
    t = np.arange(count, dtype=np.int64)
    access = np.empty((count, tm.rank - 1), dtype=np.int64)
    offsets = req.im2col_offsets if req.operation in (Operation.LOAD, Operation.PREFETCH) else (0,) * spatial
    for i in range(spatial):
        dim = i + 1
        position, t = _odometer_digit(t, req.coordinates[dim], tm.lower_corner[i],
                                      tm.global_dims[dim] + tm.upper_corner[i], tm.element_strides[dim])
        access[:, i] = position + offsets[i]
    access[:, spatial] = req.coordinates[tm.rank - 1] + t
    return access


def _wide_walk(tm, req, count):
    """W and N of ``count`` pixels of an im2col::w walk."""
    w_step = tm.element_strides[1]
    lower = tm.lower_corner[0] + req.w_offset
    end = tm.global_dims[1] + tm.upper_corner[0] + req.w_offset
    w, carry = _odometer_digit(np.arange(count, dtype=np.int64),
                               req.coordinates[1] + req.w_offset, lower, end, w_step)
    return w, req.coordinates[tm.rank - 1] + carry


def _wide_access(tm, req, w, n):
    access = np.empty((len(w), tm.rank - 1), dtype=np.int64)
    access[:, 0] = w
    for dim in range(2, tm.rank - 1):           # H, D: the request's own coordinates
        access[:, dim - 1] = req.coordinates[dim]
    access[:, tm.rank - 2] = n
    return access


def _wide_groups(tm: TensorMap, req: Request) -> tuple[int, int]:
    """Groups of main pixels of an im2col::w or ::w::128 walk, and pixels per group; each
    group is followed by ``w_halo`` halo pixels."""
    if req.mode == AccessMode.IM2COL_W:
        return 1, tm.pixels_per_column
    return tm.pixels_per_column // W128_GROUP, W128_GROUP


def im2col_pixels(tm: TensorMap, req: Request) -> PixelWalk:
    """The pixels ``req`` reads (load, prefetch) or writes (im2col_no_offs store)."""
    if req.mode == AccessMode.IM2COL:
        access = _im2col_main(tm, req, tm.pixels_per_column)
        return PixelWalk(access, np.zeros(len(access), dtype=bool))
    halo_count = req.w_halo
    step = tm.element_strides[1]
    groups, group = _wide_groups(tm, req)
    w, n = _wide_walk(tm, req, groups * group)
    w = w.reshape(groups, group)
    n = n.reshape(groups, group)
    # each group's halo continues the group's last W by the stride, in the same image
    halo_w = w[:, -1:] + step * np.arange(1, halo_count + 1, dtype=np.int64)[None, :]
    halo_n = np.repeat(n[:, -1:], halo_count, axis=1)
    all_w = np.concatenate([w, halo_w], axis=1).reshape(-1)
    all_n = np.concatenate([n, halo_n], axis=1).reshape(-1)
    halo = np.concatenate([np.zeros((groups, group), bool), np.ones((groups, halo_count), bool)],
                          axis=1).reshape(-1)
    return PixelWalk(_wide_access(tm, req, all_w, all_n), halo)


def _im2col_rows(tm: TensorMap, req: Request) -> RowWalk:
    pixels = im2col_pixels(tm, req)
    access = pixels.access
    address = np.full(len(access), U64(tm.global_address), dtype=U64)
    inside = np.ones(len(access), dtype=bool)
    for dim in range(1, tm.rank):
        coord = access[:, dim - 1]
        address += coord.astype(U64) * U64(tm.global_strides[dim - 1])
        inside &= (coord >= 0) & (coord < tm.global_dims[dim])

    def coords():
        return np.concatenate([np.full((len(access), 1), req.coordinates[0], dtype=np.int64), access], axis=1)

    info = tm.info
    return RowWalk(address, inside, coords, req.coordinates[0], info.values_per_unit,
                   tm.channels_per_pixel // info.values_per_unit)


def _im2col_row_count(tm: TensorMap, req: Request) -> int:
    """Pixels of the walk, halo pixels included, without walking them."""
    if req.mode == AccessMode.IM2COL:
        return tm.pixels_per_column
    groups, group = _wide_groups(tm, req)
    return groups * (group + req.w_halo)


for _mode in (AccessMode.IM2COL, AccessMode.IM2COL_W, AccessMode.IM2COL_W_128):
    register_rows(_mode, _im2col_rows, _im2col_row_count)
