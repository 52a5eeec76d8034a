"""Lowering of ember.sort: a bottom-up merge sort of data-parallel passes.

Not IREE's own `iree_linalg_ext.sort`: on the CPU it runs each row as one sequential,
quadratic loop (8,192 floats: 42 ms; 1M: over ten minutes), and it sorts its `outs` in place,
which IREE 3.13 lets corrupt a function argument that is also returned (`(sort(x), x)` gave
the sorted x twice; an eager sort(a) sorted `a` itself). Rows are padded to a power of two
and sorted in log2 of that many passes; pass p merges neighbouring sorted runs of m = 2^p.
Each pass is one linalg.generic over the output: output position t of a merged pair finds,
by a binary search on the "merge path", how many of its first t elements come from the left
run (i) and from the right run (t - i), and gathers its key and payload from there. The merge
is stable (the left run wins ties), so the whole sort is stable, with NaN last as before.
"""

from __future__ import annotations

import numpy as np

from ember.dialect.types import ShapedArray, kind

from .emitter import Emitter, etype, identity_map, iterators, results_lhs, ttype
from .lower_indexing import lower_copy

PASSES_PER_KERNEL = 7

_LESS = {"f": "olt", "i": "slt", "u": "ult", "b": "ult"}


def _compare(em: Emitter, predicate: str, a: str, b: str, aval: ShapedArray) -> str:
    name = em.fresh("p")
    op = "cmpf" if kind(aval.dtype) == "f" else "cmpi"
    em.emit(f"  {name} = arith.{op} {predicate}, {a}, {b} : {etype(aval)}")
    return name


def _logic(em: Emitter, op: str, a: str, b: str) -> str:
    name = em.fresh("p")
    em.emit(f"  {name} = arith.{op} {a}, {b} : i1")
    return name


def _less(em: Emitter, a: str, b: str, keys: ShapedArray) -> str:
    """a sorts strictly before b: `<`, with NaN after every number."""
    k = kind(keys.dtype)
    less = _compare(em, _LESS[k], a, b, keys)
    if k != "f":
        return less
    nan_last = _logic(em, "andi", _compare(em, "ord", a, a, keys),
                      _compare(em, "uno", b, b, keys))
    return _logic(em, "ori", less, nan_last)


def lower_sort(em, op, args, avals, params, result) -> str:
    """Keys and payload sorted together (sort is sort(x, x): then only the keys move)."""
    keys, payload = avals
    dim = params["dimension"]
    same = args[0] == args[1]
    n = keys.shape[dim]
    size = 1 << (n - 1).bit_length()  # padded to a power of two with keys that sort last
    k, p = _pad(em, args[0], keys, dim, size, _highest(keys)), None
    if not same:
        p = _pad(em, args[1], payload, dim, size, 0)
    padded_keys, padded_payload = (_resized(a, dim, size) for a in (keys, payload))
    k, p = _merge_passes(em, k, p, padded_keys, padded_payload, dim)
    out, aval = (k, padded_keys) if same else (p, padded_payload)
    return _unpad(em, out, aval, dim, n)


def _merge_passes(em: Emitter, k: str, p: str | None, keys: ShapedArray, payload: ShapedArray,
                  dim: int) -> tuple[str, str | None]:
    """log2(size) passes, m = 1, 2, 4, ... A kernel takes its run length at run time, so one
    scf.for runs a group of passes through one compiled kernel (a kernel per pass would
    compile log2(size) of them, ~0.3 s each); the kernel's search has as many steps as the
    group's longest run needs, so groups of at most PASSES_PER_KERNEL keep short runs cheap
    (1M floats: 0.28 s with one kernel, 0.17 s with a kernel per pass)."""
    passes = (keys.shape[dim] - 1).bit_length()
    if not passes:  # one element: sorted already
        return k, p
    groups = -(-passes // PASSES_PER_KERNEL)
    bounds = [passes * g // groups for g in range(groups + 1)]
    for first, last in zip(bounds, bounds[1:], strict=False):
        k, p = _pass_loop(em, k, p, keys, payload, dim, first, last)
    return k, p


def _pass_loop(em: Emitter, k: str, p: str | None, keys: ShapedArray, payload: ShapedArray,
               dim: int, first: int, last: int) -> tuple[str, str | None]:
    """Passes first..last-1 (runs of 2^first .. 2^(last-1)) as an scf.for over one kernel."""
    types = [keys] + ([payload] if p else [])
    lhs, results = results_lhs(em.fresh(), len(types))
    lo, hi, one, iv = em.fresh("c"), em.fresh("c"), em.fresh("c"), em.fresh("i")
    em.emit(f"{lo} = arith.constant {first} : index")
    em.emit(f"{hi} = arith.constant {last} : index")
    em.emit(f"{one} = arith.constant 1 : index")
    carried = [em.fresh("w") for _ in types]
    inits = ", ".join(f"{c} = {v}" for c, v in zip(carried, [k, p], strict=False))
    em.emit(f"{lhs} = scf.for {iv} = {lo} to {hi} step {one} iter_args({inits}) -> "
            f"({', '.join(ttype(t) for t in types)}) {{")
    m, twice, mask = em.fresh("i"), em.fresh("i"), em.fresh("i")
    em.emit(f"  {m} = arith.shli {one}, {iv} : index")
    em.emit(f"  {twice} = arith.shli {m}, {one} : index")
    em.emit(f"  {mask} = arith.subi {twice}, {one} : index")
    k2, p2 = _merge_pass(em, carried[0], carried[1] if p else None, keys, payload, dim, m,
                         mask, last)
    em.emit(f"  scf.yield {', '.join([k2] + ([p2] if p else []))} : "
            f"{', '.join(ttype(t) for t in types)}")
    em.emit("}")
    return results[0], (results[1] if p else None)


def _resized(aval: ShapedArray, dim: int, size: int) -> ShapedArray:
    return ShapedArray(aval.shape[:dim] + (size,) + aval.shape[dim + 1:], aval.dtype)


def _highest(aval: ShapedArray):
    """A key that sorts after (or ties with, and then stays after) every key: NaN, the
    largest integer, true."""
    if aval.dtype == np.bool_:
        return True
    return np.nan if kind(aval.dtype) == "f" else np.iinfo(aval.dtype).max


def _pad(em: Emitter, value: str, aval: ShapedArray, dim: int, size: int, fill) -> str:
    """The operand padded to `size` along `dim`: a fresh tensor either way, since the merge
    loop updates its carries in the initial buffer (IREE 3.13 does so even while another
    dispatch still reads it: a payload the program also used failed to compile)."""
    if aval.shape[dim] == size:
        return lower_copy(em, None, [value], [aval], {}, aval)
    padded = _resized(aval, dim, size)
    name, zeros = em.fresh(), ", ".join(["0"] * aval.ndim)
    em.emit(f"{name} = tensor.insert_slice {value} into {em.filled(padded, fill)}[{zeros}] "
            f"[{', '.join(map(str, aval.shape))}] [{', '.join(['1'] * aval.ndim)}] : "
            f"{ttype(aval)} into {ttype(padded)}")
    return name


def _unpad(em: Emitter, value: str, aval: ShapedArray, dim: int, n: int) -> str:
    if aval.shape[dim] == n:
        return value
    out = _resized(aval, dim, n)
    name, zeros = em.fresh(), ", ".join(["0"] * aval.ndim)
    em.emit(f"{name} = tensor.extract_slice {value}[{zeros}] [{', '.join(map(str, out.shape))}]"
            f" [{', '.join(['1'] * aval.ndim)}] : {ttype(aval)} to {ttype(out)}")
    return name


class _Index:
    """Index arithmetic inside a linalg.generic body, each constant made once."""

    def __init__(self, em: Emitter):
        self.em, self.consts = em, {}

    def const(self, value: int) -> str:
        if value not in self.consts:
            name = self.consts[value] = self.em.fresh("k")
            self.em.emit(f"  {name} = arith.constant {value} : index")
        return self.consts[value]

    def op(self, name: str, a: str, b: str | int) -> str:
        out = self.em.fresh("k")
        b = self.const(b) if isinstance(b, int) else b
        self.em.emit(f"  {out} = arith.{name} {a}, {b} : index")
        return out

    def select(self, flag: str, a: str, b: str) -> str:
        out = self.em.fresh("k")
        self.em.emit(f"  {out} = arith.select {flag}, {a}, {b} : index")
        return out

    def less(self, a: str, b: str | int) -> str:
        out = self.em.fresh("p")
        b = self.const(b) if isinstance(b, int) else b
        self.em.emit(f"  {out} = arith.cmpi slt, {a}, {b} : index")
        return out


def _merge_pass(em: Emitter, k_in: str, p_in: str | None, keys: ShapedArray,
                payload: ShapedArray, dim: int, m: str, mask: str,
                steps: int) -> tuple[str, str | None]:
    """Merge each pair of sorted runs of length m along `dim` (a power of two that long);
    `mask` is 2m - 1 and `steps` the bit length of the longest run."""
    size, rank = keys.shape[dim], keys.ndim
    outs = [(em.empty(keys), keys)] + ([(em.empty(payload), payload)] if p_in else [])
    name = em.fresh()
    lhs, results = results_lhs(name, len(outs))
    maps = ", ".join([identity_map(rank)] * len(outs))
    em.emit(f"{lhs} = linalg.generic {{indexing_maps = [{maps}], iterator_types = "
            f"{iterators(rank)}}} outs({', '.join(o for o, _ in outs)} : "
            f"{', '.join(ttype(a) for _, a in outs)}) {{")
    block = ", ".join(f"{em.fresh('o')}: {etype(a)}" for _, a in outs)
    em.emit(f"^bb0({block}):")
    ix = _Index(em)
    coords = []
    for d in range(rank):
        c = em.fresh("k")
        em.emit(f"  {c} = linalg.index {d} : index")
        coords.append(c)

    def at(tensor: str, aval: ShapedArray, position: str) -> str:
        value = em.fresh("x")
        where = ", ".join(position if d == dim else c for d, c in enumerate(coords))
        em.emit(f"  {value} = tensor.extract {tensor}[{where}] : {ttype(aval)}")
        return value

    def key_at(position: str) -> str:
        """Reads of a no-op search step are discarded, but must stay in bounds."""
        return at(k_in, keys, ix.op("minsi", ix.op("maxsi", position, 0), size - 1))

    t = ix.op("andi", coords[dim], mask)  # the output's place in its merged pair
    start = ix.op("subi", coords[dim], t)
    right_start = ix.op("addi", start, m)
    # i, the number of left-run elements among the pair's first t outputs, is the least i in
    # [max(t - m, 0), min(t, m)] with right[t - i - 1] < left[i] (the left run wins ties:
    # stable). A branchless lower bound: the candidates halve each step, no-ops once one is
    # left; unrolled to straight-line code that IREE vectorizes (extracts become gathers).
    base = ix.op("maxsi", ix.op("subi", t, m), 0)
    count = ix.op("addi", ix.op("subi", ix.op("minsi", t, m), base), 1)
    for _ in range(steps):
        half = ix.op("shrui", count, 1)
        probe = ix.op("subi", ix.op("addi", base, half), 1)
        right_first = _less(em, key_at(ix.op("subi", ix.op("addi", right_start, t),
                                              ix.op("addi", probe, 1))),
                            key_at(ix.op("addi", start, probe)), keys)
        base = ix.select(right_first, base, ix.op("addi", base, half))
        count = ix.op("subi", count, half)
    j = ix.op("subi", t, base)
    a_pos, b_pos = ix.op("addi", start, base), ix.op("addi", right_start, j)
    right_done = _not(em, ix.less(j, m))
    b_first = _less(em, key_at(b_pos), key_at(a_pos), keys)
    take_left = _logic(em, "andi", ix.less(base, m),
                       _logic(em, "ori", right_done, _not(em, b_first)))
    source = ix.op("minsi", ix.select(take_left, a_pos, b_pos), size - 1)
    picked = [at(k_in, keys, source)] + ([at(p_in, payload, source)] if p_in else [])
    em.emit(f"  linalg.yield {', '.join(picked)} : {', '.join(etype(a) for _, a in outs)}")
    em.emit(f"}} -> ({', '.join(ttype(a) for _, a in outs)})")
    return results[0], (results[1] if p_in else None)


def _true(em: Emitter) -> str:
    name = em.fresh("p")
    em.emit(f"  {name} = arith.constant true")
    return name


def _not(em: Emitter, flag: str) -> str:
    return _logic(em, "xori", flag, _true(em))
