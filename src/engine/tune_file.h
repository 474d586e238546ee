// The tune file: the matvec variants tuning chose (gpu/kernels/variants.h), kept beside the
// pipeline cache for later runs. A small versioned text format, one entry a line, described in
// docs/TUNING.md. It is input like any other: a stale, truncated or malformed file is refused
// whole, with a reason, and a refused file changes nothing.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "common/log.h"
#include "gpu/kernels/variants.h"

namespace vkllm::gpu {
class Device;
}

namespace vkllm::engine {

// Who a tune file is for: winners measured on one device with one driver by one vkllm build
// hold only there. Each field is one line of printable ASCII.
struct TuneIdentity {
    std::string device, driver, vkllm;
};

// This device's identity: vendor:device ids, name and pipeline cache UUID; the driver's name,
// its description and version number; the library's version.
TuneIdentity tune_identity(const gpu::Device &device);

// The file's text, entries sorted by key (the same winners give the same bytes). Throws
// VKLLM_ERR_INVALID_ARGUMENT for a winner parse_tune_file would refuse, so that what is
// written is what is read.
std::string format_tune_file(const TuneIdentity &id, const gpu::MatvecTuning &winners);

// The winners of `text`, or nullopt with *why (one line naming what is wrong and, for a line,
// its number) when anything is: another format or version, another identity than `expected`
// ("stale"), a malformed or missing line, an unknown family or weight type, a value out of
// bounds, a key listed twice, more than kMaxTuneFileBytes (which bounds the entries too: the
// shortest is 43 bytes, so at most about 24,000 fit). One bad line refuses the whole file.
std::optional<gpu::MatvecTuning> parse_tune_file(std::string_view text,
                                                 const TuneIdentity &expected, std::string *why);

// PATH's winners. A missing file gives {} silently (nothing tuned yet); an unreadable, stale or
// malformed one gives {} and one WARNING through `log` naming the path and the reason.
gpu::MatvecTuning read_tune_file(const std::string &path, const TuneIdentity &expected,
                                 const Logger &log);

// Replaces PATH with `winners` atomically (platform::write_file_atomically). Throws
// VKLLM_ERR_IO naming the path when it cannot, leaving any old file as it was.
void write_tune_file(const std::string &path, const TuneIdentity &id,
                     const gpu::MatvecTuning &winners);

constexpr size_t kMaxTuneFileBytes = size_t(1) << 20;

}  // namespace vkllm::engine
