// What the opaque handles of the C API are, for the files of src/api.
#pragma once

#include <memory>

#include "format/gguf.h"
#include "tokenizer/tokenizer.h"

struct vkllm_gguf {
    std::unique_ptr<vkllm::format::GgufFile> file;
};

// Shared: a model will hand out its tokenizer while keeping it.
struct vkllm_tokenizer {
    std::shared_ptr<const vkllm::tokenizer::Tokenizer> impl;
};
