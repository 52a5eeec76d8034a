"""Text emission for ember-lower-to-linalg: SSA naming, linalg.generic, type spellings.

Shared by the lowerings of compute ops (lower_to_linalg.py), indexing (lower_indexing.py) and
regions (lower_regions.py).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from iree.compiler import ir as mlir

from ember.dialect import ir as eir, ops
from ember.dialect.types import (
    NARROW_FLOATS,
    Dim,
    ShapedArray,
    SymbolicDimError,
    kind,
    real_dtype,
    signless_element_type,
    symbolic,
)

_UNSIGNED = re.compile(r"\bui(8|16|32|64)\b|(?<=x)ui(8|16|32|64)\b")
_DIM_NAMES = re.compile(r', "[\w,]*">')  # ember IR's names of symbolic dims (types.Dim)


def signless(text: str) -> str:
    """An ember IR type as upstream dialects spell it: signless, symbolic dims unnamed."""
    return _UNSIGNED.sub(lambda m: "i" + (m.group(1) or m.group(2)), _DIM_NAMES.sub(">", text))


def ttype(aval: ShapedArray) -> str:
    return aval.signless_tensor_type()


def etype(aval: ShapedArray) -> str:
    return signless_element_type(aval.dtype)


def affine_map(ndim: int, exprs: list[str]) -> str:
    dims = ", ".join(f"d{i}" for i in range(ndim))
    return f"affine_map<({dims}) -> ({', '.join(exprs)})>"


def identity_map(ndim: int) -> str:
    return affine_map(ndim, [f"d{i}" for i in range(ndim)])


def compilation_info(config: str, pipeline: str) -> str:
    """An IREE `compilation_info` attribute for a CPU dispatch: the lowering config's fields
    (`config`, e.g. "distribution = [8, 0]") through IREE's CPU `pipeline`."""
    return (f"#iree_codegen.compilation_info<lowering_config = #iree_cpu.lowering_config<"
            f"{config}>, translation_info = #iree_codegen.translation_info<pipeline = "
            f"#iree_cpu.pipeline<{pipeline}>>>")


def accumulator(row, dtype: np.dtype) -> np.dtype:
    """The dtype a sum, product or matrix product (`row`) accumulates a `dtype` result in:
    float16 and bfloat16 in float32, rounded once at the end, as XLA's products and jnp.sum
    do (a bfloat16 sum of 4096 products lost most of its bits; softmax's float16 row sum of
    2048 exps was 5 of its last units off, JAX's 1)."""
    if row in (ops.REDUCE_SUM, ops.REDUCE_PROD, ops.DOT_GENERAL) and dtype in NARROW_FLOATS:
        return np.dtype(np.float32)
    return dtype


def iterators(parallel: int, reduction: int = 0) -> str:
    its = ['"parallel"'] * parallel + ['"reduction"'] * reduction
    return f"[{', '.join(its)}]"


@dataclass(frozen=True)
class View:
    """A value whose element at coordinates (d0, d1, ...) is `source`'s (of type `aval`) at
    `where`: one affine expression of those coordinates per dim of `source`."""

    source: str
    aval: ShapedArray
    where: tuple[str, ...]


@dataclass
class Emitter:
    """Accumulates the lowered lines of one function, naming SSA values uniquely."""

    lines: list[str] = field(default_factory=list)
    names: dict = field(default_factory=dict)
    counter: int = 0
    loop_depth: int = 0  # inside a host loop's body: scalars are computed on the host
    sizes: dict = field(default_factory=dict)  # symbolic dim -> its SSA index value
    # Lowers the ops of a block (lower_to_linalg's op loop; regions' lowerings call it
    # through here rather than import it: the table of lowerings imports them).
    block_lowering: Callable[[Emitter, mlir.Block], list[str]] | None = None
    # Module-level lines the function needs: the declarations of the host functions it calls
    # (shared by the functions of one module).
    declarations: dict[str, None] = field(default_factory=dict)
    # Choices of the lowering for the target (pipeline.linalg_passes), made once per pass:
    # a CPU target: gathers of whole rows become iree_linalg_ext.gather (lower_indexing;
    # IREE's Vulkan backend cannot compile it);
    cpu: bool = False
    # (m0, n0): float32 matrix products are packed into tiles of this many rows and columns
    # around a linalg.mmt4d (see lower_to_linalg._packed_matmul); None leaves them to IREE;
    matmul_tile: tuple[int, int] | None = None
    # split reductions' first steps keep this many bytes of accumulators (0: IREE's choice;
    # see lower_to_linalg._wide_accumulators).
    reduction_bytes: int = 0
    # Views of strided views: a tensor.extract_slice with a step other than 1, and slices,
    # reshapes and transposes of one -> View. IREE 3.13 folds them into a generic that reads
    # the view with tensor.extract, and then fails to translate that dispatch to LLVM
    # ("unrealized_conversion_cast" of a vector.gather from a strided memref); element reads
    # go to the viewed value instead, at the element's coordinates there
    # (lower_indexing.extract).
    views: dict = field(default_factory=dict)
    # Row gathers' results (lower_indexing._gather_rows) and reshapes of them: IREE 3.13
    # moves a slice of one above the generic that reads the gather, into the gather's
    # dispatch, which it then fails to distribute ("write affecting operations on global
    # resources are restricted to workgroup distributed contexts"); slices read them
    # through a barrier.
    gathered: set = field(default_factory=set)

    def fresh(self, prefix: str = "v") -> str:
        self.counter += 1
        return f"%{prefix}{self.counter}"

    def emit(self, line: str) -> None:
        self.lines.append(line)

    def empty(self, aval: ShapedArray) -> str:
        name = self.fresh("e")
        sizes = ", ".join(self.size(d) for d in aval.shape if isinstance(d, Dim))
        self.emit(f"{name} = tensor.empty({sizes}) : {ttype(aval)}")
        return name

    def size(self, dim: Dim) -> str:
        """The SSA index value of a symbolic dim, read off an argument (`bind_sizes`)."""
        try:
            return self.sizes[dim]
        except KeyError:
            raise SymbolicDimError(f"symbolic dimension {dim} is no argument's") from None

    def bind_sizes(self, args: list[tuple[str, ShapedArray]]) -> None:
        """Read each symbolic dim's size off the first argument that has it."""
        for name, aval in args:
            for axis, d in enumerate(aval.shape):
                if isinstance(d, Dim) and d not in self.sizes:
                    index, size = self.fresh("c"), self.fresh("dim")
                    self.emit(f"{index} = arith.constant {axis} : index")
                    self.emit(f"{size} = tensor.dim {name}, {index} : {ttype(aval)}")
                    self.sizes[d] = size

    def scalar(self, dtype: np.dtype, value) -> str:
        """A constant scalar of `dtype`."""
        name, elem = self.fresh("c"), signless_element_type(dtype)
        if kind(dtype) == "c":
            part = real_dtype(dtype)
            re, im = (f"{eir.literal(v, part)} : {signless_element_type(part)}"
                      for v in (np.real(value), np.imag(value)))
            self.emit(f"{name} = complex.constant [{re}, {im}] : {elem}")
        else:
            text = (str(int(bool(value))) if dtype == np.bool_
                    else eir.literal(value, dtype))
            self.emit(f"{name} = arith.constant {text} : {elem}")
        return name

    def filled(self, aval: ShapedArray, value) -> str:
        init, scalar, name = self.empty(aval), self.scalar(aval.dtype, value), self.fresh("f")
        self.emit(f"{name} = linalg.fill ins({scalar} : {etype(aval)}) outs({init} : "
                  f"{ttype(aval)}) -> {ttype(aval)}")
        return name

    def barrier(self, values: list[str], avals: list[ShapedArray]) -> list[str]:
        """`values` through one util.optimization_barrier (IREE neither reorders nor fuses
        across it)."""
        name = self.fresh()
        self.emit(f"{name}:{len(values)} = util.optimization_barrier {', '.join(values)} : "
                  f"{', '.join(ttype(a) for a in avals)}")
        return [f"{name}#{k}" for k in range(len(values))]

    def reshape(self, value: str, src: ShapedArray, dst: ShapedArray) -> str:
        """`value` in `dst`'s shape: collapse to 1-D, then expand (reassociative reshapes,
        which IREE fuses across, where a tensor.reshape would cut dispatch regions)."""
        if src.shape == dst.shape:
            return value
        if symbolic(src.shape) or symbolic(dst.shape):
            return _unit_reshape(self, value, src, dst)
        out = _reshape(self, value, src, dst)
        if value in self.views:
            # The element at the reshaped coordinates is the one at the same row-major
            # offset of the source.
            flat = " + ".join(f"d{k} * {int(np.prod(dst.shape[k + 1:]))}"
                              for k in range(dst.ndim)) or "0"
            self.views[out] = View(value, src, tuple(
                f"(({flat}) floordiv {int(np.prod(src.shape[k + 1:]))}) mod {n}"
                for k, n in enumerate(src.shape)))
        if value in self.gathered:
            self.gathered.add(out)
        return out

    def scalar_body(self, template: str, args: list[str], elem: str, result_elem: str) -> str:
        """Instantiate an op-table scalar template; returns the SSA name of its result."""
        if template.strip() == "{r} = {0}":
            return args[0]
        subst = {"t": elem, "rt": result_elem, "r": self.fresh("s")}
        subst.update({f"x{i}": self.fresh("x")
                      for i in sorted(set(map(int, re.findall(r"\{x(\d+)\}", template))))})
        template = template.replace("{", "{{").replace("}", "}}")
        template = re.sub(r"\{\{(\w+)\}\}", r"{\1}", template)
        for line in template.split("\n"):
            self.emit("  " + line.format(*args, **subst))
        return subst["r"]

    def extended(self, x: str, elem: str) -> str:
        """The scalar `x` of the narrow float type `elem` in float32."""
        name = self.fresh("s")
        self.emit(f"  {name} = arith.extf {x} : {elem} to f32")
        return name

    def rounded(self, value: str, acc: ShapedArray, result: ShapedArray) -> str:
        """The float32 accumulator `value` rounded to the result's narrower float type."""
        identity = identity_map(result.ndim)

        def body(b, out):
            name = self.fresh("s")
            self.emit(f"  {name} = arith.truncf {b[0]} : f32 to {etype(result)}")
            return name

        return self.generic([(value, acc, identity)], self.empty(result), result, identity,
                            iterators(result.ndim, 0), body)

    def generic(self, inputs: list[tuple[str, ShapedArray, str]], out: str, out_aval: ShapedArray,
                out_map: str, iterators: str, body: Callable[[list[str], str], str | list[str]],
                extra: tuple[tuple[str, ShapedArray, str], ...] = (),
                attrs: str = "") -> str | list[str]:
        """A linalg.generic; `body(block_args, *out_args)` emits the region and returns the
        value to yield, or one per output: `out` and the `extra` (init, aval, map) outputs,
        each with its block argument in `out_args`. Returns the result, or each."""
        outs = [(out, out_aval, out_map), *extra]
        name = self.fresh()
        maps = ", ".join([m for _, _, m in inputs] + [m for _, _, m in outs])
        ins = ", ".join(n for n, _, _ in inputs)
        in_types = ", ".join(ttype(a) for _, a, _ in inputs)
        ins_clause = f" ins({ins} : {in_types})" if inputs else ""
        out_types = ", ".join(ttype(a) for _, a, _ in outs)
        self.emit(f"{name}{f':{len(outs)}' if extra else ''} = linalg.generic {{indexing_maps = "
                  f"[{maps}], iterator_types = {iterators}{attrs}}}{ins_clause} outs("
                  f"{', '.join(n for n, _, _ in outs)} : {out_types}) {{")
        args = [self.fresh("in") for _ in inputs]
        out_args = [self.fresh("out") for _ in outs]
        block = ", ".join([f"{a}: {etype(av)}" for a, (_, av, _) in zip(args, inputs, strict=True)]
                          + [f"{a}: {etype(av)}" for a, (_, av, _) in zip(out_args, outs,
                                                                          strict=True)])
        self.emit(f"^bb0({block}):")
        result = body(args, *out_args)
        results = result if isinstance(result, list) else [result]
        self.emit(f"  linalg.yield {', '.join(results)} : "
                  f"{', '.join(etype(a) for _, a, _ in outs)}")
        if not extra:
            self.emit(f"}} -> {out_types}")
            return name
        self.emit(f"}} -> ({out_types})")
        return [f"{name}#{i}" for i in range(len(outs))]


def _reshape(em: Emitter, value: str, src: ShapedArray, dst: ShapedArray) -> str:
    if src.ndim == 0 or dst.ndim == 0:
        name = em.fresh()
        verb = "expand_shape" if src.ndim == 0 else "collapse_shape"
        shape = f" output_shape [{', '.join(map(str, dst.shape))}]" if src.ndim == 0 else ""
        em.emit(f"{name} = tensor.{verb} {value} []{shape} : {ttype(src)} into "
                  f"{ttype(dst)}")
        return name
    flat = ShapedArray((src.size,), src.dtype)
    if src.ndim > 1:
        name = em.fresh()
        em.emit(f"{name} = tensor.collapse_shape {value} [{list(range(src.ndim))}] : "
                  f"{ttype(src)} into {ttype(flat)}")
        value = name
    if dst.ndim > 1:
        name = em.fresh()
        em.emit(f"{name} = tensor.expand_shape {value} [{list(range(dst.ndim))}] "
                  f"output_shape [{', '.join(map(str, dst.shape))}] : {ttype(flat)} into "
                  f"{ttype(dst)}")
        value = name
    return value

def _unit_reshape(em: Emitter, value: str, src: ShapedArray, dst: ShapedArray) -> str:
    """A reshape that only drops and adds dims of size 1 (all a symbolic one can be):
    collapse to the other dims, expand from them, each at their sizes (ember.reshape's
    shape rule admits no other)."""
    core = ShapedArray(tuple(d for d in src.shape if d != 1), src.dtype)
    if src.shape != core.shape:
        name = em.fresh()
        em.emit(f"{name} = tensor.collapse_shape {value} {_unit_groups(src.shape)} : "
                  f"{ttype(src)} into {ttype(core)}")
        value = name
    if dst.shape != core.shape:
        name = em.fresh()
        sizes = ", ".join(em.size(d) if isinstance(d, Dim) else str(d) for d in dst.shape)
        em.emit(f"{name} = tensor.expand_shape {value} {_unit_groups(dst.shape)} "
                  f"output_shape [{sizes}] : {ttype(core)} into {ttype(dst)}")
        value = name
    return value


def _unit_groups(shape: tuple) -> list[list[int]]:
    """The reassociation of `shape` onto its dims other than 1: each with the 1s before it,
    the last with those after it too."""
    core = [i for i, d in enumerate(shape) if d != 1]
    ends = [i + 1 for i in core[:-1]] + [len(shape)]
    return [list(range(start, end)) for start, end in zip([0, *ends[:-1]], ends, strict=True)]


# A lowering gets the ember operation (its regions and raw attributes), the SSA names of its
# operands, their avals, the row's params as `eir.read` decodes them, and its result's aval.
Lowering = Callable[[Emitter, mlir.Operation, list[str], list[ShapedArray], dict,
                     ShapedArray | None], "str | list[str]"]


def template_params(avals: list[ShapedArray], result: ShapedArray, params: dict) -> dict:
    """What scalar templates may ask besides IR attributes (convert's source and target)."""
    src = avals[-1] if avals else result
    return dict(params, to=kind(result.dtype), src_bits=bits(src), dst_bits=bits(result),
                same=src.dtype == result.dtype, to_bf16=result.dtype.name == "bfloat16",
                from_f16=src.dtype == np.float16)


def bits(aval: ShapedArray) -> int:
    return 1 if aval.dtype == np.bool_ else aval.dtype.itemsize * 8


def results_lhs(name: str, n: int) -> tuple[str, list[str]]:
    """The left-hand side for `n` results named `name`, and how each is referred to."""
    if n == 1:
        return name, [name]
    return f"{name}:{n}", [f"{name}#{i}" for i in range(n)]

