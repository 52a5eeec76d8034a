"""Devices, device arrays and loaded executables. Imports neither the compiler nor the tracer."""

from .array import Array, put
from .device import Device, default, devices, get, platform_of
from .executable import Executable

__all__ = ["Array", "Device", "Executable", "default", "devices", "get", "platform_of", "put"]
