"""Ember ops as real MLIR operations: one shared context, builders and readers.

`build` turns (row, operands, params) into an `ember.*` operation; `read` recovers the row,
operand types and params from any `ember.*` operation, so passes never parse names themselves.
"""

from __future__ import annotations

import functools
import os
import re
import sys
import threading
import types
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from iree.compiler import api, ir as mlir

from .opdef import Carries
from .ops import OPS, Attr, OpDef, VerifyError
from .types import ShapedArray, parse_tensor_type, real_dtype

DIALECT = "ember"
# MLIR contexts are not thread-safe: every builder, pass and compile holds this lock.
LOCK = threading.RLock()

# The Python bindings look for a module of each dialect they meet (`iree.compiler.dialects.
# <name>`) whenever they wrap an op (`use.owner`, `block.operations`), and do not remember a
# miss: every wrap of an ember op was a failed import, ~19 us (ember-fuse spent 97% of its
# time there). An empty module, found at once, says there are no Python classes for it.
sys.modules.setdefault(f"iree.compiler.dialects.{DIALECT}",
                       types.ModuleType(f"iree.compiler.dialects.{DIALECT}"))


@functools.cache
def session() -> api.Session:
    """The process-wide IREE compiler session whose MLIR context holds all ember IR."""
    sess = api.Session()
    ctx = sess.context
    ctx.load_all_available_dialects()
    ctx.allow_unregistered_dialects = True
    return sess


def context() -> mlir.Context:
    return session().context


def _after_fork_in_child() -> None:
    """The context's thread pool does not survive a fork: passes in the child run on one
    thread (else the first parallel pass waits forever for threads that are gone)."""
    if session.cache_info().currsize:
        context().enable_multithreading(False)


os.register_at_fork(after_in_child=_after_fork_in_child)


@functools.lru_cache(maxsize=4096)
def mlir_type(text: str) -> mlir.Type:
    with context():
        return mlir.Type.parse(text)


def tensor_type(aval: ShapedArray) -> mlir.Type:
    return mlir_type(aval.tensor_type())


def aval_of(value: mlir.Value) -> ShapedArray:
    return parse_tensor_type(str(value.type))


# ----------------------------------------------------------------------------- attributes

def elements_attr(value: np.ndarray) -> mlir.Attribute:
    """A dense elements attribute; splats print as `dense<v>`, others as hex blobs."""
    ttype = tensor_type(ShapedArray(value.shape, value.dtype))
    if _is_splat(value):
        first = value.flat[0] if value.size else 0
        return mlir.Attribute.parse(f"dense<{literal(first, value.dtype)}> : {ttype}")
    if value.dtype == np.bool_:
        return mlir.Attribute.parse(f"dense<{_nested(value)}> : {ttype}")
    raw = np.ascontiguousarray(value).tobytes()
    return mlir.Attribute.parse(f'dense<"0x{raw.hex().upper()}"> : {ttype}')


def _is_splat(value: np.ndarray) -> bool:
    """Whether every element has the first one's bits (by value, -0.0 would equal 0.0 and a
    constant [0.0, -0.0] would become the splat 0.0)."""
    if value.size <= 1 or not any(value.strides):  # a broadcast of one element
        return True
    bits = np.ascontiguousarray(value).reshape(-1).view(np.uint8).reshape(value.size, -1)
    return bool((bits == bits[0]).all())


def _nested(value: np.ndarray) -> str:
    if value.ndim == 0:
        return literal(value.item(), value.dtype)
    return "[" + ", ".join(_nested(v) for v in value) + "]"


def literal(v: Any, dtype: np.dtype) -> str:
    if dtype.kind == "c":  # (re,im), as dense elements spell a complex number
        part = real_dtype(dtype)
        return f"({literal(np.real(v), part)},{literal(np.imag(v), part)})"
    if dtype == np.bool_:
        return "true" if v else "false"
    if dtype.kind in "iu":
        return str(int(v))
    f = float(v)
    if np.isnan(f) or np.isinf(f):
        # Spell non-finite floats by their bits so every float width round-trips.
        return "0x" + np.asarray(v, dtype).tobytes()[::-1].hex().upper()
    text = repr(f)  # MLIR wants a '.' in a float literal: 1e-20 -> 1.0e-20
    return text if "." in text else text.replace("e", ".0e", 1)


def elements_value(attr: mlir.Attribute) -> np.ndarray:
    """The NumPy value of a dense elements attribute (splat or not)."""
    dense = mlir.DenseElementsAttr(attr)
    aval = parse_tensor_type(str(dense.type))
    if dense.is_splat:
        return np.full(aval.shape, splat_value(attr), aval.dtype)
    typed = (mlir.DenseFPElementsAttr if aval.dtype.kind in "fV" else mlir.DenseIntElementsAttr)
    try:
        return np.array(memoryview(typed(attr))).view(aval.dtype).reshape(aval.shape)
    except (RuntimeError, ValueError, TypeError, BufferError):  # bfloat16: no buffer format
        return _parse_elements(str(attr), aval)


def _parse_elements(text: str, aval: ShapedArray) -> np.ndarray:
    body = text[text.index("<") + 1:text.rindex(">", 0, text.rindex(":"))]
    if body.startswith('"0x'):
        return np.frombuffer(bytes.fromhex(body[3:-1]), aval.dtype).reshape(aval.shape).copy()
    tokens = re.findall(r"[-+.\w]+", body)
    if aval.dtype.kind != "c":  # non-finite values are spelled by their bits
        return np.array([_scalar_of_text(t, aval.dtype) for t in tokens],
                        aval.dtype).reshape(aval.shape)
    pairs = np.array([float(t) for t in tokens], np.float64).reshape(-1, 2)
    return (pairs[:, 0] + 1j * pairs[:, 1]).astype(aval.dtype).reshape(aval.shape)


def splat_value(attr: mlir.Attribute) -> np.ndarray:
    """The one element of a splat attribute, as a 0-d array."""
    dense = mlir.DenseElementsAttr(attr)
    dtype = parse_tensor_type(str(dense.type)).dtype
    return np.asarray(_scalar_of(dense.get_splat_value(), dtype), dtype)


def _scalar_of(attr: mlir.Attribute, dtype: np.dtype):
    text = str(attr).split(":")[0].strip()
    if dtype == np.bool_:
        return text == "true"
    if dtype.kind == "c":
        real, imag = text.strip("()").split(",")
        part = real_dtype(dtype)
        return dtype.type(complex(_scalar_of_text(real, part), _scalar_of_text(imag, part)))
    return _scalar_of_text(text, dtype)


def _scalar_of_text(text: str, dtype: np.dtype):
    if text.startswith("0x"):
        return np.frombuffer(bytes.fromhex(text[2:])[::-1], dtype)[0]
    return dtype.type(float(text)) if dtype.kind == "f" or dtype.kind == "V" else int(text)


def _attr(kind: Attr, value: Any) -> mlir.Attribute:
    if kind is Attr.I64_ARRAY:
        return mlir.DenseI64ArrayAttr.get([int(v) for v in value])
    if kind is Attr.I64:
        return mlir.IntegerAttr.get(mlir.IntegerType.get_signless(64), int(value))
    if kind is Attr.STRING:
        return mlir.StringAttr.get(str(value))
    return elements_attr(np.asarray(value))


def _param(kind: Attr, attr: mlir.Attribute) -> Any:
    if kind is Attr.I64_ARRAY:
        return tuple(mlir.DenseI64ArrayAttr(attr))
    if kind is Attr.I64:
        return mlir.IntegerAttr(attr).value
    if kind is Attr.STRING:
        return mlir.StringAttr(attr).value
    return elements_value(attr)


# ----------------------------------------------------------------------------- ops

def results_of(inferred: ShapedArray | tuple[ShapedArray, ...]) -> tuple[ShapedArray, ...]:
    """`op.infer` gives one aval, or a tuple for ops with variadic results."""
    return inferred if isinstance(inferred, tuple) else (inferred,)


def build(op: OpDef, operands: Sequence[mlir.Value], params: Mapping[str, Any],
          result: ShapedArray | tuple[ShapedArray, ...], regions: int = 0) -> mlir.Operation:
    """Create `op` at the current insertion point. `result` comes from `op.infer`."""
    attributes = {name: _attr(kind, params[name]) for name, kind in op.attributes.items()}
    return mlir.Operation.create(op.name, results=[tensor_type(r) for r in results_of(result)],
                                 operands=list(operands), attributes=attributes,
                                 regions=regions)


def is_ember(operation: mlir.Operation) -> bool:
    return operation.name.startswith(DIALECT + ".")


def opdef(operation: mlir.Operation) -> OpDef | None:
    return OPS.get(operation.name)


def carries(operation: mlir.Operation) -> Carries | None:
    """Where a host loop's (ember.for, ember.while) carries are; None for any other op."""
    row = OPS.get(operation.name)
    return row.carries if row is not None else None


def read(operation: mlir.Operation) -> tuple[OpDef, list[ShapedArray], dict[str, Any]]:
    """(row, operand avals, params) of an ember operation: what `build` was given."""
    op = OPS.get(operation.name)
    if op is None:
        raise VerifyError(f"{operation.name} is not an op of the ember dialect")
    params = {name: _param(kind, operation.attributes[name])
              for name, kind in op.attributes.items()}
    results = tuple(aval_of(r) for r in operation.results)
    for name in op.type_params:
        params[name] = (results if name == "results" else
                        results[0].shape if name == "shape" else results[0].dtype)
    return op, [aval_of(v) for v in operation.operands], params


def verify(operation: mlir.Operation) -> None:
    """Check an ember operation against its row: attributes present, result type inferred."""
    op = OPS.get(operation.name)
    if op is None:
        raise VerifyError(f"{operation.location}: unknown op {operation.name}")
    missing = [n for n in op.attributes if n not in operation.attributes]
    variadic = op.operands and op.operands[-1].startswith("*")
    count_ok = (len(operation.operands) >= len(op.operands) - 1 if variadic
                else len(operation.operands) == len(op.operands))
    if missing or not count_ok:
        raise VerifyError(f"{operation.location}: {op.name} requires operands {op.operands} "
                          f"and attributes {sorted(op.attributes)}, got "
                          f"{len(operation.operands)} operands, missing {missing}")
    _, avals, params = read(operation)
    expected = results_of(op.infer(*avals, **params))
    got = tuple(aval_of(r) for r in operation.results)
    if _types(expected) != _types(got):
        raise VerifyError(f"{operation.location}: {op.name} requires result type "
                          f"{_spell(expected)}, got {_spell(got)}")
    _verify_regions(operation, op, avals, got)


def _types(avals) -> list[tuple]:
    return [(a.shape, a.dtype) for a in avals]


def _spell(avals) -> str:
    return ", ".join(a.tensor_type() for a in avals)


def _verify_regions(operation: mlir.Operation, op: OpDef, avals, results) -> None:
    """Region count, one block each, its arguments, and the types its ember.yield returns."""
    where = f"{operation.location}: {op.name}"
    n = len(operation.regions)
    variadic = bool(op.regions) and op.regions[0].startswith("*")
    if (n < 1) if variadic else (n != len(op.regions)):
        raise VerifyError(f"{where} requires regions {op.regions}, got {n}")
    if not n:
        return
    for i, (args, yields) in enumerate(op.region_types(avals, results, n)):
        blocks = list(operation.regions[i].blocks)
        if len(blocks) != 1:
            raise VerifyError(f"{where} requires one block in region {i}, got {len(blocks)}")
        got_args = [aval_of(a) for a in blocks[0].arguments]
        if _types(got_args) != _types(args):
            raise VerifyError(f"{where} requires region {i} to take ({_spell(args)}), got "
                              f"({_spell(got_args)})")
        ops = list(blocks[0].operations)
        last = ops[-1].operation if ops else None
        if last is None or last.name != "ember.yield":
            raise VerifyError(f"{where} requires region {i} to end in ember.yield")
        got_yields = [aval_of(v) for v in last.operands]
        if _types(got_yields) != _types(yields):
            raise VerifyError(f"{where} requires region {i} to yield ({_spell(yields)}), got "
                              f"({_spell(got_yields)})")
