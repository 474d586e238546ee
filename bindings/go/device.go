package vkllm

/*
#include <stdlib.h>
#include "vkllm.h"
*/
import "C"

import (
	"fmt"
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

// CoopmatUse says whether prefill runs on cooperative matrices (VK_KHR_cooperative_matrix) on a
// device, or why not (vkllm_coopmat_use).
type CoopmatUse int32

const (
	// CoopmatAbsent: the device does not offer them, or VKLLM_VULKAN_MASK_FEATURES hides them.
	CoopmatAbsent CoopmatUse = C.VKLLM_COOPMAT_ABSENT
	// CoopmatUsed: prefill's matrix products run on them, with DeviceInfo.CoopmatShape.
	CoopmatUsed CoopmatUse = C.VKLLM_COOPMAT_USED
	// CoopmatUnsuitable: offered without the shape or the features the kernels need.
	CoopmatUnsuitable CoopmatUse = C.VKLLM_COOPMAT_UNSUITABLE
	// CoopmatNotBuilt: the library was built without the cooperative-matrix shaders.
	CoopmatNotBuilt CoopmatUse = C.VKLLM_COOPMAT_NOT_BUILT
	// CoopmatNotChosen: VKLLM_COOPMAT=off, or auto (the default) on a CPU device.
	CoopmatNotChosen CoopmatUse = C.VKLLM_COOPMAT_NOT_CHOSEN
)

// ComponentType is a cooperative matrix's element type (vkllm_component_type: Vulkan's
// values; a type newer than these bindings keeps its number).
type ComponentType int32

const (
	ComponentF16 ComponentType = C.VKLLM_COMPONENT_F16
	ComponentF32 ComponentType = C.VKLLM_COMPONENT_F32
	ComponentF64 ComponentType = C.VKLLM_COMPONENT_F64
	ComponentS8  ComponentType = C.VKLLM_COMPONENT_S8
	ComponentS16 ComponentType = C.VKLLM_COMPONENT_S16
	ComponentS32 ComponentType = C.VKLLM_COMPONENT_S32
	ComponentS64 ComponentType = C.VKLLM_COMPONENT_S64
	ComponentU8  ComponentType = C.VKLLM_COMPONENT_U8
	ComponentU16 ComponentType = C.VKLLM_COMPONENT_U16
	ComponentU32 ComponentType = C.VKLLM_COMPONENT_U32
	ComponentU64 ComponentType = C.VKLLM_COMPONENT_U64
)

// String gives "f16", "s8", ...
func (t ComponentType) String() string {
	names := []string{"f16", "f32", "f64", "s8", "s16", "s32", "s64", "u8", "u16", "u32", "u64"}
	if t >= 0 && int(t) < len(names) {
		return names[t]
	}
	return fmt.Sprintf("type %d", int32(t))
}

// CoopmatShape is one product a device computes cooperatively: result (M x N) = A (M x K) *
// B (K x N) + C (M x N) (vkllm_coopmat_shape).
type CoopmatShape struct {
	M, N, K                         uint32
	AType, BType, CType, ResultType ComponentType
	SubgroupScope                   bool // one subgroup computes it (what vkllm's kernels use)
}

// String gives "16x16x16 f16*f16+f32->f32".
func (s CoopmatShape) String() string {
	text := fmt.Sprintf("%dx%dx%d %v*%v+%v->%v", s.M, s.N, s.K, s.AType, s.BType, s.CType,
		s.ResultType)
	if !s.SubgroupScope {
		text += " workgroup scope"
	}
	return text
}

func coopmatShape(s *C.vkllm_coopmat_shape) CoopmatShape {
	return CoopmatShape{M: uint32(s.m), N: uint32(s.n), K: uint32(s.k),
		AType: ComponentType(s.a_type), BType: ComponentType(s.b_type),
		CType: ComponentType(s.c_type), ResultType: ComponentType(s.result_type),
		SubgroupScope: s.subgroup_scope != 0}
}

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
	// Whether prefill runs on cooperative matrices here, or why not.
	CooperativeMatrix CoopmatUse
	// The f16*f16+f32->f32 subgroup shape the kernels use (or would, where CooperativeMatrix
	// gives another reason); zero where the device has none.
	CoopmatShape CoopmatShape
	// Every cooperative-matrix shape the device offers, as its driver lists them.
	CoopmatShapes []CoopmatShape
}

func deviceInfo(i *C.vkllm_device_info) DeviceInfo {
	heaps := make([]MemoryHeap, min(int(i.heap_count), len(i.heap_size)))
	for h := range heaps {
		heaps[h] = MemoryHeap{Size: uint64(i.heap_size[h]), DeviceLocal: i.heap_device_local[h] != 0}
	}
	shapes := make([]CoopmatShape, min(int(i.coopmat_shape_count), len(i.coopmat_shapes)))
	for s := range shapes {
		shapes[s] = coopmatShape(&i.coopmat_shapes[s])
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
		Timestamps:        i.timestamps != 0,
		CooperativeMatrix: CoopmatUse(i.cooperative_matrix),
		CoopmatShape:      coopmatShape(&i.coopmat_shape),
		CoopmatShapes:     shapes,
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
	// TunedShapes counts the weight shapes whose kernels run a tuned variant (from the tune
	// file read at creation or from Runtime.Tune).
	TunedShapes uint64
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
		PipelineCompileMs:        float64(s.pipeline_compile_ms),
		TunedShapes:              uint64(s.tuned_shapes)}, err
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

// TuneResult is what Runtime.Tune did (vkllm_tune_result).
type TuneResult struct {
	Shapes             uint32  // distinct matrix-vector shapes of the model's decode step
	CandidatesTimed    uint32  // variants timed, over all shapes
	CandidatesRejected uint32  // variants whose output differed from the reference kernel
	ShapesChanged      uint32  // shapes whose winner is not the default variant
	DefaultUs          float64 // one decode step's matrix-vector time with the default variants
	TunedUs            float64 // ... with the winners
	ElapsedMs          float64
	FileWritten        bool // the tune file beside the pipeline cache was written
}

// Tune times each variant of the decode kernels on m's weight shapes (after checking its
// output against the reference kernel) and keeps the fastest for sessions created afterwards,
// and in the tune file beside the runtime's pipeline cache where it has one. What each shape
// tried goes to the log at INFO. ErrInvalidArgument for a model of another runtime; ErrIO when
// the tune file could not be written (the winners stay in use).
func (r *Runtime) Tune(m *Model) (TuneResult, error) {
	if m == nil {
		return TuneResult{}, &Error{Status: StatusInvalidArgument, Message: "Tune needs a model"}
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.h == nil {
		return TuneResult{}, errClosed
	}
	var c C.vkllm_tune_result
	c.struct_size = C.size_t(unsafe.Sizeof(c))
	err := r.use(func(h *C.vkllm_runtime) error { return check(C.vkllm_runtime_tune(h, m.h, &c)) })
	return TuneResult{Shapes: uint32(c.shapes), CandidatesTimed: uint32(c.candidates_timed),
		CandidatesRejected: uint32(c.candidates_rejected), ShapesChanged: uint32(c.shapes_changed),
		DefaultUs: float64(c.default_us), TunedUs: float64(c.tuned_us),
		ElapsedMs: float64(c.elapsed_ms), FileWritten: c.file_written != 0}, err
}
