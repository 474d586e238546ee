// Models through the C ABI.
#include <cstring>
#include <memory>

#include "api/guard.h"
#include "api/objects.h"
#include "api/out.h"
#include "api/runtime.h"
#include "engine/embed.h"

using vkllm::fail;
using vkllm::api::guard;
using vkllm::api::require_arg;
using vkllm::api::require_struct;

extern "C" {

void vkllm_model_params_init(vkllm_model_params *params) {
    if (!params) return;
    std::memset(params, 0, sizeof *params);
    params->struct_size = sizeof *params;
}

vkllm_status vkllm_model_load(vkllm_runtime *runtime, const char *path,
                              const vkllm_model_params *params, vkllm_model **out) {
    return guard([&] {
        const char *fn = "vkllm_model_load";
        require_arg(runtime, fn, "runtime");
        require_arg(path, fn, "path");
        require_arg(out, fn, "out");
        vkllm_model_params p;
        vkllm_model_params_init(&p);
        if (params) {
            if (params->struct_size < sizeof(size_t) || params->struct_size > sizeof p)
                fail(VKLLM_ERR_INVALID_ARGUMENT, "%s: params->struct_size is %zu", fn,
                     params->struct_size);
            std::memcpy(&p, params, params->struct_size);
        }
        vkllm::models::LoadProgress progress;
        if (p.progress)
            progress = [&p](uint64_t done, uint64_t total) {
                return p.progress(p.progress_user_data,
                                  total ? float(double(done) / total) : 1.0f) == 0;
            };
        auto m = std::make_unique<vkllm_model>();
        m->context = runtime->context;
        m->model = std::make_shared<vkllm::engine::Model>(*runtime->context, path, progress);
        m->tokenizer.impl = m->model->tokenizer();
        m->metadata.file = m->model->metadata();
        *out = m.release();
    });
}

void vkllm_model_destroy(vkllm_model *model) {
    try {
        delete model;
    } catch (...) {
    }
}

const vkllm_gguf *vkllm_model_get_gguf(const vkllm_model *model) {
    return model ? &model->metadata : nullptr;
}

const vkllm_tokenizer *vkllm_model_get_tokenizer(const vkllm_model *model) {
    return model ? &model->tokenizer : nullptr;
}

const char *vkllm_model_get_chat_template(const vkllm_model *model) {
    return model ? model->model->chat_template().c_str() : nullptr;
}

vkllm_status vkllm_model_get_info(const vkllm_model *model, vkllm_model_info *out) {
    return guard([&] {
        require_arg(model, "vkllm_model_get_info", "model");
        require_struct(out, "vkllm_model_get_info", "out");
        const vkllm::engine::Model &m = *model->model;
        const auto &c = m.config();
        vkllm_model_info info{};
        info.struct_size = sizeof info;
        std::snprintf(info.architecture, sizeof info.architecture, "%s", c.arch_name.c_str());
        info.n_vocab = c.n_vocab;
        info.n_embd = c.n_embd;
        info.n_layers = c.n_layer;
        info.n_heads = c.n_head;
        info.n_kv_heads = c.n_head_kv;
        info.head_dim = c.head_dim;
        info.n_ctx_train = c.n_ctx_train;
        info.device_bytes = m.weights().device_bytes;
        info.file_bytes = m.file_bytes();
        info.tensor_bytes = m.tensor_bytes();
        info.pooling = static_cast<vkllm_pooling>(vkllm::engine::model_pooling(m));
        vkllm::api::copy_struct(info, out);
    });
}

vkllm_status vkllm_model_get_rope_table_builds(const vkllm_model *model, uint64_t *count) {
    return guard([&] {
        require_arg(model, "vkllm_model_get_rope_table_builds", "model");
        require_arg(count, "vkllm_model_get_rope_table_builds", "count");
        *count = model->model->rope_table_builds();
    });
}

}  // extern "C"
