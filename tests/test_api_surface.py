"""JAX's public surface against Ember's (api_surface.py): the table in api_coverage.md is the
floor (regenerate it with `python tests/api_surface.py --markdown tests/api_coverage.md`
when names are added), and every refusal names a JAX function Ember lacks, with a reason."""

import importlib
from pathlib import Path

import api_surface
import pytest

pytestmark = pytest.mark.unit
RECORDED = Path(__file__).with_name("api_coverage.md")


@pytest.fixture(scope="module")
def entries():
    return api_surface.survey()


def _recorded() -> dict[str, int]:
    """Namespace -> names present with a compatible signature, as recorded."""
    rows = {}
    for line in RECORDED.read_text().splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if cells and cells[0].startswith("`"):
            rows[cells[0].strip("`")] = int(cells[2])
    return rows


def test_no_namespace_loses_names(entries):
    print("\n" + api_surface.table(entries))
    recorded = _recorded()
    fell = {e.name: (recorded[e.name], len(e.present)) for e in entries
            if e.name in recorded and len(e.present) < recorded[e.name]}
    assert not fell, f"names present before, now missing or incompatible: {fell}"
    assert set(recorded) <= {e.name for e in entries}


def test_refusals_name_jax_functions_ember_lacks():
    for qualified, reason in api_surface.read_refusals().items():
        module, _, name = qualified.rpartition(".")
        assert reason, f"{qualified} is refused without a reason"
        assert hasattr(importlib.import_module(module), name), f"JAX has no {qualified}"
        try:
            ours = importlib.import_module(api_surface.ember_name(module))
        except ImportError:
            continue
        assert not hasattr(ours, name), f"{qualified} is refused but Ember has it"


def test_signatures_are_compared_by_name_order_and_default():
    def theirs(x, /, axis=None, *, keepdims=False, where=None): ...

    def same(a, axis=None, keepdims=False, where=None): ...

    def other_default(x, axis=0, *, keepdims=False, where=None): ...

    def no_where(x, axis=None, *, keepdims=False): ...

    def swapped(x, keepdims=False, axis=None, where=None): ...

    def kwargs(x, axis=None, **kw): ...

    assert api_surface.incompatibility(theirs, same) == ""
    assert api_surface.incompatibility(theirs, kwargs) == ""
    assert "axis=0, JAX's None" in api_surface.incompatibility(theirs, other_default)
    assert api_surface.incompatibility(theirs, no_where) == "no parameter where"
    assert "parameter 1 is keepdims, not axis" in api_surface.incompatibility(theirs, swapped)
