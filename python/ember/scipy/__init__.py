"""`ember.scipy`: the parts of `jax.scipy` that ember has."""

from . import linalg, signal, special, stats

__all__ = ["linalg", "signal", "special", "stats"]
