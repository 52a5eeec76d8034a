"""The op table: every row complete, IRDL up to date, verifier agrees with the shape rules."""

import pathlib
import subprocess
import sys

import numpy as np
import pytest

import ember
import ember.numpy as enp
from ember.compiler import bufferize, lower_to_linalg, passes, pipeline
from ember.dialect import OPS, Trait, VerifyError, ir as eir, irdl
from ember.dialect.types import ShapedArray

ROOT = pathlib.Path(__file__).resolve().parents[1]
IRDL = ROOT / "dialect" / "ember.irdl.mlir"


@pytest.mark.parametrize("name", sorted(OPS))
def test_every_row_is_complete(name):
    op = OPS[name]
    assert op.name == name and name.startswith("ember.")
    assert callable(op.infer)
    # Control flow's reference is Python itself (tests/test_lax.py), debug printing's is
    # print (tests/test_debug.py); every other op has a NumPy reference and is pure.
    assert callable(op.reference) or op.variadic_results
    assert Trait.PURE in op.traits or op.has(Trait.SIDE_EFFECTS) or op.has(Trait.TERMINATOR)
    if op.has(Trait.TERMINATOR):  # lowered by the op whose region it ends
        assert not op.has(Trait.PURE)
    elif op not in bufferize.ELIMINATED:
        assert callable(lower_to_linalg.lowering_for(op))  # raises for a missing one
    if op.regions:
        assert op.has(Trait.CONTROL_FLOW) and op.region_types is not None
    if op.has(Trait.ELEMENTWISE) or op.has(Trait.REDUCTION):
        assert op.scalar is not None, "elementwise and reductions carry their scalar body"
    if op.has(Trait.REDUCTION):
        assert op.init is not None


def test_irdl_file_is_up_to_date():
    assert IRDL.read_text() == irdl.generate(), "run `make irdl` to regenerate"


def _programs():
    def mixed(x, y):
        z = enp.where(x > y, enp.exp(x), enp.sqrt(enp.abs(y)))
        return enp.sum(z.T @ y, axis=0, keepdims=True), enp.max(x.astype(enp.int32)), z < 1

    x = np.ones((3, 3), np.float32)
    yield ember.jit(mixed).trace(x, x).ir
    # After ember-canonicalize. (Not after ember-fuse: IRDL has no way to declare ember.yield
    # a terminator, so IR with regions is checked by --verify-ember instead.)
    module = pipeline.clone(ember.jit(mixed).trace(x, x).module)
    passes.run(module, ["ember-canonicalize"])
    yield str(module)
    yield ember.jit(lambda a: enp.reshape(enp.arange(12.0), (3, 4)) + a).trace(
        np.ones(4, np.float32)).ir


@pytest.mark.parametrize("text", list(_programs()))
def test_stock_mlir_tool_verifies_ember_ir(text, tmp_path):
    src = tmp_path / "prog.mlir"
    src.write_text(text)
    opt = pathlib.Path(sys.executable).parent / "iree-opt"
    res = subprocess.run([str(opt), f"--irdl-file={IRDL}", str(src)], capture_output=True,
                         text=True)
    assert res.returncode == 0, res.stderr
    assert '"ember.' in res.stdout


def test_irdl_rejects_a_missing_attribute(tmp_path):
    src = tmp_path / "bad.mlir"
    src.write_text('func.func @f(%a: tensor<3xf32>) -> tensor<3xi1> {\n'
                   '  %0 = "ember.compare"(%a, %a) : (tensor<3xf32>, tensor<3xf32>) -> '
                   'tensor<3xi1>\n  return %0 : tensor<3xi1>\n}\n')
    opt = pathlib.Path(sys.executable).parent / "iree-opt"
    res = subprocess.run([str(opt), f"--irdl-file={IRDL}", str(src)], capture_output=True,
                         text=True)
    assert res.returncode != 0 and "direction" in res.stderr


def test_verifier_checks_result_types():
    from iree.compiler import ir

    with eir.context(), ir.Location.unknown():
        module = ir.Module.parse(
            'func.func @f(%a: tensor<3xf32>) -> tensor<4xf32> {\n'
            '  %0 = "ember.exp"(%a) : (tensor<3xf32>) -> tensor<4xf32>\n'
            '  return %0 : tensor<4xf32>\n}')
        bad = module.body.operations[0].regions[0].blocks[0].operations[0]
        with pytest.raises(VerifyError, match="requires result type tensor<3xf32>"):
            eir.verify(bad.operation)


def test_shape_rules_name_the_op_and_the_problem():
    f32 = np.dtype(np.float32)
    with pytest.raises(VerifyError, match=r"ember.add requires operands of one shape"):
        OPS["ember.add"].infer(ShapedArray((3,), f32), ShapedArray((4,), f32))
    with pytest.raises(VerifyError, match=r"ember.dot_general requires lhs dim 1 == rhs dim 0"):
        OPS["ember.dot_general"].infer(ShapedArray((2, 3), f32), ShapedArray((4, 5), f32),
                                       lhs_contracting=(1,), rhs_contracting=(0,),
                                       lhs_batch=(), rhs_batch=())
    with pytest.raises(VerifyError, match="ember.exp requires operand kinds in 'fc'"):
        OPS["ember.exp"].infer(ShapedArray((3,), np.dtype(np.int32)))


def test_traced_ops_verify_against_their_rows():
    def f(x):
        return enp.sum(enp.transpose(x) * 2.0 + 1, axis=1)

    traced = ember.jit(f).trace(np.ones((2, 3), np.float32))
    ops = list(traced.module.body.operations[0].regions[0].blocks[0].operations)
    checked = 0
    for op in ops:
        if eir.is_ember(op.operation):
            eir.verify(op.operation)
            checked += 1
    assert checked >= 5


@pytest.mark.runtime
def test_constants_keep_their_bits_and_folding_agrees_with_kernels_on_signed_zeros():
    """A constant [0.0, -0.0] is not the splat 0.0 (it was: its elements compare equal), and
    folded max/min (the rows' references) give the kernels' IEEE zeros, which np.maximum
    and np.minimum do not (np.maximum(0.0, -0.0) is -0.0)."""
    z = np.array([0.0, -0.0, -0.0, 0.0], np.float32)
    w = np.array([-0.0, 0.0, -0.0, 0.0], np.float32)
    assert np.signbit(np.asarray(ember.jit(lambda: enp.asarray(z) * 1)())).tolist() == [
        False, True, True, False]
    stacked = np.stack([z, w])
    for name, rows in (("maximum", [False, False, True, False]),
                       ("minimum", [True, True, True, False])):
        fn = getattr(enp, name)
        kernel = np.asarray(ember.jit(fn)(z, w))
        folded = np.asarray(ember.jit(lambda fn=fn: fn(enp.asarray(z), enp.asarray(w)))())
        assert np.signbit(kernel).tolist() == np.signbit(folded).tolist() == rows, name
        reduce = enp.max if name == "maximum" else enp.min
        kernel = np.asarray(ember.jit(lambda x, r=reduce: r(x, axis=0))(stacked))
        folded = np.asarray(ember.jit(lambda r=reduce: r(enp.asarray(stacked), axis=0))())
        assert np.signbit(kernel).tolist() == np.signbit(folded).tolist() == rows, name


def test_constants_from_broadcast_views_match_their_copies():
    """A broadcast of one element is a splat without reading its elements (a folded splat
    of 1M floats took ~9 ms to compare); a broadcast along some axes is not, and -0.0 keeps
    its sign."""
    cases = [np.broadcast_to(np.float32(-0.0), (1000, 1000)),
             np.broadcast_to(np.array([1, 2], np.int32), (3, 2)),
             np.broadcast_to(np.array([[0.0], [-0.0]], np.float32), (2, 3)),
             np.zeros((0, 3), np.float32), np.asarray(np.float32(2.5))]
    with eir.context():
        for view in cases:
            got = eir.elements_attr(view)
            assert str(got) == str(eir.elements_attr(np.array(view))), view
            np.testing.assert_array_equal(eir.elements_value(got), view)
            assert np.signbit(eir.elements_value(got)).tolist() == np.signbit(view).tolist()
