"""ember.debug.print: printed at run time, on every call, in program order."""

import contextlib
import io

import numpy as np
from hypothesis import given, strategies as st

import ember
import ember.numpy as jnp
from ember import lax


@ember.jit
def report(x):
    ember.debug.print("x={} total={t:.1f}", x, t=jnp.sum(x))
    return x * 2


@given(st.lists(st.integers(-50, 50), min_size=3, max_size=3))
def test_prints_runtime_values_on_every_call(values):
    x = np.array(values, np.float32)
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        report(x).block_until_ready()
        report(x + 1).block_until_ready()
    assert buf.getvalue() == (f"x={x} total={x.sum():.1f}\n"
                              f"x={x + 1} total={(x + 1).sum():.1f}\n")


def test_prints_inside_branches_and_loops_in_program_order(capsys):
    @ember.jit
    def f(x, p):
        ember.debug.print("start")
        x = lax.cond(p, lambda v: (ember.debug.print("then {}", v), v + 1)[1],
                     lambda v: (ember.debug.print("else {}", v), v - 1)[1], x)
        x = lax.fori_loop(0, 3, lambda i, v: (ember.debug.print("step {}", i), v * 2)[1], x)
        ember.debug.print("end {}", x)
        return x

    f(np.float32(1), True).block_until_ready()
    assert capsys.readouterr().out == "start\nthen 1.0\nstep 0\nstep 1\nstep 2\nend 16.0\n"
    f(np.float32(1), False).block_until_ready()
    assert capsys.readouterr().out == "start\nelse 1.0\nstep 0\nstep 1\nstep 2\nend 0.0\n"


def test_output_is_there_when_an_async_call_is_ready(capsys):
    big = np.ones(1 << 16, np.float32)
    out = report(big)
    assert out._fence is not None  # a worker-thread module: the call returned early
    out.block_until_ready()
    assert capsys.readouterr().out.startswith("x=[1. 1. 1. ... 1. 1. 1.] total=65536.0")


def test_a_print_whose_value_is_unused_is_not_removed(capsys):
    @ember.jit
    def f(x):
        ember.debug.print("seen {}", jnp.exp(x))  # nothing else uses exp(x)
        return x

    lowered = f.lower(np.zeros(2, np.float32))
    assert '"ember.debug_print"' in lowered.as_text("ember")
    assert "flow.tensor.trace" in lowered.as_text("linalg")
    f(np.zeros(2, np.float32))
    assert capsys.readouterr().out == "seen [1. 1.]\n"


def test_no_trace_ops_without_printing_and_eager_prints_at_once(capsys):
    assert "flow.tensor.trace" not in ember.jit(lambda x: x + 1).lower(
        np.ones(2, np.float32)).as_text("linalg")
    ember.debug.print("eager {} {k}", jnp.arange(2), k=3)
    assert capsys.readouterr().out == "eager [0 1] 3\n"
