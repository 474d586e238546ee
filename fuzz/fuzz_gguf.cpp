// The GGUF reader on arbitrary bytes, through the public API: open, then read back every key,
// every string, every tensor's info and the model summary. Any status is fine; a crash, a leak,
// undefined behaviour or a read outside the file is not.
#include <cstring>
#include <vector>

#include "memory_file.h"
#include "vkllm.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    MemoryFile file(data, size);
    if (!file.ok()) return 0;
    vkllm_gguf *g = nullptr;
    if (vkllm_gguf_open(file.path(), &g) != VKLLM_OK) return 0;
    vkllm_model_summary summary;
    summary.struct_size = sizeof summary;
    vkllm_gguf_get_summary(g, &summary);
    std::vector<char> buf(64);
    auto read = [&](auto fn, const char *name) {
        size_t length = 0;
        if (fn(g, name, buf.data(), buf.size(), &length) == VKLLM_ERR_BUFFER_TOO_SMALL) {
            buf.resize(length + 1);
            fn(g, name, buf.data(), buf.size(), &length);
        }
    };
    vkllm_gguf_key key;
    key.struct_size = sizeof key;
    for (size_t i = 0; vkllm_gguf_get_key(g, i, &key) == VKLLM_OK; ++i) {
        int64_t iv;
        double fv;
        vkllm_gguf_get_int(g, key.name, &iv);
        vkllm_gguf_get_float(g, key.name, &fv);
        read(vkllm_gguf_get_string, key.name);
        read(vkllm_gguf_get_text, key.name);
    }
    vkllm_tensor_info t;
    t.struct_size = sizeof t;
    for (size_t i = 0; vkllm_gguf_get_tensor(g, i, &t) == VKLLM_OK; ++i)
        vkllm_ggml_type_name(t.type);
    vkllm_tokenizer *tok = nullptr;
    if (vkllm_tokenizer_create(g, &tok) == VKLLM_OK) {
        int32_t ids[64];
        size_t n = 0;
        vkllm_tokenizer_encode(tok, "Hello world <s>", 15, VKLLM_TOKENIZE_ADD_SPECIAL, ids, 64, &n);
        vkllm_tokenizer_destroy(tok);
    }
    vkllm_gguf_destroy(g);
    return 0;
}
