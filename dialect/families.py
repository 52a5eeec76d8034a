"""The factories of op families, shared by the modules of rows (ops.py, math_ops.py,
scan_ops.py): elementwise ops and their scalar bodies by dtype kind, reductions and their
combiners, and the checks their shape rules share."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

import numpy as np

from .opdef import Attr, OpDef, ScalarBody, Trait, VerifyError, require as _require
from .types import ShapedArray, kind


def _same_shapes(op: str, avals: tuple[ShapedArray, ...]) -> None:
    shapes = [a.shape for a in avals]
    _require(len(set(shapes)) <= 1, op, "operands of one shape", shapes)


def same_dtypes(op: str, avals: tuple[ShapedArray, ...]) -> None:
    dtypes = [str(a.dtype) for a in avals]
    _require(len(set(dtypes)) <= 1, op, "operands of one dtype", dtypes)


def _kinds_allowed(op: str, allowed: str, avals: tuple[ShapedArray, ...]) -> None:
    for a in avals:
        _require(kind(a.dtype) in allowed, op, f"operand kinds in '{allowed}'", a.dtype)


def _weak(avals: tuple[ShapedArray, ...]) -> bool:
    return all(a.weak_type for a in avals)


def by_kind(templates: Mapping[str, str]) -> ScalarBody:
    """A scalar body chosen by dtype kind; 'u' falls back to 'i', 'b' to 'u' then 'i'."""

    def body(k: str, attrs: Mapping) -> str:
        for candidate in {"b": "bui", "u": "ui"}.get(k, k):
            if candidate in templates:
                return templates[candidate]
        raise VerifyError(f"no scalar lowering for dtype kind {k!r}")

    return body


def complex_part(bits: int) -> str:
    """The element type of the parts of a complex type of `bits` bits."""
    return f"f{bits // 2}"


def elementwise(name: str, arity: int, templates: Mapping[str, str] | ScalarBody,
                reference: Callable, *, kinds: str = "buif", result_dtype=None,
                commutative: bool = False, doc: str = "") -> OpDef:
    """The one factory for elementwise ops (JAX's `standard_naryop`)."""
    full = f"ember.{name}"

    def infer(*avals: ShapedArray, **attrs) -> ShapedArray:
        _require(len(avals) == arity, full, f"{arity} operands", len(avals))
        _same_shapes(full, avals)
        same_dtypes(full, avals[-2:] if name == "select" else avals)
        _kinds_allowed(full, kinds, avals[1:] if name == "select" else avals)
        dtype = avals[-1].dtype if result_dtype is None else np.dtype(result_dtype)
        return ShapedArray(avals[0].shape, dtype, _weak(avals) and result_dtype is None)

    traits = {Trait.PURE, Trait.ELEMENTWISE} | ({Trait.COMMUTATIVE} if commutative else set())
    scalar = templates if callable(templates) else by_kind(templates)
    return OpDef(full, ("lhs", "rhs", "third")[:arity] if arity > 1 else ("operand",),
                 infer, reference, frozenset(traits), scalar=scalar, doc=doc)


def unary_float(name: str, fn: str, ref: Callable, doc: str = "", complex_fn: str = "") -> OpDef:
    """A float op that is math.`fn`; on complex numbers complex.`complex_fn` if given."""
    templates = {"f": f"{{r}} = math.{fn} {{0}} : {{t}}"}
    if complex_fn:
        templates["c"] = f"{{r}} = complex.{complex_fn} {{0}} : {{t}}"
    return elementwise(name, 1, templates, ref, kinds="fc" if complex_fn else "f", doc=doc)


def check_axes(op: str, axes: tuple[int, ...], ndim: int) -> None:
    _require(all(0 <= a < ndim for a in axes) and len(set(axes)) == len(axes), op,
             f"distinct axes in [0, {ndim})", axes)


def reduction(name: str, ref: Callable, combiner: Mapping[str, str], init: Callable,
              doc: str) -> OpDef:
    """A reduction over `axes` with a combiner body per dtype kind (complex numbers where the
    combiner has a body for them)."""
    full = f"ember.{name}"
    kinds = "buifc" if "c" in combiner else "buif"

    def infer(x: ShapedArray, *, axes) -> ShapedArray:
        axes = tuple(axes)
        check_axes(full, axes, x.ndim)
        _kinds_allowed(full, kinds, (x,))
        shape = tuple(d for i, d in enumerate(x.shape) if i not in axes)
        return ShapedArray(shape, x.dtype, x.weak_type)

    def reference(x, *, axes):
        return np.asarray(ref(x, axis=tuple(axes))).astype(x.dtype)

    return OpDef(full, ("operand",), infer, reference,
                 frozenset({Trait.PURE, Trait.REDUCTION}), {"axes": Attr.I64_ARRAY},
                 scalar=by_kind(combiner), init=init, doc=doc)


def lowest(dtype: np.dtype):
    if kind(dtype) == "f":
        return -np.inf
    return False if dtype == np.bool_ else np.iinfo(dtype).min


def highest(dtype: np.dtype):
    if kind(dtype) == "f":
        return np.inf
    return True if dtype == np.bool_ else np.iinfo(dtype).max


def _zeros_signed(out: np.ndarray, negative: np.ndarray) -> np.ndarray:
    """`out` with its zeros -0.0 where `negative`, +0.0 elsewhere."""
    signed = np.where(negative, -0.0, 0.0).astype(out.dtype)
    return np.where(out == 0, signed, out)


def ieee_maximum(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The kernel's max (arith.maximumf, IEEE 754-2019): NaN wins and +0.0 > -0.0, where
    np.maximum(0.0, -0.0) is -0.0."""
    out = np.maximum(a, b)
    if kind(out.dtype) != "f":
        return out
    return _zeros_signed(out, np.signbit(a) & np.signbit(b))


def ieee_minimum(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The kernel's min (arith.minimumf): NaN wins and -0.0 < +0.0."""
    out = np.minimum(a, b)
    if kind(out.dtype) != "f":
        return out
    return _zeros_signed(out, np.signbit(a) | np.signbit(b))


def ieee_max(x: np.ndarray, axis: tuple[int, ...]) -> np.ndarray:
    """np.max with ieee_maximum's zeros: -0.0 only where every zero reduced is -0.0."""
    out = np.max(x, axis=axis)
    if kind(x.dtype) != "f":
        return out
    return _zeros_signed(out, ~np.any((x == 0) & ~np.signbit(x), axis=axis))


def ieee_min(x: np.ndarray, axis: tuple[int, ...]) -> np.ndarray:
    """np.min with ieee_minimum's zeros: -0.0 where some zero reduced is -0.0."""
    out = np.min(x, axis=axis)
    if kind(x.dtype) != "f":
        return out
    return _zeros_signed(out, np.any((x == 0) & np.signbit(x), axis=axis))


def silent_ref(fn: Callable) -> Callable:
    """A NumPy reference that computes without floating-point warnings (overflow to inf,
    0/0 to nan: what the compiled op gives)."""

    def ref(*args, **kwargs):
        with np.errstate(all="ignore"):
            return fn(*args, **kwargs)

    ref.__name__ = getattr(fn, "__name__", "ref")
    ref.__wrapped__ = fn  # for callers that silence warnings around many references at once
    return ref


SUM_BODY = {"f": "{r} = arith.addf {0}, {1} : {t}", "i": "{r} = arith.addi {0}, {1} : {t}",
            "b": "{r} = arith.ori {0}, {1} : {t}", "c": "{r} = complex.add {0}, {1} : {t}"}


PRODUCT_BODY = {"f": "{r} = arith.mulf {0}, {1} : {t}", "i": "{r} = arith.muli {0}, {1} : {t}",
                "b": "{r} = arith.andi {0}, {1} : {t}", "c": "{r} = complex.mul {0}, {1} : {t}"}


MAX_BODY = {"f": "{r} = arith.maximumf {0}, {1} : {t}", "i": "{r} = arith.maxsi {0}, {1} : {t}",
        "u": "{r} = arith.maxui {0}, {1} : {t}", "b": "{r} = arith.ori {0}, {1} : {t}"}


MIN_BODY = {"f": "{r} = arith.minimumf {0}, {1} : {t}", "i": "{r} = arith.minsi {0}, {1} : {t}",
        "u": "{r} = arith.minui {0}, {1} : {t}", "b": "{r} = arith.andi {0}, {1} : {t}"}


def keeping_signed_zero(template: str) -> str:
    """An odd function's body that returns ±0 for ±0 itself (IREE's expansions of sin, tan,
    sinh, atanh, expm1, ... compute +0 for -0; NumPy and XLA keep the sign)."""
    n = 1 + max((int(i) for i in re.findall(r"\{x(\d+)\}", template)), default=-1)
    value, zero, is_zero = (f"{{x{n + k}}}" for k in range(3))
    return (template.replace("{r}", value) + f"""
{zero} = arith.constant 0.0 : {{t}}
{is_zero} = arith.cmpf oeq, {{0}}, {zero} : {{t}}
{{r}} = arith.select {is_zero}, {{0}}, {value} : {{t}}""")


def libm_in_float64(template: str, fn: str) -> ScalarBody:
    """`template` for float16 and float32; float64 calls libm's `fn`, which reduces any
    argument exactly (CPU modules are system libraries: see iree_driver._system_linking)."""
    f64 = f"{{r}} = math.{fn} {{0}} : {{t}}"
    return lambda k, attrs: f64 if attrs.get("dst_bits") == 64 else template


# IREE's sin/cos lose accuracy as |x| grows (cos(212) off by 6e-6), below 0 (sin(-1e-6) was
# 1.1e-6, sin(-1e-30) 6.2e-8) and near their zeros (sin(3.1445723) off by 5.6e-5, relative).
# So float32 takes y = x - q pi/2 in [-pi/4, pi/4] (q = round(2x/pi); pi/2 in three parts,
# each subtracted by a fused multiply-add: Cody-Waite, q times a part exact whatever its
# bits; LLVM had contracted the multiply-subtract pairs of vector code but not those of
# scalar code on the host, so a loop body's sin of a large carry differed), IREE's
# sin and cos on |y| only (sin y by y's sign: a select, as math.copysign has no lowering where
# IREE runs a scalar on the host), and the quadrant q mod 4 picks +-sin y or +-cos y.
# Float64 calls libm.
_QUADRANT = """{x0} = arith.constant 0.6366197723675814 : {t}
{x1} = arith.mulf {0}, {x0} : {t}
{x2} = math.roundeven {x1} : {t}
{x3} = arith.constant 1.5703125 : {t}
{x4} = arith.constant 4.84466552734375e-4 : {t}
{x5} = arith.constant -6.397578431460715e-7 : {t}
{x6} = arith.negf {x2} : {t}
{x7} = math.fma {x6}, {x3}, {0} : {t}
{x9} = math.fma {x6}, {x4}, {x7} : {t}
{x11} = math.fma {x6}, {x5}, {x9} : {t}
{x12} = math.absf {x11} : {t}
{x13} = math.sin {x12} : {t}
{x14} = math.cos {x12} : {t}
{x15} = arith.constant 0.0 : {t}
{x16} = arith.cmpf olt, {x11}, {x15} : {t}
{x17} = arith.negf {x13} : {t}
{x18} = arith.select {x16}, {x17}, {x13} : {t}
{x19} = arith.constant 0.25 : {t}
{x20} = arith.mulf {x2}, {x19} : {t}
{x21} = math.floor {x20} : {t}
{x22} = arith.constant 4.0 : {t}
{x23} = arith.mulf {x21}, {x22} : {t}
{x24} = arith.subf {x2}, {x23} : {t}
{x25} = arith.constant 1.0 : {t}
{x26} = arith.constant 3.0 : {t}
{x27} = arith.cmpf oeq, {x24}, {x25} : {t}
{x28} = arith.cmpf oeq, {x24}, {x26} : {t}
{x29} = arith.ori {x27}, {x28} : i1
{x30} = arith.constant 2.0 : {t}
"""
# y is {x11}, sin y {x18}, cos y {x14}, the quadrant {x24}, odd quadrants {x29}
_TRIG_TAIL = {
    # sin x: sin y, cos y, -sin y, -cos y by quadrant
    "sin": """{x31} = arith.select {x29}, {x14}, {x18} : {t}
{x32} = arith.negf {x31} : {t}
{x33} = arith.cmpf oge, {x24}, {x30} : {t}
{r} = arith.select {x33}, {x32}, {x31} : {t}""",
    # cos x: cos y, -sin y, -cos y, sin y
    "cos": """{x31} = arith.select {x29}, {x18}, {x14} : {t}
{x32} = arith.negf {x31} : {t}
{x33} = arith.cmpf oeq, {x24}, {x30} : {t}
{x34} = arith.ori {x27}, {x33} : i1
{r} = arith.select {x34}, {x32}, {x31} : {t}""",
    # tan x: sin y / cos y, or -cos y / sin y in odd quadrants
    "tan": """{x31} = arith.negf {x14} : {t}
{x32} = arith.select {x29}, {x31}, {x18} : {t}
{x33} = arith.select {x29}, {x18}, {x14} : {t}
{r} = arith.divf {x32}, {x33} : {t}"""}


def trig_body(fn: str) -> str:
    """sin, cos or tan of float16/float32 (see _QUADRANT)."""
    return _QUADRANT + _TRIG_TAIL[fn]
