"""Hypothesis strategies for legal tensor maps and requests: the campaign's generators
(``tma_unit.sim.generate``) drawn through hypothesis, so the property tests explore what
the campaign explores and hypothesis shrinks a failing case."""

from hypothesis import HealthCheck, strategies as st

from tma_unit.model.layout import REQUEST_FIELDS
from tma_unit.sim import generate
from tma_unit.sim.generate import CASE_KINDS


class HypothesisDraw:
    """The generators' ``draw`` (``integers``, ``choice``, ``boolean``) over hypothesis's."""

    def __init__(self, draw):
        self.draw = draw

    def integers(self, low: int, high: int) -> int:
        return self.draw(st.integers(low, high))

    def choice(self, sequence):
        return self.draw(st.sampled_from(sorted(sequence) if isinstance(sequence, (set, frozenset)) else sequence))

    def boolean(self) -> bool:
        return self.draw(st.booleans())


#: The health checks a test that draws whole scenarios or boxes turns off: a draw is large
#: and slow by nature (many requests, each a descriptor and its fields).
LARGE = [HealthCheck.too_slow, HealthCheck.data_too_large]

#: Each request field's width, from the payload's table.
WIDTHS = {f.name: f.width for f in REQUEST_FIELDS}


def _strategy(function):
    """A hypothesis strategy from a generator of :mod:`tma_unit.sim.generate`."""
    return st.composite(lambda draw, *args, **kwargs: function(HypothesisDraw(draw), *args, **kwargs))


tiled_cases = _strategy(generate.tiled_case)
im2col_cases = _strategy(generate.im2col_case)
wide_cases = _strategy(generate.wide_case)
gather4_cases = _strategy(generate.gather4_case)


@st.composite
def scenarios(draw, config, max_requests=6, legal_only=True, max_rows=16, kinds=CASE_KINDS):
    """A co-simulation scenario: up to ``max_requests`` requests of the ``kinds`` on their
    own slots, random backpressure and gaps. With ``legal_only`` False, some descriptors
    have a random field overwritten and some requests random fields, so many break a rule."""
    from tma_unit.model import encode_descriptor
    from tma_unit.model.layout import flat_fields
    from tma_unit.model.unit import fields_from_request
    from tma_unit.sim.cosim import Scenario
    choose = HypothesisDraw(draw)
    count = draw(st.integers(1, max_requests))
    images, requests = {}, []
    valid = 0
    for i in range(count):
        tm, req = generate.legal_case(choose, draw(st.sampled_from(kinds)), max_rows)
        slot = i % config.slots
        image = encode_descriptor(tm)
        fields = fields_from_request(req.__class__(**{**req.__dict__, "request_id": i}), slot)
        keep_valid = True
        if not legal_only and draw(st.booleans()):
            if draw(st.booleans()):
                name, offset, width, _ = draw(st.sampled_from(list(flat_fields())))
                bits = int.from_bytes(image, "little") & ~(((1 << width) - 1) << offset)
                image = (bits | (draw(st.integers(0, (1 << width) - 1)) << offset)).to_bytes(128, "little")
            else:
                key = draw(st.sampled_from(["operation", "mode", "reduce_op", "smem_address", "multicast_mask",
                                            "coordinates", "slot"]))
                if key == "coordinates":
                    fields["coordinates"] = [draw(st.integers(-(1 << 31), (1 << 31) - 1))] + fields["coordinates"][1:]
                elif key == "slot":
                    fields["slot"] = draw(st.integers(0, 255))
                else:
                    fields[key] = draw(st.integers(0, (1 << WIDTHS[key]) - 1))
            keep_valid = draw(st.integers(0, 3)) != 0
        images[slot] = image
        if keep_valid:
            valid |= 1 << slot
        requests.append(fields)
    return Scenario(config, images, valid, requests, seed=draw(st.integers(0, 1 << 16)),
                    ready_probability=draw(st.sampled_from([1.0, 0.7, 0.3])), max_gap=draw(st.integers(0, 3)))
