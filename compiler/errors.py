"""Errors raised by the compiler layer (re-exported as `ember.errors`)."""

from __future__ import annotations


class CompileError(RuntimeError):
    """IREE failed to compile a module. Carries IREE's diagnostics and the saved failing IR."""

    def __init__(self, message: str, diagnostics: str = "", ir_path: str | None = None):
        self.diagnostics = diagnostics
        self.ir_path = ir_path
        text = message
        if diagnostics:
            text += "\nIREE diagnostics:\n" + diagnostics.strip()
        if ir_path:
            text += f"\nThe failing IR was saved to {ir_path}"
        super().__init__(text)
