#include "gpu/kernels/rope_table.h"

#include <algorithm>
#include <cmath>

namespace vkllm::gpu {

std::vector<float> rope_table(uint32_t n_pos, uint32_t rot_dim, double base,
                              const RopeScaling &yarn) {
    uint32_t half = rot_dim / 2;
    std::vector<float> t(size_t(n_pos) * half * 2);
    // YaRN: pairs below `low` keep their angle (extrapolation), above `high` take angle /
    // factor (interpolation), a linear ramp between; the dimension where a pair turns n_rot
    // times over the original context is rot_dim ln(orig_ctx / (2 pi n_rot)) / (2 ln base).
    double low = 0, high = 0, mscale = yarn.attn_factor;
    if (yarn.factor > 0) {
        const double pi = 3.14159265358979323846;
        auto corr_dim = [&](double n_rot) {
            return rot_dim * std::log(yarn.orig_ctx / (n_rot * 2 * pi)) / (2 * std::log(base));
        };
        low = std::max(0.0, std::floor(corr_dim(yarn.beta_fast)));
        high = std::min(double(rot_dim - 1), std::ceil(corr_dim(yarn.beta_slow)));
        if (yarn.ext_factor != 0) mscale *= 1 + 0.1 * std::log(yarn.factor);
    }
    for (uint32_t i = 0; i < half; ++i) {
        double theta = std::pow(base, -2.0 * i / double(rot_dim));
        if (i < yarn.freq_factors.size()) theta /= double(yarn.freq_factors[i]);
        double mix = 1;  // share of the extrapolated angle
        if (yarn.factor > 0) {
            double y = (double(i) - low) / std::max(0.001, high - low);
            mix = (1 - std::min(1.0, std::max(0.0, y))) * yarn.ext_factor;
        }
        for (uint32_t p = 0; p < n_pos; ++p) {
            double extrap = double(p) * theta;
            double a = yarn.factor > 0 ? extrap / yarn.factor * (1 - mix) + extrap * mix : extrap;
            t[(size_t(p) * half + i) * 2] = float(std::cos(a) * mscale);
            t[(size_t(p) * half + i) * 2 + 1] = float(std::sin(a) * mscale);
        }
    }
    return t;
}

}  // namespace vkllm::gpu
