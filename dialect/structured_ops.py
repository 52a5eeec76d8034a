"""Rows of the op table with regions or side effects: control flow (ember.if / ember.case /
ember.while / ember.for and their ember.yield), fusion groups, refs and debug printing."""

from __future__ import annotations

import numpy as np

from .opdef import Attr, Carries, OpDef, Trait, require as _require
from .types import RefAval, ShapedArray, kind


def _scalar_predicate(op: str, pred: ShapedArray) -> None:
    _require(pred.shape == () and (pred.dtype == np.bool_ or kind(pred.dtype) in "iu"), op,
             "a scalar bool or integer predicate", pred.str_short())


_REGION_OP = frozenset({Trait.PURE, Trait.CONTROL_FLOW})


def _branch_types(operands, results, count):
    """Branches take no arguments (they see enclosing values) and yield the results."""
    return [((), tuple(results))] * count


def _if() -> OpDef:
    def infer(pred: ShapedArray, results) -> tuple[ShapedArray, ...]:
        _scalar_predicate("ember.if", pred)
        return tuple(results)

    return OpDef("ember.if", ("pred",), infer, None, _REGION_OP, type_params=("results",),
                 regions=("then", "else"), region_types=_branch_types,
                 doc="Runs the `then` region if pred is true (nonzero), else `else`; each ends "
                     "in ember.yield of the results. Lowered to scf.if.")


def _case() -> OpDef:
    def infer(index: ShapedArray, results) -> tuple[ShapedArray, ...]:
        _require(index.shape == () and kind(index.dtype) in "iu", "ember.case",
                 "a scalar integer index", index.str_short())
        return tuple(results)

    return OpDef("ember.case", ("index",), infer, None, _REGION_OP, type_params=("results",),
                 regions=("*branches",), region_types=_branch_types,
                 doc="Runs branches[index] (index already clamped; out of range runs the last). "
                     "Lowered to scf.index_switch.")


def _while() -> OpDef:
    def infer(*carries: ShapedArray, results) -> tuple[ShapedArray, ...]:
        _require([(r.shape, r.dtype) for r in results] == [(c.shape, c.dtype) for c in carries],
                 "ember.while", "results of the carries' types",
                 [r.str_short() for r in results])
        return tuple(results)

    def region_types(carries, results, count):
        return [(tuple(carries), (ShapedArray((), np.dtype(np.bool_)),)),
                (tuple(carries), tuple(results))]

    return OpDef("ember.while", ("*carries",), infer, None, _REGION_OP, type_params=("results",),
                 regions=("cond", "body"), region_types=region_types, carries=Carries(),
                 doc="carry = inits; while cond(carry) (yields a bool scalar): carry = "
                     "body(carry) (yields the carries). Both regions take the carries as "
                     "arguments. Lowered to scf.while.")


def _for() -> OpDef:
    def infer(lower: ShapedArray, upper: ShapedArray, *carries: ShapedArray,
              results) -> tuple[ShapedArray, ...]:
        _require(lower.shape == upper.shape == () and lower.dtype == upper.dtype and
                 kind(lower.dtype) in "iu", "ember.for", "scalar integer bounds of one dtype",
                 (lower.str_short(), upper.str_short()))
        _require([(r.shape, r.dtype) for r in results] == [(c.shape, c.dtype) for c in carries],
                 "ember.for", "results of the carries' types", [r.str_short() for r in results])
        return tuple(results)

    def region_types(operands, results, count):
        lower, _, *carries = operands
        return [((ShapedArray((), lower.dtype), *carries), tuple(results))]

    return OpDef("ember.for", ("lower", "upper", "*carries"), infer, None, _REGION_OP,
                 type_params=("results",), regions=("body",), region_types=region_types,
                 carries=Carries(operand=2, argument=1),
                 doc="carry = inits; for i in [lower, upper): carry = body(i, carry) (yields "
                     "the carries). A counted loop, lowered to scf.for: no host round trip "
                     "for the condition, and IREE updates its carries in place.")


def _elementwise_for() -> OpDef:
    row = _for()
    return OpDef("ember.elementwise_for", row.operands, row.infer, None, _REGION_OP,
                 type_params=row.type_params, regions=row.regions,
                 region_types=row.region_types,
                 doc="An ember.for whose body is elementwise in its carries (all of one shape; "
                     "splat constants, scalars and values of that shape from outside): "
                     "ember-loop-kernels makes one from an ember.for, and it is lowered to one "
                     "linalg.generic with the loop inside, so each element runs all the "
                     "steps in registers: one dispatch, not one a step.")


def _call() -> OpDef:
    def infer(*args: ShapedArray, results, key: str) -> tuple[ShapedArray, ...]:
        _require(bool(key), "ember.call", "a registry key", key)
        return tuple(results)

    def region_types(operands, results, count):
        return [(tuple(operands), tuple(results))]

    return OpDef("ember.call", ("*args",), infer, None, _REGION_OP, {"key": Attr.STRING},
                 type_params=("results",), regions=("body",), region_types=region_types,
                 doc="The body on the arguments: a function whose derivative is the user's "
                     "(custom_vjp, custom_jvp) or recomputed (checkpoint), by `key` in "
                     "ember's registry. Transformations read it; ember-canonicalize inlines "
                     "it before the other passes.")


def _yield() -> OpDef:
    return OpDef("ember.yield", ("*values",), lambda *values: (), None,
                 frozenset({Trait.TERMINATOR}),
                 doc="Ends a region of ember.if / ember.case / ember.while / ember.for with its "
                     "values.")


def _debug_print() -> OpDef:
    def infer(*values: ShapedArray, key: str) -> tuple[()]:
        _require(bool(key), "ember.debug_print", "a registry key", key)
        return ()

    # Not PURE: it must survive DCE and CSE, and runs where it stands in program order.
    return OpDef("ember.debug_print", ("*values",), infer, None,
                 frozenset({Trait.SIDE_EFFECTS}), {"key": Attr.STRING},
                 doc="At run time, hands `values` to the host under `key` (a format string "
                     "registered by ember.debug.print); lowered to flow.tensor.trace.")


def _ref_get() -> OpDef:
    def infer(ref: ShapedArray) -> ShapedArray:
        _require(isinstance(ref, RefAval), "ember.ref_get", "a !ember.ref operand",
                 ref.str_short())
        return ref.value()

    # Not PURE: it reads mutable memory, so it stays ordered with ember.ref_set.
    return OpDef("ember.ref_get", ("ref",), infer, None, frozenset({Trait.SIDE_EFFECTS}),
                 doc="The current value of a ref. ember-bufferize turns refs into values.")


def _ref_set() -> OpDef:
    def infer(ref: ShapedArray, value: ShapedArray) -> tuple[()]:
        _require(isinstance(ref, RefAval) and (ref.shape, ref.dtype) == (value.shape,
                                                                         value.dtype),
                 "ember.ref_set", "a !ember.ref operand and a value of its type",
                 (ref.str_short(), value.str_short()))
        return ()

    return OpDef("ember.ref_set", ("ref", "value"), infer, None,
                 frozenset({Trait.SIDE_EFFECTS}),
                 doc="Overwrite a ref; the function writes its last value back in place.")


def _copy() -> OpDef:
    return OpDef("ember.copy", ("operand",), lambda x: x, lambda x: np.array(x, copy=True),
                 frozenset({Trait.PURE, Trait.DATA_MOVEMENT}),
                 doc="A fresh buffer holding the operand's value. ember-bufferize puts one "
                     "before an in-place write that would reach a caller's buffer: IREE 3.13 "
                     "writes tied results (tensor.insert_slice) into function arguments in "
                     "place (iree-org/iree#16168) and folds every plain copy away.")


def _after() -> OpDef:
    def infer(x: ShapedArray, *after: ShapedArray) -> ShapedArray:
        return x

    return OpDef("ember.after", ("operand", "*after"), infer, lambda x, *after: x,
                 frozenset({Trait.PURE}),
                 doc="The operand, available only once every `after` value is computed (an "
                     "ordering edge, lowered to util.optimization_barrier: nothing is fused "
                     "across it). ember-bufferize puts one before a write into a donated "
                     "argument that other ops still read.")


COPY = _copy()
AFTER = _after()
REF_GET = _ref_get()
REF_SET = _ref_set()
def _fusion() -> OpDef:
    def infer(*inputs: ShapedArray, results) -> tuple[ShapedArray, ...]:
        return tuple(results)

    def region_types(inputs, results, count):
        return [(tuple(inputs), tuple(results))]

    return OpDef("ember.fusion", ("*inputs",), infer, None, _REGION_OP,
                 type_params=("results",), regions=("body",), region_types=region_types,
                 doc="A producer/consumer group made by ember-fuse: elementwise ops (with "
                     "broadcast inputs and splat constants) rooted at an elementwise op or a "
                     "reduction, lowered to one linalg.generic (one dispatch).")


FUSION = _fusion()
IF = _if()
CALL = _call()
CASE = _case()
WHILE = _while()
FOR = _for()
ELEMENTWISE_FOR = _elementwise_for()
YIELD = _yield()
DEBUG_PRINT = _debug_print()
