"""Rows of the op table for dense linear algebra that LAPACK does best.

On Ember's own CPU runtime these lower to calls into the runtime's host module (LAPACK, as
jaxlib calls it on the CPU); `ember.numpy.linalg` binds them only where the code runs there
(elsewhere it traces its loops of ember ops instead), so no other target ever sees them.
"""

from __future__ import annotations

import numpy as np

from .families import same_dtypes
from .opdef import OpDef, Trait, require as _require
from .types import ShapedArray


def _floats(name: str, a: ShapedArray) -> None:
    _require(a.dtype in (np.float32, np.float64), name, "float32 or float64 operands", a.dtype)


def _square(name: str, a: ShapedArray) -> None:
    _floats(name, a)
    _require(a.ndim >= 2 and a.shape[-1] == a.shape[-2], name, "square matrices a", a.shape)


def _solve() -> OpDef:
    name = "ember.solve"

    def infer(a: ShapedArray, b: ShapedArray) -> ShapedArray:
        same_dtypes(name, (a, b))
        _square(name, a)
        _require(b.ndim == a.ndim and b.shape[:-1] == a.shape[:-1], name,
                 f"b of shape (..., {a.shape[-1]}, k) with a's leading dims",
                 (a.shape, b.shape))
        return ShapedArray(b.shape, b.dtype)

    def reference(a, b):
        return np.linalg.solve(a, b).astype(b.dtype)

    return OpDef(name, ("a", "b"), infer, reference, frozenset({Trait.PURE}),
                 doc="x with a @ x = b for each matrix of the leading dims: LU with partial "
                     "pivoting (LAPACK's getrf and getrs), lowered to a call of the "
                     "runtime's host module.")


def _slogdet() -> OpDef:
    name = "ember.slogdet"

    def infer(a: ShapedArray) -> ShapedArray:
        _square(name, a)
        return ShapedArray((*a.shape[:-2], 3), a.dtype)

    def reference(a):
        sign, log = np.linalg.slogdet(a)
        return np.stack([sign, log, np.linalg.det(a)], axis=-1).astype(a.dtype)

    return OpDef(name, ("a",), infer, reference, frozenset({Trait.PURE}),
                 doc="(sign, log|det|, det) of each matrix of the leading dims, as the last "
                     "axis: from LAPACK's LU (getrf), U's diagonal and the pivots' parity; "
                     "a singular matrix has sign 0, log -inf, det 0.")


def _eigh() -> OpDef:
    name = "ember.eigh"

    def infer(a: ShapedArray) -> ShapedArray:
        _square(name, a)
        return ShapedArray((*a.shape[:-2], a.shape[-1] + 1, a.shape[-1]), a.dtype)

    def reference(a):
        w, v = np.linalg.eigh(a)
        return np.concatenate([w[..., None, :], v], axis=-2).astype(a.dtype)

    return OpDef(name, ("a",), infer, reference, frozenset({Trait.PURE}),
                 doc="The eigenvalues (ascending) of each symmetric matrix of the leading "
                     "dims, then its eigenvectors as columns, stacked as rows (n + 1, n): "
                     "LAPACK's syevd on the lower triangle.")


def _triangular_solve() -> OpDef:
    name = "ember.triangular_solve"

    def infer(a: ShapedArray, b: ShapedArray) -> ShapedArray:
        same_dtypes(name, (a, b))
        _square(name, a)
        _require(b.ndim == a.ndim and b.shape[:-1] == a.shape[:-1], name,
                 f"b of shape (..., {a.shape[-1]}, k) with a's leading dims",
                 (a.shape, b.shape))
        return ShapedArray(b.shape, b.dtype)

    def reference(a, b):
        return np.linalg.solve(np.tril(a), b).astype(b.dtype)

    return OpDef(name, ("a", "b"), infer, reference, frozenset({Trait.PURE}),
                 doc="x with tril(a) @ x = b for each matrix of the leading dims (only the "
                     "lower triangle of a is read): LAPACK's trtrs. Upper, transposed and "
                     "unit-diagonal solves are this one on reversed or masked operands.")


def _cholesky() -> OpDef:
    name = "ember.cholesky"

    def infer(a: ShapedArray) -> ShapedArray:
        _square(name, a)
        return a

    def reference(a):
        out = np.empty(a.shape, a.dtype)
        for i in np.ndindex(a.shape[:-2]):  # matrix by matrix: nan only where one fails
            try:
                out[i] = np.linalg.cholesky(a[i])
            except np.linalg.LinAlgError:
                out[i] = np.nan
        return out

    return OpDef(name, ("a",), infer, reference, frozenset({Trait.PURE}),
                 doc="The lower Cholesky factor L (a = L L^T) of each matrix of the leading "
                     "dims, from its lower triangle, zeros above the diagonal: LAPACK's "
                     "potrf; nan where the matrix is not positive definite.")


def _svd() -> OpDef:
    name = "ember.svd"

    def infer(a: ShapedArray) -> ShapedArray:
        _floats(name, a)
        _require(a.ndim >= 2, name, "matrices", a.shape)
        m, n = a.shape[-2:]
        return ShapedArray((*a.shape[:-2], m + 1 + n, max(m, n)), a.dtype)

    def reference(a):
        m, n = a.shape[-2:]
        u, s, vt = np.linalg.svd(a, full_matrices=True)
        out = np.zeros((*a.shape[:-2], m + 1 + n, max(m, n)), a.dtype)
        out[..., :m, :m] = u
        out[..., m, :min(m, n)] = s
        out[..., m + 1:, :n] = np.swapaxes(vt, -1, -2)
        return out

    return OpDef(name, ("a",), infer, reference, frozenset({Trait.PURE}),
                 doc="The full SVD a = U diag(s) V^T of each (m, n) matrix of the leading "
                     "dims, stacked as rows (m + 1 + n, max(m, n)), zero-padded: U (m, m), "
                     "s (descending), V (n, n); LAPACK's gesdd.")


def _qr() -> OpDef:
    name = "ember.qr"

    def infer(a: ShapedArray) -> ShapedArray:
        _floats(name, a)
        _require(a.ndim >= 2 and a.shape[-2] >= a.shape[-1], name,
                 "matrices (m, n) with m >= n", a.shape)
        m, n = a.shape[-2:]
        return ShapedArray((*a.shape[:-2], m + n, n), a.dtype)

    def reference(a):
        return np.concatenate(np.linalg.qr(a), axis=-2).astype(a.dtype)

    return OpDef(name, ("a",), infer, reference, frozenset({Trait.PURE}),
                 doc="The reduced QR a = Q R of each tall (m, n) matrix of the leading "
                     "dims, stacked as rows (m + n, n): Q (m, n), R (n, n); LAPACK's geqrf "
                     "and orgqr (NumPy's signs).")


SOLVE = _solve()
SLOGDET = _slogdet()
EIGH = _eigh()
TRIANGULAR_SOLVE = _triangular_solve()
CHOLESKY = _cholesky()
SVD = _svd()
QR = _qr()
LINALG_OPS = (SOLVE, SLOGDET, EIGH, TRIANGULAR_SOLVE, CHOLESKY, SVD, QR)

# The runtime's host module, and the name of a row's function in it for an element type
# (each declared with dynamic dims, its operands as (batch, rows, columns)).
HOST_MODULE = "ember_host"
HOST_ELEMENTS = ("f32", "f64")


def host_function(row: OpDef, element: str) -> str:
    return f"{row.name.removeprefix('ember.')}_{element}"


__all__ = ["CHOLESKY", "EIGH", "HOST_ELEMENTS", "HOST_MODULE", "LINALG_OPS", "SLOGDET",
           "QR", "SOLVE", "SVD", "TRIANGULAR_SOLVE", "host_function"]
