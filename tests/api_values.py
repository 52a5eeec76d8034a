"""The value sweep beside the API diff (issue #59): every function that Ember's and JAX's
matching namespaces (api_surface.py) both have is called on the same arguments, and its
results are compared with JAX's. A name that exists but computes something else is worse
than a missing one.

Arguments are found, not listed, so the sweep grows with the API: each function is called
on every form below that both libraries accept (one float32 matrix inside every function's
domain, two of them, a matrix of edge values, an int32 matrix, a float32 scalar), eagerly;
a form whose results have the same structure, shapes and dtypes in both is compared. The
gradient of the sum of its float results of one matrix is compared too, where JAX has one.
What differs is a finding: it is fixed, or listed with its reason in
api_value_differences.txt.

    python tests/api_values.py [--only NAME] [--namespace jax.numpy]   # the findings
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import sys
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import api_surface
import numpy as np

DIFFERENCES = Path(__file__).with_name("api_value_differences.txt")
# Namespaces whose functions take callables, keys, files or meshes, or print: their values
# are not a function of the arguments above.
SKIPPED = ("jax", "jax.random", "jax.debug", "jax.sharding", "jax.nn.initializers",
           "jax.scipy.optimize")
# Names that register types (tree_util's register_*): called for their effect.
SKIPPED_PREFIXES = ("register_",)


def _forms() -> dict[str, list]:
    rng = np.random.default_rng(0)
    inside = [rng.uniform(0.1, 0.9, (3, 4)).astype(np.float32) for _ in range(2)]
    edges = np.array([[-2.5, -1.0, -0.0, 0.0], [0.5, 1.0, 3.0, 100.0],
                      [np.inf, -np.inf, np.nan, 1e-3]], np.float32)
    return {"matrix": inside[:1], "two matrices": inside, "edge values": [edges],
            "integers": [rng.integers(-5, 6, (3, 4)).astype(np.int32)],
            "scalar": [np.float32(0.3)]}


FORMS = _forms()


@dataclass(frozen=True)
class Finding:
    name: str  # JAX's qualified name: "jax.numpy.sinc"
    form: str
    what: str

    @property
    def key(self) -> str:
        return f"{self.name} [{self.form}]"


def functions(namespace: str) -> Iterator[tuple[str, Callable, Callable]]:
    """(qualified name, Ember's, JAX's) of the functions both have in `namespace`."""
    try:
        ours = importlib.import_module(api_surface.ember_name(namespace))
    except ImportError:
        return
    theirs = importlib.import_module(namespace)
    for name in api_surface.public(theirs):
        f, g = getattr(ours, name, None), getattr(theirs, name)
        if (f is None or not callable(f) or inspect.isclass(f) or inspect.isclass(g)
                or not callable(g) or name.startswith(SKIPPED_PREFIXES)):
            continue
        yield f"{namespace}.{name}", f, g


def _leaves(out) -> list[np.ndarray] | None:
    import jax

    leaves = jax.tree_util.tree_leaves(out)
    if not all(hasattr(x, "shape") or isinstance(x, (bool, int, float, complex))
               for x in leaves):
        return None  # functions, dtypes, strings: nothing to compare
    return [np.asarray(x) for x in leaves]


def differs(ours: list[np.ndarray], theirs: list[np.ndarray]) -> str:
    """What differs beyond float32 rounding of a few operations ("" when nothing does)."""
    if len(ours) != len(theirs):
        return f"{len(ours)} results, JAX {len(theirs)}"
    for k, (a, b) in enumerate(zip(ours, theirs, strict=True)):
        if a.shape != b.shape:
            return f"result {k}: shape {a.shape}, JAX {b.shape}"
        if a.dtype != b.dtype:
            return f"result {k}: dtype {a.dtype}, JAX {b.dtype}"
        if a.dtype.kind in "fc":
            same = np.allclose(a, b, rtol=1e-4, atol=1e-5, equal_nan=True)
        else:
            same = np.array_equal(a, b)
        if not same:
            return f"result {k}: values differ (Ember {a.ravel()[:4]}, JAX {b.ravel()[:4]})"
    return ""


def _call(f: Callable, args: list) -> list[np.ndarray] | None:
    """f's results as arrays, or None where f refuses the arguments."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return _leaves(f(*args))
    except Exception:  # noqa: BLE001 - a form a library refuses is not compared
        return None


def _gradient_differs(f: Callable, g: Callable) -> str:
    """Where both differentiate the sum of a function's float results of one matrix, what
    differs between the gradients ("" when nothing does, or where either cannot)."""
    import jax

    import ember

    (m,) = FORMS["matrix"]
    theirs = _call(jax.grad(lambda a: sum(jax.numpy.sum(x) for x in jax.tree_util.tree_leaves(
        g(a)) if jax.numpy.issubdtype(x.dtype, jax.numpy.floating))), [m])
    if theirs is None:
        return ""
    ours = _call(ember.grad(lambda a: sum(ember.numpy.sum(x) for x in ember.tree_util.tree_leaves(
        f(a)) if x.dtype.kind == "f")), [m])
    if ours is None:
        return "Ember cannot differentiate what JAX can"
    return differs(ours, theirs)


def sweep(namespaces=None, only: str = "", gradients: bool = True
          ) -> tuple[list[Finding], int, list[str]]:
    """The findings, how many (function, form) pairs were compared, and the functions no
    form suits. With `gradients`, a function swept is also differentiated (the sum of its
    float results of one matrix, its "gradient" form) against JAX."""
    findings, compared, unswept = [], 0, []
    for namespace in namespaces or api_surface.namespaces():
        if namespace in SKIPPED:
            continue
        for name, f, g in functions(namespace):
            if only and only not in name:
                continue
            swept = False
            for form, args in FORMS.items():
                theirs = _call(g, args)
                if theirs is None:
                    continue
                ours = _call(f, args)
                if ours is None:
                    findings.append(Finding(name, form, "Ember refuses what JAX accepts"))
                    continue
                swept, compared = True, compared + 1
                what = differs(ours, theirs)
                if what:
                    findings.append(Finding(name, form, what))
            if not swept:
                unswept.append(name)
            elif gradients:
                what = _gradient_differs(f, g)
                if what:
                    findings.append(Finding(name, "gradient", what))
    return findings, compared, unswept


def read_differences(path: Path = DIFFERENCES) -> dict[str, str]:
    """`jax.numpy.name [form]: reason` lines (# comments): key -> reason."""
    out = {}
    for line in path.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            key, _, reason = line.partition("]:")
            out[key + "]"] = reason.strip()
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", default="", help="functions whose name contains this")
    parser.add_argument("--namespace", action="append", help="JAX's name of one (repeatable)")
    args = parser.parse_args(argv)
    findings, compared, unswept = sweep(args.namespace, args.only)
    known = read_differences()
    for f in findings:
        print(f"{f.key}: {f.what}" + ("  (listed)" if f.key in known else ""))
    print(f"{compared} (function, form) pairs compared, {len(findings)} findings "
          f"({sum(f.key not in known for f in findings)} not listed); "
          f"{len(unswept)} functions no form suits")
    return 0


if __name__ == "__main__":
    sys.exit(main())
