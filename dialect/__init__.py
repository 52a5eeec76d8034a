"""The ember MLIR dialect: the op table and how ops live in MLIR."""

from .ops import OPS, Attr, OpDef, Trait, VerifyError
from .types import ShapedArray

__all__ = ["OPS", "Attr", "OpDef", "ShapedArray", "Trait", "VerifyError"]
