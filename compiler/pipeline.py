"""The compilation pipeline: ember -> linalg -> vmfb, as straight-line phases.

Each phase is a list of passes run by one PassManager; running a phase twice changes nothing.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from iree.compiler import ir as mlir, version as iree_version

from ember.dialect import ir as eir, ops

from . import bufferize, iree_driver, passes, walk
from .disk_cache import DiskKey
from .errors import CompileError

EMBER_PASSES = ("ember-reroll", "ember-canonicalize", "ember-loop-kernels", "ember-unroll-loops",
                "ember-fuse", "ember-bufferize")
# Work that a loop's body does the same on every trip leaves the loop (upstream LICM on
# linalg: a matrix product's packed weights, in a scan RNN, are packed once, not per trip).
LINALG_PASSES = ("ember-lower-to-linalg", "canonicalize", "loop-invariant-code-motion", "cse",
                 "ember-iree-fences")


# CPUs (LLVM's names) with AVX-512 whose cores run a 512-bit operation as two 256-bit halves:
# AMD's Zen 4. ember-lower-to-linalg-avx512's register tiles and wide accumulators were
# chosen on Intel cores, where 12 x 32 tiles (fewer loads a multiply-add) beat IREE's 16 x 16
# by 1.5x; on Zen 4 IREE's own choices are ahead. Ember's lowerings against each other and
# JAX in one process (compile cache off), Ember's tiles -> IREE's (JAX): matmul+relu 1024^2
# 11.97 -> 10.67 ms (11.02), 2000^2 87.4 -> 88.0 (83.5), the MLP row 2.08 -> 1.81 (2.46), the
# scan RNN row 19.1 -> 13.1 (19.8); a 16M sum 2.54 -> 2.45 ms, 4M 390 -> 432 us (noise).
HALF_WIDTH_AVX512 = frozenset({"znver4"})


def linalg_passes(target: str) -> tuple[str, ...]:
    """The linalg phase's passes for an iree_driver target: CPUs lower with their own
    choices (ember-lower-to-linalg-cpu), those with full-width AVX-512 with their register
    tiles too (ember-lower-to-linalg-avx512)."""
    if not iree_driver.is_cpu(target):
        return LINALG_PASSES
    name, features = iree_driver.cpu_features(iree_driver.target(target))
    tiles = "+avx512f" in features and name not in HALF_WIDTH_AVX512
    return (f"ember-lower-to-linalg-{'avx512' if tiles else 'cpu'}", *LINALG_PASSES[1:])


def ember_passes(target: str) -> tuple[str, ...]:
    """The ember phase's passes for an iree_driver target: CPU ones fuse with ember-fuse-cpu,
    after ember-moments, and write inserted updates in place (ember-window-stores)."""
    if iree_driver.is_cpu(target):
        return (*(q for p in EMBER_PASSES for q in (
            ("ember-moments", "ember-fuse-cpu") if p == "ember-fuse" else (p,))),
            "ember-window-stores")
    return EMBER_PASSES


def optimize(module: mlir.Module, donated: Sequence[bool] = (),
             target: str = "cpu") -> dict[int, int | str]:
    """The ember phase for `target`: Ember's own passes over ember ops, the entry function's
    arguments flagged `donated` first (ember-bufferize's input, as ember-opt's tests write
    it). Returns ember-bufferize's decisions for them: the result each holds, or why none."""
    if any(donated):
        bufferize.mark_donated(walk.entry(module.operation), list(donated))
    passes.run(module, ember_passes(target))
    with eir.LOCK, module.context:
        return bufferize.decisions(walk.entry(module.operation))


def lower(module: mlir.Module, export: str = "main",
          reflection: dict[str, str] | None = None, target: str = "cpu") -> None:
    """The linalg phase for `target`: no ember op is left afterwards. The entry function is
    exported as `export` (what `iree-run-module --function=` names) and carries
    `reflection`, which IREE keeps in the module (read back by `ember.load`)."""
    passes.run(module, linalg_passes(target))
    with eir.LOCK:
        leftovers = _ember_ops(module.operation)
        if leftovers:
            raise CompileError(f"ember-lower-to-linalg left ember ops behind: "
                               f"{sorted(leftovers)}")
        _export(module, export, reflection or {})


def _export(module: mlir.Module, export: str, reflection: dict[str, str]) -> None:
    with module.context:
        funcs = [op.operation for op in module.body.operations
                 if op.operation.name == "func.func"]
        names = {mlir.StringAttr(f.attributes["sym_name"]).value for f in funcs}
        entry = walk.entry(module.operation)
        if export not in names:  # a helper may already use the name: keep main then
            entry.attributes["sym_name"] = mlir.StringAttr.get(export)
        if reflection:
            entry.attributes["iree.reflection"] = mlir.DictAttr.get(
                {k: mlir.StringAttr.get(v) for k, v in reflection.items()})


def _ember_ops(root: mlir.Operation) -> set[str]:
    """The names of the ember ops under `root`. A walk hands over plain operations: iterating
    blocks wraps each op in its dialect's Python class, and the first linalg op imported
    the linalg bindings (0.19 s of a process's first compile)."""
    found = set()

    def visit(op: mlir.Operation) -> mlir.WalkResult:
        if eir.is_ember(op):
            found.add(op.name)
        return mlir.WalkResult.ADVANCE

    root.walk(visit)
    return found


def _any_op(module: mlir.Module, test) -> bool:
    """Whether some operation of `module` passes `test`."""
    found = False

    def visit(op: mlir.Operation) -> mlir.WalkResult:
        nonlocal found
        found = bool(test(op))
        return mlir.WalkResult.INTERRUPT if found else mlir.WalkResult.ADVANCE

    with eir.LOCK, module.context:
        module.operation.walk(visit)
    return found


# Data tiling packs a product's operands and accumulator into the CPU's tile layout and
# back: a pass over each. A product at most this deep is memory-bound either way, and the
# packing only adds passes (the blocked inverse of a 512 x 512 matrix: 16-deep products into
# a 512 x 1024 accumulator, 21-28 ms untiled against 57-73 ms tiled).
TILED_MIN_DEPTH = 16
# Nor does it pay for a small product (below 64^3 multiply-adds: a few microseconds either
# way), whose module compiles faster untiled (0.6-0.8 s against 1.1-1.2 s; 32^3 to 128^3
# products ran within 15% of each other either way).
TILED_MIN_WORK = 1 << 18


def multiplies_matrices(module: mlir.Module) -> bool:
    """Whether some ember.dot_general of the module multiplies two matrices: both operands
    keep free (neither batch nor contracted) dims of more than one element and the
    contracted dims hold more than TILED_MIN_DEPTH, and the product is at least
    TILED_MIN_WORK multiply-adds: not a matrix-vector product, a dot product, an outer
    product (which data tiling only pads and packs), a shallow or a small product."""
    def elements(op: mlir.Operation, side: int, which: str) -> int:
        """How many elements the operand's "free", "contracting" or "batch" dims hold (a
        dynamic one may hold any number: counted as many)."""
        prefix = ("lhs", "rhs")[side]
        named = {k: {*mlir.DenseI64ArrayAttr(op.attributes[f"{prefix}_{k}"])}
                 for k in ("contracting", "batch")}
        shape = mlir.ShapedType(op.operands[side].type).shape
        dims = [d for i, d in enumerate(shape) if (i in named[which] if which in named else
                                                   all(i not in s for s in named.values()))]
        return sys.maxsize if any(d < 0 for d in dims) else int(np.prod(dims, dtype=np.int64))

    def tiles(op: mlir.Operation) -> bool:
        if op.name != "ember.dot_general":
            return False
        m, n = elements(op, 0, "free"), elements(op, 1, "free")
        depth, batch = elements(op, 0, "contracting"), elements(op, 0, "batch")
        return (m > 1 and n > 1 and depth > TILED_MIN_DEPTH
                and m * n * depth * batch >= TILED_MIN_WORK)

    return _any_op(module, tiles)


def calls_host(module: mlir.Module) -> bool:
    """Whether `module` calls the runtime's host module (LAPACK: see dialect/linalg_ops.py).
    Such a module runs with the coarse-fences ABI, whose calls out wait on their inputs'
    fence and signal their own, so the work around them stays asynchronous."""
    return _any_op(module, lambda op: op.name in _HOST_CALLS)


_HOST_CALLS = frozenset(op.name for op in ops.LINALG_OPS)


def clone(module: mlir.Module) -> mlir.Module:
    with eir.LOCK, eir.context():
        return mlir.Module.parse(str(module))


@functools.cache
def _versions() -> tuple[str, str]:
    """Ember's version plus a digest of its compiler's source (a changed lowering must not
    reuse modules compiled by the old one), and IREE's version."""
    try:
        ember = importlib.metadata.version("ember")
    except importlib.metadata.PackageNotFoundError:
        ember = "unknown"
    digest = hashlib.sha256()
    for folder in (Path(__file__).parent, Path(eir.__file__).parent):
        for source in sorted(folder.glob("*.py")):
            digest.update(source.read_bytes())
    return f"{ember}+{digest.hexdigest()[:16]}", (
        f"{iree_version.VERSION} {iree_version.REVISIONS.get('IREE', '')}")


def cache_key(ember_text: str, target: str | iree_driver.Target = "cpu",
              abi: str = "") -> DiskKey:
    """The persistent-cache key: every input that decides the compiled bytes, by name."""
    tgt = iree_driver.target(target) if isinstance(target, str) else target
    ember, iree = _versions()
    cpu = ()
    if iree_driver.is_cpu(tgt.name):  # "host" compiles for this machine's CPU
        name, features = iree_driver.cpu_features(tgt)
        cpu = (("cpu", f"{name} {','.join(sorted(features))}"),)
    return DiskKey((
        ("ir", ember_text),
        ("abi", abi),
        ("pipeline", " ".join(ember_passes(tgt.name) + linalg_passes(tgt.name))),
        ("ember_version", ember),
        ("iree_version", iree),
        ("target", tgt.name),
        ("flags", " ".join(tgt.flags + iree_driver.GLOBAL_FLAGS)),
        *cpu,
    ))
