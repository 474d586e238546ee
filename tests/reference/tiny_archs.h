// The tiny random model of each architecture with every switch it has turned on. The engine is
// checked on these against the CPU reference (test_architectures.cpp) and against llama.cpp
// (test_tiny_llamacpp.cpp, whose reference ids tools/llamacpp_reference/tiny_greedy.mjs makes
// from the files `vkllm_write_tiny_models` writes). Every spec here loads in llama.cpp: its
// token list is as long as its embedding.
#pragma once

#include <string>
#include <vector>

#include "reference/tiny_model.h"

struct TinyArch {
    std::string name;  // the file's stem: "<name>.gguf"
    TinyModelSpec spec;
};

const std::vector<TinyArch> &tiny_archs();

// The tiny encoder (embedding) models: one bert model written once per pooling type ("bert-none",
// "bert-mean", "bert-cls", "bert-last"; the same weights, only bert.pooling_type differs, since
// llama.cpp's context takes its pooling from the file). `vkllm_write_tiny_models` writes them
// into DIR/embed, the files tools/llamacpp_reference/tiny_embed.mjs runs llama.cpp's embedding
// context on.
const std::vector<TinyArch> &tiny_embed_archs();
