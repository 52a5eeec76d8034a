"""`ember.scipy`: the parts of `jax.scipy` that ember has."""

from . import special

__all__ = ["special"]
