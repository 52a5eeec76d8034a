"""`ember-lower-to-linalg`: rewrite every ember op into linalg / tensor / arith / math.

Each op is lowered by emitting upstream MLIR text for it; the function is re-parsed at the end.
Elementwise ops and reduction combiners take their scalar bodies from the op table, so adding
such an op needs no code here. Unsigned integers become signless on the way (upstream ops
carry signedness in the operation, not the type).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np
from iree.compiler import ir as mlir

from ember.dialect import ir as eir, linalg_ops, ops
from ember.dialect.ops import OpDef, Trait
from ember.dialect.types import Dim, ShapedArray, kind

from .bufferize import decisions
from .emitter import (
    Emitter,
    Lowering,
    View,
    accumulator,
    affine_map,
    compilation_info,
    etype,
    identity_map,
    iterators,
    signless,
    template_params,
    ttype,
)
from .lower_indexing import (
    lower_after,
    lower_concatenate,
    lower_copy,
    lower_dynamic_slice,
    lower_dynamic_update_slice,
    lower_rev,
    lower_scatter,
    lower_slice,
    lower_take,
)
from .lower_regions import (
    lower_call,
    lower_case,
    lower_elementwise_for,
    lower_for,
    lower_fusion,
    lower_if,
    lower_while,
)
from .lower_scan import lower_cumulative
from .lower_sort import lower_sort
from .split_reduction import split_reduction
from .walk import body, functions


def lower_elementwise(em: Emitter, op: mlir.Operation, args: list[str],
                      avals: list[ShapedArray], params: dict, result: ShapedArray) -> str:
    template = eir.opdef(op).scalar(kind(avals[-1].dtype), template_params(avals, result, params))
    if result.ndim == 0 and avals and em.loop_depth and runs_on_the_host(template):
        return _scalar_elementwise(em, template, args, avals, result)
    ident = identity_map(result.ndim)
    inputs = [(a, av, ident) for a, av in zip(args, avals, strict=True)]
    elem = etype(avals[-1])
    return em.generic(inputs, em.empty(result), result, ident, iterators(result.ndim),
                      lambda bargs, _: em.scalar_body(template, bargs, elem, etype(result)))


# The math ops IREE's VM runs (its math-to-VM conversion); arith's but maxnumf/minnumf; scf.
_HOST_MATH = {"absf", "atan", "atan2", "ceil", "cos", "erf", "exp", "exp2", "expm1", "floor",
              "log", "log10", "log1p", "log2", "powf", "roundeven", "round", "rsqrt", "sin",
              "sqrt", "tanh"}
_OP = re.compile(r"=\s*\"?([a-z_]+)\.([a-z_0-9.]+)")


def runs_on_the_host(template: str) -> bool:
    """Whether IREE can run `template` as host code (its VM): a body with an op it cannot
    (math.copysign, math.cosh, float64 math.tan, arith.maxnumf, complex ops) stays a kernel,
    where it compiled as a host scalar it failed ("failed to legalize operation")."""
    for dialect, name in _OP.findall(template):
        if dialect == "math" and name not in _HOST_MATH or dialect == "complex" or (
                dialect == "arith" and name in ("maxnumf", "minnumf")):
            return False
    return True


def _scalar_elementwise(em: Emitter, template: str, args: list[str], avals: list[ShapedArray],
                        result: ShapedArray) -> str:
    """A rank-0 op in a loop body as plain scalar arithmetic (extract, compute,
    from_elements), which IREE runs on the host: the loop's index arithmetic then costs no
    dispatch and no read-back (2000 one-row updates: 6.7 -> 4.6 us a trip). Outside loops
    that would make the host wait for the device mid-call, so scalars stay kernels there."""
    scalars = []
    for a, av in zip(args, avals, strict=True):
        name = em.fresh("x")
        em.emit(f"{name} = tensor.extract {a}[] : {ttype(av)}")
        scalars.append(name)
    value = em.scalar_body(template, scalars, etype(avals[-1]), etype(result))
    out = em.fresh()
    em.emit(f"{out} = tensor.from_elements {value} : {ttype(result)}")
    return out


def lower_constant(em, op, args, avals, params, result) -> str:
    name = em.fresh()
    value, _, ty = str(op.attributes["value"]).rpartition(" : ")  # only the type can be unsigned
    em.emit(f"{name} = arith.constant {value} : {signless(ty)}")
    return name


def lower_iota(em, op, args, avals, params, result) -> str:
    def body(_, __):
        idx, i64, out = em.fresh("i"), em.fresh("i"), em.fresh("i")
        em.emit(f"  {idx} = linalg.index {params['dimension']} : index")
        em.emit(f"  {i64} = arith.index_cast {idx} : index to i64")
        k, elem = kind(result.dtype), etype(result)
        if k == "f":
            em.emit(f"  {out} = arith.sitofp {i64} : i64 to {elem}")
        elif elem == "i64":
            return i64
        else:
            em.emit(f"  {out} = arith.trunci {i64} : i64 to {elem}")
        return out

    return em.generic([], em.empty(result), result, identity_map(result.ndim),
                      iterators(result.ndim), body)


def lower_dimension_size(em, op, args, avals, params, result) -> str:
    """A symbolic size as the function read it off its arguments; a static one as itself."""
    size, value, out = avals[0].shape[params["dimension"]], em.fresh("i"), em.fresh()
    if isinstance(size, Dim):
        em.emit(f"{value} = arith.index_cast {em.size(size)} : index to {etype(result)}")
    else:
        em.emit(f"{value} = arith.constant {size} : {etype(result)}")
    em.emit(f"{out} = tensor.from_elements {value} : {ttype(result)}")
    return out


def lower_broadcast_in_dim(em, op, args, avals, params, result) -> str:
    (x,) = avals
    exprs = [("0" if x.shape[i] == 1 and result.shape[d] != 1 else f"d{d}")
             for i, d in enumerate(params["broadcast_dimensions"])]
    inputs = [(args[0], x, affine_map(result.ndim, exprs))]
    return em.generic(inputs, em.empty(result), result, identity_map(result.ndim),
                      iterators(result.ndim), lambda bargs, _: bargs[0])


def lower_reshape(em, op, args, avals, params, result) -> str:
    return em.reshape(args[0], avals[0], result)


def lower_transpose(em, op, args, avals, params, result) -> str:
    name, init = em.fresh(), em.empty(result)
    perm = ", ".join(map(str, params["permutation"]))
    em.emit(f"{name} = linalg.transpose ins({args[0]} : {ttype(avals[0])}) outs({init} : "
            f"{ttype(result)}) permutation = [{perm}]")
    if args[0] in em.views:  # result dim k is the source's dim permutation[k]
        where = [""] * result.ndim
        for k, d in enumerate(params["permutation"]):
            where[d] = f"d{k}"
        em.views[name] = View(args[0], avals[0], tuple(where))
    return name


def lower_reduction(em, op, args, avals, params, result) -> str:
    (x,) = avals
    axes = tuple(sorted(params["axes"]))
    acc = ShapedArray(result.shape, accumulator(eir.opdef(op), result.dtype))
    split = split_reduction(x, axes, result)
    if split is None:
        total = _reduce(em, op, args[0], x, axes, params, acc)
    else:
        pieces = ShapedArray(split.shape, x.dtype)
        partial = ShapedArray(split.partial_shape, acc.dtype)
        partials = _reduce(em, op, em.reshape(args[0], x, pieces), pieces, split.first,
                           params, partial, _wide_accumulators(em, pieces, split))
        total = _reduce(em, op, partials, partial, (split.chunk_axis,), params, acc)
    return total if acc == result else em.rounded(total, acc, result)


# The first step of a split reduction runs in about this many workgroups on CPUs with wide
# accumulators (IREE's own choice: 32 over 1024 chunks).
REDUCTION_WORKGROUPS = 32


def _wide_accumulators(em, pieces: ShapedArray, split) -> str:
    """The first step of a split reduction of 4- or 8-byte numbers along its last dim, on
    CPUs whose lowering asks for it (em.reduction_bytes): a `compilation_info` reducing 2 KiB
    of lanes a step (all 32 AVX-512 registers), where IREE keeps one register's worth:
    independent loads in flight. A 16M float32 sum, its own data cold, alternating with
    JAX's in one process (median of 30 rounds, a busy machine), one register -> 16: 4.12 ->
    3.61 ms, max 4.23 -> 3.67 (JAX 3.19 and 3.84); 16 -> 32 registers (25-41 rounds of 5
    calls): 16M sum 2.00 -> 1.95, 1.81 -> 1.79 and 2.12 -> 2.00 ms (JAX 2.04, 1.89, 2.09),
    max 2.79 -> 2.71 (JAX 3.27), 4M sum 417 -> 411 us (JAX 422), 1M 125 -> 115 (JAX 146);
    8 registers: 2.09."""
    size = pieces.dtype.itemsize
    if not em.reduction_bytes or kind(pieces.dtype) not in "fiu" or size not in (4, 8):
        return ""
    lanes, n = em.reduction_bytes // size, pieces.ndim
    while pieces.shape[-1] % lanes and lanes * size > 128:  # the most lanes that divide a chunk
        lanes //= 2
    if split.first != (n - 1,) or pieces.shape[-1] % lanes:
        return ""
    distribution = [1] * (n - 1) + [0]  # IREE's own: 32 workgroups over 1024 chunks
    distribution[split.chunk_axis] = max(1, pieces.shape[split.chunk_axis] //
                                         REDUCTION_WORKGROUPS)
    config = (f"distribution = {distribution}, vector_common_parallel = {[1] * (n - 1) + [0]}, "
              f"vector_reduction = {[0] * (n - 1) + [lanes]}")
    return f", compilation_info = {compilation_info(config, 'DoubleTilingExpert')}"


def _reduce(em, op, arg: str, x: ShapedArray, axes: tuple[int, ...], params,
            result: ShapedArray, attrs: str = "") -> str:
    kept = [i for i in range(x.ndim) if i not in axes]
    # Loop dims: kept axes first (parallel), then reduced axes.
    order = kept + list(axes)
    in_map = affine_map(x.ndim, [f"d{order.index(i)}" for i in range(x.ndim)])
    out_map = affine_map(x.ndim, [f"d{i}" for i in range(len(kept))])
    row = eir.opdef(op)
    template = row.scalar(kind(x.dtype), params)
    init = em.filled(result, row.init(result.dtype))
    wide = accumulator(row, x.dtype) != x.dtype  # a narrow float summed in float32

    def body(b, acc):
        value = em.extended(b[0], etype(x)) if wide else b[0]
        return em.scalar_body(template, [value, acc], etype(result), etype(result))

    return em.generic([(arg, x, in_map)], init, result, out_map,
                      iterators(len(kept), len(axes)), body, attrs=attrs)


def lower_dot_general(em, op, args, avals, params, result) -> str:
    lhs, rhs = avals
    lc, rc = tuple(params["lhs_contracting"]), tuple(params["rhs_contracting"])
    lb, rb = tuple(params["lhs_batch"]), tuple(params["rhs_batch"])
    k = kind(lhs.dtype)
    if _packs(em.matmul_tile, lhs, rhs, lc, lb, result, em.loop_depth > 0):
        return _packed_matmul(em, args, avals, lc[0], rc[0], result, em.matmul_tile)
    acc = ShapedArray(result.shape, accumulator(ops.DOT_GENERAL, result.dtype))
    narrow = acc != result
    init = em.filled(acc, 0)
    if (k == "f" and not lb and lhs.ndim == rhs.ndim == 2 and lc == (1,) and rc == (0,)
            and lhs.shape[1] != 1):
        name = em.fresh()
        em.emit(f"{name} = linalg.matmul ins({args[0]}, {args[1]} : {ttype(lhs)}, "
                f"{ttype(rhs)}) outs({init} : {ttype(acc)}) -> {ttype(acc)}")
        return em.rounded(name, acc, result) if narrow else name
    nb = len(lb)
    lfree = [i for i in range(lhs.ndim) if i not in lc + lb]
    rfree = [i for i in range(rhs.ndim) if i not in rc + rb]
    # A product over one element (an outer product, as grad of a dot makes) is elementwise:
    # no reduction loop for IREE to treat as a contraction.
    outer = all(lhs.shape[i] == 1 for i in lc)
    nloop = result.ndim + (0 if outer else len(lc))

    def dim_of(side_free, batch, contracting, i):
        if i in batch:
            return f"d{batch.index(i)}"
        if i in contracting:
            return "0" if outer else f"d{result.ndim + contracting.index(i)}"
        offset = nb if side_free is lfree else nb + len(lfree)
        return f"d{offset + side_free.index(i)}"

    lmap = affine_map(nloop, [dim_of(lfree, lb, lc, i) for i in range(lhs.ndim)])
    rmap = affine_map(nloop, [dim_of(rfree, rb, rc, i) for i in range(rhs.ndim)])
    omap = affine_map(nloop, [f"d{i}" for i in range(result.ndim)])
    mul = ops.MUL.scalar(k, params)
    add = ops.ADD.scalar(k, params)
    elem = etype(acc)

    def body(b, out):
        if narrow:
            b = [em.extended(x, etype(lhs)) for x in b]
        prod = em.scalar_body(mul, b, elem, elem)
        return prod if outer else em.scalar_body(add, [out, prod], elem, elem)

    name = em.generic([(args[0], lhs, lmap), (args[1], rhs, rmap)], init, acc, omap,
                      iterators(result.ndim, 0 if outer else len(lc)), body)
    return em.rounded(name, acc, result) if narrow else name


# The register tile of a packed float32 product on AVX-512 CPUs (32 vector registers): 12
# rows by 32 columns of accumulators, 24 registers (see _packed_matmul).
AVX512_MATMUL_TILE = (12, 32)
# A product is packed when each tile is used many times over: at least this many rows of
# register tiles and columns of them, and more than this many products deep. Shallower ones
# spend more of their time storing accumulators than multiplying: 8 products 512 x 64 x 512
# (the einsum row) took 2.33 ms packed against 2.10 with IREE's tiling (median of 15
# interleaved rounds); batches of products are left to IREE too (8 x 512 x 256 x 512: 8.26
# against 7.86 ms).
PACKED_MIN_TILES = 4
PACKED_MIN_DEPTH = 64
# Outside loops, also when it has at least this many multiply-adds (m * n * depth): smaller
# ones spend their time in the packs' and unpack's dispatches. matmul+relu packed -> IREE's
# tiling, in one process with JAX (median of 15-21 rounds; +-8% between runs): 64 x 256^2
# 98.7 -> 93.5 and 92.1 -> 85.1 us, 128 x 256^2 151.7 -> 124.9 and 163.0 -> 140.3, 250^3
# 222.6 -> 189.7, 192 x 384^2 418.9 -> 371.3, 128 x 512^2 425.2 -> 399.8; 320^3 and
# 96 x 512^2 a tie; 192 x 512^2 612.4 -> 773.2, 256 x 512^2 733.0 -> 811.2, 128 x 1024^2
# 1341 -> 1778 (packing wins). In a loop's body the weight's pack leaves the loop (LICM), and
# packing kept its lead there: a scan RNN of 64 x 256^2 products, 97.2 against 104.8 and
# 125.3 against 135.7 us a step (400 steps: a tie); the benchmark's two-product cell 22.5
# against 25.8 and 27.9 against 31.1 ms (one earlier run: 16.7 against 15.3).
PACKED_MIN_WORK = 1 << 25
# Rows of register tiles a workgroup of the packed product takes (by one column of them):
# each panel of the right operand is read for more rows than IREE's 2, but no fewer than
# PACKED_MIN_WORKGROUPS workgroups are left. And the depth is walked in blocks of
# PACKED_DEPTH_BLOCK, whose slice of the right panel (16 KiB) stays in L1 for all the rows:
# IREE's mmt4d pipeline (Mmt4dTilingExpert) ignores a cache level, so the product is lowered
# by its double-tiling pipeline, which tiles one (the same inner loop, inside a loop over
# blocks). matmul+relu, Ember's lowerings against each other and JAX in one process (compile
# cache off, each its own data, medians of 7-15 rounds), 4 rows -> 8 rows (an earlier run):
# 1024^2 11.27 -> 10.32 ms (JAX 10.76); 8 rows -> 8 rows and blocks of 128: 1024^2 10.62 ->
# 10.10 (JAX 10.67), 512^2 1.34 -> 1.29 (JAX 1.55), 2000^2 77.9 -> 72.7 (JAX 71.2). Blocks of
# 64 and 256, and 4 or 16 rows with blocks, were within 2% of 128 with 8. A second A/B (21
# rounds) put the two pipelines within 3% of each other at 1024^2 and 2000^2, as it did blocks
# that divide the depth (125 of 1000, 112 of 784) against 128 and a remainder.
PACKED_ROWS_PER_WORKGROUP = 8
PACKED_MIN_WORKGROUPS = 8
PACKED_DEPTH_BLOCK = 128


# A pack of `size` rows across their depth (a transpose of size x 16 blocks) takes one panel
# and the whole depth a workgroup: IREE's choice (43 panels by 64 of the depth) reads 516
# rows 4 KiB apart a workgroup. In IREE's profile of matmul+relu 1024^2 (the left operand's
# pack, same run): 0.65 -> 0.40 ms, and 0.40-0.43 for 2, 4 or 8 panels; the right operand's
# pack (rows copied whole) kept IREE's choice, its variants within noise.
_ACROSS_ROWS = compilation_info("distribution = [1, 0], vector_common_parallel = [1, 16]",
                                "DataTiling")


def _packs(tile: tuple[int, int] | None, lhs: ShapedArray, rhs: ShapedArray,
           lc: tuple[int, ...], lb: tuple[int, ...], result: ShapedArray, in_loop: bool) -> bool:
    """Whether a dot_general is a float32 matrix product, of static shape, big enough to pack
    into `tile` (None: never); outside loops, of PACKED_MIN_WORK multiply-adds at least."""
    if tile is None or lb or len(lc) != 1 or not lhs.ndim == rhs.ndim == 2:
        return False
    if not lhs.dtype == rhs.dtype == result.dtype == np.float32:
        return False
    if not all(isinstance(d, int) for d in (*lhs.shape, *rhs.shape)):
        return False
    (m, n), depth = result.shape, lhs.shape[lc[0]]
    return (m >= PACKED_MIN_TILES * tile[0] and n >= PACKED_MIN_TILES * tile[1]
            and depth > PACKED_MIN_DEPTH and (in_loop or m * n * depth >= PACKED_MIN_WORK))


def _packed_matmul(em, args: list[str], avals: list[ShapedArray], lc: int, rc: int,
                   result: ShapedArray, tile: tuple[int, int]) -> str:
    """A float32 matrix product as IREE's data tiling computes one, with our tile shape:
    each operand packed into panels of `tile` rows (columns) by the whole depth (linalg.pack,
    zero-padded to whole tiles), the panels multiplied (linalg.mmt4d, one m0 x n0 block of
    accumulators per tile), the result unpacked. IREE picks 16 x 16 for AVX-512, which needs
    17 loads for 16 FMAs a step, more than two vector load ports feed; 12 x 32 needs 14 for
    24 (docs/benchmarks.md: Register tiles of our own). The sum over the depth runs in
    linalg.matmul's order: the same bits."""
    (m, n), depth = result.shape, avals[0].shape[lc]
    zero = em.fresh("c")
    em.emit(f"{zero} = arith.constant 0.0 : f32")

    def pack(value: str, aval: ShapedArray, contracting: int, size: int) -> tuple[str, str]:
        """`value` as [free / size, depth, size, 1] panels."""
        free = 1 - contracting
        packed = f"tensor<{-(-aval.shape[free] // size)}x{depth}x{size}x1xf32>"
        dest, name = em.fresh("e"), em.fresh()
        em.emit(f"{dest} = tensor.empty() : {packed}")
        pad = f" padding_value({zero} : f32)" if aval.shape[free] % size else ""
        perm = " outer_dims_perm = [1, 0]" if free == 1 else ""
        em.emit(f"{name} = linalg.pack {value}{pad}{perm} inner_dims_pos = [{free}, "
                f"{contracting}] inner_tiles = [{size}, 1] into {dest}"
                f"{f' {{compilation_info = {_ACROSS_ROWS}}}' if free == 0 else ''} : "
                f"{ttype(aval)} -> {packed}")
        return name, packed

    m0, n0 = tile
    lhs, ltype = pack(args[0], avals[0], lc, m0)
    rhs, rtype = pack(args[1], avals[1], rc, n0)
    blocks = f"tensor<{-(-m // m0)}x{-(-n // n0)}x{m0}x{n0}xf32>"
    empty, acc, product = em.fresh("e"), em.fresh("f"), em.fresh()
    em.emit(f"{empty} = tensor.empty() : {blocks}")
    em.emit(f"{acc} = linalg.fill ins({zero} : f32) outs({empty} : {blocks}) -> {blocks}")
    tiles = -(-m // m0) * -(-n // n0)
    rows = max(1, min(PACKED_ROWS_PER_WORKGROUP, tiles // PACKED_MIN_WORKGROUPS))
    block = (f"cache_reduction = [0, 0, {PACKED_DEPTH_BLOCK}, 0, 0, 0], "
             if depth > PACKED_DEPTH_BLOCK else "")
    info = compilation_info(f"distribution = [{rows}, 1, 0, 0, 0, 0], {block}"
                            f"vector_common_parallel = [1, 1, 0, {m0}, {n0}, 0], "
                            f"vector_reduction = [0, 0, 1, 0, 0, 1]", "DoubleTilingExpert")
    em.emit(f"{product} = linalg.mmt4d {{compilation_info = {info}}} ins({lhs}, {rhs} : "
            f"{ltype}, {rtype}) outs({acc} : {blocks}) -> {blocks}")
    name = em.fresh()
    em.emit(f"{name} = linalg.unpack {product} inner_dims_pos = [0, 1] inner_tiles = [{m0}, "
            f"{n0}] into {em.empty(result)} : {blocks} -> {ttype(result)}")
    return name


def lower_debug_print(em, op, args, avals, params, result) -> list[str]:
    """IREE's trace op: the runtime hands the buffers to the HAL module's debug sink."""
    if not args:  # the trace op needs a value: hand over a byte nobody reads
        args, avals = [em.fresh("c")], [ShapedArray((), np.dtype(np.int8))]
        em.emit(f"{args[0]} = arith.constant dense<0> : tensor<i8>")
    values = ", ".join(f"{a} : {ttype(av)}" for a, av in zip(args, avals, strict=True))
    em.emit(f'flow.tensor.trace "{params["key"]}" = [{values}]')
    return []


def lower_host_call(em, op, args, avals, params, result) -> list[str]:
    """A call of the runtime's host function for the row (`ember.solve` on float32:
    ember_host.solve_f32, see runtime/host.py): the leading dims (the first operand's but
    its last two) of the operands and the result are merged into one batch dim, the
    declaration has dynamic dims so that calls of every shape share it, and the result is
    cast back to the row's shape."""
    element = etype(result)
    function = f"@{linalg_ops.HOST_MODULE}.{linalg_ops.host_function(eir.opdef(op), element)}"
    lead = avals[0].ndim - 2

    def batched(aval: ShapedArray) -> tuple[ShapedArray, str]:
        flat = ShapedArray((math.prod(aval.shape[:lead]), *aval.shape[lead:]), aval.dtype)
        return flat, f"tensor<{'?x' * flat.ndim}{element}>"

    ins = [batched(a) for a in avals]
    out_aval, out_type = batched(result)
    in_types = ", ".join(t for _, t in ins)
    em.declarations[f"func.func private {function}({in_types}) -> {out_type}"] = None
    operands = []
    for name, aval, (flat, dynamic) in zip(args, avals, ins, strict=True):
        cast = em.fresh()
        em.emit(f"{cast} = tensor.cast {em.reshape(name, aval, flat)} : {ttype(flat)} to "
                f"{dynamic}")
        operands.append(cast)
    out, back = em.fresh(), em.fresh()
    em.emit(f"{out} = func.call {function}({', '.join(operands)}) : ({in_types}) -> {out_type}")
    em.emit(f"{back} = tensor.cast {out} : {out_type} to {ttype(out_aval)}")
    return [em.reshape(back, out_aval, result)]


LOWERINGS: dict[OpDef, Lowering] = {
    ops.DYNAMIC_SLICE: lower_dynamic_slice,
    ops.DYNAMIC_UPDATE_SLICE: lower_dynamic_update_slice,
    ops.DEBUG_PRINT: lower_debug_print,
    ops.FUSION: lower_fusion,
    ops.SLICE: lower_slice,
    ops.REV: lower_rev,
    ops.TAKE: lower_take,
    ops.SCATTER: lower_scatter,
    ops.CONCATENATE: lower_concatenate,
    ops.COPY: lower_copy,
    ops.AFTER: lower_after,
    ops.IF: lower_if,
    ops.CALL: lower_call,
    ops.CASE: lower_case,
    ops.WHILE: lower_while,
    ops.FOR: lower_for,
    ops.ELEMENTWISE_FOR: lower_elementwise_for,
    ops.CONSTANT: lower_constant,
    **{row: lower_host_call for row in ops.LINALG_OPS},
    ops.IOTA: lower_iota,
    ops.DIMENSION_SIZE: lower_dimension_size,
    ops.BROADCAST_IN_DIM: lower_broadcast_in_dim,
    ops.RESHAPE: lower_reshape,
    ops.TRANSPOSE: lower_transpose,
    ops.DOT_GENERAL: lower_dot_general,
    ops.CUMULATIVE: lower_cumulative,
    ops.SORT: lower_sort,
}


def lowering_for(op: OpDef) -> Lowering:
    if op in LOWERINGS:
        return LOWERINGS[op]
    if op.has(Trait.ELEMENTWISE):
        return lower_elementwise
    if op.has(Trait.REDUCTION):
        return lower_reduction
    raise NotImplementedError(f"no lowering for {op.name}")


def lower_block(em: Emitter, block: mlir.Block) -> list[str]:
    """Lower every op of a block; the names of what its terminator returns or yields."""
    for op in block.operations:
        op = op.operation
        if op.name == "func.return" or eir.opdef(op) is ops.YIELD:
            if op.name == "func.return":
                vals = ", ".join(em.names[v] for v in op.operands)
                types = ", ".join(signless(str(v.type)) for v in op.operands)
                em.emit(f"return {vals} : {types}" if vals else "return")
            return [em.names[v] for v in op.operands]
        if not eir.is_ember(op):
            _carry_over(em, op)
            continue
        row, avals, params = eir.read(op)
        args = [em.names[v] for v in op.operands]
        result = eir.aval_of(op.results[0]) if len(op.results) == 1 else None
        if result is not None and 0 in result.shape and not row.regions:
            lowered = em.empty(result)  # nothing to compute (and 0-size slices do not verify)
        else:
            lowered = lowering_for(row)(em, op, args, avals, params, result)
        names = lowered if isinstance(lowered, list) else [lowered]
        for value, lowered_name in zip(op.results, names, strict=True):
            em.names[value] = lowered_name
    raise ValueError("ember-lower-to-linalg requires every block to end in a terminator")


def _lower_function(func: mlir.Operation, declarations: dict[str, None],
                    choices: dict) -> str:
    em = Emitter(block_lowering=lower_block, declarations=declarations, **choices)
    block = body(func)
    for i, arg in enumerate(block.arguments):
        em.names[arg] = f"%arg{i}"
    em.bind_sizes([(em.names[a], eir.aval_of(a)) for a in block.arguments
                   if str(a.type).startswith("tensor<")])
    lower_block(em, block)
    name = mlir.StringAttr(func.attributes["sym_name"]).value
    ftype = mlir.TypeAttr(func.attributes["function_type"]).value
    tied = {i: k for i, k in decisions(func).items() if isinstance(k, int)}
    fargs = ", ".join(f"%arg{i}: {signless(str(t))}" + (
        f" {{iree.abi.output = {tied[i]} : index}}" if i in tied else "")
        for i, t in enumerate(mlir.FunctionType(ftype).inputs))
    results = ", ".join(signless(str(t)) for t in mlir.FunctionType(ftype).results)
    private = "private " if "sym_visibility" in func.attributes else ""
    header = f"func.func {private}@{name}({fargs}) -> ({results}) {{"
    return "\n".join([header, *("  " + line for line in em.lines), "}"])


def _carry_over(em: Emitter, op: mlir.Operation) -> None:
    """Re-emit an upstream op as it is (generic form), with this function's SSA names."""
    if len(op.regions):
        raise NotImplementedError(f"ember-lower-to-linalg cannot carry over {op.name}: ops "
                                  f"with regions are not supported yet")
    name = em.fresh()
    n = len(op.results)
    lhs = f"{name}:{n} = " if n > 1 else f"{name} = " if n else ""
    for i, r in enumerate(op.results):
        em.names[r] = f"{name}#{i}" if n > 1 else name
    operands = ", ".join(em.names[v] for v in op.operands)
    attrs = ", ".join(f"{k} = {op.attributes[k]}" for k in op.attributes)
    in_types = ", ".join(signless(str(v.type)) for v in op.operands)
    out_types = ", ".join(signless(str(r.type)) for r in op.results)
    em.emit(f'{lhs}"{op.name}"({operands}) {{{attrs}}} : ({in_types}) -> ({out_types})')


# IREE copies a loop-carried tensor on every trip unless it knows the device can read its own
# memory: a transfer from a block argument (whose affinity it does not infer) "to" the device
# is kept as a copy (ElideAsyncCopies: "transfer changes affinity and no topology info").
# Declaring the one device's link to itself lets those transfers go: a scan's stacked outputs
# went from 0.34-2.6 ms a step (growing with the length) to a flat 0.16 ms.
TOPOLOGY = "stream.topology"
SELF_TOPOLOGY = ("#hal.device.topology<links = [(@__device_0 -> @__device_0 = "
                 "{unified_memory = true, transparent_access = true})]>")


@dataclass(frozen=True)
class LowerToLinalg:
    name: str = "ember-lower-to-linalg"
    description: str = "Lower ember ops to linalg, tensor, arith and math"
    cpu: bool = False  # see Emitter.cpu and the fields after it
    matmul_tile: tuple[int, int] | None = None
    reduction_bytes: int = 0

    def run(self, module: mlir.Operation) -> None:
        funcs = list(functions(module))
        declarations: dict[str, None] = {}
        choices = {"cpu": self.cpu, "matmul_tile": self.matmul_tile,
                   "reduction_bytes": self.reduction_bytes}
        text = "\n".join([_lower_function(f, declarations, choices) for f in funcs]
                         + list(declarations))
        with module.context, module.location:
            lowered = mlir.Module.parse(f"module {{\n{text}\n}}")
            module.attributes[TOPOLOGY] = mlir.Attribute.parse(SELF_TOPOLOGY)
        block = module.regions[0].blocks[0]
        for f in funcs:
            f.erase()
        for op in list(lowered.body.operations):
            block.append(op.operation)


# The variants for CPUs (pipeline.linalg_passes).
LOWER_TO_LINALG_CPU = LowerToLinalg(
    "ember-lower-to-linalg-cpu",
    f"{LowerToLinalg.description}; gathers of whole rows as iree_linalg_ext.gather", cpu=True)
LOWER_TO_LINALG_AVX512 = LowerToLinalg(
    "ember-lower-to-linalg-avx512",
    f"{LOWER_TO_LINALG_CPU.description}; float32 matrix products packed into "
    f"{AVX512_MATMUL_TILE[0]}x{AVX512_MATMUL_TILE[1]} tiles (linalg.pack, linalg.mmt4d); "
    f"split reductions with 2 KiB of accumulators", cpu=True, matmul_tile=AVX512_MATMUL_TILE,
    reduction_bytes=2048)
