//! Devices, a runtime's counters and self-check, and the library's version text.

use vkllm_sys as sys;

use crate::{check, cstr_to_string, Model, Result, Runtime};

/// The library's version as "MAJOR.MINOR.PATCH".
pub fn version_string() -> String {
    // SAFETY: returns static, NUL-terminated text.
    unsafe { cstr_to_string(sys::vkllm_version_string()) }
}

/// The kind of a Vulkan device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeviceType {
    IntegratedGpu,
    DiscreteGpu,
    VirtualGpu,
    /// A software rasterizer such as Mesa's lavapipe.
    Cpu,
    Other,
}

/// Whether prefill runs on cooperative matrices (`VK_KHR_cooperative_matrix`) on a device, or
/// why not (`vkllm_coopmat_use`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CoopmatUse {
    /// The device does not offer them, or `VKLLM_VULKAN_MASK_FEATURES` hides them.
    Absent,
    /// Prefill's matrix products run on them, with [`DeviceInfo::coopmat_shape`].
    Used,
    /// Offered without the shape or the features the kernels need.
    Unsuitable,
    /// The library was built without the cooperative-matrix shaders.
    NotBuilt,
    /// `VKLLM_COOPMAT=off`, or `auto` (the default) on a CPU device.
    NotChosen,
    /// A value of a newer library.
    Other(i32),
}

/// The element type of a cooperative matrix (`vkllm_component_type`, Vulkan's values).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ComponentType {
    F16,
    F32,
    F64,
    S8,
    S16,
    S32,
    S64,
    U8,
    U16,
    U32,
    U64,
    /// A type newer than these bindings (bfloat16, fp8): Vulkan's value.
    Other(i32),
}

impl ComponentType {
    fn from_raw(t: sys::vkllm_component_type) -> ComponentType {
        const ALL: [ComponentType; 11] = [
            ComponentType::F16,
            ComponentType::F32,
            ComponentType::F64,
            ComponentType::S8,
            ComponentType::S16,
            ComponentType::S32,
            ComponentType::S64,
            ComponentType::U8,
            ComponentType::U16,
            ComponentType::U32,
            ComponentType::U64,
        ];
        // A negative value (where the C compiler makes enums signed) indexes nothing either.
        ALL.get(t as usize)
            .copied()
            .unwrap_or(ComponentType::Other(t as i32))
    }
}

impl std::fmt::Display for ComponentType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ComponentType::Other(v) => write!(f, "type {v}"),
            t => write!(f, "{}", format!("{t:?}").to_lowercase()),
        }
    }
}

/// One product a device computes cooperatively: result (m x n) = A (m x k) * B (k x n) + C
/// (m x n) (`vkllm_coopmat_shape`). Displays as "16x16x16 f16*f16+f32->f32".
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CoopmatShape {
    pub m: u32,
    pub n: u32,
    pub k: u32,
    pub a_type: ComponentType,
    pub b_type: ComponentType,
    pub c_type: ComponentType,
    pub result_type: ComponentType,
    /// One subgroup computes it (the scope vkllm's kernels use); otherwise a wider one.
    pub subgroup_scope: bool,
}

impl CoopmatShape {
    fn from_raw(s: &sys::vkllm_coopmat_shape) -> CoopmatShape {
        CoopmatShape {
            m: s.m,
            n: s.n,
            k: s.k,
            a_type: ComponentType::from_raw(s.a_type),
            b_type: ComponentType::from_raw(s.b_type),
            c_type: ComponentType::from_raw(s.c_type),
            result_type: ComponentType::from_raw(s.result_type),
            subgroup_scope: s.subgroup_scope != 0,
        }
    }
}

impl std::fmt::Display for CoopmatShape {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}x{}x{} {}*{}+{}->{}{}",
            self.m,
            self.n,
            self.k,
            self.a_type,
            self.b_type,
            self.c_type,
            self.result_type,
            if self.subgroup_scope {
                ""
            } else {
                " workgroup scope"
            }
        )
    }
}

/// What vkllm knows about a Vulkan device (`vkllm_device_info`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceInfo {
    /// Position in [`devices`]' order.
    pub index: u32,
    pub device_type: DeviceType,
    pub name: String,
    pub driver_name: String,
    pub driver_info: String,
    pub vendor_id: u32,
    pub device_id: u32,
    pub api_version: u32,
    /// vkllm can run on it.
    pub usable: bool,
    /// Device-local memory is also host-visible.
    pub unified_memory: bool,
    /// Memory heaps: size in bytes, and whether device-local.
    pub heaps: Vec<(u64, bool)>,
    pub max_storage_buffer_range: u64,
    pub max_texel_buffer_elements: u64,
    pub max_allocation_size: u64,
    pub max_compute_shared_memory: u32,
    pub max_workgroup_invocations: u32,
    pub subgroup_size: u32,
    pub shader_float16: bool,
    pub shader_int8: bool,
    pub storage_16bit: bool,
    /// Compute timestamps: sessions can be profiled.
    pub timestamps: bool,
    /// Whether prefill runs on cooperative matrices here, or why not.
    pub cooperative_matrix: CoopmatUse,
    /// The f16*f16+f32->f32 subgroup shape the kernels use (or would, where
    /// `cooperative_matrix` gives another reason); `None` where the device has none.
    pub coopmat_shape: Option<CoopmatShape>,
    /// Every cooperative-matrix shape the device offers, as its driver lists them.
    pub coopmat_shapes: Vec<CoopmatShape>,
}

fn blank_device_info() -> sys::vkllm_device_info {
    // SAFETY: zeroed is valid for this plain struct; struct_size set as required.
    let mut info: sys::vkllm_device_info = unsafe { std::mem::zeroed() };
    info.struct_size = std::mem::size_of::<sys::vkllm_device_info>();
    info
}

fn device_info(i: &sys::vkllm_device_info) -> DeviceInfo {
    let heaps = (i.heap_count as usize).min(sys::VKLLM_MAX_MEMORY_HEAPS as usize);
    DeviceInfo {
        index: i.index,
        device_type: match i.type_ {
            sys::VKLLM_DEVICE_INTEGRATED_GPU => DeviceType::IntegratedGpu,
            sys::VKLLM_DEVICE_DISCRETE_GPU => DeviceType::DiscreteGpu,
            sys::VKLLM_DEVICE_VIRTUAL_GPU => DeviceType::VirtualGpu,
            sys::VKLLM_DEVICE_CPU => DeviceType::Cpu,
            _ => DeviceType::Other,
        },
        // SAFETY: NUL-terminated arrays filled by the library.
        name: unsafe { cstr_to_string(i.name.as_ptr()) },
        // SAFETY: as above.
        driver_name: unsafe { cstr_to_string(i.driver_name.as_ptr()) },
        // SAFETY: as above.
        driver_info: unsafe { cstr_to_string(i.driver_info.as_ptr()) },
        vendor_id: i.vendor_id,
        device_id: i.device_id,
        api_version: i.api_version,
        usable: i.usable != 0,
        unified_memory: i.unified_memory != 0,
        heaps: (0..heaps)
            .map(|h| (i.heap_size[h], i.heap_device_local[h] != 0))
            .collect(),
        max_storage_buffer_range: i.max_storage_buffer_range,
        max_texel_buffer_elements: i.max_texel_buffer_elements,
        max_allocation_size: i.max_allocation_size,
        max_compute_shared_memory: i.max_compute_shared_memory,
        max_workgroup_invocations: i.max_workgroup_invocations,
        subgroup_size: i.subgroup_size,
        shader_float16: i.shader_float16 != 0,
        shader_int8: i.shader_int8 != 0,
        storage_16bit: i.storage_16bit != 0,
        timestamps: i.timestamps != 0,
        cooperative_matrix: match i.cooperative_matrix {
            sys::VKLLM_COOPMAT_ABSENT => CoopmatUse::Absent,
            sys::VKLLM_COOPMAT_USED => CoopmatUse::Used,
            sys::VKLLM_COOPMAT_UNSUITABLE => CoopmatUse::Unsuitable,
            sys::VKLLM_COOPMAT_NOT_BUILT => CoopmatUse::NotBuilt,
            sys::VKLLM_COOPMAT_NOT_CHOSEN => CoopmatUse::NotChosen,
            other => CoopmatUse::Other(other as i32),
        },
        coopmat_shape: (i.coopmat_shape.m != 0).then(|| CoopmatShape::from_raw(&i.coopmat_shape)),
        coopmat_shapes: i.coopmat_shapes
            [..(i.coopmat_shape_count as usize).min(sys::VKLLM_MAX_COOPMAT_SHAPES as usize)]
            .iter()
            .map(CoopmatShape::from_raw)
            .collect(),
    }
}

/// The Vulkan devices of this machine, in the order device indices refer to
/// (`Status::NoDevice` without a Vulkan loader or driver).
pub fn devices() -> Result<Vec<DeviceInfo>> {
    let mut count = 0usize;
    // SAFETY: capacity 0 with NULL infos asks for the count.
    check(unsafe { sys::vkllm_devices_enumerate(std::ptr::null_mut(), 0, &mut count) })?;
    let mut raw = vec![blank_device_info(); count];
    // SAFETY: raw holds `count` entries, each with struct_size set.
    check(unsafe { sys::vkllm_devices_enumerate(raw.as_mut_ptr(), raw.len(), &mut count) })?;
    raw.truncate(count);
    Ok(raw.iter().map(device_info).collect())
}

/// A runtime's counters since its creation (`vkllm_runtime_stats`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RuntimeStats {
    pub validation_errors: u64,
    pub validation_warnings: u64,
    pub pipelines_created: u64,
    pub pipeline_cache_bytes_loaded: u64,
    pub device_memory_allocated: u64,
    pub submits: u64,
    /// Milliseconds spent compiling pipelines (on first use, inside a prefill or decode).
    pub pipeline_compile_ms: f64,
    /// Weight shapes whose kernels run a tuned variant (from the tune file read at creation or
    /// from [`Runtime::tune`]).
    pub tuned_shapes: u64,
}

/// What [`Runtime::tune`] did (`vkllm_tune_result`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TuneResult {
    /// Distinct matrix-vector shapes of the model's decode step.
    pub shapes: u32,
    /// Variants timed, over all shapes.
    pub candidates_timed: u32,
    /// Variants whose output differed from the reference kernel (they cannot win).
    pub candidates_rejected: u32,
    /// Shapes whose winner is not the default variant.
    pub shapes_changed: u32,
    /// One decode step's matrix-vector time with the default variants, in microseconds.
    pub default_us: f64,
    /// ... with the winners.
    pub tuned_us: f64,
    pub elapsed_ms: f64,
    /// Whether the tune file beside the pipeline cache was written.
    pub file_written: bool,
}

/// What [`Runtime::self_check`] found.
#[derive(Clone, Debug, PartialEq)]
pub struct SelfCheck {
    pub kernels_checked: u32,
    pub kernels_failed: u32,
    /// Largest error relative to each check's tolerance (<= 1: pass).
    pub max_error: f64,
    /// The first kernel that failed, "" when none did.
    pub first_failure: String,
    pub elapsed_ms: f64,
}

impl Runtime {
    /// The device the runtime runs on.
    pub fn device_info(&self) -> Result<DeviceInfo> {
        let mut info = blank_device_info();
        // SAFETY: valid handle and output struct.
        check(unsafe { sys::vkllm_runtime_get_device_info(self.as_raw(), &mut info) })?;
        Ok(device_info(&info))
    }

    pub fn stats(&self) -> Result<RuntimeStats> {
        let mut s = sys::vkllm_runtime_stats {
            struct_size: std::mem::size_of::<sys::vkllm_runtime_stats>(),
            ..Default::default()
        };
        // SAFETY: valid handle and output struct.
        check(unsafe { sys::vkllm_runtime_get_stats(self.as_raw(), &mut s) })?;
        Ok(RuntimeStats {
            validation_errors: s.validation_errors,
            validation_warnings: s.validation_warnings,
            pipelines_created: s.pipelines_created,
            pipeline_cache_bytes_loaded: s.pipeline_cache_bytes_loaded,
            device_memory_allocated: s.device_memory_allocated,
            submits: s.submits,
            pipeline_compile_ms: s.pipeline_compile_ms,
            tuned_shapes: s.tuned_shapes,
        })
    }

    /// Runs every compute kernel once on fixed data and compares it with a CPU computation. A
    /// kernel's failure is reported in the result; an error means the check could not run.
    pub fn self_check(&self) -> Result<SelfCheck> {
        // SAFETY: zeroed is valid for this plain struct; struct_size set as required.
        let mut r: sys::vkllm_self_check_result = unsafe { std::mem::zeroed() };
        r.struct_size = std::mem::size_of::<sys::vkllm_self_check_result>();
        // SAFETY: valid handle and output struct.
        check(unsafe { sys::vkllm_runtime_self_check(self.as_raw(), &mut r) })?;
        Ok(SelfCheck {
            kernels_checked: r.kernels_checked,
            kernels_failed: r.kernels_failed,
            max_error: r.max_error,
            // SAFETY: NUL-terminated array filled by the library.
            first_failure: unsafe { cstr_to_string(r.first_failure.as_ptr()) },
            elapsed_ms: r.elapsed_ms,
        })
    }

    /// Times each variant of the decode kernels on `model`'s weight shapes (after checking its
    /// output against the reference kernel) and keeps the fastest for sessions created
    /// afterwards, and in the tune file beside the runtime's pipeline cache where it has one.
    /// What each shape tried goes to the log at INFO. `Status::InvalidArgument` for a model
    /// of another runtime; `Status::Io` when the tune file could not be written (the winners
    /// stay in use).
    pub fn tune(&self, model: &Model) -> Result<TuneResult> {
        let mut r = sys::vkllm_tune_result {
            struct_size: std::mem::size_of::<sys::vkllm_tune_result>(),
            ..Default::default()
        };
        // SAFETY: valid runtime and model handles and output struct.
        check(unsafe { sys::vkllm_runtime_tune(self.as_raw(), model.as_raw(), &mut r) })?;
        Ok(TuneResult {
            shapes: r.shapes,
            candidates_timed: r.candidates_timed,
            candidates_rejected: r.candidates_rejected,
            shapes_changed: r.shapes_changed,
            default_us: r.default_us,
            tuned_us: r.tuned_us,
            elapsed_ms: r.elapsed_ms,
            file_written: r.file_written != 0,
        })
    }
}
