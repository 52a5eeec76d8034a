"""Every example of the seed (JAX's jit page) up to "Marking arguments as static", in Ember."""

import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

import ember
import ember.numpy as jnp
from ember.errors import TracerBoolConversionError
from helpers import assert_close

pytestmark = pytest.mark.usefixtures("no_disk_cache")  # these tests count compiles


def selu(x, alpha=1.67, lambda_=1.05):
    return lambda_ * jnp.where(x > 0, x, alpha * jnp.exp(x) - alpha)


def selu_numpy(x, alpha=1.67, lambda_=1.05):
    with np.errstate(over="ignore"):
        return (np.float32(lambda_) * np.where(
            x > 0, x, np.float32(alpha) * np.exp(x) - np.float32(alpha))).astype(np.float32)


selu_jit = ember.jit(selu)


def test_selu_on_arange_like_the_seed():
    x = jnp.arange(1000000)
    out = selu_jit(x).block_until_ready()
    assert out.dtype == np.float32 and out.shape == (1000000,)
    assert_close(out, selu_numpy(np.arange(1000000).astype(np.float32)), rtol=1e-6)
    assert_close(selu(x), np.asarray(out))  # eager agrees with jit


@given(hnp.arrays(np.float32, st.sampled_from([(7,), (2, 5)]),
                  elements=st.floats(-50, 50, width=32, allow_subnormal=False)))
def test_selu_jit_and_eager_agree_with_numpy(x):
    expected = selu_numpy(x)
    assert_close(selu_jit(x), expected, rtol=2e-6, atol=1e-6)
    assert_close(selu(jnp.asarray(x)), expected, rtol=2e-6, atol=1e-6)


def log2_if_rank_2(x):
    if x.ndim == 2:
        return jnp.log(x) / jnp.log(2.0)
    else:
        return x


def test_rank_1_trace_is_the_identity():
    ir = ember.jit(log2_if_rank_2).trace(jnp.array([1, 2, 3])).ir
    assert "func.func @main(%arg0: tensor<3xi32>) -> tensor<3xi32>" in ir
    assert "return %arg0 : tensor<3xi32>" in ir
    assert '"ember.' not in ir


def test_rank_2_takes_the_other_branch():
    f = ember.jit(log2_if_rank_2)
    x = np.array([[1.0, 2.0, 8.0]], np.float32)
    assert_close(f(x), np.log2(x))
    assert '"ember.log"' in f.trace(x).ir
    assert_close(f(np.array([1, 2, 3], np.int32)), np.array([1, 2, 3], np.int32))


def f(x):
    if x > 0:
        return x
    else:
        return 2 * x


def g(x, n):
    i = 0
    while i < n:
        i += 1
    return x + i


def test_value_dependent_if_raises_with_name_argument_and_fix():
    with pytest.raises(TracerBoolConversionError) as info:
        ember.jit(f)(10)
    msg = str(info.value)
    assert "Attempted boolean conversion of traced array with shape bool[]" in msg
    assert "while tracing the function f at" in msg and "test_seed.py" in msg
    assert "depends on the value of the argument x" in msg
    assert "static_argnums=0" in msg and "ember.lax.cond" in msg


def test_value_dependent_while_names_n():
    with pytest.raises(TracerBoolConversionError, match="argument n") as info:
        ember.jit(g)(10, 20)
    assert "static_argnames=['n']" in str(info.value)


@ember.jit
def loop_body(prev_i):
    return prev_i + 1


def g_inner_jitted(x, n):
    i = 0
    while i < n:
        i = loop_body(i)
    return x + i


def test_inner_jitted_loop_returns_30_and_compiles_loop_body_once():
    ember.clear_caches()
    with ember.count_events("compile") as compiles, ember.count_events("trace") as traces:
        out = g_inner_jitted(10, 20)
    assert out.dtype == np.int32 and out.weak_type and int(out) == 30
    assert repr(out) == "Array(30, dtype=int32, weak_type=True)"
    assert compiles() == 1 and traces() == 1


def test_static_argnums_and_argnames_fix_the_errors():
    assert int(ember.jit(f, static_argnums=0)(10)) == 10
    assert int(ember.jit(f, static_argnums=0)(-3)) == -6
    assert int(ember.jit(g, static_argnames=["n"])(10, 20)) == 30


def test_decorator_factory():
    @ember.jit(static_argnames=["n"])
    def g_jit_decorated(x, n):
        i = 0
        while i < n:
            i += 1
        return x + i

    assert int(g_jit_decorated(10, 20)) == 30
    assert int(g_jit_decorated(10, n=5)) == 15


def test_trace_time_side_effects_happen_once(capsys):
    calls = []

    @ember.jit
    def impure(x):
        print("tracing with", x)
        calls.append(1)
        return x + 1

    impure(np.ones(3, np.float32))
    impure(np.ones(3, np.float32))
    assert capsys.readouterr().out == "tracing with Traced<f32[3]>with<jit>\n"
    assert len(calls) == 1
    impure(np.ones(4, np.float32))  # a new type traces (and prints) again
    assert "f32[4]" in capsys.readouterr().out and len(calls) == 2


def test_leaked_tracers_are_reported_with_where_they_were_made():
    from ember.errors import UnexpectedTracerError

    stash = []

    def leaky(x):
        y = x * 2
        stash.append(y)
        return y + 1

    with ember.checking_leaks():
        with pytest.raises(UnexpectedTracerError, match=r"Leaked 1 tracer\(s\) while tracing "
                           r"the function .*leaky(.|\n)*created at .*test_seed.py"):
            ember.jit(leaky)(np.ones(3, np.float32))
        assert_close(ember.jit(lambda x: x * 3)(np.ones(2, np.float32)),
                     np.full(2, 3, np.float32))
    with pytest.raises(UnexpectedTracerError, match="used after that trace ended"):
        jnp.add(stash[0], 1)
