"""The whole unit's answer in the model (model/unit.py): the unit's own limits with their
exact messages, and the hardware request image."""

import pytest

from tma_unit.model import DataType, ErrorCode, MapKind, Operation, Request, TensorMap, encode_descriptor
from tma_unit.model.config import UnitConfig
from tma_unit.model.unit import check, complete, decode_request, encode_request, fields_from_request

from memory import peak_bytes

TM = TensorMap(MapKind.TILED, DataType.FLOAT16, 0xFFFF0000, (64, 32), (128,), (64, 16), (1, 1))
CONFIG = UnitConfig(address_width=32, smem_bytes=0x4000)


@pytest.mark.parametrize("image,request_,code,message", [
    (None, Request(Operation.LOAD, (0, 0)), ErrorCode.SLOT_INVALID,
     "SLOT_INVALID: slot = 0 holds no valid descriptor"),
    (encode_descriptor(TM), Request(Operation.LOAD, (0, 0), smem_address=0x3C00), ErrorCode.SMEM_BOUNDS,
     "SMEM_BOUNDS: smem_address = 0x3c00 puts the box's last byte at 0x43ff, past the 0x4000 bytes of shared memory"),
    (encode_descriptor(TM.replace(global_address=0xFFFFF100)), Request(Operation.LOAD, (0, 0)), ErrorCode.ADDRESS_WRAP,
     "ADDRESS_WRAP: global_address = 0xfffff100 puts the tensor's last byte at 0x1000000ff, past the 32-bit address space"),
])
def test_unit_limits(image, request_, code, message):
    result = complete(image, fields_from_request(request_, 0), CONFIG)
    assert result.status == code and str(result.error) == message
    assert result.transactions is None and result.transaction_bytes == 0


def test_legal_request_and_prefetch_ignores_shared_memory():
    ok = complete(encode_descriptor(TM), fields_from_request(Request(Operation.LOAD, (0, 0)), 0), CONFIG)
    assert ok.status == ErrorCode.OK and ok.transaction_bytes == 64 * 16 * 2
    far = fields_from_request(Request(Operation.PREFETCH, (0, 0), smem_address=0xFFFFF0), 0)
    assert complete(encode_descriptor(TM), far, CONFIG).status == ErrorCode.OK


#: A legal map whose box is 16 x 256^4 bytes: 2^32 rows, 64 GiB of shared memory.
HUGE = TensorMap(MapKind.TILED, DataType.UINT8, 0x1000, (16, 256, 256, 256, 256), (16, 4096, 1 << 20, 1 << 28),
                 (16, 256, 256, 256, 256), (1,) * 5)


def test_huge_box_is_refused_without_building_it():
    """A load of a box far larger than shared memory is SMEM_BOUNDS, found from the fields
    alone: check and complete hold under 1 MiB (building the rows took 32 GiB). A prefetch
    writes no shared memory, so check accepts it with its byte count, as cheaply."""
    image, config = encode_descriptor(HUGE), UnitConfig(address_width=48)
    load = fields_from_request(Request(Operation.LOAD, (0,) * 5), 0)
    result, peak = peak_bytes(lambda: check(image, load, config))
    assert result == (ErrorCode.SMEM_BOUNDS, 0) and peak < 1 << 20
    result, peak = peak_bytes(lambda: complete(image, load, config))
    assert (result.status, result.transaction_bytes, result.transactions) == (ErrorCode.SMEM_BOUNDS, 0, None)
    assert peak < 1 << 20
    prefetch = fields_from_request(Request(Operation.PREFETCH, (0,) * 5), 0)
    result, peak = peak_bytes(lambda: check(image, prefetch, config))
    assert result == (ErrorCode.OK, 16 << 32) and peak < 1 << 20


def test_huge_prefetch_completes_with_a_saturated_count():
    """The completion of a legal 2^36-byte prefetch: OK with the 32-bit field's largest
    count (docs/decisions.md), answered from the fields in under 1 MiB; its 2^32
    transactions are listed only when asked for."""
    image, config = encode_descriptor(HUGE), UnitConfig(address_width=48)
    prefetch = fields_from_request(Request(Operation.PREFETCH, (0,) * 5), 0)
    result, peak = peak_bytes(lambda: complete(image, prefetch, config))
    assert (result.status, result.transaction_bytes) == (ErrorCode.OK, (1 << 32) - 1) and peak < 1 << 20
    small = complete(encode_descriptor(TM), fields_from_request(Request(Operation.PREFETCH, (0, 0)), 0), CONFIG)
    assert small.transaction_bytes == 64 * 16 * 2 and len(small.transactions) == 64 * 16 * 2 // 16


def test_request_image_round_trip():
    request = Request(Operation.REDUCE, (-5, 7), smem_address=0x1230, reduce_op=4, request_id=0xBEEF)
    fields = decode_request(encode_request(request, 3))
    assert fields["slot"] == 3 and fields["coordinates"][:2] == [-5, 7] and fields["request_id"] == 0xBEEF
    assert fields["operation"] == Operation.REDUCE and fields["reduce_op"] == 4


@pytest.mark.parametrize("lanes", [1, 2, 4, 8])
def test_the_beats_counted_from_the_fields_are_the_transactions_beats(lanes):
    """``check_beats`` counts a request's beats from the fields alone (the timing model's
    records, a huge prefetch's included); on legal requests of every kind it agrees with
    the beats the transactions take (``Transactions.places``), and with a count derived
    here: rows times ceil(row chunks / lanes)."""
    from tma_unit.model.unit import check_beats
    from tma_unit.sim import generate
    from tma_unit.sim.generate import RandomDraw
    config = UnitConfig(lanes=lanes)
    for k in range(40):
        kind = generate.CASE_KINDS[k % len(generate.CASE_KINDS)]
        tm, req = generate.legal_case(RandomDraw(f"beats:{lanes}:{k}"), kind)
        image, fields = encode_descriptor(tm), fields_from_request(req, 0)
        status, count, beats = check_beats(image, fields, config)
        t = complete(image, fields, config).transactions
        if status != ErrorCode.OK:
            assert t is None and beats == 0
            continue
        assert count == 16 * len(t)
        assert beats == t.beats(lanes) == len(t) // t.row_chunks * -(-t.row_chunks // lanes)
