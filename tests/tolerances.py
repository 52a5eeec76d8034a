"""Every tolerance the numeric tests use, by dtype, in one place.

`exact` ops (arithmetic, rounding, comparisons) are correctly rounded in IREE as in NumPy;
`approx` ops (exp, log, trig, erf...) come from polynomial expansions on both sides, so
they agree to a few ulps. Integers and booleans always compare exactly.
"""

import numpy as np
from ml_dtypes import bfloat16

# dtype -> (rtol, atol) for exact ops, and for approximated ones.
EXACT = {np.dtype(np.float16): (1e-3, 0), np.dtype(bfloat16): (8e-3, 0),
         np.dtype(np.float32): (1e-6, 0), np.dtype(np.float64): (1e-13, 0)}
APPROX = {np.dtype(np.float16): (2e-3, 1e-3), np.dtype(bfloat16): (2e-2, 1e-2),
          np.dtype(np.float32): (2e-5, 1e-5), np.dtype(np.float64): (1e-9, 1e-12)}


def tolerance(dtype, approx: bool) -> dict:
    rtol, atol = (APPROX if approx else EXACT).get(np.dtype(dtype), (0, 0))
    return {"rtol": rtol, "atol": atol}
