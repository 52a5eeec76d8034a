"""Pytrees (backed by `optree`, in Ember's own registry namespace)."""

from __future__ import annotations

import dataclasses
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


def tree_flatten_with_path(tree: Any, is_leaf: Callable | None = None):
    paths, leaves, treedef = optree.tree_flatten_with_path(tree, is_leaf=is_leaf,
                                                           namespace=NAMESPACE)
    return list(zip(paths, leaves, strict=True)), treedef


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
