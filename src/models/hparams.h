// A file's hyper-parameters under its architecture's prefix ("<general.architecture>."), read
// and checked: a required key that is missing, or a value the model cannot work with, is a
// VKLLM_ERR_FORMAT naming the file and the key. Keys are named without the prefix.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "format/gguf.h"

namespace vkllm::models {

class HParams {
  public:
    HParams(const format::GgufFile &file, const std::string &arch_name)
        : f_(file), p_(arch_name + ".") {}

    const format::GgufFile &file() const { return f_; }
    const char *path() const { return f_.path().c_str(); }
    const std::string &prefix() const { return p_; }

    bool has(const std::string &key) const { return f_.find(p_ + key) != nullptr; }
    std::optional<std::string_view> string(const std::string &key) const {
        return f_.get_string(p_ + key);
    }
    std::optional<int64_t> integer(const std::string &key) const { return f_.get_int(p_ + key); }
    std::optional<double> number(const std::string &key) const { return f_.get_float(p_ + key); }
    std::optional<bool> flag(const std::string &key) const { return f_.get_bool(p_ + key); }

    // A count in 1..2^24.
    uint32_t need(const std::string &key) const;
    // need(key) where the file has the key, else `def`.
    uint32_t opt(const std::string &key, uint32_t def) const;
    // A float the model cannot work with (NaN, infinite, zero or negative) is a broken file,
    // not something to compute with. `def` where the file has no such key.
    float positive(const std::string &key, double def) const;
    // Any finite value; `def` where the file has no such key.
    float finite(const std::string &key, double def) const;
    // A finite value >= 0 (0 where the file has no such key).
    float non_negative(const std::string &key) const;

  private:
    const format::GgufFile &f_;
    std::string p_;
};

}  // namespace vkllm::models
