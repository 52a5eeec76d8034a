"""Named events (trace, compile, cache hit), counted by tests instead of mocking internals."""

from __future__ import annotations

import contextlib
from collections import Counter
from collections.abc import Callable, Iterator

_counts: Counter = Counter()


def emit(name: str) -> None:
    _counts[name] += 1


@contextlib.contextmanager
def count_events(name: str) -> Iterator[Callable[[], int]]:
    """`with count_events("compile") as n: ...; assert n() == 1`."""
    start = _counts[name]
    yield lambda: _counts[name] - start
