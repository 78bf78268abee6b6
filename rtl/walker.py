"""The coordinate iterator: walks a job's box in the transaction order of
docs/transactions.md, ``lanes`` chunks a cycle.

The box is an odometer of five digits: the chunk within the row (radix: chunks per row),
then the box's dimensions 1..4 (radix: elements traversed in each; gather4 has four rows
in digit 1). Chunk ``n`` of the box is the odometer standing at ``n``. Lane ``j`` starts at
``j`` and every beat steps by ``lanes``: its digits add the digits of ``lanes`` in the same
mixed radix, so each digit carries at most one, and the carries are looked ahead (each
digit computes both sums; the carry chain is then plain logic). A lane whose odometer
runs past its last digit is done; when lane 0 is done, so is the box.

The access modes differ only in how a row's coordinates are found. Tiled and gather4 rows
come from the digits (the datapath multiplies them by the element strides). The im2col
modes put the pixel index in digit 1 (radix: pixels plus halo pixels) and add a *pixel
walk*: a second small odometer over W, H, D and N that steps one pixel at a time with
adds and compares only (no division), as PTX 5.5.4 and 5.5.5 describe it: a spatial
position steps by its traversal stride, restarts at its lower bound when it reaches its
end and carries into the next; N counts the carries; halo pixels follow each group of
main pixels without restarting. The walker keeps the position of lane 0's pixel; the
pixels of the other lanes of a beat are the next ``lanes - 1`` positions (a beat's lanes
hold consecutive chunks, so their pixels are consecutive), computed each cycle as a chain
of single steps, and the next beat's lane-0 pixel is the chain's entry for the pixel
count lane 0 advanced by.
"""

from amaranth.hdl import Module, Signal, Const, Mux, Array, Cat, unsigned, signed
from amaranth.lib import wiring, stream, data
from amaranth.lib.wiring import In, Out

from ..model.config import UnitConfig
from .arith import less_than
from .pipeline import copies
from .layouts import (job_layout, beat_constants_layout, DIGITS, RADIX_WIDTH, SPATIAL, PIXEL_COORD,
                      HALO_WIDTH)

__all__ = ["Walker", "walk_layout", "completion_info_layout", "pixel_state_layout", "pixel_walk_ahead",
           "at_limit", "pixel_step"]

HALO_OFFSET_WIDTH = HALO_WIDTH + 3      # halo pixels times a traversal stride (<= 8)
#: Groups of the job register's bits, each loaded by a copy of `take` of its own.
JOB_LOAD_GROUPS = 4


def pixel_state_layout() -> data.StructLayout:
    """Where the pixel walk stands: the main position (dimensions 1..4), and the halo."""
    return data.StructLayout({
        "position": data.ArrayLayout(PIXEL_COORD, 4),
        "halo_index": unsigned(HALO_WIDTH),     # 0: a main pixel; k: the k-th halo pixel
        "halo_offset": unsigned(HALO_OFFSET_WIDTH),     # k times the W stride
        "group_index": unsigned(RADIX_WIDTH),   # main pixels of this group before this one
        # spatial dimension i's position is at or past its limit: it restarts rather than
        # steps. Kept beside the position, so a step reads a bit and not a compare; the
        # same for the halo and group counts' compares
        "wrap": unsigned(SPATIAL),
        "in_halo": 1,           # halo_index != 0
        "halo_more": 1,         # halo_index != the walk's halo: another halo pixel follows
        "group_end": 1,         # group_index == the walk's group_last
    })


def pixel_walk_ahead(walk, target):
    """Assignments that set the pixel walk ``target``'s read-ahead fields
    (``pixel_walk_layout``) from the walk ``walk``: per spatial dimension ``limit -
    stride`` and whether ``low`` and ``start`` are at or past the limit. The front end
    makes them a stage before the job register, so the walker has no compare in series
    with a pixel step nor with a job's load (:func:`pixel_step`)."""
    return ([target.step_limit[i].eq(walk.limit[i] - walk.stride[i]) for i in range(SPATIAL)]
            + [target.low_wraps.eq(at_limit(walk, walk.low)), target.start_wraps.eq(at_limit(walk, walk.start)),
               target.has_halo.eq(walk.halo != 0), target.halo_less_one.eq(walk.halo - 1),
               target.group_single.eq(walk.group_last == 0), target.group_before_last.eq(walk.group_last - 1)])


def first_pixel(state, walk):
    """Assignments that set the pixel state ``state`` to the first of the walk ``walk``
    (its read-ahead fields set): the start position, no halo, the group's first pixel."""
    return ([state.eq(0), state.wrap.eq(walk.start_wraps), state.halo_more.eq(walk.has_halo),
             state.group_end.eq(walk.group_single)]
            + [state.position[i].eq(walk.start[i]) for i in range(4)])


def at_limit(walk, positions):
    """Per spatial dimension, whether ``positions[i]`` is at or past the walk's limit (a
    pixel state's ``wrap`` bits)."""
    return Cat(~less_than(positions[i], walk.limit[i]) for i in range(SPATIAL))


def pixel_step(m, state, walk, name):
    """The pixel after ``state`` in the walk ``walk`` (``pixel_walk_layout``, its
    read-ahead fields set), as a new signal named ``name``: a halo pixel while the
    group's halo lasts, else the next main position (W steps; a restart carries into H,
    D, then N).

    A count that holds while another moves adds zero rather than being picked beside its
    step: a multiplexer with a register's own value on one side becomes that register's
    enable in Yosys, and the pixel registers' enable would be the whole step's logic,
    one net to some 150 flip-flops (docs/fpga.md, "Clock speed")."""
    after = Signal(pixel_state_layout(), name=name)
    in_halo, group_end = state.in_halo, state.group_end
    to_halo = Mux(in_halo, state.halo_more, group_end & walk.has_halo)
    carry = ~to_halo
    for i in range(4):
        position = state.position[i]
        moves = carry & (walk.walks[i] | walk.counts[i])
        stepped = position + Mux(moves, walk.stride[i], 0)
        passes = ~walk.counts[i]
        if i < SPATIAL:             # dimension 4 is never spatial (rank 5: W, H, D are 1..3)
            wrap = state.wrap[i]
            restarts = walk.walks[i] & wrap
            stepped = Mux(moves & restarts, walk.low[i], stepped)
            passes = passes & (~walk.walks[i] | wrap)
            # the next position's wrap bit, decided beside the step, not after it
            next_wrap = Mux(restarts, walk.low_wraps[i], ~less_than(position, walk.step_limit[i]))
            m.d.comb += after.wrap[i].eq(Mux(moves, next_wrap, wrap))
        m.d.comb += after.position[i].eq(stepped)
        carry = carry & passes
    # the halo and group bits of the next state, from compares with the current one's
    # counts beside the step (halo_index + 1 != halo, group_index + 1 == group_last)
    restarts_group = ~to_halo & (in_halo | group_end)
    m.d.comb += [
        after.halo_index.eq(Mux(to_halo, state.halo_index + 1, 0)),
        after.halo_offset.eq(Mux(to_halo, state.halo_offset + walk.stride[0], 0)),
        after.group_index.eq(Mux(restarts_group, 0, state.group_index + ~to_halo)),
        after.in_halo.eq(to_halo),
        after.halo_more.eq(Mux(to_halo, state.halo_index != walk.halo_less_one, walk.has_halo)),
        after.group_end.eq(Mux(to_halo, group_end,
                               Mux(restarts_group, walk.group_single, state.group_index == walk.group_before_last))),
    ]
    return after


def pixel_coordinates(state):
    """The coordinates (dimensions 1..4) the pixel ``state`` reads."""
    return [state.position[0] + state.halo_offset] + [state.position[i] for i in range(1, 4)]


def completion_info_layout(config: UnitConfig) -> data.StructLayout:
    return data.StructLayout({"request_id": config.id_width, "code": 8, "transaction_bytes": 32})


def walk_layout(config: UnitConfig) -> data.StructLayout:
    """One cycle of the walk: every lane's digits, and the beat's job constants."""
    return data.StructLayout({
        "is_beat": 1,
        "last": 1,
        "lane_alive": config.lanes,
        "lane_digits": data.ArrayLayout(data.ArrayLayout(RADIX_WIDTH, DIGITS), config.lanes),
        "lane_pixel": data.ArrayLayout(data.ArrayLayout(PIXEL_COORD, 4), config.lanes),   # im2col modes
        "beat_index": 32,           # beats of this job before this one
        "beat": beat_constants_layout(config),
        "has_completion": 1,
        "completion": completion_info_layout(config),
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
    return data.View(pixel_state_layout(), Array(state.as_value() for state in states)[index])


class Walker(wiring.Component):
    """Job in, one walk record a cycle out (when ``issue``).

    Ports
    -----
    job : stream in
    issue_next : in
        The walker may emit a record in the next cycle: the datapath will hold a credit
        for it. The walker keeps the credit in registers of its own, beside its state, so
        nothing the beat stream's ready does reaches the walker in the same cycle, and
        the credit's route from the beat queue ends at a register.
    walk : out (``walk_layout``), walk_valid : out
        ``walk_valid`` is high for one cycle per record emitted.
    """

    def __init__(self, config: UnitConfig):
        self.config = config
        super().__init__({
            "job": In(stream.Signature(job_layout(config))),
            "issue_next": In(1),
            "walk": Out(walk_layout(config)),
            "walk_valid": Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        config = self.config
        lanes = config.lanes

        current = Signal(job_layout(config))
        busy = Signal()
        digits = [[Signal(RADIX_WIDTH, name=f"lane{j}_digit{i}") for i in range(DIGITS)] for j in range(lanes)]
        alive = Signal(lanes)
        beat_index = Signal(32)

        error = current.code != 0
        rooms = [[(Signal(ROOM, name=f"lane{j}_room{i}"), Signal(ROOM, name=f"lane{j}_room_less{i}"))
                  for i in range(DIGITS)] for j in range(lanes)]
        # the job's step and safe values plus one, loaded with the job (odometer_step)
        plus_one = Signal(data.StructLayout({"step": data.ArrayLayout(RADIX_WIDTH + 1, DIGITS),
                                             "safe": data.ArrayLayout(RADIX_WIDTH + 1, DIGITS)}))
        stepped = [odometer_step(digits[j], rooms[j], current.step_digits, current.step_safe, plus_one)
                   for j in range(lanes)]
        next_alive = Signal(lanes)
        for j in range(lanes):
            m.d.comb += next_alive[j].eq(alive[j] & ~stepped[j][2][-1] & ~current.step_overflow)
        # the job's last record, known from a count of them rather than from the odometer,
        # so taking the next job does not wait on the odometer's carries
        remaining = Signal(32)
        last = Signal()
        two_left = Signal()         # remaining == 2, a register so that `take` has no compare
        # the walker takes a job in a cycle it may emit: it is idle or emits a job's last
        # record. `free` is that (~busy | last), kept as a register of its own beside them,
        # so the choice between loading a job and stepping the walk is two registers' AND
        # and not logic behind `last` (docs/fpga.md, "Clock speed")
        free = Signal(init=1)
        # the credit, kept here as well as in the datapath (whose register is by the beat
        # queue, some 40 rows away after placement): `hold`, no credit this cycle (its
        # complement, so that Yosys does not merge it with the datapath's), enables the
        # walk's state; `take`, a credit while free, is the job stream's ready and the job
        # registers' enable, made a cycle ahead so that it is a register too. The job
        # registers are some 2,000 flip-flops spread over the chip, so `take` is kept in
        # one register per group of them (docs/fpga.md, "Clock speed")
        hold = Signal()
        issue = ~hold
        free_next = Signal()
        m.d.comb += free_next.eq(Mux(issue, Mux(free, ~self.job.valid | self.job.payload.one_beat, two_left),
                                     free))
        m.d.sync += [hold.eq(~self.issue_next), free.eq(free_next)]
        takes = copies(m, self.issue_next & free_next, 1 + JOB_LOAD_GROUPS, "take", init=1)
        take = takes[0]
        m.d.comb += self.job.ready.eq(take)

        # the pixel walk: lane 0's pixel, and the chain of the pixels after it
        pixel = Signal(pixel_state_layout())
        window = [pixel]
        for k in range(lanes):
            window.append(pixel_step(m, window[-1], current.pixels, f"pixel_plus{k + 1}"))
        index_bits = (lanes - 1).bit_length()
        lane_pixel = []
        for j in range(lanes):
            if index_bits:      # lane j's pixel is (its digit 1 - lane 0's) pixels after lane 0's
                offset = (digits[j][1] - digits[0][1])[:index_bits]
                lane_pixel.append(_select(window[:lanes], offset))
            else:
                lane_pixel.append(pixel)
        # the pixels lane 0 advanced: digit 1's step plus the carry into it (digit 1 wraps
        # only where lane 0's job ends, so no wrap need be taken off). The step and the
        # step plus one are both registers, so the carry picks one and no add stands
        # between it and the pixel registers' enables
        advanced = Mux(stepped[0][2][0], plus_one.step[1], current.step_digits[1])[:index_bits + 1]   # 0..lanes
        # entries past `lanes` never occur; they repeat the last so every index selects one
        next_pixel = _select(window + [window[-1]] * ((1 << len(advanced)) - len(window)), advanced)

        # the datapath's stages move every cycle: a record is valid for one cycle only, and
        # the walk register loads in every cycle (its valid bit qualifies it), so the
        # credit enables only the walker's own state
        m.d.sync += self.walk_valid.eq(busy & issue)
        record = Signal(walk_layout(config), reset_less=True)
        m.d.comb += self.walk.eq(record)
        m.d.sync += [
            record.is_beat.eq(~error),
            record.last.eq(last),
            record.lane_alive.eq(alive),
            record.beat_index.eq(beat_index),
            record.beat.eq(current.beat),
            record.has_completion.eq(last),
            record.completion.request_id.eq(current.beat.request_id),
            record.completion.code.eq(current.code),
            record.completion.transaction_bytes.eq(current.transaction_bytes),
        ]
        for j in range(lanes):
            for i in range(DIGITS):
                m.d.sync += record.lane_digits[j][i].eq(digits[j][i])
            for i, value in enumerate(pixel_coordinates(lane_pixel[j])):
                m.d.sync += record.lane_pixel[j][i].eq(value)
        # the job's constants, in groups of bits each loaded by a `take` of its own
        job_bits, payload_bits = current.as_value(), self.job.payload.as_value()
        for group in range(JOB_LOAD_GROUPS):
            bits = slice(group * len(job_bits) // JOB_LOAD_GROUPS, (group + 1) * len(job_bits) // JOB_LOAD_GROUPS)
            with m.If(takes[1 + group]):
                m.d.sync += job_bits[bits].eq(payload_bits[bits])
        with m.If(take):
            m.d.sync += [plus_one.step[i].eq(self.job.payload.step_digits[i] + 1) for i in range(DIGITS)]
            m.d.sync += [plus_one.safe[i].eq(self.job.payload.step_safe[i] + 1) for i in range(DIGITS)]
        with m.If(issue):
            # where the walk stands next: a new job's start (`free`: `take` is high), or the
            # step
            with m.If(free):
                m.d.sync += [busy.eq(self.job.valid), beat_index.eq(0), alive.eq(self.job.payload.lane_alive),
                             remaining.eq(self.job.payload.beats), last.eq(self.job.payload.one_beat),
                             two_left.eq(self.job.payload.beats == 2)]
                m.d.sync += first_pixel(pixel, self.job.payload.pixels)
                for j in range(lanes):
                    for i in range(DIGITS):
                        start, safe = self.job.payload.lane_digits[j][i], self.job.payload.step_safe[i]
                        m.d.sync += [digits[j][i].eq(start), rooms[j][i][0].eq(safe - start),
                                     rooms[j][i][1].eq(safe - start - 1)]
            with m.Else():      # not free: busy
                m.d.sync += [alive.eq(next_alive), beat_index.eq(beat_index + 1), pixel.eq(next_pixel),
                             remaining.eq(remaining - 1), last.eq(two_left), two_left.eq(remaining == 3)]
                for j in range(lanes):
                    for i in range(DIGITS):
                        m.d.sync += [digits[j][i].eq(stepped[j][0][i]), rooms[j][i][0].eq(stepped[j][1][i][0]),
                                     rooms[j][i][1].eq(stepped[j][1][i][1])]
        return m
