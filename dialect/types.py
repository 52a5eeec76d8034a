"""Abstract values: what a tracer knows about an array (shape, dtype, weak type).

The MLIR spelling of each dtype lives here too, because the ember dialect's tensors use it:
unsigned integers keep their `ui` spelling in ember IR and become signless only in linalg.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field

import ml_dtypes
import numpy as np

bfloat16 = np.dtype(ml_dtypes.bfloat16)
# Floats whose sums, products, means and variances are computed in float32 (as JAX's).
NARROW_FLOATS = (np.dtype(np.float16), bfloat16)

# NumPy dtype -> MLIR element type, in ember IR (signedness kept).
_MLIR_ELEMENT = {
    np.dtype(np.bool_): "i1",
    np.dtype(np.int8): "i8",
    np.dtype(np.int16): "i16",
    np.dtype(np.int32): "i32",
    np.dtype(np.int64): "i64",
    np.dtype(np.uint8): "ui8",
    np.dtype(np.uint16): "ui16",
    np.dtype(np.uint32): "ui32",
    np.dtype(np.uint64): "ui64",
    np.dtype(np.float16): "f16",
    bfloat16: "bf16",
    np.dtype(np.float32): "f32",
    np.dtype(np.float64): "f64",
    np.dtype(np.complex64): "complex<f32>",
    np.dtype(np.complex128): "complex<f64>",
}
_FROM_MLIR = {v: k for k, v in _MLIR_ELEMENT.items()}
SUPPORTED_DTYPES = tuple(_MLIR_ELEMENT)


def element_type(dtype: np.dtype) -> str:
    """The element type spelled in ember IR (`i32`, `ui8`, `f32`, `i1`)."""
    try:
        return _MLIR_ELEMENT[dtype]
    except KeyError:
        raise TypeError(f"ember does not support dtype {dtype}") from None


def signless_element_type(dtype: np.dtype) -> str:
    """The element type spelled in upstream dialects (`i32` for int32 and uint32)."""
    name = element_type(dtype)
    return name.removeprefix("u")


def dtype_from_element_type(name: str) -> np.dtype:
    return _FROM_MLIR[name]


def kind(dtype: np.dtype) -> str:
    """'b' bool, 'i' signed int, 'u' unsigned int, 'f' float (bfloat16 included), 'c'
    complex."""
    if dtype == bfloat16:
        return "f"
    return dtype.kind


def short_name(dtype: np.dtype) -> str:
    """JAX's short spelling: f32, i32, u8, bool, bf16."""
    if dtype == np.bool_:
        return "bool"
    if dtype == bfloat16:
        return "bf16"
    return f"{dtype.kind}{dtype.itemsize * 8}"


def real_dtype(dtype: np.dtype) -> np.dtype:
    """The dtype of a complex dtype's parts (complex64 -> float32); others are their own."""
    return np.dtype(np.float32 if dtype == np.complex64 else np.float64) \
        if kind(dtype) == "c" else dtype


def complex_dtype(dtype: np.dtype) -> np.dtype:
    """The complex dtype whose parts are `dtype` (float64 -> complex128; narrower floats
    -> complex64)."""
    return np.dtype(np.complex128 if dtype in (np.float64, np.complex128) else np.complex64)


class SymbolicDimError(TypeError):
    """A shape computation needed the value of a symbolic dimension (its size, a sum of
    sizes, an order): the caller falls back to a kernel for the concrete shape."""


class Dim:
    """A symbolic dimension of a shape-polymorphic kernel: an unknown size of at least 2,
    the same wherever the same name appears (sizes 0 and 1 stay concrete: broadcasting and
    emptiness depend on them). Only what holds for every such size can be asked of it:
    equality with a Dim or with 0 and 1, comparison with 0 and 1. Its value, arithmetic,
    and comparison with other numbers raise SymbolicDimError."""

    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return self.name

    def __hash__(self) -> int:
        return hash(("Dim", self.name))

    def _known(self, other: object, op: str) -> None:
        """Raises unless `other` is 0 or 1, against which every size >= 2 compares alike."""
        if not (isinstance(other, (int, np.integer)) and not isinstance(other, bool)
                and other in (0, 1)):
            raise SymbolicDimError(f"symbolic dimension {self.name} {op} {other!r}")

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Dim):
            return self.name == other.name
        self._known(other, "==")
        return False

    def __ne__(self, other: object) -> bool:
        return not self == other

    def __gt__(self, other: object) -> bool:
        self._known(other, ">")
        return True

    __ge__ = __gt__

    def __lt__(self, other: object) -> bool:
        self._known(other, "<")
        return False

    __le__ = __lt__

    def _value(self, *_: object) -> int:
        raise SymbolicDimError(f"the size of symbolic dimension {self.name}")

    __index__ = __int__ = __float__ = __neg__ = _value
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = _value
    __floordiv__ = __rfloordiv__ = __truediv__ = __rtruediv__ = __mod__ = __rmod__ = _value


def same_but_unit_dims(a: tuple, b: tuple) -> bool:
    """Whether shapes `a` and `b` differ only in dims of size 1 (a reshape that needs no
    sizes, so one that symbolic dims can take)."""
    return [d for d in a if d != 1] == [d for d in b if d != 1]


def symbolic(shape: tuple) -> bool:
    return any(isinstance(d, Dim) for d in shape)


def at_sizes(aval: ShapedArray, sizes: dict[Dim, int]) -> ShapedArray:
    """`aval` with its symbolic dims at the given sizes."""
    return ShapedArray(tuple(sizes[d] if isinstance(d, Dim) else d for d in aval.shape),
                       aval.dtype, aval.weak_type)


@dataclass(frozen=True, slots=True)
class ShapedArray:
    """The abstract value of an array: its shape, dtype and whether its type is weak."""

    shape: tuple[int, ...]
    dtype: np.dtype
    weak_type: bool = False
    _hash: int = field(default=0, compare=False, repr=False)

    def __post_init__(self) -> None:
        # Hashed on every cached call (it is part of the jit cache key): compute it once.
        object.__setattr__(self, "_hash", hash((self.shape, self.dtype, self.weak_type)))

    def __hash__(self) -> int:
        return self._hash

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(math.prod(self.shape))  # np.prod takes ~6 us: read on every call

    def str_short(self) -> str:
        """`f32[3,4]`, the form JAX prints in cache-miss explanations and errors."""
        return f"{short_name(self.dtype)}[{','.join(map(str, self.shape))}]"

    def tensor_type(self) -> str:
        return tensor_type(self.shape, element_type(self.dtype))

    def signless_tensor_type(self) -> str:
        return tensor_type(self.shape, signless_element_type(self.dtype), names=False)


@dataclass(frozen=True, slots=True)
class RefAval(ShapedArray):
    """A mutable array (`ember.Ref`) passed to a jitted function: `!ember.ref<tensor<...>>`
    in ember IR, read and written with ember.ref_get / ember.ref_set."""

    def tensor_type(self) -> str:
        return f"!ember.ref<{ShapedArray.tensor_type(self)}>"

    def str_short(self) -> str:
        return f"Ref[{ShapedArray.str_short(self)}]"

    def value(self) -> ShapedArray:
        return ShapedArray(self.shape, self.dtype)


def tensor_type(shape: tuple[int | Dim, ...], element: str, names: bool = True) -> str:
    """`tensor<4x?xf32>`; symbolic dims are `?`, named in the type's encoding in ember IR
    (`tensor<?x?xf32, "a,b">`: the same name is the same size), not in upstream IR."""
    dims = "".join(f"{'?' if isinstance(d, Dim) else d}x" for d in shape)
    symbols = [d.name for d in shape if isinstance(d, Dim)]
    encoding = f', "{",".join(symbols)}"' if symbols and names else ""
    return f"tensor<{dims}{element}{encoding}>"


def parse_tensor_type(text: str) -> ShapedArray:
    """Inverse of `ShapedArray.tensor_type` (weak types are not spelled in IR)."""
    if text.startswith("!ember.ref<"):
        inner = parse_tensor_type(text.removeprefix("!ember.ref<").removesuffix(">"))
        return RefAval(inner.shape, inner.dtype)
    body, _, encoding = text.removeprefix("tensor<").removesuffix(">").partition(", ")
    if "complex<" in body:  # complex<f32>: its "x" separates no dims
        body, _, part = body.partition("complex<")
        dims, elem = body.split("x")[:-1], f"complex<{part.rstrip('>')}>"
    else:
        *dims, elem = body.split("x")
    symbols = iter(encoding.strip('"').split(","))
    return ShapedArray(tuple(Dim(next(symbols)) if d == "?" else int(d) for d in dims),
                       dtype_from_element_type(elem))


_SHORT = {short_name(d): d for d in SUPPORTED_DTYPES}


def parse_short(text: str) -> ShapedArray:
    """Inverse of `ShapedArray.str_short`: `f32[3,4]`, `i32[]`, `bool[2]`."""
    name, _, dims = text.strip().partition("[")
    if name not in _SHORT or not dims.endswith("]"):
        raise ValueError(f"an array type is written like f32[3,4] or i32[] with a dtype in "
                         f"{', '.join(_SHORT)}; got {text!r}")
    body = dims[:-1].replace(" ", "")
    shape: list[int | Dim] = []
    for d in body.split(",") if body else ():
        if d == "?" or d.isidentifier():  # a symbolic dim: each `?` is a dim of its own
            shape.append(Dim(d if d != "?" else f"_{next(_UNNAMED)}"))
            continue
        try:
            shape.append(int(d))
        except ValueError:
            raise ValueError(f"array dimensions must be integers, `?` or names of symbolic "
                             f"dims, got {text!r}") from None
        if shape[-1] < 0:
            raise ValueError(f"array dimensions must not be negative, got {text!r}")
    return ShapedArray(tuple(shape), _SHORT[name])


_UNNAMED = itertools.count()
