"""JAX's `jax.tree`: the tree_util functions by their short names."""

from ember.tree_util import (
           tree_all as all,  # noqa: A004 - JAX's name
           tree_flatten as flatten,
           tree_flatten_with_path as flatten_with_path,
           tree_leaves as leaves,
           tree_leaves_with_path as leaves_with_path,
           tree_map as map,  # noqa: A004 - JAX's name
           tree_map_with_path as map_with_path,
           tree_reduce as reduce,
           tree_structure as structure,
           tree_transpose as transpose,
           tree_unflatten as unflatten,
)

__all__ = ["all", "flatten", "flatten_with_path", "leaves", "leaves_with_path", "map",
           "map_with_path", "reduce", "structure", "transpose", "unflatten"]
