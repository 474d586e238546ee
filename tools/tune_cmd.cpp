// vkllm tune: vkllm_runtime_tune on a model, its log printed as it goes. The tuner writes what
// each shape tried and picked at level INFO, which the library's default logger does not show,
// so this command installs one that does; the winners go to the tune file beside
// --pipeline-cache, where run, chat and bench with the same --pipeline-cache find them.
#include <cstdio>

#include "cli.h"
#include "vkllm.h"

namespace {

int report(vkllm_status s, const char *what) {
    std::fprintf(stderr, "vkllm: tune: %s: %s: %s\n", what, vkllm_status_string(s),
                 vkllm_last_error());
    return 1;
}

void print_log(void *, vkllm_log_level level, const char *message) {
    if (level < VKLLM_LOG_INFO) return;
    const char *tag = level == VKLLM_LOG_WARNING ? "warning: "
                      : level >= VKLLM_LOG_ERROR ? "error: "
                                                 : "";
    std::printf("%s%s\n", tag, message);
    std::fflush(stdout);
}

void print_summary(const vkllm_tune_result &r, const char *pipeline_cache) {
    std::printf("tuned %u shapes: %u candidates timed, %u rejected, %u shapes changed\n", r.shapes,
                r.candidates_timed, r.candidates_rejected, r.shapes_changed);
    std::printf(
        "decode matrix-vector time per token: %.1f us -> %.1f us (%.2fx as fast), "
        "tuning took %.0f ms\n",
        r.default_us, r.tuned_us, r.tuned_us > 0 ? r.default_us / r.tuned_us : 0.0, r.elapsed_ms);
    if (r.file_written)
        std::printf("tune file: %s.tune (read by run, chat and bench with --pipeline-cache %s)\n",
                    pipeline_cache, pipeline_cache);
    else if (!pipeline_cache)
        std::printf("tune file: none (without --pipeline-cache the winners are not kept)\n");
}

}  // namespace

int cmd_tune(const char *model_path, vkllm_runtime_params params) {
    params.log_fn = print_log;
    vkllm_runtime *rt = nullptr;
    vkllm_status s = vkllm_runtime_create(&params, &rt);
    if (s != VKLLM_OK) return report(s, "creating the runtime");
    vkllm_device_info d;
    d.struct_size = sizeof d;
    vkllm_runtime_get_device_info(rt, &d);
    std::printf("tuning %s on device %u: %s\n", model_path, d.index, d.name);
    vkllm_model *model = nullptr;
    s = vkllm_model_load(rt, model_path, nullptr, &model);
    if (s != VKLLM_OK) {
        vkllm_runtime_destroy(rt);
        return report(s, "loading the model");
    }
    vkllm_tune_result r;
    r.struct_size = sizeof r;
    s = vkllm_runtime_tune(rt, model, &r);
    if (s == VKLLM_OK) print_summary(r, params.pipeline_cache_path);
    // VKLLM_ERR_IO: the tune file could not be written (the message names it).
    int status = s == VKLLM_OK ? 0 : report(s, "tuning");
    vkllm_runtime_stats st;
    st.struct_size = sizeof st;
    vkllm_runtime_get_stats(rt, &st);
    vkllm_model_destroy(model);
    vkllm_runtime_destroy(rt);
    if (params.flags & VKLLM_RUNTIME_VALIDATION) {
        std::printf("validation: %llu errors, %llu warnings\n",
                    (unsigned long long)st.validation_errors,
                    (unsigned long long)st.validation_warnings);
        if (st.validation_errors) status = 1;
    }
    return status;
}
