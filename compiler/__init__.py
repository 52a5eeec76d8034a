"""Ember's compiler: passes over the ember dialect, the pipeline, and the IREE driver. Its
modules import IREE's compiler; this package itself does not, so that `ember.errors` (and a
runtime-only install) can name CompileError."""

from .errors import CompileError

__all__ = ["CompileError"]
