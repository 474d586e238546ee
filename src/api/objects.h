// What the opaque handles of the C API are, for the files of src/api.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>

#include "engine/generate.h"
#include "engine/model.h"
#include "engine/session.h"
#include "format/gguf.h"
#include "gpu/context.h"
#include "grammar/token_trie.h"
#include "tokenizer/tokenizer.h"

struct vkllm_gguf {
    std::shared_ptr<const vkllm::format::GgufFile> file;  // a loaded model's is shared
};

// The token trie of a tokenizer's vocabulary, built by the first grammar compiled for it and
// shared by every later one (a grammar keeps it alive on its own).
struct vkllm_token_trie_cache {
    std::mutex mutex;
    std::shared_ptr<const vkllm::grammar::TokenTrie> trie;
};

// Shared: a model will hand out its tokenizer while keeping it.
struct vkllm_tokenizer {
    std::shared_ptr<const vkllm::tokenizer::Tokenizer> impl;
    std::shared_ptr<vkllm_token_trie_cache> trie = std::make_shared<vkllm_token_trie_cache>();
};

struct vkllm_model {
    std::shared_ptr<vkllm::gpu::Context> context;  // declared first: destroyed last
    std::shared_ptr<vkllm::engine::Model> model;
    vkllm_tokenizer tokenizer;  // handed out by vkllm_model_get_tokenizer
    vkllm_gguf metadata;        // handed out by vkllm_model_get_gguf
};

struct vkllm_session {
    std::shared_ptr<vkllm::gpu::Context> context;
    std::shared_ptr<vkllm::engine::Model> model;  // kept alive while the session lives
    std::unique_ptr<vkllm::engine::Session> session;
    std::atomic<bool> busy{false};  // a call that changes the session is running
    std::atomic<bool> lost{false};  // a call saw the device lost: every later one fails
};
