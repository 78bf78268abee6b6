"""Pictures of a copy's shared-memory image in the style of PTX section 5.5.7's figures:
16-byte cells in 128-byte rows, each cell coloured and labelled by the box row and chunk
it holds, out-of-bounds chunks hatched. ``tma-unit draw`` writes one; ``tma-unit draw
--swizzles FOLDER`` regenerates the per-swizzle images of docs/.
"""

from .model import (DataType, ErrorCode, MapKind, Operation, Request, Swizzle, TensorMap, TmaError, transactions,
                    smem_alignment)
from .model.traversal import row_walk

__all__ = ["cell_grid", "draw_layout", "swizzle_example", "draw_swizzles", "PICTURE_FORMATS"]

#: The picture formats ``draw_layout`` writes, by the file's extension.
PICTURE_FORMATS = ("png", "svg", "pdf")


def cell_grid(tm: TensorMap, req: Request, refused: bool = False):
    """The image as a grid of 16-byte cells: for each cell of each 128-byte line from the
    box's first line, (box row, chunk in row, all units in bounds) or None if the box puts
    nothing there. A copy the unit refuses raises its error, unless ``refused``
    (:func:`~tma_unit.model.transactions`); a prefetch, which writes no shared memory,
    breaks OPERATION_MODE."""
    if req.operation == Operation.PREFETCH:
        raise TmaError(ErrorCode.OPERATION_MODE, "operation", req.operation.name,
                       "writes no shared memory: there is no layout to draw")
    stream = transactions(tm, req, refused=refused)
    rows = row_walk(tm, req, validate=False).rows
    per_row = len(stream) // rows
    base = req.smem_address & ~127
    lines = (int(stream.smem_address.max()) - base) // 128 + 1
    grid = [[None] * 8 for _ in range(lines)]
    full = (1 << stream.chunk_units) - 1
    for i, t in enumerate(stream):
        offset = (t.smem_address & ~15) - base
        grid[offset // 128][(offset % 128) // 16] = (i // per_row, i % per_row, t.mask == (full >> (stream.chunk_units - t.units)))
    return grid


def draw_layout(tm: TensorMap, req: Request, path: str, title: str | None = None, max_lines: int = 16,
                refused: bool = False):
    """A picture of the copy's first ``max_lines`` shared-memory lines at ``path``, in the
    format its extension names (:data:`PICTURE_FORMATS`); ``refused`` as in
    :func:`cell_grid`."""
    from pathlib import Path
    if Path(path).suffix.lower().lstrip(".") not in PICTURE_FORMATS:
        raise ValueError(f"path = {str(path)!r} does not end in a picture format's extension "
                         f"({', '.join('.' + f for f in PICTURE_FORMATS)})")
    grid = cell_grid(tm, req, refused)[:max_lines]
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Rectangle
    figure, axes = plt.subplots(figsize=(8, 0.45 * len(grid) + 0.9))
    colours = plt.get_cmap("tab20")
    for line, cells in enumerate(grid):
        for position, cell in enumerate(cells):
            if cell is None:
                axes.add_patch(Rectangle((position, line), 1, 1, facecolor="white", edgecolor="0.7"))
                continue
            row, chunk, inside = cell
            axes.add_patch(Rectangle((position, line), 1, 1, facecolor=colours(row % 20), edgecolor="black",
                                     hatch=None if inside else "xx", alpha=1.0 if inside else 0.45))
            axes.text(position + 0.5, line + 0.5, f"{row},{chunk}", ha="center", va="center", fontsize=7)
    axes.set_xlim(0, 8)
    axes.set_ylim(len(grid), 0)
    axes.set_xticks([p + 0.5 for p in range(8)], [f"{16 * p}" for p in range(8)], fontsize=7)
    axes.set_yticks([r + 0.5 for r in range(len(grid))], [f"{(req.smem_address & ~127) + 128 * r:#x}" for r in range(len(grid))],
                    fontsize=7)
    axes.set_xlabel("byte in 128-byte shared-memory line (cell label: box row, 16-byte chunk; hatched: out of bounds)",
                    fontsize=7)
    axes.set_title(title or f"{tm.dtype.name} box {list(tm.box_dims)}, swizzle {tm.swizzle.name}", fontsize=9)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)


def swizzle_example(swizzle: Swizzle) -> tuple[TensorMap, Request]:
    """An fp16 tile as wide as the swizzle's span (128 bytes without one), 16 rows, the
    last columns past the tensor's edge, at a 1024-byte-aligned destination."""
    span = swizzle.span or 128
    width = span // 2
    tm = TensorMap(MapKind.TILED, DataType.FLOAT16, 0x10000, (width + width // 2 - 8, 64), (256,), (width, 16),
                   (1, 1), swizzle=swizzle)
    return tm, Request(Operation.LOAD, (width // 2, 0), smem_address=max(1024, smem_alignment(swizzle)))


def draw_swizzles(folder) -> list:
    from pathlib import Path
    written = []
    for swizzle in Swizzle:
        tm, req = swizzle_example(swizzle)
        path = Path(folder) / f"swizzle-{swizzle.name.lower()}.png"
        draw_layout(tm, req, str(path), f"fp16 {tm.box_dims[0]} x 16 tile, swizzle {swizzle.name}")
        written.append(path)
    return written
