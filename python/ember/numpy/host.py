"""What NumPy does on the host and Ember hands over as arrays: files and buffers, printing,
and the index tricks (`s_`, `mgrid`, `r_`, ...). Their arguments are host values (file names,
bytes, slices), so none of them traces."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from . import shapes as _sh
from ._base import asarray


def _host(a: Any) -> np.ndarray:
    return np.asarray(a)


def load(file: Any, *args: Any, **kwargs: Any) -> Any:
    """np.load's array as an Ember array (an .npz archive stays NumPy's lazy mapping)."""
    out = np.load(file, *args, **kwargs)
    return asarray(out) if isinstance(out, np.ndarray) else out


def save(file: Any, arr: Any, allow_pickle: bool = True) -> None:
    np.save(file, _host(arr), allow_pickle=allow_pickle)


def savez(file: Any, *args: Any, allow_pickle: bool = True, **kwds: Any) -> None:
    np.savez(file, *(_host(a) for a in args), allow_pickle=allow_pickle,
             **{k: _host(v) for k, v in kwds.items()})


def frombuffer(buffer: Any, dtype: Any = float, count: int = -1, offset: int = 0) -> Any:
    return asarray(np.frombuffer(buffer, dtype, count, offset))


def fromstring(string: str, dtype: Any = float, count: int = -1, *, sep: str) -> Any:
    return asarray(np.fromstring(string, dtype, count, sep=sep))


def fromfile(*args: Any, **kwargs: Any) -> Any:
    return asarray(np.fromfile(*args, **kwargs))


def fromiter(*args: Any, **kwargs: Any) -> Any:
    return asarray(np.fromiter(*args, **kwargs))


def fromfunction(function: Callable[..., Any], shape: Any, *, dtype: Any = float,
                 **kwargs: Any) -> Any:
    """function called once on the index grids of `shape` (Ember arrays of `dtype`)."""
    grids = np.indices(tuple(shape), dtype=dtype)
    return function(*(asarray(g) for g in grids), **kwargs)


printoptions, get_printoptions, set_printoptions = (np.printoptions, np.get_printoptions,
                                                    np.set_printoptions)


def array_repr(arr: Any, max_line_width: Any = None, precision: Any = None,
               suppress_small: Any = None) -> str:
    return np.array_repr(_host(arr), max_line_width, precision, suppress_small)


def array_str(a: Any, max_line_width: Any = None, precision: Any = None,
              suppress_small: Any = None) -> str:
    return np.array_str(_host(a), max_line_width, precision, suppress_small)


index_exp, s_ = np.index_exp, np.s_  # index tuples: host values already


class _Grid:
    """NumPy's index trick `of`, its arrays made Ember arrays."""

    def __init__(self, of: Any):
        self._of = of

    def __getitem__(self, key: Any) -> Any:
        out = self._of[key]
        if isinstance(out, (list, tuple)):
            return type(out)(asarray(a) for a in out)
        return asarray(out)

    def __len__(self) -> int:
        return 0


mgrid, ogrid = _Grid(np.mgrid), _Grid(np.ogrid)
r_, c_ = _Grid(np.r_), _Grid(np.c_)


def ix_(*args: Any) -> tuple[Any, ...]:
    """Open grids for indexing with the cross product of 1-D index arrays."""
    out = []
    for k, a in enumerate(args):
        a = asarray(a)
        if a.ndim != 1:
            raise ValueError(f"ix_ requires 1-D index arrays, got one of shape {a.shape}")
        out.append(_sh.reshape(a, (1,) * k + (a.shape[0],) + (1,) * (len(args) - k - 1)))
    return tuple(out)



__all__ = ["array_repr", "array_str", "c_", "frombuffer", "fromfile", "fromfunction",
           "fromiter", "fromstring", "get_printoptions", "index_exp", "ix_", "load", "mgrid",
           "ogrid", "printoptions", "r_", "s_", "save", "savez", "set_printoptions"]
