"""Functions with derivative rules of their own: `custom_vjp`, `custom_jvp`, `checkpoint`.

Under a trace, a call is one `ember.call` op whose body is the function and whose `key`
names its rule here; the derivative rule of that row (dialect/derivatives.py) asks the
transformation's builder for the rule by key (`b.custom(key)`). Outside every
transformation the call is just its body: ember-canonicalize inlines it. A key lives as
long as the traces that may differentiate it (the most recent `KEEP` calls).
"""

from __future__ import annotations

import functools
import itertools
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any

import optree

from ember import tree_util
from ember.dialect import ops

from .core import Regions, current_trace, defined_at
from .dispatch import bind

_NS = tree_util.NAMESPACE
KEEP = 1 << 14
RULES: OrderedDict[str, Callable] = OrderedDict()
_COUNTER = itertools.count()


def rule(key: str) -> Callable:
    """The rule of an ember.call: `(b, cts, args, free, body) -> [cotangent of each arg,
    then of each free value]`."""
    found = RULES.get(key)
    if found is None:
        raise NotImplementedError(f"the derivative rule {key!r} of an ember.call is no longer "
                                  f"known (more than {KEEP} custom calls were traced since)")
    return found


def _register(kind: str, make_rule: Callable) -> str:
    key = f"{kind}{next(_COUNTER)}"
    RULES[key] = make_rule
    while len(RULES) > KEEP:
        RULES.popitem(last=False)
    return key


def call(fun: Callable, args: tuple, kind: str, make_rule: Callable) -> Any:
    """`fun(*args)` as one ember.call of the current trace."""
    trace = current_trace()
    leaves, in_tree = optree.tree_flatten(args, namespace=_NS)
    leaves = [trace.lift(x) for x in leaves]
    out_tree = []
    name = getattr(fun, "__name__", kind)
    regions = Regions(trace, 1)
    try:
        with regions.trace(0, name, defined_at(fun), [t.aval for t in leaves],
                           [f"{name} argument {i}" for i in range(len(leaves))]) as sub:
            out = fun(*optree.tree_unflatten(in_tree, sub.args))
            out_leaves, tree = optree.tree_flatten(out, namespace=_NS)
            out_tree.append(tree)
            avals = sub.finish(out_leaves)
        key = _register(kind, make_rule(in_tree, tree))
        outs = bind(ops.CALL, *leaves, regions=regions, results=tuple(avals), key=key)
    finally:
        regions.discard()
    return optree.tree_unflatten(out_tree[0], outs)


def _split(args: tuple, nondiff: tuple[int, ...]) -> tuple[tuple, Callable]:
    """The differentiated arguments, and how to put the others back among them."""
    diff = tuple(a for i, a in enumerate(args) if i not in nondiff)

    def full(d: Sequence[Any]) -> tuple:
        it = iter(d)
        return tuple(args[i] if i in nondiff else next(it) for i in range(len(args)))

    return diff, full


def _leaf_cotangents(grads: Any, in_tree: Any, args: list, name: str) -> list:
    leaves, tree = optree.tree_flatten(grads, namespace=_NS, none_is_leaf=True)
    expected = optree.tree_structure(optree.tree_unflatten(in_tree, args), namespace=_NS,
                                     none_is_leaf=True)
    if tree != expected:
        raise TypeError(f"{name}'s bwd must return one cotangent per differentiated argument, "
                        f"structured as the arguments {in_tree}, got {tree}")
    out = []
    for i, (g, x) in enumerate(zip(leaves, args, strict=True)):
        if g is not None:
            g = current_trace().lift(g)
            if g.aval.shape != x.aval.shape:
                raise ValueError(f"{name}'s bwd must return cotangents of the arguments' "
                                 f"shapes, but output {i} is {g.aval.str_short()} for an "
                                 f"input of {x.aval.str_short()}")
            if g.dtype != x.dtype:
                g = bind(ops.CONVERT, g, dtype=x.dtype)
        out.append(g)
    return out


class _Custom:
    """A function with a rule of its own (`kind`: custom_vjp or custom_jvp): under a trace
    each call is an ember.call whose rule `_rule(...)` makes."""

    kind = ""
    rule_name = ""

    def __init__(self, fun: Callable, nondiff_argnums: Sequence[int] = ()):
        functools.update_wrapper(self, fun)
        self.fun, self.nondiff_argnums = fun, tuple(nondiff_argnums)
        self.rule = None

    def __call__(self, *args: Any) -> Any:
        name = getattr(self.fun, "__name__", self.kind)
        if self.rule is None:
            raise AttributeError(f"No {self.rule_name} defined for {self.kind} function "
                                 f"{name} using def{self.rule_name.lower()}.")
        if current_trace() is None:
            return self.fun(*args)
        diff, full = _split(args, self.nondiff_argnums)
        nondiff = [args[i] for i in self.nondiff_argnums]
        return call(lambda *d: self.fun(*full(d)), diff, self.kind,
                     lambda in_tree, out_tree: self._rule(name, nondiff, full, len(diff),
                                                          in_tree, out_tree))

    def _rule(self, name, nondiff, full, count, in_tree, out_tree) -> Callable:
        raise NotImplementedError


class custom_vjp(_Custom):  # noqa: N801 - JAX's name
    """A function with a reverse-mode rule of its own: `f.defvjp(fwd, bwd)`, `fwd(*args) ->
    (out, residuals)`, `bwd(*nondiff_args, residuals, ct) -> a cotangent per argument`."""

    kind, rule_name = "custom_vjp", "VJP"

    def defvjp(self, fwd: Callable, bwd: Callable, symbolic_zeros: bool = False) -> None:
        self.rule = (fwd, bwd)

    def _rule(self, name, nondiff, full, count, in_tree, out_tree) -> Callable:
        fwd, bwd = self.rule

        def vjp(b, cts, leaves, free, body):
            _, residuals = fwd(*full(optree.tree_unflatten(in_tree, leaves)))
            grads = bwd(*nondiff, residuals, optree.tree_unflatten(out_tree, cts))
            if not isinstance(grads, tuple) or len(grads) != count:
                raise TypeError(f"{name}'s bwd must return a tuple of {count} cotangents "
                                f"(one per differentiated argument), got "
                                f"{type(grads).__name__}")
            return _leaf_cotangents(grads, in_tree, leaves, name) + [None] * len(free)
        return vjp


class custom_jvp(_Custom):  # noqa: N801 - JAX's name
    """A function with a forward-mode rule of its own: `f.defjvp(rule)`, `rule(primals,
    tangents) -> (out, tangent_out)`. Reverse mode transposes it (it is linear in the
    tangents)."""

    kind, rule_name = "custom_jvp", "JVP"

    def defjvp(self, jvp: Callable, symbolic_zeros: bool = False) -> Callable:
        self.rule = jvp
        return jvp

    def defjvps(self, *jvps: Callable | None) -> None:
        """One rule per argument, `rule(tangent, out, *primals)`; their sum is the tangent."""
        def jvp(primals, tangents):
            out = self.fun(*primals)
            parts = [f(t, out, *primals) for f, t in zip(jvps, tangents, strict=True)
                     if f is not None]
            return out, functools.reduce(lambda a, c: tree_util.tree_map(
                lambda u, v: u + v, a, c), parts)
        self.rule = jvp

    def _rule(self, name, nondiff, full, count, in_tree, out_tree) -> Callable:
        def vjp(b, cts, leaves, free, body):
            primal = tuple(optree.tree_unflatten(in_tree, leaves))

            def tangent_out(*t):
                _, out = self.rule(*nondiff, primal, tuple(optree.tree_unflatten(in_tree, t)))
                return optree.tree_leaves(out, namespace=_NS)

            grads = b.vjp(tangent_out, [b.scalar(0, x) for x in leaves], cts)
            return [b.dense(g, x) for g, x in zip(grads, leaves, strict=True)] + \
                [None] * len(free)
        return vjp


def checkpoint(fun: Callable, *, prevent_cse: bool = True, policy: Policy | None = None,
               static_argnums: Sequence[int] = ()) -> Callable:
    """`fun`, its intermediate values not kept for the backward pass but computed again
    from its inputs there (rematerialization: memory for time), but for those `policy`
    saves (`checkpoint_policies`: `policy(row, params) -> bool` for each op)."""
    if policy is not None and not callable(policy):
        raise TypeError(f"checkpoint requires a policy from ember.checkpoint_policies (a "
                        f"function of an op's row and params), got {policy!r}")

    def make_rule(in_tree, out_tree):
        def vjp(b, cts, leaves, free, body):
            def delay(x):
                # a value that waits for the cotangents, so what is computed from it is not
                # merged with the forward pass (and runs in the backward pass)
                return b.emit(ops.AFTER, x, *cts)

            def recomputed(*xs):
                if policy is None:
                    return body(*[delay(x) for x in xs])
                return body.mixed(xs, policy, delay)
            return b.vjp(recomputed, [*leaves, *free], cts)
        return vjp

    @functools.wraps(fun)
    def checkpointed(*args: Any) -> Any:
        if current_trace() is None:
            return fun(*args)
        diff, full = _split(args, tuple(static_argnums))
        return call(lambda *d: fun(*full(d)), diff, "checkpoint", make_rule)

    return checkpointed


remat = checkpoint

Policy = Callable[[ops.OpDef, dict], bool]
_NAMED = "name="


def checkpoint_name(x: Any, name: str) -> Any:
    """`x` (a pytree), named for checkpoint policies (`save_only_these_names`)."""
    if current_trace() is None:
        return x

    def make_rule(in_tree, out_tree):
        return lambda b, cts, leaves, free, body: [*cts, *[None] * len(free)]
    leaves, tree = optree.tree_flatten(x, namespace=_NS)
    outs = call(lambda *v: list(v), tuple(leaves), f"{_NAMED}{name}:", make_rule)
    return optree.tree_unflatten(tree, outs)


def _name(row: ops.OpDef, params: dict) -> str | None:
    key = params.get("key", "") if row is ops.CALL else ""
    return key[len(_NAMED):key.rindex(":")] if key.startswith(_NAMED) else None


def _dot(row: ops.OpDef, params: dict) -> bool:
    return row is ops.DOT_GENERAL


class checkpoint_policies:  # noqa: N801 - JAX's name
    """Which values `checkpoint(fun, policy=...)` keeps from the forward pass (the others
    are computed again in the backward pass), as `jax.checkpoint_policies`."""

    @staticmethod
    def everything_saveable(row: ops.OpDef, params: dict) -> bool:
        return True

    @staticmethod
    def nothing_saveable(row: ops.OpDef, params: dict) -> bool:
        return False

    dots_saveable = checkpoint_dots = staticmethod(_dot)

    @staticmethod
    def dots_with_no_batch_dims_saveable(row: ops.OpDef, params: dict) -> bool:
        return row is ops.DOT_GENERAL and not params["lhs_batch"]

    checkpoint_dots_with_no_batch_dims = dots_with_no_batch_dims_saveable

    @staticmethod
    def save_only_these_names(*names: str) -> Policy:
        return lambda row, params: _name(row, params) in names

    @staticmethod
    def save_any_names_but_these(*names: str) -> Policy:
        return lambda row, params: _name(row, params) not in (None, *names)

    @staticmethod
    def save_from_both_policies(first: Policy, second: Policy) -> Policy:
        return lambda row, params: first(row, params) or second(row, params)
