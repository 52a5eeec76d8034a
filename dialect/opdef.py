"""What an op of the ember dialect is: its row type, traits and attribute kinds.

The rows themselves live in ops.py.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from .types import ShapedArray


class Trait(enum.Enum):
    PURE = "pure"
    ELEMENTWISE = "elementwise"
    COMMUTATIVE = "commutative"
    REDUCTION = "reduction"
    CONTRACTION = "contraction"
    DATA_MOVEMENT = "data_movement"
    VIEW = "view"  # lowered to a view of its operand (extract_slice, expand/collapse_shape)
    CONSTANT = "constant"
    CONTROL_FLOW = "control_flow"  # holds regions (branches, loop bodies) ending in ember.yield
    SIDE_EFFECTS = "side_effects"  # observable beyond its results (debug printing)
    TERMINATOR = "terminator"  # ends a region's block


class Attr(enum.Enum):
    """How an attribute is stored in IR; each kind has one IRDL base (see irdl.py)."""

    I64_ARRAY = "i64_array"  # array<i64: ...>
    I64 = "i64"  # 3 : i64
    STRING = "string"  # "LT"
    ELEMENTS = "elements"  # dense<...> : tensor<...>


ScalarBody = Callable[[str, Mapping], str]


@dataclass(frozen=True)
class Carries:
    """A host loop's signature: its carried values are its operands from `operand` on (its
    bounds come before them) and each region's block arguments from `argument` on (the
    body's induction variable before them); its results are the carries' last values."""

    operand: int = 0
    argument: int = 0

    def of(self, values: Sequence) -> list:
        """The carries among a loop's operands (or its equation's inputs)."""
        return list(values)[self.operand:]

    def argument_of(self, region: int, regions: int, k: int) -> int:
        """The block argument of region `region` (of `regions`) carrying carry k: the
        induction variable is the body's (the last region's) alone."""
        return k + (self.argument if region == regions - 1 else 0)


@dataclass(frozen=True, eq=False)
class OpDef:
    """One row of the op table. Rows compare by identity: each op exists once."""

    name: str
    operands: tuple[str, ...]  # a trailing "*name" is variadic
    infer: Callable[..., ShapedArray | tuple[ShapedArray, ...]]  # a tuple: variadic results
    reference: Callable[..., np.ndarray] | None  # None for control flow and side effects
    traits: frozenset[Trait] = frozenset({Trait.PURE})
    attributes: Mapping[str, Attr] = field(default_factory=dict)
    type_params: tuple[str, ...] = ()  # parameters recovered from the result type
    regions: tuple[str, ...] = ()  # region names; a leading "*" on the only one: variadic
    # For ops with regions: (operand avals, result avals, region count) -> for each region,
    # the avals of its block arguments and of what its ember.yield returns.
    region_types: Callable[..., list[tuple[tuple, tuple]]] | None = None
    scalar: ScalarBody | None = None  # elementwise / combiner body: (kind, attrs) -> MLIR
    init: Callable[[np.dtype], object] | None = None  # a reduction's identity element
    carries: Carries | None = None  # host loops (ember.for, ember.while): where carries are
    doc: str = ""

    def has(self, trait: Trait) -> bool:
        return trait in self.traits

    @property
    def variadic_results(self) -> bool:
        return (self.has(Trait.CONTROL_FLOW) or self.has(Trait.SIDE_EFFECTS)
                or self.has(Trait.TERMINATOR))

    def __repr__(self) -> str:
        return f"OpDef({self.name})"


class VerifyError(ValueError):
    """An ember op whose operands, attributes and result disagree with its row."""


def require(cond: bool, op: str, what: str, got: object) -> None:
    if not cond:
        raise VerifyError(f"{op} requires {what}, got {got}")
