"""The 128-byte tensor-map image: one layout table shared by the model and the RTL.

PTX section 5.5.8 calls the tensor map a 128-byte opaque object and no public text gives its
bit layout (docs/spec.md, "Encodings"), so this project defines its own, using the PTX
``tensormap.replace`` field encodings: rank stored as rank - 1, strides in 16-byte units,
element types in PTX numbering, swizzle as a (mode, atomicity) pair. Every field lives in
:data:`DESCRIPTOR_FIELDS` once; the encoder, the decoder, the RTL register file
(``tma_unit.rtl``) and docs/descriptor.md are all derived from it.

Bit ``k`` of the image is bit ``k % 8`` of byte ``k // 8`` (little-endian, as the register
file's 32-bit words see it).
"""

import functools
from dataclasses import dataclass

from .errors import ErrorCode, TmaError, shown
from .tensormap import TensorMap, MAX_RANK
from .types import (AccessMode, Operation, ReduceOp, Swizzle, SwizzleMode, SwizzleAtomicity, MapKind, type_info,
                    dtype_from_ptx_code)

__all__ = ["DescriptorField", "DESCRIPTOR_FIELDS", "DESCRIPTOR_BYTES", "DESCRIPTOR_BITS",
           "encode_descriptor", "decode_descriptor", "descriptor_fields", "fields_from_tensor_map",
           "tensor_map_from_fields", "flat_fields"]

DESCRIPTOR_BYTES = 128
DESCRIPTOR_BITS = 8 * DESCRIPTOR_BYTES


@dataclass(frozen=True)
class DescriptorField:
    """One field (or array of fields) of the image.

    ``count`` > 1 makes an array of ``count`` entries, entry ``i`` at ``offset + i * width``.
    ``encoding`` says how a value is stored: ``"raw"`` as is, ``"minus1"`` as value - 1,
    ``"units16"`` divided by 16, ``"signed"`` in two's complement, ``"enum"`` as its number.
    """
    name: str
    offset: int
    width: int
    count: int = 1
    encoding: str = "raw"
    doc: str = ""

    @property
    def signed(self) -> bool:
        return self.encoding == "signed"


DESCRIPTOR_FIELDS: tuple[DescriptorField, ...] = (
    DescriptorField("global_address", 0, 64, doc="byte address of element 0"),
    DescriptorField("rank", 64, 3, encoding="minus1", doc="tensor rank - 1 (PTX encoding)"),
    DescriptorField("elemtype", 67, 4, encoding="enum", doc="PTX element type code"),
    DescriptorField("interleave_layout", 71, 2, encoding="enum", doc="0 none, 1 16B, 2 32B"),
    DescriptorField("swizzle_mode", 73, 3, encoding="enum", doc="0 none, 1 32B, 2 64B, 3 128B, 4 96B"),
    DescriptorField("swizzle_atomicity", 76, 2, encoding="enum", doc="0 16B, 1 32B, 2 32B+8B-flip, 3 64B"),
    DescriptorField("fill_mode", 78, 1, encoding="enum", doc="0 zero, 1 OOB-NaN"),
    DescriptorField("l2_promotion", 79, 2, encoding="enum", doc="0 none, 1 64B, 2 128B, 3 256B"),
    DescriptorField("kind", 81, 2, encoding="enum", doc="0 tiled, 1 im2col, 2 im2col-wide"),
    DescriptorField("wide_mode", 83, 1, encoding="enum", doc="im2col-wide: 0 W, 1 W128"),
    DescriptorField("channels_per_pixel", 84, 8, encoding="minus1", doc="im2col: channels per pixel - 1"),
    DescriptorField("pixels_per_column", 92, 10, encoding="minus1", doc="im2col: pixels per column - 1"),
    DescriptorField("global_dim", 128, 32, 5, "minus1", "elements per dimension - 1"),
    DescriptorField("global_stride", 288, 36, 4, "units16", "byte stride of dimension i+1, in 16-byte units"),
    DescriptorField("box_dim", 432, 8, 5, "minus1", "tiled: box elements per dimension - 1"),
    DescriptorField("element_stride", 472, 3, 5, "minus1", "traversal stride per dimension - 1"),
    DescriptorField("lower_corner", 512, 16, 3, "signed", "im2col: bounding-box lower corner W, H, D"),
    DescriptorField("upper_corner", 560, 16, 3, "signed", "im2col: bounding-box upper corner W, H, D"),
)


def flat_fields():
    """Every scalar of the image as (name, offset, width, field): arrays as ``name[i]``."""
    for f in DESCRIPTOR_FIELDS:
        if f.count == 1:
            yield f.name, f.offset, f.width, f
        else:
            for i in range(f.count):
                yield f"{f.name}[{i}]", f.offset + i * f.width, f.width, f


def _check_table() -> None:
    used = [False] * DESCRIPTOR_BITS
    for name, offset, width, _ in flat_fields():
        if offset + width > DESCRIPTOR_BITS or any(used[offset:offset + width]):
            raise AssertionError(f"descriptor field {name} overlaps or runs past the image")
        used[offset:offset + width] = [True] * width


_check_table()


# -- tensor map <-> stored field values ------------------------------------------------

def fields_from_tensor_map(tm: TensorMap) -> dict[str, list[int]]:
    """The values each field stores (after its encoding), arrays padded with zeros."""
    mode, atomicity = tm.swizzle.pair
    values = {
        "global_address": [tm.global_address],
        "rank": [tm.rank - 1],
        "elemtype": [type_info(tm.dtype).ptx_code],
        "interleave_layout": [int(tm.interleave)],
        "swizzle_mode": [int(mode)],
        "swizzle_atomicity": [int(atomicity)],
        "fill_mode": [int(tm.oob_fill)],
        "l2_promotion": [int(tm.l2_promotion)],
        "kind": [int(tm.kind)],
        "wide_mode": [int(tm.wide_mode)],
        "channels_per_pixel": [max(tm.channels_per_pixel - 1, 0)],
        "pixels_per_column": [max(tm.pixels_per_column - 1, 0)],
        "global_dim": [d - 1 for d in tm.global_dims],
        "global_stride": [s // 16 for s in tm.global_strides],
        "box_dim": [b - 1 for b in tm.box_dims],
        "element_stride": [e - 1 for e in tm.element_strides],
        "lower_corner": list(tm.lower_corner),
        "upper_corner": list(tm.upper_corner),
    }
    for f in DESCRIPTOR_FIELDS:
        values[f.name] = values[f.name] + [0] * (f.count - len(values[f.name]))
    return values


def tensor_map_from_fields(values: dict[str, list[int]]) -> TensorMap:
    """Rebuild (and so validate) a tensor map from stored field values."""
    def one(name):
        return values[name][0]

    rank = one("rank") + 1
    if rank > MAX_RANK:
        raise TmaError(ErrorCode.RANK_RANGE, "rank", rank, f"is outside 1..{MAX_RANK}")
    dtype = dtype_from_ptx_code(one("elemtype"))
    if dtype is None:
        raise TmaError(ErrorCode.ENUM_RANGE, "elemtype", one("elemtype"), "is not a PTX element type code")
    try:
        mode = SwizzleMode(one("swizzle_mode"))
    except ValueError:
        raise TmaError(ErrorCode.ENUM_RANGE, "swizzle_mode", one("swizzle_mode"),
                       "is not a SwizzleMode (0..4)") from None
    atomicity = SwizzleAtomicity(one("swizzle_atomicity"))
    swizzle = Swizzle.from_pair(mode, atomicity)
    if swizzle is None:
        raise TmaError(ErrorCode.SWIZZLE_ATOMICITY, "swizzle_atomicity", atomicity.name,
                       f"is not allowed with swizzle mode {mode.name}")
    kind = one("kind")
    im2col = kind in (MapKind.IM2COL, MapKind.IM2COL_WIDE)
    corners = {MapKind.IM2COL: rank - 2, MapKind.IM2COL_WIDE: 1}.get(kind, 0)
    return TensorMap(
        kind=kind, dtype=dtype, global_address=one("global_address"),
        global_dims=[d + 1 for d in values["global_dim"][:rank]],
        global_strides=[s * 16 for s in values["global_stride"][:rank - 1]],
        box_dims=[] if im2col else [b + 1 for b in values["box_dim"][:rank]],
        element_strides=[e + 1 for e in values["element_stride"][:rank]],
        interleave=one("interleave_layout"), swizzle=swizzle, l2_promotion=one("l2_promotion"),
        oob_fill=one("fill_mode"),
        lower_corner=values["lower_corner"][:max(corners, 0)],
        upper_corner=values["upper_corner"][:max(corners, 0)],
        channels_per_pixel=one("channels_per_pixel") + 1 if im2col else 0,
        pixels_per_column=one("pixels_per_column") + 1 if im2col else 0,
        wide_mode=one("wide_mode"))


# -- stored field values <-> 128 bytes -------------------------------------------------

def encode_descriptor(tm: TensorMap) -> bytes:
    """The 128-byte image of a tensor map."""
    image = 0
    values = fields_from_tensor_map(tm)
    for f in DESCRIPTOR_FIELDS:
        for i, value in enumerate(values[f.name]):
            image |= (value & ((1 << f.width) - 1)) << (f.offset + i * f.width)
    return image.to_bytes(DESCRIPTOR_BYTES, "little")


def descriptor_fields(image: bytes) -> dict[str, list[int]]:
    """The stored field values of a 128-byte image (signed fields sign-extended)."""
    if not isinstance(image, (bytes, bytearray, memoryview)):
        raise TmaError(ErrorCode.FIELD_TYPE, "image", shown(image), "is not bytes")
    if len(image) != DESCRIPTOR_BYTES:
        raise TmaError(ErrorCode.ARRAY_LENGTH, "image", f"{len(image)} bytes", f"is not {DESCRIPTOR_BYTES} bytes")
    bits = int.from_bytes(bytes(image), "little")
    values = {}
    for name, places, mask, sign in _PLACES:
        entries = [bits >> offset & mask for offset in places]
        if sign:
            entries = [raw - (raw & sign) * 2 for raw in entries]
        values[name] = entries
    return values


#: Each field's (name, entry offsets, mask, sign bit or 0): the table read once for decoding.
_PLACES = [(f.name, [f.offset + i * f.width for i in range(f.count)], (1 << f.width) - 1,
            1 << (f.width - 1) if f.signed else 0) for f in DESCRIPTOR_FIELDS]


def decode_descriptor(image: bytes) -> TensorMap:
    """The tensor map of a 128-byte image; an illegal field raises its validation error."""
    if isinstance(image, (bytes, bytearray, memoryview)):
        tm, error = _decoded(bytes(image))
        if error is not None:
            raise error.with_traceback(None)        # not the traceback of its last raise
        return tm
    return tensor_map_from_fields(descriptor_fields(image))


@functools.lru_cache(maxsize=4096)
def _decoded(image: bytes):
    """(tensor map, None) or (None, the error) of an image: a campaign decodes the same
    image for each request on its slot, and a tensor map is immutable."""
    try:
        return tensor_map_from_fields(descriptor_fields(image)), None
    except TmaError as error:
        return None, error


# -- the request and completion images (the RTL's stream payloads) ----------------------

@dataclass(frozen=True)
class PayloadField:
    """One field of a stream payload: ``count`` entries of ``width`` bits, packed in
    table order from bit 0; ``enum``, the enumeration whose numbers it holds (the RTL
    gives the field that enumeration, stored in ``width`` bits)."""
    name: str
    width: int
    count: int = 1
    signed: bool = False
    doc: str = ""
    enum: type | None = None


#: The request stream's payload. The RTL's ``data.StructLayout`` and the model's
#: :func:`encode_request` / :func:`decode_request` are both built from this table.
REQUEST_FIELDS: tuple[PayloadField, ...] = (
    PayloadField("operation", 2, doc="0 load, 1 store, 2 reduce, 3 prefetch", enum=Operation),
    PayloadField("mode", 3, doc="0 tile, 1 gather4, 2 scatter4, 3 im2col, 4 im2col::w, 5 im2col::w::128",
                 enum=AccessMode),
    PayloadField("reduce_op", 3, doc="0 add, 1 min, 2 max, 3 inc, 4 dec, 5 and, 6 or, 7 xor", enum=ReduceOp),
    PayloadField("slot", 8, doc="descriptor slot"),
    PayloadField("request_id", 16, doc="tag returned with the completion"),
    PayloadField("multicast_mask", 16, doc="CTA mask of a multicast load"),
    PayloadField("smem_address", 32, doc="dstMem / srcMem shared-memory byte address"),
    PayloadField("coordinates", 32, 5, True, "tensor coordinates, dimension 0 first"),
    PayloadField("im2col_offsets", 16, 3, doc="im2col offsets W, H, D"),
    PayloadField("w_halo", 10, doc="im2col::w wHalo"),
    PayloadField("w_offset", 5, doc="im2col::w wOffset"),
)

#: The completion stream's payload.
COMPLETION_FIELDS: tuple[PayloadField, ...] = (
    PayloadField("request_id", 16, doc="the request's tag"),
    PayloadField("status", 8, doc="0 ok, else the error code (docs/errors.md)"),
    PayloadField("transaction_bytes", 32, doc="the box's bytes, the mbarrier transaction count of a load "
                 "(0 on error; saturates at 2^32 - 1, which only a prefetch reaches)"),
)


def payload_width(table) -> int:
    return sum(f.width * f.count for f in table)


def pack_payload(table, values: dict) -> int:
    """Pack field values (lists for arrays) into one integer, table order from bit 0."""
    word = 0
    for name, count, mask, offsets in _payload_places(table):
        entries = values.get(name, 0)
        if count == 1:
            word |= (int(entries) & mask) << offsets[0]
        else:
            for value, offset in zip(entries, offsets):
                word |= (int(value) & mask) << offset
    return word


@functools.lru_cache(maxsize=None)
def _payload_places(table) -> tuple:
    """Each field's (name, count, mask, entry offsets): a payload table read once."""
    places, offset = [], 0
    for f in table:
        places.append((f.name, f.count, (1 << f.width) - 1, tuple(offset + i * f.width for i in range(f.count))))
        offset += f.width * f.count
    return tuple(places)


def unpack_payload(table, word: int) -> dict:
    values, offset = {}, 0
    for f in table:
        entries = []
        for _ in range(f.count):
            raw = (word >> offset) & ((1 << f.width) - 1)
            if f.signed and raw >> (f.width - 1):
                raw -= 1 << f.width
            entries.append(raw)
            offset += f.width
        values[f.name] = entries if f.count > 1 else entries[0]
    return values
