"""Activity gating for the CXXRTL backend: the design cut into partitions, each compiled by
CXXRTL on its own, and a cycle evaluates only the partitions that have work in it.

CXXRTL evaluates the whole of a design on every pass. Most of the unit idles most of the
time: while a copy streams, the front end holds the next job and the descriptor file sees
no bus access, yet they are two thirds of the generated code. So the unit's front end and
descriptor file are partitions of their own (:data:`tma_unit.sim.cxxrtl.GATED`) and
everything else (walker, datapath, the top's own logic) is the core partition. The
partitions meet only through the top's nets, which :func:`glue_source` turns into C++
that copies each partition's inputs from the outputs that drive them.

The rule that makes skipping exact: a partition's evaluation is a function of its inputs
and its state. If the last clock edge changed none of its state (its ``commit()``
returned false) and its inputs are those of its last evaluation, evaluating it again
would compute the same outputs and the same next state, so it is skipped, and so is its
edge. Within a cycle the partitions are evaluated round robin until every one has seen
the latest outputs of the others (a partition whose inputs changed after it was evaluated
is evaluated again); memory writes queued by an evaluation that a later one replaces are
dropped first.
"""

from dataclasses import dataclass, field
import re

__all__ = ["Partition", "mangle", "partition_script", "glue_source", "CORE"]

#: The partition that holds whatever the gated submodules leave of the design.
CORE = "core"


def mangle(name: str) -> str:
    """CXXRTL's C++ member name for a port or wire ``name``."""
    text = "".join(ch if ch.isascii() and ch.isalnum() else "__" if ch == "_" else f"_{ord(ch):02x}_"
                   for ch in name)
    return f"p_{text}"


@dataclass
class Partition:
    """One separately compiled part of the design: ``name``, its instance in the top
    module, and ``source``, the CXXRTL C++ of its module (class ``p_<name>`` in namespace
    ``part_<name>``)."""
    name: str
    source: str
    #: memories the partition writes (their write queues are cleared before it is evaluated)
    memories: list = field(init=False)

    def __post_init__(self):
        self.memories = sorted(set(re.findall(r"\b(memory_\w+)\.update\(", self.source)))


def partition_script(gated, passes: str, top: str = "top") -> str:
    """The Yosys commands that cut the top module ``top`` into its submodules named in
    ``gated`` and a module :data:`CORE` of everything else, flatten each, run ``passes``
    (the optimisation of the one-partition flow), and write ``top.json`` (the top's nets)
    and each partition's CXXRTL: ``<name>.h`` (its class) and ``<name>.cc`` (its evaluation,
    a translation unit of its own)."""
    others = " ".join(f"{top}/c:{name} %d" for name in gated)
    keep = " ".join(f"{top}.{name}" for name in gated)
    # a partition's output port some of whose bits are constants and the rest a register's
    # or logic's (a job whose fields are constant in this unit) would be a wire CXXRTL
    # computes in a second pass: split by driver, the constant bits are a piece of their own
    commands = [f"hierarchy -top {top}", "proc", "memory_collect", f"submod -name {CORE} {top}/c:* {others}",
                f"setattr -mod -set keep_hierarchy 1 {keep} {CORE}", "flatten", passes,
                *([f"splitnets -ports -driver {keep}"] if gated else []),
                f"select {top}", "write_json -selected top.json", "select -clear", "design -save whole"]
    for name in (CORE, *gated):
        module = name if name == CORE else f"{top}.{name}"
        commands += ["design -load whole", f"hierarchy -top {module}", f"rename -top {name}",
                     f"write_cxxrtl -header -namespace part_{name} {name}.cc"]
    return "; ".join(commands)


def _chunks(bits: str) -> str:
    """A CXXRTL ``value`` literal of a constant, ``bits`` least significant first."""
    number = int(bits[::-1].replace("x", "0").replace("z", "0"), 2)
    words = [(number >> (32 * i)) & 0xFFFFFFFF for i in range((len(bits) + 31) // 32)]
    return f"value<{len(bits)}>{{{', '.join(f'{w:#x}u' for w in words)}}}"


class _Nets:
    """Where each net of the top module comes from: a top input or a partition's output."""

    def __init__(self, top: dict, partitions: list):
        self.driver = {}
        self.widths = {}
        for name, port in top["ports"].items():
            self.widths["top", name] = len(port["bits"])
            if port["direction"] == "input":
                for i, bit in enumerate(port["bits"]):
                    self.driver[bit] = ("top", name, i)
        for part in partitions:
            cell = top["cells"][part.name]
            for name, bits in cell["connections"].items():
                self.widths[part.name, name] = len(bits)
                if cell["port_directions"][name] == "output":
                    for i, bit in enumerate(bits):
                        self.driver[bit] = (part.name, name, i)

    def runs(self, bits: list):
        """The ``bits`` of a destination as runs: ``(low, width, (owner, port, source
        low))`` from one source, or ``(low, width, constant bits)``."""
        runs = []
        for i, bit in enumerate(bits):
            source = self.driver.get(bit) if isinstance(bit, int) else None
            constant = bit if isinstance(bit, str) else "0"
            if runs:
                low, width, last = runs[-1]
                if source is not None and isinstance(last, tuple) and last[:2] == source[:2] \
                        and last[2] + width == source[2]:
                    runs[-1] = (low, width + 1, last)
                    continue
                if source is None and isinstance(last, str):
                    runs[-1] = (low, width + 1, last + constant)
                    continue
            runs.append((i, 1, source if source is not None else constant))
        return runs

    def assign(self, target: str, bits: list) -> list:
        """C++ statements that set ``target`` (a value of ``len(bits)`` bits) from the nets."""
        statements = []
        for low, width, source in self.runs(bits):
            if isinstance(source, str):
                expression = _chunks(source)
            else:
                owner, port, source_low = source
                operand = f"cur(h->{owner}.{mangle(port)})"
                if source_low == 0 and width == self.widths[owner, port]:
                    expression = operand
                else:
                    expression = f"{operand}.slice<{source_low + width - 1},{source_low}>().val()"
            if width == len(bits):
                statements.append(f"{target} = {expression};")
            else:
                statements.append(f"{target}.slice<{low + width - 1},{low}>() = {expression};")
        return statements


def glue_source(top: dict, partitions: list, clock: str = "clk") -> str:
    """C++ after the partitions' CXXRTL: ``struct Harness`` (the top's ports as ``top.p_*``
    values, one object per partition) and the functions the run loop calls: ``step(h)``
    (what CXXRTL's ``step()`` does for one design: evaluate and commit until nothing
    changes, at the clock level set in ``h->top``), the two halves of a batched
    cycle, ``evaluate(h)`` (a rising edge's evaluation, gated) and ``edge(h)``, and
    ``debug_info(h, items)`` (every partition's wires for a waveform, under the names
    Amaranth's simulator gives them)."""
    nets = _Nets(top, partitions)
    inputs = {part.name: _inputs(top, part, clock) for part in partitions}
    clocked = [part for part in partitions if clock in top["cells"][part.name]["connections"]]
    lines = ["struct Wave;         // a waveform being recorded (the run loop's, sim/cxxrtl.py)",
             "namespace {"]
    lines += _harness_types(top, partitions, inputs)
    lines += _partition_functions(nets, partitions, inputs)
    lines += _settle_function(len(partitions))
    lines += _outputs_function(nets, top)
    lines += _clock_functions(partitions, clocked, mangle(clock))
    lines += _debug_info_function(top, partitions)
    lines += ["}"]
    lines += _activity_abi(partitions)
    return "\n".join(lines) + "\n"


def _inputs(top: dict, part: Partition, clock: str) -> list:
    """The ``(port, bits)`` of the inputs of ``part`` that the glue copies in: all but the clock."""
    cell = top["cells"][part.name]
    return [(name, bits) for name, bits in cell["connections"].items()
            if cell["port_directions"][name] == "input" and name != clock]


def _harness_types(top: dict, partitions: list, inputs: dict) -> list:
    """``struct Top`` (the top's ports), a ``struct Seen_<name>`` per partition (the inputs of
    its last evaluation) and ``struct Harness``, which holds them, the partitions and the
    gating's bookkeeping."""
    count = len(partitions)
    lines = ["template<size_t N> const value<N> &cur(const value<N> &v) { return v; }",
             "template<size_t N> const value<N> &cur(const wire<N> &w) { return w.curr; }",
             "struct Top {"]
    lines += [f"\tvalue<{len(port['bits'])}> {mangle(name)};" for name, port in top["ports"].items()]
    lines.append("};")
    for part in partitions:
        lines.append(f"struct Seen_{part.name} {{")
        lines += [f"\tvalue<{len(bits)}> {mangle(name)};" for name, bits in inputs[part.name]]
        lines.append("};")
    lines.append("struct Harness {")
    lines.append("\tTop top;")
    for part in partitions:
        lines += [f"\tpart_{part.name}::p_{part.name} {part.name};", f"\tSeen_{part.name} seen_{part.name};"]
    lines += [f"\tbool dirty[{count}] = {{{', '.join(['true'] * count)}}};     // state changed at the last edge",
              f"\tbool ran[{count}] = {{}};         // evaluated in this cycle",
              f"\tlong long active[{count}] = {{}};  // rising edges it was evaluated at, since reset",
              "\tlong long cycle = 0;",
              "\tWave *wave = nullptr;    // while a waveform is recorded (its opening and closing own it)", "};"]
    return lines


def _partition_functions(nets: _Nets, partitions: list, inputs: dict) -> list:
    """Per partition, ``gather_<name>`` (copy its inputs from the nets; whether they changed
    since its last evaluation), ``evaluate_<name>`` and ``commit_<name>``, and the tables
    ``GATHER``, ``EVALUATE`` and ``COMMIT`` of them, indexed by partition."""
    lines = []
    for part in partitions:
        own = f"h->{part.name}"
        lines.append(f"bool gather_{part.name}(Harness *h) {{")
        for name, bits in inputs[part.name]:
            lines += ["\t" + s for s in nets.assign(f"{own}.{mangle(name)}", bits)]
        same = " && ".join(f"{own}.{mangle(name)} == h->seen_{part.name}.{mangle(name)}"
                           for name, _ in inputs[part.name]) or "true"
        lines += [f"\treturn !({same});", "}"]
        lines.append(f"void evaluate_{part.name}(Harness *h) {{")
        lines += [f"\th->seen_{part.name}.{mangle(name)} = {own}.{mangle(name)};" for name, _ in inputs[part.name]]
        lines += [f"\t{own}.{memory}.write_queue.clear();" for memory in part.memories]
        lines += [f"\t{own}.eval(nullptr);", "}"]
        lines.append(f"bool commit_{part.name}(Harness *h) {{ return h->{part.name}.commit(); }}")
    names = [part.name for part in partitions]
    lines += [f"bool (*const GATHER[])(Harness *) = {{{', '.join(f'gather_{n}' for n in names)}}};",
              f"void (*const EVALUATE[])(Harness *) = {{{', '.join(f'evaluate_{n}' for n in names)}}};",
              f"bool (*const COMMIT[])(Harness *) = {{{', '.join(f'commit_{n}' for n in names)}}};"]
    return lines


def _settle_function(count: int) -> list:
    """``settle(h, must)``: the round robin over the ``count`` partitions."""
    return [
        "// Evaluates the partitions round robin until each has seen the latest outputs of all",
        "// the others: every partition in `must`, and every one whose inputs changed since its",
        "// last evaluation. A partition just evaluated is consistent, so after an evaluation the",
        "// others need one clean look each. Amaranth refuses a design with a combinational",
        "// cycle, so this settles; the bound on evaluations only keeps a broken glue from hanging.",
        "void settle(Harness *h, bool *must) {",
        f"\tint clean = 0, need = {count};",
        f"\tfor (int i = 0, evaluations = 0; clean < need && evaluations < {64 * count}; i = (i + 1) % {count}) {{",
        "\t\tif (GATHER[i](h) || must[i]) {",
        "\t\t\tEVALUATE[i](h);",
        "\t\t\tmust[i] = false;",
        "\t\t\th->ran[i] = true;",
        "\t\t\tevaluations++;",
        "\t\t\tclean = 0;",
        f"\t\t\tneed = {count - 1};",
        "\t\t} else {",
        "\t\t\tclean++;",
        "\t\t}",
        "\t}",
        "}"]


def _outputs_function(nets: _Nets, top: dict) -> list:
    """``outputs(h)``: the top's output ports copied from the partitions' outputs."""
    lines = ["void outputs(Harness *h) {"]
    for name, port in top["ports"].items():
        if port["direction"] == "output":
            lines += ["\t" + s for s in nets.assign(f"h->top.{mangle(name)}", port["bits"])]
    lines.append("}")
    return lines


def _clock_functions(partitions: list, clocked: list, clock_member: str) -> list:
    """``step(h)``, ``evaluate(h)`` and ``edge(h)``: the clock as the run loop drives it,
    ``clocked`` the partitions with the clock input ``clock_member``."""
    count = len(partitions)
    lines = ["// CXXRTL's step() over the partitions, every one evaluated: the bus accesses and reset.",
             "void step(Harness *h) {"]
    lines += [f"\th->{part.name}.{clock_member} = h->top.{clock_member};" for part in clocked]
    lines += ["\tbool changed = true;",
              "\twhile (changed) {",
              f"\t\tbool must[{count}] = {{{', '.join(['true'] * count)}}};",
              "\t\tsettle(h, must);",
              "\t\tchanged = false;",
              f"\t\tfor (int i = 0; i < {count}; i++) changed |= COMMIT[i](h);",
              "\t}",
              f"\tfor (int i = 0; i < {count}; i++) {{ h->dirty[i] = true; h->ran[i] = false; }}",
              "\toutputs(h);",
              "}"]
    lines += ["// A rising edge's evaluation: the partitions whose state or inputs changed.",
              "void evaluate(Harness *h) {"]
    lines += [f"\th->{part.name}.{clock_member} = value<1>{{1u}};" for part in clocked]
    lines += [f"\tbool must[{count}];",
              f"\tfor (int i = 0; i < {count}; i++) must[i] = h->dirty[i];",
              "\tsettle(h, must);",
              "\toutputs(h);",
              "}",
              "// The edge: the evaluated partitions commit, and see the clock low again (their",
              "// clock input stays high, so the next evaluation is an edge too).",
              "void edge(Harness *h) {"]
    for i, part in enumerate(partitions):
        lines.append(f"\tif (h->ran[{i}]) {{")
        lines.append(f"\t\th->dirty[{i}] = h->{part.name}.commit();")
        if part in clocked:
            lines.append(f"\t\th->{part.name}.prev_{clock_member} = value<1>{{0u}};")
        lines += [f"\t\th->ran[{i}] = false;", f"\t\th->active[{i}]++;", "\t}"]
    lines += ["}"]
    return lines


def _debug_info_function(top: dict, partitions: list) -> list:
    """``debug_info(h, items)``: the waveform's signals, named as Amaranth's simulator names them."""
    lines = ["// Every partition's debug items (its wires, ports and memories), each under the scope",
             "// of its place in the design as Amaranth's simulator names it (`bench top`, the core's;",
             "// `bench top <submodule>`), and the top's ports the core has not given already.",
             "void debug_info(Harness *h, debug_items &items) {"]
    lines += [f'\th->{part.name}.debug_info(&items, nullptr, "{scope}");'
              for part, scope in ((part, "bench top " if part.name == CORE else f"bench top {part.name} ")
                                  for part in partitions)]
    for name, port in top["ports"].items():
        flag = "INPUT" if port["direction"] == "input" else "OUTPUT"
        lines.append(f'\tif (!items.count("bench top {name}")) '
                     f'items.add("bench top {name}", debug_item(h->top.{mangle(name)}, 0, debug_item::{flag}));')
    lines.append("}")
    return lines


def _activity_abi(partitions: list) -> list:
    """``tma_partitions()`` and ``tma_active(p, i)``: the C ABI of :meth:`.cxxrtl.CxxrtlUnit.activity`."""
    names = ",".join(part.name for part in partitions)
    return ["// The partitions' names, comma-separated, and how many rising edges each was evaluated at.",
            f'extern "C" const char *tma_partitions() {{ return "{names}"; }}',
            'extern "C" long long tma_active(void *p, int i) { return static_cast<Harness *>(p)->active[i]; }']
