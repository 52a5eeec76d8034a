"""The stages of compiled code, one straight line: Traced -> Lowered -> Compiled.

Each stage receives what it needs once and makes the next: a trace (the ember module and its
signature) is lowered by the compiler's phases, given the donation mask, which returns
ember-bufferize's decisions as data; the placement (target, platform, worker threads) is
decided once at lowering; compiling goes through the persistent cache; the Compiled loads
its Executable with that placement. `ember.jit` and eager ops both take this line (JAX's
staged API: jit(f).trace(...).lower().compile()).
"""

from __future__ import annotations

import copy
import os
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import optree

from ember.compiler import iree_driver, loops, pipeline
from ember.dialect.types import Dim, RefAval, ShapedArray, SymbolicDimError
from ember.runtime import Array, Executable, put
from ember.runtime.executable import runs_in_parallel, wait_for_readers

from . import aot, compilation, donation, dtypes
from .core import Trace
from .signature import CacheKey


class ShapeDtypeStruct:
    """A shape and dtype without data: trace, lower and eval_shape accept it for an array."""

    __slots__ = ("aval",)

    def __init__(self, shape: Sequence[int], dtype: Any, weak_type: bool = False):
        self.aval = ShapedArray(tuple(d if isinstance(d, Dim) else int(d) for d in shape),
                                dtypes.canonicalize(dtype), weak_type)

    shape = property(lambda self: self.aval.shape)
    dtype = property(lambda self: self.aval.dtype)
    ndim = property(lambda self: self.aval.ndim)

    def __repr__(self) -> str:
        return f"ShapeDtypeStruct(shape={self.shape}, dtype={self.dtype})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ShapeDtypeStruct) and other.aval == self.aval

    def __hash__(self) -> int:
        return hash(self.aval)


class Traced:
    """A traced function: the ember-dialect module before any pass. `events` name what its
    compile counts as (`compile`, or `eager_compile` for ember.numpy's eager calls);
    `key_of` makes the cache key of a call's arguments (Compiled checks calls with it)."""

    def __init__(self, key: CacheKey, trace: Trace, out_tree: optree.PyTreeSpec,
                 out_avals: list[ShapedArray], donated: tuple[bool, ...] = (),
                 paths: Sequence[str] = (), event: str = "compile",
                 key_of: Callable[[tuple, dict], tuple[CacheKey, list]] | None = None):
        self.key, self.out_tree, self.out_avals = key, out_tree, out_avals
        self.donated, self.paths = donated, list(paths)
        self.event, self.key_of = event, key_of
        self.module = trace.module
        self.name = str(self.module.operation.attributes["sym_name"]).strip('"')
        self.ir = str(trace.module)
        self.hoisted = trace.hoisted  # values of the trailing arguments, large constants
        self.module_in_avals = key.in_avals + tuple(
            ShapedArray(v.shape, v.dtype) for v in self.hoisted)

    @property
    def out_info(self) -> Any:
        """The outputs as a pytree of ShapeDtypeStruct."""
        return optree.tree_unflatten(self.out_tree, [
            ShapeDtypeStruct(a.shape, a.dtype, a.weak_type) for a in self.out_avals])

    def lower(self, parallel: bool | None = None) -> Lowered:
        """`parallel`: run on worker threads or inline, decided by the caller (a
        shape-polymorphic kernel's avals have no size to decide it by)."""
        export = self.name.removeprefix("jit_")
        if parallel is None:
            try:
                parallel = runs_in_parallel(self.module_in_avals, self.out_avals,
                                            loops.trip_work(self.module.operation),
                                            loops.product_work(self.module.operation))
            except SymbolicDimError:  # sizes known only at run time (ahead-of-time code)
                parallel = True
        # a call of the host module (LAPACK) waits on its inputs' fence: coarse-fences ABI
        parallel = parallel or pipeline.calls_host(self.module)
        placement = compilation.place(self.key.device, parallel,
                                      pipeline.multiplies_matrices(self.module))
        abi = aot.abi(export, placement.target, self.key.in_tree, self.module_in_avals,
                      self.out_tree, self.out_avals, self.donated)
        module = pipeline.clone(self.module)
        decisions = pipeline.optimize(module, self.donated, placement.target)
        texts = {"traced": self.ir, "ember": str(module)}
        pipeline.lower(module, export, {aot.ABI_KEY: abi}, placement.target)
        texts["linalg"] = str(module)
        return Lowered(self, texts, placement, abi, decisions)

    @property
    def refs(self) -> list[int]:
        """The argument leaves that are refs (each gets its last value as an extra result)."""
        return [i for i, a in enumerate(self.key.in_avals) if isinstance(a, RefAval)]


class Lowered:
    """A lowered function: the text of every IR phase, where it runs, and what
    ember-bufferize decided for its donated arguments and refs."""

    def __init__(self, traced: Traced, texts: dict[str, str],
                 placement: compilation.Placement, abi: str, decisions: dict[int, int | str]):
        self.traced, self.name, self._texts = traced, traced.name, texts
        self.placement, self._abi = placement, abi
        self.unusable_donations = donation.unusable(decisions, traced.donated, traced.paths,
                                                    traced.key.in_avals)
        # ref leaf -> written in place by the call (else copied back)
        self.refs_in_place = {i: isinstance(decisions.get(i), int) for i in traced.refs}

    @property
    def target(self) -> str:
        return self.placement.target

    def as_text(self, stage: str = "ember") -> str:
        if stage not in self._texts:
            raise ValueError(f"as_text requires a stage in {list(self._texts)}, got {stage!r}")
        return self._texts[stage]

    def compile(self) -> Compiled:
        traced = self.traced
        vmfb = compilation.to_vmfb(self._texts, self.name, traced.module_in_avals,
                                   self.placement.compile_target(), self._abi,
                                   event=traced.event)
        return Compiled(self, vmfb)


class Compiled:
    """A compiled function: call it, save it, inspect its key. It is loaded on its device
    at the first call, so code compiled for a device this machine lacks can still be saved."""

    def __init__(self, lowered: Lowered, vmfb: bytes):
        traced = lowered.traced
        self.lowered = lowered
        self.cache_key = traced.key
        self.vmfb = vmfb
        self.target = lowered.target
        self._out_tree = traced.out_tree
        # A result typed like an argument shares its aval object: the cached call's key
        # of a chain f(f(x)) then matches by identity, not by comparing avals.
        ins = {a: a for a in traced.key.in_avals if type(a) is ShapedArray}
        self._out_avals = tuple(ins.get(a, a) for a in traced.out_avals)
        self._refs = lowered.refs_in_place  # ref leaf -> written in place by the call?
        self._ref_avals = tuple(traced.key.in_avals[i].value() for i in self._refs)
        self._key_of = traced.key_of
        self.n_args = len(traced.key.in_avals)
        self._hoisted = traced.hoisted
        self._module_in_avals = traced.module_in_avals
        self._single_out = self._out_tree == optree.tree_structure(0)
        self._executable: Executable | None = None
        self._donated, self._paths = traced.donated, traced.paths

    def warn_unusable_donations(self) -> None:
        donation.report(self.lowered.name, self.lowered.unusable_donations)

    @property
    def executable(self) -> Executable:
        if self._executable is None:
            # Donated arguments and refs written in place hold results by design.
            tied = [i for i, d in enumerate(self._donated) if d]
            tied += [i for i, in_place in self._refs.items() if in_place]
            placement = self.lowered.placement
            cpu = None  # code for this machine needs no check; code for a named CPU does
            if placement.platform == "cpu" and ":" in placement.target:
                cpu = iree_driver.cpu_features(iree_driver.target(placement.target))
            self._executable = aot.load_executable(self.vmfb, self.lowered.name,
                                                   placement.target, placement.parallel,
                                                   self._module_in_avals,
                                                   self._out_avals + self._ref_avals,
                                                   cpu, tied)
        return self._executable

    def specialized(self, key: CacheKey, out_avals: Sequence[ShapedArray]) -> Compiled:
        """This shape-polymorphic function at the concrete shapes of `key` (whose results
        are `out_avals`): the same module, loaded once, called at these shapes."""
        new = copy.copy(self)
        for bound in ("_call", "call_arrays"):  # bound to this one's executable once called
            new.__dict__.pop(bound, None)
        new.cache_key, new._out_avals = key, tuple(out_avals)
        new._executable = self.executable.specialized(new._out_avals + new._ref_avals)
        return new

    def _call(self, args: Sequence[Array]) -> list[Array]:
        """The flat results; at the first call it binds itself and `call_arrays` (instance
        attributes from then on) straight to the executable."""
        exe = self.executable
        call = exe.call
        if self._hoisted:  # the large constants, on the device once, after the arguments
            consts = [put(v, ShapedArray(v.shape, v.dtype), exe.device) for v in self._hoisted]
            self._call = lambda args: call([*args, *consts])
        else:
            self._call = call
        flat, tree = self._call, self._out_tree
        if not self._single_out:
            self.call_arrays = lambda args: optree.tree_unflatten(tree, flat(args))
        elif self._hoisted:
            self.call_arrays = lambda args: flat(args)[0]
        else:  # one result, from the executable straight
            self.call_arrays = exe.caller(first_only=True)
        return flat(args)

    def as_text(self, stage: str = "ember") -> str:
        return self.lowered.as_text(stage)

    @property
    def in_avals(self) -> tuple[ShapedArray, ...]:
        return self.cache_key.in_avals

    @property
    def out_avals(self) -> tuple[ShapedArray, ...]:
        return self._out_avals

    def signature(self) -> str:
        """`(f32[3], i32[]) -> (f32[3])`: what this compiled code takes and returns."""
        return aot.signature(self.in_avals, self.out_avals)

    def __repr__(self) -> str:
        return f"<ember.Compiled {self.lowered.name} {self.signature()}>"

    def save(self, path: str | os.PathLike) -> None:
        """Write the `.vmfb`: `ember.load(path)` and `iree-run-module` run it."""
        if self._hoisted:
            raise ValueError(f"{self.lowered.name} was compiled for calls, with its large "
                             f"constants passed as arguments; save the module of "
                             f"ember.jit(f).lower(...).compile(), which holds them")
        with open(path, "wb") as f:
            f.write(self.vmfb)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        key, leaves = self._key_of(args, kwargs)
        if key != self.cache_key:
            raise TypeError(f"{self.lowered.name} requires arguments matching its compiled "
                            f"signature {[a.str_short() for a in self.cache_key.in_avals]}, "
                            f"got {[a.str_short() for a in key.in_avals]}")
        return self.call_leaves(leaves)

    def call_arrays(self, args: Sequence[Array]) -> Any:
        """The fast path: every argument already an ember.Array of the compiled type."""
        outs = self._call(args)
        return outs[0] if self._single_out else optree.tree_unflatten(self._out_tree, outs)

    def call_leaves(self, leaves: list[Any]) -> Any:
        """Flattened arguments, host data among them, put on the device first."""
        device = self.executable.device
        if self._refs:
            return self._call_with_refs(leaves, device)
        if self._donated:
            return self._call_donating(leaves, device)
        return self.call_arrays([x if type(x) is Array else _put(x, aval, device)
                                 for x, aval in zip(leaves, self.cache_key.in_avals,
                                                    strict=True)])

    def _call_with_refs(self, leaves: list[Any], device) -> Any:
        """Refs pass their buffers; each ref's last value is the call's extra result, written
        in place (or copied back when ember-bufferize could not prove that safe)."""
        refs = [leaves[i] for i in self._refs]
        if len({id(r) for r in refs}) != len(refs):
            raise ValueError(f"{self.lowered.name} was given the same Ref twice: a ref may be "
                             f"passed once per call (writes through two names would race)")
        arrays = [x._array if i in self._refs else x for i, x in enumerate(leaves)]
        wait_for_readers()  # the call writes into the refs' buffers
        if self._donated:
            outs = self._call_donating(arrays, device, flat=True)
        else:
            outs = self._call([x if type(x) is Array else _put(x, aval, device) for x, aval
                               in zip(arrays, self.cache_key.in_avals, strict=True)])
        n = len(self._out_avals)
        for ref, result, in_place in zip(refs, outs[n:], self._refs.values(), strict=True):
            ref._write_back(result, in_place)
        outs = outs[:n]
        return outs[0] if self._single_out else optree.tree_unflatten(self._out_tree, outs)

    def _call_donating(self, leaves: list[Any], device, flat: bool = False) -> Any:
        """Donated host data is copied (never aliased: the call writes into it); donated
        arrays are waited for (no call may still read them) and invalid afterwards."""
        name, mask = self.lowered.name, self._donated
        donation.check_distinct(name, leaves, mask, self._paths)
        arrays = donation.take(leaves, mask, name)  # donated arrays are invalid from here
        arrays = [x if type(x) is Array else _put(x, aval, device)
                  for x, aval in zip(arrays, self.cache_key.in_avals, strict=True)]
        wait_for_readers()  # no call still reads what this one overwrites
        return self._call(arrays) if flat else self.call_arrays(arrays)


def _put(x: Any, aval: ShapedArray, device) -> Array:
    if isinstance(x, ShapeDtypeStruct):
        raise TypeError(f"a jitted function requires arrays to run, got {x!r} (a "
                        f"ShapeDtypeStruct has no data; use .trace/.lower/eval_shape)")
    return put(np.asarray(x), aval, device)


