"""MLIR-style diagnostics for Ember's tools: `file:line:col: error: message`, and the
`--verify-diagnostics` check of `// expected-error@+1 {{...}}` comments."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

_LOC = re.compile(r'loc\("([^"]*)":(\d+):(\d+)')
_EXPECTED = re.compile(
    r"expected-(error|warning|remark|note)\s*(?:@([+-]\d+|above|below))?\s*\{\{(.*?)\}\}")


@dataclass
class Diagnostic:
    file: str
    line: int
    col: int
    severity: str  # error, warning, remark, note
    message: str
    notes: list[Diagnostic] = field(default_factory=list)

    @classmethod
    def of(cls, d: Any, source: str) -> Diagnostic:
        """From an MLIR Diagnostic (handler) or DiagnosticInfo (MLIRError); text parsed from
        a string is located in "-", which is `source`."""
        m = _LOC.search(str(d.location))
        file, line, col = (m.group(1), int(m.group(2)), int(m.group(3))) if m else ("", 0, 0)
        severity = str(d.severity).rsplit(".", 1)[-1].lower()
        return cls(source if file in ("-", "") else file, line, col, severity, d.message,
                   [cls.of(n, source) for n in d.notes])

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}:{self.col}: " if self.line else \
            f"{self.file}: " if self.file else ""
        return "\n".join([f"{where}{self.severity}: {self.message}",
                          *(str(n) for n in self.notes)])


def check(text: str, source: str, produced: list[Diagnostic]) -> list[str]:
    """Every expected diagnostic produced, nothing else: returns the problems (empty if ok)."""
    expected = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        for m in _EXPECTED.finditer(line):
            severity, offset, message = m.groups()
            target = (lineno - 1 if offset == "above" else lineno + 1 if offset == "below"
                      else lineno + int(offset) if offset else lineno)
            expected.append((severity, target, message.strip(), lineno, m.start() + 1))
    pending = [*produced, *(n for d in produced for n in d.notes)]
    problems = []
    for severity, target, message, lineno, col in expected:
        match = next((d for d in pending if d.severity == severity and d.line == target
                      and message in d.message), None)
        if match is None:
            problems.append(f'{source}:{lineno}:{col}: error: expected {severity} "{message}" '
                            f"was not produced")
        else:
            pending.remove(match)
    problems += [f"{d.file}:{d.line}:{d.col}: error: unexpected {d.severity}: {d.message}"
                 for d in pending if d.severity != "note"]
    return problems
