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
    """`xs[0]['w']`-style text for a path: optree's entries in brackets, JAX-style keys
    (SequenceKey, DictKey, GetAttrKey, FlattenedIndexKey) as they print."""
    keys = (SequenceKey, DictKey, GetAttrKey, FlattenedIndexKey)
    return "".join(str(p) if isinstance(p, keys) else f"[{p!r}]" for p in path)


# ---------------------------------------------------------------- keys, treedefs, registration

PyTreeDef = optree.PyTreeSpec


@dataclasses.dataclass(frozen=True)
class SequenceKey:
    """A path entry: the index into a list or tuple."""

    idx: int

    def __str__(self) -> str:
        return f"[{self.idx!r}]"


@dataclasses.dataclass(frozen=True)
class DictKey:
    """A path entry: the key into a dict."""

    key: Any

    def __str__(self) -> str:
        return f"[{self.key!r}]"


@dataclasses.dataclass(frozen=True)
class GetAttrKey:
    """A path entry: the attribute of an object (a namedtuple's field, a dataclass's)."""

    name: str

    def __str__(self) -> str:
        return f".{self.name}"


@dataclasses.dataclass(frozen=True)
class FlattenedIndexKey:
    """A path entry: the position among a node's children, where the node names none."""

    key: int

    def __str__(self) -> str:
        return f"[<flat index {self.key}>]"


KeyEntry = Any  # one of the four above (or a registered node's own)
KeyPath = tuple  # of KeyEntry


def _key(entry: Any, kind: Any) -> Any:
    """The JAX-style key for one of optree's path entries."""
    if kind == optree.PyTreeKind.DICT or kind == optree.PyTreeKind.ORDEREDDICT or (
            kind == optree.PyTreeKind.DEFAULTDICT):
        return DictKey(entry)
    if kind in (optree.PyTreeKind.TUPLE, optree.PyTreeKind.LIST, optree.PyTreeKind.DEQUE):
        return SequenceKey(entry)
    if isinstance(entry, str):
        return GetAttrKey(entry)
    return FlattenedIndexKey(entry) if isinstance(entry, int) else entry


def all_leaves(iterable: Any, is_leaf: Callable | None = None) -> bool:
    """Whether every element of `iterable` is a leaf."""
    return optree.all_leaves(iterable, is_leaf=is_leaf, namespace=NAMESPACE)


def is_tree_node(typ: type) -> bool:
    """Whether values of `typ` are pytree nodes (registered, or built in); False for what is
    not a type, as JAX's."""
    if not isinstance(typ, type):
        return False
    return optree.register_pytree_node.get(typ, namespace=NAMESPACE) is not None


def flatten_one_level(tree: Any) -> tuple[list[Any], Any]:
    """The node's children and its aux data; ValueError for a leaf."""
    one = _one_level(tree)
    return tuple(one.children), one.metadata


def flatten_one_level_with_keys(tree: Any) -> tuple[list[tuple[Any, Any]], Any]:
    """The node's (key, child) pairs and its aux data; ValueError for a leaf."""
    one = _one_level(tree)
    kind = tree_structure(tree).kind
    return [(_key(e, kind), c) for e, c in zip(one.entries, one.children, strict=True)], \
        one.metadata


def _one_level(tree: Any):
    if optree.treespec_is_leaf(tree_structure(tree)):
        raise ValueError(f"flatten_one_level requires a pytree node, got a leaf of type "
                         f"{type(tree).__name__}")
    return optree.tree_flatten_one_level(tree, namespace=NAMESPACE)


def treedef_children(treedef: PyTreeDef) -> list[PyTreeDef]:
    return optree.treespec_children(treedef)


def treedef_is_leaf(treedef: PyTreeDef) -> bool:
    return optree.treespec_is_leaf(treedef)


def treedef_tuple(treedefs: Any) -> PyTreeDef:
    """The treedef of a tuple of trees of these treedefs."""
    return optree.treespec_tuple(list(treedefs), namespace=NAMESPACE)


def tree_broadcast(prefix_tree: Any, full_tree: Any, is_leaf: Callable | None = None) -> Any:
    """prefix_tree's leaves repeated over the subtrees of full_tree they head."""
    return optree.tree_broadcast_prefix(prefix_tree, full_tree, is_leaf=is_leaf,
                                        namespace=NAMESPACE)


def tree_reduce_associative(operation: Callable, tree: Any, *, identity: Any = _NO_INITIALIZER,
                            is_leaf: Callable | None = None) -> Any:
    """The leaves combined by an associative `operation` in a balanced tree of calls (depth
    log n); `identity` for a tree without leaves."""
    leaves = tree_leaves(tree, is_leaf=is_leaf)
    if not leaves:
        if identity is _NO_INITIALIZER:
            raise TypeError("tree_reduce_associative of a tree without leaves requires "
                            "identity=")
        return identity
    while len(leaves) > 1:
        leaves = [operation(leaves[k], leaves[k + 1]) if k + 1 < len(leaves) else leaves[k]
                  for k in range(0, len(leaves), 2)]
    return leaves[0]


def register_pytree_node_class(cls: type) -> type:
    """A class decorator: `cls.tree_flatten(self) -> (children, aux)` and the classmethod
    `cls.tree_unflatten(aux, children)` make it a pytree node."""
    register_pytree_node(cls, lambda x: x.tree_flatten(), cls.tree_unflatten)
    return cls


def register_pytree_with_keys(nodetype: type, flatten_with_keys: Callable,
                              unflatten_func: Callable, flatten_func: Callable | None = None
                              ) -> None:
    """Register a node whose children have keys: flatten_with_keys(x) -> ([(key, child),
    ...], aux); the keys are its paths' entries."""
    def flatten(x):
        pairs, aux = flatten_with_keys(x)
        pairs = list(pairs)
        return [c for _, c in pairs], aux, [k for k, _ in pairs]

    optree.register_pytree_node(nodetype, flatten, unflatten_func, namespace=NAMESPACE)


def register_pytree_with_keys_class(cls: type) -> type:
    """A class decorator: `tree_flatten_with_keys` and `tree_unflatten` as methods."""
    register_pytree_with_keys(cls, lambda x: x.tree_flatten_with_keys(), cls.tree_unflatten)
    return cls


class Partial(functools.partial):
    """functools.partial as a pytree: its arguments are the children (traced), the function
    is static. Passing one to a jitted function passes its arrays as arguments."""

    def __new__(klass, func: Callable, *args: Any, **kw: Any):
        if isinstance(func, functools.partial):  # flattened like functools.partial does
            return super().__new__(klass, func.func, *func.args, *args, **{**func.keywords,
                                                                            **kw})
        return super().__new__(klass, func, *args, **kw)


register_pytree_node(Partial, lambda p: ((p.args, p.keywords), p.func),
                     lambda func, children: Partial(func, *children[0], **children[1]))
