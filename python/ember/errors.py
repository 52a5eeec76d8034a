"""Errors Ember raises for user mistakes. Each message names the function, the argument and
the fix."""

from __future__ import annotations

from ember.compiler.errors import CompileError
from ember.dialect.ops import VerifyError

README = "docs/errors.md, entry "


class EmberTypeError(TypeError):
    pass


class ConcretizationTypeError(EmberTypeError):
    """A concrete Python value was needed from a traced array."""


class TracerBoolConversionError(ConcretizationTypeError):
    """`bool(x)` (an `if`/`while` on a traced value)."""


class TracerIntegerConversionError(ConcretizationTypeError):
    """`int(x)`, `range(x)` or `x.__index__()` on a traced value."""


class CompilerNotInstalled(ImportError):
    """Tracing or compiling in an install that has only the runtime (iree-base-runtime)."""

    def __init__(self, what: str):
        super().__init__(
            f"{what} requires Ember's compiler, and this install has only the runtime "
            f"(iree-base-compiler is not installed). It runs saved modules (ember.load) and "
            f"moves arrays (ember.device_put); to trace and compile, install the compiler: "
            f"pip install iree-base-compiler==3.13.0")


class DynamicDimError(ValueError):
    """A function jitted with `dynamic_dims` needs what a symbolic dim does not give (its
    size), or its arguments disagree on a dim's size."""


class NonConcreteBooleanIndexError(IndexError):
    """A boolean mask computed under jit used as an index: the result's shape would depend
    on the mask's values."""


class TracerArrayConversionError(EmberTypeError):
    """`numpy.asarray(x)` on a traced value."""


class UnexpectedTracerError(EmberTypeError):
    """A tracer escaped its trace (through a global or a side effect) and was used later."""


__all__ = [
    "CompileError",
    "CompilerNotInstalled",
    "ConcretizationTypeError",
    "NonConcreteBooleanIndexError",
    "TracerArrayConversionError",
    "TracerBoolConversionError",
    "TracerIntegerConversionError",
    "UnexpectedTracerError",
    "VerifyError",
]
