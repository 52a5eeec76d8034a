"""An op-by-op sweep against JAX: every public function of ember.numpy, ember.lax, ember.nn
and ember.scipy.special that JAX also has, under `jit`, at a small and a large size, in one
process; the ratio per function, the median, and the functions over 2x JAX at the large size.

Arguments are found, not listed: each function is tried on one float32 matrix, then on two
(values in (0.1, 0.9), inside every function's domain); the first form both libraries accept
with results of one structure and shape is timed, and its values at the small size are
compared with JAX's (those that differ are listed). A function neither form suits is counted
as not swept (a list of them is printed with `--verbose`), so the sweep grows with the API.

    python benchmarks/ops.py [--only NAME] [--namespace numpy] [--markdown FILE] [--quick]
"""

from __future__ import annotations

import argparse
import inspect
import statistics
import sys
import warnings
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from run import measure  # the same timing as the main table

import ember

try:
    import jax
except ImportError:  # JAX is the optional peer: without it there is nothing to compare
    sys.exit("benchmarks/ops.py compares against JAX: install jax")

SIZES = {"small": (16, 16), "large": (1024, 1024)}
NAMESPACES = ("numpy", "lax", "nn", "scipy.special")


@dataclass
class Row:
    namespace: str
    name: str
    arity: int
    seconds: dict[str, tuple[float, float]]  # size -> (Ember, JAX)

    def ratio(self, size: str) -> float:
        ours, theirs = self.seconds[size]
        return ours / theirs


def _module(root, path: str):
    for part in path.split("."):
        root = getattr(root, part)
    return root


def functions(namespace: str) -> list[tuple[str, Callable, Callable]]:
    """(name, Ember's, JAX's) for the public functions of `namespace` both have."""
    import jax.scipy.special  # noqa: F401

    import ember.scipy.special  # noqa: F401 - makes the submodule an attribute

    ours, theirs = _module(ember, namespace), _module(jax, namespace)
    out = []
    for name in sorted(dir(ours)):
        f, g = getattr(ours, name, None), getattr(theirs, name, None)
        if name.startswith("_") or g is None or not callable(f) or inspect.isclass(f):
            continue
        if inspect.ismodule(f):
            continue
        out.append((name, f, g))
    return out


def _arrays(shape: tuple[int, ...], count: int) -> list[np.ndarray]:
    rng = np.random.default_rng(0)
    return [rng.uniform(0.1, 0.9, shape).astype(np.float32) for _ in range(count)]


def _leaves(out) -> list[np.ndarray]:
    return [np.asarray(x) for x in jax.tree_util.tree_leaves(out)]


def _form(f: Callable, g: Callable) -> tuple[int, str] | None:
    """How many matrices both accept (1 or 2) with results of one structure and shape, at
    the small size, and how the values compare ("" when they agree)."""
    for arity in (1, 2):
        args = _arrays(SIZES["small"], arity)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                ours = _leaves(ember.jit(f)(*args))
                theirs = _leaves(jax.jit(g)(*args))
        except Exception:  # noqa: BLE001 - a form either library refuses is not this one
            continue
        if ours and [x.shape for x in ours] == [x.shape for x in theirs]:
            return arity, _differs(ours, theirs)
    return None


def _differs(ours: list[np.ndarray], theirs: list[np.ndarray]) -> str:
    """Where the values disagree beyond float32 rounding of a few operations."""
    for k, (a, b) in enumerate(zip(ours, theirs, strict=True)):
        if a.dtype != b.dtype:
            return f"result {k}: dtype {a.dtype}, JAX {b.dtype}"
        if a.dtype.kind in "fc":
            ok = np.allclose(a, b, rtol=1e-4, atol=1e-5, equal_nan=True)
        else:
            ok = np.array_equal(a, b)
        if not ok:
            return f"result {k}: values differ"
    return ""


def _timed(f: Callable, g: Callable, arity: int, shape: tuple[int, ...], rounds: int
           ) -> tuple[float, float]:
    host = _arrays(shape, arity)
    ours, theirs = ember.jit(f), jax.jit(g)
    e_args = [ember.device_put(x) for x in host]
    j_args = [jax.device_put(x) for x in host]
    number = 20 if shape == SIZES["small"] else 3
    times = measure({"ember": lambda: ours(*e_args), "jax": lambda: theirs(*j_args)},
                    number, rounds)
    return statistics.median(times["ember"]), statistics.median(times["jax"])


def sweep(namespaces, only: str, rounds: int, verbose: bool
          ) -> tuple[list[Row], list[str], list[str]]:
    """The rows timed, the functions not swept, and those whose values differ from JAX's."""
    rows, skipped, mismatched = [], [], []
    for namespace in namespaces:
        for name, f, g in functions(namespace):
            if only and only not in name:
                continue
            form = _form(f, g)
            if form is None:
                skipped.append(f"{namespace}.{name}")
                continue
            arity, differs = form
            if differs:
                mismatched.append(f"{namespace}.{name} ({differs})")
            try:
                seconds = {size: _timed(f, g, arity, shape, rounds)
                           for size, shape in SIZES.items()}
            except Exception as e:  # noqa: BLE001 - a large size either refuses: reported
                skipped.append(f"{namespace}.{name} ({type(e).__name__} at the large size)")
                continue
            row = Row(namespace, name, arity, seconds)
            rows.append(row)
            if verbose:
                print(f"{namespace}.{name}: {row.ratio('small'):.2f} small, "
                      f"{row.ratio('large'):.2f} large", file=sys.stderr, flush=True)
    return rows, skipped, mismatched


def _fmt(seconds: float) -> str:
    return f"{seconds * 1e6:.1f} us" if seconds < 1e-3 else f"{seconds * 1e3:.2f} ms"


def table(rows: list[Row], skipped: list[str]) -> str:
    lines = ["| function | args | small: Ember | JAX | Ember/JAX | large: Ember | JAX | "
             "Ember/JAX |", "|---|---|---|---|---|---|---|---|"]
    for r in sorted(rows, key=lambda r: -r.ratio("large")):
        (es, js), (el, jl) = r.seconds["small"], r.seconds["large"]
        lines.append(f"| {r.namespace}.{r.name} | {r.arity} | {_fmt(es)} | {_fmt(js)} | "
                     f"{r.ratio('small'):.2f} | {_fmt(el)} | {_fmt(jl)} | "
                     f"{r.ratio('large'):.2f} |")
    if rows:
        small = statistics.median(r.ratio("small") for r in rows)
        large = statistics.median(r.ratio("large") for r in rows)
        over = [f"{r.namespace}.{r.name}" for r in rows if r.ratio("large") > 2]
        lines += ["", f"{len(rows)} functions swept, {len(skipped)} not (no form both accept)."
                  f" Median Ember/JAX: {small:.2f} small, {large:.2f} large. Over 2x at the "
                  f"large size: {len(over)}" + (f" ({', '.join(over)})" if over else "") + "."]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", default="", help="the functions whose name contains this")
    parser.add_argument("--namespace", action="append", choices=NAMESPACES,
                        help="sweep only these (repeatable; default: all)")
    parser.add_argument("--quick", action="store_true", help="3 rounds, not 7")
    parser.add_argument("--markdown", default=None, help="also write the table here")
    parser.add_argument("--verbose", action="store_true",
                        help="each function's ratios as it goes, and the ones not swept")
    args = parser.parse_args(argv)
    rows, skipped, mismatched = sweep(args.namespace or NAMESPACES, args.only,
                                      3 if args.quick else 7, args.verbose)
    text = table(rows, skipped)
    if mismatched:
        text += ("\n\nValues unlike JAX's at the small size (float32 in (0.1, 0.9)): "
                 + "; ".join(mismatched) + ".")
    print(text)
    if args.verbose and skipped:
        print("\nnot swept: " + ", ".join(skipped))
    if args.markdown:
        with open(args.markdown, "w") as out:
            out.write(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
