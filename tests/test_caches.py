"""Caches: in-memory semantics and explanations, the persistent cache on disk, threads."""

import json
import os
import subprocess
import sys
import threading
import time
import warnings
from functools import partial

import numpy as np
import pytest

import ember
import ember.numpy as jnp
from ember._src import compilation
from ember.compiler import disk_cache, pipeline
from ember.compiler.disk_cache import CacheWarning, DiskCache, DiskKey
from helpers import assert_close

pytestmark = pytest.mark.usefixtures("no_disk_cache")  # these tests count compiles


@pytest.fixture
def explain():
    ember.config.update("ember_explain_cache_misses", True)
    yield
    ember.config.update("ember_explain_cache_misses", False)


# -- the seed's loops ---------------------------------------------------------------------

def unjitted_loop_body(prev_i):
    return prev_i + 1


def g_inner_jitted_partial(x, n):
    i = 0
    while i < n:
        i = ember.jit(partial(unjitted_loop_body))(i)
    return x + i


def g_inner_jitted_lambda(x, n):
    i = 0
    while i < n:
        i = ember.jit(lambda x: unjitted_loop_body(x))(i)
    return x + i


def g_inner_jitted_normal(x, n):
    i = 0
    while i < n:
        i = ember.jit(unjitted_loop_body)(i)
    return x + i


@pytest.mark.parametrize("loop, compiles", [(g_inner_jitted_partial, 4),
                                            (g_inner_jitted_lambda, 4),
                                            (g_inner_jitted_normal, 1)])
def test_seed_loops_compile_counts(loop, compiles):
    ember.clear_caches()
    with ember.count_events("compile") as n:
        assert int(loop(10, 4)) == 14
    assert n() == compiles


def test_clear_caches_drops_every_executable():
    f = ember.jit(lambda x: x * 3)
    f(1.0)
    x = ember.device_put(np.ones(3, np.float32))
    f(x), f(x)  # the latest call, matched by identity
    jnp.exp(np.ones(2, np.float32))
    ember.clear_caches()
    with ember.count_events("compile") as n, ember.count_events("eager_compile") as e:
        f(1.0)
        assert_close(f(x), np.full(3, 3, np.float32))
        jnp.exp(np.ones(2, np.float32))
    assert n() == 2 and e() == 1


# -- explanations --------------------------------------------------------------------------

def test_explain_never_seen_and_changed_type(explain, capfd):
    @ember.jit
    def double(x):
        return 2 * x

    double(jnp.arange(3))
    double(jnp.arange(3))
    double(jnp.arange(3.0))
    err = capfd.readouterr().err
    assert err.count("TRACING CACHE MISS") == 2
    assert "test_caches.py" in err and "(test_explain_never_seen_and_changed_type)" in err
    assert f"never seen function:\n    double id={id(double.fun)} defined at" in err
    assert "for double defined at" in err
    assert "all previously seen cache keys differ. For the closest previous key:" in err
    assert "* at x, now f32[3] and before i32[3]" in err


def test_explain_static_and_structure(explain, capfd):
    f = ember.jit(lambda tree, n: tree["a"] * n, static_argnames="n")
    f({"a": 1.0}, n=4)
    f({"a": 1.0}, n=5)
    f({"a": 1.0, "b": 2.0}, n=5)
    err = capfd.readouterr().err
    assert "different static arguments:\n  * n, now 5 and before 4" in err
    assert "different input pytree structure" in err


def test_log_compiles_one_line_per_compile(capfd):
    ember.config.update("jax_log_compiles", True)  # JAX's name works too
    try:
        ember.jit(lambda x: x - 1)(np.ones(7, np.float32))
    finally:
        ember.config.update("ember_log_compiles", False)
    lines = [ln for ln in capfd.readouterr().err.splitlines() if "Finished compiling" in ln]
    assert len(lines) == 1 and "['f32[7]']" in lines[0] and " ms" in lines[0]


def test_a_long_compile_says_so_at_info(caplog, monkeypatch):
    monkeypatch.setattr(compilation, "LONG_COMPILE_S", 0.0)  # every compile is long
    with caplog.at_level("INFO", logger="ember"):
        ember.jit(lambda x: x - 2)(np.ones(9, np.float32))
        ember.jit(lambda x: x - 3)(np.ones(9, np.float32))
    notes = [r for r in caplog.records if r.levelname == "INFO"]
    assert len(notes) == 2 and "['f32[9]'] took" in notes[0].getMessage()
    monkeypatch.setattr(compilation, "LONG_COMPILE_S", 60.0)
    caplog.clear()
    with caplog.at_level("INFO", logger="ember"):
        ember.jit(lambda x: x - 4)(np.ones(9, np.float32))
    assert not caplog.records  # a short compile draws nothing


def test_environment_variables_configure(tmp_path):
    code = ("import ember; print(ember.config.read('ember_explain_cache_misses'), "
            "ember.config.read('ember_compilation_cache_max_size'))")
    env = dict(os.environ, EMBER_EXPLAIN_CACHE_MISSES="1",
               EMBER_COMPILATION_CACHE_MAX_SIZE="1234")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True)
    assert out.stdout.split() == ["True", "1234"]
    with pytest.raises(AttributeError, match="known option"):
        ember.config.update("ember_no_such_thing", 1)


FIRST_COMPILES_ON_THREADS = """
import threading, numpy as np, ember
fs = [ember.jit(lambda x, k=k: x * float(k) + 1.0) for k in range(6)]
out = [None] * 6
def go(k):
    out[k] = float(np.asarray(fs[k](np.ones(3, np.float32)))[0])
threads = [threading.Thread(target=go, args=(k,)) for k in range(6)]
for t in threads:
    t.start()
for t in threads:
    t.join()
print(out == [k + 1.0 for k in range(6)])
"""


def test_first_compiles_on_many_threads_at_once():
    """The compiler's one-time setup ran twice when two threads compiled first, and IREE
    aborted the process (\"ireeCompileParseCL called multiple times\"; 1 run in 3 here)."""
    env = dict(os.environ, EMBER_COMPILATION_CACHE_DIR="off")
    for _ in range(2):
        out = subprocess.run([sys.executable, "-c", FIRST_COMPILES_ON_THREADS], env=env,
                             capture_output=True, text=True)
        assert out.returncode == 0 and out.stdout.split() == ["True"], out.stderr[-500:]


# -- persistent cache ----------------------------------------------------------------------

WARM_SCRIPT = """
import ember, ember.numpy as jnp, numpy as np
ember.config.update("ember_log_compiles", True)
def selu(x):
    return 1.05 * jnp.where(x > 0, x, 1.67 * jnp.exp(x) - 1.67)
with ember.count_events("compile") as n, ember.count_events("disk_hit") as hits:
    out = ember.jit(selu)(np.array([-1.0, 2.0], np.float32))
print(n(), hits(), np.asarray(out).tolist())
"""


def test_new_process_loads_from_disk_without_compiling(tmp_path):
    env = dict(os.environ, EMBER_COMPILATION_CACHE_DIR=str(tmp_path / "c"))
    runs = [subprocess.run([sys.executable, "-c", WARM_SCRIPT], env=env, capture_output=True,
                           text=True, check=True) for _ in range(2)]
    first, second = (r.stdout.split(maxsplit=2) for r in runs)
    assert first[:2] == ["1", "0"] and second[:2] == ["0", "1"]
    assert first[2] == second[2]
    assert "Finished compiling jit_selu" in runs[0].stderr
    assert runs[1].stderr == ""  # no compile logged, and no other noise
    assert oct((tmp_path / "c").stat().st_mode & 0o777) == "0o700"


def _compile_one(fun, *args):
    with ember.count_events("compile") as n:
        out = ember.jit(fun)(*args)
    return n(), out


def _entry(root):
    (path,) = root.glob("*.vmfb")
    return path


def test_corrupt_or_truncated_entries_are_replaced(disk):
    def f(x):
        return x * 4 + 1

    x = np.arange(3, dtype=np.float32)
    assert _compile_one(f, x)[0] == 1
    path = _entry(disk)
    good = path.read_bytes()
    for bad in (good[: len(good) // 2], good[:-1] + bytes([good[-1] ^ 1]), b"not ember"):
        path.write_bytes(bad)
        ember.clear_caches()
        with pytest.warns(CacheWarning, match="ignoring and replacing"):
            compiles, out = _compile_one(f, x)
        assert compiles == 1
        assert_close(out, x * 4 + 1)
        assert path.read_bytes() == good  # replaced by a valid entry
    ember.clear_caches()
    assert _compile_one(f, x)[0] == 0


def test_entries_writable_by_others_are_refused(disk):
    def f(x):
        return x - 7

    x = np.ones(2, np.float32)
    _compile_one(f, x)
    os.chmod(_entry(disk), 0o666)
    ember.clear_caches()
    with pytest.warns(CacheWarning, match="writable by others"):
        assert _compile_one(f, x)[0] == 1


@pytest.mark.skipif(os.getuid() != 0, reason="giving a file to another user needs root")
def test_entries_owned_by_another_user_are_refused(disk):
    def f(x):
        return x - 9

    x = np.ones(2, np.float32)
    _compile_one(f, x)
    os.chown(_entry(disk), 12345, 12345)
    ember.clear_caches()
    with pytest.warns(CacheWarning, match="owned by another user"):
        assert _compile_one(f, x)[0] == 1


def test_a_shared_directory_is_not_used(tmp_path):
    root = tmp_path / "shared"
    root.mkdir(mode=0o777)
    os.chmod(root, 0o777)
    with pytest.warns(CacheWarning, match="must be owned by you and private"):
        cache = DiskCache(root)
    assert not cache.usable


def test_lru_eviction_keeps_the_cache_under_its_cap(tmp_path):
    cache = DiskCache(tmp_path / "c", max_bytes=2500)
    keys = [DiskKey((("ir", f"program {i}"),)) for i in range(4)]
    for i, key in enumerate(keys):
        cache.put(key, bytes(1000))
        if i == 1:
            os.utime(cache._entry(keys[0]), (1, 1))  # keys[0] least recently used
    kept = [k for k in keys if cache.get(k)[0] is not None]
    assert keys[0] not in kept and keys[-1] in kept and len(kept) == 2


def test_puts_scan_the_directory_only_near_the_cap(tmp_path, monkeypatch):
    """Scanning every file on every put made a run's compiles quadratic in the entries."""
    cache = DiskCache(tmp_path / "c", max_bytes=64_000)
    scans = []
    files = cache._files
    monkeypatch.setattr(cache, "_files", lambda: scans.append(1) or files())
    keys = [DiskKey((("ir", f"program {i}"),)) for i in range(40)]
    for key in keys:
        cache.put(key, bytes(1000))
    # the first put, then once a sixteenth of the cap (4,000 bytes) was written since
    assert 8 <= len(scans) <= 14
    assert all(cache.get(k)[0] is not None for k in keys[-20:])
    cache.put(DiskKey((("ir", "big"),)), bytes(60_000))  # past the cap: scanned and evicted
    ours = [p for p in (tmp_path / "c").iterdir() if disk_cache._OURS.fullmatch(p.name)]
    assert sum(p.stat().st_size for p in ours) <= 64_000


def test_disk_miss_says_which_part_changed(tmp_path):
    cache = DiskCache(tmp_path / "c")
    old = DiskKey((("ir", "p"), ("iree_version", "3.12")))
    cache.put(old, b"x")
    payload, why = cache.get(DiskKey((("ir", "p"), ("iree_version", "3.13"))))
    assert payload is None
    assert "iree_version now '3.13' and before '3.12'" in why


def test_cache_key_names_every_part():
    names = [n for n, _ in pipeline.cache_key("module {}").parts]
    assert names == ["ir", "abi", "pipeline", "ember_version", "iree_version", "target", "flags",
                     "cpu"]
    assert compilation.cache_dir() is None  # conftest turned it off for the suite


def _hammer(root: str, n: int) -> None:
    cache = DiskCache(root)
    key = DiskKey((("ir", "shared"),))
    for i in range(n):
        cache.put(key, bytes([i % 256]) * 50_000)
        payload, _ = cache.get(key)
        assert payload is not None and len(payload) == 50_000


def test_two_processes_writing_the_same_entry(tmp_path):
    import multiprocessing

    root = str(tmp_path / "c")
    DiskCache(root)
    procs = [multiprocessing.get_context("spawn").Process(target=_hammer, args=(root, 60))
             for _ in range(2)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
    assert [p.exitcode for p in procs] == [0, 0]
    assert not list((tmp_path / "c").glob(".tmp-*"))


# -- threads -------------------------------------------------------------------------------

def test_threads_racing_on_a_new_signature_compile_once():
    f = ember.jit(lambda x: jnp.sqrt(x * x + 1))
    x = np.arange(13, dtype=np.float32)
    results, errors = [], []
    barrier = threading.Barrier(8)

    def run():
        try:
            barrier.wait()
            results.append(np.asarray(f(x)))
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    with ember.count_events("compile") as n:
        threads = [threading.Thread(target=run) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert not errors and n() == 1 and len(results) == 8
    for r in results:
        assert_close(r, np.sqrt(x * x + 1))


def test_ctrl_c_in_a_compile_does_not_interrupt_a_thread_waiting_for_it():
    """The waiter compiles for itself; only the interrupted thread sees KeyboardInterrupt."""
    traces, started = [], threading.Event()

    def fun(x):
        traces.append(1)
        if len(traces) == 1:
            started.set()
            time.sleep(0.5)  # the other thread starts waiting for this compile meanwhile
            raise KeyboardInterrupt
        return x + 1

    f = ember.jit(fun)
    x = np.arange(3, dtype=np.float32)
    waited: list = []

    def waiter():
        started.wait(10)
        try:
            waited.append(np.asarray(f(x)))
        except BaseException as e:  # noqa: BLE001 - what the test looks for
            waited.append(e)

    t = threading.Thread(target=waiter)
    t.start()
    with pytest.raises(KeyboardInterrupt):
        f(x)
    t.join(60)
    assert len(waited) == 1 and not isinstance(waited[0], BaseException), waited
    assert_close(waited[0], x + 1)
    assert len(traces) == 2


# -- staged API and pytrees ----------------------------------------------------------------

def test_shape_dtype_struct_eval_shape_and_signature():
    spec = ember.ShapeDtypeStruct((2, 3), np.float32)
    out = ember.eval_shape(lambda x, y: (x @ y, x.sum()), spec, np.ones((3, 4)))
    assert out[0].shape == (2, 4) and out[1].shape == () and out[1].dtype == np.float32
    compiled = ember.jit(lambda x: x * 2).lower(spec).compile()
    assert compiled.signature() == "(f32[2,3]) -> (f32[2,3])"
    assert_close(compiled(np.ones((2, 3), np.float32)), np.full((2, 3), 2, np.float32))
    with pytest.raises(TypeError, match="requires arguments matching its compiled signature"):
        compiled(np.ones((3, 2), np.float32))
    with pytest.raises(TypeError, match="ShapeDtypeStruct has no data"):
        ember.jit(lambda x: x)(spec)


def test_register_static():
    @ember.tree_util.register_static
    class Mode:
        def __init__(self, name):
            self.name = name

        def __eq__(self, other):
            return isinstance(other, Mode) and other.name == self.name

        def __hash__(self):
            return hash(self.name)

    f = ember.jit(lambda x, mode: x * 2 if mode.name == "double" else x)
    with ember.count_events("compile") as n:
        assert int(f(3, Mode("double"))) == 6
        assert int(f(3, Mode("double"))) == 6
        assert int(f(3, Mode("same"))) == 3
    assert n() == 2
    leaves = ember.tree_util.tree_leaves({"m": Mode("x"), "v": 1})
    assert leaves == [1]


def test_key_paths_in_structure_messages():
    with pytest.raises(TypeError, match=r"at path batch\['labels'\]\[1\]"):
        ember.jit(lambda batch: batch)({"labels": [1, "two"]})


def test_compile_released_the_gil_for_other_threads():
    # While one thread compiles, another keeps running Python.
    ticks = []
    stop = threading.Event()

    def spin():
        while not stop.is_set():
            ticks.append(1)

    t = threading.Thread(target=spin)
    t.start()
    try:
        before = len(ticks)
        ember.jit(lambda x: jnp.tanh(x) * 3)(np.ones(11, np.float32))
        during = len(ticks) - before
    finally:
        stop.set()
        t.join()
    assert during > 1000


def test_json_sidecar_is_readable(disk):
    ember.jit(lambda x: x + 42)(np.ones(2, np.float32))
    (sidecar,) = disk.glob("*.key.json")
    parts = json.loads(sidecar.read_text())
    assert set(parts) == {"ir", "abi", "pipeline", "ember_version", "iree_version", "target",
                          "flags", "cpu"}


def test_warnings_are_not_raised_on_a_clean_hit(disk):
    f = ember.jit(lambda x: x / 3)
    f(np.ones(2, np.float32))
    ember.clear_caches()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with ember.count_events("disk_hit") as hits:
            f(np.ones(2, np.float32))
    assert hits() == 1


def test_a_vanished_cache_directory_costs_a_compile_not_a_crash(disk):
    import shutil

    ember.jit(lambda x: x + 5)(np.ones(2, np.float32))
    shutil.rmtree(disk)
    compiles, out = _compile_one(lambda x: x + 6, np.ones(2, np.float32))
    assert compiles == 1
    assert_close(out, np.full(2, 7, np.float32))


def test_every_setting_is_in_the_key_or_declared_not_to_be():
    from ember import config

    assert set(config._DEFAULTS) == set(config.IN_KEY) | set(config.NOT_IN_KEY)
    assert not set(config.IN_KEY) & set(config.NOT_IN_KEY)


def test_settings_that_change_tracing_change_the_key():
    """A function cached before ember.config.update(...) of a setting in the key is traced
    again after it: with x64 on, arange is int64; another default device compiles anew."""
    f = ember.jit(lambda x: x.sum() + jnp.arange(3))
    x, on_device = np.ones(2, np.int8), ember.device_put(np.ones(2, np.int8))
    assert np.asarray(f(x)).dtype == np.int32
    assert np.asarray(f(on_device)).dtype == np.int32  # the fast path (ember.Arrays only)
    try:
        ember.config.update("ember_enable_x64", True)
        assert np.asarray(f(x)).dtype == np.int64
        assert np.asarray(f(on_device)).dtype == np.int64
        ember.config.update("ember_enable_x64", False)
        ember.config.update("ember_default_device", "cpu:x86-64-v3")
        with ember.count_events("compile") as n:
            assert_close(f(x), np.arange(3, dtype=np.int32) + 2)
            assert_close(f(on_device), np.arange(3, dtype=np.int32) + 2)
        assert n() == 1
    finally:
        ember.config.update("ember_enable_x64", False)
        ember.config.update("ember_default_device", "cpu")


def test_eager_ops_run_where_their_operands_are():
    """Eager ops (single rows and composites alike) compile for the device their operands
    are on; host data goes to the default device, which need not be the CPU."""
    y = ember.device_put(np.ones(3, np.float32))
    try:
        ember.config.update("ember_default_device", "vulkan")
        assert_close(jnp.exp(y), np.full(3, np.e, np.float32))  # one row
        assert_close(jnp.where(y > 0, y, 0.0) + 1, np.full(3, 2, np.float32))  # composites
        with pytest.raises(RuntimeError, match="needs a vulkan device|no vulkan device"):
            jnp.exp(np.ones(3, np.float32))
    finally:
        ember.config.update("ember_default_device", "cpu")
