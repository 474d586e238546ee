// Tuning: the candidate variants of the matrix-vector kernels (gpu/kernels/variants.h) timed on
// the device, on a model's own weights, each checked against the reference kernel first.
#pragma once

#include <vector>

#include "gpu/context.h"

namespace vkllm::gpu {

struct TunedCandidate {
    MatvecVariant variant;
    double us = 0;          // one product, the fastest of the timed submits
    double error = 0;       // largest difference from the reference relative to the tolerance
    bool rejected = false;  // error > 1 (or not finite): it may not win
};

struct TunedShape {
    MatvecKey key;
    MatvecVariant default_variant, winner;
    double default_us = 0, winner_us = 0;
    std::vector<TunedCandidate> candidates;  // the default first
};

// The variants tuning times for `key` on this device, the default first: on GPUs 32 to 256
// lanes by 1 to 8 rows, summed in shared memory or by subgroups; on lavapipe one subgroup of
// 8 lanes by 4 to 32 rows, and the row walk where the texel kernel takes one vector's rows.
std::vector<MatvecVariant> matvec_candidates(const KernelEnv &env, const MatvecKey &key,
                                             bool texel);

// Times every candidate of the shape of `ws` (matrices of one key: a model's layers) for one
// vector (a decode step), after checking its output on ws[0] against the reference kernel's
// (the storage-buffer kernel, no subgroups) on the same random input: within kTuneTolerance of
// the largest output, or it is rejected. The products cycle through ws (Bench::time). The
// winner is the fastest candidate not rejected; the default wins ties and whatever is within
// 3% of it (the noise of a timing). `kernels`: ctx's own, or (tests) the other device class's.
TunedShape tune_matvec(Context &ctx, Kernels &kernels, const std::vector<Matrix> &ws);
// The same for one token's k experts of each of `ws` (moe_matvec), routed to experts spread
// over the tensor.
TunedShape tune_moe_matvec(Context &ctx, Kernels &kernels, const std::vector<ExpertMatrix> &ws,
                           uint32_t k);

constexpr double kTuneTolerance = 1e-3;

}  // namespace vkllm::gpu
