"""`ember-lower-to-linalg`: rewrite every ember op into linalg / tensor / arith / math.

Each op is lowered by emitting upstream MLIR text for it; the function is re-parsed at the end.
Elementwise ops and reduction combiners take their scalar bodies from the op table, so adding
such an op needs no code here. Unsigned integers become signless on the way (upstream ops
carry signedness in the operation, not the type).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from iree.compiler import ir as mlir

from ember.dialect import ir as eir
from ember.dialect import ops
from ember.dialect.ops import OpDef, Trait
from ember.dialect.types import ShapedArray, kind, signless_element_type

from .bufferize import decisions
from .walk import body, functions

_UNSIGNED = re.compile(r"\bui(8|16|32|64)\b|(?<=x)ui(8|16|32|64)\b")


def signless(text: str) -> str:
    return _UNSIGNED.sub(lambda m: "i" + (m.group(1) or m.group(2)), text)


def _ttype(aval: ShapedArray) -> str:
    return aval.signless_tensor_type()


def _etype(aval: ShapedArray) -> str:
    return signless_element_type(aval.dtype)


def _map(ndim: int, exprs: list[str]) -> str:
    dims = ", ".join(f"d{i}" for i in range(ndim))
    return f"affine_map<({dims}) -> ({', '.join(exprs)})>"


def _identity_map(ndim: int) -> str:
    return _map(ndim, [f"d{i}" for i in range(ndim)])


def _iterators(parallel: int, reduction: int = 0) -> str:
    its = ['"parallel"'] * parallel + ['"reduction"'] * reduction
    return f"[{', '.join(its)}]"


@dataclass
class Emitter:
    """Accumulates the lowered lines of one function, naming SSA values uniquely."""

    lines: list[str] = field(default_factory=list)
    names: dict = field(default_factory=dict)
    counter: int = 0

    def fresh(self, prefix: str = "v") -> str:
        self.counter += 1
        return f"%{prefix}{self.counter}"

    def emit(self, line: str) -> None:
        self.lines.append(line)

    def empty(self, aval: ShapedArray) -> str:
        name = self.fresh("e")
        self.emit(f"{name} = tensor.empty() : {_ttype(aval)}")
        return name

    def filled(self, aval: ShapedArray, value) -> str:
        init = self.empty(aval)
        scalar, name = self.fresh("c"), self.fresh("f")
        text = str(int(bool(value))) if aval.dtype == np.bool_ else eir.literal(value, aval.dtype)
        self.emit(f"{scalar} = arith.constant {text} : {_etype(aval)}")
        self.emit(f"{name} = linalg.fill ins({scalar} : {_etype(aval)}) outs({init} : "
                  f"{_ttype(aval)}) -> {_ttype(aval)}")
        return name

    def scalar_body(self, template: str, args: list[str], elem: str, result_elem: str) -> str:
        """Instantiate an op-table scalar template; returns the SSA name of its result."""
        if template.strip() == "{r} = {0}":
            return args[0]
        subst = {"t": elem, "rt": result_elem, "r": self.fresh("s")}
        subst.update({f"x{i}": self.fresh("x") for i in range(template.count("{x"))})
        template = template.replace("{", "{{").replace("}", "}}")
        template = re.sub(r"\{\{(\w+)\}\}", r"{\1}", template)
        for line in template.split("\n"):
            self.emit("  " + line.format(*args, **subst))
        return subst["r"]

    def generic(self, inputs: list[tuple[str, ShapedArray, str]], out: str, out_aval: ShapedArray,
                out_map: str, iterators: str, body: Callable[[list[str], str], str]) -> str:
        """A linalg.generic; `body(block_args, out_arg)` emits the region and returns the
        value to yield."""
        name = self.fresh()
        maps = ", ".join([m for _, _, m in inputs] + [out_map])
        ins = ", ".join(n for n, _, _ in inputs)
        in_types = ", ".join(_ttype(a) for _, a, _ in inputs)
        ins_clause = f" ins({ins} : {in_types})" if inputs else ""
        self.emit(f"{name} = linalg.generic {{indexing_maps = [{maps}], iterator_types = "
                  f"{iterators}}}{ins_clause} outs({out} : {_ttype(out_aval)}) {{")
        args = [self.fresh("in") for _ in inputs]
        out_arg = self.fresh("out")
        block = ", ".join(f"{a}: {_etype(av)}" for a, (_, av, _) in zip(args, inputs, strict=True))
        self.emit(f"^bb0({block}{', ' if block else ''}{out_arg}: {_etype(out_aval)}):")
        result = body(args, out_arg)
        self.emit(f"  linalg.yield {result} : {_etype(out_aval)}")
        self.emit(f"}} -> {_ttype(out_aval)}")
        return name


Lowering = Callable[[Emitter, OpDef, list[str], list[ShapedArray], dict, ShapedArray], str]


def _derived(avals: list[ShapedArray], result: ShapedArray, params: dict) -> dict:
    """What scalar templates may ask besides IR attributes (convert's source and target)."""
    src = avals[-1] if avals else result
    return dict(params, to=kind(result.dtype), src_bits=_bits(src), dst_bits=_bits(result),
                same=src.dtype == result.dtype)


def _bits(aval: ShapedArray) -> int:
    return 1 if aval.dtype == np.bool_ else aval.dtype.itemsize * 8


def lower_elementwise(em: Emitter, op: OpDef, args: list[str], avals: list[ShapedArray],
                      params: dict, result: ShapedArray) -> str:
    template = op.scalar(kind(avals[-1].dtype), _derived(avals, result, params))
    ident = _identity_map(result.ndim)
    inputs = [(a, av, ident) for a, av in zip(args, avals, strict=True)]
    elem = _etype(avals[-1])
    return em.generic(inputs, em.empty(result), result, ident, _iterators(result.ndim),
                      lambda bargs, _: em.scalar_body(template, bargs, elem, _etype(result)))


def lower_constant(em, op, args, avals, params, result) -> str:
    name = em.fresh()
    em.emit(f"{name} = arith.constant {signless(str(params['_attr']))}")
    return name


def lower_iota(em, op, args, avals, params, result) -> str:
    def body(_, __):
        idx, i64, out = em.fresh("i"), em.fresh("i"), em.fresh("i")
        em.emit(f"  {idx} = linalg.index {params['dimension']} : index")
        em.emit(f"  {i64} = arith.index_cast {idx} : index to i64")
        k, elem = kind(result.dtype), _etype(result)
        if k == "f":
            em.emit(f"  {out} = arith.sitofp {i64} : i64 to {elem}")
        elif elem == "i64":
            return i64
        else:
            em.emit(f"  {out} = arith.trunci {i64} : i64 to {elem}")
        return out

    return em.generic([], em.empty(result), result, _identity_map(result.ndim),
                      _iterators(result.ndim), body)


def lower_broadcast_in_dim(em, op, args, avals, params, result) -> str:
    (x,) = avals
    exprs = [("0" if x.shape[i] == 1 and result.shape[d] != 1 else f"d{d}")
             for i, d in enumerate(params["broadcast_dimensions"])]
    inputs = [(args[0], x, _map(result.ndim, exprs))]
    return em.generic(inputs, em.empty(result), result, _identity_map(result.ndim),
                      _iterators(result.ndim), lambda bargs, _: bargs[0])


def lower_reshape(em, op, args, avals, params, result) -> str:
    """Collapse to 1-D, then expand: reassociative reshapes that IREE fuses across, where a
    tensor.reshape would cut dispatch regions."""
    (x,) = avals
    value = args[0]
    flat = ShapedArray((x.size,), x.dtype)
    if x.ndim == 0 or result.ndim == 0:
        name = em.fresh()
        verb = "expand_shape" if x.ndim == 0 else "collapse_shape"
        shape = f" output_shape [{', '.join(map(str, result.shape))}]" if x.ndim == 0 else ""
        em.emit(f"{name} = tensor.{verb} {value} []{shape} : {_ttype(x)} into {_ttype(result)}")
        return name
    if x.ndim > 1:
        name = em.fresh()
        em.emit(f"{name} = tensor.collapse_shape {value} [{list(range(x.ndim))}] : "
                f"{_ttype(x)} into {_ttype(flat)}")
        value = name
    if result.ndim > 1:
        name = em.fresh()
        em.emit(f"{name} = tensor.expand_shape {value} [{list(range(result.ndim))}] "
                f"output_shape [{', '.join(map(str, result.shape))}] : {_ttype(flat)} into "
                f"{_ttype(result)}")
        value = name
    return value


def lower_transpose(em, op, args, avals, params, result) -> str:
    name, init = em.fresh(), em.empty(result)
    perm = ", ".join(map(str, params["permutation"]))
    em.emit(f"{name} = linalg.transpose ins({args[0]} : {_ttype(avals[0])}) outs({init} : "
            f"{_ttype(result)}) permutation = [{perm}]")
    return name


def _clamped_offsets(em: Emitter, starts: list[str], avals: list[ShapedArray],
                     shape: tuple[int, ...], sizes: tuple[int, ...]) -> list[str]:
    """Index values for run-time starts, clamped to [0, dim - size] as XLA does."""
    offsets = []
    for start, aval, dim, size in zip(starts, avals, shape, sizes, strict=True):
        scalar, idx, lo, hi, clamped = (em.fresh("i") for _ in range(5))
        em.emit(f"{scalar} = tensor.extract {start}[] : {_ttype(aval)}")
        cast = "index_castui" if kind(aval.dtype) == "u" else "index_cast"
        em.emit(f"{idx} = arith.{cast} {scalar} : {_etype(aval)} to index")
        em.emit(f"{lo} = arith.constant 0 : index")
        em.emit(f"{hi} = arith.constant {dim - size} : index")
        em.emit(f"{clamped} = arith.maxsi {idx}, {lo} : index")
        final = em.fresh("i")
        em.emit(f"{final} = arith.minsi {clamped}, {hi} : index")
        offsets.append(final)
    return offsets


def lower_dynamic_slice(em, op, args, avals, params, result) -> str:
    x = avals[0]
    offsets = _clamped_offsets(em, args[1:], avals[1:], x.shape, tuple(params["sizes"]))
    name = em.fresh()
    em.emit(f"{name} = tensor.extract_slice {args[0]}[{', '.join(offsets)}] "
            f"[{', '.join(map(str, result.shape))}] [{', '.join(['1'] * x.ndim)}] : "
            f"{_ttype(x)} to {_ttype(result)}")
    return name


def lower_dynamic_update_slice(em, op, args, avals, params, result) -> str:
    x, update = avals[0], avals[1]
    offsets = _clamped_offsets(em, args[2:], avals[2:], x.shape, update.shape)
    name = em.fresh()
    em.emit(f"{name} = tensor.insert_slice {args[1]} into {args[0]}[{', '.join(offsets)}] "
            f"[{', '.join(map(str, update.shape))}] [{', '.join(['1'] * x.ndim)}] : "
            f"{_ttype(update)} into {_ttype(x)}")
    return name


def lower_slice(em, op, args, avals, params, result) -> str:
    name = em.fresh()
    join = lambda v: ", ".join(map(str, v))  # noqa: E731
    # An empty slice may start at the end; MLIR wants every offset inside its dimension.
    starts = [s if n else 0 for s, n in zip(params["start_indices"], result.shape, strict=True)]
    em.emit(f"{name} = tensor.extract_slice {args[0]}[{join(starts)}] "
            f"[{join(result.shape)}] [{join(params['strides'])}] : {_ttype(avals[0])} to "
            f"{_ttype(result)}")
    return name


def lower_rev(em, op, args, avals, params, result) -> str:
    """Reads mirrored coordinates with tensor.extract (a reversing index map such as
    `(d0) -> (5 - d0)` breaks IREE's tiling)."""
    dims = set(params["dimensions"])

    def body(_, __):
        coords = []
        for d, n in enumerate(result.shape):
            i = em.fresh("r")
            em.emit(f"  {i} = linalg.index {d} : index")
            if d in dims:
                last, mirrored = em.fresh("r"), em.fresh("r")
                em.emit(f"  {last} = arith.constant {n - 1} : index")
                em.emit(f"  {mirrored} = arith.subi {last}, {i} : index")
                i = mirrored
            coords.append(i)
        out = em.fresh("r")
        em.emit(f"  {out} = tensor.extract {args[0]}[{', '.join(coords)}] : {_ttype(avals[0])}")
        return out

    return em.generic([], em.empty(result), result, _identity_map(result.ndim),
                      _iterators(result.ndim), body)


def lower_take(em, op, args, avals, params, result) -> str:
    """A gather as a linalg.generic over the result whose body extracts from the operand;
    indices are normalized (negative from the end) and clamped, as JAX's indexing does."""
    x, idx = avals
    axis, k = params["axis"], idx.ndim
    idx_map = _map(result.ndim, [f"d{axis + j}" for j in range(k)])

    def body(bargs, _):
        i, n, zero, neg, wrapped, top, low, clamped = (em.fresh("g") for _ in range(8))
        cast = "index_castui" if kind(idx.dtype) == "u" else "index_cast"
        em.emit(f"  {i} = arith.{cast} {bargs[0]} : {_etype(idx)} to index")
        em.emit(f"  {n} = arith.constant {x.shape[axis]} : index")
        em.emit(f"  {zero} = arith.constant 0 : index")
        em.emit(f"  {neg} = arith.cmpi slt, {i}, {zero} : index")
        em.emit(f"  {wrapped} = arith.addi {i}, {n} : index")
        em.emit(f"  {low} = arith.select {neg}, {wrapped}, {i} : index")
        em.emit(f"  {top} = arith.constant {x.shape[axis] - 1} : index")
        em.emit(f"  {clamped} = arith.maxsi {low}, {zero} : index")
        final = em.fresh("g")
        em.emit(f"  {final} = arith.minsi {clamped}, {top} : index")
        coords = []
        for d in range(x.ndim):
            if d == axis:
                coords.append(final)
                continue
            c = em.fresh("g")
            em.emit(f"  {c} = linalg.index {d if d < axis else d + k - 1} : index")
            coords.append(c)
        out = em.fresh("g")
        em.emit(f"  {out} = tensor.extract {args[0]}[{', '.join(coords)}] : {_ttype(x)}")
        return out

    return em.generic([(args[1], idx, idx_map)], em.empty(result), result,
                      _identity_map(result.ndim), _iterators(result.ndim), body)


_SCATTER_COMBINE = {"add": ops.ADD, "mul": ops.MUL, "min": ops.MIN, "max": ops.MAX}


def lower_scatter(em, op, args, avals, params, result) -> str:
    """Each output element folds the updates aimed at it, in order (O(N*K): meant for the
    small updates of `.at[]`); positions out of range match nothing, so they are dropped.
    Two reductions (was any update aimed here; their combined value) then one select: the
    operand is never a linalg `outs`, which IREE may write in place into the caller's
    buffer (seen with an argument as `outs`; iree-org/iree#16168)."""
    x, pos, upd = avals
    row = _SCATTER_COMBINE.get(params["combine"])
    inputs = [(args[1], pos, _map(2, ["d1"])), (args[2], upd, _map(2, ["d1"]))]
    flag = ShapedArray(x.shape, np.dtype(np.bool_))

    def matches(bargs) -> str:
        j, j_int, match = (em.fresh("s") for _ in range(3))
        em.emit(f"  {j} = linalg.index 0 : index")
        em.emit(f"  {j_int} = arith.index_cast {j} : index to {_etype(pos)}")
        em.emit(f"  {match} = arith.cmpi eq, {bargs[0]}, {j_int} : {_etype(pos)}")
        return match

    def found_body(bargs, out):
        hit = em.fresh("s")
        em.emit(f"  {hit} = arith.ori {out}, {matches(bargs)} : i1")
        return hit

    def value_body(bargs, out):
        match, picked = matches(bargs), em.fresh("s")
        new = bargs[1]
        if row is not None:
            template = row.scalar(kind(x.dtype), _derived([x, x], x, {}))
            new = em.scalar_body(template, [out, bargs[1]], _etype(x), _etype(x))
        em.emit(f"  {picked} = arith.select {match}, {new}, {out} : {_etype(x)}")
        return picked

    out_map, its = _map(2, ["d0"]), _iterators(1, 1)
    found = em.generic(inputs, em.filled(flag, False), flag, out_map, its, found_body)
    first = {"mul": 1, "min": _extreme(x, high=True), "max": _extreme(x, high=False)}
    value = em.generic(inputs, em.filled(x, first.get(params["combine"], 0)), x, out_map, its,
                       value_body)

    def combine(bargs, _):
        new = bargs[2]
        if row is not None:
            template = row.scalar(kind(x.dtype), _derived([x, x], x, {}))
            new = em.scalar_body(template, [bargs[1], bargs[2]], _etype(x), _etype(x))
        out = em.fresh("s")
        em.emit(f"  {out} = arith.select {bargs[0]}, {new}, {bargs[1]} : {_etype(x)}")
        return out

    ident = _identity_map(1)
    return em.generic([(found, flag, ident), (args[0], x, ident), (value, x, ident)],
                      em.empty(x), x, ident, _iterators(1), combine)


def _extreme(aval: ShapedArray, high: bool):
    if aval.dtype == np.bool_:
        return high
    if kind(aval.dtype) == "f":
        return np.inf if high else -np.inf
    info = np.iinfo(aval.dtype)
    return info.max if high else info.min


def lower_reduction(em, op, args, avals, params, result) -> str:
    (x,) = avals
    axes = tuple(params["axes"])
    kept = [i for i in range(x.ndim) if i not in axes]
    # Loop dims: kept axes first (parallel), then reduced axes.
    order = kept + list(axes)
    in_map = _map(x.ndim, [f"d{order.index(i)}" for i in range(x.ndim)])
    out_map = _map(x.ndim, [f"d{i}" for i in range(len(kept))])
    template = op.scalar(kind(x.dtype), params)
    init = em.filled(result, op.init(result.dtype))
    return em.generic([(args[0], x, in_map)], init, result, out_map,
                      _iterators(len(kept), len(axes)),
                      lambda b, acc: em.scalar_body(template, [b[0], acc], _etype(x), _etype(x)))


def lower_dot_general(em, op, args, avals, params, result) -> str:
    lhs, rhs = avals
    lc, rc = tuple(params["lhs_contracting"]), tuple(params["rhs_contracting"])
    lb, rb = tuple(params["lhs_batch"]), tuple(params["rhs_batch"])
    init = em.filled(result, 0)
    k = kind(lhs.dtype)
    if k == "f" and not lb and lhs.ndim == rhs.ndim == 2 and lc == (1,) and rc == (0,):
        name = em.fresh()
        em.emit(f"{name} = linalg.matmul ins({args[0]}, {args[1]} : {_ttype(lhs)}, "
                f"{_ttype(rhs)}) outs({init} : {_ttype(result)}) -> {_ttype(result)}")
        return name
    nb = len(lb)
    lfree = [i for i in range(lhs.ndim) if i not in lc + lb]
    rfree = [i for i in range(rhs.ndim) if i not in rc + rb]
    nloop = result.ndim + len(lc)

    def dim_of(side_free, batch, contracting, i):
        if i in batch:
            return f"d{batch.index(i)}"
        if i in contracting:
            return f"d{result.ndim + contracting.index(i)}"
        offset = nb if side_free is lfree else nb + len(lfree)
        return f"d{offset + side_free.index(i)}"

    lmap = _map(nloop, [dim_of(lfree, lb, lc, i) for i in range(lhs.ndim)])
    rmap = _map(nloop, [dim_of(rfree, rb, rc, i) for i in range(rhs.ndim)])
    omap = _map(nloop, [f"d{i}" for i in range(result.ndim)])
    mul = ops.MUL.scalar(k, params)
    add = ops.ADD.scalar(k, params)
    elem = _etype(lhs)

    def body(b, acc):
        prod = em.scalar_body(mul, b, elem, elem)
        return em.scalar_body(add, [acc, prod], elem, elem)

    return em.generic([(args[0], lhs, lmap), (args[1], rhs, rmap)], init, result, omap,
                      _iterators(result.ndim, len(lc)), body)


def _results(name: str, n: int) -> tuple[str, list[str]]:
    """The left-hand side for `n` results named `name`, and how each is referred to."""
    if n == 1:
        return name, [name]
    return f"{name}:{n}", [f"{name}#{i}" for i in range(n)]


def _predicate(em: Emitter, value: str, aval: ShapedArray) -> str:
    """An i1 from a scalar tensor: the bool itself, or `!= 0` for integers."""
    scalar = em.fresh("p")
    em.emit(f"{scalar} = tensor.extract {value}[] : {_ttype(aval)}")
    if aval.dtype == np.bool_:
        return scalar
    zero, flag = em.fresh("c"), em.fresh("p")
    em.emit(f"{zero} = arith.constant 0 : {_etype(aval)}")
    em.emit(f"{flag} = arith.cmpi ne, {scalar}, {zero} : {_etype(aval)}")
    return flag


def _region(em: Emitter, region: mlir.Region, arg_names: list[str] = ()) -> list[str]:
    """Lower a region's block in place (its arguments named `arg_names`); the names of the
    values its ember.yield returns."""
    block = region.blocks[0]
    for arg, name in zip(block.arguments, arg_names, strict=True):
        em.names[arg] = name
    return lower_block(em, block)


def lower_if(em, row, args, avals, params, result) -> list[str]:
    results = [_ttype(r) for r in params["results"]]
    flag = _predicate(em, args[0], avals[0])
    lhs, names = _results(em.fresh(), len(results))
    em.emit(f"{lhs} = scf.if {flag} -> ({', '.join(results)}) {{")
    for i, region in enumerate(params["_regions"]):
        outs = _region(em, region)
        em.emit(f"  scf.yield {', '.join(outs)} : {', '.join(results)}")
        em.emit("} else {" if i == 0 else "}")
    return names


def lower_case(em, row, args, avals, params, result) -> list[str]:
    """A chain of scf.if on `index == i`, the last branch innermost (the index is clamped).
    Not scf.index_switch: IREE 3.13's stream conversion miscounts its results."""
    results = [_ttype(r) for r in params["results"]]
    scalar = em.fresh("p")
    em.emit(f"{scalar} = tensor.extract {args[0]}[] : {_ttype(avals[0])}")
    lhs, names = _results(em.fresh(), len(results))
    regions = list(params["_regions"])

    def branch(i: int, lhs: str | None) -> None:
        if i == len(regions) - 1:
            outs = _region(em, regions[i])
            em.emit(f"  scf.yield {', '.join(outs)} : {', '.join(results)}")
            return
        case, flag = em.fresh("c"), em.fresh("p")
        em.emit(f"{case} = arith.constant {i} : {_etype(avals[0])}")
        em.emit(f"{flag} = arith.cmpi eq, {scalar}, {case} : {_etype(avals[0])}")
        inner, inner_names = _results(em.fresh(), len(results))
        em.emit(f"{lhs or inner} = scf.if {flag} -> ({', '.join(results)}) {{")
        outs = _region(em, regions[i])
        em.emit(f"  scf.yield {', '.join(outs)} : {', '.join(results)}")
        em.emit("} else {")
        branch(i + 1, None)
        em.emit("}")
        if lhs is None:  # a nested if: the enclosing else-region yields its results
            em.emit(f"  scf.yield {', '.join(inner_names)} : {', '.join(results)}")

    branch(0, lhs)
    return names


def lower_while(em, row, args, avals, params, result) -> list[str]:
    results = [_ttype(r) for r in params["results"]]
    n = len(results)
    cond_region, body_region = params["_regions"]
    before = [em.fresh("w") for _ in range(n)]
    after = [em.fresh("w") for _ in range(n)]
    lhs, names = _results(em.fresh(), n)
    inits = ", ".join(f"{b} = {a}" for b, a in zip(before, args, strict=True))
    em.emit(f"{lhs} = scf.while ({inits}) : ({', '.join(results)}) -> ({', '.join(results)}) {{")
    (keep,) = _region(em, cond_region, before)
    flag = em.fresh("p")
    em.emit(f"  {flag} = tensor.extract {keep}[] : tensor<i1>")
    em.emit(f"  scf.condition({flag}) {', '.join(before)} : {', '.join(results)}")
    em.emit("} do {")
    em.emit(f"^bb0({', '.join(f'{a}: {t}' for a, t in zip(after, results, strict=True))}):")
    outs = _region(em, body_region, after)
    em.emit(f"  scf.yield {', '.join(outs)} : {', '.join(results)}")
    em.emit("}")
    return names


def lower_fusion(em, row, args, avals, params, result) -> str:
    """One linalg.generic over the root's iteration domain: inputs read with identity or
    broadcast maps, the members' scalar bodies chained, a reduction root's combiner last."""
    block = params["_regions"][0].blocks[0]
    *members, end = [op.operation for op in block.operations]
    root = members[-1]
    root_row, root_avals, root_params = eir.read(root)
    reduce = root_row.has(Trait.REDUCTION)
    domain = root_avals[0].shape if reduce else eir.aval_of(root.results[0]).shape
    axes = tuple(root_params["axes"]) if reduce else ()
    order = [d for d in range(len(domain)) if d not in axes] + list(axes)  # parallel first
    inputs, reads = [], []  # generic inputs (name, aval, map); the region value each feeds
    for i, arg in enumerate(block.arguments):
        if any(u.owner.operation.name != "ember.broadcast_in_dim" for u in arg.uses):
            inputs.append((args[i], avals[i], _map(len(order), [
                f"d{order.index(d)}" for d in range(len(domain))])))
            reads.append(arg)
    for op in members:
        if eir.opdef(op) is ops.BROADCAST_IN_DIM:
            i = list(block.arguments).index(op.operands[0])
            dims = eir.read(op)[2]["broadcast_dimensions"]
            inputs.append((args[i], avals[i], _map(len(order), [
                "0" if avals[i].shape[j] == 1 and domain[d] != 1 else f"d{order.index(d)}"
                for j, d in enumerate(dims)])))
            reads.append(op.results[0])

    def body(bargs: list[str], out: str) -> str:
        scalars = dict(zip(reads, bargs, strict=True))
        for op in members:
            op_row, op_avals, op_params = eir.read(op)
            res = eir.aval_of(op.results[0])
            if op_row is ops.BROADCAST_IN_DIM:
                continue
            if op_row is ops.CONSTANT:
                name = em.fresh("c")
                value = eir.splat_value(op.attributes["value"])
                em.emit(f"  {name} = arith.constant {eir.literal(value, res.dtype)} : "
                        f"{_etype(res)}")
            elif op_row.has(Trait.REDUCTION):
                template = op_row.scalar(kind(res.dtype), op_params)
                return em.scalar_body(template, [scalars[op.operands[0]], out], _etype(res),
                                      _etype(res))
            else:
                template = op_row.scalar(kind(op_avals[-1].dtype),
                                         _derived(op_avals, res, op_params))
                name = em.scalar_body(template, [scalars[v] for v in op.operands],
                                      _etype(op_avals[-1]), _etype(res))
            scalars[op.results[0]] = name
        return scalars[end.operands[0]]

    if reduce:
        out_map = _map(len(order), [f"d{i}" for i in range(len(order) - len(axes))])
        return em.generic(inputs, em.filled(result, root_row.init(result.dtype)), result,
                          out_map, _iterators(len(order) - len(axes), len(axes)), body)
    return em.generic(inputs, em.empty(result), result, _identity_map(len(order)),
                      _iterators(len(order)), body)


def lower_debug_print(em, op, args, avals, params, result) -> list[str]:
    """IREE's trace op: the runtime hands the buffers to the HAL module's debug sink."""
    if not args:  # the trace op needs a value: hand over a byte nobody reads
        args, avals = [em.fresh("c")], [ShapedArray((), np.dtype(np.int8))]
        em.emit(f"{args[0]} = arith.constant dense<0> : tensor<i8>")
    values = ", ".join(f"{a} : {_ttype(av)}" for a, av in zip(args, avals, strict=True))
    em.emit(f'flow.tensor.trace "{params["key"]}" = [{values}]')
    return []


LOWERINGS: dict[OpDef, Lowering] = {
    ops.DYNAMIC_SLICE: lower_dynamic_slice,
    ops.DYNAMIC_UPDATE_SLICE: lower_dynamic_update_slice,
    ops.DEBUG_PRINT: lower_debug_print,
    ops.FUSION: lower_fusion,
    ops.SLICE: lower_slice,
    ops.REV: lower_rev,
    ops.TAKE: lower_take,
    ops.SCATTER: lower_scatter,
    ops.IF: lower_if,
    ops.CASE: lower_case,
    ops.WHILE: lower_while,
    ops.CONSTANT: lower_constant,
    ops.IOTA: lower_iota,
    ops.BROADCAST_IN_DIM: lower_broadcast_in_dim,
    ops.RESHAPE: lower_reshape,
    ops.TRANSPOSE: lower_transpose,
    ops.DOT_GENERAL: lower_dot_general,
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
        if op.name in ("func.return", "ember.yield"):
            if op.name == "func.return":
                vals = ", ".join(em.names[v] for v in op.operands)
                types = ", ".join(signless(str(v.type)) for v in op.operands)
                em.emit(f"return {vals} : {types}" if vals else "return")
            return [em.names[v] for v in op.operands]
        if not eir.is_ember(op):
            _carry_over(em, op)
            continue
        row, avals, params = eir.read(op)
        if row is ops.CONSTANT:
            params["_attr"] = op.attributes["value"]
        if row.regions:
            params["_regions"] = list(op.regions)
        args = [em.names[v] for v in op.operands]
        result = eir.aval_of(op.results[0]) if len(op.results) == 1 else None
        lowered = lowering_for(row)(em, row, args, avals, params, result)
        names = lowered if isinstance(lowered, list) else [lowered]
        for value, lowered_name in zip(op.results, names, strict=True):
            em.names[value] = lowered_name
    raise ValueError("ember-lower-to-linalg requires every block to end in a terminator")


def _lower_function(func: mlir.Operation) -> str:
    em = Emitter()
    block = body(func)
    for i, arg in enumerate(block.arguments):
        em.names[arg] = f"%arg{i}"
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


@dataclass(frozen=True)
class LowerToLinalg:
    name = "ember-lower-to-linalg"
    description = "Lower ember ops to linalg, tensor, arith and math"

    def run(self, module: mlir.Operation) -> None:
        funcs = list(functions(module))
        text = "\n".join(_lower_function(f) for f in funcs)
        with module.context, module.location:
            lowered = mlir.Module.parse(f"module {{\n{text}\n}}")
        block = module.regions[0].blocks[0]
        for f in funcs:
            f.erase()
        for op in list(lowered.body.operations):
            block.append(op.operation)


