"""Builds the exported unit with Icarus Verilog and runs test_tma_unit.py on it under
cocotb (docs/export.md, "Examples"):

    tma-unit export -o build/tma_unit.v
    tma-unit layout ../load-64x64.json --vectors > build/vectors.txt
    python run.py build/tma_unit.v build/vectors.txt

Exit status 0 when the copy matches the model, 1 otherwise.
"""

import argparse
import os
import sys
from pathlib import Path
from xml.etree import ElementTree

from cocotb_tools.runner import get_runner

HERE = Path(__file__).resolve().parent


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("verilog", help="the exported Verilog; its NAME_pkg.sv beside it")
    parser.add_argument("vectors", help="the copy's vectors (tma-unit layout --vectors)")
    parser.add_argument("--top", default="tma_unit", help="the top module (default tma_unit)")
    parser.add_argument("--build", default="sim_build", help="the simulator's build folder (default sim_build)")
    args = parser.parse_args(argv)
    verilog = Path(args.verilog).resolve()
    package = verilog.with_name(verilog.stem + "_pkg.sv")
    runner = get_runner("icarus")
    runner.build(sources=[package, verilog], hdl_toplevel=args.top, build_dir=args.build, timescale=("1ns", "1ps"),
                 always=True)
    build = Path(args.build).resolve()
    # the simulation runs in the build folder and writes its results there; the test module
    # is found on PYTHONPATH
    python_path = os.pathsep.join(filter(None, [str(HERE), os.environ.get("PYTHONPATH")]))
    results = runner.test(hdl_toplevel=args.top, test_module="test_tma_unit", test_dir=build, build_dir=build,
                          results_xml=str(build / "results.xml"),
                          extra_env={"TMA_UNIT_PKG": str(package), "TMA_UNIT_VECTORS": str(Path(args.vectors).resolve()),
                                     "PYTHONPATH": python_path, "PYTHONDONTWRITEBYTECODE": "1"})
    cases = ElementTree.parse(results).getroot().iter("testcase")
    failed = [case.get("name") for case in cases if case.find("failure") is not None or case.find("error") is not None]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
