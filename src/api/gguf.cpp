// GGUF metadata through the C ABI.
#include <cstring>
#include <memory>

#include "api/guard.h"
#include "api/objects.h"
#include "api/out.h"
#include "format/gguf.h"
#include "format/summary.h"

using vkllm::fail;
using vkllm::api::copy_text;
using vkllm::api::guard;
using vkllm::api::require_arg;
using vkllm::api::require_struct;
using vkllm::format::KeyValue;

namespace {

const KeyValue &key_or_fail(const vkllm_gguf *g, const char *fn, const char *key) {
    require_arg(g, fn, "gguf");
    require_arg(key, fn, "key");
    const KeyValue *kv = g->file->find(key);
    if (!kv) fail(VKLLM_ERR_NOT_FOUND, "%s: %s has no key %s", fn, g->file->path().c_str(), key);
    return *kv;
}

}  // namespace

extern "C" {

vkllm_status vkllm_gguf_open(const char *path, vkllm_gguf **out) {
    return guard([&] {
        require_arg(path, "vkllm_gguf_open", "path");
        require_arg(out, "vkllm_gguf_open", "out");
        auto g = std::make_unique<vkllm_gguf>();
        g->file = std::make_unique<vkllm::format::GgufFile>(path);
        *out = g.release();
    });
}

void vkllm_gguf_destroy(vkllm_gguf *gguf) {
    delete gguf;
}

vkllm_status vkllm_gguf_get_summary(const vkllm_gguf *gguf, vkllm_model_summary *out) {
    return guard([&] {
        require_arg(gguf, "vkllm_gguf_get_summary", "gguf");
        require_struct(out, "vkllm_gguf_get_summary", "out");
        vkllm::api::copy_struct(vkllm::format::summarize(*gguf->file), out);
    });
}

vkllm_status vkllm_gguf_get_key(const vkllm_gguf *gguf, size_t index, vkllm_gguf_key *out) {
    return guard([&] {
        require_arg(gguf, "vkllm_gguf_get_key", "gguf");
        require_struct(out, "vkllm_gguf_get_key", "out");
        const auto &keys = gguf->file->keys();
        if (index >= keys.size())
            fail(VKLLM_ERR_NOT_FOUND, "vkllm_gguf_get_key: index %zu, the file has %zu keys", index,
                 keys.size());
        const KeyValue &kv = keys[index];
        vkllm_gguf_key k{};
        k.struct_size = sizeof k;
        k.name = kv.key.c_str();
        k.type = vkllm_gguf_type(kv.type);
        k.element_type = vkllm_gguf_type(kv.element_type);
        k.count = kv.count;
        vkllm::api::copy_struct(k, out);
    });
}

vkllm_status vkllm_gguf_get_int(const vkllm_gguf *gguf, const char *key, int64_t *out) {
    return guard([&] {
        const KeyValue &kv = key_or_fail(gguf, "vkllm_gguf_get_int", key);
        require_arg(out, "vkllm_gguf_get_int", "out");
        *out = *gguf->file->get_int(kv.key);
    });
}

vkllm_status vkllm_gguf_get_float(const vkllm_gguf *gguf, const char *key, double *out) {
    return guard([&] {
        const KeyValue &kv = key_or_fail(gguf, "vkllm_gguf_get_float", key);
        require_arg(out, "vkllm_gguf_get_float", "out");
        *out = *gguf->file->get_float(kv.key);
    });
}

vkllm_status vkllm_gguf_get_string(const vkllm_gguf *gguf, const char *key, char *buf,
                                   size_t capacity, size_t *length) {
    return guard([&] {
        const KeyValue &kv = key_or_fail(gguf, "vkllm_gguf_get_string", key);
        copy_text(*gguf->file->get_string(kv.key), buf, capacity, length, "vkllm_gguf_get_string");
    });
}

vkllm_status vkllm_gguf_get_text(const vkllm_gguf *gguf, const char *key, char *buf,
                                 size_t capacity, size_t *length) {
    return guard([&] {
        const KeyValue &kv = key_or_fail(gguf, "vkllm_gguf_get_text", key);
        copy_text(gguf->file->value_text(kv), buf, capacity, length, "vkllm_gguf_get_text");
    });
}

vkllm_status vkllm_gguf_get_tensor(const vkllm_gguf *gguf, size_t index, vkllm_tensor_info *out) {
    return guard([&] {
        require_arg(gguf, "vkllm_gguf_get_tensor", "gguf");
        require_struct(out, "vkllm_gguf_get_tensor", "out");
        const auto &tensors = gguf->file->tensors();
        if (index >= tensors.size())
            fail(VKLLM_ERR_NOT_FOUND, "vkllm_gguf_get_tensor: index %zu, the file has %zu tensors",
                 index, tensors.size());
        const auto &t = tensors[index];
        vkllm_tensor_info info{};
        info.struct_size = sizeof info;
        info.name = t.name.c_str();
        info.type = t.type->id;
        info.type_name = t.type->name;
        info.n_dims = t.n_dims;
        for (int d = 0; d < 4; ++d)
            info.dims[d] = t.dims[d];
        info.n_elements = t.n_elements;
        info.n_bytes = t.n_bytes;
        info.file_offset = t.offset;
        vkllm::api::copy_struct(info, out);
    });
}

const char *vkllm_ggml_type_name(uint32_t type) {
    const vkllm::format::GgmlType *t = vkllm::format::ggml_type(type);
    return t ? t->name : nullptr;
}

}  // extern "C"
