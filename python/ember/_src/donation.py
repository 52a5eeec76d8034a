"""Buffer donation at the jit boundary, with JAX's rules.

Which argument leaves are donated (`donate_argnums` never reaches keyword arguments;
`donate_argnames` reaches a parameter however it is passed; a donated pytree donates every
leaf), how `ember-bufferize`'s decisions become the "not usable" warning, and invalidating
donated arrays after the call.
"""

from __future__ import annotations

import inspect
import warnings
from collections.abc import Sequence
from typing import Any

import optree

from ember import config, tree_util
from ember.runtime import Array

_NS = tree_util.NAMESPACE


def normalize(fun_name: str, sig: inspect.Signature | None, nums: Sequence[int],
              names: Sequence[str]) -> tuple[tuple[int, ...], tuple[str, ...]]:
    """Validated numbers and names; names also donate their parameter when passed by
    position (numbers never reach keyword arguments)."""
    for n in nums:
        if not isinstance(n, int):
            raise TypeError(f"jit of {fun_name} requires donate_argnums to be ints, got {n!r}")
    if sig is None:
        return tuple(nums), tuple(names)
    params = list(sig.parameters.values())
    for name in names:
        if name not in sig.parameters and not any(p.kind == p.VAR_KEYWORD for p in params):
            raise ValueError(f"jit of {fun_name} requires donate_argnames to name its "
                             f"parameters {list(sig.parameters)}, got {name!r}")
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    by_name = tuple(i for i, p in enumerate(positional)
                    if p.name in names and p.kind == p.POSITIONAL_OR_KEYWORD)
    return tuple(sorted(set(nums) | set(by_name))), tuple(names)


def leaf_mask(args: tuple, kwargs: dict, static_nums: set[int], nums: Sequence[int],
              names: Sequence[str]) -> tuple[bool, ...]:
    """For each leaf of the dynamic arguments `(args without statics, kwargs)`: donated?"""
    positions = [i for i in range(len(args)) if i not in static_nums]
    nums = {n % len(args) if n < 0 and args else n for n in nums}
    dyn_args = tuple(args[i] for i in positions)
    dyn_kwargs = {k: v for k, v in kwargs.items()}
    prefix = (tuple(i in nums for i in positions), {k: k in names for k in dyn_kwargs})
    return tuple(optree.broadcast_prefix(prefix, (dyn_args, dyn_kwargs), namespace=_NS))


def unusable(decisions: dict[int, int | str], mask: Sequence[bool], paths: Sequence[str],
             avals: Sequence[Any]) -> list[str]:
    """One line per donated leaf that no result reuses: its path, type and why."""
    lines = []
    for i, donated in enumerate(mask):
        if donated and not isinstance(decisions.get(i), int):
            why = decisions.get(i, "no result of the same shape and dtype")
            lines.append(f"{avals[i].str_short()} at {paths[i]} ({why})")
    return lines


def report(fun_name: str, lines: list[str]) -> None:
    if not lines:
        return
    message = ("Some donated buffers were not usable: " + "; ".join(lines) + f". In {fun_name}"
               ", these arguments are still invalid after the call (donated means gone); "
               "their results get buffers of their own.")
    if config.read("ember_strict_donation"):
        raise ValueError(message + " ember_strict_donation is on: fix the donation or turn "
                         "the option off.")
    warnings.warn(message, UserWarning, stacklevel=4)


def check_distinct(fun_name: str, leaves: Sequence[Any], mask: Sequence[bool],
                   paths: Sequence[str]) -> None:
    """A donated array passed a second time would be read while it is overwritten."""
    first: dict[int, int] = {}
    for i, leaf in enumerate(leaves):
        if type(leaf) is Array:
            j = first.setdefault(id(leaf), i)
            if j != i and (mask[i] or mask[j]):
                raise ValueError(f"{fun_name} was given the same array at {paths[j]} and "
                                 f"{paths[i]}, and one of them is donated: a donated buffer "
                                 f"cannot also be read by the same call. Pass a copy "
                                 f"(x.copy() or jnp.array(x)).")


def take(leaves: Sequence[Any], mask: Sequence[bool], fun_name: str) -> list[Any]:
    """The leaves to pass: each donated array's buffer moves to a new Array for the call,
    and the donated one is invalid before the call starts (a call on another thread that
    reads it afterwards raises rather than read a buffer being overwritten)."""
    why = f"it was donated to {fun_name}"
    return [leaf._donate(why) if donated and type(leaf) is Array else leaf
            for leaf, donated in zip(leaves, mask, strict=True)]
