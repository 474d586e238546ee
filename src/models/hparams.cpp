#include "models/hparams.h"

#include <cmath>

#include "common/error.h"

namespace vkllm::models {

uint32_t HParams::need(const std::string &key) const {
    auto v = f_.get_int(p_ + key);
    if (!v) fail(VKLLM_ERR_FORMAT, "%s: %s%s is missing", path(), p_.c_str(), key.c_str());
    if (*v <= 0 || *v > int64_t(1) << 24)
        fail(VKLLM_ERR_FORMAT, "%s: %s%s = %lld is out of range", path(), p_.c_str(), key.c_str(),
             (long long)*v);
    return uint32_t(*v);
}

uint32_t HParams::opt(const std::string &key, uint32_t def) const {
    return has(key) ? need(key) : def;
}

float HParams::positive(const std::string &key, double def) const {
    double v = f_.get_float(p_ + key).value_or(def);
    if (!(v > 0) || !std::isfinite(float(v)))
        fail(VKLLM_ERR_FORMAT, "%s: %s%s = %g must be a positive finite number", path(), p_.c_str(),
             key.c_str(), v);
    return float(v);
}

float HParams::finite(const std::string &key, double def) const {
    double v = f_.get_float(p_ + key).value_or(def);
    if (!std::isfinite(float(v)))
        fail(VKLLM_ERR_FORMAT, "%s: %s%s = %g is not finite", path(), p_.c_str(), key.c_str(), v);
    return float(v);
}

float HParams::non_negative(const std::string &key) const {
    double v = f_.get_float(p_ + key).value_or(0);
    if (!std::isfinite(float(v)) || v < 0)
        fail(VKLLM_ERR_FORMAT, "%s: %s%s = %g must be a finite number >= 0", path(), p_.c_str(),
             key.c_str(), v);
    return float(v);
}

}  // namespace vkllm::models
