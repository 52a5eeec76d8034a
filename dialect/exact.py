"""The rows whose NumPy reference computes the compiled kernel's bits, and for which dtypes.

Eager ops on small host arrays run these references instead of a kernel (no compile on first
use: `python/ember/_src/host_eval.py`); `tests/test_host_eval.py` checks every entry
against its kernel, bit for bit (NaN payloads aside). What makes a row exact:
- it only moves elements (slices, transposes, concatenation, gathers that clamp);
- its result is correctly rounded IEEE arithmetic (+, -, *, /, fmod, comparisons, max/min
  with IEEE 754-2019 zeros, rounding to integers) or integer arithmetic, which wraps;
- a reduction whose result does not depend on the order of its terms (max/min; sums of
  integers).
Not exact: the transcendental functions (IREE's polynomials are not libm's), float sums and
products (reassociated), float16/bfloat16 (computed in float32 with roundings of their own),
complex arithmetic, float->int conversion (out of range is undefined), scatters (the order of
combining duplicates). Compiled CPU code flushes subnormals to zero (DAZ/FTZ) where NumPy
keeps them: the evaluator declines values that small (`host_eval.TINY`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np

from . import ops
from .opdef import OpDef
from .types import ShapedArray, kind

Exactness = Callable[[Sequence[ShapedArray], ShapedArray], bool]

# float16 and bfloat16 round through float32 in compiled code; complex arithmetic differs.
REAL = frozenset(np.dtype(t) for t in (np.bool_, np.int8, np.int16, np.int32, np.int64,
                                       np.uint8, np.uint16, np.uint32, np.uint64,
                                       np.float32, np.float64))


def _any_dtype(operands: Sequence[ShapedArray], result: ShapedArray) -> bool:
    return True


def _real(operands: Sequence[ShapedArray], result: ShapedArray) -> bool:
    return result.dtype in REAL and all(a.dtype in REAL for a in operands)


def _integer(operands: Sequence[ShapedArray], result: ShapedArray) -> bool:
    return all(kind(a.dtype) in "biu" for a in (*operands, result))


def _integer_or_empty(operands: Sequence[ShapedArray], result: ShapedArray) -> bool:
    return _integer(operands, result) or operands[0].size == 0  # a sum of no terms: 0


def _convert(operands: Sequence[ShapedArray], result: ShapedArray) -> bool:
    return _real(operands, result) and not (kind(operands[0].dtype) == "f"
                                            and kind(result.dtype) in "iu")


EXACT: Mapping[OpDef, Exactness] = {
    **{row: _any_dtype for row in (
        ops.CONSTANT, ops.IOTA, ops.BROADCAST_IN_DIM, ops.RESHAPE, ops.TRANSPOSE, ops.SLICE,
        ops.REV, ops.CONCATENATE, ops.COPY, ops.TAKE, ops.DYNAMIC_SLICE,
        ops.DYNAMIC_UPDATE_SLICE, ops.STOP_GRADIENT)},
    **{row: _real for row in (
        ops.ADD, ops.SUB, ops.MUL, ops.DIV, ops.REM, ops.MAX, ops.MIN, ops.AND, ops.OR,
        ops.XOR, ops.NOT, ops.NEG, ops.ABS, ops.SIGN, ops.SQRT, ops.FLOOR, ops.CEIL,
        ops.ROUND, ops.TRUNC, ops.COPYSIGN, ops.IS_FINITE, ops.SELECT, ops.COMPARE,
        ops.SHIFT_LEFT, ops.SHIFT_RIGHT, ops.BITCAST_CONVERT, ops.REDUCE_MAX,
        ops.REDUCE_MIN)},
    ops.CONVERT: _convert,
    ops.REDUCE_SUM: _integer_or_empty,
    ops.DOT_GENERAL: _integer,
}


def exact(row: OpDef, operands: Sequence[ShapedArray], result: ShapedArray) -> bool:
    """Whether `row`'s reference gives its kernel's bits for these operand and result types."""
    rule = EXACT.get(row)
    return rule is not None and rule(operands, result)
