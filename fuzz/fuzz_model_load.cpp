// Whole model loading from arbitrary bytes, on the Vulkan device (lavapipe in CI): the file is
// loaded as a model; when that succeeds a small session is created and a few tokens run
// through it, so that a file valid enough to pass the reader reaches the architecture
// configuration, the tokenizer, the weight upload, the plan and the kernels. The seeds are
// small valid models of every architecture, so most mutations stay valid enough to get deep.
#include <cstdio>
#include <cstdlib>

#include "memory_file.h"
#include "vkllm.h"

namespace {
vkllm_runtime *g_runtime = nullptr;
}

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
    vkllm_runtime_params p;
    vkllm_runtime_params_init(&p);
    // A budget keeps a file that asks for huge buffers from exhausting the machine: it gets
    // VKLLM_ERR_OUT_OF_DEVICE_MEMORY like a real device would give it.
    p.device_memory_budget = uint64_t(256) << 20;
    if (vkllm_runtime_create(&p, &g_runtime) != VKLLM_OK) {
        std::fprintf(stderr, "fuzz_model_load: no runtime: %s\n", vkllm_last_error());
        std::exit(1);
    }
    // Not destroyed at exit: it stays reachable, and unloading the driver then would leave
    // its own allocations unattributable (reported as leaks of an unknown module).
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    MemoryFile file(data, size);
    if (!file.ok()) return 0;
    vkllm_model *model = nullptr;
    if (vkllm_model_load(g_runtime, file.path(), nullptr, &model) != VKLLM_OK) return 0;
    vkllm_model_info info;
    info.struct_size = sizeof info;
    vkllm_model_get_info(model, &info);
    vkllm_session_params sp;
    vkllm_session_params_init(&sp);
    sp.n_ctx = 8;
    sp.n_batch = 2;
    vkllm_session *session = nullptr;
    if (vkllm_session_create(model, &sp, &session) == VKLLM_OK) {
        int32_t tokens[3] = {0, 1, 2};
        for (int32_t &t : tokens)
            t = info.n_vocab ? t % int32_t(info.n_vocab) : 0;
        float *logits = static_cast<float *>(std::malloc(sizeof(float) * info.n_vocab));
        vkllm_session_eval(session, 0, tokens, 3, logits);
        std::free(logits);
        vkllm_session_destroy(session);
    }
    vkllm_model_destroy(model);
    return 0;
}
