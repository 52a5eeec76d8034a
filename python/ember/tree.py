"""JAX's `jax.tree`: the tree_util functions by their short names."""

import dataclasses
from typing import Any

from ember.tree_util import (
    tree_all as all,  # noqa: A004 - JAX's name
    tree_broadcast as broadcast,
    tree_flatten as flatten,
    tree_flatten_with_path as flatten_with_path,
    tree_leaves as leaves,
    tree_leaves_with_path as leaves_with_path,
    tree_map as map,  # noqa: A004 - JAX's name
    tree_map_with_path as map_with_path,
    tree_reduce as reduce,
    tree_reduce_associative as reduce_associative,
    tree_structure as structure,
    tree_transpose as transpose,
    tree_unflatten as unflatten,
)


def static(**kwargs: Any) -> Any:
    """dataclasses.field for a static field of a registered dataclass (register_dataclass
    keeps it as aux data, never traced)."""
    metadata = {**kwargs.pop("metadata", {}), "static": True}
    return dataclasses.field(metadata=metadata, **kwargs)


__all__ = ["all", "broadcast", "flatten", "flatten_with_path", "leaves", "leaves_with_path",
           "map", "map_with_path", "reduce", "reduce_associative", "static", "structure",
           "transpose", "unflatten"]
