"""JAX's public surface against Ember's (issue #59): every public name of the namespaces
below exists in Ember's matching module with a compatible signature, or is refused on
purpose (api_refusals.txt, each with its reason), or is missing.

    python tests/api_surface.py                  # the coverage table, then what is missing
    python tests/api_surface.py --markdown FILE  # the table as Markdown (docs/testing.md's)

test_api_surface.py runs it in the suite. A name's signature is compatible when Ember's
function takes every parameter JAX's does, by the same name (or takes **kwargs), with the
positional ones in the same order, and the same default where both have a plain one
(JAX's `out`, which it takes only to refuse, is left out).
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import sys
import types
from dataclasses import dataclass, field
from pathlib import Path

NAMESPACES = ("jax", "jax.numpy", "jax.numpy.linalg", "jax.numpy.fft", "jax.lax", "jax.nn",
              "jax.nn.initializers", "jax.random", "jax.tree", "jax.tree_util", "jax.ops",
              "jax.dtypes", "jax.scipy.special", "jax.scipy.linalg", "jax.scipy.stats",
              "jax.scipy.signal", "jax.scipy.fft", "jax.scipy.ndimage", "jax.scipy.optimize",
              "jax.image", "jax.debug", "jax.sharding")
REFUSALS = Path(__file__).with_name("api_refusals.txt")


@dataclass
class Namespace:
    name: str  # JAX's: "jax.numpy"
    present: list[str] = field(default_factory=list)
    incompatible: dict[str, str] = field(default_factory=dict)  # name -> what differs
    refused: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)

    @property
    def total(self) -> int:
        return len(self.present) + len(self.incompatible) + len(self.refused) + len(
            self.missing)

    @property
    def covered(self) -> float:
        """Present with a compatible signature, or refused with a reason, per name."""
        return (len(self.present) + len(self.refused)) / max(self.total, 1)


def ember_name(jax_name: str) -> str:
    return "ember" + jax_name[len("jax"):]


def public(module: types.ModuleType) -> list[str]:
    names = getattr(module, "__all__", None) or dir(module)
    return sorted(n for n in names if not n.startswith("_")
                  and not isinstance(getattr(module, n, None), types.ModuleType))


def namespaces() -> list[str]:
    """NAMESPACES, with jax.scipy.stats' distributions (jax.scipy.stats.norm, ...)."""
    stats = importlib.import_module("jax.scipy.stats")
    dists = sorted(f"jax.scipy.stats.{n}" for n in dir(stats)
                   if not n.startswith("_") and isinstance(getattr(stats, n), types.ModuleType))
    return [*NAMESPACES, *dists]


def read_refusals(path: Path = REFUSALS) -> dict[str, str]:
    """`jax.numpy.name: reason` lines (# comments): qualified name -> reason."""
    refused = {}
    for line in path.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, _, reason = line.partition(":")
            refused[name.strip()] = reason.strip()
    return refused


def _plain(default) -> bool:
    return default is None or isinstance(default, (bool, int, float, str))


# Parameters JAX takes only to refuse anything but their default (NumPy's `out`).
IGNORED = frozenset({"out"})


def incompatibility(theirs, ours) -> str:
    """What Ember's `ours` lacks of JAX's `theirs` signature ("" when compatible, or when
    either signature cannot be read: a class, a builtin)."""
    try:
        want, got = inspect.signature(theirs), inspect.signature(ours)
    except (TypeError, ValueError):
        return ""
    params = got.parameters
    takes_kwargs = any(p.kind is p.VAR_KEYWORD for p in params.values())
    takes_args = any(p.kind is p.VAR_POSITIONAL for p in params.values())
    positional = [p for p in params.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    problems, k = [], 0
    for name, p in want.parameters.items():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) or name in IGNORED:
            continue
        mine = params.get(name)
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            if k < len(positional):
                if p.kind is p.POSITIONAL_ONLY:
                    mine = positional[k]  # its name is no part of the interface
                elif positional[k].name != name:
                    problems.append(f"parameter {k} is {positional[k].name}, not {name}")
            elif not takes_args:
                problems.append(f"no parameter {name}")
                mine = None
            k += 1
        elif mine is None and not takes_kwargs:
            problems.append(f"no parameter {name}")
        if mine is None or p.default is p.empty:
            continue
        if mine.default is p.empty:
            problems.append(f"{name} has no default (JAX's {p.default!r})")
        elif _plain(p.default) and _plain(mine.default) and p.default != mine.default:
            problems.append(f"{name}={mine.default!r}, JAX's {p.default!r}")
    return "; ".join(problems)


def survey(refused: dict[str, str] | None = None) -> list[Namespace]:
    refused = read_refusals() if refused is None else refused
    out = []
    for ns in namespaces():
        theirs = importlib.import_module(ns)
        try:
            ours = importlib.import_module(ember_name(ns))
        except ImportError:
            ours = None
        entry = Namespace(ns)
        for name in public(theirs):
            qualified = f"{ns}.{name}"
            if ours is not None and hasattr(ours, name):
                why = incompatibility(getattr(theirs, name), getattr(ours, name))
                if why:
                    entry.incompatible[name] = why
                else:
                    entry.present.append(name)
            elif qualified in refused:
                entry.refused.append(name)
            else:
                entry.missing.append(name)
        out.append(entry)
    return out


def table(entries: list[Namespace]) -> str:
    rows = ["| JAX namespace | names | in Ember | signature differs | refused | missing | "
            "covered |", "|---|---:|---:|---:|---:|---:|---:|"]
    total = [0, 0, 0, 0, 0]
    for e in entries:
        counts = [e.total, len(e.present), len(e.incompatible), len(e.refused), len(e.missing)]
        total = [a + b for a, b in zip(total, counts, strict=True)]
        rows.append(f"| `{e.name}` | " + " | ".join(map(str, counts)) +
                    f" | {e.covered:.0%} |")
    covered = (total[1] + total[3]) / max(total[0], 1)
    rows.append("| all | " + " | ".join(map(str, total)) + f" | {covered:.0%} |")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--markdown", type=Path, help="write the table to this file")
    args = parser.parse_args(argv)
    entries = survey()
    print(table(entries))
    for e in entries:
        if e.missing:
            print(f"\n{e.name} lacks {len(e.missing)}: {', '.join(e.missing)}")
        for name, why in e.incompatible.items():
            print(f"{e.name}.{name}: {why}")
    if args.markdown:
        args.markdown.write_text(table(entries) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
