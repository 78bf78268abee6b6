"""The commit checker (``UnitConfig.checks == "at_commit"``): the rules that read the
descriptor alone, checked once per descriptor instead of once per request.

When a SLOT_VALID write sets the bit of a slot that was not valid, the descriptor file
(rtl/regfile.py) holds the write's answer and runs this checker on the slot: it finds
the first broken rule of :func:`.validate.descriptor_rules` and whether the tensor's last
byte passes the address width (ADDRESS_WRAP), and the descriptor file stores both beside
the slot. A request on the slot then reads them with its snapshot, and the front end
checks only the rules that involve the request (docs/commit.md).

The checker is small on purpose: it is used once per descriptor, so it takes its time.

* The descriptor is read once, as the check starts, through the checker's own read
  port on the slots' rows, and registered in the fabric the cycle after: the rows are
  block RAM, whose output comes late in the cycle, and the decode behind it would be
  the unit's longest path (docs/commit.md, "What it costs and saves"). The register
  holds still for the whole
  check, so the decode (:mod:`.decode`) is combinational logic on it, with a register
  behind each product, and the rules read it once it has settled.
* The five wide products the rules need, ``(dim[i] - 1) * stride[i-1]`` for i = 1..4,
  summed into the stride extents and the tensor's last byte, are made one after another
  by one adder, a bit of ``dim[i] - 1`` a cycle (shift and add): no DSP block, and one
  76-bit adder where the front end of a unit checking per request has the adder trees
  of sixteen partial products.

Its cycles, from the cycle it starts (:data:`CHECK_CYCLES`, model/timing.py):

1. the read of the slot is issued (the descriptor file drives the read port);
2. the slot's row, out of the block RAM, into the checker's register;
3. the multiplier's registers load the first product's operands;
4. to 135. four products of :data:`MULTIPLY_BITS` cycles, each followed by a cycle that
   adds it into its extent and into the last byte and loads the next operands;
136. every rule's bit registered, and the address-wrap test;
137. the first broken rule: ``done``, with the result.
"""

from amaranth.hdl import Module, Signal, Array, Const, Cat, Mux, signed, unsigned
from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out

from ..model.config import UnitConfig
from ..model.errors import ErrorCode
from ..model.tensormap import MAX_RANK
from ..model.timing import CHECK_CYCLES
from .decode import decode_early, decode_fields, decode_counts, decode_rows, decode_row_bytes
from .layouts import DescriptorLayout
from .pipeline import Delayed, settled
from .validate import SPAN_WIDTH, descriptor_rules, address_wraps, first_broken

__all__ = ["CommitChecker", "CheckLayout", "MULTIPLY_BITS", "PRODUCTS"]

#: What a check finds, stored beside the slot: the first broken descriptor rule (0: none)
#: and whether the tensor's last byte passes the address width (ADDRESS_WRAP, the last
#: rule of all, so it is kept apart).
CheckLayout = data.StructLayout({"code": unsigned(8), "wraps": unsigned(1)})

#: Bits of the multiplier, a dimension's size less one as the descriptor stores it.
MULTIPLY_BITS = 32
#: Products made: dimensions 1..4 by the stride below each.
PRODUCTS = MAX_RANK - 1
assert CHECK_CYCLES == 3 + PRODUCTS * (MULTIPLY_BITS + 1) + 2, "the cycles listed in the docstring above"


class CommitChecker(wiring.Component):
    """One descriptor in, its first broken rule out.

    Ports
    -----
    start : in, a cycle: a check starts (the descriptor's read is issued in this cycle)
    descriptor : in (``DescriptorLayout``): the slot, in the next cycle (registered then)
    done : out, a cycle: ``result`` holds the check's result
    result : out (:data:`CheckLayout`)
    """

    def __init__(self, config: UnitConfig):
        self.config = config
        super().__init__({
            "start": In(1),
            "descriptor": In(DescriptorLayout),
            "done": Out(1),
            "result": Out(CheckLayout),
        })

    def elaborate(self, platform):
        m = Module()

        def product(a, b, registered_inputs=True):
            # the descriptor holds still, so a product is the register behind a multiply,
            # read when it has settled (the rules need only dimension 0's count)
            p = Signal(len(a) + len(b))
            m.d.sync += p.eq(a * b)
            return Delayed(p, 1)

        # the slot's row is registered the cycle after the read (cycle 2), and the check
        # proper starts the cycle after that
        reading, loading = Signal(name="reading"), Signal(name="loading")
        desc = Signal(DescriptorLayout, name="descriptor_held", reset_less=True)
        m.d.sync += [reading.eq(self.start), loading.eq(reading)]
        with m.If(reading):
            m.d.sync += desc.eq(self.descriptor)
        d = settled(decode_fields(desc, decode_early(desc), product))
        d = settled(decode_row_bytes(settled(decode_rows(decode_counts(d), product)), product))

        running, deciding, finishing = (Signal(name=n) for n in ("running", "deciding", "finishing"))
        dim = Signal(range(PRODUCTS), name="dim")
        bit = Signal(range(MULTIPLY_BITS + 1), name="bit")
        multiplier = Signal(MULTIPLY_BITS, name="multiplier")
        multiplicand = Signal(SPAN_WIDTH, name="multiplicand")
        term = Signal(SPAN_WIDTH, name="term")
        extents = [Signal(SPAN_WIDTH, name=f"extent{i + 1}") for i in range(PRODUCTS - 1)]
        last_byte = Signal(signed(SPAN_WIDTH), name="last_byte")

        dims_less_one = Array(d.dims_used_less_one[1:])   # 0 past the rank: a product of 0
        strides = Array(d.strides)

        def load(i):
            return [multiplier.eq(dims_less_one[i]), multiplicand.eq(strides[i]), term.eq(0), bit.eq(0)]

        m.d.sync += [deciding.eq(finishing), finishing.eq(0)]
        with m.If(loading):
            # the base address and dimension 0's bytes less one start the last byte
            m.d.sync += [*load(0), dim.eq(0), running.eq(1),
                         last_byte.eq(Cat(d.global_address, 0).as_signed() + d.dim0_last)]
        with m.Elif(running & (bit != MULTIPLY_BITS)):
            m.d.sync += [term.eq(term + Mux(multiplier[0], multiplicand, 0)),
                         multiplier.eq(multiplier >> 1), multiplicand.eq(multiplicand << 1), bit.eq(bit + 1)]
        with m.Elif(running):
            # the product is done: dimension dim + 1's extent, dim[i] * stride[i-1], is it
            # plus the stride; every product joins the last byte
            m.d.sync += last_byte.eq(last_byte + term)
            for i, extent in enumerate(extents):
                with m.If(dim == i):
                    m.d.sync += extent.eq(term + strides[i])
            with m.If(dim == PRODUCTS - 1):
                m.d.sync += [running.eq(0), finishing.eq(1)]
            with m.Else():
                m.d.sync += [*load(dim + 1), dim.eq(dim + 1)]

        rules = descriptor_rules(d, extents)
        broken = Signal(len(rules), name="broken")
        wraps = Signal(name="wraps")
        with m.If(finishing):
            m.d.sync += [broken.eq(Cat(condition for condition, _ in rules)),
                         wraps.eq(address_wraps(last_byte, self.config))]
        any_broken, code = first_broken([(broken[i], code) for i, (_, code) in enumerate(rules)])
        m.d.comb += [self.done.eq(deciding), self.result.code.eq(Mux(any_broken, code, ErrorCode.OK)),
                     self.result.wraps.eq(wraps)]
        return m
