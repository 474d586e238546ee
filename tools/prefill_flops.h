// The arithmetic of a prefill, counted from a GGUF file's tensor shapes, so that a prompt
// speed can be read as TFLOPS: each weight matrix multiplied once per token is 2 x its
// elements (a multiply and an add), the experts of a mixture only those a token uses, the
// output head once per prompt (a prefill computes only its last row's logits), and attention's
// two products, QK^T and PV, once per query and key.
#pragma once

#include <cstdint>

#include "vkllm.h"

namespace vkllm_tool {

struct PrefillFlops {
    // Per token: the weight matrices of the layers (embedding lookups are no products).
    double weights = 0;
    // Per prompt: the output projection of the last row (the tied embedding where the file
    // has no output.weight).
    double head = 0;
    // Per query and key, all layers: 2 x heads x (key + value head widths).
    double attention_per_key = 0;

    // Per token of a prompt of n tokens into an empty cache: query i attends to i + 1 keys
    // (causal), (n + 1) / 2 on average. Sliding windows are not counted: an upper bound for a
    // model whose windows are shorter than the prompt.
    double attention(uint32_t n) const { return attention_per_key * (double(n) + 1) / 2; }
    double per_token(uint32_t n) const { return n ? weights + head / double(n) + attention(n) : 0; }
};

vkllm_status prefill_flops(const vkllm_gguf *g, PrefillFlops &out);

}  // namespace vkllm_tool
