"""ember.tree (JAX's jax.tree) and the tree_util functions behind it, against JAX."""

import operator

import jax
import numpy as np
import pytest

import ember

pytestmark = pytest.mark.unit
TREES = [{"a": (1, 2.0), "b": [3, {"c": 4}]}, [1, (2, [3])], (), {"z": None, "y": 5}]


@pytest.mark.parametrize("tree", TREES, ids=range(len(TREES)))
def test_tree_functions_match_jax(tree):
    e, j = ember.tree, jax.tree
    assert e.leaves(tree) == j.leaves(tree)
    assert e.map(lambda x: x * 2, tree) == j.map(lambda x: x * 2, tree)
    assert e.map(operator.add, tree, tree) == j.map(operator.add, tree, tree)
    assert e.reduce(operator.add, tree, 10) == j.reduce(operator.add, tree, 10)
    assert e.all(tree) == j.all(tree)
    assert e.unflatten(*reversed(e.flatten(tree))) == tree
    assert [x for _, x in e.leaves_with_path(tree)] == [x for _, x in j.leaves_with_path(tree)]
    assert e.map_with_path(lambda p, x, y: (len(p), x + y), tree, tree) == j.map_with_path(
        lambda p, x, y: (len(p), x + y), tree, tree)


def test_reduce_transpose_and_all_edge_cases_match_jax():
    assert ember.tree.reduce(operator.mul, [2, (3, 4)]) == jax.tree.reduce(operator.mul,
                                                                          [2, (3, 4)])
    with pytest.raises(TypeError, match="initializer"):
        ember.tree.reduce(operator.add, ())
    assert ember.tree.all([1, (0, 2)]) is False and ember.tree.all([]) is True
    assert ember.tree.all([np.ones(1), True]) == jax.tree.all([np.ones(1), True])
    for tree_module in (ember.tree, jax.tree):  # bool() of a longer array, as JAX's
        with pytest.raises(ValueError, match="ambiguous"):
            tree_module.all([np.ones(3), True])
    rows = [{"x": 1, "y": (2, 3)}, {"x": 4, "y": (5, 6)}]
    for inner in (None, "given"):
        got = ember.tree.transpose(ember.tree.structure([0, 0]), None if inner is None else
                                   ember.tree.structure({"x": 0, "y": (0, 0)}), rows)
        want = jax.tree.transpose(jax.tree.structure([0, 0]), None if inner is None else
                                  jax.tree.structure({"x": 0, "y": (0, 0)}), rows)
        assert got == want == {"x": [1, 4], "y": ([2, 5], [3, 6])}
    with pytest.raises(NotImplementedError, match="is_leaf_takes_path"):
        ember.tree.leaves_with_path([1], is_leaf=lambda p, x: False, is_leaf_takes_path=True)
