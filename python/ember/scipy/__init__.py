"""`ember.scipy`: the parts of `jax.scipy` that ember has."""

from . import linalg, special, stats

__all__ = ["linalg", "special", "stats"]
