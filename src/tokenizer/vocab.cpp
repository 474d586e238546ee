#include "tokenizer/vocab.h"

#include <algorithm>
#include <functional>

#include "common/error.h"
#include "tokenizer/pretokenize.h"

namespace vkllm::tokenizer {

void TokenIndex::build(const std::vector<std::string> &tokens) {
    size_t size = 16;
    while (size < 2 * tokens.size())
        size *= 2;
    slots_.assign(size, -1);
    for (size_t id = 0; id < tokens.size(); ++id) {
        int32_t &s = slots_[slot(tokens, tokens[id])];
        if (s < 0) s = int32_t(id);
    }
}

// Linear probing: the table is at most half full, so a probe is short.
size_t TokenIndex::slot(const std::vector<std::string> &tokens, std::string_view text) const {
    size_t mask = slots_.size() - 1;
    size_t hash = std::hash<std::string_view>{}(text);
    for (size_t i = hash & mask;; i = (i + 1) & mask) {
        int32_t id = slots_[i];
        if (id < 0 || tokens[size_t(id)] == text) return i;
    }
}

int32_t TokenIndex::find(const std::vector<std::string> &tokens, std::string_view text) const {
    return slots_.empty() ? -1 : slots_[slot(tokens, text)];
}

Vocab load_vocab(const format::GgufFile &f) {
    const char *path = f.path().c_str();
    Vocab v;
    auto model = f.get_string("tokenizer.ggml.model");
    if (!model) fail(VKLLM_ERR_FORMAT, "%s: no tokenizer (tokenizer.ggml.model is missing)", path);
    v.model_name = std::string(*model);
    if (v.model_name == "gpt2")
        v.model = VocabModel::Bpe;
    else if (v.model_name == "llama")
        v.model = VocabModel::Spm;
    else if (v.model_name == "bert")
        v.model = VocabModel::Wpm;
    else
        fail(VKLLM_ERR_UNSUPPORTED,
             "%s: tokenizer model \"%s\" is not supported (gpt2, llama, bert are)", path,
             v.model_name.c_str());
    v.pre = std::string(f.get_string("tokenizer.ggml.pre").value_or(""));

    std::vector<std::string_view> texts = f.get_string_array("tokenizer.ggml.tokens");
    v.tokens.reserve(texts.size());
    for (std::string_view t : texts)
        v.tokens.emplace_back(t);
    if (v.tokens.empty())
        fail(VKLLM_ERR_FORMAT, "%s: tokenizer.ggml.tokens is missing or empty", path);
    if (v.tokens.size() > size_t(INT32_MAX))
        fail(VKLLM_ERR_FORMAT, "%s: %zu tokens is too many", path, v.tokens.size());
    size_t n = v.tokens.size();
    v.scores = f.get_f32_array("tokenizer.ggml.scores");
    if (!v.scores.empty() && v.scores.size() != n)
        fail(VKLLM_ERR_FORMAT, "%s: %zu scores for %zu tokens", path, v.scores.size(), n);
    std::vector<int32_t> types = f.get_i32_array("tokenizer.ggml.token_type");
    if (!types.empty() && types.size() != n)
        fail(VKLLM_ERR_FORMAT, "%s: %zu token types for %zu tokens", path, types.size(), n);
    v.types.assign(n, TokenType::Normal);
    for (size_t i = 0; i < types.size(); ++i) {
        if (types[i] < 0 || types[i] > int32_t(TokenType::Byte))
            fail(VKLLM_ERR_FORMAT, "%s: token %zu has invalid type %d", path, i, types[i]);
        v.types[i] = TokenType(types[i]);
    }
    for (std::string_view m : f.get_string_array("tokenizer.ggml.merges"))
        v.merges.emplace_back(m);
    v.index.build(v.tokens);

    auto special = [&](const char *key, int32_t &id) {
        auto value = f.get_int(key);
        if (!value) return;
        if (*value < 0 || *value >= int64_t(n))
            fail(VKLLM_ERR_FORMAT, "%s: %s = %lld is outside the vocabulary of %zu tokens", path,
                 key, (long long)*value, n);
        id = int32_t(*value);
    };
    special("tokenizer.ggml.bos_token_id", v.bos);
    special("tokenizer.ggml.eos_token_id", v.eos);
    special("tokenizer.ggml.eot_token_id", v.eot);
    special("tokenizer.ggml.eom_token_id", v.eom);
    special("tokenizer.ggml.unknown_token_id", v.unk);
    special("tokenizer.ggml.padding_token_id", v.pad);
    special("tokenizer.ggml.seperator_token_id", v.sep);  // sic: llama.cpp's key
    special("tokenizer.ggml.cls_token_id", v.cls);
    bool wpm = v.model == VocabModel::Wpm;
    if (wpm && v.bos < 0) v.bos = v.cls;
    if (wpm && v.eos < 0) v.eos = v.sep;
    // SentencePiece models add BOS unless told otherwise; BPE models when told, or when their
    // pre-tokenizer's family always did (Llama 3, Tekken, Chameleon), as llama.cpp assumes.
    // WordPiece models frame a text as [CLS] ... [SEP].
    bool bos_by_default = v.model == VocabModel::Spm || wpm;
    if (v.model == VocabModel::Bpe)
        if (const PreTokenizerRules *rules = find_pretokenizer(v.pre))
            bos_by_default = rules->has(kAddBosByDefault);
    v.add_bos = f.get_bool("tokenizer.ggml.add_bos_token").value_or(bos_by_default);
    v.add_eos = f.get_bool("tokenizer.ggml.add_eos_token").value_or(wpm);
    // Older converters said "add [SEP]" with add_sep_token alone.
    if (wpm && f.get_bool("tokenizer.ggml.add_sep_token").value_or(false)) v.add_eos = true;
    v.add_space_prefix =
        wpm || f.get_bool("tokenizer.ggml.add_space_prefix").value_or(v.model == VocabModel::Spm);
    v.chat_template = std::string(f.get_string("tokenizer.chat_template").value_or(""));

    for (int32_t id : {v.eos, v.eot, v.eom})
        if (id >= 0) v.end_of_generation.push_back(id);
    // Chat models end a turn with a control token that older files do not name as EOT.
    // (Harmony's <|end|> only closes a message: the final answer follows it.)
    for (const char *text :
         {"<|im_end|>", "<|eot_id|>", "<|return|>", "<|call|>", "<|endoftext|>", "<end_of_turn>"}) {
        int32_t id = v.find(text);
        if (id >= 0 && v.type(id) == TokenType::Control) v.end_of_generation.push_back(id);
    }
    std::sort(v.end_of_generation.begin(), v.end_of_generation.end());
    v.end_of_generation.erase(std::unique(v.end_of_generation.begin(), v.end_of_generation.end()),
                              v.end_of_generation.end());
    return v;
}

}  // namespace vkllm::tokenizer
