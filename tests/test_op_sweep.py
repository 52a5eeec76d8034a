"""One sweep: every row of the op table through IREE, against its NumPy reference (and, for
the rows eager calls compute on the host, against host_eval bit for bit). A row's
drawn cases run as independent ops of one module (one compile for several cases: each case
is its own dispatch, reading only the module's arguments, so nothing fuses across them)."""

import numpy as np
import pytest
from conftest import few_examples
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

import ember
from ember._src import host_eval
from ember._src.dispatch import bind
from ember.dialect import OPS, Trait, exact as exact_rows, ops as O
from ember.dialect.opdef import OpDef, VerifyError
from ember.dialect.types import ShapedArray, kind
from helpers import assert_close

SHAPES = [(), (4,), (2, 3)]
DTYPES = {"f": np.dtype(np.float32), "i": np.dtype(np.int32), "b": np.dtype(np.bool_),
          "u": np.dtype(np.uint8), "c": np.dtype(np.complex64)}
# Ops whose float results come from approximations (IREE's polynomial expansions).
LOOSE = {O.EXP, O.LOG, O.TANH, O.SIN, O.COS, O.POW, O.SQRT, O.RSQRT, O.EXP2, O.EXPM1,
         O.LOG1P, O.LOG2, O.TAN, O.ASIN, O.ACOS, O.ATAN, O.SINH, O.COSH, O.ASINH, O.ACOSH,
         O.ATANH, O.ERF, O.CBRT, O.ATAN2, O.REDUCE_PROD, O.CUMULATIVE,
         # and LAPACK's, whose order of operations is not NumPy's
         O.SOLVE, O.SLOGDET, O.EIGH, O.TRIANGULAR_SOLVE, O.CHOLESKY, O.QR}


def values(dtype, shape, *, finite=False, small=False):
    """Random values; floats include inf/nan/-0.0 unless `finite`. Subnormals are excluded:
    compiled CPU code flushes them to zero, as XLA's does. Complex numbers are finite and
    moderate: near infinities every library's complex functions differ."""
    if kind(dtype) == "c":
        part = st.floats(-8 if small else -20, 8 if small else 20, width=32,
                         allow_subnormal=False)
        return hnp.arrays(dtype, shape, elements=st.builds(complex, part, part))
    if kind(dtype) == "f":
        bound = 256 if small else 1e4
        elements = st.floats(-bound, bound, width=32, allow_subnormal=False)
        if not (small or finite):
            elements = st.one_of(elements, st.sampled_from([np.inf, -np.inf, np.nan, -0.0]))
        return hnp.arrays(dtype, shape, elements=elements)
    if dtype == np.bool_:
        return hnp.arrays(dtype, shape)
    lo, hi = (-3, 6) if small else (np.iinfo(dtype).min // 2, np.iinfo(dtype).max // 2)
    return hnp.arrays(dtype, shape, elements=st.integers(max(lo, np.iinfo(dtype).min), hi))


def _kinds(op):
    """The dtype kinds the row accepts, asked of its own verifier."""
    accepted = []
    for k in "fiubc":
        aval = ShapedArray((), DTYPES[k])
        try:
            op.infer(*[ShapedArray((), np.dtype(np.bool_)) if op is O.SELECT and i == 0
                       else aval for i in range(len(op.operands))],
                     **({"direction": "EQ"} if op is O.COMPARE else {}))
            accepted.append(k)
        except VerifyError:
            pass
    return "".join(accepted)


@st.composite
def elementwise_case(draw, op):
    shape = draw(st.sampled_from(SHAPES))
    dtype = DTYPES[draw(st.sampled_from(_kinds(op)))]
    small = op in (O.POW, O.SHIFT_LEFT, O.SHIFT_RIGHT)
    arity = len(op.operands)
    params = {}
    if op is O.COMPARE:
        params["direction"] = draw(st.sampled_from(
            ["EQ", "NE"] if kind(dtype) == "c" else ["EQ", "NE", "LT", "LE", "GT", "GE"]))
    if op is O.SELECT:
        return [draw(hnp.arrays(np.bool_, shape)), draw(values(dtype, shape)),
                draw(values(dtype, shape))], params
    args = [draw(values(dtype, shape, small=small)) for _ in range(arity)]
    return args, params


@st.composite
def convert_case(draw):
    src = DTYPES[draw(st.sampled_from("fiubc"))]
    dst = DTYPES[draw(st.sampled_from("fiubc"))]
    shape = draw(st.sampled_from(SHAPES))
    if kind(src) in "fc" and kind(dst) in "iu":  # out-of-range float->int is undefined
        x = draw(hnp.arrays(src, shape, elements=st.floats(0, 200, width=32)))
    else:
        x = draw(values(src, shape))
    return [x], {"dtype": dst}


@st.composite
def bitcast_case(draw):
    src, dst = draw(st.sampled_from([(np.float32, np.uint32), (np.uint32, np.float32),
                                     (np.int32, np.uint32), (np.float32, np.int32),
                                     (np.int32, np.float32), (np.uint8, np.int8)]))
    shape = draw(st.sampled_from(SHAPES))
    if np.dtype(src).kind == "f":
        x = draw(values(np.dtype(src), shape))
    else:  # any bits, but not those of a NaN or a subnormal (NaN payloads may change)
        x = draw(hnp.arrays(np.dtype(src), shape, elements=st.integers(
            np.iinfo(src).min, np.iinfo(src).max)))
        if np.dtype(dst).kind == "f":
            x = np.asarray(x).view(np.float32)
            x = np.where(np.isfinite(x) & (np.abs(x) > 1e-30), x, 1.5).view(src)
    return [x], {"dtype": np.dtype(dst)}


@st.composite
def reduce_case(draw, op):
    shape = draw(st.sampled_from([(4,), (2, 3), (2, 3, 2)]))
    dtype = DTYPES[draw(st.sampled_from("fic" if op in (O.REDUCE_SUM, O.REDUCE_PROD) else "fi"))]
    axes = tuple(sorted(draw(st.sets(st.integers(0, len(shape) - 1), min_size=1))))
    return [draw(values(dtype, shape, finite=op is O.REDUCE_SUM))], {"axes": axes}


@st.composite
def broadcast_case(draw):
    shape = draw(st.sampled_from([(2, 3), (4, 2, 3)]))
    rank = draw(st.integers(0, len(shape)))
    dims = tuple(range(len(shape) - rank, len(shape)))
    src = tuple(draw(st.sampled_from([1, shape[d]])) for d in dims)
    return [draw(values(DTYPES["f"], src))], {"shape": shape, "broadcast_dimensions": dims}


@st.composite
def reshape_case(draw):
    src, dst = draw(st.sampled_from([((6,), (2, 3)), ((2, 3), (3, 2)), ((1,), ()),
                                     ((2, 3, 2), (12,)), ((), (1, 1))]))
    return [draw(values(DTYPES[draw(st.sampled_from("fi"))], src))], {"shape": dst}


@st.composite
def transpose_case(draw):
    shape = draw(st.sampled_from([(2, 3), (2, 3, 4)]))
    perm = tuple(draw(st.permutations(range(len(shape)))))
    return [draw(values(DTYPES["f"], shape))], {"permutation": perm}


@st.composite
def dot_general_case(draw):
    dtype = DTYPES[draw(st.sampled_from("fi"))]
    case = draw(st.sampled_from([
        ((3, 4), (4, 5), (1,), (0,), (), ()),
        ((2, 3, 4), (2, 4, 5), (2,), (1,), (0,), (0,)),
        ((4,), (4,), (0,), (0,), (), ()),
        ((3, 4), (5, 4), (1,), (1,), (), ()),
        ((4, 2, 3), (3, 4), (0, 2), (1, 0), (), ()),
    ]))
    ls, rs, lc, rc, lb, rb = case
    small = dict(small=True)
    return ([draw(values(dtype, ls, **small)), draw(values(dtype, rs, **small))],
            {"lhs_contracting": lc, "rhs_contracting": rc, "lhs_batch": lb, "rhs_batch": rb})


@st.composite
def iota_case(draw):
    shape = draw(st.sampled_from([(5,), (2, 3)]))
    return [], {"dimension": draw(st.integers(0, len(shape) - 1)), "shape": shape,
                "dtype": DTYPES[draw(st.sampled_from("fi"))]}


@st.composite
def constant_case(draw):
    dtype = DTYPES[draw(st.sampled_from("fiub"))]
    return [], {"value": draw(values(dtype, draw(st.sampled_from(SHAPES))))}


@st.composite
def dynamic_slice_case(draw):
    shape = draw(st.sampled_from([(5,), (3, 4)]))
    sizes = tuple(draw(st.integers(0, d)) for d in shape)
    starts = [np.int32(draw(st.integers(-3, 7))) for _ in shape]
    return [draw(values(DTYPES["f"], shape)), *starts], {"sizes": sizes}


@st.composite
def dynamic_update_slice_case(draw):
    shape = draw(st.sampled_from([(5,), (3, 4)]))
    strides = tuple(draw(st.integers(1, 3)) for _ in shape)
    update = tuple(draw(st.integers(0, (d - 1) // s + 1)) for d, s in zip(shape, strides,
                                                                        strict=True))
    starts = [np.int32(draw(st.integers(-3, 7))) for _ in shape]
    return ([draw(values(DTYPES["i"], shape)), draw(values(DTYPES["i"], update)), *starts],
            {"strides": strides})


@st.composite
def slice_case(draw):
    shape = draw(st.sampled_from([(5,), (3, 4)]))
    starts = [draw(st.integers(0, d)) for d in shape]
    limits = [draw(st.integers(s, d)) for s, d in zip(starts, shape, strict=True)]
    strides = [draw(st.integers(1, 3)) for _ in shape]
    return [draw(values(DTYPES["f"], shape))], {
        "start_indices": tuple(starts), "limit_indices": tuple(limits), "strides": tuple(strides)}


@st.composite
def rev_case(draw):
    shape = draw(st.sampled_from([(5,), (3, 4), (2, 3, 2)]))
    dims = draw(st.lists(st.integers(0, len(shape) - 1), unique=True))
    return [draw(values(DTYPES["i"], shape))], {"dimensions": tuple(dims)}


@st.composite
def take_case(draw):
    shape = draw(st.sampled_from([(5,), (3, 4)]))
    axis = draw(st.integers(0, len(shape) - 1))
    idx_shape = draw(st.sampled_from([(), (3,), (2, 2)]))
    dtype = DTYPES[draw(st.sampled_from("iu"))]
    bound = shape[axis] + 2
    lo = -bound if dtype.kind == "i" else 0
    indices = draw(hnp.arrays(dtype, idx_shape, elements=st.integers(lo, bound)))
    return [draw(values(DTYPES["f"], shape)), indices], {"axis": axis}


@st.composite
def scatter_case(draw):
    n, k = draw(st.integers(1, 6)), draw(st.integers(0, 5))
    dtype = DTYPES[draw(st.sampled_from("fi"))]
    positions = draw(hnp.arrays(np.dtype(np.int32), (k,), elements=st.integers(-2, n + 1)))
    return ([draw(values(dtype, (n,), small=True)), positions,
             draw(values(dtype, (k,), small=True))],
            {"combine": draw(st.sampled_from(["set", "add", "mul", "min", "max"]))})


@st.composite
def concatenate_case(draw):
    dimension = draw(st.integers(0, 1))
    sizes = draw(st.lists(st.integers(0, 3), min_size=1, max_size=3))
    dtype = DTYPES[draw(st.sampled_from("fib"))]
    shapes = [(n, 2) if dimension == 0 else (2, n) for n in sizes]
    return [draw(values(dtype, s)) for s in shapes], {"dimension": dimension}


@st.composite
def cumulative_case(draw):
    shape = draw(st.sampled_from([(5,), (2, 3), (0, 2)]))
    dtype = DTYPES[draw(st.sampled_from("fiu"))]
    return [draw(values(dtype, shape, small=True))], {
        "axis": draw(st.integers(0, len(shape) - 1)),
        "combiner": draw(st.sampled_from(["sum", "prod", "max", "min"]))}


@st.composite
def sort_case(draw):
    shape = draw(st.sampled_from([(6,), (2, 5), (0, 3)]))
    dimension = draw(st.integers(0, len(shape) - 1))
    dtype = DTYPES[draw(st.sampled_from("fiub"))]
    keys = draw(values(dtype, shape, small=True))  # small: many ties, for stability
    if draw(st.booleans()):
        return [keys, keys], {"dimension": dimension}
    index = np.arange(shape[dimension], dtype=np.int32).reshape(
        [-1 if i == dimension else 1 for i in range(len(shape))])
    return [keys, np.broadcast_to(index, shape).copy()], {"dimension": dimension}


def entries(shape):
    """Matrix entries for the linear-algebra cases, at most 4 in magnitude: the diagonal each
    case adds (8n, 16n, 20k, 40) then dominates, so the float32 results (ours, LAPACK's in
    NumPy) agree to the sweep's elementwise tolerance. Drawn up to 256 (`values(small=True)`),
    entries near 200 swamped it: a 3x3 with a determinant of -10.97 (condition number 2e4) had
    a log|det| 1.4e-4 off (JAX's 8e-5), and R[2, 2] of a QR was -1.7121122 for NumPy's
    -1.7120324, as JAX's is."""
    return hnp.arrays(np.float32, shape, elements=st.floats(-4, 4, width=32,
                                                              allow_subnormal=False))


@st.composite
def solve_case(draw):
    """Well-conditioned systems (diagonally dominant), one and several right-hand sides."""
    n, k, batch = draw(st.sampled_from([(3, 1, ()), (4, 2, (2,)), (1, 3, (2, 1))]))
    a = draw(entries((*batch, n, n)))
    return [a + np.float32(8 * n) * np.eye(n, dtype=np.float32),
            draw(values(DTYPES["f"], (*batch, n, k), finite=True, small=True))], {}


@st.composite
def slogdet_case(draw):
    """Diagonally dominant matrices of either sign of determinant, and a singular one."""
    n, batch = draw(st.sampled_from([(3, ()), (4, (2,)), (1, (2, 1))]))
    a = draw(entries((*batch, n, n)))
    signs = np.where(np.arange(n) % 2 == draw(st.integers(0, 1)), -1, 1).astype(np.float32)
    a = a + np.float32(8 * n) * np.diag(signs)
    return [np.zeros_like(a) if draw(st.integers(0, 5)) == 0 else a], {}


@st.composite
def eigh_case(draw):
    """Symmetric matrices with eigenvalues apart (each eigenvector is then unique up to its
    sign, which the check normalizes)."""
    n, batch = draw(st.sampled_from([(3, ()), (4, (2,)), (1, (2, 1))]))
    a = draw(entries((*batch, n, n)))
    spread = np.diag(np.float32(20) * np.arange(n, dtype=np.float32))
    return [(a + np.swapaxes(a, -1, -2)) / 2 + spread], {}


@st.composite
def cholesky_case(draw):
    """Positive definite matrices (diagonally dominant, symmetric) and one that is not."""
    n, batch = draw(st.sampled_from([(3, ()), (4, (2,)), (1, (2, 1))]))
    a = draw(entries((*batch, n, n)))
    spd = (a + np.swapaxes(a, -1, -2)) / 2 + np.float32(16 * n) * np.eye(n, dtype=np.float32)
    return [-spd if draw(st.integers(0, 5)) == 0 else spd], {}


@st.composite
def svd_case(draw):
    """Square, tall, wide and batched matrices with singular values apart."""
    m, n, batch = draw(st.sampled_from([(3, 3, ()), (4, 2, (2,)), (2, 5, ()), (1, 3, (2,))]))
    a = draw(entries((*batch, m, n)))
    k = min(m, n)
    spread = np.zeros((m, n), np.float32)
    spread[np.arange(k), np.arange(k)] = 20 * np.arange(1, k + 1)
    return [a + spread], {}


@st.composite
def qr_case(draw):
    """Tall, square and batched matrices of full rank (LAPACK's signs are NumPy's)."""
    m, n, batch = draw(st.sampled_from([(3, 3, ()), (5, 2, (2,)), (4, 1, ()), (3, 2, (2, 1))]))
    a = draw(entries((*batch, m, n)))
    spread = np.zeros((m, n), np.float32)
    spread[np.arange(n), np.arange(n)] = 40
    return [a + spread], {}


def check_svd(a, actual, expected):
    """s, then what no choice of signs or completion changes: U_k diag(s) V_k^T, and U, V
    orthogonal."""
    m, n = a.shape[-2:]
    k = min(m, n)
    unpack = lambda x: (x[..., :m, :m], x[..., m, :k], x[..., m + 1:, :n])  # noqa: E731
    (u, s, v), (_, want_s, _) = unpack(actual), unpack(expected)
    assert_close(s, want_s, rtol=2e-5, atol=1e-5)
    rebuilt = (u[..., :k] * s[..., None, :]) @ np.swapaxes(v[..., :k], -1, -2)
    assert_close(rebuilt, a, rtol=2e-5, atol=1e-4 * max(1, float(np.abs(a).max())))
    for q in (u, v):
        assert_close(np.swapaxes(q, -1, -2) @ q,
                     np.broadcast_to(np.eye(q.shape[-1], dtype=q.dtype), q.shape), rtol=0,
                     atol=1e-5)


@st.composite
def after_case(draw):
    shape = draw(st.sampled_from([(), (5,), (2, 3)]))
    dtype = DTYPES[draw(st.sampled_from("fiub"))]
    return [draw(values(dtype, shape)), draw(values(DTYPES["f"], (3,)))], {}


@st.composite
def dimension_size_case(draw):
    shape = draw(st.sampled_from([(5,), (2, 3), (4, 1, 6)]))
    return [draw(values(DTYPES["f"], shape))], {
        "dimension": draw(st.integers(0, len(shape) - 1)),
        "dtype": DTYPES[draw(st.sampled_from("iu"))]}


@st.composite
def copy_case(draw):
    shape = draw(st.sampled_from([(), (5,), (2, 3)]))
    return [draw(values(DTYPES[draw(st.sampled_from("fiub"))], shape))], {}


def case_for(op):
    special = {O.CONVERT: convert_case, O.BITCAST_CONVERT: bitcast_case,
               O.BROADCAST_IN_DIM: broadcast_case,
               O.DYNAMIC_SLICE: dynamic_slice_case,
               O.DYNAMIC_UPDATE_SLICE: dynamic_update_slice_case,
               O.RESHAPE: reshape_case, O.TRANSPOSE: transpose_case,
               O.DOT_GENERAL: dot_general_case, O.IOTA: iota_case,
               O.DIMENSION_SIZE: dimension_size_case, O.CONSTANT: constant_case,
               O.SLICE: slice_case, O.REV: rev_case, O.TAKE: take_case,
               O.SCATTER: scatter_case, O.CONCATENATE: concatenate_case,
               O.CUMULATIVE: cumulative_case, O.SORT: sort_case, O.COPY: copy_case,
               O.AFTER: after_case, O.SOLVE: solve_case,
               O.SLOGDET: slogdet_case, O.EIGH: eigh_case,
               O.TRIANGULAR_SOLVE: solve_case, O.CHOLESKY: cholesky_case, O.SVD: svd_case,
               O.QR: qr_case}
    if op in special:
        return special[op]()
    if op.has(Trait.REDUCTION):
        return reduce_case(op)
    if op.has(Trait.ELEMENTWISE):
        return elementwise_case(op)
    raise AssertionError(f"no sweep case for {op.name}: add one when adding an op")


CASES_PER_MODULE = 24


def run_ops(op, cases):
    """Every case's op in one traced module: its results, in order."""
    def run(*flat):
        outs, rest = [], list(flat)
        for args, params in cases:
            outs.append(bind(op, *rest[:len(args)], **params))
            del rest[:len(args)]
        return outs

    return ember.jit(run)(*[a for args, _ in cases for a in args])


def check_case(op, args, params, actual):
    """`actual`, the kernel's result, against the row's reference and host_eval's bits."""
    check_host_bits(op, args, params, actual)
    expected = np.asarray(op.reference(*args, **params))
    actual = np.asarray(actual)
    if op is O.SVD:
        return check_svd(args[0], actual, expected)
    if expected.dtype.kind == "f":  # compiled code flushes subnormal results to zero
        tiny = np.finfo(expected.dtype).tiny
        expected = np.where(np.abs(expected) < tiny, np.copysign(0, expected), expected)
    if op in (O.DOT_GENERAL, O.REDUCE_SUM) and expected.dtype.kind == "f":
        # Summation order differs (IREE vectorizes): bound the error by the magnitude of
        # the terms, not of the result, which cancellation can make tiny.
        terms = np.abs(op.reference(*(np.abs(a) for a in args), **params))
        assert np.all(np.abs(actual - expected) <= 1e-5 * terms + 1e-5), (actual, expected)
        return
    if op is O.EIGH:  # each eigenvector (a column below the eigenvalues) up to its sign
        flip = np.where(np.sum(expected[..., 1:, :] * actual[..., 1:, :], axis=-2,
                               keepdims=True) < 0, -1, 1).astype(actual.dtype)
        actual = np.concatenate([actual[..., :1, :], actual[..., 1:, :] * flip], axis=-2)
    if op is O.TAN and expected.dtype.kind == "f":
        # near a pole an input's rounding is amplified by 1 + tan^2
        bound = 2e-5 * np.abs(expected) + 1e-6 * (1 + np.square(expected, dtype=np.float64))
        both_nan = np.isnan(actual) & np.isnan(expected)
        assert np.all(both_nan | (np.abs(actual - expected) <= bound)
                      | (actual == expected)), (actual, expected)
        return
    loose = op in LOOSE
    atol = 1e-5 if loose else 0
    assert_close(actual, expected, rtol=2e-5 if loose else 1e-6, atol=atol)


def assert_same_bits(actual, expected, what):
    """Equal bit for bit, but for NaN payloads (their sign and bits are the hardware's)."""
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.dtype == expected.dtype and actual.shape == expected.shape, what
    if kind(actual.dtype) == "c":
        assert_same_bits(actual.real, expected.real, what)
        assert_same_bits(actual.imag, expected.imag, what)
        return
    if kind(actual.dtype) == "f":
        nan = np.isnan(actual)
        assert (nan == np.isnan(expected)).all(), (what, actual, expected)
        actual, expected = np.where(nan, 0, actual), np.where(nan, 0, expected)
        assert (np.signbit(actual) == np.signbit(expected)).all(), (what, actual, expected)
    assert np.array_equal(actual, expected), (what, actual, expected)


def check_host_bits(op, args, params, actual):
    """Where `op` is exact for these operands (ember.dialect.exact), eager calls compute it
    on the host (host_eval): its bits must be the kernel's."""
    values = [np.asarray(a) for a in args]
    avals = [ShapedArray(v.shape, v.dtype) for v in values]
    result = op.infer(*avals, **params)
    if op not in exact_rows.EXACT or not exact_rows.exact(op, avals, result):
        return  # a row, or a dtype (the sweep draws complex numbers), computed by kernels only
    hosted = host_eval.run(op, values, params, result)
    if hosted is not None:
        assert_same_bits(hosted, actual, (op.name, values, params))


@pytest.mark.parametrize("name", sorted(OPS))
def test_op_matches_numpy(name):
    op = OPS[name]
    if op.variadic_results:
        pytest.skip("control flow and debug printing: checked in test_lax.py, test_debug.py")

    @few_examples(1)  # 1 module of 24 cases a row in CI (IREE's ~0.4 s a module, paid once)
    @given(st.lists(case_for(op), min_size=CASES_PER_MODULE, max_size=CASES_PER_MODULE))
    def check(cases):
        for (args, params), actual in zip(cases, run_ops(op, cases), strict=True):
            check_case(op, args, params, actual)

    check()


def test_every_row_is_in_the_table():
    rows = {v for v in vars(O).values() if isinstance(v, OpDef)}
    assert rows <= set(OPS.values()), sorted(r.name for r in rows - set(OPS.values()))
