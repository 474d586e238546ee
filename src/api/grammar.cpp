// Grammars through the C ABI: compiled once per vocabulary, applied by samplers.
#include <algorithm>
#include <memory>
#include <string>

#include "api/guard.h"
#include "api/objects.h"
#include "api/out.h"
#include "api/sampling.h"
#include "grammar/gbnf_parser.h"
#include "grammar/json_schema.h"

using vkllm::fail;
using vkllm::api::guard;
using vkllm::api::require_arg;
using vkllm::grammar::CompiledGrammar;
using vkllm::grammar::Grammar;
using vkllm::grammar::TokenTrie;

struct vkllm_grammar {
    std::shared_ptr<const CompiledGrammar> compiled;
};

namespace {

std::shared_ptr<const TokenTrie> trie_of(const vkllm_tokenizer &tokenizer) {
    std::lock_guard<std::mutex> lock(tokenizer.trie->mutex);
    if (!tokenizer.trie->trie)
        tokenizer.trie->trie =
            std::make_shared<const TokenTrie>(TokenTrie::from_tokenizer(*tokenizer.impl));
    return tokenizer.trie->trie;
}

vkllm_grammar *compile(const vkllm_tokenizer &tokenizer, Grammar grammar) {
    auto compiled = std::make_shared<CompiledGrammar>();
    compiled->grammar = std::make_shared<const Grammar>(std::move(grammar));
    compiled->trie = trie_of(tokenizer);
    const vkllm::tokenizer::Tokenizer &tok = *tokenizer.impl;
    for (int32_t id = 0; id < tok.vocab().size(); ++id)
        if (tok.is_end_of_generation(id)) compiled->end_tokens.push_back(id);
    return new vkllm_grammar{std::move(compiled)};
}

}  // namespace

extern "C" {

vkllm_status vkllm_grammar_create(const vkllm_tokenizer *tokenizer, const char *gbnf,
                                  const char *root, vkllm_grammar **out) {
    return guard([&] {
        const char *fn = "vkllm_grammar_create";
        require_arg(out, fn, "out");
        *out = nullptr;
        require_arg(tokenizer, fn, "tokenizer");
        require_arg(gbnf, fn, "gbnf");
        *out = compile(*tokenizer, vkllm::grammar::parse_gbnf(gbnf, root ? root : "root"));
    });
}

vkllm_status vkllm_grammar_create_from_json_schema(const vkllm_tokenizer *tokenizer,
                                                   const char *schema, vkllm_grammar **out) {
    return guard([&] {
        const char *fn = "vkllm_grammar_create_from_json_schema";
        require_arg(out, fn, "out");
        *out = nullptr;
        require_arg(tokenizer, fn, "tokenizer");
        std::string gbnf = vkllm::grammar::json_schema_to_gbnf(schema ? schema : "");
        *out = compile(*tokenizer, vkllm::grammar::parse_gbnf(gbnf));
    });
}

vkllm_status vkllm_json_schema_to_gbnf(const char *schema, char *buf, size_t capacity,
                                       size_t *length) {
    return guard([&] {
        const char *fn = "vkllm_json_schema_to_gbnf";
        require_arg(length, fn, "length");
        vkllm::api::copy_text(vkllm::grammar::json_schema_to_gbnf(schema ? schema : ""), buf,
                              capacity, length, fn);
    });
}

void vkllm_grammar_destroy(vkllm_grammar *grammar) {
    delete grammar;
}

}  // extern "C"

namespace vkllm::api {

std::shared_ptr<const CompiledGrammar> compiled_grammar(const vkllm_grammar *grammar) {
    return grammar ? grammar->compiled : nullptr;
}

}  // namespace vkllm::api
