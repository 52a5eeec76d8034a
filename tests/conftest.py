import os

# Tests count compiles: start every run with the persistent cache off; the tests of that cache
# turn it on in a directory of their own.
os.environ.setdefault("EMBER_COMPILATION_CACHE_DIR", "off")

import pytest
from hypothesis import HealthCheck, settings

# Each new shape or dtype is a fresh IREE compile (~0.5 s): keep example counts modest and
# shapes drawn from small sets, so values vary freely while compiles stay bounded.
settings.register_profile(
    "ember", deadline=None, max_examples=int(os.environ.get("EMBER_HYPOTHESIS_EXAMPLES", 20)),
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    derandomize=bool(os.environ.get("CI")))
settings.load_profile("ember")


@pytest.fixture
def jax():
    """JAX as an oracle, when installed (an optional dependency)."""
    return pytest.importorskip("jax")
