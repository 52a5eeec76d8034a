"""The host module: functions that compiled CPU code calls on the host.

Dense linear algebra is LAPACK's (through SciPy, as jaxlib calls it on the CPU): the rows
of dialect/linalg_ops.py lower to calls of `ember_host.<row>_<element type>` with their
operands as (batch, rows, columns). Modules that call one run with IREE's coarse-fences ABI,
so each function here takes its operands, the fence they are ready at and the fence to
signal when its result is, and returns the result in a buffer of its own.
"""

from __future__ import annotations

from collections.abc import Callable

import iree.runtime as rt
import numpy as np

from ember.dialect import linalg_ops
from ember.dialect.opdef import OpDef

from .array import _ELEMENT, _MEMORY, _USAGE

# Below this order a batch of matrices is solved by NumPy's batched solver (one C loop over
# the batch); above it SciPy's getrf and getrs, a call each per matrix, are faster (a
# 512 x 512 system: 1.8 ms against NumPy's 4.3 ms).
_SMALL = 64


def _solve_lu(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Each a[i] x = b[i] by LU with partial pivoting; a singular matrix gives inf or nan, as
    LAPACK's getrs divides by its zero pivot (and as JAX's solve does)."""
    from scipy.linalg import lapack

    getrf, getrs = lapack.get_lapack_funcs(("getrf", "getrs"), dtype=a.dtype)
    x = np.empty(b.shape, b.dtype)
    for i in range(a.shape[0]):
        # a[i].T is a[i] in Fortran order: getrf factors a[i]^T (a copy: the operand's
        # buffer is not ours to write), and getrs with trans=1 solves with its transpose.
        lu, pivots, _ = getrf(a[i].T)
        x[i], _ = getrs(lu, pivots, b[i], trans=1)
    return x


def solve(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if a.shape[-1] <= _SMALL and a.shape[0] > 1:
        try:
            return np.linalg.solve(a, b).astype(b.dtype, copy=False)
        except np.linalg.LinAlgError:  # a singular matrix: LAPACK's inf and nan instead
            pass
    return _solve_lu(a, b)


def slogdet(a: np.ndarray) -> np.ndarray:
    """(sign, log|det|, det) of each matrix, from U's diagonal and the pivots' parity (a
    singular matrix: 0, -inf, 0, as NumPy and JAX give)."""
    from scipy.linalg import lapack

    getrf = lapack.get_lapack_funcs(("getrf",), dtype=a.dtype)[0]
    out = np.empty((a.shape[0], 3), a.dtype)
    rows = np.arange(a.shape[-1])
    with np.errstate(divide="ignore"):
        for i in range(a.shape[0]):
            lu, pivots, _ = getrf(a[i].T)  # a[i]^T has a[i]'s determinant
            diagonal = np.diagonal(lu)
            sign = np.prod(np.sign(diagonal)) * (-1.0) ** np.count_nonzero(pivots != rows)
            out[i] = sign, np.sum(np.log(np.abs(diagonal))), sign * np.prod(np.abs(diagonal))
    return out


def eigh(a: np.ndarray) -> np.ndarray:
    """Each symmetric matrix's eigenvalues (ascending) above its eigenvectors (columns), by
    LAPACK's syevd (NumPy's batched eigh, the same routine, for batches of small ones)."""
    out = np.empty((a.shape[0], a.shape[1] + 1, a.shape[2]), a.dtype)
    if a.shape[-1] <= _SMALL and a.shape[0] > 1:
        try:
            out[:, 0], out[:, 1:] = np.linalg.eigh(a)
            return out
        except np.linalg.LinAlgError:  # no convergence (nan in a): matrix by matrix
            pass
    from scipy.linalg import lapack

    syevd = lapack.get_lapack_funcs(("syevd",), dtype=a.dtype)[0]
    for i in range(a.shape[0]):
        # the lower triangle of a[i] in Fortran order is its upper one in C order
        out[i, 0], out[i, 1:], info = syevd(a[i].T, compute_v=1, lower=1)
        if info != 0:  # no convergence: nan, as JAX gives
            out[i] = np.nan
    return out


def triangular_solve(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Each tril(a[i]) x = b[i] by LAPACK's trtrs (a zero on the diagonal: inf or nan)."""
    from scipy.linalg import lapack

    trtrs = lapack.get_lapack_funcs(("trtrs",), dtype=a.dtype)[0]
    x = np.empty(b.shape, b.dtype)
    with np.errstate(all="ignore"):
        for i in range(a.shape[0]):
            # a[i].T in Fortran order is a[i]^T, upper: solving with its transpose
            x[i], info = trtrs(a[i].T, b[i], lower=0, trans=1)
            if info > 0:  # singular: LAPACK returns without solving; divide as JAX does
                x[i] = _substitute(np.tril(a[i]), b[i])
    return x


def _substitute(lower: np.ndarray, b: np.ndarray) -> np.ndarray:
    x = np.zeros(b.shape, b.dtype)
    for k in range(lower.shape[0]):
        x[k] = (b[k] - lower[k, :k] @ x[:k]) / lower[k, k]
    return x


def cholesky(a: np.ndarray) -> np.ndarray:
    """Each lower Cholesky factor by LAPACK's potrf on the lower triangle, zeros above; nan
    for a matrix that is not positive definite (as JAX gives)."""
    from scipy.linalg import lapack

    potrf = lapack.get_lapack_funcs(("potrf",), dtype=a.dtype)[0]
    out = np.empty(a.shape, a.dtype)
    for i in range(a.shape[0]):
        # the lower triangle of a[i] is the upper one of a[i].T in Fortran order: U = L^T
        factor, info = potrf(a[i].T, lower=0, clean=1)
        out[i] = np.nan if info != 0 else factor.T
    return out


def svd(a: np.ndarray) -> np.ndarray:
    """Each matrix's full U, s and V stacked as rows, zero-padded to max(m, n) columns, by
    LAPACK's gesdd (the divide-and-conquer SVD NumPy and JAX use)."""
    from scipy.linalg import lapack

    gesdd = lapack.get_lapack_funcs(("gesdd",), dtype=a.dtype)[0]
    m, n = a.shape[1:]
    out = np.zeros((a.shape[0], m + 1 + n, max(m, n)), a.dtype)
    for i in range(a.shape[0]):
        # a[i].T in Fortran order is a[i]^T = V S U^T: its "u" is V, its "vt" U^T
        v, s, ut, info = gesdd(a[i].T, compute_uv=1, full_matrices=1)
        if info != 0:  # no convergence: nan, as JAX gives
            out[i] = np.nan
            continue
        out[i, :m, :m], out[i, m, :min(m, n)], out[i, m + 1:, :n] = ut.T, s, v
    return out


def qr(a: np.ndarray) -> np.ndarray:
    """Each tall matrix's reduced Q above its R, by LAPACK's geqrf (Householder
    reflections, NumPy's signs) and orgqr (Q from them)."""
    from scipy.linalg import lapack

    geqrf, orgqr = lapack.get_lapack_funcs(("geqrf", "orgqr"), dtype=a.dtype)
    m, n = a.shape[1:]
    out = np.empty((a.shape[0], m + n, n), a.dtype)
    work = 64 * max(n, 1)  # room for the blocked algorithms (the wrappers' default: unblocked)
    for i in range(a.shape[0]):
        factored, tau, _, _ = geqrf(np.asfortranarray(a[i]), lwork=work)
        out[i, m:] = np.triu(factored[:n])
        out[i, :m], _, _ = orgqr(factored, tau, lwork=work)
    return out


FUNCTIONS: dict[OpDef, Callable[..., np.ndarray]] = {
    linalg_ops.SOLVE: solve, linalg_ops.SLOGDET: slogdet, linalg_ops.EIGH: eigh,
    linalg_ops.TRIANGULAR_SOLVE: triangular_solve, linalg_ops.CHOLESKY: cholesky,
    linalg_ops.SVD: svd, linalg_ops.QR: qr}


def _as_array(ref) -> np.ndarray:
    view = ref.deref(rt.HalBufferView)
    dtype = rt.HalElementType.map_to_dtype(view.element_type)
    return view.map().asarray(view.shape, np.dtype(dtype))


def _exported(fun: Callable[..., np.ndarray], hal: rt.HalDevice) -> Callable:
    def call(_state, *refs):
        *operands, wait, signal = refs
        wait.deref(rt.HalFence).wait()
        result = np.ascontiguousarray(fun(*[_as_array(r) for r in operands]))
        buffer = hal.allocator.allocate_buffer_copy(
            memory_type=_MEMORY, allowed_usage=_USAGE, device=hal, buffer=result,
            element_type=_ELEMENT[result.dtype])
        signal.deref(rt.HalFence).signal()
        return buffer.ref
    return call


class _State:
    """What the module keeps per VM context: nothing."""

    def __init__(self, interface) -> None:
        pass


_MODULES: dict[int, rt.VmModule] = {}


def module(hal: rt.HalDevice) -> rt.VmModule:
    """The host module whose functions put their results on `hal` (one per device)."""
    found = _MODULES.get(id(hal))
    if found is None:
        interface = rt.PyModuleInterface(linalg_ops.HOST_MODULE, _State)
        for row, fun in FUNCTIONS.items():
            n = len(row.operands)
            for element in linalg_ops.HOST_ELEMENTS:
                interface.export(linalg_ops.host_function(row, element),
                                 f"0{'r' * (n + 2)}_r", _exported(fun, hal))
        found = _MODULES[id(hal)] = interface.create()
    return found
