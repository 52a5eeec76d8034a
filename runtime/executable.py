"""A compiled module loaded on a device, and the one call that runs it."""

from __future__ import annotations

from collections.abc import Sequence

import iree.runtime as rt

from ember.dialect.types import ShapedArray

from . import device as _device
from .array import Array

ENTRY = "main"
# Below this many elements in its largest argument or result, a module runs on the calling
# thread (local-sync, ~3 us per call); above, on the worker threads (local-task, ~45 us to
# wake them here, repaid by parallel kernels: 1024^2 matmul 13 ms vs 27 ms).
PARALLEL_MIN_ELEMENTS = 1 << 15


def runs_in_parallel(in_avals: Sequence[ShapedArray], out_avals: Sequence[ShapedArray]) -> bool:
    return max((a.size for a in (*in_avals, *out_avals)), default=0) >= PARALLEL_MIN_ELEMENTS


class Executable:
    """A `.vmfb` loaded into its own VM context on one device."""

    __slots__ = ("vmfb", "device", "out_avals", "parallel", "_context", "_function", "_n_out")

    def __init__(self, vmfb: bytes, device: _device.Device, in_avals: Sequence[ShapedArray],
                 out_avals: Sequence[ShapedArray]):
        self.vmfb = vmfb
        self.device = device
        self.out_avals = tuple(out_avals)
        self.parallel = runs_in_parallel(in_avals, out_avals)
        _, hal_module = device.hal_for(self.parallel)
        module = rt.VmModule.copy_buffer(_device.instance(), vmfb)
        self._context = rt.VmContext(_device.instance(), modules=[hal_module, module])
        self._function = module.lookup_function(ENTRY)
        self._n_out = len(self.out_avals)

    def __call__(self, args: Sequence[Array]) -> list[Array]:
        """The dispatch fast path: a few C calls and one Array per result."""
        inputs = _VariantList(len(args))
        for a in args:
            inputs.push_ref(a._buffer)
        outputs = _VariantList(self._n_out)
        self._context.invoke(self._function, inputs, outputs)
        device, get = self.device, outputs.get_as_object
        return [Array(aval, get(i, _BufferView), device) for i, aval in enumerate(self.out_avals)]


_VariantList, _BufferView = rt.VmVariantList, rt.HalBufferView
