"""Built-in workloads: the request streams real kernels send their copy unit, as tensor
maps and requests (``tma-unit explore`` sweeps them).

A workload is a list of tensor maps and the requests made on them, in issue order, and
how many *tiles* they form (a tile is one pipeline stage a consumer waits on: the A and B
blocks of one k-step, a K or V block, one filter tap). Where each shape comes from:

* ``gemm-cutlass-sm90``: CUTLASS's Hopper warp-specialized fp16 GEMM with a 128 x 128 x 64
  tile shape (CUTLASS example 48, ``TileShape = Shape<_128,_128,_64>``): per k-step an A
  and a B block of 128 rows x 64 fp16 (128 bytes, 128B swizzle); one output tile of a
  4096 x 4096 x 4096 problem walks K in 64 steps.
* ``gemm-deepgemm-fp8``: DeepGEMM's FP8 (e4m3) GEMM: BLOCK_M = BLOCK_N = 128, BLOCK_K =
  128 (128 bytes, 128B swizzle), plus the per-128-column fp32 scales of A as a 128 x 1 box
  without swizzle; the 4096 x 7168 shape is one of DeepGEMM's test shapes (K = 7168, the
  DeepSeek-V3 hidden size), 56 k-steps.
* ``attention-fa3``: FlashAttention-3's forward kernel for head dimension 128 in bf16 uses
  128 x 176 blocks (kBlockM x kBlockN, hopper/tile_size.h, non-causal); Q once, then per
  key block a K and a V block of 176 rows, each as two 64-column (128-byte) swizzle atoms;
  sequence length 8192, so the last block hangs past the end (OOB fill).
* ``conv-resnet50-3x3``: the 3 x 3 convolutions of ResNet-50's conv2_x..conv5_x stages
  (He et al. 2016, Table 1: 56x56x64, 28x28x128, 14x14x256, 7x7x512), batch 32, NHWC
  fp16, as an implicit GEMM: one output tile of 128 pixels, per filter tap and 64-channel
  block an im2col load (128 pixels x 64 channels, 128B swizzle) and the weight block.
* ``gather-moe-rows``: gather4 loads of 128 token rows (64 bf16 = 128 bytes each) out of a
  4096-wide activation matrix, as a mixture-of-experts layer gathers the tokens routed to
  one expert; the shape is illustrative (PTX 5.5.3.4 defines the access, not a kernel).

Workloads of one's own come from a JSON file (:func:`load_file`, docs/exploration.md,
"Workload files"): each entry either explicit (tensor maps as ``layout --json`` writes
them, and requests naming their map) or a generator, :func:`gemm` or :func:`attention`,
the functions the built-ins above are made with.

The RTL walks every one of these modes at one chunk per lane and cycle, im2col included,
and the timing model is checked against it cycle for cycle (tests/test_timing.py).
"""

import json
from dataclasses import dataclass

from .model import (TYPE_INFO, AccessMode, DataType, MapKind, OobFill, Operation, Request, Swizzle, TensorMap,
                    encode_descriptor)
from .model.config import UnitConfig
from .model.errors import ErrorCode, TmaError, shown
from .model.transactions import transactions
from .model.tensormap import dense_strides
from .model.unit import fields_from_request

__all__ = ["Workload", "WORKLOADS", "workload", "tiled", "load", "gemm", "attention", "from_json", "load_file"]

KIB = 1024


@dataclass(frozen=True)
class Workload:
    name: str
    description: str
    maps: tuple                 # TensorMap per descriptor slot
    requests: tuple             # (map index, Request) in issue order
    tiles: int

    def served_by(self, config: UnitConfig) -> bool:
        """Whether a unit of ``config`` builds every mode and swizzle the workload uses
        and holds its descriptors."""
        return (len(self.maps) <= config.slots
                and all(req.mode in config.built_modes for _, req in self.requests)
                and all(tm.swizzle in config.built_swizzles for tm in self.maps))

    def stream(self, config: UnitConfig):
        """(descriptor images by slot, SLOT_VALID mask, hardware request fields) on a unit
        configured as ``config``; the maps take slots 0, 1, ..."""
        if len(self.maps) > config.slots:
            raise ValueError(f"workload {self.name} needs {len(self.maps)} descriptor slots; "
                             f"config.slots = {config.slots}")
        images = {slot: encode_descriptor(tm) for slot, tm in enumerate(self.maps)}
        fields = [fields_from_request(Request(**{**req.__dict__, "request_id": i % (1 << config.id_width)}), slot)
                  for i, (slot, req) in enumerate(self.requests)]
        return images, (1 << len(self.maps)) - 1, fields


def tiled(dtype, dims, box, swizzle=Swizzle.B128, oob=OobFill.NONE, base=0x1000_0000) -> TensorMap:
    """A tiled tensor map over a dense tensor of ``dims`` (innermost first)."""
    element_bytes = TYPE_INFO[dtype].global_bytes(1)
    return TensorMap(MapKind.TILED, dtype, base, tuple(dims), tuple(dense_strides(dims, element_bytes)), tuple(box),
                     (1,) * len(dims), swizzle=swizzle, oob_fill=oob)


def load(coords, smem, **kw) -> Request:
    """A load of the box at ``coords`` to shared-memory address ``smem``."""
    return Request(Operation.LOAD, tuple(coords), smem_address=smem, **kw)


def gemm(name, description, dtype, m, n, k, block_m, block_n, block_k, k_steps=None, swizzle=Swizzle.B128,
         scales=False, stages=4, multicast=1) -> Workload:
    """One output tile of an ``m x n x k`` GEMM: per k-step an A block (``block_k x
    block_m``, K innermost) and a B block (``block_k x block_n``), and with ``scales`` a
    ``block_m x 1`` fp32 box of A's per-128-column scales, into ``stages`` shared-memory
    stages on 1 KiB boundaries; ``k_steps`` (default ``k // block_k``) of them, each a tile.
    With ``multicast`` = c > 1 the CTA is one of a cluster of c along M that share the B
    block (CUTLASS's cluster shape (c, 1)): it loads the first ``block_n / c`` rows of B,
    multicast to the c CTAs, and each of the others loads and multicasts another such part."""
    block_k_bytes = block_k * TYPE_INFO[dtype].global_bytes(1)
    k_steps = k // block_k if k_steps is None else k_steps
    if isinstance(multicast, bool) or multicast not in (1, 2, 4, 8, 16) or block_n % multicast:
        raise TmaError(ErrorCode.ENUM_RANGE, "multicast", multicast,
                       f"is not a cluster of 1, 2, 4, 8 or 16 CTAs that divides block_n, {block_n}")
    maps = [tiled(dtype, (k, m), (block_k, block_m), swizzle, base=0x1000_0000),
            tiled(dtype, (k, n), (block_k, block_n // multicast), swizzle, base=0x4000_0000)]
    if scales:
        maps.append(tiled(DataType.FLOAT32, (m, k // 128), (block_m, 1), swizzle=Swizzle.NONE, base=0x7000_0000))
    stage_bytes = block_m * block_k_bytes + block_n * block_k_bytes + (block_m * 4 if scales else 0)
    stage_bytes = -(-stage_bytes // 1024) * 1024
    requests = []
    for step in range(k_steps):
        smem = (step % stages) * stage_bytes
        requests.append((0, load((step * block_k, 0), smem)))
        requests.append((1, load((step * block_k, 0), smem + block_m * block_k_bytes,
                                 multicast_mask=(1 << multicast) - 1 if multicast > 1 else 0)))
        if scales:
            requests.append((2, load((0, step), smem + (block_m + block_n) * block_k_bytes)))
    return Workload(name, description, tuple(maps), tuple(requests), k_steps)


def attention(name, description, seq, heads, head_dim, block_m, block_n, dtype=DataType.BFLOAT16,
              swizzle=Swizzle.B128, head=0) -> Workload:
    """One CTA's loads of a FlashAttention-style forward pass on head ``head`` of a
    ``head_dim x seq x heads`` Q, K and V: Q's ``block_m`` rows once, then per key block
    a K and a V block of ``block_n`` rows (two stages), each row as boxes of the swizzle's
    span (the whole row without swizzle); the last block may hang past ``seq`` (OOB
    fill). A tile per block, Q's included."""
    element = TYPE_INFO[dtype].global_bytes(1)
    atom = head_dim if swizzle == Swizzle.NONE else min(head_dim, swizzle.span // element)
    if head_dim % atom:
        raise TmaError(ErrorCode.ENUM_RANGE, "head_dim", head_dim,
                       f"is not a multiple of the {atom} columns a {swizzle.name} box row holds")
    parts, atom_bytes = head_dim // atom, atom * element
    dims = (head_dim, seq, heads)
    q = tiled(dtype, dims, (atom, block_m, 1), swizzle, base=0x1000_0000)
    k = tiled(dtype, dims, (atom, block_n, 1), swizzle, base=0x2000_0000)
    v = tiled(dtype, dims, (atom, block_n, 1), swizzle, base=0x3000_0000)
    block = block_n * atom_bytes                # bytes of one atom-wide part of a K or V block
    requests = [(0, load((part * atom, 0, head), part * block_m * atom_bytes)) for part in range(parts)]
    base = parts * block_m * atom_bytes
    blocks = -(-seq // block_n)
    for j in range(blocks):
        stage = base + (j % 2) * 2 * parts * block
        for which, offset in ((1, 0), (2, parts * block)):
            for part in range(parts):
                requests.append((which, load((part * atom, j * block_n, head), stage + offset + part * block)))
    return Workload(name, description, (q, k, v), tuple(requests), 1 + blocks)


def _convolution():
    batch, tile_pixels, channels_per_load = 32, 128, 64
    maps, requests = [], []
    stage = 0
    for height, channels in ((56, 64), (28, 128), (14, 256), (7, 512)):
        dims = (channels, height, height, batch)
        activations = TensorMap(MapKind.IM2COL, DataType.FLOAT16, 0x1000_0000 * (1 + len(maps)), dims,
                                tuple(dense_strides(dims, 2)), (), (1, 1, 1, 1), swizzle=Swizzle.B128,
                                lower_corner=(-1, -1), upper_corner=(-1, -1),
                                channels_per_pixel=channels_per_load, pixels_per_column=tile_pixels)
        weights = tiled(DataType.FLOAT16, (9 * channels, channels), (64, 128), base=0x8000_0000 + len(maps) * 0x100_0000)
        a, b = len(maps), len(maps) + 1
        maps += [activations, weights]
        for tap in range(9):
            for block in range(channels // channels_per_load):
                smem = (stage % 4) * 32 * KIB
                requests.append((a, load((block * channels_per_load, -1, -1, 0), smem, mode=AccessMode.IM2COL,
                                          im2col_offsets=(tap % 3, tap // 3))))
                requests.append((b, load((tap * channels + block * channels_per_load, 0), smem + 16 * KIB)))
                stage += 1
    return Workload("conv-resnet50-3x3", "ResNet-50 3x3 convolutions (conv2_x..conv5_x) as im2col implicit GEMM, "
                    "fp16 NHWC, 128-pixel tiles", tuple(maps), tuple(requests), stage)


def _gather():
    hidden, tokens, routed = 4096, 16384, 128
    table = tiled(DataType.BFLOAT16, (hidden, tokens), (64, 1), base=0x1000_0000)
    rows = [(i * 7919) % tokens for i in range(routed)]          # a scattered routing, spread over the table
    requests = []
    for k in range(8):
        for g in range(routed // 4):
            smem = (k % 4) * routed * 128 + g * 4 * 128
            requests.append((0, load((k * 64, *rows[4 * g:4 * g + 4]), smem, mode=AccessMode.GATHER4)))
    return Workload("gather-moe-rows", "gather4 of 128 routed token rows, 64 bf16 per row, 8 column blocks",
                    (table,), tuple(requests), 8)


#: name -> Workload
WORKLOADS = {w.name: w for w in (
    gemm("gemm-cutlass-sm90", "CUTLASS SM90 fp16 GEMM, 128x128x64 tile, 64 k-steps",
         DataType.FLOAT16, 4096, 4096, 4096, 128, 128, 64, 64),
    gemm("gemm-deepgemm-fp8", "DeepGEMM FP8 GEMM, 128x128x128 blocks with A scales, 56 k-steps",
         DataType.UINT8, 4096, 4096, 7168, 128, 128, 128, 56, scales=True),
    attention("attention-fa3", "FlashAttention-3 forward, hdim 128 bf16, Q then K and V in 128 x 176 blocks",
              8192, 16, 128, 128, 176, head=5),
    _convolution(),
    _gather(),
)}


def workload(name: str) -> Workload:
    if name not in WORKLOADS:
        raise KeyError(f"no workload {name!r}; known: {', '.join(WORKLOADS)}")
    return WORKLOADS[name]


# ---- workload files (docs/exploration.md, "Workload files") ---------------------------------

#: A generator entry's fields: name -> (kind, required). "int": a positive JSON integer;
#: "tile": the tile sizes, a list of them; enumerations by name.
_GENERATORS = {
    "gemm": {"m": "int", "n": "int", "k": "int", "tile": "tile3", "dtype": DataType, "swizzle": Swizzle,
             "k_steps": "int", "scales": "bool", "stages": "int", "multicast": "int"},
    "attention": {"seq": "int", "heads": "int", "head_dim": "int", "tile": "tile2", "dtype": DataType,
                  "swizzle": Swizzle, "head": "index"},
}
_REQUIRED = {"gemm": ("m", "n", "k", "tile"), "attention": ("seq", "heads", "head_dim", "tile")}
_ENTRY_FIELDS = ("name", "description", "gemm", "attention", "tensor_maps", "requests", "tiles")


def _value(kind, value, where):
    if kind in ("int", "index"):
        low = 1 if kind == "int" else 0
        if not isinstance(value, int) or isinstance(value, bool):
            raise TmaError(ErrorCode.FIELD_TYPE, where, shown(value), "is not a JSON integer")
        if value < low:
            raise TmaError(ErrorCode.ENUM_RANGE, where, value, f"is below {low}")
        return value
    if kind == "bool":
        if not isinstance(value, bool):
            raise TmaError(ErrorCode.FIELD_TYPE, where, shown(value), "is not true or false")
        return value
    if kind in ("tile2", "tile3"):
        count = int(kind[-1])
        if not isinstance(value, list) or len(value) != count:
            raise TmaError(ErrorCode.FIELD_TYPE, where, shown(value), f"is not a list of {count} integers")
        return [_value("int", v, f"{where}[{i}]") for i, v in enumerate(value)]
    if not isinstance(value, str) or value not in kind.__members__:
        raise TmaError(ErrorCode.ENUM_RANGE, where, shown(value), f"is not one of {', '.join(kind.__members__)}")
    return kind[value]


def _within(where: str, error: TmaError) -> TmaError:
    """``error`` with its field named inside ``where``."""
    return TmaError(error.code, f"{where}.{error.field}", error.value, error.detail)


def _entry(data, where: str) -> Workload:
    if not isinstance(data, dict):
        raise TmaError(ErrorCode.FIELD_TYPE, where, shown(data), "is not an object")
    unknown = [name for name in data if name not in _ENTRY_FIELDS]
    if unknown:
        raise TmaError(ErrorCode.ENUM_RANGE, f"{where}.{unknown[0]}", shown(data[unknown[0]]),
                       f"is not a workload field ({', '.join(_ENTRY_FIELDS)})")
    name = data.get("name")
    if not isinstance(name, str) or not name or "," in name:
        raise TmaError(ErrorCode.FIELD_TYPE, f"{where}.name", shown(name) if "name" in data else "(not given)",
                       "is not a non-empty name without commas")
    description = data.get("description", name)
    kinds = [kind for kind in ("gemm", "attention", "tensor_maps") if kind in data]
    if len(kinds) != 1:
        raise TmaError(ErrorCode.FIELD_TYPE, where, name,
                       "has not exactly one of gemm, attention or tensor_maps (with requests)")
    kind = kinds[0]
    if kind != "tensor_maps":
        for other in ("requests", "tiles"):
            if other in data:
                raise TmaError(ErrorCode.ENUM_RANGE, f"{where}.{other}", shown(data[other]),
                               f"is given with {kind}, which makes its own")
        params = data[kind]
        here = f"{where}.{kind}"
        if not isinstance(params, dict):
            raise TmaError(ErrorCode.FIELD_TYPE, here, shown(params), f"is not an object of {kind} fields")
        spec = _GENERATORS[kind]
        unknown = [p for p in params if p not in spec]
        if unknown:
            raise TmaError(ErrorCode.ENUM_RANGE, f"{here}.{unknown[0]}", shown(params[unknown[0]]),
                           f"is not a {kind} field ({', '.join(spec)})")
        for required in _REQUIRED[kind]:
            if required not in params:
                raise TmaError(ErrorCode.FIELD_TYPE, f"{here}.{required}", "(not given)", f"is a required {kind} field")
        values = {p: _value(spec[p], v, f"{here}.{p}") for p, v in params.items()}
        tile = values.pop("tile")
        try:
            if kind == "gemm":
                work = gemm(name, description, values.pop("dtype", DataType.FLOAT16), values.pop("m"), values.pop("n"),
                            values.pop("k"), *tile, **values)
            else:
                if values.get("head", 0) >= values["heads"]:
                    raise TmaError(ErrorCode.ENUM_RANGE, "head", values["head"], f"is not below heads, {values['heads']}")
                work = attention(name, description, values.pop("seq"), values.pop("heads"), values.pop("head_dim"),
                                 *tile, **values)
        except TmaError as error:
            raise _within(here, error) from None
        if not work.requests:
            raise TmaError(ErrorCode.ENUM_RANGE, here, name, "makes no request")
    else:
        maps, requests = data["tensor_maps"], data.get("requests")
        if not isinstance(maps, list) or not maps:
            raise TmaError(ErrorCode.FIELD_TYPE, f"{where}.tensor_maps", shown(maps), "is not a non-empty list")
        if not isinstance(requests, list) or not requests:
            raise TmaError(ErrorCode.FIELD_TYPE, f"{where}.requests", shown(requests) if "requests" in data
                           else "(not given)", "is not a non-empty list")
        parsed = []
        for i, tm in enumerate(maps):
            try:
                parsed.append(TensorMap.from_dict(tm))
            except TmaError as error:
                raise _within(f"{where}.tensor_maps[{i}]", error) from None
        pairs = []
        for i, entry in enumerate(requests):
            here = f"{where}.requests[{i}]"
            if not isinstance(entry, dict):
                raise TmaError(ErrorCode.FIELD_TYPE, here, shown(entry), "is not an object of a map and request fields")
            fields_ = dict(entry)
            index = fields_.pop("map", 0)
            if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < len(parsed):
                raise TmaError(ErrorCode.ENUM_RANGE, f"{here}.map", shown(index),
                               f"is not a tensor map's index, 0..{len(parsed) - 1}")
            try:
                pairs.append((index, Request.from_dict(fields_)))
            except TmaError as error:
                raise _within(here, error) from None
        tiles = _value("int", data.get("tiles", 1), f"{where}.tiles")
        work = Workload(name, description, tuple(parsed), tuple(pairs), tiles)
    for i, (index, req) in enumerate(work.requests):
        try:
            transactions(work.maps[index], req)        # a copy the unit refuses is refused here, by name
        except TmaError as error:
            raise _within(f"{where}.requests[{i}]", error) from None
    return work


def from_json(data) -> list[Workload]:
    """The workloads of a workload file's contents: an object ``{"workloads": [...]}`` (or
    the list alone) of entries, each a ``name`` and one of ``gemm``, ``attention`` (a
    generator's fields) or ``tensor_maps`` with ``requests``. A field that breaks a rule
    is refused (:class:`TmaError`) naming it, e.g. ``workloads[1].gemm.tile[2]``."""
    entries = data.get("workloads") if isinstance(data, dict) else data
    if isinstance(data, dict) and set(data) != {"workloads"}:
        other = sorted(set(data) - {"workloads"})
        raise TmaError(ErrorCode.ENUM_RANGE if other else ErrorCode.FIELD_TYPE, other[0] if other else "workloads",
                       shown(data[other[0]]) if other else "(not given)",
                       "is not a workload file field (workloads)" if other else "is a required workload file field")
    if not isinstance(entries, list) or not entries:
        raise TmaError(ErrorCode.FIELD_TYPE, "workloads", shown(entries), "is not a non-empty list of workloads")
    works = [_entry(entry, f"workloads[{i}]") for i, entry in enumerate(entries)]
    seen = set(WORKLOADS)
    for i, work in enumerate(works):
        if work.name in seen:
            raise TmaError(ErrorCode.ENUM_RANGE, f"workloads[{i}].name", shown(work.name),
                           "is already a workload's name (built-in or earlier in the file)")
        seen.add(work.name)
    return works


def load_file(path) -> list[Workload]:
    """The workloads of the JSON workload file at ``path`` (:func:`from_json`)."""
    with open(path, encoding="utf-8-sig") as f:
        return from_json(json.load(f))
