"""Command-line tools: ember-opt, ember-compile."""

from __future__ import annotations

import sys

import ember


def require_compiler(tool: str) -> None:
    """Exit with the install hint where only Ember's runtime is installed."""
    if not ember.HAS_COMPILER:
        sys.exit(f"{tool}: {ember.errors.CompilerNotInstalled(tool)}")
