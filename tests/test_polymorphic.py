"""Shape-polymorphic eager kernels: an eager op compiles once per pattern of shapes (sizes 0
and 1 kept, the others symbolic), and eager integer indices are operands, not constants."""

import contextlib
import math

import numpy as np
import pytest
from hypothesis import given, strategies as st

import ember
import ember.numpy as jnp
from ember._src import polymorphic
from ember.dialect.types import Dim, ShapedArray, SymbolicDimError, parse_tensor_type
from helpers import assert_close

F32 = np.dtype(np.float32)


@contextlib.contextmanager
def compiles():
    """How many modules the block compiled or read from the persistent cache."""
    with ember.count_events("eager_compile") as n, ember.count_events("disk_hit") as hits:
        yield lambda: n() + hits()


@pytest.mark.unit
def test_a_dim_answers_only_what_holds_for_every_size():
    a, b = Dim("s0"), Dim("s1")
    assert a == Dim("s0") and a != b and hash(a) == hash(Dim("s0"))
    assert a != 0 and a != 1 and a > 1 and a >= 1 and not a < 1 and not a <= 0
    assert (a, 4) == (Dim("s0"), 4) and 0 not in (a, 4)
    for ask in (lambda: a == 5, lambda: a > 3, lambda: a + 1, lambda: 2 * a, lambda: int(a),
                lambda: ShapedArray((a, 4), F32).size, lambda: range(a)):
        with pytest.raises(SymbolicDimError):
            ask()


@pytest.mark.unit
def test_symbolic_dims_are_named_in_ember_ir_and_plain_upstream():
    aval = ShapedArray((Dim("s0"), 4, Dim("s1")), F32)
    assert aval.tensor_type() == 'tensor<?x4x?xf32, "s0,s1">'
    assert aval.signless_tensor_type() == "tensor<?x4x?xf32>"
    assert parse_tensor_type(aval.tensor_type()) == aval
    assert aval.str_short() == "f32[s0,4,s1]"


@pytest.mark.unit
def test_patterns_keep_sizes_0_and_1_and_share_equal_sizes():
    s0, s1 = Dim("s0"), Dim("s1")
    got = polymorphic.generalize([ShapedArray((16, 8), F32), ShapedArray((8,), F32),
                                  ShapedArray((1, 16, 0), F32)])
    assert [a.shape for a in got] == [(s0, s1), (s1,), (1, s0, 0)]
    assert polymorphic.generalize([ShapedArray((1, 0), F32), ShapedArray((), F32)]) is None


# (name, the eager call, NumPy's) on a rows x cols matrix and a row. Not here: reshapes
# (b[:, None] too), which need sizes, and compile per shape.
CASES = [
    ("exp", lambda a, b: jnp.exp(a), lambda a, b: np.exp(a)),
    ("add a row", lambda a, b: a + b, lambda a, b: a + b),
    ("times a scalar", lambda a, b: a * 2.5, lambda a, b: a * np.float32(2.5)),
    ("maximum", lambda a, b: jnp.maximum(a, 0.0), lambda a, b: np.maximum(a, 0)),
    ("where", lambda a, b: jnp.where(a > 0, a, b), lambda a, b: np.where(a > 0, a, b)),
    ("sum of rows", lambda a, b: jnp.sum(a, axis=0), lambda a, b: a.sum(0)),
    ("max of columns", lambda a, b: jnp.max(a, axis=1, keepdims=False),
     lambda a, b: a.max(1)),
    ("transpose", lambda a, b: a.T, lambda a, b: a.T),
    ("matmul", lambda a, b: a @ jnp.transpose(a), lambda a, b: a @ a.T),
]


def _operands(rows: int, cols: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((rows, cols)).astype(np.float32),
            rng.standard_normal(cols).astype(np.float32))


@pytest.fixture(scope="module")
def warm():
    """Every case compiled once, at one shape of its pattern."""
    a, b = _operands(16, 8)
    for _, fn, _ in CASES:
        fn(jnp.asarray(a), jnp.asarray(b)).block_until_ready()


@pytest.mark.usefixtures("warm")
@given(rows=st.integers(2, 40), cols=st.integers(2, 12), seed=st.integers(0, 2**16))
def test_new_shapes_compile_nothing_and_match_numpy(rows, cols, seed):
    if rows == cols:  # a square one is another pattern (s0, s0)
        rows += 1
    a, b = _operands(rows, cols, seed)
    x, y = jnp.asarray(a), jnp.asarray(b)
    for name, fn, ref in CASES:
        with compiles() as n:
            got = fn(x, y)
            got.block_until_ready()
        assert n() == 0, f"{name} at {(rows, cols)} compiled"
        assert got.shape == ref(a, b).shape, name
        assert_close(np.asarray(got), ref(a, b), rtol=1e-5, atol=1e-5)


def test_a_trace_that_needs_a_size_compiles_per_shape_and_stays_right():
    for n in (6, 9):
        a = np.arange(n * 3, dtype=np.float32).reshape(n, 3)
        with compiles() as c:
            flat, mean = jnp.asarray(a).reshape(-1), jnp.mean(jnp.asarray(a), axis=0)
        assert c() <= 2  # each at most once per shape: the pattern was tried once
        np.testing.assert_array_equal(np.asarray(flat), a.reshape(-1))
        assert_close(np.asarray(mean), a.mean(0))


def test_eager_integer_indices_are_operands():
    x = jnp.arange(50)
    assert int(x[0]) == 0
    with compiles() as n:
        got = [int(x[i]) for i in range(1, 21)] + [int(x[-1]), int(x[-50])]
    assert n() == 0
    assert got == [*range(1, 21), 49, 0]
    with pytest.raises(IndexError, match="index 50 is out of bounds for axis 0 with size 50"):
        x[50]
    m = np.arange(24, dtype=np.float32).reshape(4, 6)
    em = jnp.asarray(m)
    for i in range(4):
        np.testing.assert_array_equal(np.asarray(em[i, 1:5:2]), m[i, 1:5:2])
        np.testing.assert_array_equal(np.asarray(em[None, :, i]), m[None, :, i])


def test_eager_data_movement_of_small_host_arrays_is_a_copy():
    """Reshapes, transposes, joins, flips, broadcasts and basic indexing of small CPU arrays
    whose values are ready compile nothing (a host copy); large ones run kernels. Both match
    NumPy, and each result owns its buffer (donating it leaves the operand intact)."""
    moves = {"reshape": lambda x: x.reshape(-1, 4), "T": lambda x: x.T,
             "concatenate": lambda x: jnp.concatenate([x, x[:2]]), "flip": jnp.flip,
             "broadcast": lambda x: jnp.broadcast_to(x[:1], (3, x.shape[1])),
             "slices": lambda x: x[1:3, ::-2], "x[i, None]": lambda x: x[2, None],
             "x[i, j]": lambda x: x[-1, 3]}
    for shape in [(16, 8), (256, 256)]:  # 128 elements: host copies; 65,536: kernels
        m = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
        a = jnp.asarray(m)
        with compiles() as n:
            got = {name: move(a) for name, move in moves.items()}
        if m.size == 128:
            assert n() == 0
        for name, move in moves.items():
            np.testing.assert_array_equal(np.asarray(got[name]), move(m), err_msg=name)
            assert got[name].dtype == np.float32, name
    bump = ember.jit(lambda y: y + 1, donate_argnums=0)
    a = jnp.asarray(np.ones((4, 8), np.float32))
    for move in moves.values():
        y = move(a)
        np.testing.assert_array_equal(np.asarray(bump(y)), np.asarray(move(np.ones((4, 8)))) + 1)
        np.testing.assert_array_equal(np.asarray(a), 1.0)
    assert jnp.asarray(np.int32(3)).reshape(1).weak_type is False
    assert jnp.arange(4.0)[jnp.newaxis].shape == (1, 4)


def test_elementwise_functions_compile_once_for_every_rank_from_two():
    """Arrays of one shape (and scalars) of rank 3 or more run an eager ufunc as matrices:
    a matrix, a 3-d and a 4-d batch share one kernel; broadcasting keeps its own."""
    shapes = [(7,), (3, 5), (2, 3, 4), (2, 1, 3, 2)]
    hosts = [np.linspace(-2, 2, math.prod(s), dtype=np.float32).reshape(s) for s in shapes]
    arrays = [jnp.asarray(h) for h in hosts]
    jnp.tanh(jnp.asarray(np.ones(9, np.float32)))  # the vector kernel
    with compiles() as n:
        got = [(jnp.tanh(a), jnp.where(a > 0.5, a, -1.0), jnp.maximum(a, a * 0.5), a ** 3)
               for a in arrays]
    assert n() <= 11  # a kernel a function for vectors, one for the rest: 23 a rank
    for h, (tanh, where, maximum, cube) in zip(hosts, got, strict=True):
        assert tanh.shape == where.shape == maximum.shape == cube.shape == h.shape
        assert_close(tanh, np.tanh(h), rtol=1e-6, atol=1e-6)
        np.testing.assert_array_equal(np.asarray(where), np.where(h > 0.5, h, -1.0))
        np.testing.assert_array_equal(np.asarray(maximum), np.maximum(h, h * 0.5))
        assert_close(cube, h ** 3, rtol=1e-6, atol=1e-6)
    m, v = arrays[1], jnp.asarray(hosts[1][0])
    np.testing.assert_array_equal(np.asarray(m + v), hosts[1] + hosts[1][0])  # broadcasting
    y = jnp.exp(m)
    ember.jit(lambda y: y * 2, donate_argnums=0)(y)  # the result owns its buffer
    np.testing.assert_array_equal(np.asarray(m), hosts[1])


# -- ember.jit(f, dynamic_dims=...) -------------------------------------------------------

def mlp(x, w1, w2):
    h = jnp.maximum(x @ w1, 0.0)
    logits = h @ w2
    e = jnp.exp(logits - jnp.max(logits, axis=-1, keepdims=True))
    return e / jnp.sum(e, axis=-1, keepdims=True)


def _np_mlp(x, w1, w2):
    logits = np.maximum(x @ w1, 0) @ w2
    e = np.exp(logits - logits.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


@contextlib.contextmanager
def jit_compiles():
    with ember.count_events("compile") as n, ember.count_events("disk_hit") as hits:
        yield lambda: n() + hits()


def test_dynamic_dims_compile_once_for_every_batch_size():
    rng = np.random.default_rng(1)
    w1, w2 = (rng.standard_normal(s).astype(np.float32) * 0.3 for s in ((12, 8), (8, 5)))
    f = ember.jit(mlp, dynamic_dims={"x": {0: "batch"}})
    with jit_compiles() as n:
        for batch in range(1, 34):
            x = rng.standard_normal((batch, 12)).astype(np.float32)
            got = f(x, w1, w2)
            assert got.shape == (batch, 5)
            assert_close(np.asarray(got), _np_mlp(x, w1, w2), rtol=1e-5, atol=1e-6)
    assert n() == 2  # batch 1 (squeezes and broadcasts differ at 1) and every other batch
    with jit_compiles() as n:
        f(rng.standard_normal((7, 12)).astype(np.float32), w1, w2)
        f(rng.standard_normal((7, 13)).astype(np.float32),
          rng.standard_normal((13, 8)).astype(np.float32), w2)  # another static shape
    assert n() == 1


@given(rows=st.integers(2, 64), cols=st.integers(2, 9), seed=st.integers(0, 2**16))
def test_dynamic_dims_match_numpy(rows, cols, seed):
    a, b = _operands(rows, cols, seed)
    got = _DYNAMIC(a, b)
    expected = (np.tanh(a) * b).sum(axis=1) - a.max(axis=1) + (a @ b)
    assert got.shape == (rows,)
    assert_close(np.asarray(got), expected, rtol=1e-5, atol=1e-5)


_DYNAMIC = ember.jit(lambda a, b: (jnp.tanh(a) * b).sum(axis=1) - a.max(axis=1) + a @ b,
                     dynamic_dims={"a": {0: "rows", 1: "cols"}, "b": {0: "cols"}})


def test_dynamic_dims_errors_name_the_dim_and_the_fix():
    f = ember.jit(lambda x, y: x + y, dynamic_dims={"x": {0: "n"}, "y": {0: "n"}})
    with pytest.raises(ember.errors.DynamicDimError,
                       match="dynamic dim 'n' is 4 at x but 5 at y; arguments that share"):
        f(np.ones(4, np.float32), np.ones(5, np.float32))
    flat = ember.jit(lambda x: x.reshape(-1), dynamic_dims={"x": {0: "n"}})
    with pytest.raises(ember.errors.DynamicDimError,
                       match="the function needs symbolic dimension n.*leave that dim out"):
        flat(np.ones((4, 3), np.float32))
    with pytest.raises(ember.errors.DynamicDimError, match=r"names \['z'\], which are not"):
        ember.jit(lambda x: x, dynamic_dims={"z": {0: "n"}})(np.ones(3, np.float32))
    with pytest.raises(ember.errors.DynamicDimError, match="axis 2 of x, which has rank 1"):
        ember.jit(lambda x: x, dynamic_dims={"x": {2: "n"}})(np.ones(3, np.float32))
    with pytest.raises(TypeError, match="requires dynamic_dims to map argument names"):
        ember.jit(lambda x: x, dynamic_dims={"x": [0]})
