package vkllm

/*
#include <stdlib.h>
#include "vkllm.h"
*/
import "C"

import (
	"runtime"
	"unsafe"
)

// VersionString returns the loaded library's version as "MAJOR.MINOR.PATCH".
func VersionString() string { return C.GoString(C.vkllm_version_string()) }

// DeviceType is the kind of a Vulkan device.
type DeviceType int32

const (
	DeviceOther         DeviceType = C.VKLLM_DEVICE_OTHER
	DeviceIntegratedGPU DeviceType = C.VKLLM_DEVICE_INTEGRATED_GPU
	DeviceDiscreteGPU   DeviceType = C.VKLLM_DEVICE_DISCRETE_GPU
	DeviceVirtualGPU    DeviceType = C.VKLLM_DEVICE_VIRTUAL_GPU
	DeviceCPU           DeviceType = C.VKLLM_DEVICE_CPU // a software rasterizer such as lavapipe
)

// MemoryHeap is one memory heap of a device.
type MemoryHeap struct {
	Size        uint64
	DeviceLocal bool
}

// DeviceInfo is what vkllm knows about a Vulkan device (vkllm_device_info).
type DeviceInfo struct {
	Index                                   uint32 // position in Devices' order
	Type                                    DeviceType
	Name, DriverName, DriverInfo            string
	VendorID, DeviceID, APIVersion          uint32
	Usable                                  bool // vkllm can run on it
	UnifiedMemory                           bool // device-local memory is host-visible
	Heaps                                   []MemoryHeap
	MaxStorageBufferRange                   uint64
	MaxTexelBufferElements                  uint64
	MaxAllocationSize                       uint64
	MaxComputeSharedMemory                  uint32
	MaxWorkgroupInvocations, SubgroupSize   uint32
	ShaderFloat16, ShaderInt8, Storage16Bit bool
	Timestamps                              bool // sessions can be profiled
}

func deviceInfo(i *C.vkllm_device_info) DeviceInfo {
	heaps := make([]MemoryHeap, min(int(i.heap_count), len(i.heap_size)))
	for h := range heaps {
		heaps[h] = MemoryHeap{Size: uint64(i.heap_size[h]), DeviceLocal: i.heap_device_local[h] != 0}
	}
	return DeviceInfo{
		Index: uint32(i.index), Type: DeviceType(i._type), Name: C.GoString(&i.name[0]),
		DriverName: C.GoString(&i.driver_name[0]), DriverInfo: C.GoString(&i.driver_info[0]),
		VendorID: uint32(i.vendor_id), DeviceID: uint32(i.device_id),
		APIVersion: uint32(i.api_version), Usable: i.usable != 0,
		UnifiedMemory: i.unified_memory != 0, Heaps: heaps,
		MaxStorageBufferRange:   uint64(i.max_storage_buffer_range),
		MaxTexelBufferElements:  uint64(i.max_texel_buffer_elements),
		MaxAllocationSize:       uint64(i.max_allocation_size),
		MaxComputeSharedMemory:  uint32(i.max_compute_shared_memory),
		MaxWorkgroupInvocations: uint32(i.max_workgroup_invocations),
		SubgroupSize:            uint32(i.subgroup_size), ShaderFloat16: i.shader_float16 != 0,
		ShaderInt8: i.shader_int8 != 0, Storage16Bit: i.storage_16bit != 0,
		Timestamps: i.timestamps != 0,
	}
}

// Devices lists the Vulkan devices of this machine in the order device indices refer to
// (ErrNoDevice without a Vulkan loader or driver).
func Devices() ([]DeviceInfo, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var n C.size_t
	if err := check(C.vkllm_devices_enumerate(nil, 0, &n)); err != nil {
		return nil, err
	}
	infos := make([]C.vkllm_device_info, int(n)+1) // never empty, for &infos[0]
	for i := range infos {
		infos[i].struct_size = C.size_t(unsafe.Sizeof(infos[i]))
	}
	if err := check(C.vkllm_devices_enumerate(&infos[0], n, &n)); err != nil {
		return nil, err
	}
	out := make([]DeviceInfo, int(n))
	for i := range out {
		out[i] = deviceInfo(&infos[i])
	}
	return out, nil
}

// RuntimeOptions choose a runtime's device and settings (vkllm_runtime_params).
type RuntimeOptions struct {
	DeviceIndex       int32  // >= 0: that device; -1: by DeviceName, $VKLLM_DEVICE, or the best
	DeviceName        string // a case-insensitive substring of the device name; "": any
	Validation        bool   // the Khronos validation layer (it must be installed)
	PipelineCachePath string // compiled pipelines kept here between runs; "": none
	MemoryBudget      uint64 // most device memory bytes the runtime may hold; 0: no limit
}

// DefaultRuntimeOptions returns the library's defaults (vkllm_runtime_params_init).
func DefaultRuntimeOptions() RuntimeOptions {
	var p C.vkllm_runtime_params
	C.vkllm_runtime_params_init(&p)
	return RuntimeOptions{DeviceIndex: int32(p.device_index),
		Validation:   p.flags&C.VKLLM_RUNTIME_VALIDATION != 0,
		MemoryBudget: uint64(p.device_memory_budget)}
}

// NewRuntimeWith creates a runtime with options (start from DefaultRuntimeOptions).
func NewRuntimeWith(opts RuntimeOptions) (*Runtime, error) {
	var p C.vkllm_runtime_params
	C.vkllm_runtime_params_init(&p)
	p.device_index = C.int32_t(opts.DeviceIndex)
	if opts.DeviceName != "" {
		p.device_name = C.CString(opts.DeviceName)
		defer C.free(unsafe.Pointer(p.device_name))
	}
	if opts.Validation {
		p.flags |= C.VKLLM_RUNTIME_VALIDATION
	}
	if opts.PipelineCachePath != "" {
		p.pipeline_cache_path = C.CString(opts.PipelineCachePath)
		defer C.free(unsafe.Pointer(p.pipeline_cache_path))
	}
	p.device_memory_budget = C.uint64_t(opts.MemoryBudget)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var out *C.vkllm_runtime
	if err := check(C.vkllm_runtime_create(&p, &out)); err != nil {
		return nil, err
	}
	r := &Runtime{h: out}
	runtime.SetFinalizer(r, (*Runtime).Close)
	return r, nil
}

// use runs f with the open runtime's handle on a locked OS thread.
func (r *Runtime) use(f func(h *C.vkllm_runtime) error) error {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if r.h == nil {
		return errClosed
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	return f(r.h)
}

// DeviceInfo returns what vkllm knows about the runtime's device.
func (r *Runtime) DeviceInfo() (DeviceInfo, error) {
	var info C.vkllm_device_info
	info.struct_size = C.size_t(unsafe.Sizeof(info))
	err := r.use(func(h *C.vkllm_runtime) error { return check(C.vkllm_runtime_get_device_info(h, &info)) })
	if err != nil {
		return DeviceInfo{}, err
	}
	return deviceInfo(&info), nil
}

// RuntimeStats are a runtime's counters since its creation (vkllm_runtime_stats).
type RuntimeStats struct {
	ValidationErrors, ValidationWarnings uint64
	PipelinesCreated                     uint64
	PipelineCacheBytesLoaded             uint64
	DeviceMemoryAllocated                uint64
	Submits                              uint64
	PipelineCompileMs                    float64 // compiling pipelines, on first use
}

// Stats returns the runtime's counters.
func (r *Runtime) Stats() (RuntimeStats, error) {
	var s C.vkllm_runtime_stats
	s.struct_size = C.size_t(unsafe.Sizeof(s))
	err := r.use(func(h *C.vkllm_runtime) error { return check(C.vkllm_runtime_get_stats(h, &s)) })
	return RuntimeStats{ValidationErrors: uint64(s.validation_errors),
		ValidationWarnings:       uint64(s.validation_warnings),
		PipelinesCreated:         uint64(s.pipelines_created),
		PipelineCacheBytesLoaded: uint64(s.pipeline_cache_bytes_loaded),
		DeviceMemoryAllocated:    uint64(s.device_memory_allocated),
		Submits:                  uint64(s.submits),
		PipelineCompileMs:        float64(s.pipeline_compile_ms)}, err
}

// SelfCheck is what Runtime.SelfCheck found.
type SelfCheck struct {
	KernelsChecked, KernelsFailed uint32
	MaxError                      float64 // largest error relative to each tolerance (<= 1: pass)
	FirstFailure                  string  // the first kernel that failed, "" when none did
	ElapsedMs                     float64
}

// SelfCheck runs every compute kernel once on fixed data and compares it with a CPU
// computation. A kernel's failure is in the result; an error means the check could not run.
func (r *Runtime) SelfCheck() (SelfCheck, error) {
	var c C.vkllm_self_check_result
	c.struct_size = C.size_t(unsafe.Sizeof(c))
	err := r.use(func(h *C.vkllm_runtime) error { return check(C.vkllm_runtime_self_check(h, &c)) })
	return SelfCheck{KernelsChecked: uint32(c.kernels_checked),
		KernelsFailed: uint32(c.kernels_failed), MaxError: float64(c.max_error),
		FirstFailure: C.GoString(&c.first_failure[0]), ElapsedMs: float64(c.elapsed_ms)}, err
}
