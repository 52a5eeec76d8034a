import os
from pathlib import Path

# The suite keeps compiled modules in a persistent cache of its own, so a re-run compiles only
# what changed (an entry's key holds Ember's compiler sources and IREE's version: stale code is
# never reused). Tests that count compiles turn it off (`no_disk_cache`); the tests of that
# cache use a directory of their own (`disk`).
os.environ.setdefault("EMBER_COMPILATION_CACHE_DIR", str(
    Path(__file__).resolve().parent.parent / ".pytest_cache" / "ember-compiled"))

import pytest
from hypothesis import HealthCheck, settings

# Each new shape or dtype is a fresh IREE compile (~0.5 s): keep example counts modest and
# shapes drawn from small sets, so values vary freely while compiles stay bounded.
# "ci" (the default) is derandomized: CI sees the same examples every run, so it is red only
# when the code changed. "deep" draws fresh random examples, many more of them:
#   EMBER_HYPOTHESIS_PROFILE=deep make test
_COMMON = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                     HealthCheck.data_too_large])
settings.register_profile("ci", max_examples=20, derandomize=True, **_COMMON)
settings.register_profile("deep", max_examples=200, **_COMMON)
# "brief": .ci/run's second pass of the runtime tier, on code generated for an older CPU
# (EMBER_CPU=haswell). It checks that CPU's code for every test's programs; the random
# shapes and values are the first pass's job, so it draws a quarter of the examples.
settings.register_profile("brief", max_examples=5, derandomize=True, **_COMMON)
PROFILE = os.environ.get("EMBER_HYPOTHESIS_PROFILE", "ci")
settings.load_profile(PROFILE)


# Tiers (`pytest -m unit`, ...): `unit` compiles nothing (checked: IREE refuses to run under
# it), `compile` compiles without running, `runtime` runs compiled code (every test of a file
# not listed), `gpu` needs a GPU device.
TIERS = {"test_layout.py": "unit", "test_dialect.py": "unit", "test_fuse.py": "compile"}


@pytest.hookimpl(tryfirst=True)  # before -m selects by them
def pytest_collection_modifyitems(items) -> None:
    for item in items:
        if not any(item.get_closest_marker(t) for t in ("unit", "compile", "runtime", "gpu")):
            item.add_marker(TIERS.get(item.path.name, "runtime"))


@pytest.fixture(autouse=True)
def _unit_compiles_nothing(request, monkeypatch):
    if request.node.get_closest_marker("unit"):
        from ember.compiler import iree_driver

        def refuse(*args, **kwargs):
            raise AssertionError("a `unit` test compiled a module: mark it runtime/compile")

        monkeypatch.setattr(iree_driver, "compile_text", refuse)
    yield


def few_examples(n: int = 4) -> settings:
    """For suites of many tests where nearly every example is a fresh compile (one per
    function, shape and dtype): `n` examples in CI, ten times as many in the deep profile."""
    return settings(max_examples={"ci": n, "brief": max(1, n // 4)}.get(PROFILE, 10 * n))


@pytest.fixture
def disk(tmp_path):
    """The persistent cache on, in a directory of this test's own (the suite runs with it
    off)."""
    import ember

    root = tmp_path / "cache"
    before = ember.config.read("ember_compilation_cache_dir")
    ember.config.update("ember_compilation_cache_dir", str(root))
    yield root
    ember.config.update("ember_compilation_cache_dir", before)


@pytest.fixture
def no_disk_cache():
    """The persistent cache off: every new signature is an IREE compile, counted as one."""
    import ember

    before = ember.config.read("ember_compilation_cache_dir")
    ember.config.update("ember_compilation_cache_dir", "off")
    yield
    ember.config.update("ember_compilation_cache_dir", before)


@pytest.fixture
def jax():
    """JAX, the oracle (a test dependency: never skipped)."""
    import jax

    return jax
