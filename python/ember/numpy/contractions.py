"""Contractions beyond matmul/dot: einsum, tensordot, vdot, inner, outer, kron. Every one
is a single `ember.dot_general` (plus transposes, reshapes and, for repeated subscripts,
diagonals and sums).
"""

from __future__ import annotations

import string
from collections.abc import Sequence
from typing import Any

import numpy as np

from ember.dialect import ops

from .._src.dispatch import bind
from . import _base, reductions as _red, shapes as _sh, ufuncs as _uf
from ._base import _broadcast, _promote_only, _shape_of, asarray
from .shapes import diagonal, reshape, transpose
from .ufuncs import multiply

_IMPORTED = set(globals())  # what this module defines is exported: the rest


def _dot_general(a, b, lc, rc, lb=(), rb=()):
    a, b = _promote_only(a, b)
    return bind(ops.DOT_GENERAL, a, b, lhs_contracting=tuple(lc), rhs_contracting=tuple(rc),
                lhs_batch=tuple(lb), rhs_batch=tuple(rb))


def matmul(a, b):
    a, b = asarray(a), asarray(b)
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError(f"matmul requires arguments of rank >= 1, got shapes {a.shape} and "
                         f"{b.shape}; use multiply for scalars")
    a2 = reshape(a, (1, a.shape[0])) if a.ndim == 1 else a
    b2 = reshape(b, (b.shape[0], 1)) if b.ndim == 1 else b
    if a2.shape[-1] != b2.shape[-2]:
        raise ValueError(f"matmul requires a.shape[-1] == b.shape[-2], got shapes {a.shape} "
                         f"and {b.shape}")
    batch = _shape_of(np.empty(a2.shape[:-2]), np.empty(b2.shape[:-2]), name="matmul")
    nb = len(batch)
    a3 = _broadcast(a2, batch + a2.shape[-2:])
    b3 = _broadcast(b2, batch + b2.shape[-2:])
    out = _dot_general(a3, b3, (nb + 1,), (nb,), range(nb), range(nb))
    shape = batch + a.shape[-2:-1] * (a.ndim > 1) + b.shape[-1:] * (b.ndim > 1)
    return reshape(out, shape) if shape != out.shape else out


def dot(a, b):
    a, b = asarray(a), asarray(b)
    if a.ndim == 0 or b.ndim == 0:
        return multiply(a, b)
    if b.ndim <= 2:
        return matmul(a, b) if a.ndim <= 2 else _dot_general(a, b, (a.ndim - 1,), (0,))
    return _dot_general(a, b, (a.ndim - 1,), (b.ndim - 2,))


def trace(a: Any, offset: int = 0, axis1: int = 0, axis2: int = 1, dtype: Any = None) -> Any:
    return _red.sum(diagonal(a, offset, axis1, axis2), axis=-1, dtype=dtype)





def tensordot(a: Any, b: Any, axes: int | Sequence = 2) -> Any:
    a, b = asarray(a), asarray(b)
    if isinstance(axes, int):
        if axes < 0 or axes > min(a.ndim, b.ndim):
            raise ValueError(f"tensordot requires 0 <= axes <= {min(a.ndim, b.ndim)}, got "
                             f"{axes}")
        lc, rc = list(range(a.ndim - axes, a.ndim)), list(range(axes))
    else:
        lc, rc = ([x] if isinstance(x, int) else list(x) for x in axes)
    lc, rc = [x % a.ndim for x in lc], [x % b.ndim for x in rc]
    for i, j in zip(lc, rc, strict=True):
        if a.shape[i] != b.shape[j]:
            raise ValueError(f"tensordot requires matching contracted dimensions, got shapes "
                             f"{a.shape} and {b.shape} with axes {axes}")
    return _dot_general(a, b, lc, rc)


def vdot(a: Any, b: Any) -> Any:
    """The dot product of the flattened arrays, the first conjugated."""
    a, b = _uf.conjugate(_sh.ravel(a)), _sh.ravel(b)
    if a.shape != b.shape:
        raise ValueError(f"vdot requires arrays of one size, got {a.size} and {b.size}")
    return _dot_general(a, b, (0,), (0,))


def inner(a: Any, b: Any) -> Any:
    a, b = asarray(a), asarray(b)
    if a.ndim == 0 or b.ndim == 0:
        return _uf.multiply(a, b)
    if a.shape[-1] != b.shape[-1]:
        raise ValueError(f"inner requires matching last dimensions, got shapes {a.shape} and "
                         f"{b.shape}")
    return _dot_general(a, b, (a.ndim - 1,), (b.ndim - 1,))


def outer(a: Any, b: Any) -> Any:
    a, b = _sh.ravel(a), _sh.ravel(b)
    return _uf.multiply(reshape(a, (a.size, 1)), reshape(b, (1, b.size)))


def kron(a: Any, b: Any) -> Any:
    a, b = asarray(a), asarray(b)
    nd = max(a.ndim, b.ndim)
    a = reshape(a, (1,) * (nd - a.ndim) + a.shape)
    b = reshape(b, (1,) * (nd - b.ndim) + b.shape)
    prod = _uf.multiply(reshape(a, tuple(x for d in a.shape for x in (d, 1))),
                        reshape(b, tuple(x for d in b.shape for x in (1, d))))
    return reshape(prod, tuple(x * y for x, y in zip(a.shape, b.shape, strict=True)))


# ----------------------------------------------------------------------------- einsum

def _parse(subscripts: str, operands: Sequence[Any]) -> tuple[list[str], str]:
    spec = subscripts.replace(" ", "")
    lhs, arrow, out = spec.partition("->")
    inputs = lhs.split(",")
    if len(inputs) != len(operands):
        raise ValueError(f"einsum requires one subscript per operand: {subscripts!r} has "
                         f"{len(inputs)}, got {len(operands)} operands")
    if "..." in spec:  # give the ellipsis dims letters of their own
        free = [c for c in string.ascii_letters if c not in spec]
        width = max(op.ndim - (len(s) - 3) for s, op in zip(inputs, operands, strict=True)
                    if "..." in s)
        dots = "".join(free[:width])
        inputs = [s.replace("...", dots[width - (op.ndim - (len(s) - 3)):])
                  for s, op in zip(inputs, operands, strict=True)]
        if arrow:
            out = out.replace("...", dots)
        else:
            out = dots + "".join(sorted(c for c in set("".join(inputs)) - set(dots)
                                        if "".join(inputs).count(c) == 1))
    elif not arrow:  # implicit mode: letters seen once, in alphabetical order
        joined = "".join(inputs)
        out = "".join(sorted(c for c in set(joined) if joined.count(c) == 1))
    for s, op in zip(inputs, operands, strict=True):
        if len(s) != op.ndim or (s and not s.isalpha()):
            raise ValueError(f"einsum subscripts {s!r} do not match an operand of shape "
                             f"{op.shape}")
    if len(set(out)) != len(out) or not set(out) <= set("".join(inputs)):
        raise ValueError(f"einsum output subscripts {out!r} must be distinct letters of the "
                         f"inputs")
    return inputs, out


def _diagonalize(x: Any, s: str) -> tuple[Any, str]:
    """Repeated letters within one operand ('ii') take the diagonal."""
    while len(set(s)) != len(s):
        c = next(c for c in s if s.count(c) > 1)
        i, j = s.index(c), s.index(c, s.index(c) + 1)
        x = _sh.diagonal(x, 0, i, j)  # the diagonal becomes the last axis
        s = s[:i] + s[i + 1:j] + s[j + 1:] + c
    return x, s


def einsum(subscripts: str, *operands: Any, optimize: Any = None,
           precision: Any = None, preferred_element_type: Any = None) -> Any:
    """Any explicit (or implicit) subscripts, contracted left to right with dot_general."""
    operands = [asarray(x) for x in operands]
    inputs, out = _parse(subscripts, operands)
    sizes: dict[str, int] = {}
    for s, op in zip(inputs, operands, strict=True):
        for c, d in zip(s, op.shape, strict=True):
            if sizes.setdefault(c, d) != d and 1 not in (d, sizes[c]):
                raise ValueError(f"einsum requires one size per subscript, got {c!r} of "
                                 f"sizes {sizes[c]} and {d}")
            sizes[c] = max(sizes[c], d)
    terms = [_diagonalize(x, s) for x, s in zip(operands, inputs, strict=True)]
    terms = [(_sh.broadcast_to(x, tuple(sizes[c] for c in s)), s) for x, s in terms]

    def needed_after(k: int) -> set:
        return set(out).union(*(set(s) for _, s in terms[k:]))

    def sum_private(x: Any, s: str, keep: set) -> tuple[Any, str]:
        drop = [i for i, c in enumerate(s) if c not in keep]
        if drop:
            x = _red.sum(x, axis=tuple(drop))
            s = "".join(c for c in s if c in keep)
        return x, s

    acc, acc_s = sum_private(*terms[0], needed_after(1))
    for k in range(1, len(terms)):
        x, s = terms[k]
        keep = needed_after(k + 1)
        x, s = sum_private(x, s, keep | set(acc_s))
        acc, acc_s = sum_private(acc, acc_s, keep | set(s))
        shared = [c for c in acc_s if c in s]
        batch = [c for c in shared if c in keep]
        contract = [c for c in shared if c not in keep]
        acc = _dot_general(acc, x, [acc_s.index(c) for c in contract],
                               [s.index(c) for c in contract],
                               [acc_s.index(c) for c in batch], [s.index(c) for c in batch])
        acc_s = ("".join(batch) + "".join(c for c in acc_s if c not in shared)
                 + "".join(c for c in s if c not in shared))
    acc, acc_s = sum_private(acc, acc_s, set(out))
    result = transpose(acc, [acc_s.index(c) for c in out]) if acc_s != out else acc
    if preferred_element_type is not None:
        result = _base.astype(result, preferred_element_type)
    return result


def vecdot(x1: Any, x2: Any, /, *, axis: int = -1) -> Any:
    """The dot products of conj(x1) and x2 along `axis` (broadcast over the rest), in their
    promoted dtype (the array API's: integers do not widen)."""
    x1, x2 = _promote_only(x1, x2)
    shape = np.broadcast_shapes(x1.shape, x2.shape)
    if not shape or x1.shape[axis] != x2.shape[axis]:
        raise ValueError(f"vecdot requires x1 and x2 of one size along axis {axis}, got "
                         f"shapes {tuple(x1.shape)} and {tuple(x2.shape)}")
    if x1.dtype.kind == "c":
        x1 = _uf.conjugate(x1)
    return _red.sum(multiply(x1, x2), axis=axis, dtype=x1.dtype)


def cross(a: Any, b: Any, axis: int = -1) -> Any:
    """The cross products of 3-vectors (or 2-vectors: the z components) along `axis`."""
    a, b = _promote_only(a, b)
    a, b = _sh.moveaxis(a, axis, -1), _sh.moveaxis(b, axis, -1)
    if a.shape[-1] not in (2, 3) or b.shape[-1] not in (2, 3):
        raise ValueError(f"cross requires vectors of 2 or 3 components along axis {axis}, "
                         f"got shapes {tuple(a.shape)} and {tuple(b.shape)}")
    ax, ay = a[..., 0], a[..., 1]
    bx, by = b[..., 0], b[..., 1]
    z = _uf.subtract(multiply(ax, by), multiply(ay, bx))
    if a.shape[-1] == 2 and b.shape[-1] == 2:
        return z
    az = a[..., 2] if a.shape[-1] == 3 else _uf.multiply(ax, 0)
    bz = b[..., 2] if b.shape[-1] == 3 else _uf.multiply(bx, 0)
    x = _uf.subtract(multiply(ay, bz), multiply(az, by))
    y = _uf.subtract(multiply(az, bx), multiply(ax, bz))
    return _sh.moveaxis(_sh.stack([x, y, z], -1), -1, axis)


def _correlate_full(a: Any, v: Any) -> Any:
    """c[i] = sum_j a[i + j - (m - 1)] v[j] (zeros outside a), i < n + m - 1: every window
    of the padded a gathered at once, then one matrix-vector product."""
    n, m = a.shape[0], v.shape[0]
    padded = _sh.pad(a, (m - 1, m - 1))
    windows = _sh.take(padded, asarray(np.arange(n + m - 1)[:, None] + np.arange(m)[None, :]))
    return matmul(windows, v)


def _windowed(name: str, a: Any, v: Any, mode: str, flip: bool) -> Any:
    a, v = _promote_only(a, v)
    if a.ndim != 1 or v.ndim != 1 or not a.shape[0] or not v.shape[0]:
        raise ValueError(f"{name} requires two non-empty 1-d arrays, got shapes "
                         f"{tuple(a.shape)} and {tuple(v.shape)}")
    if mode not in ("full", "same", "valid"):
        raise ValueError(f"{name} requires mode 'full', 'same' or 'valid', got {mode!r}")
    n, m = a.shape[0], v.shape[0]
    swapped = m > n
    if swapped:  # NumPy's order: the longer array slides under the shorter one
        a, v = v, a
        n, m = m, n
    full = _correlate_full(a, _sh.flip(v) if flip else v)
    if swapped and not flip:
        full = _sh.flip(full)
    if mode == "full":
        return full
    start, length = ((m - 1) // 2, n) if mode == "same" else (m - 1, n - m + 1)
    return full[start:start + length]


@_base._eager_jit("mode", "precision", "preferred_element_type")
def convolve(a: Any, v: Any, mode: str = "full", *, precision: Any = None,
             preferred_element_type: Any = None) -> Any:
    """The discrete linear convolution of two 1-d arrays (mode full, same or valid)."""
    out = _windowed("convolve", a, v, mode, flip=True)
    return out if preferred_element_type is None else out.astype(preferred_element_type)


@_base._eager_jit("mode", "precision", "preferred_element_type")
def correlate(a: Any, v: Any, mode: str = "valid", *, precision: Any = None,
              preferred_element_type: Any = None) -> Any:
    """The cross-correlation of two 1-d arrays (mode valid, same or full)."""
    out = _windowed("correlate", a, v, mode, flip=False)
    return out if preferred_element_type is None else out.astype(preferred_element_type)


__all__ = [n for n in globals() if n not in _IMPORTED and not n.startswith("_")]
