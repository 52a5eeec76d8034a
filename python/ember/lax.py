"""Structured control flow: `cond`, `switch`, `while_loop`, `fori_loop`, `scan`.

Under a trace, each branch or loop body is traced once into a region of an `ember.if` /
`ember.case` / `ember.while` / `ember.for` op (lowered to `scf.if` / `scf.if` chains /
`scf.while` / `scf.for`);
regions see the enclosing function's values, so closures need nothing special. Outside a
trace they run as plain Python.
"""

from __future__ import annotations

import builtins
import enum
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy as np

from ember import numpy as enp, tree_util
from ember._src import dtypes
from ember._src.core import Regions, current_trace, defined_at
from ember._src.dispatch import bind
from ember.dialect import ops
from ember.dialect.types import ShapedArray, kind
from ember.numpy import _base


def _describe(tree: Any, avals: list[ShapedArray]) -> str:
    return str(tree_util.tree_unflatten(tree, [a.str_short() for a in avals]))


def _trace_region(regions: Regions, i: int, fun: Callable, what: str, tree: Any = None,
                  avals: Sequence[ShapedArray] = (), call: Callable | None = None
                  ) -> tuple[Any, list[ShapedArray]]:
    """Trace `fun` into region `i`: on fresh arguments of `avals` (a loop carry, unflattened
    with `tree`), or through `call()` (a branch, which sees the enclosing values)."""
    names = [f"{what} argument {j}" for j in range(len(avals))]
    with regions.trace(i, getattr(fun, "__name__", what), defined_at(fun), avals, names) as trace:
        out = call() if call is not None else fun(tree_util.tree_unflatten(tree, trace.args))
        leaves, out_tree = tree_util.tree_flatten(out)
        out_avals = trace.finish(leaves)
    return out_tree, out_avals


def _same_types(a: list[ShapedArray], b: list[ShapedArray]) -> bool:
    return [(x.shape, x.dtype) for x in a] == [(y.shape, y.dtype) for y in b]


def _branches(op, selector: Any, branches: Sequence[Callable], operands: tuple,
              requirement: str, labels: Sequence[str]) -> Any:
    """Trace every branch into a region of `op` (ember.if or ember.case); all must agree."""
    regions = Regions(current_trace(), len(branches))
    try:
        traced = [_trace_region(regions, i, fun, labels[i], call=lambda f=fun: f(*operands))
                  for i, fun in enumerate(branches)]
        tree0, avals0 = traced[0]
        for i, (tree, avals) in enumerate(traced[1:], start=1):
            if tree != tree0 or not _same_types(avals, avals0):
                raise TypeError(
                    f"{requirement} to return the same pytree of shapes and dtypes, got "
                    f"{labels[0]}: {_describe(tree0, avals0)} and {labels[i]}: "
                    f"{_describe(tree, avals)}")
        if not avals0:
            raise TypeError(f"{requirement} to return at least one array")
        results = tuple(ShapedArray(a.shape, a.dtype, all(t[1][j].weak_type for t in traced))
                        for j, a in enumerate(avals0))
        outs = bind(op, selector, regions=regions, results=results)
    finally:
        regions.discard()
    return tree_util.tree_unflatten(tree0, outs)


def cond(pred: Any, true_fun: Callable, false_fun: Callable, *operands: Any) -> Any:
    """`true_fun(*operands)` if `pred` else `false_fun(*operands)`; both are traced."""
    if current_trace() is None:
        return true_fun(*operands) if bool(np.asarray(pred)) else false_fun(*operands)
    pred = enp.asarray(pred)
    if pred.shape != () or pred.dtype.kind not in "biu":
        raise TypeError(f"cond requires a scalar bool or integer predicate, got "
                        f"{pred.aval.str_short()}")
    return _branches(ops.IF, pred, (true_fun, false_fun), operands,
                     "cond requires true_fun and false_fun", ("true_fun", "false_fun"))


def switch(index: Any, branches: Sequence[Callable], *operands: Any) -> Any:
    """`branches[index](*operands)`, with `index` clamped to the valid range (as JAX does)."""
    if not branches:
        raise ValueError("switch requires at least one branch, got none")
    if current_trace() is None:
        i = builtins.min(builtins.max(int(np.asarray(index)), 0), len(branches) - 1)
        return branches[i](*operands)
    index = enp.asarray(index)
    if index.shape != () or index.dtype.kind not in "iu":
        raise TypeError(f"switch requires a scalar integer index, got {index.aval.str_short()}")
    if len(branches) == 1:
        return branches[0](*operands)
    index = enp.minimum(enp.maximum(index, 0), len(branches) - 1).astype(np.int32)
    return _branches(ops.CASE, index, tuple(branches), operands,
                     "switch requires every branch",
                     [f"branches[{i}]" for i in range(len(branches))])


def while_loop(cond_fun: Callable, body_fun: Callable, init_val: Any) -> Any:
    """`while cond_fun(val): val = body_fun(val)`, compiled as one loop (scf.while)."""
    if current_trace() is None:
        val = init_val
        while bool(np.asarray(cond_fun(val))):
            val = body_fun(val)
        return val
    leaves, tree = tree_util.tree_flatten(init_val)
    leaves = [enp.asarray(x) for x in leaves]
    avals = [x.aval for x in leaves]
    regions = Regions(current_trace(), 2)
    try:
        _, cond_avals = _trace_region(regions, 0, cond_fun, "cond_fun", tree, avals)
        if len(cond_avals) != 1 or cond_avals[0].shape != () or \
                cond_avals[0].dtype != np.bool_:
            raise TypeError(f"while_loop requires cond_fun to return a boolean scalar, got "
                            f"{[a.str_short() for a in cond_avals]}")
        body_tree, body_avals = _trace_region(regions, 1, body_fun, "body_fun", tree, avals)
        if body_tree != tree or not _same_types(body_avals, avals):
            raise TypeError(
                f"while_loop requires body_fun to return the carry's pytree of shapes and "
                f"dtypes, got carry {_describe(tree, avals)} but body_fun returned "
                f"{_describe(body_tree, body_avals)}")
        outs = bind(ops.WHILE, *leaves, regions=regions, results=tuple(avals))
    finally:
        regions.discard()
    return tree_util.tree_unflatten(tree, outs)


def fori_loop(lower: Any, upper: Any, body_fun: Callable, init_val: Any) -> Any:
    """`for i in range(lower, upper): val = body_fun(i, val)`; bounds may be traced. Compiled
    as one counted loop (scf.for), its carries updated in place."""
    if current_trace() is None:
        val = init_val
        for i in range(int(np.asarray(lower)), int(np.asarray(upper))):
            val = body_fun(i, val)
        return val
    lower, upper = _bounds(lower, upper)
    leaves, tree = tree_util.tree_flatten(init_val)
    leaves = [enp.asarray(x) for x in leaves]
    avals = [x.aval for x in leaves]
    in_tree = tree_util.tree_structure((0, tree_util.tree_unflatten(tree, avals)))
    regions = Regions(current_trace(), 1)
    try:
        body_tree, body_avals = _trace_region(regions, 0, lambda args: body_fun(*args),
                                              "body_fun", in_tree, [lower.aval, *avals])
        if body_tree != tree or not _same_types(body_avals, avals):
            raise TypeError(
                f"fori_loop requires body_fun to return the carry's pytree of shapes and "
                f"dtypes, got carry {_describe(tree, avals)} but body_fun returned "
                f"{_describe(body_tree, body_avals)}")
        outs = bind(ops.FOR, lower, upper, *leaves, regions=regions, results=tuple(avals))
    finally:
        regions.discard()
    return tree_util.tree_unflatten(tree, outs)


def _bounds(lower: Any, upper: Any) -> tuple[Any, Any]:
    """Scalar integer bounds of one dtype (Python ints take the other bound's dtype)."""
    bounds = [enp.asarray(b) for b in (lower, upper)]
    for name, b in zip(("lower", "upper"), bounds, strict=True):
        if b.shape != () or b.dtype.kind not in "iu":
            raise TypeError(f"fori_loop requires scalar integer bounds, got {name} "
                            f"{b.aval.str_short()}")
    dtype = enp.result_type(*bounds)  # JAX's promotion: a Python int takes the other's dtype
    return tuple(b.astype(dtype) for b in bounds)


def _leading_length(xs_leaves: list[Any], length: int | None) -> int:
    lengths = {int(np.shape(x)[0]) for x in xs_leaves if np.ndim(x) > 0}
    if any(np.ndim(x) == 0 for x in xs_leaves):
        raise ValueError("scan requires every leaf of xs to have a leading axis, got a scalar")
    if length is not None:
        lengths.add(int(length))
    if len(lengths) != 1:
        raise ValueError(f"scan requires xs leaves (and length) to agree on one leading axis "
                         f"length, got {sorted(lengths) or 'no xs and no length'}")
    return lengths.pop()


def scan(f: Callable, init: Any, xs: Any = None, length: int | None = None,
         reverse: bool = False, unroll: int = 1) -> tuple[Any, Any]:
    """`carry, y = f(carry, x)` over the leading axis of `xs`; returns the final carry and the
    stacked ys. Compiled as one loop; `unroll` is accepted for JAX compatibility (IREE runs
    the loop either way)."""
    xs_leaves, xs_tree = tree_util.tree_flatten(xs)
    n = _leading_length(xs_leaves, length)
    if current_trace() is None:
        return _scan_eagerly(f, init, xs_leaves, xs_tree, n, reverse)
    xs_arrays = [enp.asarray(x) for x in xs_leaves]
    x_avals = [ShapedArray(a.shape[1:], a.dtype, a.weak_type) for a in xs_arrays]
    carry_leaves, carry_tree = tree_util.tree_flatten(init)
    carry_avals = [enp.asarray(c).aval for c in carry_leaves]
    y_avals, y_tree = _scan_output_types(f, carry_tree, carry_avals, xs_tree, x_avals)
    ys_init = [enp.zeros((n, *a.shape), a.dtype) for a in y_avals]
    if n == 0:  # nothing to slice: the carry as given, and empty stacks
        return init, tree_util.tree_unflatten(y_tree, ys_init)
    if n == 1:  # one step, no loop (IREE 3.13 crashes compiling a 1-trip slicing loop)
        x = [enp.reshape(a, a.shape[1:]) for a in xs_arrays]
        carry, y = f(init, tree_util.tree_unflatten(xs_tree, x))
        ys = [enp.reshape(enp.asarray(v).astype(a.dtype), (1, *a.shape))
              for v, a in zip(tree_util.tree_leaves(y), y_avals, strict=True)]
        return carry, tree_util.tree_unflatten(y_tree, ys)
    zero = np.int32(0)

    def body(i, state):
        carry, ys = state
        index = (n - 1) - i if reverse else i
        x = [enp.reshape(bind(ops.DYNAMIC_SLICE, a, index, *[zero] * (a.ndim - 1),
                              sizes=(1, *a.shape[1:])), a.shape[1:]) for a in xs_arrays]
        carry, y = f(carry, tree_util.tree_unflatten(xs_tree, x))
        ys = [bind(ops.DYNAMIC_UPDATE_SLICE, buf,
                   enp.reshape(enp.asarray(v).astype(buf.dtype), (1, *buf.shape[1:])), index,
                   *[zero] * (buf.ndim - 1), strides=(1,) * buf.ndim)
              for buf, v in zip(ys, tree_util.tree_leaves(y), strict=True)]
        return carry, ys

    carry, ys = fori_loop(0, n, body, (init, ys_init))
    return carry, tree_util.tree_unflatten(y_tree, ys)


def _scan_output_types(f, carry_tree, carry_avals, xs_tree, x_avals):
    """The ys' types, from tracing `f` once into a region that is then thrown away."""
    in_tree = tree_util.tree_structure((tree_util.tree_unflatten(carry_tree, carry_avals),
                                        tree_util.tree_unflatten(xs_tree, x_avals)))
    probe = Regions(current_trace(), 1)
    try:
        out_tree, out_avals = _trace_region(probe, 0, lambda args: f(*args), "f", in_tree,
                                            carry_avals + x_avals)
    finally:
        probe.discard()
    carry_out, y_out = tree_util.tree_unflatten(out_tree, out_avals)
    carry_out_leaves, carry_out_tree = tree_util.tree_flatten(carry_out)
    if carry_out_tree != carry_tree or not _same_types(carry_out_leaves, carry_avals):
        raise TypeError(f"scan requires f to return the carry's pytree of shapes and dtypes, "
                        f"got carry {_describe(carry_tree, carry_avals)} but f returned "
                        f"{_describe(carry_out_tree, carry_out_leaves)}")
    y_leaves, y_tree = tree_util.tree_flatten(y_out)
    return y_leaves, y_tree


def _scan_eagerly(f, init, xs_leaves, xs_tree, n, reverse):
    carry, ys = init, []
    host = [np.asarray(x) for x in xs_leaves]
    for i in (reversed(range(n)) if reverse else range(n)):
        carry, y = f(carry, tree_util.tree_unflatten(xs_tree, [h[i] for h in host]))
        ys.append([np.asarray(v) for v in tree_util.tree_leaves(y)])
    if reverse:
        ys.reverse()
    if not ys:
        return carry, None
    y_tree = tree_util.tree_structure(y)
    stacked = [enp.asarray(np.stack(parts)) for parts in zip(*ys, strict=True)]
    return carry, tree_util.tree_unflatten(y_tree, stacked)


# ----------------------------------------------------------------------------- sorting

def sort(operand: Any, dimension: int = -1, is_stable: bool = True, num_keys: int = 1) -> Any:
    """Sort one array, or several of one shape by their first `num_keys` (lexicographic):
    stable, NaN last. A sequence in, a tuple out."""
    single = not isinstance(operand, (tuple, list))
    arrays = [enp.asarray(operand)] if single else [enp.asarray(o) for o in operand]
    if not arrays or len({a.shape for a in arrays}) != 1:
        raise TypeError(f"sort requires one or more operands of one shape, got "
                        f"{[a.aval.str_short() for a in arrays]}")
    if not 1 <= num_keys <= len(arrays):
        raise ValueError(f"sort requires 1 <= num_keys <= {len(arrays)} (the operand count), "
                         f"got num_keys={num_keys}")
    axis = dimension % arrays[0].ndim if arrays[0].ndim else 0
    if single:
        return enp.sort(arrays[0], axis=axis)
    if num_keys == 1 and len(arrays) == 2:  # the payload moves with the keys: one sort
        return enp.sort(arrays[0], axis=axis), bind(ops.SORT, *arrays, dimension=axis)
    order = None  # stable sorts from the last key to the first: lexicographic order
    for key in reversed(arrays[:num_keys]):
        key = key if order is None else enp.take_along_axis(key, order, axis)
        step = enp.argsort(key, axis=axis)
        order = step if order is None else enp.take_along_axis(order, step, axis)
    return tuple(enp.take_along_axis(a, order, axis) for a in arrays)


def sort_key_val(keys: Any, values: Any, dimension: int = -1,
                 is_stable: bool = True) -> tuple[Any, Any]:
    """`keys` sorted along `dimension`, and `values` permuted with them."""
    return sort((keys, values), dimension=dimension, num_keys=1)


@_base._eager_with_statics  # eagerly one module (its block path is a dozen ops)
def top_k(operand: Any, k: int) -> tuple[Any, Any]:
    """The k largest along the last axis, descending (NaN first, ties by lower index), and
    their int32 indices."""
    x = enp.asarray(operand)
    if x.ndim == 0 or not isinstance(k, (int, np.integer)) or not 0 <= k <= x.shape[-1]:
        raise ValueError(f"top_k requires an operand of rank >= 1 and 0 <= k <= its last "
                         f"dimension, got {x.aval.str_short()} and k={k!r}")
    order = _top_k_indices(x, int(k))
    return enp.take_along_axis(x, order, -1), order


_TOP_K_BLOCK = 64


def _top_k_indices(x: Any, k: int) -> Any:
    """Only blocks whose maximum ranks among the k largest block maxima can hold one of the k
    largest elements (ties go to lower indices, and blocks are index ranges): one pass over
    the data for the block maxima, the same search on those, then a sort of k blocks.
    Sorting everything (a full sort of 1M floats: 0.19 s) is left to short rows."""
    n, b = x.shape[-1], _TOP_K_BLOCK
    if n <= 16 * b or 4 * k * b > n:
        return enp.argsort(x, axis=-1, descending=True, dtype=np.int32)[..., :k]
    blocks = -(-n // b)
    if blocks * b != n:  # padded with keys that lose every tie (they come last)
        low = (-np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).min
               if x.dtype.kind in "iu" else False)
        pad = [(0, 0)] * (x.ndim - 1) + [(0, blocks * b - n)]
        x = enp.pad(x, pad, constant_values=np.asarray(low, x.dtype))
    tiles = enp.reshape(x, (*x.shape[:-1], blocks, b))
    chosen = enp.sort(_top_k_indices(enp.max(tiles, axis=-1), k), axis=-1)  # in index order
    candidates = enp.take_along_axis(tiles, chosen[..., None], axis=-2)
    positions = chosen[..., None] * b + enp.arange(b, dtype=np.int32)
    flat = (*x.shape[:-1], k * b)
    order = enp.argsort(enp.reshape(candidates, flat), axis=-1, descending=True,
                        dtype=np.int32)[..., :k]
    return enp.take_along_axis(enp.reshape(positions, flat), order, -1)


# ----------------------------------------------------------------------------- elementwise
# `lax`'s names for ops ember.numpy spells differently; no implicit promotion beyond weak
# Python scalars, as in JAX's lax.

def rsqrt(x: Any) -> Any:
    return _base._unary_float(ops.RSQRT)(x)


def erf(x: Any) -> Any:
    return _base._unary_float(ops.ERF)(x)


def div(x: Any, y: Any) -> Any:
    """Truncating division for integers (x / 0 is -1), true division for floats."""
    return _base._divide(False)(x, y)


def rem(x: Any, y: Any) -> Any:
    """The remainder with the dividend's sign (C's %); x % 0 is x for integers."""
    return _base._nary(ops.REM)(x, y)


def select(pred: Any, on_true: Any, on_false: Any) -> Any:
    return enp.where(pred, on_true, on_false)


def shift_left(x: Any, y: Any) -> Any:
    return enp.left_shift(x, y)


def dynamic_slice(operand: Any, start_indices: Sequence[Any], slice_sizes: Sequence[int],
                  *, allow_negative_indices: bool | Sequence[bool] = True) -> Any:
    """The window of `slice_sizes` at `start_indices` (traced or not; negative ones count
    from the end unless `allow_negative_indices` is False), the starts clamped so that the
    window fits, as in JAX."""
    x = enp.asarray(operand)
    starts = _starts("dynamic_slice", x, start_indices, allow_negative_indices)
    return bind(ops.DYNAMIC_SLICE, x, *starts, sizes=tuple(int(n) for n in slice_sizes))


def dynamic_update_slice(operand: Any, update: Any, start_indices: Sequence[Any], *,
                         allow_negative_indices: bool | Sequence[bool] = True) -> Any:
    """`operand` with `update` written at `start_indices` (negative ones from the end,
    clamped to fit, as in JAX)."""
    x = enp.asarray(operand)
    update = enp.asarray(update).astype(x.dtype)
    starts = _starts("dynamic_update_slice", x, start_indices, allow_negative_indices)
    return bind(ops.DYNAMIC_UPDATE_SLICE, x, update, *starts, strides=(1,) * x.ndim)


def _starts(name: str, x: Any, start_indices: Sequence[Any],
            negative: bool | Sequence[bool]) -> list[Any]:
    if len(start_indices) != x.ndim:
        raise ValueError(f"{name} requires one start index per dimension ({x.ndim}), got "
                         f"{len(start_indices)}")
    negative = [negative] * x.ndim if isinstance(negative, bool) else list(negative)
    starts = [enp.asarray(s) for s in start_indices]
    for s in starts:
        if s.shape or s.dtype.kind not in "iu":
            raise TypeError(f"{name} requires scalar integer start indices, got "
                            f"{s.dtype}{list(s.shape)}")
    return [enp.where(s < 0, s + n, s).astype(np.int32) if wrap and s.dtype.kind == "i"
            else s.astype(np.int32)
            for s, n, wrap in zip(starts, x.shape, negative, strict=True)]


def stop_gradient(x: Any) -> Any:
    """`x`, through which no derivative flows (a pytree of arrays)."""
    return tree_util.tree_map(lambda leaf: bind(ops.STOP_GRADIENT, enp.asarray(leaf)), x)


def shift_right_logical(x: Any, y: Any) -> Any:
    """Shift in zeros whatever the sign (a shift by the width or more gives 0)."""
    x = enp.asarray(x)
    if x.dtype.kind != "i":
        return enp.right_shift(x, y)
    unsigned = np.dtype(f"uint{x.dtype.itemsize * 8}")
    out = enp.right_shift(bitcast_convert_type(x, unsigned), enp.asarray(y).astype(unsigned))
    return bitcast_convert_type(out, x.dtype)


def shift_right_arithmetic(x: Any, y: Any) -> Any:
    return enp.right_shift(x, y)


def bitcast_convert_type(operand: Any, new_dtype: Any) -> Any:
    """The same bits read as `new_dtype`, which must have the operand's width."""
    x = enp.asarray(operand)
    dtype = np.dtype(new_dtype)
    if dtype.itemsize != x.dtype.itemsize or np.bool_ in (dtype, x.dtype):
        raise TypeError(f"bitcast_convert_type requires a non-bool dtype of the operand's "
                        f"width ({x.dtype}: {x.dtype.itemsize * 8} bits), got {dtype}")
    return x if dtype == x.dtype else bind(ops.BITCAST_CONVERT, x, dtype=dtype)


# Giles, "Approximating the erfinv function" (GPU Computing Gems, 2011), single precision:
# the polynomial XLA evaluates for float32 erf_inv, so samples built on it match JAX's.
_ERF_INV_CENTRAL = (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06,
                    0.00021858087, -0.00125372503, -0.00417768164, 0.246640727, 1.50140941)
_ERF_INV_TAIL = (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844,
                 0.00573950773, -0.0076224613, 0.00943887047, 1.00167406, 2.83297682)


def erf_inv(x: Any) -> Any:
    """The inverse of erf on (-1, 1); +-inf at +-1, NaN outside. float32 (and narrower
    floats, computed in float32); float64 is not supported yet."""
    x = enp.asarray(x)
    dtype = x.dtype if x.dtype.kind == "f" else np.dtype(np.float32)
    if dtype == np.float64:
        raise NotImplementedError("erf_inv of float64 is not supported yet (float32 is); "
                                  "convert with .astype(jnp.float32)")
    return _erf_inv32(x.astype(np.float32)).astype(dtype)


@_base._eager_as_one_module
def _erf_inv32(x: Any) -> Any:
    w = enp.negative(enp.log1p(enp.negative(x * x)))
    central = w < 5.0
    w = enp.where(central, w - 2.5, enp.sqrt(w) - 3.0)
    p = enp.where(central, np.float32(_ERF_INV_CENTRAL[0]), np.float32(_ERF_INV_TAIL[0]))
    for c, t in zip(_ERF_INV_CENTRAL[1:], _ERF_INV_TAIL[1:], strict=True):
        p = enp.where(central, np.float32(c), np.float32(t)) + p * w
    return enp.where(enp.abs(x) == 1.0, x * np.float32(np.inf), p * x)


exp2, expm1, log1p, tan, atan2, cbrt = (enp.exp2, enp.expm1, enp.log1p, enp.tan, enp.arctan2,
                                        enp.cbrt)


# ----------------------------------------------------------------------------- JAX's names
# The rest of lax's public elementwise and structural ops, with JAX's signatures. Binary ops
# take one dtype (Python scalars are weak and adapt): lax does not promote.

def _one_dtype(name: str, *xs: Any) -> list[Any]:
    arrays = [x for x in xs if not isinstance(x, (int, float, bool, builtins.complex))]
    kinds = {np.dtype(enp.asarray(x).dtype) for x in arrays}
    if len(kinds) > 1:
        raise TypeError(f"lax.{name} requires arguments of one dtype, got "
                        f"{', '.join(sorted(str(k) for k in kinds))}: lax does not promote; "
                        f"convert one with lax.convert_element_type")
    return list(xs)


def _binary(name: str, fn: Callable) -> Callable:
    def op(x: Any, y: Any) -> Any:
        return fn(*_one_dtype(name, x, y))

    op.__name__ = op.__qualname__ = name
    return op


add, sub, mul = _binary("add", enp.add), _binary("sub", enp.subtract), \
    _binary("mul", enp.multiply)
max, min = _binary("max", enp.maximum), _binary("min", enp.minimum)  # noqa: A001
pow = _binary("pow", enp.power)  # noqa: A001
bitwise_and, bitwise_or, bitwise_xor = (_binary("bitwise_and", enp.bitwise_and),
                                        _binary("bitwise_or", enp.bitwise_or),
                                        _binary("bitwise_xor", enp.bitwise_xor))
eq, ne = _binary("eq", enp.equal), _binary("ne", enp.not_equal)
lt, le = _binary("lt", enp.less), _binary("le", enp.less_equal)
gt, ge = _binary("gt", enp.greater), _binary("ge", enp.greater_equal)
(abs, acos, asin, atan, ceil, floor, cos, cosh, sin, sinh, tanh, exp, log, sqrt, sign, neg,  # noqa: A001
 is_finite, square, bitwise_not, conj, real, imag) = (
    enp.abs, enp.arccos, enp.arcsin, enp.arctan, enp.ceil, enp.floor, enp.cos, enp.cosh,
    enp.sin, enp.sinh, enp.tanh, enp.exp, enp.log, enp.sqrt, enp.sign, enp.negative,
    enp.isfinite, enp.square, enp.bitwise_not, enp.conj, enp.real, enp.imag)


def complex(x: Any, y: Any) -> Any:  # noqa: A001
    """x + i y for float32 or float64 x and y of one dtype (JAX's lax.complex)."""
    x, y = (enp.asarray(v) for v in _one_dtype("complex", x, y))
    dtype, _ = dtypes.promote(dtypes.dtype_and_weak(x), dtypes.dtype_and_weak(y))
    if kind(dtype) != "f":
        raise TypeError(f"lax.complex requires float arguments, got {x.dtype} and {y.dtype}")
    shape = enp.broadcast_shapes(x.shape, y.shape)
    x, y = (enp.broadcast_to(v.astype(dtype), shape) for v in (x, y))
    return bind(ops.COMPLEX, x, y)


def logistic(x: Any) -> Any:
    x = enp.asarray(x)
    return 1 / (1 + enp.exp(-x))


@_base._eager_as_one_module
def erfc(x: Any) -> Any:
    """1 - erf(x) below 1; from 1 up, where that difference would lose every digit (erfc(4)
    was 0 in float32), Laplace's continued fraction erfc(a) = e^(-a^2) / (sqrt(pi) K),
    K = a + (1/2) / (a + (2/2) / (a + ...)), 40 terms in float32 and 200 in float64 (it
    converges slowest at 1), with e^(-a^2) split as e^(-h^2) e^(-(a-h)(a+h)) for h = a in
    sixteenths (h^2 is exact), so that a^2's rounding is not magnified. float16 and
    bfloat16 are computed in float32."""
    dtype = erf(x).dtype  # the float type x computes in (erf's is unused: not compiled)
    x = enp.asarray(x).astype(np.float32 if dtype.itemsize < 4 else dtype)
    a = enp.clip(x, 1, 30)  # erfc(30) underflows: infinity too
    k = a
    for n in range(200 if dtype == np.float64 else 40, 0, -1):
        k = a + (n / 2) / k
    h = enp.trunc(a * 16) / 16
    tail = enp.exp(-h * h) * enp.exp(-(a - h) * (a + h)) / (k * float(np.sqrt(np.pi)))
    return enp.where(a > 1, tail, 1 - enp.asarray(erf(x))).astype(dtype)


def round(x: Any, rounding_method: int = 0) -> Any:  # noqa: A001
    """To the nearest integer, halves away from zero (method 0, JAX's default) or to even
    (method 1)."""
    if int(rounding_method) == 1:
        return enp.round(x)
    x = enp.asarray(x)
    whole = enp.trunc(x)
    return enp.where(enp.abs(x - whole) >= 0.5, whole + enp.sign(x), whole)


def integer_pow(x: Any, y: int) -> Any:
    """x ** y for a static integer y (products; reciprocal for negative y)."""
    if isinstance(y, bool) or not isinstance(y, (int, np.integer)):
        raise TypeError(f"lax.integer_pow requires a static integer exponent, got {y!r}")
    return enp.power(x, int(y))


def clamp(min: Any, x: Any, max: Any) -> Any:  # noqa: A002 - JAX's argument names
    return enp.minimum(enp.maximum(x, min), max)


def select_n(which: Any, *cases: Any) -> Any:
    """cases[which] elementwise: `which` boolean (two cases) or an integer index."""
    if not cases:
        raise ValueError("lax.select_n requires at least one case, got none")
    which = enp.asarray(which)
    out = cases[-1]
    for i in range(len(cases) - 2, -1, -1):
        pick = enp.logical_not(which) if which.dtype == np.bool_ else which == i
        out = enp.where(pick, cases[i], out)
    return out


def convert_element_type(operand: Any, new_dtype: Any) -> Any:
    return enp.asarray(operand).astype(new_dtype)


def population_count(x: Any) -> Any:
    """The number of set bits of each integer."""
    x = enp.asarray(x)
    if x.dtype.kind not in "iu":
        raise TypeError(f"lax.population_count requires integers, got {x.dtype}")
    count = enp.zeros_like(x)
    for bit in range(x.dtype.itemsize * 8):
        count = count + enp.bitwise_and(shift_right_logical(x, bit), 1)
    return count


def nextafter(x1: Any, x2: Any) -> Any:
    """The next float after x1 towards x2 (floats of one dtype)."""
    x1, x2 = _base._promote_only(*_one_dtype("nextafter", x1, x2))
    if x1.dtype.kind != "f":
        raise TypeError(f"lax.nextafter requires floats, got {x1.dtype}")
    return enp.nextafter(x1, x2)


def iota(dtype: Any, size: int) -> Any:
    return enp.arange(size, dtype=dtype)


def full(shape: Sequence[int], fill_value: Any, dtype: Any = None) -> Any:
    return enp.full(shape, fill_value, dtype)


def full_like(x: Any, fill_value: Any, dtype: Any = None, shape: Any = None) -> Any:
    x = enp.asarray(x)
    return enp.full(x.shape if shape is None else shape, fill_value,
                    x.dtype if dtype is None else dtype)


def broadcast(operand: Any, sizes: Sequence[int]) -> Any:
    """operand with dims of `sizes` added in front."""
    operand = enp.asarray(operand)
    return enp.broadcast_to(operand, (*sizes, *operand.shape))


def broadcast_in_dim(operand: Any, shape: Sequence[int],
                     broadcast_dimensions: Sequence[int]) -> Any:
    """operand's dim i becomes dim broadcast_dimensions[i] of `shape` (size 1 or equal)."""
    operand = enp.asarray(operand)
    dims = tuple(broadcast_dimensions)
    if len(dims) != operand.ndim or list(dims) != sorted(set(dims)) or any(
            not 0 <= d < len(shape) or operand.shape[i] not in (1, shape[d])
            for i, d in enumerate(dims)):
        raise ValueError(f"lax.broadcast_in_dim requires one increasing dimension of {shape} "
                         f"per operand dim, each of size 1 or equal, got {dims} for shape "
                         f"{tuple(operand.shape)}")
    view = enp.reshape(operand, tuple(operand.shape[dims.index(d)] if d in dims else 1
                                      for d in range(len(shape))))
    return enp.broadcast_to(view, tuple(shape))


def reshape(operand: Any, new_sizes: Sequence[int], dimensions: Sequence[int] | None = None):
    operand = enp.asarray(operand)
    if dimensions is not None:
        operand = enp.transpose(operand, tuple(dimensions))
    return enp.reshape(operand, tuple(new_sizes))


def transpose(operand: Any, permutation: Sequence[int]) -> Any:
    return enp.transpose(operand, tuple(permutation))


def rev(operand: Any, dimensions: Sequence[int]) -> Any:
    return enp.flip(operand, tuple(dimensions)) if dimensions else enp.asarray(operand)


def squeeze(array: Any, dimensions: Sequence[int]) -> Any:
    return enp.squeeze(array, tuple(dimensions)) if dimensions else enp.asarray(array)


def expand_dims(array: Any, dimensions: Sequence[int]) -> Any:
    out = enp.asarray(array)
    for d in sorted(d % (out.ndim + len(dimensions)) for d in dimensions):
        out = enp.expand_dims(out, d)
    return out


def concatenate(operands: Sequence[Any], dimension: int) -> Any:
    return enp.concatenate(_one_dtype("concatenate", *operands), axis=dimension)


def collapse(operand: Any, start_dimension: int, stop_dimension: int | None = None) -> Any:
    operand = enp.asarray(operand)
    stop = operand.ndim if stop_dimension is None else stop_dimension
    shape = operand.shape
    size = int(np.prod(shape[start_dimension:stop]))
    return enp.reshape(operand, (*shape[:start_dimension], size, *shape[stop:]))


def slice(operand: Any, start_indices: Sequence[int], limit_indices: Sequence[int],  # noqa: A001
          strides: Sequence[int] | None = None) -> Any:
    operand = enp.asarray(operand)
    strides = strides or (1,) * operand.ndim
    return operand[tuple(builtins.slice(s, e, k) for s, e, k
                         in zip(start_indices, limit_indices, strides, strict=True))]


def slice_in_dim(operand: Any, start_index: int | None, limit_index: int | None,
                 stride: int = 1, axis: int = 0) -> Any:
    operand = enp.asarray(operand)
    index = [builtins.slice(None)] * operand.ndim
    index[axis] = builtins.slice(start_index, limit_index, stride)
    return operand[tuple(index)]


def index_in_dim(operand: Any, index: int, axis: int = 0, keepdims: bool = True) -> Any:
    out = slice_in_dim(operand, index, index + 1 if index != -1 else None, 1, axis)
    return out if keepdims else enp.squeeze(out, axis)


def dynamic_slice_in_dim(operand: Any, start_index: Any, slice_size: int,
                         axis: int = 0) -> Any:
    operand = enp.asarray(operand)
    starts = [0] * operand.ndim
    starts[axis] = start_index
    sizes = list(operand.shape)
    sizes[axis] = slice_size
    return dynamic_slice(operand, starts, sizes)


def dynamic_index_in_dim(operand: Any, index: Any, axis: int = 0,
                         keepdims: bool = True) -> Any:
    out = dynamic_slice_in_dim(operand, index, 1, axis)
    return out if keepdims else enp.squeeze(out, axis)


def dynamic_update_slice_in_dim(operand: Any, update: Any, start_index: Any,
                                axis: int) -> Any:
    operand = enp.asarray(operand)
    starts = [0] * operand.ndim
    starts[axis] = start_index
    return dynamic_update_slice(operand, update, starts)


def dynamic_update_index_in_dim(operand: Any, update: Any, index: Any, axis: int) -> Any:
    operand, update = enp.asarray(operand), enp.asarray(update)
    if update.ndim == operand.ndim - 1:
        update = enp.expand_dims(update, axis)
    return dynamic_update_slice_in_dim(operand, update, index, axis)


def pad(operand: Any, padding_value: Any, padding_config: Sequence[tuple[int, int, int]]):
    """Each dim padded by (low, high, interior): `interior` values between elements, low and
    high at the ends (negative ones crop), as lax.pad."""
    operand = enp.asarray(operand)
    if len(padding_config) != operand.ndim:
        raise ValueError(f"lax.pad requires one (low, high, interior) per dim of "
                         f"{tuple(operand.shape)}, got {padding_config}")
    out = operand
    for axis, (lo, hi, interior) in enumerate(padding_config):
        if interior < 0:
            raise ValueError(f"lax.pad requires interior padding >= 0, got {interior}")
        n = out.shape[axis]
        if interior and n > 1:
            shape = list(out.shape)
            shape[axis] = n + (n - 1) * interior
            index = [builtins.slice(None)] * out.ndim
            index[axis] = builtins.slice(None, None, interior + 1)
            out = enp.full(tuple(shape), padding_value, out.dtype).at[tuple(index)].set(out)
        widths = [(0, 0)] * out.ndim
        widths[axis] = (builtins.max(lo, 0), builtins.max(hi, 0))
        out = enp.pad(out, widths, constant_values=padding_value)
        index = [builtins.slice(None)] * out.ndim
        index[axis] = builtins.slice(-lo if lo < 0 else None, hi if hi < 0 else None)
        out = out[tuple(index)]
    return out


def dot(lhs: Any, rhs: Any, precision: Any = None, preferred_element_type: Any = None) -> Any:
    lhs, rhs = _one_dtype("dot", lhs, rhs)
    out = enp.dot(lhs, rhs)
    return out if preferred_element_type is None else out.astype(preferred_element_type)


def dot_general(lhs: Any, rhs: Any, dimension_numbers: Any, precision: Any = None,
                preferred_element_type: Any = None) -> Any:
    """JAX's dot_general: ((lhs_contracting, rhs_contracting), (lhs_batch, rhs_batch));
    the result's dims are the batch dims, then lhs's free dims, then rhs's."""
    (lc, rc), (lb, rb) = dimension_numbers
    lhs, rhs = (enp.asarray(x) for x in _one_dtype("dot_general", lhs, rhs))
    letters = iter("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
    lnames, rnames = [None] * lhs.ndim, [None] * rhs.ndim
    for i, j in zip(lb, rb, strict=True):
        lnames[i] = rnames[j] = next(letters)
    for i, j in zip(lc, rc, strict=True):
        lnames[i] = rnames[j] = next(letters)
    lnames = [n or next(letters) for n in lnames]
    rnames = [n or next(letters) for n in rnames]
    out = [lnames[i] for i in lb] + [n for i, n in enumerate(lnames) if i not in (*lb, *lc)] + \
        [n for i, n in enumerate(rnames) if i not in (*rb, *rc)]
    result = enp.einsum(f"{''.join(lnames)},{''.join(rnames)}->{''.join(out)}", lhs, rhs)
    return result if preferred_element_type is None else result.astype(preferred_element_type)


def _reducer(name: str, fn: Callable) -> Callable:
    def reduce_op(operand: Any, axes: Sequence[int]) -> Any:
        return fn(operand, axis=tuple(axes))

    reduce_op.__name__ = reduce_op.__qualname__ = name
    return reduce_op


reduce_sum, reduce_prod = _reducer("reduce_sum", enp.sum), _reducer("reduce_prod", enp.prod)
reduce_max, reduce_min = _reducer("reduce_max", enp.max), _reducer("reduce_min", enp.min)
reduce_and, reduce_or = _reducer("reduce_and", enp.all), _reducer("reduce_or", enp.any)


def argmax(operand: Any, axis: int, index_dtype: Any) -> Any:
    return enp.argmax(operand, axis=axis).astype(index_dtype)


def argmin(operand: Any, axis: int, index_dtype: Any) -> Any:
    return enp.argmin(operand, axis=axis).astype(index_dtype)


def _running(name: str, fn: Callable) -> Callable:
    def running(operand: Any, axis: int = 0, reverse: bool = False) -> Any:
        operand = enp.asarray(operand)
        if not reverse:
            return fn(operand, axis=axis)
        return enp.flip(fn(enp.flip(operand, axis), axis=axis), axis)

    running.__name__ = running.__qualname__ = name
    return running


cumsum, cumprod = _running("cumsum", enp.cumsum), _running("cumprod", enp.cumprod)
cummax, cummin = _running("cummax", enp.cummax), _running("cummin", enp.cummin)


def cumlogsumexp(operand: Any, axis: int = 0, reverse: bool = False) -> Any:
    """log(cumsum(exp(x))): a scan of logaddexp along `axis`, so that no element is shifted
    by a maximum it has not seen (one shift for all lost x = [-1000, 0]'s first value)."""
    operand = enp.asarray(operand)
    moved = enp.moveaxis(operand, axis, 0)

    def step(total, x):
        total = enp.logaddexp(total, x)
        return total, total

    start = enp.full(moved.shape[1:], -np.inf, moved.dtype)
    return enp.moveaxis(scan(step, start, moved, reverse=reverse)[1], 0, axis)


def map(f: Callable, xs: Any) -> Any:  # noqa: A001 - JAX's name
    """f applied to each leading slice of xs (a pytree), one after another, as a scan."""
    return scan(lambda carry, x: (carry, f(x)), None, xs)[1]


_WINDOW_COMBINERS = {"add": enp.add, "mul": enp.multiply, "max": enp.maximum,
                     "min": enp.minimum}


def _padding_pairs(padding: Any, shape: Sequence[int], window: Sequence[int],
                   strides: Sequence[int], dilation: Sequence[int]) -> list[tuple[int, int]]:
    if isinstance(padding, str):
        if padding.upper() == "VALID":
            return [(0, 0)] * len(shape)
        if padding.upper() == "SAME":
            pairs = []
            for n, w, s, d in zip(shape, window, strides, dilation, strict=True):
                extent = (w - 1) * d + 1
                out = -(-n // s)
                total = builtins.max((out - 1) * s + extent - n, 0)
                pairs.append((total // 2, total - total // 2))
            return pairs
        raise ValueError(f"padding requires 'VALID', 'SAME' or (low, high) pairs, got "
                         f"{padding!r}")
    return [tuple(p) for p in padding]


def reduce_window(operand: Any, init_value: Any, computation: Callable,
                  window_dimensions: Sequence[int], window_strides: Sequence[int] | None = None,
                  padding: Any = "VALID", base_dilation: Sequence[int] | None = None,
                  window_dilation: Sequence[int] | None = None) -> Any:
    """Pooling: `computation` (lax.add, lax.mul, lax.max or lax.min) over every window,
    starting from init_value (padding is init_value too). Each of the window's offsets is
    one strided slice of the padded operand, and the slices combine elementwise (one fused
    kernel)."""
    combine = _WINDOW_COMBINERS.get(getattr(computation, "__name__", ""))
    if combine is None:
        raise NotImplementedError(f"lax.reduce_window supports lax.add, lax.mul, lax.max and "
                                  f"lax.min as computation, got {computation!r}")
    if base_dilation is not None and any(d != 1 for d in base_dilation):
        raise NotImplementedError("lax.reduce_window does not support base_dilation yet")
    x = enp.asarray(operand)
    window = tuple(window_dimensions)
    strides = tuple(window_strides or (1,) * x.ndim)
    dilation = tuple(window_dilation or (1,) * x.ndim)
    if not len(window) == len(strides) == len(dilation) == x.ndim:
        raise ValueError(f"lax.reduce_window requires one window size, stride and dilation "
                         f"per dim of {tuple(x.shape)}, got {window}, {strides}, {dilation}")
    pairs = _padding_pairs(padding, x.shape, window, strides, dilation)
    init = enp.asarray(init_value).astype(x.dtype)
    x = pad(x, init, [(lo, hi, 0) for lo, hi in pairs])
    out_shape = [(n - ((w - 1) * d + 1)) // s + 1
                 for n, w, s, d in zip(x.shape, window, strides, dilation, strict=True)]
    result = None
    for offset in np.ndindex(*window):
        starts = [o * d for o, d in zip(offset, dilation, strict=True)]
        part = x[tuple(builtins.slice(b, b + (m - 1) * s + 1, s)
                       for b, m, s in zip(starts, out_shape, strides, strict=True))]
        result = part if result is None else combine(result, part)
    return combine(result, init)


def _conv_specs(dimension_numbers: Any, ndim: int) -> tuple[str, str, str]:
    if dimension_numbers is None:
        spatial = "HWDXYZ"[:ndim - 2] if ndim - 2 <= 3 else None
        if spatial is None:
            raise NotImplementedError("lax.conv_general_dilated supports 1 to 3 spatial dims")
        return "NC" + spatial, "OI" + spatial, "NC" + spatial
    if all(isinstance(s, str) for s in dimension_numbers):
        lhs, rhs, out = dimension_numbers
        return lhs, rhs, out
    raise NotImplementedError("lax.conv_general_dilated takes dimension_numbers as three "
                              "strings ('NHWC', 'HWIO', 'NHWC') or None")


def conv_general_dilated(lhs: Any, rhs: Any, window_strides: Sequence[int], padding: Any,
                         lhs_dilation: Sequence[int] | None = None,
                         rhs_dilation: Sequence[int] | None = None,
                         dimension_numbers: Any = None, feature_group_count: int = 1,
                         batch_group_count: int = 1, precision: Any = None,
                         preferred_element_type: Any = None) -> Any:
    """A convolution as JAX's: one matmul of the (strided, dilated) input slice against the
    kernel's (in, out) matrix per kernel offset, summed (a 3x3 kernel is 9 matmuls)."""
    lhs, rhs = (enp.asarray(x) for x in _one_dtype("conv_general_dilated", lhs, rhs))
    if feature_group_count != 1 or batch_group_count != 1:
        raise NotImplementedError("lax.conv_general_dilated supports feature_group_count=1 "
                                  "and batch_group_count=1 only")
    if lhs_dilation is not None and any(d != 1 for d in lhs_dilation):
        raise NotImplementedError("lax.conv_general_dilated does not support lhs_dilation "
                                  "(transposed convolutions) yet")
    lhs_spec, rhs_spec, out_spec = _conv_specs(dimension_numbers, lhs.ndim)
    spatial = [c for c in lhs_spec if c not in "NC"]
    # the input as (N, spatial..., C), the kernel as (spatial..., I, O)
    x = enp.transpose(lhs, [lhs_spec.index(c) for c in ("N", *spatial, "C")])
    k = enp.transpose(rhs, [rhs_spec.index(c) for c in (*spatial, "I", "O")])
    window = k.shape[:len(spatial)]
    strides = tuple(window_strides)
    dilation = tuple(rhs_dilation or (1,) * len(spatial))
    if x.shape[-1] != k.shape[-2]:
        raise ValueError(f"lax.conv_general_dilated requires the input's {x.shape[-1]} "
                         f"features to be the kernel's input features, got {k.shape[-2]}")
    pairs = _padding_pairs(padding, x.shape[1:-1], window, strides, dilation)
    x = enp.pad(x, [(0, 0), *pairs, (0, 0)])
    out_sizes = [(n - ((w - 1) * d + 1)) // s + 1
                 for n, w, s, d in zip(x.shape[1:-1], window, strides, dilation, strict=True)]
    out = None
    for offset in np.ndindex(*window):
        starts = [o * d for o, d in zip(offset, dilation, strict=True)]
        part = x[(builtins.slice(None), *(builtins.slice(b, b + (m - 1) * s + 1, s)
                                        for b, m, s in zip(starts, out_sizes, strides,
                                                           strict=True)))]
        term = enp.matmul(part, k[offset])
        out = term if out is None else enp.add(out, term)
    out = enp.transpose(out, [("N", *spatial, "C").index(c) for c in out_spec])
    return out if preferred_element_type is None else out.astype(preferred_element_type)


# -- gather and scatter with XLA's dimension numbers, as lax.gather / lax.scatter*. Each is
# one flat gather (or scatter) of the operand: every output (update) element's position in
# the operand is computed from iotas and the start indices, so derivatives and batching
# come from the ops they are made of.

class GatherDimensionNumbers(NamedTuple):
    """How a gather's output dims map to the operand's and the start indices' (XLA's)."""

    offset_dims: tuple[int, ...]
    collapsed_slice_dims: tuple[int, ...]
    start_index_map: tuple[int, ...]
    operand_batching_dims: tuple[int, ...] = ()
    start_indices_batching_dims: tuple[int, ...] = ()


class ScatterDimensionNumbers(NamedTuple):
    """How a scatter's update dims map to the operand's and the indices' (XLA's)."""

    update_window_dims: tuple[int, ...]
    inserted_window_dims: tuple[int, ...]
    scatter_dims_to_operand_dims: tuple[int, ...]
    operand_batching_dims: tuple[int, ...] = ()
    scatter_indices_batching_dims: tuple[int, ...] = ()


class GatherScatterMode(enum.Enum):
    """Out-of-bounds windows: CLIP moves them in, FILL_OR_DROP fills a gather's with
    `fill_value` and drops a scatter's, PROMISE_IN_BOUNDS (the caller promised none) clips a
    gather's and drops a scatter's, as XLA's CPU code does. A gather's default is
    PROMISE_IN_BOUNDS, a scatter's FILL_OR_DROP (JAX's)."""

    CLIP = "clip"
    FILL_OR_DROP = "fill"
    PROMISE_IN_BOUNDS = "promise_in_bounds"

    @staticmethod
    def from_any(mode: Any) -> GatherScatterMode:
        if isinstance(mode, GatherScatterMode):
            return mode
        if mode is None or mode in ("fill", "drop"):
            return GatherScatterMode.FILL_OR_DROP
        try:
            return GatherScatterMode(mode)
        except ValueError:
            raise ValueError(f'Unknown gather mode "{mode}"') from None


def _window_positions(name: str, operand_shape: tuple[int, ...], indices: Any,
                      out_shape: tuple[int, ...], window_dims: Sequence[int],
                      window_of: Sequence[int | None], start_map: Sequence[int],
                      operand_batching: Sequence[int], indices_batching: Sequence[int],
                      sizes: Sequence[int], clip: bool) -> tuple[Any, Any]:
    """(the flat operand position of each element of `out_shape`, whether its window is in
    bounds). `window_dims`: the output dims that run along a window; `window_of[d]`: which
    of them runs along operand dim d (None: a collapsed or batching dim, size 1)."""
    i32 = np.dtype(np.int32)
    batch_dims = [p for p in range(len(out_shape)) if p not in window_dims]
    idx = enp.asarray(indices)
    if idx.dtype.kind not in "iu":
        raise TypeError(f"{name} requires integer indices, got {idx.dtype}")
    if idx.ndim != len(batch_dims) + 1 or idx.shape[-1] != len(start_map):
        raise ValueError(f"{name} requires indices of shape (*batch, {len(start_map)}) with "
                         f"{len(batch_dims)} batch dims for an output of shape {out_shape}, "
                         f"got {tuple(idx.shape)}")
    idx = idx.astype(i32)

    def spread(v: Any) -> Any:  # a value over the indices' batch dims, over the output
        return broadcast_in_dim(v, out_shape, tuple(batch_dims))

    strides = [int(np.prod(operand_shape[d + 1:], dtype=np.int64))
               for d in range(len(operand_shape))]
    flat = enp.zeros(out_shape, i32)
    inside = enp.ones(out_shape, bool)
    for d, n in enumerate(operand_shape):
        if d in start_map:
            start = spread(idx[..., start_map.index(d)])
            last = n - sizes[d]
            inside = inside & (start >= 0) & (start <= last)
            start = enp.clip(start, 0, builtins.max(last, 0))
        elif d in operand_batching:
            axis = indices_batching[operand_batching.index(d)]
            start = broadcasted_iota(i32, out_shape, batch_dims[axis])
        else:
            start = enp.zeros(out_shape, i32)
        if window_of[d] is not None:
            start = start + broadcasted_iota(i32, out_shape, window_of[d])
        flat = flat + start * strides[d]
    return flat, (None if clip else inside)


def _window_layout(operand_ndim: int, window_dims: Sequence[int], skipped: Sequence[int]
                   ) -> list[int | None]:
    """For each operand dim, the output (update) dim that runs along it: the window dims
    in order over the dims not skipped (collapsed/inserted or batching)."""
    it = iter(sorted(window_dims))
    return [None if d in skipped else next(it) for d in range(operand_ndim)]


def broadcasted_iota(dtype: Any, shape: Sequence[int], dimension: int) -> Any:
    """Counting 0, 1, ... along `dimension` of an array of `shape`."""
    return bind(ops.IOTA, dimension=int(dimension), shape=tuple(int(n) for n in shape),
                dtype=np.dtype(dtype))


def gather(operand: Any, start_indices: Any, dimension_numbers: GatherDimensionNumbers,
           slice_sizes: Sequence[int], *, unique_indices: bool = False,
           indices_are_sorted: bool = False, mode: Any = None, fill_value: Any = None) -> Any:
    """XLA's gather, as lax.gather: the index vectors are the last dim of `start_indices`."""
    x = enp.asarray(operand)
    dn = GatherDimensionNumbers(*(tuple(int(d) for d in v) for v in dimension_numbers))
    mode = GatherScatterMode.from_any("promise_in_bounds" if mode is None else mode)
    sizes = tuple(int(s) for s in slice_sizes)
    skipped = (*dn.collapsed_slice_dims, *dn.operand_batching_dims)
    if len(sizes) != x.ndim or any(not 0 <= s <= n for s, n in zip(
            sizes, x.shape, strict=True)) or any(sizes[d] != 1 for d in skipped):
        raise ValueError(f"gather requires one slice size per operand dim, within it, and 1 "
                         f"for collapsed and batching dims; got {sizes} for {x.shape}")
    idx = enp.asarray(start_indices)
    window = [sizes[d] for d in range(x.ndim) if d not in skipped]
    out_ndim = idx.ndim - 1 + len(window)
    if len(dn.offset_dims) != len(window) or any(not 0 <= d < out_ndim
                                                  for d in dn.offset_dims):
        raise ValueError(f"gather requires one offset dim per dim of the slice not collapsed "
                         f"({len(window)}) within the output's {out_ndim} dims, got "
                         f"{dn.offset_dims}")
    batch = iter(idx.shape[:-1])
    offsets = dict(zip(sorted(dn.offset_dims), window, strict=True))
    out_shape = tuple(offsets[p] if p in offsets else next(batch) for p in range(out_ndim))
    flat, inside = _window_positions(
        "gather", x.shape, idx, out_shape, dn.offset_dims,
        _window_layout(x.ndim, dn.offset_dims, skipped), dn.start_index_map,
        dn.operand_batching_dims, dn.start_indices_batching_dims, sizes,
        mode is not GatherScatterMode.FILL_OR_DROP)
    if 0 in x.shape:
        return enp.zeros(out_shape, x.dtype)
    out = bind(ops.TAKE, enp.reshape(x, (-1,)), enp.reshape(flat, (-1,)), axis=0)
    out = enp.reshape(out, out_shape)
    if inside is None:
        return out
    if fill_value is None:
        fill_value = (np.nan if x.dtype.kind in "fc" else True if x.dtype.kind == "b" else
                      np.iinfo(x.dtype).min if x.dtype.kind == "i" else np.iinfo(x.dtype).max)
    return enp.where(inside, out, enp.asarray(fill_value, x.dtype))


def _scatter(name: str, combine: str, operand: Any, scatter_indices: Any, updates: Any,
             dimension_numbers: ScatterDimensionNumbers, mode: Any) -> Any:
    x = enp.asarray(operand)
    u = enp.asarray(updates).astype(x.dtype)
    dn = ScatterDimensionNumbers(*(tuple(int(d) for d in v) for v in dimension_numbers))
    mode = GatherScatterMode.from_any(mode)
    skipped = (*dn.inserted_window_dims, *dn.operand_batching_dims)
    layout = _window_layout(x.ndim, dn.update_window_dims, skipped)
    if len(dn.update_window_dims) + len(skipped) != x.ndim:
        raise ValueError(f"{name} requires one update window dim per operand dim not "
                         f"inserted or batching ({x.ndim - len(skipped)}), got "
                         f"{dn.update_window_dims}")
    sizes = [1 if w is None else u.shape[w] for w in layout]
    flat, inside = _window_positions(
        name, x.shape, scatter_indices, tuple(u.shape), dn.update_window_dims, layout,
        dn.scatter_dims_to_operand_dims, dn.operand_batching_dims,
        dn.scatter_indices_batching_dims, sizes, mode is GatherScatterMode.CLIP)
    if inside is not None:  # dropped windows: a position past the operand is not written
        flat = enp.where(inside, flat, -1)
    out = bind(ops.SCATTER, enp.reshape(x, (-1,)), enp.reshape(flat, (-1,)),
               enp.reshape(u, (-1,)), combine=combine)
    return enp.reshape(out, x.shape)


def _scatter_op(name: str, combine: str) -> Callable:
    def op(operand: Any, scatter_indices: Any, updates: Any,
           dimension_numbers: ScatterDimensionNumbers, *, indices_are_sorted: bool = False,
           unique_indices: bool = False, mode: Any = None) -> Any:
        return _scatter(name, combine, operand, scatter_indices, updates, dimension_numbers,
                        mode)
    op.__name__ = op.__qualname__ = name
    op.__doc__ = (f"XLA's scatter combining with {combine}, as lax.{name}: the index vectors "
                  f"are the last dim of `scatter_indices`.")
    return op


scatter = _scatter_op("scatter", "set")
scatter_add = _scatter_op("scatter_add", "add")


def scatter_sub(operand: Any, scatter_indices: Any, updates: Any,
                dimension_numbers: ScatterDimensionNumbers, *, indices_are_sorted: bool = False,
                unique_indices: bool = False, mode: Any = None) -> Any:
    """XLA's scatter subtracting the updates, as lax.scatter_sub."""
    return _scatter("scatter_sub", "add", operand, scatter_indices,
                    -enp.asarray(updates).astype(enp.asarray(operand).dtype),
                    dimension_numbers, mode)
scatter_mul = _scatter_op("scatter_mul", "mul")
scatter_min = _scatter_op("scatter_min", "min")
scatter_max = _scatter_op("scatter_max", "max")
