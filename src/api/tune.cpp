// Tuning the decode kernels through the C ABI.
#include <algorithm>
#include <cstring>

#include "api/guard.h"
#include "api/objects.h"
#include "api/runtime.h"
#include "engine/tune.h"

using vkllm::fail;
using vkllm::api::guard;
using vkllm::api::require_arg;
using vkllm::api::require_struct;

extern "C" vkllm_status vkllm_runtime_tune(vkllm_runtime *runtime, const vkllm_model *model,
                                           vkllm_tune_result *result) {
    return guard([&] {
        require_arg(runtime, "vkllm_runtime_tune", "runtime");
        require_arg(model, "vkllm_runtime_tune", "model");
        if (result) require_struct(result, "vkllm_runtime_tune", "result");
        if (model->context != runtime->context)
            fail(VKLLM_ERR_INVALID_ARGUMENT,
                 "vkllm_runtime_tune: the model was loaded on another runtime");
        vkllm::engine::TuneSummary s =
            vkllm::engine::tune_model(*model->model, runtime->pipeline_cache_path, runtime->log);
        if (!result) return;
        vkllm_tune_result r{};
        r.struct_size = sizeof r;
        r.shapes = s.shapes;
        r.candidates_timed = s.candidates_timed;
        r.candidates_rejected = s.candidates_rejected;
        r.shapes_changed = s.shapes_changed;
        r.default_us = s.default_us;
        r.tuned_us = s.tuned_us;
        r.elapsed_ms = s.elapsed_ms;
        r.file_written = s.file_written;
        size_t keep = result->struct_size;
        std::memcpy(result, &r, std::min(keep, sizeof r));
        result->struct_size = keep;
    });
}
