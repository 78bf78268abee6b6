"""Layout pictures and the bank-conflict analysis."""

from tma_unit.cli import main
from tma_unit.draw import cell_grid, swizzle_example
from tma_unit.model import Swizzle
from tma_unit.model.banks import conflicts, wavefronts

from swizzle_tables import TABLE_128B


def test_grid_follows_the_ptx_table():
    tm, req = swizzle_example(Swizzle.B128)
    grid = cell_grid(tm, req)
    for line in range(16):
        assert [cell[1] for cell in grid[line]] == TABLE_128B[line % 8]
        assert {cell[0] for cell in grid[line]} == {line}          # one box row per 128-byte line
    # the example's last chunk of each row is past the tensor's edge
    assert all(not cell[2] for line in grid for cell in line if cell[1] == 7)


def test_wavefronts():
    assert wavefronts(range(0, 128, 4)) == 1              # one word per bank
    assert wavefronts([0, 128, 256, 384]) == 4            # four words in bank 0
    assert wavefronts([0, 0, 1, 2]) == 1                  # the same word is one access


def test_128b_column_reads_conflict_free_unswizzled_eight_way():
    assert conflicts(*swizzle_example(Swizzle.B128)) == {"row": 1.0, "column": 1.0}
    assert conflicts(*swizzle_example(Swizzle.NONE)) == {"row": 1.0, "column": 8.0}


def test_draw_writes_pngs(tmp_path):
    assert main(["draw", "--example", "gemm-edge", "-o", str(tmp_path / "edge.png")]) == 0
    assert (tmp_path / "edge.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert main(["draw", "--swizzles", str(tmp_path / "all")]) == 0
    assert len(list((tmp_path / "all").glob("swizzle-*.png"))) == len(Swizzle)
