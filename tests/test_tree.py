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


def test_keys_treedefs_and_registration_match_jax():
    """tree_util's keys, one-level flattening, treedef helpers, broadcasting, associative
    reduction, node classes (with and without keys), Partial and tree.static, against
    jax.tree_util where JAX has the same."""
    import dataclasses

    from jax import tree_util as jt

    from ember import tree_util as et

    tree = {"a": [1, (2, 3)], "b": {"c": 4}}
    assert et.all_leaves([1, 2, 3]) and not et.all_leaves([1, [2]])
    assert et.flatten_one_level(tree)[0] == jt.flatten_one_level(tree)[0]  # aux differs
    for t in (tree, [5, 6]):
        assert [(str(k), c) for k, c in et.flatten_one_level_with_keys(t)[0]] == [
            (str(k), c) for k, c in jt.flatten_one_level_with_keys(t)[0]]
    with pytest.raises(ValueError, match="leaf"):
        et.flatten_one_level(3)
    assert et.is_tree_node(dict) and not et.is_tree_node(int)
    assert et.tree_broadcast([1, 2], [(3, 4), {"x": 5}]) == jt.tree_broadcast(
        [1, 2], [(3, 4), {"x": 5}])
    assert et.tree_reduce_associative(lambda a, b: a + b, tree) == 10
    assert et.tree_reduce_associative(lambda a, b: a + b, [], identity=0) == 0
    spec = et.tree_structure(tree)
    assert len(et.treedef_children(spec)) == 2 and et.treedef_is_leaf(et.tree_structure(1))
    assert et.treedef_tuple([spec, spec]).num_leaves == 8

    @et.register_pytree_node_class
    class Point:
        def __init__(self, x, y, tag):
            self.x, self.y, self.tag = x, y, tag

        def tree_flatten(self):
            return (self.x, self.y), self.tag

        @classmethod
        def tree_unflatten(cls, aux, children):
            return cls(*children, aux)

    traced = ember.eval_shape(lambda p: p.x + p.y, Point(np.float32(1), np.float32(2), "t"))
    assert traced.shape == () and traced.dtype == np.float32  # traced through its children

    @et.register_pytree_with_keys_class
    class Keyed:
        def __init__(self, x, y):
            self.x, self.y = x, y

        def tree_flatten_with_keys(self):
            return ((et.GetAttrKey("x"), self.x), (et.GetAttrKey("y"), self.y)), None

        @classmethod
        def tree_unflatten(cls, aux, children):
            return cls(*children)

    assert [(et.keystr(p), leaf) for p, leaf in et.tree_leaves_with_path(Keyed(1, 2))] == [
        (".x", 1), (".y", 2)]
    f = et.Partial(lambda a, b, c=0: a * b + c, np.float32(2), c=np.float32(1))
    assert len(et.tree_leaves(f)) == 2
    assert float(f(np.float32(3))) == 7.0
    assert ember.eval_shape(lambda f, x: f(x), f, np.float32(3)).dtype == np.float32

    @et.register_dataclass
    @dataclasses.dataclass
    class Op:
        x: np.ndarray
        op: str = ember.tree.static(default="add")

    assert len(et.tree_leaves(Op(np.ones(2)))) == 1
