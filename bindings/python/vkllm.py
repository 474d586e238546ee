"""Python bindings for libvkllm through ctypes, over the same C API as include/vkllm.h.

    import vkllm
    for d in vkllm.devices():
        print(d.index, d.name)
    with vkllm.Runtime(validation=True) as rt:
        print(rt.self_check().kernels_failed)

The library is looked up as $VKLLM_LIBRARY, else libvkllm.so.0 on the loader path.
Every failing call raises vkllm.Error carrying the status code and the library's message.
"""

import ctypes
import os

VERSION_MAJOR = 0  # the major version these bindings were written for

OK = 0
ERR_INVALID_ARGUMENT = 1
ERR_NO_DEVICE = 2
ERR_OUT_OF_HOST_MEMORY = 3
ERR_OUT_OF_DEVICE_MEMORY = 4
ERR_VULKAN = 5
ERR_DEVICE_LOST = 6
ERR_IO = 7
ERR_FORMAT = 8
ERR_UNSUPPORTED = 9
ERR_BUFFER_TOO_SMALL = 10
ERR_CONTEXT_FULL = 11
ERR_CANCELLED = 12
ERR_INTERNAL = 13

RUNTIME_VALIDATION = 0x1

_MAX_HEAPS = 16


class Error(Exception):
    """A vkllm call failed: `code` is the vkllm_status, `message` the detail."""

    def __init__(self, code, message):
        super().__init__(f"{message} ({_lib.vkllm_status_string(code).decode()})")
        self.code = code
        self.message = message


class DeviceInfo(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("index", ctypes.c_uint32),
        ("type", ctypes.c_int32),
        ("_name", ctypes.c_char * 256),
        ("_driver_name", ctypes.c_char * 256),
        ("_driver_info", ctypes.c_char * 256),
        ("vendor_id", ctypes.c_uint32),
        ("device_id", ctypes.c_uint32),
        ("api_version", ctypes.c_uint32),
        ("usable", ctypes.c_int32),
        ("unified_memory", ctypes.c_int32),
        ("heap_count", ctypes.c_uint32),
        ("heap_size", ctypes.c_uint64 * _MAX_HEAPS),
        ("heap_device_local", ctypes.c_int32 * _MAX_HEAPS),
        ("max_storage_buffer_range", ctypes.c_uint64),
        ("max_texel_buffer_elements", ctypes.c_uint64),
        ("max_allocation_size", ctypes.c_uint64),
        ("max_compute_shared_memory", ctypes.c_uint32),
        ("max_workgroup_invocations", ctypes.c_uint32),
        ("subgroup_size", ctypes.c_uint32),
        ("shader_float16", ctypes.c_int32),
        ("shader_int8", ctypes.c_int32),
        ("storage_16bit", ctypes.c_int32),
        ("timestamps", ctypes.c_int32),
    ]

    name = property(lambda self: self._name.decode(errors="replace"))
    driver_name = property(lambda self: self._driver_name.decode(errors="replace"))
    driver_info = property(lambda self: self._driver_info.decode(errors="replace"))


_LogFn = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int32, ctypes.c_char_p)


class _RuntimeParams(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("device_index", ctypes.c_int32),
        ("device_name", ctypes.c_char_p),
        ("flags", ctypes.c_uint32),
        ("pipeline_cache_path", ctypes.c_char_p),
        ("log_fn", _LogFn),
        ("log_user_data", ctypes.c_void_p),
    ]


class RuntimeStats(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("validation_errors", ctypes.c_uint64),
        ("validation_warnings", ctypes.c_uint64),
        ("pipelines_created", ctypes.c_uint64),
        ("pipeline_cache_bytes_loaded", ctypes.c_uint64),
        ("device_memory_allocated", ctypes.c_uint64),
        ("submits", ctypes.c_uint64),
    ]


class SelfCheckResult(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("kernels_checked", ctypes.c_uint32),
        ("kernels_failed", ctypes.c_uint32),
        ("max_error", ctypes.c_double),
        ("_first_failure", ctypes.c_char * 128),
        ("elapsed_ms", ctypes.c_double),
    ]

    first_failure = property(lambda self: self._first_failure.decode(errors="replace"))


def _load():
    lib = ctypes.CDLL(os.environ.get("VKLLM_LIBRARY", "libvkllm.so.0"))
    status = ctypes.c_int32
    sigs = {
        "vkllm_version": (ctypes.c_uint32, []),
        "vkllm_version_string": (ctypes.c_char_p, []),
        "vkllm_status_string": (ctypes.c_char_p, [status]),
        "vkllm_last_error": (ctypes.c_char_p, []),
        "vkllm_devices_enumerate": (
            status,
            [ctypes.POINTER(DeviceInfo), ctypes.c_size_t, ctypes.POINTER(ctypes.c_size_t)],
        ),
        "vkllm_runtime_params_init": (None, [ctypes.POINTER(_RuntimeParams)]),
        "vkllm_runtime_create": (
            status,
            [ctypes.POINTER(_RuntimeParams), ctypes.POINTER(ctypes.c_void_p)],
        ),
        "vkllm_runtime_destroy": (None, [ctypes.c_void_p]),
        "vkllm_runtime_device_info": (status, [ctypes.c_void_p, ctypes.POINTER(DeviceInfo)]),
        "vkllm_runtime_stats_get": (status, [ctypes.c_void_p, ctypes.POINTER(RuntimeStats)]),
        "vkllm_runtime_self_check": (
            status,
            [ctypes.c_void_p, ctypes.POINTER(SelfCheckResult)],
        ),
    }
    for name, (res, args) in sigs.items():
        f = getattr(lib, name)
        f.restype = res
        f.argtypes = args
    major = lib.vkllm_version() // 10000
    if major != VERSION_MAJOR:
        raise ImportError(f"libvkllm major version {major}, these bindings need {VERSION_MAJOR}")
    return lib


_lib = _load()


def _check(code):
    if code != OK:
        raise Error(code, _lib.vkllm_last_error().decode(errors="replace"))


def version():
    return _lib.vkllm_version_string().decode()


def devices():
    """The Vulkan devices of this machine, in index order."""
    n = ctypes.c_size_t(0)
    _check(_lib.vkllm_devices_enumerate(None, 0, ctypes.byref(n)))
    infos = (DeviceInfo * n.value)()
    for i in infos:
        i.struct_size = ctypes.sizeof(DeviceInfo)
    _check(_lib.vkllm_devices_enumerate(infos, n.value, ctypes.byref(n)))
    return list(infos)


class Runtime:
    """A Vulkan device ready to run kernels. Use as a context manager or call close()."""

    def __init__(self, device=None, validation=False, pipeline_cache=None, log=None):
        p = _RuntimeParams()
        _lib.vkllm_runtime_params_init(ctypes.byref(p))
        if isinstance(device, int):
            p.device_index = device
        elif device is not None:
            p.device_name = device.encode()
        if validation:
            p.flags |= RUNTIME_VALIDATION
        if pipeline_cache is not None:
            p.pipeline_cache_path = os.fsencode(pipeline_cache)
        # The callback object must outlive the runtime: keep it on self.
        self._log = _LogFn(lambda _u, level, msg: log(level, msg.decode(errors="replace")))
        if log is not None:
            p.log_fn = self._log
        handle = ctypes.c_void_p()
        _check(_lib.vkllm_runtime_create(ctypes.byref(p), ctypes.byref(handle)))
        self._handle = handle

    def close(self):
        if self._handle:
            _lib.vkllm_runtime_destroy(self._handle)
            self._handle = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        self.close()

    def device_info(self):
        info = DeviceInfo()
        info.struct_size = ctypes.sizeof(DeviceInfo)
        _check(_lib.vkllm_runtime_device_info(self._handle, ctypes.byref(info)))
        return info

    def stats(self):
        s = RuntimeStats()
        s.struct_size = ctypes.sizeof(RuntimeStats)
        _check(_lib.vkllm_runtime_stats_get(self._handle, ctypes.byref(s)))
        return s

    def self_check(self):
        r = SelfCheckResult()
        r.struct_size = ctypes.sizeof(SelfCheckResult)
        _check(_lib.vkllm_runtime_self_check(self._handle, ctypes.byref(r)))
        return r
