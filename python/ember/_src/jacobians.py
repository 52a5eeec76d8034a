"""Jacobians and Hessians, as JAX builds them: `jacrev` maps the vjp over a standard basis of
the output (one batched backward pass, not one per element), `jacfwd` maps the jvp over a
basis of the inputs. Both take pytrees of inputs (`argnums` an int or a tuple) and outputs:
the result has the output's structure, each leaf holding the input's structure (a tuple of
them for tuple argnums), of shape output shape + input shape.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import optree

from ember import tree_util
from ember.dialect import ops
from ember.dialect.types import ShapedArray

from .ad import _check_argnums, _check_inputs, _staged, jvp, per_function, vjp
from .batching import vmap
from .core import current_trace
from .dispatch import bind, constant

_NS = tree_util.NAMESPACE


def jacrev(fun: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False) -> Callable:
    """The Jacobian of `fun` by reverse mode: the vjp mapped over the output's basis."""
    return _jacobian(fun, argnums, has_aux, "jacrev")


def jacfwd(fun: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False) -> Callable:
    """The Jacobian of `fun` by forward mode: the jvp mapped over the inputs' basis."""
    return _jacobian(fun, argnums, has_aux, "jacfwd")


def hessian(fun: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False
            ) -> Callable:
    """jacfwd(jacrev(fun)), as JAX."""
    return jacfwd(jacrev(fun, argnums, has_aux), argnums, has_aux)


def _jacobian(fun: Callable, argnums: int | Sequence[int], has_aux: bool, mode: str
              ) -> Callable:
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)

    def run(*args: Any) -> Any:
        _check_argnums(nums, len(args), mode)
        trace = current_trace()
        diff = tuple(optree.tree_map(trace.lift, args[i], namespace=_NS) for i in nums)
        _check_inputs(diff, mode, allow_int=False)

        def partial(*d: Any) -> Any:
            full = list(args)
            for i, v in zip(nums, d, strict=True):
                full[i] = v
            return fun(*full)

        in_leaves, in_tree = optree.tree_flatten(diff, namespace=_NS)
        in_avals = [t.aval for t in in_leaves]
        if mode == "jacrev":
            out, pull, *aux = vjp(partial, *diff, has_aux=has_aux)
            out_leaves, out_tree = optree.tree_flatten(out, namespace=_NS)
            out_avals = [t.aval for t in out_leaves]
            basis = optree.tree_unflatten(out_tree, _basis(out_avals))
            rows = optree.tree_leaves(vmap(pull)(basis), namespace=_NS)  # (outs, *in)
            blocks = [[_block(rows[j], o, k, out_avals, a) for j, a in enumerate(in_avals)]
                      for k, o in enumerate(out_avals)]
        else:
            tangents = optree.tree_unflatten(in_tree, _basis(in_avals))

            def push(*t: Any) -> Any:
                return jvp(partial, diff, t, has_aux=has_aux)

            # the value (and aux) per basis vector too: a while loop batches all its carries
            out, cols, *aux = vmap(push)(*tangents)
            out, aux = optree.tree_map(lambda t: t[0], (out, aux), namespace=_NS)
            out_leaves, out_tree = optree.tree_flatten(out, namespace=_NS)
            out_avals = [t.aval for t in out_leaves]
            cols = optree.tree_leaves(cols, namespace=_NS)  # (ins, *out)
            blocks = [[_moved(_block(cols[k], a, j, in_avals, o), a.ndim)
                       for j, a in enumerate(in_avals)] for k, o in enumerate(out_avals)]
        per_out = []
        for row in blocks:
            inner = optree.tree_unflatten(in_tree, row)
            per_out.append(inner[0] if isinstance(argnums, int) else inner)
        jac = optree.tree_unflatten(out_tree, per_out)
        return (jac, aux[0]) if has_aux else jac

    return per_function(fun, (mode, nums, has_aux), lambda: _staged(run))


def _basis(avals: list[ShapedArray]) -> list[Any]:
    """The standard basis of the values `avals` flattened together: one leaf per aval, of
    shape (total size, *shape), an identity in its own rows."""
    total = sum(a.size for a in avals)
    out, offset = [], 0
    for a in avals:
        shape = (total, a.size)
        rows = bind(ops.IOTA, dimension=0, shape=shape, dtype=np.dtype(np.int32))
        cols = bind(ops.IOTA, dimension=1, shape=shape, dtype=np.dtype(np.int32))
        if offset:
            cols = bind(ops.ADD, cols, _scalar(offset, shape))
        eye = bind(ops.CONVERT, bind(ops.COMPARE, rows, cols, direction="EQ"), dtype=a.dtype)
        out.append(bind(ops.RESHAPE, eye, shape=(total, *a.shape)))
        offset += a.size
    return out


def _scalar(value: int, shape: tuple[int, ...]) -> Any:
    return bind(ops.BROADCAST_IN_DIM, constant(np.asarray(value, np.int32)), shape=shape,
                broadcast_dimensions=())


def _block(rows: Any, of: ShapedArray, k: int, avals: list[ShapedArray],
           other: ShapedArray) -> Any:
    """Rows of leaf `k` of `avals` (its part of the flattened basis) out of `rows`
    (total, *other.shape), as of.shape + other.shape."""
    start = sum(a.size for a in avals[:k])
    nd = rows.aval.ndim
    part = bind(ops.SLICE, rows, start_indices=(start,) + (0,) * (nd - 1),
                limit_indices=(start + of.size, *rows.aval.shape[1:]), strides=(1,) * nd)
    return bind(ops.RESHAPE, part, shape=(*of.shape, *other.shape))


def _moved(x: Any, lead: int) -> Any:
    """The first `lead` dims of `x` moved last (input dims after output dims)."""
    nd = x.aval.ndim
    if lead in (0, nd):
        return x
    return bind(ops.TRANSPOSE, x, permutation=(*range(lead, nd), *range(lead)))
