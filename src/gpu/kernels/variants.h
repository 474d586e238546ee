// Kernel variants: the specialization constants of a kernel that its output does not depend on
// (workgroup size, rows per workgroup, how lanes add up their sums), which the device's class
// chooses by default and tuning (gpu/tuner.h) may choose per weight shape instead.
#pragma once

#include <cstdint>
#include <map>
#include <tuple>

#include "gpu/tensor.h"

namespace vkllm::gpu {

// The matrix-vector families tuning measures: the dense matvec of linear() (one vector:
// decode) and the experts' matvec of MoE layers (moe_matvec, a token's chosen experts).
enum class MatvecFamily : uint32_t { Dense = 0, Moe = 1 };

// What a variant is chosen for: the family, the weight type as stored on the device and one
// matrix's shape (an expert's, for Moe). Fusions (a norm, a gated unit, stacked Q/K/V) take the
// variant of their weight's shape.
struct MatvecKey {
    MatvecFamily family = MatvecFamily::Dense;
    WeightType type = WeightType::F32;
    uint32_t rows = 0;
    uint32_t cols = 0;
    bool operator<(const MatvecKey &o) const {
        return std::tie(family, type, rows, cols) < std::tie(o.family, o.type, o.rows, o.cols);
    }
    bool operator==(const MatvecKey &o) const {
        return family == o.family && type == o.type && rows == o.rows && cols == o.cols;
    }
};

// wg lanes per workgroup, rows rows per workgroup; with `subgroup` the lanes add their partial
// sums with subgroupAdd and then across the workgroup's subgroups in shared memory (any
// subgroup size the driver picks), else through shared memory alone.
struct MatvecVariant {
    uint32_t wg = 0;
    uint32_t rows = 0;
    bool subgroup = false;
    bool operator==(const MatvecVariant &o) const {
        return wg == o.wg && rows == o.rows && subgroup == o.subgroup;
    }
    bool operator!=(const MatvecVariant &o) const { return !(*this == o); }
};

// Tuned winners; a shape not listed takes its family's default.
using MatvecTuning = std::map<MatvecKey, MatvecVariant>;

// Bounds every variant anyone may ask for lies within (a tune file's values are checked against
// them and against the device: KernelEnv::supports).
constexpr uint32_t kMaxVariantWg = 1024, kMaxVariantRows = 64;

}  // namespace vkllm::gpu
