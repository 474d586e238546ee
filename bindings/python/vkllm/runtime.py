"""The devices of the machine and vkllm.Runtime, a Vulkan device ready to run kernels."""

import ctypes
import os

from . import _ffi
from ._lib import Owned, enum_field, lib, out_struct, params, text_field
from .constants import ComponentType, CoopmatUse, MAX_COOPMAT_SHAPES, RUNTIME_VALIDATION
from .errors import check, live


class CoopmatShape(_ffi.vkllm_coopmat_shape):
    """Result (m x n) = A (m x k) * B (k x n) + C (m x n), one cooperative product a device
    offers (vkllm_coopmat_shape); str() gives "16x16x16 f16*f16+f32->f32"."""

    _raw = _ffi.vkllm_coopmat_shape
    a_type = enum_field(_raw.a_type, ComponentType)
    b_type = enum_field(_raw.b_type, ComponentType)
    c_type = enum_field(_raw.c_type, ComponentType)
    result_type = enum_field(_raw.result_type, ComponentType)

    def __str__(self):
        def name(t):
            return t.name.lower() if isinstance(t, ComponentType) else f"type {t}"
        text = (f"{self.m}x{self.n}x{self.k} {name(self.a_type)}*{name(self.b_type)}"
                f"+{name(self.c_type)}->{name(self.result_type)}")
        return text if self.subgroup_scope else text + " workgroup scope"


class DeviceInfo(_ffi.vkllm_device_info):
    """A Vulkan device (vkllm_device_info), its text fields as str."""

    _raw = _ffi.vkllm_device_info
    name = text_field(_raw.name)
    driver_name = text_field(_raw.driver_name)
    driver_info = text_field(_raw.driver_info)
    # Whether prefill runs on cooperative matrices (CoopmatUse.USED, with coopmat_shape), or
    # why not; coopmat_shapes: every shape the device offers.
    cooperative_matrix = enum_field(_raw.cooperative_matrix, CoopmatUse)
    coopmat_shape = property(lambda self: CoopmatShape.from_buffer_copy(
        DeviceInfo._raw.coopmat_shape.__get__(self, DeviceInfo)))
    coopmat_shapes = property(lambda self: [
        CoopmatShape.from_buffer_copy(s) for s in DeviceInfo._raw.coopmat_shapes.__get__(
            self, DeviceInfo)[:min(self.coopmat_shape_count, MAX_COOPMAT_SHAPES)]])


class RuntimeStats(_ffi.vkllm_runtime_stats):
    """A runtime's counters (vkllm_runtime_stats)."""


class SelfCheckResult(_ffi.vkllm_self_check_result):
    """What Runtime.self_check found (vkllm_self_check_result)."""

    first_failure = text_field(_ffi.vkllm_self_check_result.first_failure)


class TuneResult(_ffi.vkllm_tune_result):
    """What Runtime.tune timed and chose (vkllm_tune_result)."""


def version():
    return lib.vkllm_version_string().decode()


def devices():
    """The Vulkan devices of this machine, in index order."""
    n = ctypes.c_size_t(0)
    check(lib.vkllm_devices_enumerate(None, 0, ctypes.byref(n)))
    infos = (DeviceInfo * n.value)()
    for i in infos:
        i.struct_size = ctypes.sizeof(DeviceInfo)
    check(lib.vkllm_devices_enumerate(infos, n.value, ctypes.byref(n)))
    return list(infos)


class Runtime(Owned):
    """A Vulkan device ready to run kernels. Use as a context manager or call close()."""
    _destroy = staticmethod(lib.vkllm_runtime_destroy)

    def __init__(self, device=None, validation=False, pipeline_cache=None, log=None,
                 memory_budget=None):
        """memory_budget: the most bytes of device memory the runtime may hold (models,
        sessions); past it loads fail with ERR_OUT_OF_DEVICE_MEMORY. None: no limit.
        log(level, message) receives the library's messages (else WARNING and above go to
        stderr)."""
        self._handle = None
        p = params(_ffi.vkllm_runtime_params, lib.vkllm_runtime_params_init)
        if memory_budget is not None:
            p.device_memory_budget = memory_budget
        if isinstance(device, int):
            p.device_index = device
        elif device is not None:
            p.device_name = device.encode()
        if validation:
            p.flags |= RUNTIME_VALIDATION
        if pipeline_cache is not None:
            p.pipeline_cache_path = os.fsencode(pipeline_cache)
        # The callback object must outlive the runtime: keep it on self.
        self._log = _ffi.vkllm_log_fn(
            lambda _u, level, msg: log(level, ctypes.string_at(msg).decode(errors="replace")))
        if log is not None:
            p.log_fn = self._log
        handle = ctypes.c_void_p()
        check(lib.vkllm_runtime_create(ctypes.byref(p), ctypes.byref(handle)))
        self._handle = handle

    def device_info(self):
        info = out_struct(DeviceInfo)
        check(lib.vkllm_runtime_get_device_info(self._handle, ctypes.byref(info)))
        return info

    def stats(self):
        s = out_struct(RuntimeStats)
        check(lib.vkllm_runtime_get_stats(self._handle, ctypes.byref(s)))
        return s

    def self_check(self):
        r = out_struct(SelfCheckResult)
        check(lib.vkllm_runtime_self_check(self._handle, ctypes.byref(r)))
        return r

    def tune(self, model):
        """Times the decode kernels' variants on `model`'s weight shapes and keeps the fastest
        for sessions created afterwards (and in the tune file beside the pipeline cache, when
        the runtime has one: file_written). What each shape tried goes to the log at INFO.
        Raises vkllm.Error for a closed or missing (None) model, or one of another runtime."""
        r = out_struct(TuneResult)
        handle = live(model._handle, "model") if model is not None else None
        check(lib.vkllm_runtime_tune(live(self._handle, "runtime"), handle, ctypes.byref(r)))
        return r
