import os

# Tests count compiles: start every run with the persistent cache off; the tests of that cache
# turn it on in a directory of their own.
os.environ.setdefault("EMBER_COMPILATION_CACHE_DIR", "off")

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
PROFILE = os.environ.get("EMBER_HYPOTHESIS_PROFILE", "ci")
settings.load_profile(PROFILE)


def few_examples(n: int = 4) -> settings:
    """For suites of many tests where nearly every example is a fresh compile (one per
    function, shape and dtype): `n` examples in CI, ten times as many in the deep profile."""
    return settings(max_examples=n if PROFILE == "ci" else 10 * n)


@pytest.fixture
def disk(tmp_path):
    """The persistent cache on, in a directory of this test's own (the suite runs with it
    off)."""
    import ember

    root = tmp_path / "cache"
    ember.config.update("ember_compilation_cache_dir", str(root))
    yield root
    ember.config.update("ember_compilation_cache_dir", "off")


@pytest.fixture
def jax():
    """JAX, the oracle (a test dependency: never skipped)."""
    import jax

    return jax
