"""No result shares memory the caller can still write, and no call reads a buffer another
call overwrites: every way host memory enters (aligned, unaligned, read-only, strided views,
NumPy views of results), results that would be an argument or each other, donation racing
readers on other threads."""

import threading
import time

import numpy as np
import pytest

import ember
import ember.numpy as jnp
from ember import lax
from helpers import assert_close

wipe = ember.jit(lambda a: a * 0 - 1, donate_argnums=0)  # writes into its argument


def _aligned(n: int, offset: int = 0) -> np.ndarray:
    raw = np.zeros(n * 4 + 128, np.uint8)
    start = (-raw.ctypes.data) % 64 + offset
    return raw[start:start + n * 4].view(np.float32)


def _strided(n: int) -> np.ndarray:
    return np.zeros(2 * n, np.float32)[::2]


def _read_only(n: int) -> np.ndarray:
    a = _aligned(n)
    a.flags.writeable = False
    return a


@pytest.mark.parametrize("make", [_aligned, lambda n: _aligned(n, 4), _strided, _read_only],
                         ids=["aligned", "unaligned", "strided", "read-only"])
@pytest.mark.parametrize("n", [16, 1 << 16])  # an inline call and a worker-thread one
def test_host_arguments_are_copied_in(make, n):
    host = make(n)
    if host.flags.writeable:
        host[:] = np.arange(n)
    expected = np.array(host)
    ident, double = ember.jit(lambda x: x)(host), ember.jit(lambda x: x * 2)(host)
    if host.flags.writeable:
        host[:] = 5  # the caller writes at once, before the work may have run
    assert_close(ident, expected)
    assert_close(double, expected * 2)
    assert not np.shares_memory(np.asarray(ident), host)
    wipe(ident)  # writing into the result leaves the caller's array alone
    assert (host == 5).all() if host.flags.writeable else (host == expected).all()


RETURNS = {
    "identity": lambda x: x,
    "reshape": lambda x: x.reshape(4, 4),
    "twice": lambda x: (lambda y: (y, y))(x * 2),
    "twice-reshaped": lambda x: (lambda y: (y, y.reshape(4, 4)))(x * 2),
    "cond": lambda x: lax.cond(x[0] < 1, lambda: x, lambda: x * 2),
    "while": lambda x: lax.while_loop(lambda c: c[0] > 100, lambda c: c * 2, x),
    "fori": lambda x: lax.fori_loop(0, x[0].astype(int), lambda i, c: c * 2, x),
}


@pytest.mark.parametrize("name", sorted(RETURNS))
def test_every_result_owns_its_buffer(name):
    """Donating a result must change no argument and no other result."""
    x = jnp.arange(16.0)
    outs = ember.jit(RETURNS[name])(x)
    outs = outs if isinstance(outs, tuple) else (outs,)
    before = [np.array(o) for o in (x, *outs)]
    wipe(outs[0])
    for value, expected in zip((x, *outs[1:]), [before[0], *before[2:]], strict=True):
        assert_close(value, expected)


def test_a_donated_result_is_still_written_in_place():
    """The copies are for kept buffers only: a donated argument still holds its result."""
    f = ember.jit(lambda x: x * 2, donate_argnums=0)
    x = jnp.arange(1 << 16, dtype=jnp.float32)
    before = x._buffer.get_buffer().ref
    out = f(x)
    assert out._buffer.get_buffer().ref == before
    assert "ember.copy" not in f.lower(jnp.zeros(4)).as_text()


def test_a_numpy_view_keeps_its_values_when_the_array_is_donated():
    x = jnp.arange(16.0)
    view = np.asarray(x)
    out = wipe(x)
    assert_close(view, np.arange(16.0, dtype=np.float32))
    assert_close(out, np.full(16, -1.0, np.float32))
    with pytest.raises(RuntimeError, match="donated"):
        np.asarray(x)


def test_an_array_no_view_holds_is_donated_without_a_copy():
    x = jnp.arange(1 << 16, dtype=jnp.float32)
    np.asarray(x)  # a view, dropped at once
    before = x._buffer.get_buffer().ref
    assert ember.jit(lambda a: a + 1, donate_argnums=0)(x)._buffer.get_buffer().ref == before


def test_a_donation_waits_for_readers_on_other_threads():
    """Another thread sums x in a loop of small (inline) calls while x is donated: each sum
    is whole, or the read raises because x is gone (never a half-overwritten buffer)."""
    total = ember.jit(lambda x: x.sum())
    corrupt = 0
    for _ in range(40):
        x = jnp.ones(4096)
        sums, started = [], threading.Event()

        def reader(x=x, sums=sums, started=started):
            started.set()
            try:
                while True:
                    sums.append(float(total(x)))
            except RuntimeError as e:
                assert "donated" in str(e)

        t = threading.Thread(target=reader)
        t.start()
        started.wait()
        time.sleep(0.001)
        wipe(x)
        t.join(timeout=60)
        corrupt += any(s != 4096.0 for s in sums)
    assert corrupt == 0


def test_a_result_the_lowering_made_an_argument_owns_its_buffer():
    """abs of unsigned integers lowers to its operand: IREE returns the argument's buffer,
    which the runtime finds at the first call and copies from then on."""
    x = jnp.array(np.arange(5, dtype=np.uint8))
    fill = ember.jit(lambda a: a * 0 + 9, donate_argnums=0)
    for abs_ in (jnp.abs, ember.jit(jnp.abs)):
        for _ in range(2):  # the first call finds it, the next ones copy
            y = abs_(x)
            fill(y)
            assert_close(x, np.arange(5, dtype=np.uint8))


def test_the_first_call_of_a_worker_thread_module_finds_sharing_after_its_work():
    """An async module's results may be allocated by its own work (transient buffers):
    their memory can be looked at only once the work is done (mapping one earlier raised)."""
    x = np.random.default_rng(0).standard_normal(1 << 17).astype(np.float32)
    out = ember.jit(jnp.sort)(x)
    assert_close(out, np.sort(x))


def test_a_loop_never_writes_into_a_buffer_still_read():
    """IREE updates loop carries in the initial value's buffer: a value used again, one
    starting two loops, or a constant starting two loops must each get its own."""
    def f(x):
        z = x + 1
        zeros = jnp.zeros(3)
        kept = lax.fori_loop(0, 3, lambda i, a: a.at[i].set(x[i] * 10), z)
        again = lax.fori_loop(0, 3, lambda i, b: b.at[i].add(x[i]), z)
        c1 = lax.fori_loop(0, 3, lambda i, a: a.at[i].set(x[i] * 10), zeros)
        c2 = lax.fori_loop(0, 3, lambda i, b: b.at[i].add(x[i]), jnp.zeros(3))
        w = lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1].at[c[0]].set(9.0)),
                           (0, z))[1]
        nested = lax.fori_loop(0, 2, lambda j, a: lax.fori_loop(
            0, 3, lambda i, b: b.at[i].add(1.0), a), z)
        return z, kept, again, c1, c2, w, nested

    x = np.array([1.0, 2.0, 3.0], np.float32)
    z, kept, again, c1, c2, w, nested = ember.jit(f)(x)
    assert_close(z, x + 1)
    assert_close(kept, x * 10)
    assert_close(again, 2 * x + 1)
    assert_close(c1, x * 10)
    assert_close(c2, x)
    assert_close(w, np.full(3, 9.0, np.float32))
    assert_close(nested, x + 3)
