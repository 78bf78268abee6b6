"""The front of the unit: accept a request, snapshot its descriptor, check every rule,
and set up the job the walker runs.

Ten stages, the last the job register, and a job every other cycle at the most
(``UnitConfig.request_interval``; at 1, eleven stages and a job every cycle), cut so
that no stage holds more than about one
carry chain, one small shifter or one multiplier behind a few levels of logic
(docs/fpga.md, "Clock speed"):

1. accept: the request is registered and its slot is read from the descriptor file
   (the snapshot: later bus writes to the slot cannot reach this request);
2. the snapshot copied into registers near the decode: the descriptor file's block RAM
   sits in the chip's rows of them, and the route from it is a stage of its own; beside
   it a few bits of the decode (:func:`.decode.decode_early`), from the descriptor file's
   copy of the bytes they read, in LUT RAM, so that no logic follows the block RAM;
3. to 6. the descriptor decoded in four layers (:mod:`.decode`): fields and sizes; the
   elements traversed per dimension; the shared-memory row; its bytes and the box's
   rows. Beside them: the partial products of the strides and dimensions the rules need
   (:func:`.validate.product_terms`) in stage 4, then one level of their adder trees a
   stage;
7. the box's rows; the stride extents; the odometer radices, saturated; the two kinds of
   chunk (a row's full chunks and its last: units, mask, bytes);
8. every rule but the last two checked (:mod:`.validate`), one bit each; the box's
   byte count in pieces; the mixed radix's place values; the beat constants, written
   into the beat table (below) as the request enters the stage;
9. the job set-up: the walk's step, the pixel walk; the first broken rule of
   each group of :data:`RULE_GROUP`; the box's byte count; the tensor's last byte;
10. SMEM_BOUNDS, a compare of the box's bytes with the room left; ADDRESS_WRAP, a test
   of the last byte's high bits; the beat count; the first broken group; the pixel
   walk's read-ahead fields (:func:`.pixelwalk.pixel_walk_ahead`). At a request interval
   of 2 this is the job register: the job's code (the first broken group's first rule,
   else SMEM_BOUNDS, else ADDRESS_WRAP) is logic behind it;
11. at a request interval of 1, the code into the job register, with a skid register
   behind it.

Every 18x18 product is a DSP block with its own registers (:meth:`.pipeline.Stage.product`,
:mod:`.dsp`): the operands registered as one stage and the product as the next (the
stride products and the element counts as stages 3 and 4), or the product alone, from
operands in registers (the row counts in stages 5 and 6, fed by the count blocks; the
box's bytes for both row counts in stage 7, chosen between in stage 8, so that a
fabric register sits between those blocks and the sum behind them). On the ECP5 those
are the block's own registers, so no path carries a block's routing both in and out
(docs/fpga.md, "Clock speed").

What a stage only passes on (the request, the decoded fields a later stage reads) rides
in the stages' :class:`.pipeline.Line`, in LUT RAM, not in a register a stage
(docs/architecture.md, "Where values are kept").

The stages move together while stage 10, the job register, is empty
(``UnitConfig.request_interval`` 2, the default): a job there stops them until the
walker takes it, which it can in the cycle the job arrives. So the stages' enable is a
register (``advance``, equal to stage 10's valid bit inverted, and the values' enable
``load`` another, both set a cycle ahead): no path runs from the walker or the datapath
through logic to the enables of the front end's flip-flops (docs/fpga.md, "Clock
speed"), and jobs leave at most every other cycle, which keeps a walker busy on any job
of two beats or more. The job's code, count, beats and one-beat bit, which the walker
loads and reads to know when it is free, come through the code's multiplexers (a LUT
level or two beside the route); the rest of the job is stage 10's registers.

At a request interval of 1 the stages move together while a skid register is empty. A
job the walker does not take yet stays in the job register (stage 11), and the job
behind it moves into the skid, which stops the stages until the walker takes the first;
the skid's job moves up in that cycle. The enable is the skid's valid bit inverted, and
a request is accepted every cycle while jobs are taken every cycle, at the cost of two
job-wide registers (the job register and the skid) and the job register's choice
between the skid and stage 10.

The valid bits move with every advance; the stages' values and their line load only
while some stage holds a request (``load``, :func:`.pipeline.occupied` set a cycle
ahead with ``advance``), and stage 1's in the cycles a request is accepted. What an
empty stage holds is never read, and an idle front end changes no state, so a gated
simulation skips it (sim/gating.py).

The beat constants (the coordinates, dimensions, strides and the rest every beat reads)
are the request's and the descriptor's fields, which stage 7 holds for its rules (at
commit, for the write alone), and the kinds of chunk, which stage 7 makes; the
datapath's stages read them with every record of the job. In between, the request waits
in stages 8 to 10 and, at a request interval of 1, the skid and the job register, and
then in the walker. Rather than ride in those registers and in every record, they are
written into the datapath's beat table (``table``,
:class:`.datapath.BeatTableSignature`) from stage 7's registers as the request enters
stage 8, one entry per request in turn from 0, and stage 8 and then the job carry the
entry's number (``tag``), which every record of the job carries on; each datapath stage
that reads a constant reads the table by the record's tag. Only the few that the
datapath's first stage reads ride in the job (``carried``). The requests from stage 8 on
are few and a job takes a cycle at least, so an entry is written again only well after
its last record has read it (:func:`~.layouts.beat_table_depth`; docs/architecture.md,
"Where values are kept").

A rejected request becomes a job with its error code: it emits no beats and completes
in order with the others.

A unit that checks at commit (``UnitConfig.checks``, docs/commit.md) keeps the stages
but not the rules that read the descriptor alone nor their products (stages 3 to 9): the
snapshot brings what the slot's check found (:mod:`.commit`), a code that stands in
their place and the ADDRESS_WRAP bit.
"""

from functools import reduce
from itertools import zip_longest
from operator import or_

from amaranth.hdl import Assert, Module, Signal, Const, Mux, Cat, Value, Array
from amaranth.lib import wiring, stream
from amaranth.lib.wiring import In, Out

from ..model.config import UnitConfig
from ..model.errors import ErrorCode
from ..model.gather import GATHER_ROWS
from ..model.im2col import W128_GROUP
from ..model.tensormap import MAX_RANK
from ..model.timing import FRONT_END_STAGES
from ..model.types import AccessMode, Operation
from ..model.unit import COUNT_LIMIT
from .arith import add_pairs, partial_products, small_divmod, small_product, sum_terms
from .decode import (PITCH_ZERO_BITS, EarlyBits, DecodedFields, decode_early, decode_fields, decode_counts, decode_rows,
                     decode_row_bytes, rank_is, rank_above)
from .layouts import (RequestLayout, Fill, job_layout, beat_entry_layout, beat_tag_width, row_pad, WAITING_JOBS,
                      DIGITS, RADIX_WIDTH, SPATIAL, PIXEL_DIMENSIONS, BOX_BYTES_WIDTH, COUNT_WIDTH)
from .pipeline import Line, Proving, Stage, bundle, occupied
from .pixelwalk import pixel_walk_ahead
from .datapath import BeatTableSignature
from . import stepping
from .regfile import SnapshotSignature
from .validate import (SmemRoom, product_terms, SPAN_WIDTH, rule_list, smem_room, smem_overflows, address_wraps,
                       first_broken)

__all__ = ["FrontEnd", "STAGES", "saturate", "place_values", "mixed_radix", "ModeKinds"]

#: Registers from a request to its job by request interval, the job register the last:
#: the timing model's FRONT_END_STAGES, which the stages below are numbered by.
STAGES = FRONT_END_STAGES
assert STAGES == {1: 11, 2: 10}, "the front end's stages are written out below: 1, 2 to 10, at 1 the job register"
#: Rules whose first broken one stage 9 finds; stage 10 picks among the groups.
RULE_GROUP = 8


def saturate(value, limit: int):
    """``min(value, limit + 1)``, in the bits that holds."""
    value = Value.cast(value)
    return Mux(value > limit, limit + 1, value[:(limit + 1).bit_length()])


def place_values(m, saturated, limit: int):
    """``min(radices[0] * ... * radices[i-1], limit + 1)`` for i = 0..len(radices), from
    the radices already saturated (:func:`saturate`): the place values of the mixed radix
    as far as a number up to ``limit`` can tell them apart. Each is a signal of its own:
    every step reads the previous one several times, and as one expression the chain
    would grow with the product of those reads."""
    top = limit + 1
    width = top.bit_length()
    # the saturated product of two such numbers as a table: a few LUT levels, no adder
    product = Array(Const(min(x * y, top), width) for x in range(1 << width) for y in range(1 << width))
    prefixes = [Const(1, width), saturated[0]]
    for i, radix in enumerate(saturated[1:], 2):
        prefix = Signal(width, name=f"place{i}")
        m.d.comb += prefix.eq(product[Cat(radix, prefixes[-1])])
        prefixes.append(prefix)
    return prefixes


def mixed_radix(m, value: int, radices, prefixes, name: str):
    """Digits of the constant ``value`` (at most the ``limit`` of ``prefixes``) in the
    mixed radix ``radices`` (least significant first) and whether it overflows them:
    digit i is ``(value // place_i) % radix_i``, with compares only (:func:`small_divmod`,
    its quotients signals of ``m``: ``<name>_place<i>``, ``value // place_i``, and
    ``<name>_above<i>``, what digit i leaves to the digits above it)."""
    if value == 0:
        return [Const(0, 1) for _ in radices], Const(0, 1)
    digits = []
    for i, (radix, place) in enumerate(zip(radices, prefixes)):
        quotient, _ = small_divmod(m, value, place, value, f"{name}_place{i}")
        digits.append(small_divmod(m, quotient, radix, value, f"{name}_above{i}")[1])
    return digits, prefixes[len(radices)] <= value


@bundle
class ModeKinds:
    """A request's access mode as bits (:func:`mode_kinds`)."""
    gather: Value       # gather4 or scatter4
    im2col: Value
    wide: Value         # im2col::w
    wide128: Value      # im2col::w::128
    pixel_mode: Value   # any of the last three: rows are pixels


def mode_kinds(req, config: UnitConfig) -> ModeKinds:
    """A request's access mode as bits. The front end decodes them once, in stage 2, and
    passes them on with the request, so no stage starts with the mode's compares and one
    register does not drive them all (docs/fpga.md, "Clock speed"). The bit of a mode
    ``config`` does not build is a constant 0: such a request is refused
    (MODE_NOT_BUILT), and the logic that serves the mode, which that bit selects in the
    front end, the walker and the datapath, is left out."""
    mode = req.mode.as_value()

    def kind(*modes):
        compares = [mode == m for m in modes if m in config.built_modes]
        return reduce(or_, compares) if compares else Const(0, 1)

    im2col, wide, wide128 = kind(AccessMode.IM2COL), kind(AccessMode.IM2COL_W), kind(AccessMode.IM2COL_W_128)
    return ModeKinds(gather=kind(AccessMode.GATHER4, AccessMode.SCATTER4),
                     im2col=im2col, wide=wide, wide128=wide128, pixel_mode=im2col | wide | wide128)


def _value_step(d):
    """The values between a chunk's units along dimension 0 (``address_constants_layout``:
    ``value_step``): dimension 0's traversal step, in units, times the values a unit holds."""
    return d.step0 << d.values_per_unit_log2


@bundle
class ChunkKind:
    """A kind of chunk (``ChunkKindLayout``): its units, the mask of them, its bytes."""
    units: Value
    live: Value
    length: Value


def chunk_kind(units, unit_global_bytes) -> ChunkKind:
    """A kind of chunk of ``units`` units."""
    return ChunkKind(units=units, live=Cat(u < units for u in range(16)),
                     length=small_product(units, unit_global_bytes)[:5])


@bundle
class PixelRoles:
    """What each of tensor dimensions 1..4 does in the pixel walk (:meth:`FrontEnd._pixel_roles`)."""
    walks: list         # steps through its range (a spatial dimension)
    counts: list        # counts the carries (N)
    offsets: list       # what shifts its positions (spatial dimensions only)


# -- what each stage holds ------------------------------------------------------------------

@bundle
class InFlight:
    """What every stage from 2 to 8 passes on: the request and what it is."""
    valid: Value
    request: Value      # RequestLayout
    kinds: ModeKinds
    slot_valid: Value   # the slot's SLOT_VALID bit when the request was accepted
    checked: Value      # at commit: what the slot's check found (CheckLayout); else 0


@bundle
class Snapshotted(InFlight):
    """Stage 2: the snapshot copied, and layer 0 of its decode."""
    snapshot: Value     # DescriptorLayout
    early: EarlyBits


@bundle
class Decoding(InFlight):
    """Stages 3 and 4: the decode's layers 1 and 2; the rules' products in DSP blocks."""
    terms: list         # per dimension 1..4, the partial products of (dim - 1) * stride
    d: DecodedFields


@bundle
class Summing(InFlight):
    """Stages 5 and 6: the decode's layers 3 and 4; the products' adder trees."""
    other_rows: Value   # the rows of a box that is not tiled (gather4, pixels)
    extent_terms: list  # per dimension 1..3, the terms of stride[i-1] * dim[i]
    span_terms: list    # the terms of the tensor's span
    d: DecodedFields


@bundle
class Radices(InFlight):
    """Stage 7: the box's radices and kinds of chunk, the stride extents, the room left."""
    d: DecodedFields
    room: SmemRoom
    extents: list       # stride[i-1] * dim[i], i = 1..3
    span_terms: list    # the tensor's last byte, in terms
    radices: list       # the odometer's, digit 0 first
    saturated: list     # the radices, saturated at 2
    padded_terms: list  # the lane places the box's rows leave empty: rows * pad, in terms
    other_terms: list   # the box's bytes for other_rows, in DSP products
    tiled_terms: list   # the box's bytes for a tiled box's rows
    chunk_kinds: list   # ChunkKind: a row's full chunk and its last


@bundle
class Checked(InFlight):
    """Stage 8: every rule but the last two, a bit each; the place values."""
    d: DecodedFields
    room: SmemRoom
    radices: list
    chunk_kinds: list
    broken: Value       # a bit per rule of rule_list
    box_terms: list
    padded_terms: list
    span_terms: list
    prefixes: list      # the mixed radix's place values (place_values)
    pixel_roles: PixelRoles
    tag: Value          # the beat table's entry written as the request entered stage 8


@bundle
class SetUp:
    """Stage 9: the job set up; each group's first broken rule; the sums."""
    valid: Value
    request: Value
    job: Value          # job_layout
    groups: list        # per group of RULE_GROUP rules: (broken?, first code)
    room: SmemRoom
    box_bytes: Value
    padded: Value       # the lane places the box's rows leave empty
    last_byte: Value    # the tensor's last byte, signed (per request)
    checked_wraps: Value    # ADDRESS_WRAP found at commit (else 0)


@bundle
class Limits:
    """Stage 10: the unit's two limits, the beat count, the first broken group."""
    valid: Value
    job: Value
    any_broken: Value
    first_code: Value
    box_bytes: Value
    overflows: Value    # SMEM_BOUNDS
    beats: Value
    one_beat: Value
    wraps: Value        # ADDRESS_WRAP


class FrontEnd(wiring.Component):
    """Request in, job out.

    Ports
    -----
    requests : stream in (``RequestLayout``)
    snapshot : :class:`.regfile.SnapshotSignature` out: the descriptor file's snapshot port
    job : stream out (``job_layout``)
    table : :class:`.datapath.BeatTableSignature` out: each job's beat constants, into the
        datapath's beat table
    """

    def __init__(self, config: UnitConfig):
        self.config = config
        super().__init__({
            "requests": In(stream.Signature(RequestLayout)),
            "snapshot": Out(SnapshotSignature(config)),
            "job": Out(stream.Signature(job_layout(config))),
            "table": Out(BeatTableSignature(config)),
        })

    def elaborate(self, platform):
        m = Module()
        # the stages' enable is a register, not the end of the walker's and the datapath's
        # logic (docs/fpga.md): stage 10's valid bit inverted, or at a request interval of
        # 1 the skid register's, a second job loaded when the job register is held while
        # the stages move
        skid_valid = Signal(name="skid_valid") if self.config.request_interval == 1 else None
        advance = Signal(name="advance", init=1)
        # the stages' values (and their line) load only while a request is in them, so an
        # idle front end changes no state (a gated simulation skips it: sim/gating.py);
        # the valid bits move with every advance, and stage 1 takes each request. The
        # values' enable is a register of its own, set a cycle ahead, so that its thousands
        # of loads hang off a flip-flop, not a gate behind two (docs/fpga.md)
        load, accept = Signal(name="load"), Signal(name="accept")
        m.d.comb += accept.eq(self.requests.valid & advance)
        m.submodules.line = line = Line(load, "s")
        stage = {1: Stage(m, advance, "s1", line, load=accept),
                 **{k: Stage(m, advance, f"s{k}", line, load=load) for k in range(2, STAGES[2] + 1)}}
        valid, request = self._accept(m, stage[1], advance, accept)
        checked = self.snapshot.checked if self.config.checks_at_commit else 0
        r = stage[2](Snapshotted(valid=valid, request=request, kinds=mode_kinds(request, self.config),
                                 slot_valid=self.snapshot.valid, checked=checked, snapshot=self.snapshot.data,
                                 early=decode_early(self.snapshot.early)), None)
        r, steps = self._decode(stage, r)
        r = self._radices(stage, r)
        steps = self._step_level(stage[7], steps)
        r, rules, tag_next = self._check(m, stage, r)
        checked = r
        steps = self._step_level(stage[8], steps)
        r = self._set_up(m, stage, r, rules)
        set_up = r
        steps = self._step_level(stage[9], steps)
        r = self._limits(m, stage, r, steps)
        free, behind = self._job_register(m, r, skid_valid, advance)
        # advance and load one cycle ahead: the stages move while stage 10 (the skid) is
        # empty, which it is next cycle where they move now and stage 9 is empty, or
        # where they wait and the walker takes stage 10's job (the job register takes
        # the skid's or stage 10's)
        (s9_valid,) = stage[9].valids
        ahead = Mux(advance, ~s9_valid, free) if skid_valid is None else free | (advance & ~r.valid)
        m.d.sync += advance.eq(ahead)
        m.d.comb += load.eq(occupied(m, self.requests.valid, stage.values(), "s_load", platform, (advance, ahead)))
        if isinstance(platform, Proving):
            # what induction needs stated: the enable set ahead is what it stands for
            m.d.comb += Assert(advance == ~(r.valid if skid_valid is None else skid_valid))
            # and the beat table's entries: the requests from stage 8 on hold the
            # entries written last, youngest first, and a write finds at most
            # WAITING_JOBS of them, which the table's depth rests on
            # (layouts.beat_table_depth)
            younger = Const(0, 3)
            tags = [(checked.valid, checked.tag), (set_up.valid, set_up.job.tag), (r.valid, r.job.tag),
                    *((valid, job.tag) for valid, job in reversed(behind))]
            for valid, tag in tags:
                with m.If(valid):
                    m.d.comb += Assert(tag == (tag_next - 1 - younger)[:len(tag)])
                younger = younger + valid
            with m.If(self.table.en):
                m.d.comb += Assert(younger <= WAITING_JOBS)
        return m

    def _accept(self, m, stage, advance, accept):
        """Stage 1: the request is registered (its values in the cycles one is accepted),
        and its slot is read from the descriptor file (the snapshot: later bus writes to
        the slot cannot reach this request)."""
        m.d.comb += [
            self.requests.ready.eq(advance),
            self.snapshot.slot.eq(self.requests.payload.slot),
            self.snapshot.en.eq(accept),
        ]
        return stage(self.requests.valid, "valid"), stage(self.requests.payload, "request")

    @staticmethod
    def _carried(r: InFlight) -> dict:
        """What every stage from 2 to 8 carries on: the request, its mode and its slot's
        valid bit."""
        return dict(valid=r.valid, request=r.request, kinds=r.kinds, slot_valid=r.slot_valid, checked=r.checked)

    def _decode(self, stage, r: Snapshotted) -> tuple[Summing, stepping.StepSums | None]:
        """Stages 3 to 6: the decode, the rules' products and their adder trees. The
        products' DSP blocks register their operands as stage 3 and their products as
        stage 4 (rtl/dsp.py); the row counts' blocks take the count blocks' products.
        Beside them, a unit that steps addresses launches its set-up's products
        (:mod:`.stepping`); returns their sums as stage 6 holds them, or None."""
        d = decode_fields(r.snapshot, r.early, stage[3].product)
        # the rules' products; a unit that checks at commit made them then (rtl/commit.py)
        terms = [] if self.config.checks_at_commit else product_terms(d, stage[3].product)
        r = stage[3](Decoding(**self._carried(r), terms=terms, d=d), None)
        steps = None
        if self.config.steps_addresses:
            roles = self._pixel_roles(r.d, r.request, r.kinds)
            walk_strides = [Mux(counts, 1, r.d.element_strides[i]) for i, counts in enumerate(roles.counts, 1)]
            steps = stage[4](stepping.launch(stage[4].product, r.d, r.request, r.kinds, roles.offsets, walk_strides,
                                             self.config), "step")
        r = stage[4](Decoding(**self._carried(r), terms=r.terms, d=decode_counts(r.d)), None)
        if steps is not None:
            steps = stage[5](stepping.launch_wraps(stage[5].product, r.d.counts, steps, self.config), "step")
            steps = self._step_level(stage[6], steps)
        # dimension i's extent is its product plus stride[i-1]; the last byte is the four
        # products plus dim0_bytes - 1 (added two levels later, when it is ready)
        kinds, w_halo = r.kinds, r.request.w_halo
        other_rows = Mux(kinds.gather, GATHER_ROWS,  # the rows of a box that is not tiled
                     Mux(kinds.im2col, r.d.pixels,
                     Mux(kinds.wide, r.d.pixels + w_halo, 4 * (W128_GROUP + w_halo))))
        # the extents of dimensions 1..3: each next stride must reach past one
        extent_terms = [add_pairs(terms + [Cat(stride, 0).as_signed()], SPAN_WIDTH)
                        for terms, stride in zip(r.terms[:-1], r.d.strides)]
        r = stage[5](Summing(**self._carried(r), other_rows=other_rows, extent_terms=extent_terms,
                             span_terms=add_pairs(sum(r.terms, []), SPAN_WIDTH),
                             d=decode_rows(r.d, stage[5].product)), None)
        return stage[6](Summing(**self._carried(r), other_rows=r.other_rows,
                                extent_terms=[add_pairs(t, SPAN_WIDTH) for t in r.extent_terms],
                                span_terms=add_pairs(r.span_terms, SPAN_WIDTH),
                                d=decode_row_bytes(r.d, stage[6].product)), None), steps

    def _step_level(self, stage, steps):
        """The step set-up's sums, one adder level on, registered in ``stage`` (None: the
        unit multiplies)."""
        return None if steps is None else stage(stepping.level(steps, self.config.address_width), "step")

    def _radices(self, stage, r: Summing) -> Radices:
        """Stage 7: the box's rows, the stride extents, the odometer's radices, saturated;
        the two kinds of chunk (a row's full chunks and its last: units, mask, bytes)."""
        config, d = self.config, r.d
        gather, pixel_mode = r.kinds.gather, r.kinds.pixel_mode
        rows = Mux(gather | pixel_mode, r.other_rows, d.box_rows_tiled)
        # the whole 64-bit address: its bits at or above address_width make the tensor
        # wrap too (ADDRESS_WRAP), so none is cut off before the test
        base_term = Cat(d.global_address, 0).as_signed()
        # digit 0 counts a row's beats: a beat holds up to `lanes` chunks of one row
        # (docs/architecture.md, "Beats"), so a row of row_chunks takes ceil(row_chunks /
        # lanes), and leaves `pad` lane places of its last beat empty
        lanes_log2 = config.lanes.bit_length() - 1
        pad = row_pad(d.row_chunks, config)
        radices = ([(d.row_chunks + config.lanes - 1) >> lanes_log2,
                    Mux(pixel_mode, rows, Mux(gather, GATHER_ROWS, d.counts[1]))]
                   + [Mux(gather | pixel_mode, 1, d.counts[i]) for i in range(2, MAX_RANK)])
        radices = [Value.cast(radix)[:RADIX_WIDTH] for radix in radices]

        def products(a, b):
            # the box's bytes in pieces, for either row count: DSP blocks whose product
            # registers are stage 7's, so that stage 8's registers (the choice between
            # them) sit between the blocks and stage 9's sum (docs/fpga.md, "Clock speed");
            # the pitch's zero low bits left out, its top piece is few enough bits for logic
            return partial_products(a, b, BOX_BYTES_WIDTH,
                                    lambda x, y: stage[7].product(x, y, registered_inputs=False), PITCH_ZERO_BITS)

        return stage[7](Radices(
            **self._carried(r), d=d, room=smem_room(r.request, config),
            extents=[sum_terms(t, SPAN_WIDTH) for t in r.extent_terms],
            # the tensor's last byte: the base address joins the span's terms (none in a
            # unit that checks at commit: its ADDRESS_WRAP bit comes with the snapshot)
            span_terms=[] if config.checks_at_commit else add_pairs(r.span_terms + [d.dim0_last, base_term],
                                                                    SPAN_WIDTH),
            radices=radices, saturated=[saturate(radix, 1) for radix in radices],
            padded_terms=[Mux(pad[b], Value.cast(rows) << b, 0) for b in range(lanes_log2)],
            other_terms=products(r.other_rows, d.row_pitch), tiled_terms=products(d.box_rows_tiled, d.row_pitch),
            chunk_kinds=[chunk_kind(Const(1, 5) << d.units_per_chunk_log2, d.unit_global_bytes),
                         chunk_kind(d.last_chunk_units, d.unit_global_bytes)]), None)

    def _check(self, m, stage, r: Radices) -> tuple[Checked, list, Signal]:
        """Stage 8: every rule but the last two checked (:mod:`.validate`), one bit each;
        the box's byte count in pieces; the mixed radix's place values; the beat
        constants, written into the datapath's beat table as the request enters the
        stage, the stage holding its entry's number (``tag``). Returns the stage, the
        rules' (condition, code) pairs and the next entry's number."""
        rules = rule_list(r.d, r.request, r.kinds, r.extents, r.slot_valid, self.config,
                          r.checked.code if self.config.checks_at_commit else None)
        gather, pixel_mode = r.kinds.gather, r.kinds.pixel_mode
        entry = Signal(beat_entry_layout(self.config), name="beat_write_data")
        self._beat_constants(m, entry, r)
        # the entries are written in turn, one per request that enters stage 8
        tag_next, enters = Signal(beat_tag_width(self.config), name="beat_tag"), Signal(name="beat_write")
        m.d.comb += [enters.eq(stage[8].enable & r.valid),
                     self.table.en.eq(enters), self.table.tag.eq(tag_next), self.table.data.eq(entry)]
        with m.If(enters):
            m.d.sync += tag_next.eq(tag_next + 1)
        return stage[8](Checked(
            **self._carried(r), d=r.d, room=r.room, radices=r.radices, chunk_kinds=r.chunk_kinds,
            broken=Cat(condition for condition, _ in rules),
            box_terms=[Mux(gather | pixel_mode, other, tiled) for other, tiled
                       in zip_longest(r.other_terms, r.tiled_terms, fillvalue=0)],
            padded_terms=r.padded_terms, span_terms=add_pairs(r.span_terms, SPAN_WIDTH),
            prefixes=place_values(m, r.saturated, 1),
            pixel_roles=self._pixel_roles(r.d, r.request, r.kinds), tag=tag_next), None), rules, tag_next

    def _set_up(self, m, stage, r: Checked, rules) -> SetUp:
        """Stage 9: the job set-up (the walk's step, the pixel walk, the beat
        constants that ride in the job, the number of the beat table's entry stage 8
        holds); the first broken rule of each group of :data:`RULE_GROUP`; the box's byte
        count; the tensor's last byte."""
        job = Signal(job_layout(self.config))
        self._walk_setup(m, job, r)
        self._pixel_walk(m, job.pixels, r.d, r.request, r.kinds, r.pixel_roles)
        self._carried_constants(m, job.carried, r)
        m.d.comb += [job.tag.eq(r.tag), job.request_id.eq(r.request.request_id),
                     job.pixel_mode.eq(r.kinds.pixel_mode)]
        # the codes are constants, but for the one found at commit: that one is this
        # stage's copy, as the rules' bits are
        codes = [code if isinstance(code, int) else r.checked.code for _, code in rules]
        groups = [first_broken([(r.broken[i], codes[i]) for i in range(start, min(start + RULE_GROUP, len(codes)))])
                  for start in range(0, len(codes), RULE_GROUP)]
        return stage[9](SetUp(valid=r.valid, request=r.request, job=job, groups=groups, room=r.room,
                              box_bytes=sum_terms(r.box_terms, BOX_BYTES_WIDTH),
                              padded=sum_terms(r.padded_terms, BOX_BYTES_WIDTH) if r.padded_terms else 0,
                              last_byte=sum_terms(r.span_terms, SPAN_WIDTH).as_signed() if r.span_terms else 0,
                              checked_wraps=r.checked.wraps if self.config.checks_at_commit else 0), None)

    def _limits(self, m, stage, r: SetUp, steps) -> Limits:
        """Stage 10: SMEM_BOUNDS, a compare of the box's bytes with the room left;
        ADDRESS_WRAP, a test of the last byte's high bits; the beat count; the first
        broken group; the pixel walk's read-ahead fields (:func:`.pixelwalk.pixel_walk_ahead`);
        a unit that steps addresses: the sums' last adds and the step's offset
        (:func:`.stepping.job_fields`)."""
        config = self.config
        any_broken, first_code = first_broken(r.groups)
        job = Signal.like(r.job, name="s9_job_ahead")
        m.d.comb += [job.eq(r.job), *pixel_walk_ahead(r.job.pixels, job.pixels)]
        if steps is not None:
            m.d.comb += stepping.job_fields(m, job.address, steps, r.job.step_digits, config)
            if config.builds_im2col_family:
                m.d.comb += stepping.pixel_job_fields(job.pixels, steps, config)
        return stage[10](Limits(
            valid=r.valid, job=job, any_broken=any_broken, first_code=first_code, box_bytes=r.box_bytes,
            overflows=smem_overflows(r.request, r.box_bytes, r.room),
            # the beats: the box's chunks and the lane places its rows leave empty, a beat's
            # lanes at a time
            beats=((r.box_bytes >> 4) + r.padded) >> (config.lanes.bit_length() - 1),
            # one beat: the odometer's first step ends the box (the set-up's place values)
            one_beat=r.job.step_overflow,
            wraps=r.checked_wraps if config.checks_at_commit else address_wraps(r.last_byte, config)), None)

    def _job_register(self, m, r: Limits, skid_valid, advance):
        """The code (the first broken group's first rule, else SMEM_BOUNDS, else
        ADDRESS_WRAP) and the job: offered from stage 10 (a request interval of 2), or
        into stage 11, the job register, with the skid register behind it (1). Returns
        whether the job register is free to load (empty, or its job taken), and the
        registers after stage 10 as (valid, job) pairs, oldest first."""
        code = Mux(r.any_broken, r.first_code,
                   Mux(r.overflows, ErrorCode.SMEM_BOUNDS, Mux(r.wraps, ErrorCode.ADDRESS_WRAP, ErrorCode.OK)))
        ok = ~r.any_broken & ~r.overflows & ~r.wraps
        incoming = Signal(job_layout(self.config))
        # the completion's count saturates: only a prefetch's box can pass 4 GiB
        reported = Mux(r.box_bytes[COUNT_WIDTH:].any(), COUNT_LIMIT, r.box_bytes[:COUNT_WIDTH])
        # the beat table's entry is stage 10's register, not ``incoming``'s copy: the job
        # stream's proof at an interval of 1 cuts ``incoming`` (any job), and a copy
        # would be the register's net, cut too
        m.d.comb += [incoming.eq(r.job), incoming.tag.eq(0), incoming.code.eq(code),
                     incoming.transaction_bytes.eq(Mux(ok, reported, 0)),
                     incoming.beats.eq(Mux(ok, r.beats, 1)), incoming.one_beat.eq(~ok | r.one_beat)]
        free = ~self.job.valid | self.job.ready
        if skid_valid is None:
            # stage 10 is the job register: full only while the stages wait (advance is
            # its valid bit inverted), it empties when the walker takes its job
            m.d.comb += [self.job.valid.eq(r.valid), self.job.payload.eq(incoming), self.job.payload.tag.eq(r.job.tag)]
            with m.If(r.valid & self.job.ready):
                m.d.sync += r.valid.eq(0)
            return free, []
        skid = Signal(job_layout(self.config), name="skid")
        held = self.job.payload
        with m.If(free):
            # the job register takes the skid's job if it holds one, else the stages'
            m.d.sync += [self.job.valid.eq(skid_valid | r.valid),
                         held.eq(Mux(skid_valid, skid.as_value(), incoming.as_value())),
                         held.tag.eq(Mux(skid_valid, skid.tag, r.job.tag)),
                         skid_valid.eq(0)]
        with m.Elif(advance):
            m.d.sync += [skid_valid.eq(r.valid), skid.eq(incoming), skid.tag.eq(r.job.tag)]
        return free, [(self.job.valid, held), (skid_valid, skid)]

    def _walk_setup(self, m, job, r: Checked):
        """The job's walk: the radices, and the step (one beat: 1 in their mixed radix)."""
        m.d.comb += [job.radix[i].eq(radix) for i, radix in enumerate(r.radices)]
        step_digits, step_overflow = mixed_radix(m, 1, r.radices, r.prefixes, "step")
        m.d.comb += job.step_overflow.eq(step_overflow)
        if self.config.lanes > 1:
            m.d.comb += job.row_pad.eq(row_pad(r.d.row_chunks, self.config))
        for i in range(DIGITS):
            m.d.comb += [job.step_digits[i].eq(step_digits[i]),
                         job.step_safe[i].eq(r.radices[i] - step_digits[i] - 1)]

    @staticmethod
    def _carried_constants(m, carried, r: Checked):
        """The few beat constants that the datapath's first stage reads, which ride in the
        job (``carried_constants_layout``), and the bits it clears the beat table's reads
        by (:meth:`.datapath.Datapath._read_table`)."""
        d, req = r.d, r.request
        m.d.comb += [
            carried.in_rank.eq(Cat(d.in_rank)),
            carried.gather.eq(r.kinds.gather),
            carried.prefetch.eq(req.operation.as_value() == Operation.PREFETCH),
            carried.last_chunk.eq(d.row_chunks - 1),
            carried.chunk_values.eq(_value_step(d) << d.units_per_chunk_log2),
            *(carried.element_strides[i - 1].eq(d.element_strides[i]) for i in range(1, MAX_RANK)),
        ]

    @staticmethod
    def _beat_constants(m, entry, r: Radices):
        """What every beat of the job needs to turn digits into transactions, but the few
        the job carries (:meth:`_carried_constants`): the beat table's entry
        (``beat_entry_layout``). The coordinates, dimensions and strides go in as the
        request and the descriptor give them: past the rank the datapath makes them 0 (the
        coordinates but gather4's rows), 1 and 0, and a prefetch's shared-memory address
        and swizzle 0, as it reads the entry (:meth:`.datapath.Datapath._read_table`)."""
        d, req = r.d, r.request
        coordinates, address = entry.coordinates, entry.address
        for i in range(MAX_RANK):
            m.d.comb += [coordinates.start[i].eq(req.coordinates[i]), address.dims[i].eq(d.dims[i])]
        m.d.comb += [address.strides[i].eq(stride) for i, stride in enumerate(d.strides)]
        for kind, values in zip(coordinates.chunks, r.chunk_kinds):
            m.d.comb += [kind.units.eq(values.units), kind.live.eq(values.live), kind.length.eq(values.length)]
        m.d.comb += [
            coordinates.dim0.eq(d.dims[0]),
            coordinates.smem_base.eq(req.smem_address),
            coordinates.pixel_mode.eq(r.kinds.pixel_mode),
            address.base.eq(d.global_address),
            address.swizzle.eq(d.swizzle),
            address.value_step.eq(_value_step(d)),
            address.values_per_unit_log2.eq(d.values_per_unit_log2),
            address.unit_global_bytes.eq(d.unit_global_bytes),
            address.element_pitch.eq(small_product(d.unit_global_bytes, d.step0)),
            address.fill.eq(Mux(req.operation.as_value() != Operation.LOAD, Fill.NONE,
                                Mux(d.fill_nan, Fill.NAN, Fill.ZERO))),
            address.operation.eq(req.operation),
            address.reduce_op.eq(req.reduce_op),
            address.multicast_mask.eq(req.multicast_mask),
        ]

    @staticmethod
    def _pixel_roles(d, req, kinds) -> PixelRoles:
        """What each of dimensions 1..4 does in the pixel walk (PTX 5.5.4 / 5.5.5): im2col
        walks the rank - 2 spatial dimensions, im2col::w and ::w::128 only W; N (the last
        dimension) counts the carries; the im2col offsets (loads) or wOffset shift the
        walked positions. Decided a stage before the job set-up adds the offsets."""
        im2col, pixel_mode = kinds.im2col, kinds.pixel_mode
        op = req.operation.as_value()
        offsets_apply = im2col & ((op == Operation.LOAD) | (op == Operation.PREFETCH))
        # im2col walks the rank - 2 spatial dimensions, the other modes one: the rank's
        # bits, no compare
        dimensions = range(1, PIXEL_DIMENSIONS + 1)
        walks = [pixel_mode & Mux(im2col, rank_above(d, i + 1), i == 1) for i in dimensions]
        offsets = []
        for i in range(1, SPATIAL + 1):
            offset = Mux(offsets_apply, req.im2col_offsets[i - 1], 0)
            if i == 1:
                offset = Mux(im2col, offset, req.w_offset)
            offsets.append(Mux(walks[i - 1], offset, 0))
        return PixelRoles(walks=walks, counts=[pixel_mode & rank_is(d, i + 1) for i in dimensions], offsets=offsets)

    @staticmethod
    def _pixel_walk(m, walk, d, req, kinds, roles: PixelRoles):
        """The job's pixel walk (``pixel_walk_layout``): the roles (:meth:`_pixel_roles`)
        and the walked positions, their range and their start, shifted alike by the
        offsets."""
        for i in range(1, PIXEL_DIMENSIONS + 1):
            start = Mux(d.in_rank[i], req.coordinates[i], 0)
            if i <= SPATIAL:
                offset = roles.offsets[i - 1]
                start = start + offset
                m.d.comb += [walk.low[i - 1].eq(d.lower_corner[i - 1] + offset),
                             walk.limit[i - 1].eq(d.end_less_stride[i - 1] + offset)]
            m.d.comb += [
                walk.start[i - 1].eq(start),
                walk.stride[i - 1].eq(Mux(roles.counts[i - 1], 1, d.element_strides[i])),
                walk.walks[i - 1].eq(roles.walks[i - 1]),
                walk.counts[i - 1].eq(roles.counts[i - 1]),
            ]
        m.d.comb += [
            walk.halo.eq(Mux(kinds.im2col, 0, req.w_halo)),
            walk.group_last.eq(Mux(kinds.wide128, W128_GROUP - 1, d.pixels - 1)),
        ]
