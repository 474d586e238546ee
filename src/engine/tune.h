// When and for what the decode kernels are tuned, and where the winners live: the tuner
// (gpu/tuner.h) times the variants of every matrix-vector shape of a model; the winners go
// to the runtime's kernels and to the tune file beside the pipeline cache (engine/tune_file.h),
// which the next runtime on the same device reads.
#pragma once

#include <string>

#include "common/log.h"
#include "engine/model.h"

namespace vkllm::engine {

struct TuneSummary {
    uint32_t shapes = 0, candidates_timed = 0, candidates_rejected = 0, shapes_changed = 0;
    double default_us = 0, tuned_us = 0;  // a decode step's matrix-vector products
    double elapsed_ms = 0;
    bool file_written = false;
};

// The tune file of a pipeline cache file: beside it, its name plus ".tune".
std::string tune_file_path(const std::string &pipeline_cache_path);

// Tunes every matrix-vector shape `model`'s decode step runs on its runtime's device, logging
// each shape's candidates, times and pick at INFO, and keeps the winners in the runtime's
// kernels (merged with those of earlier tunings). With a pipeline cache path, writes them to
// its tune file, merged with what the file held for other shapes (VKLLM_ERR_IO when it cannot
// be written; the winners stay in use).
TuneSummary tune_model(const Model &model, const std::string &pipeline_cache_path,
                       const Logger &log);

// The tune file of `pipeline_cache_path` into ctx's kernels: nothing where there is none; a
// WARNING and nothing where it is stale or malformed, or names a variant this device cannot
// run. Returns the shapes taken.
size_t load_tuning(gpu::Context &ctx, const std::string &pipeline_cache_path, const Logger &log);

}  // namespace vkllm::engine
