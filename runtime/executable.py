"""A compiled module loaded on a device, and the one call that runs it."""

from __future__ import annotations

from collections.abc import Sequence

import iree.runtime as rt

from ember.dialect.types import ShapedArray

from . import device as _device
from .array import Array

ENTRY = "main"


class Executable:
    """A `.vmfb` loaded into its own VM context on one device."""

    __slots__ = ("vmfb", "device", "out_avals", "_context", "_function", "_n_out")

    def __init__(self, vmfb: bytes, device: _device.Device, out_avals: Sequence[ShapedArray]):
        self.vmfb = vmfb
        self.device = device
        self.out_avals = tuple(out_avals)
        module = rt.VmModule.copy_buffer(_device.instance(), vmfb)
        self._context = rt.VmContext(_device.instance(), modules=[device.hal_module, module])
        self._function = module.lookup_function(ENTRY)
        self._n_out = len(self.out_avals)

    def __call__(self, args: Sequence[Array]) -> list[Array]:
        inputs = rt.VmVariantList(len(args))
        for a in args:
            inputs.push_ref(a.buffer)
        outputs = rt.VmVariantList(self._n_out)
        self._context.invoke(self._function, inputs, outputs)
        device = self.device
        return [Array(aval, outputs.get_as_object(i, rt.HalBufferView), device)
                for i, aval in enumerate(self.out_avals)]
