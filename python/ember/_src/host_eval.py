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

from ember.dialect import ir as eir
from ember.dialect import ops
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


def _flushable(value: np.ndarray) -> bool:
    """Whether `value` holds a float the compiled code could flush to zero."""
    tiny = TINY.get(value.dtype)
    if tiny is None or value.size == 0:
        return False
    with np.errstate(invalid="ignore"):
        magnitude = np.abs(value)
        return bool(np.any((magnitude < tiny) & (magnitude != 0)))


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
        out = np.asarray(row.reference(*values, **params), result.dtype).reshape(result.shape)
    return None if arithmetic and _flushable(out) else out


def on_host(arrays: Sequence[Array]) -> bool:
    """Whether eager ops on `arrays` may run on the host: small CPU arrays whose values are
    ready (one still being computed keeps the work queued: it runs the kernel)."""
    return bool(arrays) and all(a.device.platform == "cpu" and a._fence is None
               and a.size < PARALLEL_MIN_ELEMENTS for a in arrays)


class _Step:
    __slots__ = ("row", "operands", "params", "result", "on_host")

    def __init__(self, row: OpDef, operands: list[int], params: dict, result: ShapedArray,
                 on_host: bool):
        self.row, self.operands, self.params, self.result = row, operands, params, result
        self.on_host = on_host  # else the row's shared eager kernel (ROW_REDUCTIONS)


Eager = Callable[[OpDef, list[Array], dict], Array]


class HostProgram:
    """A traced eager function run op by op on the host. Called like a `Compiled`; where its
    operands are not on the host, or a step declines, it calls the compiled kernel that
    `kernel()` makes (once)."""

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

    def _evaluate(self, arrays: Sequence[Array]) -> list[np.ndarray] | None:
        env: list[np.ndarray] = [a._to_numpy() for a in arrays]
        device = arrays[0].device  # on_host: there are arrays
        for step in self._steps:
            values = [env[i] for i in step.operands]
            if step.on_host:
                out = run(step.row, values, step.params, step.result)
                if out is None:
                    return None
            else:
                result = self._eager(step.row, [put(v, ShapedArray(v.shape, v.dtype), device)
                                                for v in values], step.params)
                out = np.array(result._to_numpy())  # its own memory: `result` goes now
            env.append(out)
        return [env[i] for i in self._outputs]

    def call_arrays(self, arrays: Sequence[Array]) -> Any:
        values = self._evaluate(arrays) if on_host(arrays) else None
        if values is None:
            return self._fallback().call_arrays(arrays)
        device = arrays[0].device if arrays else _default_device()
        outs = [put(v, aval, device) for v, aval in zip(values, self._out_avals, strict=True)]
        return outs[0] if self._single_out else optree.tree_unflatten(self._out_tree, outs)

    def call_leaves(self, leaves: list[Any]) -> Any:
        device = next((x.device for x in leaves if type(x) is Array), None) or \
            _default_device()
        return self.call_arrays([x if type(x) is Array else put(np.asarray(x), aval, device)
                                 for x, aval in zip(leaves, self.cache_key.in_avals,
                                                    strict=True)])


def _default_device() -> Device:
    from .dtypes import default_device
    return default_device()


def program(traced: Traced, kernel: Callable[[], Compiled],
            eager: Eager) -> HostProgram | None:
    """`traced` (at concrete shapes) as a HostProgram, if it is small and every op in it is
    exact or a row reduction (run by `eager`, the single-op dispatch); else None."""
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
