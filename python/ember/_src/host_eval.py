"""Eager ops on small host arrays, run by their NumPy references where those give the
compiled kernel's bits (`ember.dialect.exact`): no compile on first use (IREE's 0.3-0.6 s a
module), a few microseconds a call.

`run(row, values, params, result)` runs one row; `program(traced)` turns a traced eager
function (ember.numpy's `where`, `argmax`, a comparison with its promotions) whose every
op is exact into a `HostProgram`. Both decline (None) what the kernel would compute
differently: values in the range that compiled code flushes to zero, and (`program`) a
float product feeding an add, which the kernel fuses into one multiply-add.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import optree

from ember.dialect import ir as eir, ops
from ember.dialect.exact import exact
from ember.dialect.opdef import OpDef, Trait
from ember.dialect.types import ShapedArray, kind, symbolic
from ember.runtime import Array, Device, put
from ember.runtime.executable import PARALLEL_MIN_ELEMENTS

from .stages import Compiled, Traced

# Compiled CPU code flushes subnormal operands and results to zero (DAZ/FTZ), and x86
# detects tininess after rounding: NumPy's results agree with it only where no float value
# an arithmetic op reads or writes is below twice the smallest normal (or exactly zero).
TINY = {np.dtype(np.float32): np.float32(2.0 ** -125), np.dtype(np.float64): 2.0 ** -1021}
# The same test on the bits, sign dropped: 0 < |v| < tiny is (|v| bits) - 1 < (tiny bits) - 1
# in unsigned arithmetic, zero wrapping round to the largest value (NaN and inf are larger).
_BITS = {np.dtype(f): (np.dtype(u), np.dtype(u).type(m), np.asarray(t, f).view(u) - 1,
                       np.dtype(u).type(1))
         for f, u, m, t in ((np.float32, np.uint32, 0x7FFF_FFFF, TINY[np.dtype(np.float32)]),
                            (np.float64, np.uint64, 0x7FFF_FFFF_FFFF_FFFF,
                             TINY[np.dtype(np.float64)]))}


def _flushable(value: np.ndarray) -> bool:
    """Whether `value` holds a float the compiled code could flush to zero."""
    bits = _BITS.get(value.dtype)
    if bits is None or value.size == 0:
        return False
    if value.size == 1:
        return 0 < abs(value.item()) < TINY[value.dtype]
    unsigned, magnitude, limit, one = bits
    if not value.flags.c_contiguous:
        value = np.ascontiguousarray(value)
    return bool(np.minimum.reduce((value.view(unsigned) & magnitude) - one, axis=None) < limit)


# LLVM contracts a float product feeding an add or subtract into one fused multiply-add
# (one rounding, not two) inside a kernel: a program with such a chain is compiled, not run
# op by op. A product reaches the add through these rows unchanged in what it means.
_CARRIERS = frozenset((ops.NEG, ops.CONVERT, ops.SELECT))
_CONTRACTED = frozenset((ops.ADD, ops.SUB, ops.REDUCE_SUM))


def _contracts(row: OpDef, operands: Sequence[bool], result: ShapedArray) -> bool | None:
    """Whether `row`'s result carries a float product (for a later add), or None where the
    row would be contracted with a product it reads."""
    if kind(result.dtype) != "f":
        return False
    if row is ops.MUL:
        return True
    if any(operands):
        if row in _CONTRACTED:
            return None
        return row in _CARRIERS or row.has(Trait.DATA_MOVEMENT)
    return False


# Reductions whose kernel, on host arrays, is always the one over the last axis of a matrix
# (`as_rows`): eager sums over any axes of any rank, and eager means, share one compile.
ROW_REDUCTIONS = frozenset((ops.REDUCE_SUM,))


def as_rows(value: np.ndarray, axes: Sequence[int]) -> tuple[np.ndarray, tuple] | None:
    """`value` as a matrix whose rows are what `axes` reduce (a host copy), and the shape of
    the reduction's result; None where `value` is that matrix already."""
    axes = tuple(axes)
    if value.ndim == 2 and axes == (1,):
        return None
    kept = [i for i in range(value.ndim) if i not in axes]
    matrix = np.transpose(value, (*kept, *axes)).reshape(
        math.prod(value.shape[i] for i in kept), math.prod(value.shape[i] for i in axes))
    return np.ascontiguousarray(matrix), tuple(value.shape[i] for i in kept)


def small(avals: Sequence[ShapedArray]) -> bool:
    return all(not symbolic(a.shape) and a.size < PARALLEL_MIN_ELEMENTS for a in avals)


def run(row: OpDef, values: Sequence[np.ndarray], params: dict,
        result: ShapedArray) -> np.ndarray | None:
    """`row` on `values` by its reference, as the kernel computes it; None where the kernel
    might not agree (a value it would flush)."""
    arithmetic = not row.has(Trait.DATA_MOVEMENT)
    if arithmetic and any(_flushable(v) for v in values):
        return None
    with np.errstate(all="ignore"):
        out = _reference(row.reference, values, params, result)
    return None if arithmetic and _flushable(out) else out


def call(row: OpDef, arrays: Sequence[Array], params: dict, result: ShapedArray,
         device: Device) -> Array | None:
    """`run` on Arrays (`on_host`), to an Array; each Array's values are looked at once."""
    arithmetic = not row.has(Trait.DATA_MOVEMENT)
    values = _values(arrays) if arithmetic else [a._to_numpy() for a in arrays]
    if values is None:
        return None
    with np.errstate(all="ignore"):
        out = _reference(_unwrapped(row), values, params, result)
    if arithmetic and _flushable(out):
        return None
    return _put(out, result, device,
                arithmetic or all(getattr(a, "_no_tiny", False) for a in arrays))


def _reference(fn: Callable, values: Sequence[np.ndarray], params: dict,
               result: ShapedArray) -> np.ndarray:
    return np.asarray(fn(*values, **params), result.dtype).reshape(result.shape)


def _unwrapped(row: OpDef) -> Callable:
    """`row`'s reference, without the warnings' silencing its callers here do themselves."""
    return getattr(row.reference, "__wrapped__", row.reference)


def _values(arrays: Sequence[Array | np.ndarray]) -> list[np.ndarray] | None:
    """The values of `arrays`, None if one holds a flushable float; an Array is looked at
    on its first use only (arrays are immutable)."""
    values = []
    for a in arrays:
        if type(a) is Array:
            value = a._to_numpy()
            if not getattr(a, "_no_tiny", False):
                if _flushable(value):
                    return None
                a._no_tiny = True
        elif _flushable(value := a):
            return None
        values.append(value)
    return values


def _put(value: np.ndarray, aval: ShapedArray, device: Device, checked: bool) -> Array:
    out = put(value, aval, device)
    if checked:
        out._no_tiny = True
    return out


def on_host(arrays: Sequence[Array], device: Device) -> bool:
    """Whether eager ops on `arrays`, on `device`, may run on the host: small CPU arrays
    whose values are ready (one still being computed keeps the work queued: it runs the
    kernel), or none at all on the CPU (an iota)."""
    return device.platform == "cpu" and all(
        a.device.platform == "cpu" and a._fence is None and a.size < PARALLEL_MIN_ELEMENTS
        for a in arrays)


def device_of(arrays: Sequence[Array]) -> Device:
    """The device eager work on `arrays` runs on: the first's, else the default one."""
    if arrays:
        return arrays[0].device
    from .dtypes import default_device
    return default_device()


class _Step:
    __slots__ = ("row", "fn", "operands", "params", "result", "on_host", "checked")

    def __init__(self, row: OpDef, operands: list[int], params: dict, result: ShapedArray,
                 on_host: bool):
        self.row, self.operands, self.params, self.result = row, operands, params, result
        self.fn = _unwrapped(row)
        self.on_host = on_host  # else the row's shared eager kernel (ROW_REDUCTIONS)
        # the values a step computes are checked (its operands were, as inputs or results)
        self.checked = not (on_host and row.has(Trait.DATA_MOVEMENT))


# A row reduction by its shared kernel (eager.row_reduction)
Eager = Callable[[OpDef, tuple[np.ndarray, tuple], dict, Device], np.ndarray]


class HostProgram:
    """A traced eager function run op by op on the host. Called like a `Compiled`; where its
    operands are not on the host, or a value is one compiled code would flush, it calls the
    compiled kernel that `kernel()` makes (once)."""

    def __init__(self, traced: Traced, steps: list[_Step], outputs: list[int],
                 kernel: Callable[[], Compiled], eager: Eager):
        self.cache_key = traced.key
        self.n_args = len(traced.key.in_avals)
        self._steps, self._outputs, self._kernel, self._eager = steps, outputs, kernel, eager
        self._out_tree, self._out_avals = traced.out_tree, tuple(traced.out_avals)
        self._single_out = self._out_tree == optree.tree_structure(0)
        self._compiled: Compiled | None = None

    def warn_unusable_donations(self) -> None:  # eager functions donate nothing
        pass

    def _fallback(self) -> Compiled:
        if self._compiled is None:
            self._compiled = self._kernel()
        return self._compiled

    def _evaluate(self, inputs: Sequence[Array | np.ndarray], device: Device) -> Any:
        """The outputs, put on `device`; None where a value read or computed is flushable."""
        env = _values(inputs)
        if env is None:
            return None
        with np.errstate(all="ignore"):
            for step in self._steps:
                operands = [env[i] for i in step.operands]
                if step.on_host:
                    out = _reference(step.fn, operands, step.params, step.result)
                else:
                    (value,) = operands
                    rows = as_rows(value, step.params["axes"]) or (value, value.shape[:1])
                    out = self._eager(step.row, rows, step.params, device)
                if step.checked and _flushable(out):
                    return None
                env.append(out)
        outs = [_put(env[i], aval, device, True)
                for i, aval in zip(self._outputs, self._out_avals, strict=True)]
        return outs[0] if self._single_out else optree.tree_unflatten(self._out_tree, outs)

    def call_arrays(self, arrays: Sequence[Array]) -> Any:
        device = device_of(arrays)
        if on_host(arrays, device):
            out = self._evaluate(arrays, device)
            if out is not None:
                return out
        return self._fallback().call_arrays(arrays)

    def call_leaves(self, leaves: list[Any]) -> Any:
        """The call on flattened arguments: the values that are not Arrays (Python scalars,
        NumPy arrays) go straight to the host program, to the device only for the kernel."""
        avals = self.cache_key.in_avals
        arrays = [x for x in leaves if type(x) is Array]
        device = device_of(arrays)
        if on_host(arrays, device):
            out = self._evaluate([x if type(x) is Array else
                                  np.asarray(x, aval.dtype).reshape(aval.shape)
                                  for x, aval in zip(leaves, avals, strict=True)], device)
            if out is not None:
                return out
        return self._fallback().call_arrays(
            [x if type(x) is Array else put(np.asarray(x), aval, device)
             for x, aval in zip(leaves, avals, strict=True)])


def program(traced: Traced, kernel: Callable[[], Compiled],
            eager: Eager) -> HostProgram | None:
    """`traced` (at concrete shapes) as a HostProgram, if it is small and every op in it is
    exact or a row reduction (run by `eager`, its shared kernel); else None."""
    avals = [*traced.key.in_avals, *traced.out_avals]
    if traced.hoisted or not small(avals):
        return None
    with eir.LOCK, eir.context():
        func = traced.module.body.operations[0]
        block = func.regions[0].blocks[0]
        index: dict = {v: i for i, v in enumerate(block.arguments)}
        steps: list[_Step] = []
        products: list[bool] = [False] * len(block.arguments)
        outputs: list[int] | None = None
        for op in block.operations:
            op = op.operation
            if op.name == "func.return":
                outputs = [index[v] for v in op.operands]
                break
            row = eir.opdef(op)
            if row is None or op.regions or len(op.results) != 1:
                return None
            row, operand_avals, params = eir.read(op)
            result = eir.aval_of(op.results[0])
            on_host = exact(row, operand_avals, result)
            if not (on_host or row in ROW_REDUCTIONS) or not small([result]):
                return None
            operands = [index[v] for v in op.operands]
            product = _contracts(row, [products[i] for i in operands], result)
            if product is None:
                return None
            products.append(product)
            steps.append(_Step(row, operands, params, result, on_host))
            index[op.results[0]] = len(index)
    if outputs is None:
        return None
    return HostProgram(traced, steps, outputs, kernel, eager)
