"""Rows of the op table for the rest of NumPy's ufuncs: transcendental functions, integer
division with XLA's rules for zero divisors, shifts, xor, and finiteness.

Each row is one `elementwise(...)` call; the lowering comes from its scalar template.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping

import numpy as np

from .families import (
    complex_part,
    elementwise,
    keeping_signed_zero,
    libm_in_float64,
    silent_ref,
    trig_body,
)
from .types import kind


def _math(name: str, fn: str, ref: Callable, odd: bool = False) -> object:
    """A float op that is math.`fn`; `odd` ones keep the sign of a zero."""
    body = f"{{r}} = math.{fn} {{0}} : {{t}}"
    return elementwise(name, 1, {"f": keeping_signed_zero(body) if odd else body},
                       silent_ref(ref), kinds="f")


def _with_overflow_bound(template: str) -> Callable[[str, Mapping], str]:
    """Fill {big}: where formulas switch to log(x) + ln 2 because x * x would overflow; and
    log1p in Kahan's form in float64."""

    def body(k: str, attrs: Mapping) -> str:
        big = {16: "2.0e2", 32: "1.0e18", 64: "1.0e150"}[attrs.get("dst_bits", 32)]
        return kahan_in_float64(template.replace("{big}", big))(k, attrs)

    return body


# asinh(x) = sign(x) * log1p(a + a^2 / (1 + sqrt(1 + a^2))), a = |x|; log(a) + ln 2 for a
# huge a. IREE's own expansion is off by 6e-5 (relative) at -68.
_ASINH = """{x0} = math.absf {0} : {t}
{x1} = arith.mulf {x0}, {x0} : {t}
{x2} = arith.constant 1.0 : {t}
{x3} = arith.addf {x1}, {x2} : {t}
{x4} = math.sqrt {x3} : {t}
{x5} = arith.addf {x4}, {x2} : {t}
{x6} = arith.divf {x1}, {x5} : {t}
{x7} = arith.addf {x0}, {x6} : {t}
{x8} = math.log1p {x7} : {t}
{x9} = math.log {x0} : {t}
{x10} = arith.constant 0.6931471805599453 : {t}
{x11} = arith.addf {x9}, {x10} : {t}
{x12} = arith.constant {big} : {t}
{x13} = arith.cmpf ogt, {x0}, {x12} : {t}
{x14} = arith.select {x13}, {x11}, {x8} : {t}
{r} = math.copysign {x14}, {0} : {t}"""
# acosh(x) = log1p(u + sqrt(u * (u + 2))), u = x - 1; nan below 1 (IREE's gives -inf).
_ACOSH = """{x0} = arith.constant 1.0 : {t}
{x1} = arith.subf {0}, {x0} : {t}
{x2} = arith.constant 2.0 : {t}
{x3} = arith.addf {x1}, {x2} : {t}
{x4} = arith.mulf {x1}, {x3} : {t}
{x5} = math.sqrt {x4} : {t}
{x6} = arith.addf {x1}, {x5} : {t}
{x7} = math.log1p {x6} : {t}
{x8} = math.log {0} : {t}
{x9} = arith.constant 0.6931471805599453 : {t}
{x10} = arith.addf {x8}, {x9} : {t}
{x11} = arith.constant {big} : {t}
{x12} = arith.cmpf ogt, {0}, {x11} : {t}
{x13} = arith.select {x12}, {x10}, {x7} : {t}
{x14} = arith.cmpf ult, {0}, {x0} : {t}
{x15} = arith.constant 0.0 : {t}
{x16} = arith.divf {x15}, {x15} : {t}
{r} = arith.select {x14}, {x16}, {x13} : {t}"""
# atan in float16 and float32 (IREE's is off by 4e-6, relative, near 0.66): Cephes' atanf,
# |x| reduced by tan(3 pi/8) and tan(pi/8) to [-0.4142, 0.4142] and a polynomial in x^2 there
# (within 2e-7), x's sign by a select. {A} is the argument, {R} the result, {nK} temporaries.
_ATAN_CORE = """{n0} = math.absf {A} : {t}
{n1} = arith.constant 2.414213562373095 : {t}
{n2} = arith.constant 0.41421356237309503 : {t}
{n3} = arith.cmpf ogt, {n0}, {n1} : {t}
{n4} = arith.cmpf ogt, {n0}, {n2} : {t}
{n5} = arith.constant 1.0 : {t}
{n6} = arith.constant -1.0 : {t}
{n7} = arith.divf {n6}, {n0} : {t}
{n8} = arith.subf {n0}, {n5} : {t}
{n9} = arith.addf {n0}, {n5} : {t}
{n10} = arith.divf {n8}, {n9} : {t}
{n11} = arith.select {n4}, {n10}, {n0} : {t}
{n12} = arith.select {n3}, {n7}, {n11} : {t}
{n13} = arith.constant 0.7853981633974483 : {t}
{n14} = arith.constant 1.5707963267948966 : {t}
{n15} = arith.constant 0.0 : {t}
{n16} = arith.select {n4}, {n13}, {n15} : {t}
{n17} = arith.select {n3}, {n14}, {n16} : {t}
{n18} = arith.mulf {n12}, {n12} : {t}
{n19} = arith.constant 8.05374449538e-2 : {t}
{n20} = arith.constant -1.38776856032e-1 : {t}
{n21} = arith.constant 1.99777106478e-1 : {t}
{n22} = arith.constant -3.33329491539e-1 : {t}
{n23} = arith.mulf {n19}, {n18} : {t}
{n24} = arith.addf {n23}, {n20} : {t}
{n25} = arith.mulf {n24}, {n18} : {t}
{n26} = arith.addf {n25}, {n21} : {t}
{n27} = arith.mulf {n26}, {n18} : {t}
{n28} = arith.addf {n27}, {n22} : {t}
{n29} = arith.mulf {n28}, {n18} : {t}
{n30} = arith.mulf {n29}, {n12} : {t}
{n31} = arith.addf {n30}, {n12} : {t}
{n32} = arith.addf {n17}, {n31} : {t}
{n33} = arith.cmpf olt, {A}, {n15} : {t}
{n34} = arith.negf {n32} : {t}
{R} = arith.select {n33}, {n34}, {n32} : {t}"""
# IREE's atan2 is wrong where an argument is zero or infinite (atan2(0, 0) and
# atan2(inf, inf) are nan, atan2(-1, -inf) is +pi). C's answers: for y = 0 or an infinite x
# and finite y, +-0 or +-pi by the signs; for both infinite, +-pi/4 or +-3pi/4. The
# result always has y's sign (IREE's loses it for tiny y).
_ATAN2 = """{x0} = math.atan2 {0}, {1} : {t}
{x1} = arith.constant 0.0 : {t}
{x2} = arith.constant 1.0 : {t}
{x3} = arith.constant 3.141592653589793 : {t}
{x4} = math.copysign {x2}, {1} : {t}
{x5} = arith.cmpf olt, {x4}, {x1} : {t}
{x6} = arith.select {x5}, {x3}, {x1} : {t}
{x7} = math.copysign {x6}, {0} : {t}
{x8} = arith.subf {0}, {0} : {t}
{x9} = arith.subf {1}, {1} : {t}
{x10} = arith.cmpf ord, {0}, {0} : {t}
{x11} = arith.cmpf ord, {1}, {1} : {t}
{x12} = arith.cmpf oeq, {x8}, {x1} : {t}
{x13} = arith.cmpf uno, {x9}, {x9} : {t}
{x14} = arith.andi {x13}, {x11} : i1
{x15} = arith.cmpf uno, {x8}, {x8} : {t}
{x16} = arith.andi {x15}, {x10} : i1
{x17} = arith.cmpf oeq, {0}, {x1} : {t}
{x18} = arith.andi {x17}, {x11} : i1
{x19} = arith.andi {x14}, {x12} : i1
{x20} = arith.ori {x18}, {x19} : i1
{x21} = arith.select {x20}, {x7}, {x0} : {t}
{x22} = arith.andi {x14}, {x16} : i1
{x23} = arith.constant 0.7853981633974483 : {t}
{x24} = arith.constant 2.356194490192345 : {t}
{x25} = arith.cmpf ogt, {1}, {x1} : {t}
{x26} = arith.select {x25}, {x23}, {x24} : {t}
{x27} = math.copysign {x26}, {0} : {t}
{x28} = arith.select {x22}, {x27}, {x21} : {t}
{r} = math.copysign {x28}, {0} : {t}"""


EXP2 = _math("exp2", "exp2", np.exp2)


def _renamed(form: str, template: str) -> str:
    """`form` with its names {nK} made {xN} past the ones `template` uses."""
    n = 1 + max((int(i) for i in re.findall(r"\{x(\d+)\}", template)), default=-1)
    return re.sub(r"\{n(\d+)\}", lambda m: f"{{x{n + int(m.group(1))}}}", form)


# IREE expands float64 expm1 and log1p as exp(x) - 1 and log(1 + x), which cancel: expm1(1e-7)
# was off by 5.7e-10 (relative), expm1(1e-300) and log1p(1e-300) were 0 (so were asinh's,
# which calls log1p). Kahan's forms keep every digit with exp and log at their usual error:
# expm1(x) = (u - 1) x / log u and log1p(x) = log(u) x / (u - 1), x itself where u is 1.
_KAHAN = {"expm1": """{n0} = arith.constant 1.0 : {t}
{n1} = math.exp {A} : {t}
{n2} = arith.subf {n1}, {n0} : {t}
{n3} = math.log {n1} : {t}
{n4} = arith.divf {A}, {n3} : {t}
{n5} = arith.mulf {n2}, {n4} : {t}
{n6} = arith.cmpf oeq, {n1}, {n0} : {t}
{n7} = arith.select {n6}, {A}, {n5} : {t}
{n8} = arith.constant -1.0 : {t}
{n9} = arith.cmpf oeq, {n2}, {n8} : {t}
{n10} = arith.select {n9}, {n8}, {n7} : {t}
{n11} = arith.constant 0x7FF0000000000000 : {t}
{n12} = arith.cmpf oeq, {n1}, {n11} : {t}
{R} = arith.select {n12}, {n1}, {n10} : {t}""", "log1p": """{n0} = arith.constant 1.0 : {t}
{n1} = arith.addf {A}, {n0} : {t}
{n2} = arith.subf {n1}, {n0} : {t}
{n3} = math.log {n1} : {t}
{n4} = arith.divf {A}, {n2} : {t}
{n5} = arith.mulf {n3}, {n4} : {t}
{n6} = arith.cmpf oeq, {n1}, {n0} : {t}
{n7} = arith.constant 0x7FF0000000000000 : {t}
{n8} = arith.cmpf oeq, {A}, {n7} : {t}
{n9} = arith.ori {n6}, {n8} : i1
{R} = arith.select {n9}, {A}, {n5} : {t}"""}


def kahan_in_float64(template: str) -> Callable[[str, Mapping], str]:
    """`template`, with its math.expm1 and math.log1p lines in Kahan's forms in float64 (IREE's
    float16 and float32 polynomials are accurate)."""

    def body(k: str, attrs: Mapping) -> str:
        if attrs.get("dst_bits") != 64:
            return template
        out = template
        for fn, form in _KAHAN.items():
            for line in re.findall(rf"^(\{{\w+\}}) = math\.{fn} (\{{\w+\}}) : \{{t\}}$",
                                   out, re.M):
                lines = _renamed(form, out)
                out = out.replace(f"{line[0]} = math.{fn} {line[1]} : {{t}}",
                                  lines.replace("{R}", line[0]).replace("{A}", line[1]), 1)
        return out

    return body


# Real numbers only, as sinh, arcsinh, ...: ember.numpy takes complex log1p by parts (MLIR's
# complex.log1p gave nan + nan j at -1 - 0j, where C99 has -inf - 0j).
LOG1P = elementwise("log1p", 1, kahan_in_float64(keeping_signed_zero(
    "{r} = math.log1p {0} : {t}")), silent_ref(np.log1p), kinds="f")
LOG2 = _math("log2", "log2", np.log2)
ASIN = _math("asin", "asin", np.arcsin, odd=True)
ACOS = _math("acos", "acos", np.arccos)
ATAN = elementwise("atan", 1, lambda k, attrs: keeping_signed_zero(
    "{r} = math.atan {0} : {t}" if attrs.get("dst_bits") == 64 else
    _ATAN_CORE.replace("{A}", "{0}").replace("{R}", "{r}").replace("{n", "{x")),
    silent_ref(np.arctan), kinds="f")
# IREE expands sinh as (e^x - e^-x) / 2 and atanh as log((1 + x) / (1 - x)) / 2, which
# cancel near 0 (sinh(1e-7) was 1.19e-7 in float32, sinh(1e-30) 0). Instead, a = |x|:
# sinh = (e + e / (e + 1)) / 2 with e = expm1(a) (h (h / 2), h = e^(a/2), where e + 1 would
# overflow), atanh = log1p(2a / (1 - a)) / 2, with x's sign (a select, not math.copysign,
# which has no lowering where IREE runs a scalar on the host; zeros return themselves).
_SINH = """{x0} = math.absf {0} : {t}
{x1} = math.expm1 {x0} : {t}
{x2} = arith.constant 1.0 : {t}
{x3} = arith.addf {x1}, {x2} : {t}
{x4} = arith.divf {x1}, {x3} : {t}
{x5} = arith.addf {x1}, {x4} : {t}
{x6} = arith.constant 0.5 : {t}
{x7} = arith.mulf {x5}, {x6} : {t}
{x8} = arith.mulf {x0}, {x6} : {t}
{x9} = math.exp {x8} : {t}
{x10} = arith.mulf {x9}, {x6} : {t}
{x11} = arith.mulf {x9}, {x10} : {t}
{x12} = arith.constant {big} : {t}
{x13} = arith.cmpf ogt, {x0}, {x12} : {t}
{x14} = arith.select {x13}, {x11}, {x7} : {t}
{x15} = arith.constant 0.0 : {t}
{x16} = arith.cmpf olt, {0}, {x15} : {t}
{x17} = arith.negf {x14} : {t}
{r} = arith.select {x16}, {x17}, {x14} : {t}"""
_ATANH = """{x0} = math.absf {0} : {t}
{x1} = arith.constant 1.0 : {t}
{x2} = arith.subf {x1}, {x0} : {t}
{x3} = arith.addf {x0}, {x0} : {t}
{x4} = arith.divf {x3}, {x2} : {t}
{x5} = math.log1p {x4} : {t}
{x6} = arith.constant 0.5 : {t}
{x7} = arith.mulf {x5}, {x6} : {t}
{x8} = arith.constant 0.0 : {t}
{x9} = arith.cmpf olt, {0}, {x8} : {t}
{x10} = arith.negf {x7} : {t}
{r} = arith.select {x9}, {x10}, {x7} : {t}"""


def _sinh_body(k: str, attrs: Mapping) -> str:
    big = {16: "10.0", 32: "88.0", 64: "709.0"}[attrs.get("dst_bits", 32)]
    return kahan_in_float64(keeping_signed_zero(_SINH.replace("{big}", big)))(k, attrs)


SINH = elementwise("sinh", 1, _sinh_body, silent_ref(np.sinh), kinds="f")
COSH = _math("cosh", "cosh", np.cosh)
ASINH = elementwise("asinh", 1, _with_overflow_bound(_ASINH),
                    silent_ref(np.arcsinh), kinds="f")
ACOSH = elementwise("acosh", 1, _with_overflow_bound(_ACOSH),
                    silent_ref(np.arccosh), kinds="f")
ATANH = elementwise("atanh", 1, kahan_in_float64(keeping_signed_zero(_ATANH)),
                    silent_ref(np.arctanh), kinds="f")


def _erf_f64() -> str:
    """IREE has no float64 erf. For a = |x| < 2 the series without cancellation
    erf(a) = 2/sqrt(pi) e^(-a^2) sum_n (2a^2)^n a / (2n+1)!! (30 terms), above it
    1 - erfc(a), erfc(a) = e^(-a^2) / (sqrt(pi) K(a)) with Laplace's continued fraction
    K = a + (1/2) / (a + (2/2) / (a + (3/2) / ...)) (40 terms): within 6 ulp of libm; the
    sign of x (-0 too). Infinities give 1 (K = inf), nan stays nan."""
    lines: list[str] = []

    def v(op: str, *args: str) -> str:
        """One instruction `op args : f64` (a constant when `args` is one float)."""
        name = f"{{x{len(lines)}}}"
        if op == "arith.constant":
            lines.append(f"{name} = arith.constant {float(args[0])!r} : {{t}}")
        else:
            lines.append(f"{name} = {op} {', '.join(args)} : {{t}}")
        return name

    a = v("math.absf", "{0}")
    two = v("arith.constant", 2.0)
    small, big = v("arith.minimumf", a, two), v("arith.maximumf", a, two)
    coefficients = [1.0]
    for k in range(1, 31):
        coefficients.append(coefficients[-1] / (2 * k + 1))
    t = v("arith.mulf", small, small)
    u = v("arith.addf", t, t)
    p = v("arith.constant", coefficients[-1])
    for c in reversed(coefficients[:-1]):
        p = v("math.fma", p, u, v("arith.constant", c))
    decay = v("math.exp", v("arith.negf", t))
    series = v("arith.mulf", v("arith.mulf", decay, small),
               v("arith.mulf", p, v("arith.constant", 2 / math.sqrt(math.pi))))
    f = big
    for k in range(40, 0, -1):
        f = v("arith.addf", big, v("arith.divf", v("arith.constant", k / 2), f))
    e = v("math.exp", v("arith.negf", v("arith.mulf", big, big)))
    erfc = v("arith.divf", e, v("arith.mulf", f, v("arith.constant", math.sqrt(math.pi))))
    tail = v("arith.subf", v("arith.constant", 1.0), erfc)
    below = f"{{x{len(lines)}}}"
    lines.append(f"{below} = arith.cmpf olt, {a}, {two} : {{t}}")
    value = f"{{x{len(lines)}}}"
    lines.append(f"{value} = arith.select {below}, {series}, {tail} : {{t}}")
    lines.append(f"{{r}} = math.copysign {value}, {{0}} : {{t}}")
    return "\n".join(lines)


_ERF_F64 = _erf_f64()
_ERF = keeping_signed_zero("{r} = math.erf {0} : {t}")
ERF = elementwise("erf", 1, lambda k, attrs: _ERF_F64 if attrs.get("dst_bits") == 64 else _ERF,
                  silent_ref(lambda x: _erf(x)), kinds="f")
# IREE's cbrt(inf) is nan: non-finite inputs are their own cube roots. Its
# float32 cbrt is off by up to 1.1e-6 (relative): one Newton step, (2y + x / y^2) / 3, takes
# it within 2 ulp.
_CBRT = """{x0} = math.cbrt {0} : {t}
{x1} = arith.subf {0}, {0} : {t}
{x2} = arith.constant 0.0 : {t}
{x3} = arith.cmpf oeq, {x1}, {x2} : {t}
{x4} = arith.mulf {x0}, {x0} : {t}
{x5} = arith.divf {0}, {x4} : {t}
{x6} = arith.addf {x0}, {x0} : {t}
{x7} = arith.addf {x6}, {x5} : {t}
{x8} = arith.constant 0.3333333333333333 : {t}
{x9} = arith.mulf {x7}, {x8} : {t}
{x10} = arith.cmpf one, {0}, {x2} : {t}
{x11} = arith.select {x10}, {x9}, {x0} : {t}
{r} = arith.select {x3}, {x11}, {0} : {t}"""
# IREE has no float64 cbrt: y = |x| ** (1/3), then one Newton step y + (|x| / y^2 - y) / 3
# with |x| / y^2 to a few bits past float64 (the remainder of the division and the rounding
# of y^2, each exact by an FMA), so the step adds no rounding error but its last: the
# float64 nearest the cube root but at near-halfway cases (the plain step missed it for 8%
# of inputs, by an ulp). |x| below 2^-600 is scaled by 2^600 first (the result by 2^-200:
# exact), keeping those remainders out of the subnormals the compiled code flushes. Zero,
# infinities and NaN are their own cube roots; the sign is x's.
_CBRT_F64 = """{x0} = math.absf {0} : {t}
{x1} = arith.constant 2.409919865102884e-181 : {t}
{x2} = arith.cmpf olt, {x0}, {x1} : {t}
{x3} = arith.constant 4.149515568880993e+180 : {t}
{x4} = arith.mulf {x0}, {x3} : {t}
{x5} = arith.select {x2}, {x4}, {x0} : {t}
{x6} = arith.constant 0.3333333333333333 : {t}
{x7} = math.powf {x5}, {x6} : {t}
{x8} = arith.mulf {x7}, {x7} : {t}
{x9} = arith.negf {x8} : {t}
{x10} = math.fma {x7}, {x7}, {x9} : {t}
{x11} = arith.divf {x5}, {x8} : {t}
{x12} = arith.negf {x11} : {t}
{x13} = math.fma {x12}, {x8}, {x5} : {t}
{x14} = arith.mulf {x11}, {x10} : {t}
{x15} = arith.subf {x13}, {x14} : {t}
{x16} = arith.divf {x15}, {x8} : {t}
{x17} = arith.subf {x11}, {x7} : {t}
{x18} = arith.addf {x17}, {x16} : {t}
{x19} = arith.mulf {x18}, {x6} : {t}
{x20} = arith.addf {x7}, {x19} : {t}
{x21} = arith.constant 6.223015277861142e-61 : {t}
{x22} = arith.mulf {x20}, {x21} : {t}
{x23} = arith.select {x2}, {x22}, {x20} : {t}
{x24} = arith.constant 0.0 : {t}
{x25} = arith.cmpf one, {x0}, {x24} : {t}
{x26} = arith.subf {x0}, {x0} : {t}
{x27} = arith.cmpf oeq, {x26}, {x24} : {t}
{x28} = arith.andi {x25}, {x27} : i1
{x29} = arith.select {x28}, {x23}, {x0} : {t}
{r} = math.copysign {x29}, {0} : {t}"""
CBRT = elementwise("cbrt", 1, lambda k, attrs: _CBRT_F64 if attrs.get("dst_bits") == 64
                   else _CBRT, silent_ref(np.cbrt), kinds="f")
ROUND = _math("round", "roundeven", np.round)  # half to even, as np.round and jnp.round
TRUNC = _math("trunc", "trunc", np.trunc)


def atan2_template(bits: int) -> str:
    """_ATAN2 whose atan2 of |y| and |x| is _ATAN_CORE's atan(min / max), then pi/2 - a where
    |y| > |x| and pi - a where x < 0, in float16 and float32 (float64 calls libm)."""
    if bits == 64:
        return _ATAN2
    head = """{n35} = math.absf {0} : {t}
{n36} = math.absf {1} : {t}
{n37} = arith.minimumf {n35}, {n36} : {t}
{n38} = arith.maximumf {n35}, {n36} : {t}
{n39} = arith.divf {n37}, {n38} : {t}
""" + _ATAN_CORE.replace("{A}", "{n39}").replace("{R}", "{n40}") + """
{n41} = arith.constant 1.5707963267948966 : {t}
{n42} = arith.subf {n41}, {n40} : {t}
{n43} = arith.cmpf ogt, {n35}, {n36} : {t}
{n44} = arith.select {n43}, {n42}, {n40} : {t}
{n45} = arith.constant 3.141592653589793 : {t}
{n46} = arith.subf {n45}, {n44} : {t}
{n47} = arith.constant 0.0 : {t}
{n48} = arith.cmpf olt, {1}, {n47} : {t}
{x0} = arith.select {n48}, {n46}, {n44} : {t}"""  # _ATAN_CORE's names are {n0}..{n34}
    return _ATAN2.replace("{x0} = math.atan2 {0}, {1} : {t}", _renamed(head, _ATAN2), 1)


ATAN2 = elementwise("atan2", 2, lambda k, attrs: atan2_template(attrs.get("dst_bits", 32)),
                    silent_ref(np.arctan2), kinds="f")


def log_body(k: str, attrs: Mapping) -> str:
    """math.log; on complex numbers log|z| + i atan2(im z, re z), as C99's clog: atan2 at
    C's values (complex.log takes IREE's: log(0) had a NaN imaginary part, log(-1 - 0j) +pi)
    and |z| infinite where a part is, NaN or not."""
    if k == "f":
        return "{r} = math.log {0} : {t}"
    t = complex_part(attrs["dst_bits"])
    template = atan2_template(attrs["dst_bits"] // 2)
    shift = lambda m: f"{{x{int(m.group(1)) + 4}}}"  # noqa: E731 (x0..x3 are this body's)
    atan2 = re.sub(r"\{x(\d+)\}", shift, template).replace("{0}", "{x1}").replace(
        "{1}", "{x0}").replace("{r}", "{x3}").replace("{t}", t)
    last = max(int(i) for i in re.findall(r"\{x(\d+)\}", template))
    x = [f"{{x{5 + last + i}}}" for i in range(10)]  # past atan2's own
    return f"""{{x0}} = complex.re {{0}} : {{t}}
{{x1}} = complex.im {{0}} : {{t}}
{x[0]} = complex.abs {{0}} : {{t}}
{atan2}
{x[1]} = math.absf {{x0}} : {t}
{x[2]} = math.absf {{x1}} : {t}
{x[3]} = arith.maxnumf {x[1]}, {x[2]} : {t}
{x[4]} = arith.constant 1.0 : {t}
{x[5]} = arith.constant 0.0 : {t}
{x[6]} = arith.divf {x[4]}, {x[5]} : {t}
{x[7]} = arith.cmpf oeq, {x[3]}, {x[6]} : {t}
{x[8]} = arith.select {x[7]}, {x[6]}, {x[0]} : {t}
{x[9]} = math.log {x[8]} : {t}
{{r}} = complex.create {x[9]}, {{x3}} : {{t}}"""


class _Parts:
    """Lines of a complex body: temporaries {x0}..., and real bodies inlined."""

    def __init__(self, t: str):
        self.t, self.lines, self.n = t, [], 0

    def let(self, expr: str) -> str:
        name = f"{{x{self.n}}}"
        self.n += 1
        self.lines.append(f"{name} = {expr}")
        return name

    def const(self, value: str) -> str:
        return self.let(f"arith.constant {value} : {self.t}")

    def inline(self, template: str, *args: str) -> str:
        """A body `template` of `args`, its names renamed past these (its {t} left as it is)."""
        offset = self.n
        self.n += 1 + max((int(i) for i in re.findall(r"\{x(\d+)\}", template)), default=-1)
        result = f"{{x{self.n}}}"
        self.n += 1
        text = re.sub(r"\{x(\d+)\}", lambda m: f"{{x{offset + int(m.group(1))}}}", template)
        for i, arg in enumerate(args):
            text = text.replace(f"{{{i}}}", arg)
        self.lines += text.replace("{r}", result).splitlines()
        return result

    def real(self, body: Callable[[str, Mapping], str], *args: str) -> str:
        """`body` (a float row's) of `args`, in this body's part type."""
        bits = 64 if self.t == "f64" else 32
        return self.inline(body("f", {"dst_bits": bits}).replace("{t}", self.t), *args)

    def op(self, name: str, *args: str) -> str:
        return self.let(f"arith.{name} {', '.join(args)} : {self.t}")


def _csqrt(b: _Parts, z: str, c: str) -> str:
    """C99's csqrt of `z` (a complex of type `c`), its lines added to `b`; the name of the
    result. For finite z other than 0, w = sqrt((|x| + |z|) / 2) and the other part |y| / 2w,
    so no part cancels (complex.sqrt lost the small one: sqrt(-4
    - 1e-30j) had a real part of 0, sqrt(-1.8e121 + 5e-124j) one of 2.6e44), the parts
    scaled by a power of 2 where that sum would overflow or underflow. Infinities, NaNs and
    zeros take complex.sqrt's values, in the right half-plane with y's sign (it gave sqrt(-1
    + 0j) a real part of -0, and sqrt(-1 - 0j) +1j)."""
    let, t = b.let, b.t
    f64 = t == "f64"
    consts = {"big": ("0x7FD0000000000000", "0x7E800000"),  # 2^1022, 2^126: |x| + |z| overflows
              "small": ("0x0170000000000000", "0x0D800000"),  # 2^-1000, 2^-100: it underflows
              "up": ("0x5FF0000000000000", "0x5F800000"),  # 2^512, 2^64
              "down": ("0x2FF0000000000000", "0x2F800000"),  # 2^-256, 2^-32
              "inf": ("0x7FF0000000000000", "0x7F800000"),
              "one": ("1.0", "1.0"), "half": ("0.5", "0.5"), "quarter": ("0.25", "0.25"),
              "two": ("2.0", "2.0"), "zero": ("0.0", "0.0")}
    k = {name: b.const(v[0] if f64 else v[1]) for name, v in consts.items()}
    x, y = let(f"complex.re {z} : {c}"), let(f"complex.im {z} : {c}")
    ax, ay = let(f"math.absf {x} : {t}"), let(f"math.absf {y} : {t}")
    m = let(f"arith.maximumf {ax}, {ay} : {t}")
    is_big = let(f"arith.cmpf oge, {m}, {k['big']} : {t}")
    is_small = let(f"arith.cmpf olt, {m}, {k['small']} : {t}")
    scaled = let(f"arith.ori {is_big}, {is_small} : i1")
    s_in = let(f"arith.select {is_small}, {k['up']}, {k['quarter']} : {t}")
    s_in = let(f"arith.select {scaled}, {s_in}, {k['one']} : {t}")
    s_out = let(f"arith.select {is_small}, {k['down']}, {k['two']} : {t}")
    s_out = let(f"arith.select {scaled}, {s_out}, {k['one']} : {t}")
    sx, sy = let(f"arith.mulf {ax}, {s_in} : {t}"), let(f"arith.mulf {ay}, {s_in} : {t}")
    scaled_z = let(f"complex.create {sx}, {sy} : {c}")
    h = let(f"complex.abs {scaled_z} : {c}")
    w = let(f"arith.addf {sx}, {h} : {t}")
    w = let(f"arith.mulf {w}, {k['half']} : {t}")
    w = let(f"math.sqrt {w} : {t}")
    d = let(f"arith.mulf {w}, {k['two']} : {t}")
    d = let(f"arith.divf {sy}, {d} : {t}")
    neg = let(f"arith.cmpf olt, {x}, {k['zero']} : {t}")
    re = let(f"arith.select {neg}, {d}, {w} : {t}")
    re = let(f"arith.mulf {re}, {s_out} : {t}")
    im = let(f"arith.select {neg}, {w}, {d} : {t}")
    im = let(f"arith.mulf {im}, {s_out} : {t}")
    im = let(f"math.copysign {im}, {y} : {t}")
    old = let(f"complex.sqrt {z} : {c}")
    old_re = let(f"complex.re {old} : {c}")
    old_re = let(f"math.absf {old_re} : {t}")
    old_im = let(f"complex.im {old} : {c}")
    old_im = let(f"math.copysign {old_im}, {y} : {t}")
    finite = let(f"arith.cmpf olt, {m}, {k['inf']} : {t}")
    nonzero = let(f"arith.cmpf ogt, {m}, {k['zero']} : {t}")
    ordinary = let(f"arith.andi {finite}, {nonzero} : i1")
    re = let(f"arith.select {ordinary}, {re}, {old_re} : {t}")
    im = let(f"arith.select {ordinary}, {im}, {old_im} : {t}")
    return let(f"complex.create {re}, {im} : {c}")


def sqrt_body(k: str, attrs: Mapping) -> str:
    """math.sqrt; on complex numbers C99's csqrt (`_csqrt`)."""
    if k == "f":
        return "{r} = math.sqrt {0} : {t}"
    b = _Parts(complex_part(attrs["dst_bits"]))
    root = _csqrt(b, "{0}", "{t}")
    return "\n".join([*b.lines[:-1], "{r}" + b.lines[-1][len(root):]])


def rsqrt_body(k: str, attrs: Mapping) -> str:
    """math.rsqrt; on complex numbers 1 / csqrt(z) (complex.rsqrt took the other side of the
    branch cut where Im z is -0, and lost small parts as complex.sqrt did)."""
    if k == "f":
        return "{r} = math.rsqrt {0} : {t}"
    b = _Parts(complex_part(attrs["dst_bits"]))
    root = _csqrt(b, "{0}", "{t}")
    one = b.let(f"complex.constant [1.0 : {b.t}, 0.0 : {b.t}] : {{t}}")
    return "\n".join([*b.lines, f"{{r}} = complex.div {one}, {root} : {{t}}"])


# ---------------------------------------------------------------- complex functions from parts
# MLIR's complex lowerings evaluate float32 math.sin/cos/sinh as IREE expands them and e^y -
# e^-y, so the smaller part of a result was lost: exp(6.5e-5 - 9.34e-6j) had an imaginary
# part of -9.250e-6 for -9.339e-6, tan(-1.19e-6 + 1.41e-6j) a real part of -1.116e-6 for
# -1.186e-6. These bodies compose Ember's accurate real bodies instead (finite z; infinities
# and NaNs keep complex.fn's values).


def _math_body(fn: str) -> Callable[[str, Mapping], str]:
    return lambda k, attrs: f"{{r}} = math.{fn} {{0}} : {{t}}"


SIN_BODY = libm_in_float64(keeping_signed_zero(trig_body("sin")), "sin")
COS_BODY = libm_in_float64(trig_body("cos"), "cos")
TAN_BODY = libm_in_float64(keeping_signed_zero(trig_body("tan")), "tan")
EXPM1_BODY = kahan_in_float64(keeping_signed_zero("{r} = math.expm1 {0} : {t}"))
_EXP, _COSH = _math_body("exp"), _math_body("cosh")


def _from_parts(fn: str, parts: Callable[[_Parts, str, str], tuple[str, str]]
                ) -> Callable[[str, Mapping], str]:
    """A complex body whose parts `parts(b, x, y)` computes from z's (finite z), and
    complex.`fn`'s value elsewhere."""

    def body(k: str, attrs: Mapping) -> str:
        b = _Parts(complex_part(attrs["dst_bits"]))
        x, y = b.let("complex.re {0} : {t}"), b.let("complex.im {0} : {t}")
        re_, im = parts(b, x, y)
        inf = b.const("0x7FF0000000000000" if b.t == "f64" else "0x7F800000")
        ax, ay = b.let(f"math.absf {x} : {b.t}"), b.let(f"math.absf {y} : {b.t}")
        finite = b.let(f"arith.andi {b.op('cmpf olt,', ax, inf)}, {b.op('cmpf olt,', ay, inf)}"
                       " : i1")
        old = b.let(f"complex.{fn} {{0}} : {{t}}")
        re_ = b.let(f"arith.select {finite}, {re_}, {b.let(f'complex.re {old} : {{t}}')} "
                    f": {b.t}")
        im = b.let(f"arith.select {finite}, {im}, {b.let(f'complex.im {old} : {{t}}')} "
                   f": {b.t}")
        return "\n".join([*b.lines, f"{{r}} = complex.create {re_}, {im} : {{t}}"])

    return body


def _exp_parts(b: _Parts, x: str, y: str) -> tuple[str, str]:
    """e^x cos y + i e^x sin y; where e^x overflows, (h cos y) h with h = e^(x/2)."""
    cos_y, sin_y = b.real(COS_BODY, y), b.real(SIN_BODY, y)
    e = b.real(_EXP, x)
    h = b.real(_EXP, b.op("mulf", x, b.const("0.5")))
    big = b.op("cmpf ogt,", x, b.const("709.0" if b.t == "f64" else "88.0"))
    parts = []
    for trig in (cos_y, sin_y):
        halves = b.op("mulf", b.op("mulf", h, trig), h)
        parts.append(b.let(f"arith.select {big}, {halves}, {b.op('mulf', e, trig)} : {b.t}"))
    return parts[0], parts[1]


def _sin_parts(b: _Parts, x: str, y: str) -> tuple[str, str]:
    """sin x cosh y + i cos x sinh y."""
    return (b.op("mulf", b.real(SIN_BODY, x), b.real(_COSH, y)),
            b.op("mulf", b.real(COS_BODY, x), b.real(_sinh_body, y)))


def _cos_parts(b: _Parts, x: str, y: str) -> tuple[str, str]:
    """cos x cosh y - i sin x sinh y."""
    minus = b.let(f"arith.negf {b.real(SIN_BODY, x)} : {b.t}")
    return (b.op("mulf", b.real(COS_BODY, x), b.real(_COSH, y)),
            b.op("mulf", minus, b.real(_sinh_body, y)))


def _tanh_parts(b: _Parts, x: str, y: str) -> tuple[str, str]:
    """Kahan's: t = tan y, beta = 1 + t^2, s = sinh x, rho = sqrt(1 + s^2): (beta rho s + i t)
    / (1 + beta s^2); where |x| is large (tanh x is 1 in the width), sign(x) + i 4 sin y cos y
    e^(-2|x|)."""
    one = b.const("1.0")
    t, s = b.real(TAN_BODY, y), b.real(_sinh_body, x)
    beta = b.op("addf", one, b.op("mulf", t, t))
    s2 = b.op("mulf", s, s)
    rho = b.let(f"math.sqrt {b.op('addf', one, s2)} : {b.t}")
    denom = b.op("addf", one, b.op("mulf", beta, s2))
    re_ = b.op("divf", b.op("mulf", b.op("mulf", beta, rho), s), denom)
    im = b.op("divf", t, denom)
    ax = b.let(f"math.absf {x} : {b.t}")
    large = b.op("cmpf ogt,", ax, b.const("22.0" if b.t == "f64" else "9.0"))
    sign = b.let(f"math.copysign {one}, {x} : {b.t}")
    tail = b.real(_EXP, b.op("mulf", ax, b.const("-2.0")))
    four_sc = b.op("mulf", b.op("mulf", b.real(SIN_BODY, y), b.real(COS_BODY, y)), b.const("4.0"))
    return (b.let(f"arith.select {large}, {sign}, {re_} : {b.t}"),
            b.let(f"arith.select {large}, {b.op('mulf', four_sc, tail)}, {im} : {b.t}"))


def _tan_parts(b: _Parts, x: str, y: str) -> tuple[str, str]:
    """tan z = -i tanh(iz): tanh(-y + ix) = a + ib gives b - ia."""
    a, bb = _tanh_parts(b, b.let(f"arith.negf {y} : {b.t}"), x)
    return bb, b.let(f"arith.negf {a} : {b.t}")


def _expm1_parts(b: _Parts, x: str, y: str) -> tuple[str, str]:
    """expm1(x) cos y - 2 sin^2(y/2) + i e^x sin y."""
    half = b.real(SIN_BODY, b.op("mulf", y, b.const("0.5")))
    versine = b.op("mulf", b.op("mulf", half, half), b.const("2.0"))
    re_ = b.op("subf", b.op("mulf", b.real(EXPM1_BODY, x), b.real(COS_BODY, y)), versine)
    return re_, b.op("mulf", b.real(_EXP, x), b.real(SIN_BODY, y))


def pow_complex_body(attrs: Mapping) -> str:
    """x ** y for complex x and y: e^(y log x) from Ember's accurate bodies, log x as the
    complex log's (log_body: its atan2 keeps the sign of a zero, the side of the negative
    real axis C99's clog takes) and e^w as the complex exp's (_exp_parts). MLIR's
    complex.pow took cos and sin of the phase as IREE expands them: (4.69 + 3.06j) **
    (7 - 6j) was 1.9e-5 off (relative; its imaginary part 0.3%), JAX's 4.4e-7; and its
    atan2 lost the zero's sign ((-2 - 0j) ** 0.5 was +1.414j, not -1.414j). Where x is 0 or
    either is not finite, complex.pow's values (on the mirror images where Im x has its sign
    bit set, x^y = conj(conj(x)^conj(y)), so the side of the axis holds there too)."""
    b = _Parts(complex_part(attrs["dst_bits"]))
    t, bits = b.t, attrs["dst_bits"] // 2
    x, y = b.let("complex.re {0} : {t}"), b.let("complex.im {0} : {t}")
    c, d = b.let("complex.re {1} : {t}"), b.let("complex.im {1} : {t}")
    log_x = b.inline(log_body("c", attrs), "{0}")
    log_r, theta = b.let(f"complex.re {log_x} : {{t}}"), b.let(f"complex.im {log_x} : {{t}}")
    re_w = b.op("subf", b.op("mulf", c, log_r), b.op("mulf", d, theta))
    im_w = b.op("addf", b.op("mulf", d, log_r), b.op("mulf", c, theta))
    re_, im = _exp_parts(b, re_w, im_w)
    # elsewhere: complex.pow, mirrored where Im x's sign bit is set
    zero, inf = b.const("0.0"), b.const("0x7FF0000000000000" if bits == 64 else "0x7F800000")
    mirrored = b.let(f"arith.cmpi slt, {b.let(f'arith.bitcast {y} : {t} to i{bits}')}, "
                     f"{b.let(f'arith.constant 0 : i{bits}')} : i{bits}")

    def flip(v: str) -> str:
        return b.let(f"arith.select {mirrored}, {b.let(f'arith.negf {v} : {t}')}, {v} : {t}")

    old = b.let(f"complex.pow {b.let(f'complex.create {x}, {flip(y)} : {{t}}')}, "
                f"{b.let(f'complex.create {c}, {flip(d)} : {{t}}')} : {{t}}")
    old_re, old_im = b.let(f"complex.re {old} : {{t}}"), flip(b.let(f"complex.im {old} : {{t}}"))
    finite = [b.op("cmpf olt,", b.let(f"math.absf {v} : {t}"), inf) for v in (x, y, c, d)]
    nonzero = b.let(f"arith.ori {b.op('cmpf une,', x, zero)}, {b.op('cmpf une,', y, zero)} : i1")
    ordinary = nonzero
    for f in finite:
        ordinary = b.let(f"arith.andi {ordinary}, {f} : i1")
    re_ = b.let(f"arith.select {ordinary}, {re_}, {old_re} : {t}")
    im = b.let(f"arith.select {ordinary}, {im}, {old_im} : {t}")
    return "\n".join([*b.lines, f"{{r}} = complex.create {re_}, {im} : {{t}}"])


def _or_parts(real: Callable[[str, Mapping], str], fn: str, parts) -> Callable[[str, Mapping],
                                                                            str]:
    complex_body = _from_parts(fn, parts)
    return lambda k, attrs: complex_body(k, attrs) if k == "c" else real(k, attrs)


EXP = elementwise("exp", 1, _or_parts(_EXP, "exp", _exp_parts), silent_ref(np.exp), kinds="fc")
SIN = elementwise("sin", 1, _or_parts(SIN_BODY, "sin", _sin_parts), silent_ref(np.sin),
                  kinds="fc")
COS = elementwise("cos", 1, _or_parts(COS_BODY, "cos", _cos_parts), silent_ref(np.cos),
                  kinds="fc")
TANH = elementwise("tanh", 1, _or_parts(_math_body("tanh"), "tanh", _tanh_parts),
                   silent_ref(np.tanh), kinds="fc")
# tan = sin / cos after the same argument reduction as sin and cos (IREE's own tan is off by
# 3e-5, relative, at 353).
TAN = elementwise("tan", 1, _or_parts(TAN_BODY, "tan", _tan_parts), silent_ref(np.tan),
                  kinds="fc")
EXPM1 = elementwise("expm1", 1, _or_parts(EXPM1_BODY, "expm1", _expm1_parts),
                    silent_ref(np.expm1), kinds="fc")


COPYSIGN = elementwise("copysign", 2, {"f": "{r} = math.copysign {0}, {1} : {t}"},
                       np.copysign, kinds="f")
# x - x is 0 exactly when x is finite (inf - inf and nan - nan are nan).
IS_FINITE = elementwise("is_finite", 1, {"f": "{x0} = arith.subf {0}, {0} : {t}\n"
                                              "{x1} = arith.constant 0.0 : {t}\n"
                                              "{r} = arith.cmpf oeq, {x0}, {x1} : {t}"},
                        silent_ref(np.isfinite), kinds="f", result_dtype=np.bool_)
XOR = elementwise("xor", 2, {"i": "{r} = arith.xori {0}, {1} : {t}"}, np.bitwise_xor,
                  kinds="bui", commutative=True)


def _erf(x: np.ndarray) -> np.ndarray:
    return np.vectorize(math.erf, otypes=[x.dtype])(x) if x.size else x.copy()


# ---------------------------------------------------------------- integer division and shifts
# XLA's rules where C's are undefined: x / 0 is -1 (all ones), x % 0 is x, INT_MIN / -1 is
# INT_MIN and INT_MIN % -1 is 0. Division runs on a safe divisor, then the rules select.

_GUARDS_I = """{x0} = arith.constant 0 : {t}
{x1} = arith.constant 1 : {t}
{x2} = arith.constant -1 : {t}
{x3} = arith.cmpi eq, {1}, {x0} : {t}
{x4} = arith.cmpi eq, {1}, {x2} : {t}
{x5} = arith.ori {x3}, {x4} : i1
{x6} = arith.select {x5}, {x1}, {1} : {t}
"""
_DIV_I = _GUARDS_I + """{x7} = arith.divsi {0}, {x6} : {t}
{x8} = arith.subi {x0}, {0} : {t}
{x9} = arith.select {x4}, {x8}, {x7} : {t}
{r} = arith.select {x3}, {x2}, {x9} : {t}"""
_REM_I = _GUARDS_I + """{x7} = arith.remsi {0}, {x6} : {t}
{x9} = arith.select {x4}, {x0}, {x7} : {t}
{r} = arith.select {x3}, {0}, {x9} : {t}"""
_GUARDS_U = """{x0} = arith.constant 0 : {t}
{x1} = arith.constant 1 : {t}
{x2} = arith.constant -1 : {t}
{x3} = arith.cmpi eq, {1}, {x0} : {t}
{x6} = arith.select {x3}, {x1}, {1} : {t}
"""
_DIV_U = _GUARDS_U + """{x7} = arith.divui {0}, {x6} : {t}
{r} = arith.select {x3}, {x2}, {x7} : {t}"""
_REM_U = _GUARDS_U + """{x7} = arith.remui {0}, {x6} : {t}
{r} = arith.select {x3}, {0}, {x7} : {t}"""


def _int_div_ref(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Truncating division (lax.div) with XLA's zero-divisor rules."""
    with np.errstate(all="ignore"):
        if kind(a.dtype) in "fc":
            return np.true_divide(a, b).astype(a.dtype)
        safe = np.where(b == 0, 1, b)
        if kind(a.dtype) == "i":
            safe = np.where(b == -1, 1, safe).astype(a.dtype)
            q = a // safe
            q = np.where((a % safe != 0) & ((a < 0) != (safe < 0)), q + 1, q)
            q = np.where(b == -1, np.negative(a), q)
        else:
            q = a // safe
        return np.where(b == 0, np.array(-1).astype(a.dtype), q).astype(a.dtype)


def _rem_ref(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """C's remainder (sign of the dividend, lax.rem) with XLA's zero-divisor rules."""
    with np.errstate(all="ignore"):
        if kind(a.dtype) == "f":
            return np.fmod(a, b)
        safe = np.where((b == 0) | ((b == -1) if kind(a.dtype) == "i" else False), 1, b)
        r = np.fmod(a, safe).astype(a.dtype)
        return np.where(b == 0, a, r).astype(a.dtype)


def _div_body(k: str, attrs: Mapping) -> str:
    if k == "f":
        return "{r} = arith.divf {0}, {1} : {t}"
    if k == "c":
        return "{r} = complex.div {0}, {1} : {t}"
    return _DIV_U if k == "u" else _DIV_I


def _rem_body(k: str, attrs: Mapping) -> str:
    if k == "f":
        return "{r} = arith.remf {0}, {1} : {t}"
    return _REM_U if k == "u" else _REM_I


DIV = elementwise("div", 2, _div_body, _int_div_ref, kinds="uifc",
                  doc="Division; integers truncate, x / 0 is -1 and INT_MIN / -1 is INT_MIN.")
REM = elementwise("rem", 2, _rem_body, _rem_ref, kinds="uif",
                  doc="Remainder with the dividend's sign (C's fmod); x % 0 is x for integers.")


def _shift_body(direction: str) -> Callable[[str, Mapping], str]:
    """Shifts by at least the bit width (or by a negative amount) give 0, or the sign for
    an arithmetic right shift, as in XLA; LLVM leaves them undefined."""

    def body(k: str, attrs: Mapping) -> str:
        bits = attrs["dst_bits"]
        head = (f"{{x0}} = arith.constant {bits} : {{t}}\n"
                "{x1} = arith.cmpi ult, {1}, {x0} : {t}\n"
                "{x2} = arith.constant 0 : {t}\n")
        if direction == "right" and k == "i":
            return (head + f"{{x3}} = arith.constant {bits - 1} : {{t}}\n"
                    "{x4} = arith.select {x1}, {1}, {x3} : {t}\n"
                    "{r} = arith.shrsi {0}, {x4} : {t}")
        op = "shli" if direction == "left" else "shrui"
        return head + f"{{x3}} = arith.{op} {{0}}, {{1}} : {{t}}\n" \
            "{r} = arith.select {x1}, {x3}, {x2} : {t}"

    return body


def _shift_ref(direction: str) -> Callable:
    def ref(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        bits = a.dtype.itemsize * 8
        wide = b.astype(np.int64)
        if b.dtype.kind == "u":
            wide = b.astype(np.uint64).astype(np.int64) if bits < 64 else wide
        ok = (wide >= 0) & (wide < bits)
        amount = np.where(ok, wide, 0).astype(a.dtype)
        if direction == "left":
            return np.where(ok, np.left_shift(a, amount), 0).astype(a.dtype)
        shifted = np.right_shift(a, amount)
        if kind(a.dtype) == "i":
            return np.where(ok, shifted, np.where(a < 0, -1, 0)).astype(a.dtype)
        return np.where(ok, shifted, 0).astype(a.dtype)

    return ref


SHIFT_LEFT = elementwise("shift_left", 2, _shift_body("left"), _shift_ref("left"),
                         kinds="ui")
SHIFT_RIGHT = elementwise("shift_right", 2, _shift_body("right"), _shift_ref("right"),
                          kinds="ui", doc="Arithmetic for signed, logical for unsigned ints.")

__all__ = ["DIV", "REM", "XOR", "SHIFT_LEFT", "SHIFT_RIGHT", "EXP2", "EXPM1",
           "LOG1P", "LOG2", "TAN", "ASIN", "ACOS", "ATAN", "SINH", "COSH", "ASINH",
           "ACOSH", "ATANH", "ERF", "CBRT", "ROUND", "TRUNC", "ATAN2", "COPYSIGN",
           "IS_FINITE"]
