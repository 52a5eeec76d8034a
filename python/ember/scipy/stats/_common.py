"""What the distributions share: arguments as floats of one shape, and the standardized
variable."""

from __future__ import annotations

from typing import Any

from ember.numpy import _base


def floats(*xs: Any) -> list[Any]:
    """The arguments promoted together to a float dtype and broadcast to one shape."""
    return _base._promoted(*xs, to_float=True)


def standardized(x: Any, loc: Any, scale: Any) -> tuple[Any, Any]:
    """((x - loc) / scale, scale) as floats."""
    x, loc, scale = floats(x, loc, scale)
    return (x - loc) / scale, scale
