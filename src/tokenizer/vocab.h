// A tokenizer's vocabulary as the GGUF metadata states it (tokenizer.ggml.*), checked.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "format/gguf.h"

namespace vkllm::tokenizer {

// GGUF token types (tokenizer.ggml.token_type).
enum class TokenType : int32_t {
    Undefined = 0,
    Normal = 1,
    Unknown = 2,
    Control = 3,
    UserDefined = 4,
    Unused = 5,
    Byte = 6,
};

enum class VocabModel { Bpe, Spm, Wpm };  // tokenizer.ggml.model "gpt2" / "llama" / "bert"

// Token text -> id: an open-addressing table of ids into the token list, so a 262,144-token
// vocabulary is indexed without a second copy of every string (which a map keyed by
// std::string makes, at a few times the load time). It holds no pointers: copies stay valid.
class TokenIndex {
  public:
    void build(const std::vector<std::string> &tokens);  // the first of equal texts wins
    int32_t find(const std::vector<std::string> &tokens, std::string_view text) const;

  private:
    size_t slot(const std::vector<std::string> &tokens, std::string_view text) const;
    std::vector<int32_t> slots_;  // -1 when free; a power of two, at least twice the tokens
};

struct Vocab {
    VocabModel model = VocabModel::Bpe;
    std::string model_name;  // as in the file
    std::string pre;         // tokenizer.ggml.pre, "" when absent
    std::vector<std::string> tokens;
    std::vector<float> scores;  // empty when the file has none
    std::vector<TokenType> types;
    std::vector<std::string> merges;  // "left right", highest priority first
    TokenIndex index;                 // token text -> id
    // A WordPiece vocabulary's BOS is its [CLS] and its EOS its [SEP] when the file names only
    // those.
    int32_t bos = -1, eos = -1, eot = -1, eom = -1, unk = -1, pad = -1, sep = -1, cls = -1;
    bool add_bos = false;
    bool add_eos = false;
    bool add_space_prefix = true;  // SPM: the "dummy prefix" space; WPM: the space before words
    std::string chat_template;

    int32_t size() const { return int32_t(tokens.size()); }
    int32_t find(std::string_view text) const { return index.find(tokens, text); }
    TokenType type(int32_t id) const { return types[size_t(id)]; }
    // Generation stops at these: EOS, EOT, EOM, and the end-of-turn markers chat models use.
    std::vector<int32_t> end_of_generation;
};

// Throws VKLLM_ERR_FORMAT for inconsistent metadata (array lengths that differ, special ids
// outside the vocabulary) and VKLLM_ERR_UNSUPPORTED for a tokenizer model it does not know.
Vocab load_vocab(const format::GgufFile &file);

}  // namespace vkllm::tokenizer
