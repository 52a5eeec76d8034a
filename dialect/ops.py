"""The ember dialect: every op is one row of `OPS`.

A row says everything about an op: its operands, the attributes it stores in IR, the parameters
its result type encodes (`shape`, `dtype`), its traits, its shape/dtype rule (which is also its
verifier), its NumPy reference and, for elementwise ops, the scalar body of its lowering.
Builders, IRDL, the tracer's binding, folding and lowering are all derived from these rows.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from . import indexing_ops, linalg_ops, math_ops, scan_ops, structured_ops
from .families import (
    MAX_BODY,
    MIN_BODY,
    PRODUCT_BODY,
    SUM_BODY,
    check_axes,
    complex_part,
    elementwise,
    highest,
    ieee_max,
    ieee_maximum,
    ieee_min,
    ieee_minimum,
    lowest,
    reduction,
    same_dtypes,
    silent_ref,
    unary_float,
)
from .indexing_ops import (
    CONCATENATE as CONCATENATE,
    REV as REV,
    SCATTER as SCATTER,
    SLICE as SLICE,
    TAKE as TAKE,
)
from .linalg_ops import (
    CHOLESKY as CHOLESKY,
    EIGH as EIGH,
    LINALG_OPS as LINALG_OPS,
    QR as QR,
    SLOGDET as SLOGDET,
    SOLVE as SOLVE,
    SVD as SVD,
    TRIANGULAR_SOLVE as TRIANGULAR_SOLVE,
)
from .math_ops import (  # every row is reachable as ops.NAME (`X as X`: a re-export)
    ACOS as ACOS,
    ACOSH as ACOSH,
    ASIN as ASIN,
    ASINH as ASINH,
    ATAN as ATAN,
    ATAN2 as ATAN2,
    ATANH as ATANH,
    CBRT as CBRT,
    COPYSIGN as COPYSIGN,
    COS as COS,
    COSH as COSH,
    DIV as DIV,
    ERF as ERF,
    EXP as EXP,
    EXP2 as EXP2,
    EXPM1 as EXPM1,
    IS_FINITE as IS_FINITE,
    LOG1P as LOG1P,
    LOG2 as LOG2,
    REM as REM,
    ROUND as ROUND,
    SHIFT_LEFT as SHIFT_LEFT,
    SHIFT_RIGHT as SHIFT_RIGHT,
    SIN as SIN,
    SINH as SINH,
    TAN as TAN,
    TANH as TANH,
    TRUNC as TRUNC,
    XOR as XOR,
    log_body,
    pow_complex_body,
    rsqrt_body,
    sqrt_body,
)
from .opdef import Attr, OpDef, Trait, VerifyError, require as _require
from .scan_ops import (
    COMBINERS as COMBINERS,
    CUMULATIVE as CUMULATIVE,
    REDUCE_PROD as REDUCE_PROD,
    SORT as SORT,
)
from .structured_ops import (
    AFTER as AFTER,
    CALL as CALL,
    CASE as CASE,
    COPY as COPY,
    DEBUG_PRINT as DEBUG_PRINT,
    ELEMENTWISE_FOR as ELEMENTWISE_FOR,
    FOR as FOR,
    FUSION as FUSION,
    IF as IF,
    REF_GET as REF_GET,
    REF_SET as REF_SET,
    WHILE as WHILE,
    YIELD as YIELD,
)
from .types import (
    ShapedArray,
    SymbolicDimError,
    complex_dtype,
    kind,
    real_dtype,
    same_but_unit_dims,
    symbolic,
)

__all__ = ["OPS", "Attr", "OpDef", "Trait", "VerifyError"]


# ----------------------------------------------------------------------------- elementwise















_CMP_F = {"EQ": "oeq", "NE": "une", "LT": "olt", "LE": "ole", "GT": "ogt", "GE": "oge"}
_CMP_S = {"EQ": "eq", "NE": "ne", "LT": "slt", "LE": "sle", "GT": "sgt", "GE": "sge"}
_CMP_U = {"EQ": "eq", "NE": "ne", "LT": "ult", "LE": "ule", "GT": "ugt", "GE": "uge"}
_CMP_REF = {"EQ": np.equal, "NE": np.not_equal, "LT": np.less, "LE": np.less_equal,
            "GT": np.greater, "GE": np.greater_equal}


def _compare_body(k: str, attrs: Mapping) -> str:
    d = attrs["direction"]
    if k == "c":
        return f"{{r}} = complex.{'eq' if d == 'EQ' else 'neq'} {{0}}, {{1}} : {{t}}"
    if k == "f":
        return f"{{r}} = arith.cmpf {_CMP_F[d]}, {{0}}, {{1}} : {{t}}"
    return f"{{r}} = arith.cmpi {(_CMP_S if k == 'i' else _CMP_U)[d]}, {{0}}, {{1}} : {{t}}"


def _compare() -> OpDef:
    base = elementwise("compare", 2, _compare_body, None, kinds="buifc", result_dtype=np.bool_)

    def infer(lhs: ShapedArray, rhs: ShapedArray, *, direction: str) -> ShapedArray:
        _require(direction in _CMP_F, base.name, f"direction in {sorted(_CMP_F)}", direction)
        _require(kind(lhs.dtype) != "c" or direction in ("EQ", "NE"), base.name,
                 "EQ or NE for complex operands (they have no order)", direction)
        return base.infer(lhs, rhs)

    def reference(a, b, *, direction):
        return _CMP_REF[direction](a, b)

    return OpDef(base.name, base.operands, infer, reference, base.traits,
                 {"direction": Attr.STRING}, scalar=base.scalar,
                 doc="Elementwise comparison; NE is true for NaN, the others false.")


# powf of a negative base is NaN in IREE's expansion: compute |x|**y and restore the sign
# for integral y (NaN otherwise, but for -inf and -0), as NumPy does (-0 is negative, as 1/x
# tells: an odd power of it is -0 or -inf; math.copysign does not lower on every target);
# x**0 and 1**y are 1 for every x and y, and (-1)**+-inf is 1 (IREE's powf(1, inf) is NaN).
_POW_F = """{x0} = math.absf {0} : {t}
{x1} = math.powf {x0}, {1} : {t}
{x2} = arith.constant 0.0 : {t}
{x3} = arith.constant 1.0 : {t}
{x4} = arith.constant 0.5 : {t}
{x17} = arith.cmpf oeq, {x0}, {x3} : {t}
{x18} = arith.select {x17}, {x3}, {x1} : {t}
{x25} = arith.divf {x3}, {0} : {t}
{x28} = arith.cmpf olt, {x25}, {x2} : {t}
{x29} = arith.cmpf olt, {0}, {x2} : {t}
{x5} = arith.ori {x28}, {x29} : i1
{x6} = math.floor {1} : {t}
{x7} = arith.cmpf oeq, {x6}, {1} : {t}
{x8} = arith.mulf {1}, {x4} : {t}
{x9} = math.floor {x8} : {t}
{x10} = arith.cmpf one, {x9}, {x8} : {t}
{x11} = arith.negf {x18} : {t}
{x12} = arith.select {x10}, {x11}, {x18} : {t}
{x13} = arith.divf {x2}, {x2} : {t}
{x21} = arith.negf {x3} : {t}
{x22} = arith.divf {x21}, {x2} : {t}
{x23} = arith.cmpf oeq, {0}, {x22} : {t}
{x26} = arith.cmpf oeq, {0}, {x2} : {t}
{x27} = arith.ori {x23}, {x26} : i1
{x24} = arith.select {x27}, {x18}, {x13} : {t}
{x14} = arith.select {x7}, {x12}, {x24} : {t}
{x15} = arith.select {x5}, {x14}, {x1} : {t}
{x16} = arith.cmpf oeq, {1}, {x2} : {t}
{x19} = arith.cmpf oeq, {0}, {x3} : {t}
{x20} = arith.ori {x16}, {x19} : i1
{r} = arith.select {x20}, {x3}, {x15} : {t}"""
# Integer power by squaring (IREE cannot legalize math.ipowi). Negative exponents follow XLA:
# 1 for base 1, +-1 for base -1, else 0.
_POW_I = """{x0} = arith.constant 1 : {t}
{x1} = arith.constant 0 : {t}
{x2}:3 = scf.while ({x3} = {x0}, {x4} = {0}, {x5} = {1}) : ({t}, {t}, {t}) -> ({t}, {t}, {t}) {
  {x6} = arith.cmpi sgt, {x5}, {x1} : {t}
  scf.condition({x6}) {x3}, {x4}, {x5} : {t}, {t}, {t}
} do {
^bb0({x7}: {t}, {x8}: {t}, {x9}: {t}):
  {x10} = arith.andi {x9}, {x0} : {t}
  {x11} = arith.cmpi ne, {x10}, {x1} : {t}
  {x12} = arith.muli {x7}, {x8} : {t}
  {x13} = arith.select {x11}, {x12}, {x7} : {t}
  {x14} = arith.muli {x8}, {x8} : {t}
  {x15} = arith.shrui {x9}, {x0} : {t}
  scf.yield {x13}, {x14}, {x15} : {t}, {t}, {t}
}
{x16} = arith.cmpi slt, {1}, {x1} : {t}
{x17} = arith.constant -1 : {t}
{x18} = arith.cmpi eq, {0}, {x0} : {t}
{x19} = arith.cmpi eq, {0}, {x17} : {t}
{x20} = arith.andi {1}, {x0} : {t}
{x21} = arith.cmpi ne, {x20}, {x1} : {t}
{x22} = arith.select {x21}, {x17}, {x0} : {t}
{x23} = arith.select {x19}, {x22}, {x1} : {t}
{x24} = arith.select {x18}, {x0}, {x23} : {t}
{r} = arith.select {x16}, {x24}, {x2}#0 : {t}"""


def _pow_body(k: str, attrs: Mapping) -> str:
    if k == "c":
        return pow_complex_body(attrs)
    return _POW_F if k == "f" else _POW_I


def _sign_ref(x):
    return np.sign(x)


def _convert_complex(k: str, attrs: Mapping) -> str:
    """Conversions from or to complex numbers: a real number is the real part (converted
    as a float of the parts' width), a complex number converted to a real type keeps its real
    part (as NumPy and JAX do, with a warning), to bool whether it is not zero."""
    to, src_bits, dst_bits = attrs["to"], attrs["src_bits"], attrs["dst_bits"]
    if k == "c" and to == "c":
        if src_bits == dst_bits:
            return "{r} = {0}"
        src, dst = complex_part(src_bits), complex_part(dst_bits)
        op = "extf" if dst_bits > src_bits else "truncf"
        return (f"{{x0}} = complex.re {{0}} : {{t}}\n{{x1}} = complex.im {{0}} : {{t}}\n"
                f"{{x2}} = arith.{op} {{x0}} : {src} to {dst}\n"
                f"{{x3}} = arith.{op} {{x1}} : {src} to {dst}\n"
                "{r} = complex.create {x2}, {x3} : {rt}")
    # The real conversions below use no {xN} names of their own.
    if k == "c":
        src = complex_part(src_bits)
        if to == "b":
            return (f"{{x0}} = arith.constant 0.0 : {src}\n"
                    f"{{x1}} = complex.create {{x0}}, {{x0}} : {{t}}\n"
                    "{r} = complex.neq {0}, {x1} : {t}")
        real = _convert_body("f", dict(attrs, src_bits=src_bits // 2,
                                       same=src_bits // 2 == dst_bits))
        if real == "{r} = {0}":
            return "{r} = complex.re {0} : {t}"
        return "{x0} = complex.re {0} : {t}\n" + real.replace(
            "{0}", "{x0}").replace("{t}", src)
    part = complex_part(dst_bits)
    real = _convert_body(k, dict(attrs, to="f", dst_bits=dst_bits // 2,
                                 same=src_bits == dst_bits // 2, to_bf16=False))
    value = "{0}" if real == "{r} = {0}" else "{x0}"
    head = "" if value == "{0}" else real.replace("{rt}", part).replace("{r}", "{x0}") + "\n"
    return (head + f"{{x1}} = arith.constant 0.0 : {part}\n"
            f"{{r}} = complex.create {value}, {{x1}} : {{rt}}")


def _float_to_int(signed: bool, bits: int, from_f16: bool) -> str:
    """Saturating, as XLA's convert (and so JAX's astype): NaN is 0, values past the integer
    type's range its min or max (fptosi/fptoui of them is undefined: an int32 of inf was
    INT_MIN, a uint8 of -2.5 was 254). Names from {x40} on: complex conversions wrap this."""
    top = 2.0 ** (bits - 1 if signed else bits)  # the first float past the largest integer
    imax, imin = (2 ** (bits - 1) - 1, -(2 ** (bits - 1))) if signed else (2 ** bits - 1, 0)
    top_text = "0x7C00" if from_f16 and top > 65504 else repr(top)  # f16's inf
    low_text = "0xFC00" if from_f16 and -imin > 65504 else repr(float(imin))  # or -inf
    conv = "fptosi" if signed else "fptoui"
    return f"""{{x40}} = arith.constant 0.0 : {{t}}
{{x41}} = arith.cmpf uno, {{0}}, {{0}} : {{t}}
{{x42}} = arith.constant {top_text} : {{t}}
{{x43}} = arith.cmpf oge, {{0}}, {{x42}} : {{t}}
{{x44}} = arith.constant {low_text} : {{t}}
{{x45}} = arith.cmpf olt, {{0}}, {{x44}} : {{t}}
{{x46}} = arith.ori {{x41}}, {{x43}} : i1
{{x47}} = arith.ori {{x46}}, {{x45}} : i1
{{x48}} = arith.select {{x47}}, {{x40}}, {{0}} : {{t}}
{{x49}} = arith.{conv} {{x48}} : {{t}} to {{rt}}
{{x50}} = arith.constant {imax} : {{rt}}
{{x51}} = arith.constant {imin} : {{rt}}
{{x52}} = arith.select {{x43}}, {{x50}}, {{x49}} : {{rt}}
{{r}} = arith.select {{x45}}, {{x51}}, {{x52}} : {{rt}}"""


def _convert_body(k: str, attrs: Mapping) -> str:
    """Chosen from the source kind and the result kind (`attrs['to']`), NumPy's casting."""
    to, src_bits, dst_bits = attrs["to"], attrs["src_bits"], attrs["dst_bits"]
    if "c" in (k, to):
        return _convert_complex(k, attrs)
    if to == "b" and k == "f":
        return "{x0} = arith.constant 0.0 : {t}\n{r} = arith.cmpf une, {0}, {x0} : {t}"
    if to == "b":
        return "{x0} = arith.constant 0 : {t}\n{r} = arith.cmpi ne, {0}, {x0} : {t}"
    if k == "f" and to == "f":
        op = "extf" if dst_bits > src_bits else "truncf"
        return "{r} = {0}" if dst_bits == src_bits and attrs["same"] else \
            f"{{r}} = arith.{op} {{0}} : {{t}} to {{rt}}"
    if k == "f":
        return _float_to_int(to == "i", dst_bits, attrs.get("from_f16", False))
    if to == "f" and attrs.get("to_bf16"):
        # LLVM lowers int -> bfloat16 to a call of __truncsfbf2, which IREE's runtime lacks
        # (and MLIR folds truncf(sitofp) back into it): go through float32 and round its bits
        # to nearest even by hand. Integers are never NaN.
        return (f"{{x0}} = arith.{'sitofp' if k == 'i' else 'uitofp'} {{0}} : {{t}} to f32\n"
                "{x1} = arith.bitcast {x0} : f32 to i32\n"
                "{x2} = arith.constant 16 : i32\n"
                "{x3} = arith.shrui {x1}, {x2} : i32\n"
                "{x4} = arith.constant 1 : i32\n"
                "{x5} = arith.andi {x3}, {x4} : i32\n"
                "{x6} = arith.constant 32767 : i32\n"
                "{x7} = arith.addi {x6}, {x5} : i32\n"
                "{x8} = arith.addi {x1}, {x7} : i32\n"
                "{x9} = arith.shrui {x8}, {x2} : i32\n"
                "{x10} = arith.trunci {x9} : i32 to i16\n"
                "{r} = arith.bitcast {x10} : i16 to bf16")
    if to == "f":
        return f"{{r}} = arith.{'sitofp' if k == 'i' else 'uitofp'} {{0}} : {{t}} to {{rt}}"
    if dst_bits == src_bits:
        return "{r} = {0}"
    if dst_bits < src_bits:
        return "{r} = arith.trunci {0} : {t} to {rt}"
    return f"{{r}} = arith.{'extsi' if k == 'i' else 'extui'} {{0}} : {{t}} to {{rt}}"


def _to_real(name: str, templates: Mapping[str, str], ref, *, kinds: str, doc: str) -> OpDef:
    """An elementwise op whose result is real for complex operands (abs, real, imag)."""
    base = elementwise(name, 1, templates, ref, kinds=kinds, doc=doc)

    def infer(x: ShapedArray) -> ShapedArray:
        out = base.infer(x)
        return ShapedArray(out.shape, real_dtype(out.dtype), out.weak_type)

    return OpDef(base.name, base.operands, infer, base.reference, base.traits,
                 scalar=base.scalar, doc=doc)


def _complex() -> OpDef:
    base = elementwise("complex", 2, {"f": "{r} = complex.create {0}, {1} : {rt}"}, None,
                       kinds="f")

    def infer(re: ShapedArray, im: ShapedArray) -> ShapedArray:
        _require(re.dtype in (np.float32, np.float64), base.name, "float32 or float64 parts",
                 (re.dtype, im.dtype))
        out = base.infer(re, im)
        return ShapedArray(out.shape, complex_dtype(out.dtype), out.weak_type)

    def reference(re, im):
        out = np.empty(np.shape(re), complex_dtype(re.dtype))
        out.real, out.imag = re, im  # no re + 1j * im: 1j * inf has a nan real part
        return out

    return OpDef(base.name, base.operands, infer, reference, base.traits, scalar=base.scalar,
                 doc="The complex number re + i im (lax.complex).")


def _convert() -> OpDef:
    def infer(x: ShapedArray, *, dtype, weak_type: bool = False) -> ShapedArray:
        # weak_type is a tracer-level fact (a converted Python scalar stays weak), not IR.
        return ShapedArray(x.shape, np.dtype(dtype), weak_type)

    def reference(x, *, dtype, weak_type=False):
        x, dtype = np.asarray(x), np.dtype(dtype)
        x = x.real if x.dtype.kind == "c" and dtype.kind != "c" and dtype != np.bool_ else x
        if kind(x.dtype) == "f" and dtype.kind in "iu":  # saturating, as the kernel
            info, v = np.iinfo(dtype), x.astype(np.float64)
            over, under = v >= 2.0 ** (info.bits - (dtype.kind == "i")), v < info.min
            inside = np.where(np.isnan(v) | over | under, 0.0, v).astype(dtype)
            return np.where(over, info.max, np.where(under, info.min, inside)).astype(dtype)
        return x.astype(dtype)

    return OpDef("ember.convert", ("operand",), infer, reference,
                 frozenset({Trait.PURE, Trait.ELEMENTWISE}), type_params=("dtype",),
                 scalar=_convert_body, doc="Elementwise dtype conversion with NumPy's rules.")


def _bitcast_convert() -> OpDef:
    def infer(x: ShapedArray, *, dtype) -> ShapedArray:
        dtype = np.dtype(dtype)
        _require(dtype.itemsize == x.dtype.itemsize and np.bool_ not in (dtype, x.dtype),
                 "ember.bitcast_convert", f"a non-bool dtype of {x.dtype.itemsize * 8} bits",
                 dtype)
        return ShapedArray(x.shape, dtype)

    def reference(x, *, dtype):
        return np.asarray(x).view(dtype)

    def body(k: str, attrs: Mapping) -> str:
        signless_same = k in "iu" and attrs["to"] in "iu"  # int32 <-> uint32: both i32
        return "{r} = {0}" if signless_same else "{r} = arith.bitcast {0} : {t} to {rt}"

    return OpDef("ember.bitcast_convert", ("operand",), infer, reference,
                 frozenset({Trait.PURE, Trait.ELEMENTWISE}), type_params=("dtype",),
                 scalar=body, doc="Elementwise reinterpretation of the bits as another dtype "
                                  "of the same width (lax.bitcast_convert_type).")


# ----------------------------------------------------------------------------- structural



def _constant() -> OpDef:
    def infer(*, value: np.ndarray, weak_type: bool = False) -> ShapedArray:
        return ShapedArray(tuple(value.shape), value.dtype, weak_type)

    def reference(*, value, weak_type=False):
        return value

    return OpDef("ember.constant", (), infer, reference,
                 frozenset({Trait.PURE, Trait.CONSTANT}), {"value": Attr.ELEMENTS},
                 doc="A literal array.")


def _iota() -> OpDef:
    def infer(*, dimension: int, shape: tuple[int, ...], dtype) -> ShapedArray:
        check_axes("ember.iota", (dimension,), len(shape))
        return ShapedArray(tuple(shape), np.dtype(dtype))

    def reference(*, dimension, shape, dtype):
        idx = np.arange(shape[dimension]).reshape(
            [-1 if i == dimension else 1 for i in range(len(shape))])
        return np.broadcast_to(idx, shape).astype(dtype)

    return OpDef("ember.iota", (), infer, reference, frozenset({Trait.PURE}),
                 {"dimension": Attr.I64}, type_params=("shape", "dtype"),
                 doc="Indices along one dimension (arange).")


def _dimension_size() -> OpDef:
    def infer(x: ShapedArray, *, dimension: int, dtype) -> ShapedArray:
        check_axes("ember.dimension_size", (dimension,), x.ndim)
        return ShapedArray((), np.dtype(dtype))

    def reference(x, *, dimension, dtype):
        return np.asarray(x.shape[dimension], dtype)

    return OpDef("ember.dimension_size", ("operand",), infer, reference, frozenset({Trait.PURE}),
                 {"dimension": Attr.I64}, type_params=("dtype",),
                 doc="The size of one dimension, as a 0-d integer array: how a function "
                     "compiled for symbolic dims (shape-polymorphic kernels) reads one.")


def _broadcast_in_dim() -> OpDef:
    name = "ember.broadcast_in_dim"

    def infer(x: ShapedArray, *, shape: tuple[int, ...], broadcast_dimensions) -> ShapedArray:
        bd = tuple(broadcast_dimensions)
        _require(len(bd) == x.ndim, name, f"one broadcast dimension per operand axis ({x.ndim})",
                 bd)
        _require(all(0 <= d < len(shape) for d in bd) and list(bd) == sorted(set(bd)), name,
                 f"strictly increasing broadcast_dimensions in [0, {len(shape)})", bd)
        for axis, d in enumerate(bd):
            _require(x.shape[axis] in (1, shape[d]), name,
                     f"operand dim {axis} to be 1 or {shape[d]}", x.shape[axis])
        return ShapedArray(tuple(shape), x.dtype, x.weak_type)

    def reference(x, *, shape, broadcast_dimensions):
        expanded = np.reshape(x, [x.shape[broadcast_dimensions.index(i)]
                                  if i in broadcast_dimensions else 1
                                  for i in range(len(shape))])
        return np.broadcast_to(expanded, shape)

    return OpDef(name, ("operand",), infer, reference,
                 frozenset({Trait.PURE, Trait.DATA_MOVEMENT}),
                 {"broadcast_dimensions": Attr.I64_ARRAY}, type_params=("shape",),
                 doc="Broadcast to `shape`, operand axis i going to broadcast_dimensions[i].")


def _reshape() -> OpDef:
    def infer(x: ShapedArray, *, shape: tuple[int, ...]) -> ShapedArray:
        if symbolic(x.shape) or symbolic(shape):  # without sizes: only dims of 1 may change
            if not same_but_unit_dims(x.shape, shape):
                raise SymbolicDimError(f"reshape of {x.shape} to {shape} needs sizes")
        else:
            size = int(np.prod(shape, dtype=np.int64))
            _require(size == x.size, "ember.reshape", f"a shape of {x.size} elements",
                     tuple(shape))
        return ShapedArray(tuple(shape), x.dtype, x.weak_type)

    def reference(x, *, shape):
        return np.reshape(x, shape)

    return OpDef("ember.reshape", ("operand",), infer, reference,
                 frozenset({Trait.PURE, Trait.DATA_MOVEMENT, Trait.VIEW}), type_params=("shape",),
                 doc="Row-major reshape.")


def _transpose() -> OpDef:
    def infer(x: ShapedArray, *, permutation) -> ShapedArray:
        perm = tuple(permutation)
        _require(sorted(perm) == list(range(x.ndim)), "ember.transpose",
                 f"a permutation of range({x.ndim})", perm)
        return ShapedArray(tuple(x.shape[p] for p in perm), x.dtype, x.weak_type)

    def reference(x, *, permutation):
        return np.transpose(x, permutation)

    return OpDef("ember.transpose", ("operand",), infer, reference,
                 frozenset({Trait.PURE, Trait.DATA_MOVEMENT}), {"permutation": Attr.I64_ARRAY},
                 doc="Permute axes: result axis i is operand axis permutation[i].")




def _reduce_max_ref(x, axis):
    if x.size == 0:
        return np.full([d for i, d in enumerate(x.shape) if i not in axis], lowest(x.dtype))
    return ieee_max(x, axis)


def _reduce_min_ref(x, axis):
    if x.size == 0:
        return np.full([d for i, d in enumerate(x.shape) if i not in axis], highest(x.dtype))
    return ieee_min(x, axis)






def _dot_general() -> OpDef:
    name = "ember.dot_general"

    def infer(lhs: ShapedArray, rhs: ShapedArray, *, lhs_contracting, rhs_contracting,
              lhs_batch, rhs_batch) -> ShapedArray:
        same_dtypes(name, (lhs, rhs))
        lc, rc, lb, rb = map(tuple, (lhs_contracting, rhs_contracting, lhs_batch, rhs_batch))
        check_axes(name, lc + lb, lhs.ndim)
        check_axes(name, rc + rb, rhs.ndim)
        _require(len(lc) == len(rc) and len(lb) == len(rb), name,
                 "as many lhs as rhs contracting and batch dims", (lc, rc, lb, rb))
        for a, b in zip(lc + lb, rc + rb, strict=True):
            _require(lhs.shape[a] == rhs.shape[b], name, f"lhs dim {a} == rhs dim {b}",
                     (lhs.shape, rhs.shape))
        batch = tuple(lhs.shape[i] for i in lb)
        lfree = tuple(d for i, d in enumerate(lhs.shape) if i not in lc + lb)
        rfree = tuple(d for i, d in enumerate(rhs.shape) if i not in rc + rb)
        return ShapedArray(batch + lfree + rfree, lhs.dtype, lhs.weak_type and rhs.weak_type)

    def reference(a, b, *, lhs_contracting, rhs_contracting, lhs_batch, rhs_batch):
        letters = iter("abcdefghijklmnopqrstuvwxyz")
        la = [next(letters) for _ in range(a.ndim)]
        lb_ = [next(letters) for _ in range(b.ndim)]
        for i, j in zip(list(lhs_contracting) + list(lhs_batch),
                        list(rhs_contracting) + list(rhs_batch), strict=True):
            lb_[j] = la[i]
        out = ([la[i] for i in lhs_batch]
               + [c for i, c in enumerate(la) if i not in (*lhs_contracting, *lhs_batch)]
               + [c for i, c in enumerate(lb_) if i not in (*rhs_contracting, *rhs_batch)])
        spec = f"{''.join(la)},{''.join(lb_)}->{''.join(out)}"
        return np.einsum(spec, a, b).astype(a.dtype)

    return OpDef(name, ("lhs", "rhs"), infer, reference,
                 frozenset({Trait.PURE, Trait.CONTRACTION}),
                 {k: Attr.I64_ARRAY for k in ("lhs_contracting", "rhs_contracting",
                                              "lhs_batch", "rhs_batch")},
                 doc="Contraction; result axes are batch, lhs free, rhs free (as in XLA).")




def _pow_ref(a, b):
    if kind(a.dtype) in "iu":
        positive = np.power(a, np.maximum(b, 0))
        if kind(a.dtype) == "u":
            return positive
        negative = np.where(a == 1, 1, np.where(a == -1, np.where(b % 2, -1, 1), 0))
        return np.where(b < 0, negative, positive).astype(a.dtype)
    return np.power(a, b)



ADD = elementwise("add", 2, SUM_BODY, silent_ref(np.add), kinds="buifc", commutative=True)
SUB = elementwise("sub", 2, {"f": "{r} = arith.subf {0}, {1} : {t}",
                             "i": "{r} = arith.subi {0}, {1} : {t}",
                             "c": "{r} = complex.sub {0}, {1} : {t}"},
                  silent_ref(np.subtract), kinds="uifc")
MUL = elementwise("mul", 2, PRODUCT_BODY, silent_ref(np.multiply), kinds="buifc",
                  commutative=True)
POW = elementwise("pow", 2, _pow_body, silent_ref(_pow_ref), kinds="uifc")
MAX = elementwise("max", 2, MAX_BODY, silent_ref(ieee_maximum), commutative=True)
MIN = elementwise("min", 2, MIN_BODY, silent_ref(ieee_minimum), commutative=True)
AND = elementwise("and", 2, {"i": "{r} = arith.andi {0}, {1} : {t}"}, np.bitwise_and,
                  kinds="bui", commutative=True)
OR = elementwise("or", 2, {"i": "{r} = arith.ori {0}, {1} : {t}"}, np.bitwise_or,
                 kinds="bui", commutative=True)
NOT = elementwise("not", 1, {"b": "{x0} = arith.constant true\n{r} = arith.xori {0}, {x0} : {t}",
                             "i": "{x0} = arith.constant -1 : {t}\n"
                                  "{r} = arith.xori {0}, {x0} : {t}"},
                  np.invert, kinds="bui")
NEG = elementwise("neg", 1, {"f": "{r} = arith.negf {0} : {t}",
                             "i": "{x0} = arith.constant 0 : {t}\n"
                                  "{r} = arith.subi {x0}, {0} : {t}",
                             "c": "{r} = complex.neg {0} : {t}"},
                  silent_ref(np.negative), kinds="uifc")
ABS = _to_real("abs", {"f": "{r} = math.absf {0} : {t}", "i": "{r} = math.absi {0} : {t}",
                       "u": "{r} = {0}", "c": "{r} = complex.abs {0} : {t}"}, np.abs,
               kinds="uifc", doc="|x|; the modulus of a complex number, a real number.")
REAL = _to_real("real", {"c": "{r} = complex.re {0} : {t}"}, np.real, kinds="c",
                doc="The real part of a complex number.")
IMAG = _to_real("imag", {"c": "{r} = complex.im {0} : {t}"}, np.imag, kinds="c",
                doc="The imaginary part of a complex number.")
CONJ = elementwise("conj", 1, {"c": "{r} = complex.conj {0} : {t}"}, np.conj, kinds="c",
                   doc="The complex conjugate.")
COMPLEX = _complex()
SIGN = elementwise("sign", 1, {
    "f": "{x0} = arith.constant 0.0 : {t}\n{x1} = arith.constant 1.0 : {t}\n"
         "{x2} = math.copysign {x1}, {0} : {t}\n{x3} = arith.cmpf oeq, {0}, {x0} : {t}\n"
         "{x4} = arith.select {x3}, {x0}, {x2} : {t}\n{x5} = arith.cmpf uno, {0}, {0} : {t}\n"
         "{r} = arith.select {x5}, {0}, {x4} : {t}",
    "i": "{x0} = arith.constant 0 : {t}\n{x1} = arith.constant 1 : {t}\n"
         "{x2} = arith.constant -1 : {t}\n{x3} = arith.cmpi sgt, {0}, {x0} : {t}\n"
         "{x4} = arith.cmpi slt, {0}, {x0} : {t}\n{x5} = arith.select {x4}, {x2}, {x0} : {t}\n"
         "{r} = arith.select {x3}, {x1}, {x5} : {t}",
    "u": "{x0} = arith.constant 0 : {t}\n{x1} = arith.constant 1 : {t}\n"
         "{x3} = arith.cmpi ugt, {0}, {x0} : {t}\n{r} = arith.select {x3}, {x1}, {x0} : {t}",
    "c": "{r} = complex.sign {0} : {t}"},
    _sign_ref, kinds="uifc")
LOG = elementwise("log", 1, log_body, silent_ref(np.log), kinds="fc")
SQRT = elementwise("sqrt", 1, sqrt_body, silent_ref(np.sqrt), kinds="fc")
RSQRT = elementwise("rsqrt", 1, rsqrt_body,
                    silent_ref(lambda x: (1 / np.sqrt(x)).astype(x.dtype)), kinds="fc")
FLOOR = unary_float("floor", "floor", np.floor)
CEIL = unary_float("ceil", "ceil", np.ceil)
SELECT = elementwise("select", 3, {"f": "{r} = arith.select {0}, {1}, {2} : {t}",
                                   "i": "{r} = arith.select {0}, {1}, {2} : {t}",
                                   "c": "{r} = arith.select {0}, {1}, {2} : {t}"},
                     np.where, kinds="buifc", doc="select(pred, on_true, on_false); pred is bool.")
COMPARE = _compare()
CONVERT = _convert()
BITCAST_CONVERT = _bitcast_convert()
STOP_GRADIENT = elementwise("stop_gradient", 1, {"f": "{r} = {0}", "i": "{r} = {0}",
                                                 "c": "{r} = {0}"},
                            lambda x: np.array(x, copy=True), kinds="buifc",
                            doc="The operand; no derivative flows through it.")
CONSTANT = _constant()
IOTA = _iota()
DIMENSION_SIZE = _dimension_size()
BROADCAST_IN_DIM = _broadcast_in_dim()
RESHAPE = _reshape()
TRANSPOSE = _transpose()
REDUCE_SUM = reduction("reduce_sum", np.sum, SUM_BODY, lambda d: 0, "Sum over `axes`.")
REDUCE_MAX = reduction("reduce_max", _reduce_max_ref, MAX_BODY, lowest,
                       "Max over `axes`; NaN wins.")
REDUCE_MIN = reduction("reduce_min", _reduce_min_ref, MIN_BODY, highest,
                       "Min over `axes`; NaN wins.")
DOT_GENERAL = _dot_general()


def _start_indices(op: str, operand: ShapedArray, starts: tuple[ShapedArray, ...]) -> None:
    _require(len(starts) == operand.ndim, op, f"{operand.ndim} start indices", len(starts))
    for s in starts:
        _require(s.shape == () and kind(s.dtype) in "iu", op, "scalar integer start indices",
                 s.str_short())


def _clamped_starts(shape, sizes, starts) -> list[int]:
    return [int(min(max(int(s), 0), d - n)) for s, d, n in zip(starts, shape, sizes,
                                                                 strict=True)]


def _dynamic_slice() -> OpDef:
    def infer(x: ShapedArray, *starts: ShapedArray, sizes) -> ShapedArray:
        _start_indices("ember.dynamic_slice", x, starts)
        _require(len(sizes) == x.ndim and all(0 <= n <= d for n, d in zip(sizes, x.shape,
                                                                             strict=True)),
                 "ember.dynamic_slice", f"sizes within {x.shape}", tuple(sizes))
        return ShapedArray(tuple(sizes), x.dtype, x.weak_type)

    def reference(x, *starts, sizes):
        at = _clamped_starts(x.shape, sizes, starts)
        return x[tuple(slice(a, a + n) for a, n in zip(at, sizes, strict=True))]

    return OpDef("ember.dynamic_slice", ("operand", "*start_indices"), infer, reference,
                 frozenset({Trait.PURE, Trait.DATA_MOVEMENT, Trait.VIEW}),
                 {"sizes": Attr.I64_ARRAY},
                 doc="A `sizes` window at run-time starts, clamped into bounds (as XLA does).")


def _dynamic_update_slice() -> OpDef:
    name = "ember.dynamic_update_slice"

    def infer(x: ShapedArray, update: ShapedArray, *starts: ShapedArray,
              strides) -> ShapedArray:
        _start_indices(name, x, starts)
        same_dtypes(name, (x, update))
        _require(len(strides) == x.ndim and all(s >= 1 for s in strides), name,
                 f"{x.ndim} strides of at least 1", tuple(strides))
        _require(update.ndim == x.ndim and all(
            _extent(u, s) <= d for u, s, d in zip(update.shape, strides, x.shape, strict=True)),
            name, f"an update that fits in {x.shape} with strides {tuple(strides)}",
            update.shape)
        return ShapedArray(x.shape, x.dtype, x.weak_type)

    def reference(x, update, *starts, strides):
        extents = [_extent(u, s) for u, s in zip(update.shape, strides, strict=True)]
        at = _clamped_starts(x.shape, extents, starts)
        out = np.array(x, copy=True)
        out[tuple(slice(a, a + n, s) for a, n, s in zip(at, extents, strides,
                                                        strict=True))] = update
        return out

    return OpDef(name, ("operand", "update", "*start_indices"), infer, reference,
                 frozenset({Trait.PURE}), {"strides": Attr.I64_ARRAY},
                 doc="`operand` with `update` written at run-time starts, every `strides` "
                     "elements (the starts clamped so that it fits, as XLA clamps them). "
                     "Lowered to tensor.insert_slice: IREE writes it in place, costing the "
                     "update's size, not the operand's.")


def _extent(size: int, stride: int) -> int:
    """How much of an axis a strided window of `size` elements spans."""
    return (size - 1) * stride + 1 if size else 0


DYNAMIC_SLICE = _dynamic_slice()
DYNAMIC_UPDATE_SLICE = _dynamic_update_slice()


# ----------------------------------------------------------------------------- control flow

def _rows(*namespaces: Mapping) -> dict[str, OpDef]:
    """Every row these namespaces hold, by name (sorted: the IRDL file's order)."""
    rows: dict[str, OpDef] = {}
    for namespace in namespaces:
        for row in namespace.values():
            if isinstance(row, OpDef) and rows.setdefault(row.name, row) is not row:
                raise ValueError(f"two rows are named {row.name}")
    return dict(sorted(rows.items()))


# The table is every row the op modules define, found rather than listed: a row left out of
# the lists was invisible to every test that iterates the table.
OPS: dict[str, OpDef] = _rows(globals(), *(vars(m) for m in (
    indexing_ops, linalg_ops, math_ops, scan_ops, structured_ops)))
