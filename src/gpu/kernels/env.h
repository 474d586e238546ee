// What every kernel family shares: the device, the pipelines, the shapes chosen for the device
// class, and the helpers that bind and dispatch within the device's limits.
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <type_traits>
#include <vector>

#include "gpu/kernels/variants.h"
#include "gpu/pipeline.h"
#include "gpu/recording.h"
#include "gpu/tensor.h"

namespace vkllm::gpu {

// Which kernel shapes to use: lavapipe runs a workgroup as one 8-wide SIMD program and wants
// few lanes owning many rows (LAVAPIPE.md); GPUs want wide workgroups.
enum class DeviceClass { Cpu, Gpu };
DeviceClass device_class(const Device &device);

// llvmpipe stops any loop of an invocation after 65,535 iterations in total without telling
// (LAVAPIPE.md); stay well below it, whatever the device.
constexpr uint64_t kMaxLoopIterations = 60000;

// Refuses (VKLLM_ERR_UNSUPPORTED) a kernel whose lanes would loop more than the limit.
void check_loops(uint64_t iterations, const char *kernel, uint32_t cols);
// Fails (VKLLM_ERR_INTERNAL) where binding `r` is smaller than `bytes`.
void require(const BufferRange &r, uint64_t bytes, const char *kernel, const char *what);

// The row walk of matvec_texel.glsl: x of at most 12 units per lane in registers (rows of up to
// 3072 on lavapipe's 8 lanes), 64 rows per workgroup. 12 rather than 8 took GPT-OSS's 2880-wide
// rows (its 615 MB output head) from the round robin to the walk: 25% less matvec time per
// token; 20 (the 4864-wide down projections of Qwen2.5-0.5B) measured within noise.
constexpr uint32_t kWalkUnits = 12, kWalkRows = 64;

struct KernelEnv {
    KernelEnv(Device &device, Pipelines &pipelines, DeviceClass cls);

    struct Chunk {
        uint32_t row0;
        uint32_t rows;
        BufferRange data;
    };
    // Row chunks of `m` whose bindings each fit in max_range bytes (0: maxStorageBufferRange).
    std::vector<Chunk> split_rows(const Matrix &m, uint64_t max_range = 0) const;
    // `groups` workgroups in x (and y beyond maxComputeWorkGroupCount[0]), times `groups_z`.
    // The bindings are the shader interface's (shaders/include/interface.h), by name.
    template <class Bindings, std::enable_if_t<std::is_base_of_v<BindingList, Bindings>, int> = 0>
    void dispatch_1d(Recording &rec, const Pipeline &p, const Bindings &bindings, const void *push,
                     uint32_t push_bytes, uint64_t groups, uint32_t groups_z = 1) const {
        dispatch_ranges(rec, p, binding_ranges(bindings), push, push_bytes, groups, groups_z);
    }

    // The matrix-vector variant for one vector (a decode step) of `key`: the tuned one where
    // tuning chose one, else the device class's default. Batches of several vectors keep the
    // default (their accumulators grow with the batch: tuning measured one).
    // `texel`: the texel kernel reads the weights, so that lavapipe's row walk may take them.
    MatvecVariant matvec_variant(const MatvecKey &key, bool texel) const;
    // lavapipe: 8 lanes, one subgroup, 16 rows, or kWalkRows where the texel kernel's walk
    // takes one vector's rows (`walkable`, for short ones); GPUs: matvec_wg lanes, matvec_rows
    // rows, shared memory. The walk is the variant of kWalkRows rows in one subgroup.
    MatvecVariant default_matvec_variant(const MatvecKey &key, bool walkable) const;
    // Whether the device runs `v` (workgroup size, shared memory, subgroup operations).
    bool supports(const MatvecVariant &v) const;
    // Whether `v` is one subgroup per workgroup on this device (lavapipe's fixed 8 lanes), so
    // that its subgroupAdd alone adds a row up (SUBGROUPS 1) and the row walk may be taken.
    bool single_subgroup(const MatvecVariant &v) const;
    // What tuning chose (gpu/tuner.h, engine/tune.h); recordings made afterwards use it.
    void set_tuning(MatvecTuning tuning);
    MatvecTuning tuning() const;

    Device &device;
    Pipelines &pipelines;
    bool cpu_class;
    bool matvec_subgroup = false;  // matvec and matvec_texel reduce with subgroupAdd
    bool texel_loads = true;
    // The cooperative-matrix kernels (*_coopmat.comp: prefill's matmul and attention), used
    // where `coopmat` is set: on GPUs whose device enabled them (Device::coopmat_enabled), on
    // CPU devices (Mesa 26's lavapipe) only when asked, by VKLLM_COOPMAT=on or by a test
    // (LinearKernels::set_coopmat); VKLLM_COOPMAT=off leaves them unused anywhere.
    bool coopmat = false;
    CoopmatShape coopmat_shape;     // the device's f16 x f16 -> f32 subgroup shape
    uint32_t coopmat_tile = 0;      // the coopmat matmul's tile side (0: automatic; tests: 32, 64)
    uint32_t attention_splits = 0;  // 0: automatic
    bool attention_tiled_forced = false;
    // attention_coopmat.comp for the prefill steps it fits (true) or for none (false), where the
    // device has it; unset: `coopmat`'s choice.
    std::optional<bool> attention_coopmat_forced;
    uint32_t matvec_wg;
    uint32_t matvec_rows;
    uint32_t norm_wg;
    uint32_t attention_wg;
    uint32_t argmax_wg;
    uint32_t sample_wg;
    // Attention: query heads x head_dim a workgroup may serve at once (their queries and
    // accumulators are each lane's state).
    uint32_t max_group_dims;

  private:
    mutable std::mutex tuning_mutex_;  // sessions on other threads record while tuning runs
    MatvecTuning tuning_;
    void dispatch_ranges(Recording &rec, const Pipeline &p,
                         const std::vector<BufferRange> &bindings, const void *push,
                         uint32_t push_bytes, uint64_t groups, uint32_t groups_z) const;
};

}  // namespace vkllm::gpu
