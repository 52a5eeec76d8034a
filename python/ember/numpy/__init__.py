"""`ember.numpy`: the NumPy API with JAX's semantics, built on the ember dialect's ops.

Every function lowers to `bind(row, ...)` calls; under `ember.jit` they trace, outside they
run eagerly. The modules, each building only on those before it: _base (dtypes, asarray,
promotion), creation, ufuncs (elementwise), shapes, reductions (also searching and logic),
contractions, and indexing (x[...] and x.at[...], reached through the array methods).
"""

from __future__ import annotations

from . import (
    _base,
    contractions,
    creation,
    host,
    polynomial,
    reductions,
    routines,
    routines2,
    shapes,
    ufuncs,
)
from ._base import *  # noqa: F403
from ._base import __array_namespace_info__  # noqa: F401 - the array API's inspection
from .contractions import *  # noqa: F403
from .creation import *  # noqa: F403
from .host import *  # noqa: F403
from .indexing import (
    bincount,
    interp,
    searchsorted,
    unique,
    unique_all,
    unique_counts,
    unique_inverse,
    unique_values,
)
from .polynomial import *  # noqa: F403
from .reductions import *  # noqa: F403
from .routines import *  # noqa: F403
from .routines2 import *  # noqa: F403
from .shapes import *  # noqa: F403
from .ufuncs import *  # noqa: F403

__array_api_version__ = "2024.12"

__all__ = [n for m in (_base, creation, ufuncs, shapes, reductions, contractions, polynomial,
                     routines, routines2, host)
           for n in m.__all__] + [
    "bincount", "interp", "searchsorted", "unique", "unique_all", "unique_counts",
    "unique_inverse", "unique_values"]

bool = bool_  # noqa: A001, F405 - NumPy's and JAX's name for bool_
__all__ += ["bool"]
