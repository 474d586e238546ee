#include "quant_targets.h"

#include <strings.h>

#include <cstdio>
#include <cstring>

#include "common/error.h"
#include "format/ggml_types.h"

namespace vkllm_tool {

namespace {

const Target kTargets[] = {
    {"F32", ggml::F32, 0, false},     {"F16", ggml::F16, 1, false},
    {"BF16", ggml::BF16, 32, false},  {"Q8_0", ggml::Q8_0, 7, false},
    {"Q4_0", ggml::Q4_0, 2, false},   {"Q4_1", ggml::Q4_1, 3, false},
    {"Q5_0", ggml::Q5_0, 8, false},   {"Q5_1", ggml::Q5_1, 9, false},
    {"Q4_K", ggml::Q4_K, 14, false},  {"Q5_K", ggml::Q5_K, 16, false},
    {"Q6_K", ggml::Q6_K, 18, false},  {"Q4_K_M", ggml::Q4_K, 15, true},
    {"Q5_K_M", ggml::Q5_K, 17, true},
};

bool ends_with(const std::string &s, const char *suffix) {
    size_t n = std::strlen(suffix);
    return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
}

// llama.cpp's use_more_bits: the first and last eighth of the layers and every third one
// between them.
bool use_more_bits(int layer, int n_layers) {
    return layer < n_layers / 8 || layer >= 7 * n_layers / 8 || (layer - n_layers / 8) % 3 == 2;
}

}  // namespace

const Target *find_target(const std::string &name) {
    for (const Target &t : kTargets)
        if (strcasecmp(name.c_str(), t.name) == 0) return &t;
    return nullptr;
}

const Target *find_target_by_ftype(uint32_t ftype) {
    for (const Target &t : kTargets)
        if (t.ftype == ftype) return &t;
    return nullptr;
}

std::string target_names() {
    std::string s;
    for (const Target &t : kTargets)
        s += (s.empty() ? "" : " ") + std::string(t.name);
    return s;
}

int layer_of(const std::string &name) {
    int layer = -1, consumed = 0;
    if (std::sscanf(name.c_str(), "blk.%d.%n", &layer, &consumed) == 1 && consumed > 0)
        return layer;
    return -1;
}

TypeChoice choose_type(const Target &target, const std::string &name, uint64_t cols, int n_layers,
                       bool has_output) {
    uint32_t want = target.type;
    if (target.mixture) {
        int layer = layer_of(name);
        if (name == "output.weight" || (!has_output && name == "token_embd.weight"))
            want = ggml::Q6_K;
        else if (layer >= 0 &&
                 (ends_with(name, ".attn_v.weight") || ends_with(name, ".ffn_down.weight")) &&
                 use_more_bits(layer, n_layers))
            want = ggml::Q6_K;
    }
    // Rows must be whole blocks. K-quants fall back as llama.cpp's do, to the 32-block type
    // of about the same size (Q4_K -> Q5_0, Q5_K -> Q5_1, Q6_K -> Q8_0: Qwen2.5-0.5B's
    // 896-wide rows take this path), then anything to F16.
    uint32_t type = want;
    uint32_t first = want == ggml::Q4_K ? ggml::Q5_0 : want == ggml::Q5_K ? ggml::Q5_1 : ggml::Q8_0;
    for (uint32_t fallback : {first, uint32_t(ggml::F16)}) {
        if (cols % vkllm::format::ggml_type(type)->block_elements == 0) break;
        type = fallback;
    }
    TypeChoice c{type, ""};
    if (type != want)
        c.note = vkllm::sformat("row of %llu is not whole %s blocks", (unsigned long long)cols,
                                vkllm::format::ggml_type(want)->name);
    return c;
}

}  // namespace vkllm_tool
