"""Ahead-of-time artifacts: the signature a `.vmfb` carries, and `ember.load`.

A compiled module's entry function carries `iree.reflection = {ember.abi = "<json>"}`: the
export name, the target, and the input/output pytrees with each leaf's type. IREE keeps it in
the `.vmfb`, so a saved module describes itself to `ember.load` (and to `iree-dump-module`).
"""

from __future__ import annotations

import json
import os
import platform as py_platform
import re
from collections.abc import Sequence
from typing import Any

import iree.runtime as rt
import numpy as np
import optree

from ember import tree_util
from ember.dialect.types import Dim, ShapedArray, at_sizes, parse_short
from ember.runtime import Array, Executable, device as _device, get as get_device, put
from ember.runtime.device import cpu_model, missing_cpu_features, platform_of
from ember.runtime.executable import compiled_parallel, entry_name, wait_for_readers

from . import donation

_NS = tree_util.NAMESPACE
ABI_KEY = "ember.abi"
ABI_VERSION = 1


class _Leaf:
    __slots__ = ("i",)

    def __init__(self, i: int):
        self.i = i


def _encode(node: Any) -> Any:
    """A pytree of _Leaf as JSON: only plain containers survive a file."""
    if isinstance(node, _Leaf):
        return {"leaf": node.i}
    if node is None:
        return None
    if type(node) is tuple:
        return {"tuple": [_encode(c) for c in node]}
    if type(node) is list:
        return [_encode(c) for c in node]
    if type(node) is dict and all(isinstance(k, str) for k in node):
        return {"dict": [[k, _encode(v)] for k, v in node.items()]}
    raise TypeError(type(node).__name__)


def _decode(node: Any) -> Any:
    if node is None:
        return None
    if isinstance(node, list):
        return [_decode(c) for c in node]
    if "leaf" in node:
        return _Leaf(node["leaf"])
    if "tuple" in node:
        return tuple(_decode(c) for c in node["tuple"])
    return {k: _decode(v) for k, v in node["dict"]}


def encode_tree(tree: optree.PyTreeSpec) -> Any:
    """The structure as JSON, or None when it holds custom nodes (then the saved function
    takes and returns flat leaves)."""
    try:
        return _encode(optree.tree_unflatten(tree, [_Leaf(i) for i in range(tree.num_leaves)]))
    except TypeError:
        return None


def decode_tree(encoded: Any) -> optree.PyTreeSpec | None:
    if encoded is None:
        return None
    return optree.tree_structure(_decode(encoded), is_leaf=lambda x: isinstance(x, _Leaf),
                                 namespace=_NS)


def abi(name: str, target: str, in_tree: optree.PyTreeSpec, in_avals: Sequence[ShapedArray],
        out_tree: optree.PyTreeSpec, out_avals: Sequence[ShapedArray],
        donated: Sequence[bool] = ()) -> str:
    """The signature a module carries: `ember.load` checks calls against it, and donates
    the arguments `donated` names (the module may write into their buffers)."""
    from ember.compiler import iree_driver  # compiling: loading a module needs no compiler

    cpu = {}
    if platform_of(target) == "cpu":  # what the code needs of the CPU it runs on
        cpu_name, features = iree_driver.cpu_features(iree_driver.target(target))
        cpu = {"cpu": cpu_name, "cpu_features": sorted(features)}
    return json.dumps({
        "version": ABI_VERSION, "name": name, "target": target, **cpu,
        "in_tree": encode_tree(in_tree), "in_avals": [a.str_short() for a in in_avals],
        "out_tree": encode_tree(out_tree), "out_avals": [a.str_short() for a in out_avals],
        "donated": [i for i, d in enumerate(donated) if d],
    }, separators=(",", ":"))


def signature(in_avals: Sequence[ShapedArray], out_avals: Sequence[ShapedArray]) -> str:
    """`(f32[3], i32[]) -> (f32[3])`: what compiled code takes and returns."""
    ins = ", ".join(a.str_short() for a in in_avals)
    outs = ", ".join(a.str_short() for a in out_avals)
    return f"({ins}) -> ({outs})"


class Loaded:
    """A saved module, callable like the jitted function it came from."""

    def __init__(self, vmfb: bytes, source: str = "<bytes>"):
        self.vmfb = vmfb
        try:
            module = rt.VmModule.copy_buffer(_device.instance(), vmfb)
            reflection = module.lookup_function(entry_name(module)).reflection
        except (RuntimeError, ValueError, StopIteration) as e:
            raise ValueError(f"ember.load requires a .vmfb made by IREE; {source} is not one "
                             f"({e})") from None
        if ABI_KEY not in reflection:
            raise ValueError(f"ember.load requires a .vmfb made by Ember (ember.jit(f).lower("
                             f"...).compile().save(path) or ember-compile); {source} has no "
                             f"{ABI_KEY} signature. Run it with iree.runtime instead.")
        try:
            meta = json.loads(reflection[ABI_KEY])
            self.name, self.target = str(meta["name"]), str(meta["target"])
            self.in_avals = tuple(parse_short(s) for s in meta["in_avals"])
            self.out_avals = tuple(parse_short(s) for s in meta["out_avals"])
            self._in_tree = decode_tree(meta["in_tree"])
            self._out_tree = decode_tree(meta["out_tree"])
            donated = {int(i) for i in meta.get("donated", ())}
            self._donated = tuple(i in donated for i in range(len(self.in_avals)))
        except (ValueError, KeyError, TypeError, AttributeError) as e:
            raise ValueError(f"ember.load requires a well-formed {ABI_KEY} signature; "
                             f"{source} has a damaged one ({type(e).__name__}: {e}). "
                             f"Save the module again.") from None
        _check_declaration(source, reflection, self.in_avals, self.out_avals)
        self._parallel = compiled_parallel(module.lookup_function(entry_name(module)))
        self._cpu = (str(meta.get("cpu", "")), frozenset(meta.get("cpu_features", ())))
        self._tied = [i for i, d in enumerate(self._donated) if d]
        self._executable: Executable | None = None
        self._at_sizes: dict[tuple, Executable] = {}

    def signature(self) -> str:
        return signature(self.in_avals, self.out_avals)

    def __repr__(self) -> str:
        return f"<ember.Loaded {self.name} {self.signature()} for {self.target}>"

    @property
    def executable(self) -> Executable:
        if self._executable is None:
            self._executable = load_executable(self.vmfb, self.name, self.target,
                                               self._parallel, self.in_avals, self.out_avals,
                                               self._cpu, self._tied)
        return self._executable

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        leaves, tree = optree.tree_flatten((args, kwargs), namespace=_NS)
        if self._in_tree is not None and tree != self._in_tree:
            raise TypeError(f"{self.name} requires arguments structured as {self._in_tree} "
                            f"with types {self.signature()} (its saved signature), got {tree}")
        if len(leaves) != len(self.in_avals):
            raise TypeError(f"{self.name} requires {len(self.in_avals)} arrays "
                            f"{self.signature()}, got {len(leaves)}")
        executable, sizes = self.executable, {}
        arrays = [self._check(i, x, aval, executable, sizes) for i, (x, aval)
                  in enumerate(zip(leaves, self.in_avals, strict=True))]
        if self._tied:  # as under jit: donated arrays are invalid from here
            paths = [f"argument {i}" for i in range(len(arrays))]
            donation.check_distinct(self.name, leaves, self._donated, paths)
            arrays = donation.take(arrays, self._donated, self.name)
            wait_for_readers()  # no call still reads what this one overwrites
        if sizes:  # symbolic dims (ember-compile --arg f32[?,784]): results at these sizes
            at = tuple(sizes.items())
            if at not in self._at_sizes:
                self._at_sizes[at] = executable.specialized(
                    [at_sizes(a, sizes) for a in self.out_avals])
            executable = self._at_sizes[at]
        outs = executable(arrays)
        if self._out_tree is None:
            return outs[0] if len(outs) == 1 else tuple(outs)
        return optree.tree_unflatten(self._out_tree, outs)

    def _check(self, i: int, x: Any, aval: ShapedArray, executable: Executable,
               sizes: dict[Dim, int]) -> Array:
        """`x` as argument i; the sizes of its symbolic dims go into `sizes`, which must
        agree with those of earlier arguments."""
        shape, dtype = tuple(np.shape(x)), getattr(x, "dtype", None) or np.result_type(x)
        fits = len(shape) == aval.ndim and all(
            sizes.setdefault(want, n) == n if isinstance(want, Dim) else want == n
            for want, n in zip(aval.shape, shape, strict=False))
        if not fits or np.dtype(dtype) != aval.dtype:
            got = ShapedArray(shape, np.dtype(dtype)).str_short()
            raise TypeError(f"{self.name} requires argument {i} to be {aval.str_short()} (its "
                            f"saved signature is {self.signature()}; a named dim has one size "
                            f"in every argument), got {got}")
        if type(x) is Array and x.device == executable.device:
            return x
        return put(np.asarray(x), ShapedArray(shape, aval.dtype, aval.weak_type),
                   executable.device)


def _check_declaration(source: str, reflection: dict[str, str],
                       in_avals: Sequence[ShapedArray], out_avals: Sequence[ShapedArray]) -> None:
    """The saved signature must be the one IREE compiled (its `iree.abi.declaration`):
    a signature edited after compiling would have results read at sizes they do not have."""
    declared = reflection.get("iree.abi.declaration", "")
    ins, _, outs = declared.partition(") -> (")
    types = [re.findall(r"tensor<[^>]*>", part) for part in (ins, outs)]
    expected = [[a.signless_tensor_type() for a in avals] for avals in (in_avals, out_avals)]
    if types != expected:
        raise ValueError(f"ember.load requires the module's signature to match what IREE "
                         f"compiled; {source} says {signature(in_avals, out_avals)} but was "
                         f"compiled as {declared or 'nothing'}. The file was altered: "
                         f"compile it again.")


def load_executable(vmfb: bytes, name: str, target: str, parallel: bool,
                    in_avals: Sequence[ShapedArray], out_avals: Sequence[ShapedArray],
                    cpu: tuple[str, frozenset[str]] | None = None,
                    tied: Sequence[int] = ()) -> Executable:
    """Load on the device the target runs on; a missing device, or a CPU without the
    instructions the code uses (`cpu`: the CPU it was compiled for and its features; None
    for code compiled for this machine), raise naming both."""
    platform = platform_of(target)
    try:
        device = get_device(platform)
    except RuntimeError as e:
        raise RuntimeError(f"{name} was compiled for target {target} and needs a {platform} "
                           f"device to run, but {e}. Compiling for it works anywhere; "
                           f"run it on a machine that has one.") from None
    if platform == "cpu" and cpu is not None:
        _check_cpu(name, target, cpu)
    return Executable(vmfb, device, in_avals, out_avals, parallel, name=name, tied=tied)


def _check_cpu(name: str, target: str, cpu: tuple[str, frozenset[str]]) -> None:
    """Code that uses instructions this CPU lacks dies with SIGILL: refuse it instead."""
    compiled_for, needed = cpu
    machine = target.partition(":")[2].rpartition(":")[0]  # "cpu:aarch64:neoverse-v2"
    here = {"arm64": "aarch64", "AMD64": "x86_64"}.get(py_platform.machine(),
                                                       py_platform.machine())
    if machine and machine != here:
        raise RuntimeError(f"{name} was compiled for target {target}, an {machine} CPU "
                           f"({compiled_for}), and this machine is {here}. Compile it for "
                           f"this machine (target cpu) or run it on an {machine} machine.")
    missing = missing_cpu_features(needed)
    if missing:
        raise RuntimeError(f"{name} was compiled for target {target} (CPU {compiled_for}) and "
                           f"uses instructions this CPU ({cpu_model()}) lacks: "
                           f"{', '.join(missing)}. Compile it for this machine (target cpu) "
                           f"or run it on a {compiled_for}.")


def load(path_or_bytes: str | os.PathLike | bytes) -> Loaded:
    """Load a `.vmfb` saved by Ember; returns a callable with the saved signature."""
    if isinstance(path_or_bytes, (bytes, bytearray, memoryview)):
        return Loaded(bytes(path_or_bytes))
    with open(path_or_bytes, "rb") as f:
        return Loaded(f.read(), source=os.fspath(path_or_bytes))
