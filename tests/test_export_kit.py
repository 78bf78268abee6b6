"""What `tma-unit export` gives a flow outside Python: the SystemVerilog package and C
header beside the Verilog, the module prefix, the export without initial values, the
port table of docs/export.md, and the two example testbenches (examples/) run on fresh
exports, reading every offset from the package or the header alone."""

import json
import math
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from amaranth.hdl import Shape
from amaranth.lib import data, enum

from tma_unit.cli import main
from tma_unit.model import Request, TensorMap, encode_descriptor
from tma_unit.model.config import UnitConfig
from tma_unit.model.layout import REQUEST_FIELDS, pack_payload
from tma_unit.model.unit import fields_from_request
from tma_unit.rtl.layouts import CompletionLayout, RequestLayout, beat_layout
from tma_unit.rtl.regfile import REGISTERS
from tma_unit.sim.native import compiler
from tma_unit.sim.verilator import LINT_SUPPRESSED, knows_warning, verilator

#: One worker runs these tests, so each configuration is exported and its example built
#: once a run (the ``kit`` fixture).
pytestmark = pytest.mark.xdist_group("export kit")

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
CASE = EXAMPLES / "load-64x64.json"

#: The configurations the examples run on: the default unit, and lanes 4 with 48-bit
#: addresses, whose beat's fields all sit elsewhere.
KITS = {"lanes1": UnitConfig(), "lanes4-aw48": UnitConfig(lanes=4, address_width=48)}


def kit_params(slow=("lanes4-aw48",)):
    return [pytest.param(name, id=name, marks=[pytest.mark.slow] if name in slow else []) for name in KITS]


#: The tests that build a simulator of the export (Verilator, Icarus): the full suite's
#: (`pytest -m "not slow"` keeps the package's and header's own checks).
builds = pytest.mark.slow


@pytest.fixture(scope="session")
def kit(tmp_path_factory):
    """A fresh export of a configuration of :data:`KITS` (Verilog, package, header) and the
    example's vectors, made once a session: its folder."""
    made = {}

    def make(name: str) -> Path:
        if name not in made:
            folder = tmp_path_factory.mktemp(name)
            config = KITS[name]
            assert main(["export", "-o", str(folder / "tma_unit.v"), "--lanes", str(config.lanes),
                         "--address-width", str(config.address_width)]) == 0
            write_vectors(folder / "vectors.txt")
            made[name] = folder
        return made[name]
    return make


def write_vectors(path: Path, *more: str) -> None:
    done = subprocess.run([sys.executable, "-m", "tma_unit.cli", "layout", str(CASE), "--vectors", *more],
                          capture_output=True, text=True, check=True)
    path.write_text(done.stdout)


# -- the package and the header ------------------------------------------------------

def package_constants(text: str) -> dict:
    return {name: int(value) for name, value in re.findall(r"localparam int (\w+) = (\d+);", text)}


def header_constants(text: str, macro: str = "TMA_UNIT_") -> dict:
    return {name: int(value) for name, value in re.findall(rf"#define {macro}(\w+) (\d+)u", text)}


def header_tables(text: str) -> dict:
    """The header's field tables: payload -> {path: (lsb, width, count, stride, signed)}."""
    tables = {}
    for payload, body in re.findall(r"tma_unit_(\w+)_fields\[\d+\] = \{(.*?)\};", text, re.S):
        tables[payload] = {name: tuple(int(v) for v in values) for name, *values in
                           re.findall(r'\{"([\w.]+)", (\d+)u, (\d+)u, (\d+)u, (\d+)u, (\d)\}', body)}
    return tables


CONSTANT_CONFIGS = {**KITS, "slots16-former128-id8": UnitConfig(slots=16, request_former=128, beat_queue=16,
                                                                 id_width=8)}


def leaves(layout, path=""):
    """Every scalar of an Amaranth layout as (path, [index per array], shape)."""
    for name, field in layout:
        shape = field.shape
        if isinstance(shape, data.ArrayLayout):
            elem = shape.elem_shape
            for i in range(shape.length):
                if isinstance(elem, data.StructLayout):
                    for sub, indices, leaf in leaves(elem, f"{path}{name}."):
                        yield sub, [i, *indices], leaf
                else:
                    yield path + name, [i], elem
        else:
            yield path + name, [], shape


def nested(path, indices, value):
    """The ``layout.const`` initializer that sets one scalar."""
    head, *rest = path.split(".", 1)
    if indices:
        entry = nested(rest[0], indices[1:], value) if rest else value
        return {head: {indices[0]: entry}}
    return {head: nested(rest[0], [], value) if rest else value}


@pytest.mark.parametrize("name", CONSTANT_CONFIGS)
def test_package_and_header_give_every_field_where_the_rtl_packs_it(name):
    """Every scalar of every payload, set alone by Amaranth's own packing (``layout.const``),
    is found at the package's and the header's place, and nowhere else; both files agree;
    the register map is rtl/regfile.py's."""
    from tma_unit.kit import c_header, package
    config = CONSTANT_CONFIGS[name]
    constants = package_constants(package(config))
    header = c_header(config)
    tables = header_tables(header)
    in_header = header_constants(header)
    assert {payload: in_header.pop(f"{payload.upper()}_FIELDS") for payload in tables} == \
        {payload: len(table) for payload, table in tables.items()}
    assert in_header == constants
    for payload, layout in (("REQUEST", RequestLayout), ("BEAT", beat_layout(config)),
                            ("COMPLETION", CompletionLayout)):
        assert constants[f"{payload}_WIDTH"] == layout.size
        checked = 0
        for path, indices, shape in leaves(layout):
            stem = f"{payload}_{path.replace('.', '_').upper()}"
            lsb, width, stride = (constants[f"{stem}_{what}"] for what in ("LSB", "WIDTH", "STRIDE"))
            entry = indices[0] if indices else 0
            assert tables[payload.lower()][path][:4] == (lsb, width, constants[f"{stem}_COUNT"], stride)
            mask = (1 << width) - 1
            if isinstance(shape, type) and issubclass(shape, enum.Enum):
                value = max(shape, key=lambda member: member.value)
                expected = value.value
            else:
                value, expected = (-1 if Shape.cast(shape).signed else mask), mask
            bits = layout.const(nested(path, indices, value)).as_value().value
            at = lsb + entry * stride
            assert bits == expected << at, f"{path}{indices}: {bits:#x} is not {expected:#x} at bit {at}"
            checked += 1
        assert checked > 0
    for register in REGISTERS:
        assert constants[f"REG_{register.name}"] == register.offset
    assert constants["SLOT_BASE"] == 0x400 and constants["SLOT_STRIDE"] == 128    # docs/registers.md
    assert constants["CONFIG_LANES"] == config.lanes and constants["CONFIG_SLOTS"] == config.slots


def test_the_package_compiles_in_both_simulators_and_the_headers_of_two_prefixes_in_c_and_cpp(tmp_path):
    from tma_unit.kit import c_header, package
    config = KITS["lanes4-aw48"]
    (tmp_path / "tma_unit_pkg.sv").write_text(package(config))
    (tmp_path / "user.sv").write_text(
        "module user(output logic [31:0] lsb);\n  assign lsb = tma_unit_pkg::BEAT_LANES_SMEM_ADDRESS_LSB;\nendmodule\n")
    sources = [str(tmp_path / "tma_unit_pkg.sv"), str(tmp_path / "user.sv")]
    done = subprocess.run(["iverilog", "-g2012", "-o", str(tmp_path / "user.vvp"), *sources],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    tool = verilator()
    off = [f"-Wno-{w}" for w in LINT_SUPPRESSED if knows_warning(tool, w)]
    # a package is there to be picked from: most of its constants go unused in any one design
    done = subprocess.run([tool, "--lint-only", "-Wall", *off, "-Wno-UNUSEDPARAM", "--top-module", "user", *sources],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    (tmp_path / "a.h").write_text(c_header(config, "cfgA_"))
    (tmp_path / "b.h").write_text(c_header(UnitConfig(), "cfgB_"))
    (tmp_path / "both.c").write_text('#include "a.h"\n#include "b.h"\nint main(void) {\n'
                                     "    return (int)(CFGA_TMA_UNIT_BEAT_LANES_SMEM_ADDRESS_LSB\n"
                                     "                 + cfgB_tma_unit_beat_fields[0].lsb);\n}\n")
    cxx = compiler()
    for language in ("c", "c++"):
        done = subprocess.run([cxx, "-x", language, "-Wall", "-Wextra", "-Werror", "-pedantic", "-c",
                               str(tmp_path / "both.c"), "-o", str(tmp_path / "both.o")],
                              capture_output=True, text=True)
        assert done.returncode == 0, (language, done.stderr)


# -- the command ---------------------------------------------------------------------

def test_export_writes_the_package_and_header_beside_the_unit(tmp_path, capsys):
    target = tmp_path / "cfgA.v"
    assert main(["export", "-o", str(target), "--prefix", "cfgA_"]) == 0
    assert capsys.readouterr().out == (f"wrote {target} ({len(target.read_text().splitlines())} lines, lanes 1, "
                                       f"slots 8), {tmp_path / 'cfgA_pkg.sv'}, {tmp_path / 'cfgA.h'}\n")
    assert "package cfgA_tma_unit_pkg;" in (tmp_path / "cfgA_pkg.sv").read_text()
    assert "#define CFGA_TMA_UNIT_CONFIG_LANES 1u" in (tmp_path / "cfgA.h").read_text()
    modules = re.findall(r"^module (\S+?)\(", target.read_text(), re.M)
    assert "cfgA_tma_unit" in modules and "cfgA_tma_unit_datapath" in modules
    assert all(re.fullmatch(r"cfgA_tma_unit\w*", module) for module in modules), modules
    assert main(["export", "-o", "-"]) == 0
    assert capsys.readouterr().out.startswith("// tma-unit ")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cfgA.h", "cfgA.v", "cfgA_pkg.sv"]


@builds
def test_two_prefixed_exports_live_in_one_verilator_design(tmp_path):
    """Two configurations, each with its prefix, elaborate in one Verilator run, beside a top
    that instantiates both and reads both packages; without prefixes the same run fails
    (every module is defined twice)."""
    configs = {"cfgA_": [], "cfgB_": ["--slots", "16"]}
    for prefix, more in configs.items():
        assert main(["export", "-o", str(tmp_path / f"{prefix}tma_unit.v"), "--prefix", prefix, *more]) == 0
        assert main(["export", "-o", str(tmp_path / f"plain_{prefix}.v"), *more]) == 0

    def top(names):
        instances = "".join(f"  {name} u{i}(.clk(clk), .rst(rst), .bus__cyc(1'b0), .bus__stb(1'b0), .bus__we(1'b0), "
                            f".bus__adr('0), .bus__dat_w('0), .bus__sel('0), .requests__valid(1'b0), "
                            f".requests__payload('0), .beats__ready(1'b1), .completions__ready(1'b1));\n"
                            for i, name in enumerate(names))
        return f"module both(input clk, input rst);\n{instances}endmodule\n"
    (tmp_path / "both.sv").write_text(top(["cfgA_tma_unit", "cfgB_tma_unit"]) .replace(
        "endmodule", "  localparam int A = cfgA_tma_unit_pkg::BUS_ADR_WIDTH + cfgB_tma_unit_pkg::BUS_ADR_WIDTH;\n"
                     "endmodule"))
    tool = verilator()
    common = [tool, "--lint-only", "-Wno-fatal", "-Wno-lint", "-Wno-style", "--top-module", "both"]
    prefixed = [str(tmp_path / name) for name in ("cfgA_tma_unit_pkg.sv", "cfgB_tma_unit_pkg.sv",
                                                 "cfgA_tma_unit.v", "cfgB_tma_unit.v", "both.sv")]
    done = subprocess.run(common + prefixed, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    (tmp_path / "plain.sv").write_text(top(["tma_unit", "tma_unit"]))
    done = subprocess.run(common[:-1] + ["plain", str(tmp_path / "plain_cfgA_.v"), str(tmp_path / "plain_cfgB_.v"),
                                         str(tmp_path / "plain.sv")], capture_output=True, text=True)
    assert done.returncode != 0 and "tma_unit" in done.stderr


def test_no_init_export_has_no_initial_value(tmp_path):
    assert main(["export", "-o", str(tmp_path / "with.v")]) == 0
    assert main(["export", "-o", str(tmp_path / "without.v"), "--no-init"]) == 0
    initial = re.compile(r"^\s*initial\b|^\s*(reg|logic)\b[^;]*=", re.M)
    assert initial.search((tmp_path / "with.v").read_text())          # the check sees them where they are
    text = (tmp_path / "without.v").read_text()
    assert not initial.search(text), initial.search(text).group(0)
    assert "no initial values: reset (rst high for a cycle or more) is the only start" in text


# -- the examples ----------------------------------------------------------------------

def build_verilator_example(folder: Path, obj: str = "obj", x_initial: str = "0") -> Path:
    """examples/verilator's testbench built on the export in ``folder``: its executable."""
    done = subprocess.run(["make", "-s", "-C", str(EXAMPLES / "verilator"), f"EXPORT={folder / 'tma_unit.v'}",
                           f"OBJ={folder / obj}", f"VERILATOR={verilator()}", f"X_INITIAL={x_initial}"],
                          capture_output=True, text=True)
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    return folder / obj / "Vtma_unit"


def run_tb(executable: Path, vectors: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(executable), str(vectors), *args], capture_output=True, text=True, timeout=300)


@builds
@pytest.mark.parametrize("name", kit_params())
def test_verilator_example_matches_the_model(kit, name):
    folder = kit(name)
    tb = build_verilator_example(folder)
    done = run_tb(tb, folder / "vectors.txt")
    chunks = (folder / "vectors.txt").read_text().count("\nchunk ")
    beats = -(-chunks // KITS[name].lanes)
    assert done.returncode == 0 and f"tb: PASS: {chunks} chunks in {beats} beats" in done.stdout, done.stdout
    # the testbench can fail: one chunk's address changed in the vectors
    wrong = folder / "wrong.txt"
    wrong.write_text((folder / "vectors.txt").read_text().replace("smem_address 0x430 ", "smem_address 0x438 ", 1))
    done = run_tb(tb, wrong)
    assert done.returncode == 1 and "tb: FAIL chunk smem_address at 0x3: expected 0x438, got 0x430" in done.stdout


@builds
@pytest.mark.parametrize("name", kit_params())
def test_cocotb_example_matches_the_model(kit, name):
    folder = kit(name)
    done = subprocess.run([sys.executable, str(EXAMPLES / "cocotb" / "run.py"), str(folder / "tma_unit.v"),
                           str(folder / "vectors.txt"), "--build", str(folder / "sim_build")],
                          capture_output=True, text=True, timeout=600, cwd=folder)
    chunks = (folder / "vectors.txt").read_text().count("\nchunk ")
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    assert f"{chunks} chunks in {-(-chunks // KITS[name].lanes)} beats and the completion (request 42, 8192 bytes) " \
           "match the model" in done.stdout + done.stderr
    wrong = folder / "wrong.txt"
    wrong.write_text((folder / "vectors.txt").read_text().replace("beat fill 2", "beat fill 1"))
    done = subprocess.run([sys.executable, str(EXAMPLES / "cocotb" / "run.py"), str(folder / "tma_unit.v"),
                           str(wrong), "--build", str(folder / "sim_build")],
                          capture_output=True, text=True, timeout=600, cwd=folder)
    assert done.returncode == 1 and "beat 0 fill" in done.stdout + done.stderr


@builds
def test_no_init_unit_starts_from_random_state_by_reset_alone(tmp_path):
    """The unit exported without initial values, every register and memory bit started at
    a random value (Verilator's --x-initial unique, +verilator+rand+reset+2), makes the
    model's copy after reset, for three seeds; without the reset the same run fails, so
    the state really starts random."""
    assert main(["export", "-o", str(tmp_path / "tma_unit.v"), "--no-init"]) == 0
    write_vectors(tmp_path / "vectors.txt")
    tb = build_verilator_example(tmp_path, x_initial="unique")
    for seed in (1, 2, 3):
        done = run_tb(tb, tmp_path / "vectors.txt", "+verilator+rand+reset+2", f"+verilator+seed+{seed}")
        assert done.returncode == 0 and "tb: PASS" in done.stdout, (seed, done.stdout)
    done = run_tb(tb, tmp_path / "vectors.txt", "+verilator+rand+reset+2", "+verilator+seed+1", "+skip_reset")
    assert done.returncode == 1 and "tb: FAIL" in done.stdout


# -- docs/export.md's port table ---------------------------------------------------------

def port_table() -> tuple[dict, str]:
    """docs/export.md's ports: name -> (direction, width formula), and ``former_bits``'s."""
    text = (ROOT / "docs" / "export.md").read_text()
    rows = re.findall(r"^\| `(\w+)` \| (in|out) \| `([^`]+)` \|", text, re.M)
    former = re.search(r"`former_bits = ([^`]+)`", text).group(1)
    return {name: (direction, formula) for name, direction, formula in rows}, former


def evaluate(formula: str, config: UnitConfig, former_bits: int = 0) -> int:
    names = {**config.to_dict(), "smem_address_width": config.smem_address_width, "former_bits": former_bits,
             "ceil": math.ceil, "log2": math.log2}
    return eval(formula.replace("×", "*").replace("/", "//").replace("ceil(log2(", "ceil(log2(1.0*"),
                {"__builtins__": {}}, names)


def verilog_ports(text: str, top: str = "tma_unit") -> dict:
    """The top module's ports: name -> (direction, width)."""
    body = text[text.index(f"module {top}("):]
    body = body[:body.index("endmodule")]
    return {name: (direction[:-3] if direction == "output" else "in", int(high) + 1 if high else 1)
            for direction, high, name in re.findall(r"^\s*(input|output)\s+(?:wire\s+|reg\s+)?(?:\[(\d+):0\]\s+)?(\w+);",
                                                    body, re.M)}


@pytest.mark.parametrize("name", kit_params())
def test_port_table_gives_every_port_of_the_export(kit, name):
    config = KITS[name]
    table, former = port_table()
    ports = verilog_ports((kit(name) / "tma_unit.v").read_text())
    assert set(table) == set(ports)
    for port, (direction, formula) in table.items():
        assert (direction, evaluate(formula, config)) == ports[port], port


@pytest.mark.parametrize("config", [UnitConfig(slots=16), UnitConfig(slots=1, id_width=4, smem_bytes=64 * 1024),
                                    UnitConfig(lanes=2, request_former=256, beat_queue=16, address_width=40)],
                         ids=["slots16", "slots1-id4-smem64k", "lanes2-former256-aw40"])
def test_port_table_widths_follow_the_configuration(config):
    """The formulas against the unit's own signature, on configurations no example exports."""
    from tma_unit.rtl.unit import TmaUnit
    table, former = port_table()
    former_bits = evaluate(former, config) if config.request_former else 0
    unit = TmaUnit(config)
    unit._MustUse__silence = True           # made for its signature alone, never elaborated
    members = dict(_members(unit.signature))
    assert set(table) == set(members) | {"clk", "rst"}
    for port, width in members.items():
        assert evaluate(table[port][1], config, former_bits) == width, port


def _members(signature, path=()):
    """A signature's ports as the export names them (``bus__adr``) and their widths."""
    for name, member in signature.members.items():
        if member.is_signature:
            yield from _members(member.signature, path + (name,))
        else:
            yield "__".join(path + (name,)), Shape.cast(member.shape).width


# -- layout --words and --vectors ----------------------------------------------------------

def test_layout_words_are_the_descriptor_at_the_slots_bus_addresses(capsys):
    """Word w of slot s at byte address 0x400 + 0x80 s + 4 w (docs/registers.md), the
    Wishbone adr a quarter of it, and the 32 words the model's 128-byte image."""
    assert main(["layout", str(CASE), "--words", "--slot", "3"]) == 0
    lines = [line.split() for line in capsys.readouterr().out.splitlines() if not line.startswith("#")]
    assert len(lines) == 32
    for w, (adr, address, _) in enumerate(lines):
        assert int(address, 16) == 0x400 + 0x80 * 3 + 4 * w and int(adr, 16) == int(address, 16) // 4
    case = json.loads(CASE.read_text())
    image = encode_descriptor(TensorMap.from_dict(case["tensor_map"]))
    assert b"".join(int(word, 16).to_bytes(4, "little") for *_, word in lines) == image


def test_layout_vectors_hold_the_words_and_the_request_payload(capsys):
    assert main(["layout", str(CASE), "--vectors", "--slot", "2"]) == 0
    text = capsys.readouterr().out
    assert main(["layout", str(CASE), "--words", "--slot", "2"]) == 0
    words = [line for line in capsys.readouterr().out.splitlines() if not line.startswith("#")]
    assert [line[len("word "):] for line in text.splitlines() if line.startswith("word ")] == words
    values = {}
    for name, value in re.findall(r"^request (\S+) (-?\d+)$", text, re.M):
        field, _, entry = name.partition("[")
        if entry:
            values.setdefault(field, []).append(int(value))
        else:
            values[field] = int(value)
    case = json.loads(CASE.read_text())
    request = Request.from_dict(case["request"])
    assert pack_payload(REQUEST_FIELDS, values) == pack_payload(REQUEST_FIELDS, fields_from_request(request, 2))
    assert values["slot"] == 2 and values["request_id"] == 42
    assert shutil.which("iverilog")             # the examples' simulator is installed (.ci/run)
