"""Where a reduction runs in two steps: one decision, read by `ember-fuse` (which then leaves
the reduction alone for IREE to fuse its producers into the first step) and by the lowering.

IREE's CPU backend distributes a dispatch over its parallel dims only, so a reduction to a
few elements runs on one core. Over many elements it runs in two steps instead: a reduction
of `chunks` contiguous pieces of the input (a parallel dim, spread over the cores), then of
their partials (16M f32 summed on two cores: 1.9 -> 1.4 ms, best of 15 rounds). Up to 1024
chunks of at least 1024 elements each: against 256 chunks, 4M f32 summed in 0.16 ms
instead of 0.25 and 16M in 1.26 instead of 1.47 (best of 10 interleaved rounds); at 2^18
elements that is 256 chunks still, which ran faster there than 1024 (48 us against 55).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ember.dialect.types import ShapedArray, symbolic

SPLIT_MIN_ELEMENTS = 1 << 18  # below, one core reduces it faster than two wake up
SPLIT_MAX_KEPT = 64  # above, the kept dims are parallel enough
CHUNKS = range(1024, 15, -1)  # the first that divides the split run is taken
CHUNK_MIN_ELEMENTS = 1024


@dataclass(frozen=True)
class Split:
    shape: tuple[int, ...]  # the input's shape with the split run as (chunks, rest)
    first: tuple[int, ...]  # the axes of `shape` the first step reduces
    chunk_axis: int  # the chunks' axis among the partials, which the second step reduces

    @property
    def partial_shape(self) -> tuple[int, ...]:
        return tuple(d for i, d in enumerate(self.shape) if i not in self.first)


def split_reduction(x: ShapedArray, axes: tuple[int, ...], result: ShapedArray) -> Split | None:
    """How a reduction of `x` over `axes` to `result` splits, or None where one step is
    right: few elements, many kept, symbolic dims, or no chunk count divides. The reduced
    axes' largest run of neighbours is merged and split."""
    axes = tuple(sorted(axes))
    if (not axes or symbolic(x.shape) or x.size < SPLIT_MIN_ELEMENTS
            or result.size > SPLIT_MAX_KEPT):
        return None
    runs = [[a] for a in axes if a - 1 not in axes]
    for run in runs:
        while run[-1] + 1 in axes:
            run.append(run[-1] + 1)
    run = max(runs, key=lambda r: int(np.prod([x.shape[a] for a in r])))
    start, n = run[0], int(np.prod([x.shape[a] for a in run]))
    chunks = next((c for c in CHUNKS if n % c == 0 and n // c >= CHUNK_MIN_ELEMENTS), None)
    if chunks is None:
        return None
    shape = x.shape[:start] + (chunks, n // chunks) + x.shape[run[-1] + 1:]
    first = sorted([a for a in axes if a < start] + [start + 1]
                   + [a - len(run) + 2 for a in axes if a > run[-1]])
    return Split(shape, tuple(first), start - sum(1 for a in axes if a < start))
