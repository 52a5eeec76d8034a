"""JAX's `jax.tree`: the tree_util functions by their short names."""

from ember.tree_util import tree_all as all  # noqa: A004 - JAX's name
from ember.tree_util import tree_flatten as flatten
from ember.tree_util import tree_flatten_with_path as flatten_with_path
from ember.tree_util import tree_leaves as leaves
from ember.tree_util import tree_leaves_with_path as leaves_with_path
from ember.tree_util import tree_map as map  # noqa: A004 - JAX's name
from ember.tree_util import tree_map_with_path as map_with_path
from ember.tree_util import tree_reduce as reduce
from ember.tree_util import tree_structure as structure
from ember.tree_util import tree_transpose as transpose
from ember.tree_util import tree_unflatten as unflatten

__all__ = ["all", "flatten", "flatten_with_path", "leaves", "leaves_with_path", "map",
           "map_with_path", "reduce", "structure", "transpose", "unflatten"]
