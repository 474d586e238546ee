#include "gpu/kernels/env.h"

#include <algorithm>
#include <numeric>

#include "gpu/kernels/weight_layout.h"

namespace vkllm::gpu {

void check_loops(uint64_t iterations, const char *kernel, uint32_t cols) {
    if (iterations > kMaxLoopIterations)
        fail(VKLLM_ERR_UNSUPPORTED, "%s: rows of %u elements are too long for one workgroup",
             kernel, cols);
}

void require(const BufferRange &r, uint64_t bytes, const char *kernel, const char *what) {
    if (r.size < bytes)
        fail(VKLLM_ERR_INTERNAL, "%s: %s binding has %llu bytes, needs %llu", kernel, what,
             (unsigned long long)r.size, (unsigned long long)bytes);
}

DeviceClass device_class(const Device &device) {
    return device.caps().cpu_device() ? DeviceClass::Cpu : DeviceClass::Gpu;
}

KernelEnv::KernelEnv(Device &dev, Pipelines &pipes, DeviceClass cls)
    : device(dev), pipelines(pipes) {
    bool cpu = cls == DeviceClass::Cpu;
    cpu_class = cpu;
    coopmat_shape = dev.caps().coopmat.f16;
    // For the device's own class this is what its info says (coopmat_use); kernels of the
    // other class (tests) choose as VKLLM_COOPMAT would for that class.
    coopmat = dev.coopmat_enabled() && coopmat_wanted(cpu);
    matvec_wg = cpu ? 8 : 64;
    matvec_rows = cpu ? 16 : 2;
    // A CPU device's workgroup of one subgroup (lavapipe: 8 and 8) adds its lanes' partial sums
    // with subgroupAdd (matvec_subgroup.comp, matvec_texel_subgroup.comp); GPUs, whose subgroup
    // size a driver may choose per pipeline, keep the shared-memory reduction.
    matvec_subgroup =
        cpu && dev.caps().subgroup_arithmetic && dev.info().subgroup_size == matvec_wg;
    norm_wg = cpu ? 8 : 128;
    // Attention: lavapipe runs 8 lanes splitting the keys, each K/V row loaded once for up to
    // 448 / head_dim query heads of its KV head (7 x 64 for Qwen2.5's groups of 7: the state of
    // more heads makes llvmpipe's compile time explode); GPUs 16 lanes, one query head per
    // workgroup. Shared memory stays within Vulkan's minimum of 16 KiB: WG x heads x head_dim
    // floats for the final combination.
    attention_wg = cpu ? 8 : 16;  // GPUs: the least; attention() widens it to fit shared memory
    max_group_dims = cpu ? 448 : 64;
    // argmax: one workgroup per row of logits (151,936 for Qwen) scans them; GPUs give it as
    // many lanes as they allow, up to 1024 (a power of two: the reduction halves).
    argmax_wg = 8;
    if (!cpu)
        while (argmax_wg * 2 <= std::min<uint32_t>(1024, dev.info().max_workgroup_invocations))
            argmax_wg *= 2;
    // sample: one workgroup per row; 128 lanes (Vulkan's minimum) keep lavapipe's sweeps of a
    // 262,144-id vocabulary within its loop limit and took a third less time there than 256.
    sample_wg = !cpu && dev.info().max_workgroup_invocations >= 256 ? 256 : 128;
}

MatvecVariant KernelEnv::matvec_variant(const MatvecKey &key, bool texel) const {
    {
        std::lock_guard<std::mutex> lock(tuning_mutex_);
        auto it = tuning_.find(key);
        if (it != tuning_.end()) return it->second;
    }
    return default_matvec_variant(key, texel);
}

MatvecVariant KernelEnv::default_matvec_variant(const MatvecKey &key, bool walkable) const {
    MatvecVariant v{matvec_wg, matvec_rows, matvec_subgroup};
    if (walkable && v.subgroup && single_subgroup(v) && key.cols / 32 <= v.wg * kWalkUnits)
        v.rows = kWalkRows;
    return v;
}

bool KernelEnv::single_subgroup(const MatvecVariant &v) const {
    return cpu_class && v.wg == device.info().subgroup_size;
}

bool KernelEnv::supports(const MatvecVariant &v) const {
    const vkllm_device_info &info = device.info();
    if (v.wg == 0 || v.wg > kMaxVariantWg || (v.wg & (v.wg - 1)) || v.rows == 0 ||
        v.rows > kMaxVariantRows || v.wg > info.max_workgroup_invocations)
        return false;
    if (v.subgroup && !device.caps().subgroup_arithmetic) return false;
    // The reductions' shared memory for one vector: a float per output (two per row where a
    // gated unit's two matrices are fused) per lane, or per subgroup of at least one lane, and
    // the fused norm's float per lane.
    uint64_t outputs = uint64_t(v.rows) * 2;
    uint64_t shared = single_subgroup(v) && v.subgroup ? 0 : (outputs + 1) * v.wg * 4;
    return shared <= info.max_compute_shared_memory;
}

void KernelEnv::set_tuning(MatvecTuning tuning) {
    std::lock_guard<std::mutex> lock(tuning_mutex_);
    tuning_ = std::move(tuning);
}

MatvecTuning KernelEnv::tuning() const {
    std::lock_guard<std::mutex> lock(tuning_mutex_);
    return tuning_;
}

std::vector<KernelEnv::Chunk> KernelEnv::split_rows(const Matrix &m, uint64_t max_range) const {
    if (m.cols % block_weights(m.type))
        fail(VKLLM_ERR_INTERNAL, "a row of %u weights is not whole blocks of %u", m.cols,
             block_weights(m.type));
    uint64_t total = weight_bytes(m.type, uint64_t(m.rows) * m.cols);
    require(m.data, total, "matrix", "weight");
    if (max_range == 0) max_range = device.info().max_storage_buffer_range;
    std::vector<Chunk> chunks;
    if (total <= max_range) {
        chunks.push_back(Chunk{0, m.rows, BufferRange{m.data.buffer, m.data.offset, total}});
        return chunks;
    }
    // Chunks start on rows whose byte offset keeps the binding alignment (texel or storage)
    // and, for the grouped types, starts a group.
    uint64_t align = std::lcm(device.caps().storage_offset_align, device.caps().texel_offset_align);
    uint64_t step = 1;
    while (step <= 4096 && (row_offset(m.type, m.cols, step) == UINT64_MAX ||
                            row_offset(m.type, m.cols, step) % align))
        ++step;
    uint64_t per_row = row_offset(m.type, m.cols, step) / step;
    uint64_t per_chunk = per_row ? (max_range / per_row) / step * step : 0;
    if (step > 4096 || per_chunk == 0)
        fail(VKLLM_ERR_UNSUPPORTED, "a row of %u weights exceeds the device's binding limit",
             m.cols);
    for (uint64_t r = 0; r < m.rows; r += per_chunk) {
        uint64_t n = std::min<uint64_t>(per_chunk, m.rows - r);
        uint64_t bytes = weight_bytes(m.type, n * m.cols);
        chunks.push_back(Chunk{
            uint32_t(r), uint32_t(n),
            BufferRange{m.data.buffer, m.data.offset + row_offset(m.type, m.cols, r), bytes}});
    }
    return chunks;
}

void KernelEnv::dispatch_ranges(Recording &rec, const Pipeline &p,
                                const std::vector<BufferRange> &bindings, const void *push,
                                uint32_t push_bytes, uint64_t groups, uint32_t groups_z) const {
    if (groups == 0) return;
    uint64_t max_x = device.caps().max_groups_x;
    uint64_t gx = std::min(groups, max_x);
    uint64_t gy = (groups + gx - 1) / gx;
    if (gy > 65535)
        fail(VKLLM_ERR_UNSUPPORTED, "a dispatch of %llu workgroups is too large",
             (unsigned long long)groups);
    // Shaders see gx * gy >= groups workgroups and bound-check the excess.
    rec.dispatch(p, bindings, push, push_bytes, uint32_t(gx), uint32_t(gy), groups_z);
}

}  // namespace vkllm::gpu
