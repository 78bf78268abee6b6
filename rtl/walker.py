"""The coordinate iterator: walks a job's box in the transaction order of
docs/transactions.md, a beat a cycle.

A beat holds up to ``lanes`` consecutive chunks of one row (docs/architecture.md,
"Beats"), so a beat has one row, and the walker walks rows, not lanes: one odometer of
five digits, a beat at a time: the beat within the row (radix: the row's beats,
``ceil(row chunks / lanes)``), then the box's dimensions 1..4 (radix: elements traversed
in each; gather4 has four rows in digit 1). It steps by 1 in that mixed radix, the
carries looked ahead (each digit computes both sums; the carry chain is then plain
logic). The datapath makes the lanes' chunks from digit 0: lane ``j`` holds the row's
chunk ``digit0 * lanes + j``, if the row has it.

The access modes differ only in how a row's coordinates are found. Tiled and gather4 rows
come from the digits (the datapath multiplies them by the element strides). The im2col
modes put the pixel index in digit 1 (radix: pixels plus halo pixels) and add a *pixel
walk* (:mod:`.pixelwalk`): a second small odometer over W, H, D and N that steps one
pixel at a time with adds and compares only (no division), in the beat that carries
into digit 1.
"""

from amaranth.hdl import Module, Signal, Const, Mux, Array, Cat, Value, signed
from amaranth.lib import wiring, stream, data
from amaranth.lib.wiring import In, Out

from ..model.config import UnitConfig
from .pipeline import bundle, copies
from .layouts import (job_layout, carried_constants_layout, beat_tag_width, beats_width, DIGITS, RADIX_WIDTH,
                      PIXEL_COORD, PIXEL_DIMENSIONS, COUNT_WIDTH, chunk_index_width, row_values_width)
from .pixelwalk import pixel_state_layout, first_pixel, pixel_step, pixel_coordinates
from .arith import carry_save_sum
from .stepping import row_term_count, carry_terms, row_terms

__all__ = ["Walker", "WalkSignature", "walk_layout", "completion_info_layout", "JOB_LOAD_GROUPS",
           "TAKE_COPIES"]

#: Groups of the job register's bits, each loaded by a copy of `take` of its own.
JOB_LOAD_GROUPS = 4
#: The copies of `take`: the job stream's ready, then one for each group of the job
#: register's bits.
TAKE_COPIES = 1 + JOB_LOAD_GROUPS


def completion_info_layout(config: UnitConfig) -> data.StructLayout:
    return data.StructLayout({"request_id": config.id_width, "code": 8, "transaction_bytes": COUNT_WIDTH})


def walk_layout(config: UnitConfig) -> data.StructLayout:
    """One cycle of the walk: the beat's digits, the job's beat table entry (``tag``)
    and the beat constants that ride in it (``carried``: those the datapath's first stage
    reads, and the bits its reads of the beat table are cleared by); a unit that
    steps addresses adds the row address's terms (:mod:`.stepping`). With more than one
    lane, ``first_chunk`` is the place of the beat's lane 0 among the box's chunks (with
    one, it is ``beat_index``). ``row_values`` is lane 0's chunk's offset along dimension
    0 from its row's start, in values: ``digit0 * lanes * chunk_values``."""
    steps = {}
    if config.steps_addresses:
        steps = {"address": data.ArrayLayout(config.address_width, row_term_count(config))}
    chunks = {"first_chunk": chunk_index_width(config)} if config.lanes > 1 else {}
    return data.StructLayout({
        "is_beat": 1,
        "last": 1,
        "alive": 1,
        "digits": data.ArrayLayout(RADIX_WIDTH, DIGITS),
        "pixel": data.ArrayLayout(PIXEL_COORD, PIXEL_DIMENSIONS),  # im2col
        "beat_index": beats_width(config),      # beats of this job before this one
        **chunks,
        "row_values": row_values_width(config),
        "tag": beat_tag_width(config),
        "carried": carried_constants_layout(config),
        "has_completion": 1,
        "completion": completion_info_layout(config),
        **steps,
    })


#: A digit's room: ``safe - digit``, where ``safe`` is the largest value the digit can
#: hold and take its step without wrapping; negative when it wraps.
ROOM = signed(RADIX_WIDTH + 1)


def odometer_step(digits, rooms, step, safe, plus_one):
    """``digits + step`` in the mixed radix. ``safe[i]`` is the largest value digit i can
    hold and take its step without wrapping (``radix - step - 1``, from the job);
    ``plus_one``: ``step + 1`` and ``safe + 1`` per digit, registers the walker loads with
    the job, so that every candidate below is one add.

    Beside each digit ``x`` the walker keeps its room, ``safe - x``, and the room less
    one (``rooms[i]``: a pair of registers), so whether the digit wraps with its step, or
    with its step and a carry, is a sign bit: no compare stands between the registers
    and the carries. The carry out of digit i is written flat, as a sum of products (some
    digit j <= i wraps with its own step, and every digit above j up to i wraps with one
    added): two levels of logic whatever the digit. Every candidate sum is one add from
    registers, and the wraps and carries pick among them. Returns the new digits, their
    new rooms, and the carries out of every digit."""
    wrap_plain = [room[-1] for room, _ in rooms]            # x + k >= radix
    wrap_plus = [room_less[-1] for _, room_less in rooms]   # x + k + 1 >= radix
    carries = []
    for i in range(len(digits)):
        carry = Const(0, 1)
        for j in range(i + 1):
            term = wrap_plain[j]
            for k in range(j + 1, i + 1):
                term = term & wrap_plus[k]
            carry = carry | term
        carries.append(carry)
    result, new_rooms = [], []
    for i, (x, (room, room_less), k, top) in enumerate(zip(digits, rooms, step, safe)):
        k1, top1 = plus_one.step[i], plus_one.safe[i]
        # (digit, room, room less one) after adding k, or k + 1, less the radix on a wrap
        plain = [Mux(wrap_plain[i], ~room, x + k), Mux(wrap_plain[i], top1 + room, room - k),
                 Mux(wrap_plain[i], top + room, room_less - k)]
        plus = [Mux(wrap_plus[i], -room, x + k1), Mux(wrap_plus[i], top + room, room_less - k),
                Mux(wrap_plus[i], top + room_less, room_less - k1)]
        carry = carries[i - 1] if i else Const(0, 1)
        digit, new_room, new_less = (Mux(carry, b, a) for a, b in zip(plain, plus))
        result.append(digit[:RADIX_WIDTH])
        new_rooms.append((new_room[:ROOM.width].as_signed(), new_less[:ROOM.width].as_signed()))
    return result, new_rooms, carries


def _select(states, index):
    """``states[index]`` as a pixel state view."""
    return data.View(states[0].shape(), Array(state.as_value() for state in states)[index])


class WalkSignature(wiring.Signature):
    """The walk, from the walker to the datapath: ``record`` (``walk_layout``) is a record
    in every cycle ``valid`` is high, one cycle each. The datapath's stages never stall, so
    the walker sends a record only with a credit: ``credit`` says the walker may send one
    in the next cycle (the datapath decides it a cycle ahead, so there will be room for it
    in the beat queue). Both ends keep the credit in registers of their own, so nothing
    the beat stream's ready does reaches the walker in the same cycle. ``tag_ahead`` is
    the beat table's entry of the record the walk register loads next, if any: the job
    the walker walks, from its job register."""

    def __init__(self, config: UnitConfig):
        super().__init__({"record": Out(walk_layout(config)), "valid": Out(1), "credit": In(1),
                          "tag_ahead": Out(beat_tag_width(config))})


def _load_in_groups(m, register, value, takes):
    """``register`` loads ``value`` (the same layout) in ``len(takes)`` groups of its
    bits, each in the cycles its copy of `take` is high."""
    target, source, count = register.as_value(), value.as_value(), len(takes)
    for group, take in enumerate(takes):
        bits = slice(group * len(target) // count, (group + 1) * len(target) // count)
        with m.If(take):
            m.d.sync += target[bits].eq(source[bits])


@bundle
class _Odometer:
    """The beat's odometer (:func:`odometer_step`) and its next state."""
    digits: list        # per digit
    rooms: list         # per digit: (room, room less one)
    alive: Signal       # the walk has a beat
    plus_one: Signal    # the job's step and safe digits plus one, loaded with the job
    stepped: tuple      # (digits, rooms, carries) after this cycle's step
    next_alive: Value


@bundle
class _Addresses:
    """The stepped row address (:mod:`.stepping`): the one emitted last, the carries of
    the step taken since, and the one emitted now."""
    last: Signal        # the row address of the record emitted last
    pattern: Signal     # the carries out of digits 0..3 of the step since
    first: Signal       # no record of the job yet: the box's first row
    stepped: Signal     # the row address of the current digits
    emitted: Value      # the row address emitted (gather4: the row's)


@bundle
class _Control:
    """Where the walker stands in its job, and whether it may emit and take a job."""
    busy: Signal        # a job is being walked
    beat_index: Signal  # records of the job emitted before this one
    remaining: Signal   # records of the job left, this one included
    last: Signal        # this record is the job's last (remaining == 1)
    two_left: Signal    # remaining == 2
    free: Signal        # idle, or emitting a job's last record: the walker takes a job
    issue: Value        # a credit this cycle: the walk moves
    takes: list         # `take` (a credit while free: the job stream's ready), and a copy per job group


class Walker(wiring.Component):
    """Job in, one walk record a cycle out (when the credit allows).

    Ports
    -----
    job : stream in (``job_layout``)
    walk : :class:`WalkSignature` out

    The job's beat constants wait in the datapath's beat table, not in the walker: each
    record carries the job's entry there (``tag``) and the few constants the job carries
    itself (``carried``; docs/architecture.md, "Where values are kept").
    """

    def __init__(self, config: UnitConfig):
        self.config = config
        super().__init__({
            "job": In(stream.Signature(job_layout(config))),
            "walk": Out(WalkSignature(config)),
        })

    def elaborate(self, platform):
        m = Module()
        current = Signal(job_layout(self.config))       # the job being walked
        odometer = self._odometer(m, current)
        control = self._control(m)
        if self.config.builds_im2col_family:
            pixel, next_pixel = self._pixels(m, current, odometer)
        else:       # no im2col mode built: no pixel walk, and the records' pixels are 0
            pixel, next_pixel = None, None
        addresses = self._addresses(m, current, odometer) if self.config.steps_addresses else None
        first_chunk = self._first_chunk(m, current, control, odometer)
        row_values = self._row_values(m, current, control, odometer)
        self._emit(m, current, control, odometer, pixel, addresses, first_chunk, row_values)
        self._take_job(m, current, control, odometer)
        self._advance(m, control, odometer, pixel, next_pixel, addresses)
        return m

    def _odometer(self, m, current) -> _Odometer:
        digits = [Signal(RADIX_WIDTH, name=f"digit{i}") for i in range(DIGITS)]
        rooms = [(Signal(ROOM, name=f"room{i}"), Signal(ROOM, name=f"room_less{i}")) for i in range(DIGITS)]
        # the job's step and safe values plus one, loaded with the job (odometer_step)
        plus_one = Signal(data.StructLayout({"step": data.ArrayLayout(RADIX_WIDTH + 1, DIGITS),
                                             "safe": data.ArrayLayout(RADIX_WIDTH + 1, DIGITS)}))
        stepped = odometer_step(digits, rooms, current.step_digits, current.step_safe, plus_one)
        alive = Signal(name="alive")
        return _Odometer(digits, rooms, alive, plus_one, stepped,
                         next_alive=alive & ~stepped[2][-1] & ~current.step_overflow)

    def _addresses(self, m, current, odometer) -> _Addresses:
        """Step addressing: the row address is the one emitted last plus ``K`` and the
        deltas of the carries the odometer took since: registers into a carry-save sum
        and one carry chain, so the carries themselves are only registered when the
        odometer steps, not summed behind it."""
        config, width = self.config, self.config.address_width
        constants = current.address
        first = Signal(name="address_first")
        last = Signal(width, name="row_address")
        pattern = Signal(len(constants.carry), name="row_carries")
        stepped = Signal(width, name="row_stepped")
        m.d.comb += stepped.eq(carry_save_sum(m, [last] + carry_terms(constants, pattern, first, config), width,
                                              "row_stepped"))
        emitted = stepped
        if config.builds("gather4"):
            row = odometer.digits[1][:(len(constants.gather) - 1).bit_length()]
            emitted = Mux(current.carried.gather, Array(constants.gather)[row], stepped)
        return _Addresses(last=last, pattern=pattern, first=first, stepped=stepped, emitted=emitted)

    @staticmethod
    def _ended_row(current, odometer):
        """Whether the step ends the beat's row: a carry out of digit 0, or every step
        where a row is one beat (digit 0's step is 0)."""
        return odometer.stepped[2][0] | (current.step_digits[0] == 0)

    def _first_chunk(self, m, current, control, odometer):
        """With more than one lane, the place of the beat's lane 0 among the box's chunks:
        ``lanes`` on from the last beat's, less the row's empty lane places where the
        beat before ended its row. None with one lane: the datapath takes ``beat_index``."""
        if self.config.lanes == 1:
            return None
        first_chunk = Signal(chunk_index_width(self.config), name="first_chunk")
        with m.If(control.issue):
            with m.If(control.free):
                m.d.sync += first_chunk.eq(0)
            with m.Else():
                ended_row = self._ended_row(current, odometer)
                m.d.sync += first_chunk.eq(first_chunk + self.config.lanes - Mux(ended_row, current.row_pad, 0))
        return first_chunk

    def _row_values(self, m, current, control, odometer):
        """Lane 0's offset along dimension 0 from its row's start, in values (``digit0 *
        lanes * chunk_values``), kept as a sum: ``lanes * chunk_values`` more each beat
        of a row, 0 where a row or a job starts. So the datapath's first stage adds a
        lane's ``j * chunk_values`` to a register rather than multiplies the digit (a
        product behind the walk register was a placement's longest path: docs/fpga.md,
        "Clock speed")."""
        row_values = Signal(row_values_width(self.config), name="row_values")
        step = current.carried.chunk_values << (self.config.lanes.bit_length() - 1)
        with m.If(control.issue):
            with m.If(control.free):
                m.d.sync += row_values.eq(0)
            with m.Else():
                m.d.sync += row_values.eq(Mux(self._ended_row(current, odometer), 0, row_values + step))
        return row_values

    def _control(self, m) -> _Control:
        """The job's record count and the credit. The job's last record is known from a
        count of them rather than from the odometer, so taking the next job does not wait
        on the odometer's carries."""
        # the walker takes a job in a cycle it may emit: it is idle or emits a job's last
        # record. `free` is that (~busy | last), kept as a register of its own beside them,
        # so the choice between loading a job and stepping the walk is two registers' AND
        # and not logic behind `last` (docs/fpga.md, "Clock speed")
        free = Signal(init=1, name="free")
        two_left = Signal(name="two_left")
        # the credit, kept here as well as in the datapath (whose register is by the beat
        # queue, some 40 rows away after placement): `hold`, no credit this cycle (its
        # complement, so that Yosys does not merge it with the datapath's), enables the
        # walk's state; `take`, a credit while free, is the job stream's ready and the job
        # registers' enable, made a cycle ahead so that it is a register too. The job
        # register is many flip-flops spread over the chip, so `take` is kept in one
        # register per group of them (docs/fpga.md, "Clock speed")
        hold = Signal(name="hold")
        issue = ~hold
        free_next = Signal()
        m.d.comb += free_next.eq(Mux(issue, Mux(free, ~self.job.valid | self.job.payload.one_beat, two_left), free))
        m.d.sync += [hold.eq(~self.walk.credit), free.eq(free_next)]
        takes = copies(m, self.walk.credit & free_next, TAKE_COPIES, "take", init=1)
        m.d.comb += self.job.ready.eq(takes[0])
        width = beats_width(self.config)
        return _Control(busy=Signal(name="busy"), beat_index=Signal(width, name="beat_index"),
                        remaining=Signal(width, name="remaining"), last=Signal(name="last"),
                        two_left=two_left, free=free, issue=issue, takes=takes)

    def _pixels(self, m, current, odometer):
        """The pixel walk: the beat's pixel in a register, and its next one: the pixel after
        it where the step carries into digit 1 (digit 1 wraps only where the job ends, so
        no wrap need be taken off). The step's digit 1 and the carry are registers, so no
        add stands between them and the pixel registers' enables."""
        pixel = Signal(pixel_state_layout(self.config))
        after = pixel_step(m, pixel, current.pixels, "pixel_plus1")
        carry_into_1 = odometer.stepped[2][0]
        advanced = Mux(carry_into_1, odometer.plus_one.step[1], current.step_digits[1])[0]
        return pixel, _select([pixel, after], advanced)

    def _emit(self, m, current, control, odometer, pixel, addresses, first_chunk, row_values):
        """The walk register. The datapath's stages move every cycle: a record is valid for
        one cycle only, and the register loads in every cycle (its valid bit qualifies
        it), so the credit enables only the walker's own state."""
        error = current.code != 0
        m.d.sync += self.walk.valid.eq(control.busy & control.issue)
        record = Signal(walk_layout(self.config), reset_less=True)
        m.d.comb += [self.walk.record.eq(record), self.walk.tag_ahead.eq(current.tag)]
        m.d.sync += [
            record.is_beat.eq(~error),
            record.last.eq(control.last),
            record.alive.eq(odometer.alive),
            record.beat_index.eq(control.beat_index),
            record.row_values.eq(row_values),
            record.tag.eq(current.tag),
            record.carried.eq(current.carried),
            record.has_completion.eq(control.last),
            record.completion.request_id.eq(current.request_id),
            record.completion.code.eq(current.code),
            record.completion.transaction_bytes.eq(current.transaction_bytes),
        ]
        m.d.sync += [record.digits[i].eq(digit) for i, digit in enumerate(odometer.digits)]
        if first_chunk is not None:
            m.d.sync += record.first_chunk.eq(first_chunk)
        if pixel is not None:
            m.d.sync += [record.pixel[i].eq(value) for i, value in enumerate(pixel_coordinates(pixel))]
        if addresses is not None:
            parts = [pixel.address[i] for i in range(len(pixel.address))] if pixel is not None else []
            m.d.sync += [record.address[t].eq(term)
                         for t, term in enumerate(row_terms(addresses.emitted, parts, current.pixel_mode))]

    def _take_job(self, m, current, control, odometer):
        """The job's constants, in groups of bits each loaded by a ``take`` of its own."""
        takes, payload = control.takes, self.job.payload
        _load_in_groups(m, current, payload, takes[1:1 + JOB_LOAD_GROUPS])
        with m.If(takes[0]):
            m.d.sync += [odometer.plus_one.step[i].eq(payload.step_digits[i] + 1) for i in range(DIGITS)]
            m.d.sync += [odometer.plus_one.safe[i].eq(payload.step_safe[i] + 1) for i in range(DIGITS)]

    def _advance(self, m, control, odometer, pixel, next_pixel, addresses):
        """Where the walk stands next, in a cycle with a credit: a new job's start
        (``free``: ``take`` is high), or the step."""
        payload = self.job.payload
        new_digits, new_rooms, carries = odometer.stepped
        with m.If(control.issue):
            with m.If(control.free):
                m.d.sync += [control.busy.eq(self.job.valid), control.beat_index.eq(0), odometer.alive.eq(1),
                             control.remaining.eq(payload.beats), control.last.eq(payload.one_beat),
                             control.two_left.eq(payload.beats == 2)]
                if pixel is not None:
                    m.d.sync += first_pixel(pixel, payload.pixels)
                if addresses is not None:
                    m.d.sync += [addresses.first.eq(1), addresses.last.eq(payload.address.start),
                                 addresses.pattern.eq(0)]
                for i, digit in enumerate(odometer.digits):     # the walk starts at 0
                    safe = payload.step_safe[i]
                    room, room_less = odometer.rooms[i]
                    m.d.sync += [digit.eq(0), room.eq(safe), room_less.eq(safe - 1)]
            with m.Else():      # not free: busy
                pixel_step = [] if pixel is None else [pixel.eq(next_pixel)]
                m.d.sync += [odometer.alive.eq(odometer.next_alive), control.beat_index.eq(control.beat_index + 1),
                             *pixel_step, control.remaining.eq(control.remaining - 1),
                             control.last.eq(control.two_left), control.two_left.eq(control.remaining == 3)]
                if addresses is not None:
                    m.d.sync += [addresses.first.eq(0), addresses.last.eq(addresses.stepped),
                                 addresses.pattern.eq(Cat(carries[:len(addresses.pattern)]))]
                for i, digit in enumerate(odometer.digits):
                    room, room_less = odometer.rooms[i]
                    m.d.sync += [digit.eq(new_digits[i]), room.eq(new_rooms[i][0]), room_less.eq(new_rooms[i][1])]
