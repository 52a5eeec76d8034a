"""Ember's compiler: passes over the ember dialect, the pipeline, and the IREE driver."""

from .errors import CompileError
from .passes import REGISTRY

__all__ = ["REGISTRY", "CompileError"]
