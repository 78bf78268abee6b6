"""The im2col pixel walk (PTX 5.5.4, 5.5.5; docs/architecture.md, "The pixel walk"): where
a box's pixels are, found one step at a time by adds and compares only, never a division.

A walk (``pixel_walk_layout``, set up by the front end from the descriptor and the
request) gives each of tensor dimensions 1..4 a role: a spatial dimension steps by its
traversal stride through ``[low, end)``, restarting at ``low`` and carrying into the next;
N counts the carries; halo pixels follow each group of main pixels without restarting.
A pixel state (:func:`pixel_state_layout`) is where the walk stands. The front end reads
the walk's compares ahead (:func:`pixel_walk_ahead`), so the walker, which steps the
state (:func:`pixel_step`), has no compare in series with a step.
"""

from amaranth.hdl import Signal, Mux, Cat, unsigned
from amaranth.lib import data

from .arith import less_than, kept_unless
from .layouts import RADIX_WIDTH, SPATIAL, PIXEL_COORD, PIXEL_DIMENSIONS, PIXEL_PARTS, HALO_WIDTH, steps_pixels

__all__ = ["pixel_state_layout", "pixel_walk_ahead", "first_pixel", "at_limit", "pixel_step", "pixel_coordinates"]

HALO_OFFSET_WIDTH = HALO_WIDTH + 3      # halo pixels times a traversal stride (<= 8)


def pixel_state_layout(config=None) -> data.StructLayout:
    """Where the pixel walk stands: the main position (dimensions 1..4), and the halo.
    A unit that steps addresses (:func:`.layouts.steps_pixels`) keeps beside them each
    dimension's part of the row address and the halo's (``address``: dimensions 1..4,
    then the halo; :mod:`.stepping`)."""
    addresses = {"address": data.ArrayLayout(config.address_width, PIXEL_PARTS)} if steps_pixels(config) else {}
    return data.StructLayout({
        "position": data.ArrayLayout(PIXEL_COORD, PIXEL_DIMENSIONS),
        "halo_index": unsigned(HALO_WIDTH),     # 0: a main pixel; k: the k-th halo pixel
        "halo_offset": unsigned(HALO_OFFSET_WIDTH),     # k times the W stride
        "group_index": unsigned(RADIX_WIDTH),   # main pixels of this group before this one
        # Bits kept beside the counts, so that a step reads bits and not compares.
        # Spatial dimension i passes a carry on to the next one: for a dimension that
        # walks, its position is at or past its limit (it restarts rather than steps);
        # N (counts) never passes one, a held dimension always does
        "passes": unsigned(SPATIAL),
        "in_halo": 1,           # halo_index != 0
        "halo_more": 1,         # halo_index != the walk's halo: another halo pixel follows
        "group_end": 1,         # group_index == the walk's group_last
        "to_halo": 1,           # the next pixel is a halo pixel
        **addresses,
    })


def pixel_walk_ahead(walk, target):
    """Assignments that set the pixel walk ``target``'s read-ahead fields
    (``pixel_walk_layout``) from the walk ``walk``: per spatial dimension ``limit -
    stride``, whether ``low`` is at or past the limit, and the first pixel's ``passes``
    bits (``start`` at or past the limit where the dimension walks). The front end makes
    them from stage 9's job into stage 10's registers, so the walker has no compare in
    series with a pixel step nor with a job's load (:func:`pixel_step`)."""
    start_passes = Cat(Mux(walk.walks[i], at, ~walk.counts[i]) for i, at in enumerate(at_limit(walk, walk.start)))
    return ([target.step_limit[i].eq(walk.limit[i] - walk.stride[i]) for i in range(SPATIAL)]
            + [target.low_wraps.eq(at_limit(walk, walk.low)), target.start_passes.eq(start_passes),
               target.has_halo.eq(walk.halo != 0), target.halo_less_one.eq(walk.halo - 1),
               target.group_single.eq(walk.group_last == 0), target.group_before_last.eq(walk.group_last - 1)])


def first_pixel(state, walk):
    """Assignments that set the pixel state ``state`` to the first of the walk ``walk``
    (its read-ahead fields set): the start position, no halo, the group's first pixel."""
    stepped = "address" in state.shape().members
    return ([state.eq(0), state.passes.eq(walk.start_passes), state.halo_more.eq(walk.has_halo),
             state.group_end.eq(walk.group_single), state.to_halo.eq(walk.group_single & walk.has_halo)]
            + [state.position[i].eq(walk.start[i]) for i in range(PIXEL_DIMENSIONS)]
            + ([state.address[i].eq(walk.address_start[i]) for i in range(PIXEL_DIMENSIONS)] if stepped else []))


def at_limit(walk, positions):
    """Per spatial dimension, whether ``positions[i]`` is at or past the walk's limit."""
    return Cat(~less_than(positions[i], walk.limit[i]) for i in range(SPATIAL))


def pixel_step(m, state, walk, name):
    """The pixel after ``state`` in the walk ``walk`` (``pixel_walk_layout``, its
    read-ahead fields set), as a new signal named ``name``: a halo pixel while the
    group's halo lasts, else the next main position (W steps; a restart carries into H,
    D, then N).

    Each dimension's next value is made from registers alone (the add of its stride, or
    its restart at ``low``) beside the logic that decides whether it moves, and that
    decision, an AND of the state's ``to_halo`` and ``passes`` bits and the walk's roles,
    only picks between it and the held value. The pick is written with XORs
    (:func:`kept_unless`), not a multiplexer: Yosys makes a multiplexer with a register's
    own value on one side that register's enable, and the pixel registers' enables would
    then be the whole carry's logic (docs/fpga.md, "Clock speed").

    A state with address parts steps them beside the positions: a move adds the walk's
    ``address_step``, a restart loads ``address_low``, a halo pixel adds W's step to the
    halo's part, which a main pixel clears."""
    layout = state.shape()
    stepped_addresses = "address" in layout.members
    after = Signal(layout, name=name)
    in_halo, group_end, to_halo = state.in_halo, state.group_end, state.to_halo
    carry = ~to_halo
    for i in range(PIXEL_DIMENSIONS):
        position = state.position[i]
        moves = carry & (walk.walks[i] | walk.counts[i])
        moved = position + walk.stride[i]
        part = None
        if stepped_addresses:
            part = state.address[i] + walk.address_step[i]
        if i < SPATIAL:             # dimension 4 is never spatial (rank 5: W, H, D are 1..3)
            passes = state.passes[i]
            restarts = walk.walks[i] & passes
            moved = Mux(restarts, walk.low[i], moved)
            if part is not None:
                part = Mux(restarts, walk.address_low[i], part)
            # whether the next position is at or past the limit, decided beside the step
            next_wraps = Mux(restarts, walk.low_wraps[i], ~less_than(position, walk.step_limit[i]))
            m.d.comb += after.passes[i].eq(Mux(moves & walk.walks[i], next_wraps, passes))
            carry = carry & passes
        m.d.comb += after.position[i].eq(kept_unless(moves, moved, position))
        if part is not None:
            m.d.comb += after.address[i].eq(kept_unless(moves, part, state.address[i]))
    # the halo and group bits of the next state, from compares with the current one's
    # counts beside the step (halo_index + 1 != halo, group_index + 1 == group_last)
    restarts_group = ~to_halo & (in_halo | group_end)
    halo_more = Mux(to_halo, state.halo_index != walk.halo_less_one, walk.has_halo)
    group_end_next = Mux(to_halo, group_end,
                         Mux(restarts_group, walk.group_single, state.group_index == walk.group_before_last))
    m.d.comb += [
        after.halo_index.eq(Mux(to_halo, state.halo_index + 1, 0)),
        after.halo_offset.eq(Mux(to_halo, state.halo_offset + walk.stride[0], 0)),
        after.group_index.eq(Mux(restarts_group, 0, state.group_index + ~to_halo)),
        after.in_halo.eq(to_halo),
        *([after.address[PIXEL_DIMENSIONS].eq(Mux(to_halo, state.address[PIXEL_DIMENSIONS] + walk.address_step[0], 0))]
          if stepped_addresses else []),
        after.halo_more.eq(halo_more),
        after.group_end.eq(group_end_next),
        # the pixel after that one is a halo pixel: the next of this halo, or the first
        # after the group's last main pixel where the walk has a halo (from the values
        # above, not read back from `after`, whose bits would then loop in one signal)
        after.to_halo.eq(Mux(to_halo, halo_more, group_end_next & walk.has_halo)),
    ]
    return after


def pixel_coordinates(state):
    """The coordinates (dimensions 1..4) the pixel ``state`` reads."""
    return [state.position[0] + state.halo_offset] + [state.position[i] for i in range(1, PIXEL_DIMENSIONS)]
