"""The copy unit: descriptor file, front end, walker and datapath joined.

Read a request's path in this order: :mod:`.regfile` (the tensor map is written over
Wishbone), :mod:`.frontend` (the request is accepted, its descriptor snapshotted and
checked; the im2col pixel walk set up, :mod:`.pixelwalk`), :mod:`.walker` (the box is
walked ``lanes`` chunks a cycle), :mod:`.datapath` (coordinates, bounds by :mod:`.oob`,
addresses, swizzle, then beats and the completion).

Reset (the ``sync`` domain's) is an abort: every request in flight is abandoned, with no
more beats and no completion, and the status registers and SLOT_VALID clear; the slot
memory keeps its contents, but each slot must be written again before it can be made
valid (docs/registers.md, "Reset").
"""

from amaranth.hdl import Module, Signal, ResetSignal
from amaranth.lib import wiring, stream
from amaranth.lib.wiring import In, Out, connect

from ..model.config import UnitConfig
from .bus import WishboneSignature
from ..model.timing import back_end_stages
from .datapath import Datapath
from .frontend import FrontEnd, STAGES as FRONT_END_STAGES
from .layouts import RequestLayout, CompletionLayout, beat_layout
from .regfile import DescriptorFile, ReportSignature, bus_addr_width
from .walker import Walker

__all__ = ["TmaUnit", "in_flight_limit"]


def in_flight_limit(config: UnitConfig) -> int:
    """The most requests the unit can hold between accepting one and its completion being
    taken: the width of STATUS.BUSY's count.

    A request takes at least one place of its own on the way, and every place holds one
    at most: a front-end stage (the job register is the last of them), the skid register
    behind the job register (a request interval of 1), the walker's current job, the
    walk register and datapath stages A0 to B2 and a request former's (a rejected
    request or a box of one beat is a single record), an entry of the beat queue, an
    entry of the completion queue. A bound, not the exact
    figure (the datapath's credits keep the records past the walker within the beat
    queue's entries): a count a bit too wide costs a flip-flop, one too narrow wraps to
    0 with requests in flight."""
    return (FRONT_END_STAGES[config.request_interval]   # stages 1 to 10 or 11, the job register the last
            + int(config.request_interval == 1)     # the front end's skid register
            + 1                         # the walker's job
            + back_end_stages(config) - 1   # the walk register to the queue (the queue counted next)
            + config.beat_queue         # the beat queue's entries
            + config.completion_depth)  # the completion queue's entries


class TmaUnit(wiring.Component):
    """The TMA address-generation and swizzle unit.

    Parameters
    ----------
    config : UnitConfig
        Lanes, descriptor slots, address widths (``tma_unit.model.config``).

    Ports
    -----
    bus : Wishbone target (docs/registers.md)
    requests : stream in (``RequestLayout``)
    beats : stream out (``beat_layout(config)``): ``lanes`` 16-byte chunk transactions a beat
    completions : stream out (``CompletionLayout``): one per request, in request order

    In a cycle the ``sync`` domain's reset is asserted no stream transfers anything:
    ``requests.ready``, ``beats.valid`` and ``completions.valid`` are 0.
    """

    def __init__(self, config: UnitConfig = UnitConfig()):
        if not isinstance(config, UnitConfig):
            raise TypeError(f"config must be a UnitConfig, not {config!r}")
        self.config = config
        super().__init__({
            "bus": In(WishboneSignature(bus_addr_width(config))),
            "requests": In(stream.Signature(RequestLayout)),
            "beats": Out(stream.Signature(beat_layout(config))),
            "completions": Out(stream.Signature(CompletionLayout)),
        })

    def elaborate(self, platform):
        m = Module()
        config = self.config
        m.submodules.regfile = regfile = DescriptorFile(config)
        m.submodules.frontend = frontend = FrontEnd(config)
        m.submodules.walker = walker = Walker(config)
        m.submodules.datapath = datapath = Datapath(config)

        connect(m, wiring.flipped(self.bus), regfile.bus)
        connect(m, frontend.snapshot, regfile.snapshot)
        connect(m, frontend.job, walker.job)
        connect(m, frontend.table, datapath.table)
        connect(m, walker.walk, datapath.walk)
        self._ports(m, frontend, datapath)
        self._report(m, regfile)
        return m

    def _ports(self, m, frontend, datapath):
        """The unit's streams, joined to the blocks' with their handshakes cut by reset.
        Reset is an abort: the registers that say a stage holds work clear, so nothing in
        flight goes on. In the reset cycle itself they still hold what they held, so the
        streams' handshakes are cut there: a request offered is not taken, and no beat or
        completion of a request being abandoned leaves (docs/registers.md, "Reset"). The
        blocks see the handshakes the ports see."""
        resetting = ResetSignal()
        m.d.comb += [
            frontend.requests.payload.eq(self.requests.payload),
            frontend.requests.valid.eq(self.requests.valid),
            self.requests.ready.eq(frontend.requests.ready & ~resetting),
        ]
        for inner, outer in ((datapath.beats, self.beats), (datapath.completions, self.completions)):
            m.d.comb += [outer.payload.eq(inner.payload), outer.valid.eq(inner.valid & ~resetting),
                         inner.ready.eq(outer.ready & ~resetting)]

    def _report(self, m, regfile):
        """What the status registers count, at the unit's ports, so it covers every stage
        between them (the front end's stages, the completion queue) and no block has to
        report its own: a completion when it is taken, and STATUS.BUSY, the requests
        accepted whose completions are not taken yet."""
        accepted = self.requests.valid & self.requests.ready
        taken = self.completions.valid & self.completions.ready
        # The two handshakes are registered before the count's add, which adds them a
        # cycle late: they come from the unit's two ends (the request port, the completion
        # queue), and their routes into one add were the board top's longest path
        # (docs/fpga.md, "Clock speed"). `count` adds them back, so STATUS.BUSY reads in
        # the same cycle as without the registers.
        accepted_last, taken_last = Signal(name="accepted_last"), Signal(name="taken_last")
        in_flight = Signal(range(in_flight_limit(self.config) + 1))
        count = Signal.like(in_flight, name="in_flight_count")
        m.d.comb += count.eq(in_flight + accepted_last - taken_last)
        m.d.sync += [accepted_last.eq(accepted), taken_last.eq(taken), in_flight.eq(count)]
        report = ReportSignature(self.config).create(path=("report",))
        connect(m, report, regfile.report)
        m.d.comb += [
            report.taken.eq(taken),
            report.code.eq(self.completions.payload.status),
            report.request_id.eq(self.completions.payload.request_id),
            report.busy.eq(count != 0),
        ]
