"""The registry of Ember's passes, and how they enter MLIR's PassManager."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

from iree.compiler import ir as mlir, passmanager

from ember.dialect import ir as eir

from .bufferize import Bufferize
from .canonicalize import Canonicalize
from .fuse import FUSE_CPU, Fuse
from .iree_fences import IreeFences
from .loops import LoopKernels, UnrollLoops
from .lower_to_linalg import LOWER_TO_LINALG_AVX512, LOWER_TO_LINALG_CPU, LowerToLinalg
from .moments import Moments
from .reroll import Reroll
from .window_stores import WindowStores


class Pass(Protocol):
    name: str
    description: str

    def run(self, module: mlir.Operation) -> None: ...


REGISTRY: dict[str, Pass] = {p.name: p for p in (
    Reroll(), Canonicalize(), LoopKernels(), UnrollLoops(), Moments(), Fuse(), FUSE_CPU,
    Bufferize(), LowerToLinalg(), LOWER_TO_LINALG_CPU, LOWER_TO_LINALG_AVX512, WindowStores(),
    IreeFences())}


def as_callable(p: Pass):
    def run(op, _pass) -> None:
        p.run(op.operation if hasattr(op, "operation") else op)

    return run


def add(pm: passmanager.PassManager, name: str) -> None:
    """Append a pass: Ember's by name, an upstream one by its pipeline text."""
    if name in REGISTRY:
        p = REGISTRY[name]
        pm.add(as_callable(p), name=p.name, argument=p.name, description=p.description)
    else:
        pm.add(name)


def pass_manager(names: Iterable[str], *, print_ir_after_all: bool = False
                 ) -> passmanager.PassManager:
    """A PassManager running Ember passes by name and upstream ones by pipeline text."""
    with eir.context():
        pm = passmanager.PassManager("builtin.module")
        for name in names:
            add(pm, name)
        if print_ir_after_all:
            pm.enable_ir_printing()
    return pm


def run(module: mlir.Module, names: Iterable[str]) -> None:
    with eir.LOCK:
        pass_manager(names).run(module.operation)
