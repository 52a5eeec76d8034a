"""Pytrees (backed by `optree`, in Ember's own registry namespace)."""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Sequence
from typing import Any

import optree

NAMESPACE = "ember"


def tree_flatten(tree: Any, is_leaf: Callable | None = None):
    return optree.tree_flatten(tree, is_leaf=is_leaf, namespace=NAMESPACE)


def tree_unflatten(treedef: optree.PyTreeSpec, leaves: Sequence[Any]) -> Any:
    return optree.tree_unflatten(treedef, leaves)


def tree_leaves(tree: Any, is_leaf: Callable | None = None) -> list[Any]:
    return optree.tree_leaves(tree, is_leaf=is_leaf, namespace=NAMESPACE)


def tree_structure(tree: Any, is_leaf: Callable | None = None) -> optree.PyTreeSpec:
    return optree.tree_structure(tree, is_leaf=is_leaf, namespace=NAMESPACE)


def tree_map(f: Callable, tree: Any, *rest: Any, is_leaf: Callable | None = None) -> Any:
    return optree.tree_map(f, tree, *rest, is_leaf=is_leaf, namespace=NAMESPACE)


def tree_flatten_with_path(tree: Any, is_leaf: Callable | None = None,
                           is_leaf_takes_path: bool = False):
    paths, leaves, treedef = optree.tree_flatten_with_path(
        tree, is_leaf=_leaf_test(is_leaf, is_leaf_takes_path), namespace=NAMESPACE)
    return list(zip(paths, leaves, strict=True)), treedef


def tree_leaves_with_path(tree: Any, is_leaf: Callable | None = None,
                          is_leaf_takes_path: bool = False) -> list[tuple[Any, Any]]:
    """(path, leaf) pairs; `is_leaf` takes (path, node) when `is_leaf_takes_path`."""
    return tree_flatten_with_path(tree, is_leaf, is_leaf_takes_path)[0]


def tree_map_with_path(f: Callable, tree: Any, *rest: Any, is_leaf: Callable | None = None,
                       is_leaf_takes_path: bool = False) -> Any:
    """`f(path, leaf, *leaves of rest)` at every leaf of `tree`."""
    pairs, treedef = tree_flatten_with_path(tree, is_leaf, is_leaf_takes_path)
    others = [treedef.flatten_up_to(r) for r in rest]
    return treedef.unflatten([f(path, leaf, *(o[k] for o in others))
                              for k, (path, leaf) in enumerate(pairs)])


def _leaf_test(is_leaf: Callable | None, takes_path: bool) -> Callable | None:
    """optree's is_leaf takes the node alone; a path-taking test gets it through the path
    optree walks with (its tree_flatten_with_path passes none), so it is refused."""
    if is_leaf is not None and takes_path:
        raise NotImplementedError("is_leaf_takes_path=True: Ember's is_leaf takes the node "
                                  "alone; pass is_leaf(node)")
    return is_leaf


_NO_INITIALIZER = object()


def tree_reduce(function: Callable, tree: Any, initializer: Any = _NO_INITIALIZER,
                is_leaf: Callable | None = None) -> Any:
    """functools.reduce of `function` over the leaves, left to right."""
    leaves = tree_leaves(tree, is_leaf)
    if initializer is _NO_INITIALIZER:
        if not leaves:
            raise TypeError("tree_reduce of a tree with no leaves requires an initializer")
        return functools.reduce(function, leaves)
    return functools.reduce(function, leaves, initializer)


def tree_all(tree: Any, *, is_leaf: Callable | None = None) -> bool:
    """Whether every leaf is truthy (bool() of each leaf, as JAX's: an array of more than
    one element raises)."""
    return all(tree_leaves(tree, is_leaf))


def tree_transpose(outer_treedef: optree.PyTreeSpec, inner_treedef: optree.PyTreeSpec | None,
                   pytree_to_transpose: Any) -> Any:
    """A tree of `outer_treedef` whose subtrees all have `inner_treedef` (by default the
    first subtree's) turned into a tree of `inner_treedef` of `outer_treedef` subtrees."""
    subtrees = outer_treedef.flatten_up_to(pytree_to_transpose)
    if inner_treedef is None:
        inner_treedef = tree_structure(subtrees[0]) if subtrees else tree_structure(None)
    columns = [inner_treedef.flatten_up_to(t) for t in subtrees]
    return inner_treedef.unflatten([outer_treedef.unflatten(list(row))
                                    for row in zip(*columns, strict=True)])


def register_pytree_node(nodetype: type, flatten_func: Callable, unflatten_func: Callable
                         ) -> None:
    """JAX's signature: flatten(x) -> (children, aux); unflatten(aux, children) -> x."""
    optree.register_pytree_node(nodetype, flatten_func, unflatten_func, namespace=NAMESPACE)


def register_dataclass(nodetype: type, data_fields: Sequence[str] | None = None,
                       meta_fields: Sequence[str] | None = None) -> type:
    """Register a dataclass: `data_fields` are traced, `meta_fields` are static."""
    if data_fields is None and meta_fields is None:
        fields = dataclasses.fields(nodetype)
        meta_fields = [f.name for f in fields if f.metadata.get("static", False)]
        data_fields = [f.name for f in fields if f.name not in meta_fields]
    data_fields, meta_fields = list(data_fields or ()), list(meta_fields or ())

    def flatten(x):
        return ([getattr(x, n) for n in data_fields],
                tuple(getattr(x, n) for n in meta_fields))

    def unflatten(meta, children):
        return nodetype(**dict(zip(data_fields, children, strict=True)),
                        **dict(zip(meta_fields, meta, strict=True)))

    register_pytree_node(nodetype, flatten, unflatten)
    return nodetype


def register_static(cls: type) -> type:
    """Instances of `cls` become static metadata (part of the cache key, hashed and
    compared), never traced. Usable as a class decorator."""
    register_pytree_node(cls, lambda x: ((), x), lambda aux, _: aux)
    return cls


def keystr(path: Sequence[Any]) -> str:
    """`xs[0]['w']`-style text for an optree path (the first entry names the argument)."""
    return "".join(f"[{p!r}]" for p in path)
