// Tokenizers through the C ABI.
#include <cstring>
#include <memory>

#include "api/guard.h"
#include "api/objects.h"
#include "api/out.h"
#include "common/log.h"
#include "tokenizer/tokenizer.h"

using vkllm::fail;
using vkllm::api::copy_text;
using vkllm::api::guard;
using vkllm::api::require_arg;
using vkllm::api::require_struct;
using vkllm::tokenizer::Tokenizer;

struct vkllm_detokenizer {
    std::unique_ptr<vkllm::tokenizer::StreamDecoder> decoder;
    std::string ready;  // text produced by a push whose buffer was too small
    int32_t ready_for = -1;
};

namespace {

const Tokenizer &tok(const vkllm_tokenizer *t, const char *fn) {
    require_arg(t, fn, "tokenizer");
    return *t->impl;
}

void check_id(const Tokenizer &t, int32_t id, const char *fn) {
    if (id < 0 || id >= t.vocab().size())
        fail(VKLLM_ERR_INVALID_ARGUMENT, "%s: token %d is outside the vocabulary (0 to %d)", fn, id,
             t.vocab().size() - 1);
}

template <size_t N>
void copy_name(char (&dst)[N], const std::string &src) {
    size_t n = std::min(src.size(), N - 1);
    std::memcpy(dst, src.data(), n);
    dst[n] = '\0';
}

}  // namespace

extern "C" {

vkllm_status vkllm_tokenizer_create(const vkllm_gguf *gguf, vkllm_tokenizer **out) {
    return guard([&] {
        require_arg(gguf, "vkllm_tokenizer_create", "gguf");
        require_arg(out, "vkllm_tokenizer_create", "out");
        auto t = std::make_unique<vkllm_tokenizer>();
        t->impl = std::make_shared<Tokenizer>(vkllm::tokenizer::load_vocab(*gguf->file));
        // No runtime, so no log callback: warnings go where the default logger sends them.
        if (!t->impl->warning().empty())
            vkllm::Logger{}(VKLLM_LOG_WARNING, gguf->file->path() + ": " + t->impl->warning());
        *out = t.release();
    });
}

void vkllm_tokenizer_destroy(vkllm_tokenizer *tokenizer) {
    delete tokenizer;
}

vkllm_status vkllm_tokenizer_get_info(const vkllm_tokenizer *tokenizer, vkllm_tokenizer_info *out) {
    return guard([&] {
        const Tokenizer &t = tok(tokenizer, "vkllm_tokenizer_get_info");
        require_struct(out, "vkllm_tokenizer_get_info", "out");
        const auto &v = t.vocab();
        vkllm_tokenizer_info info{};
        info.struct_size = sizeof info;
        info.n_vocab = uint32_t(v.size());
        info.bos = v.bos;
        info.eos = v.eos;
        info.eot = v.eot;
        info.unk = v.unk;
        info.pad = v.pad;
        info.add_bos = v.add_bos;
        info.add_eos = v.add_eos;
        copy_name(info.model, v.model_name);
        copy_name(info.pre, v.model == vkllm::tokenizer::VocabModel::Bpe ? v.pre : std::string());
        vkllm::api::copy_struct(info, out);
    });
}

vkllm_status vkllm_tokenizer_encode(const vkllm_tokenizer *tokenizer, const char *text,
                                    size_t length, uint32_t flags, int32_t *tokens, size_t capacity,
                                    size_t *n_tokens) {
    return guard([&] {
        const Tokenizer &t = tok(tokenizer, "vkllm_tokenizer_encode");
        if (length > 0) require_arg(text, "vkllm_tokenizer_encode", "text");
        if (capacity > 0) require_arg(tokens, "vkllm_tokenizer_encode", "tokens");
        require_arg(n_tokens, "vkllm_tokenizer_encode", "n_tokens");
        vkllm::tokenizer::EncodeOptions o;
        o.add_special = flags & VKLLM_TOKENIZE_ADD_SPECIAL;
        o.parse_special = flags & VKLLM_TOKENIZE_PARSE_SPECIAL;
        std::vector<int32_t> ids = t.encode(std::string_view(text ? text : "", length), o);
        *n_tokens = ids.size();
        if (ids.size() > capacity)
            fail(VKLLM_ERR_BUFFER_TOO_SMALL, "vkllm_tokenizer_encode: %zu tokens, room for %zu",
                 ids.size(), capacity);
        std::copy(ids.begin(), ids.end(), tokens);
    });
}

vkllm_status vkllm_tokenizer_get_piece(const vkllm_tokenizer *tokenizer, int32_t token,
                                       uint32_t flags, char *buf, size_t capacity, size_t *length) {
    return guard([&] {
        const Tokenizer &t = tok(tokenizer, "vkllm_tokenizer_get_piece");
        check_id(t, token, "vkllm_tokenizer_get_piece");
        copy_text(t.piece(token, flags & VKLLM_DETOKENIZE_SPECIAL), buf, capacity, length,
                  "vkllm_tokenizer_get_piece");
    });
}

vkllm_status vkllm_tokenizer_decode(const vkllm_tokenizer *tokenizer, const int32_t *tokens,
                                    size_t n_tokens, uint32_t flags, char *buf, size_t capacity,
                                    size_t *length) {
    return guard([&] {
        const Tokenizer &t = tok(tokenizer, "vkllm_tokenizer_decode");
        if (n_tokens > 0) require_arg(tokens, "vkllm_tokenizer_decode", "tokens");
        std::vector<int32_t> ids(tokens, tokens + n_tokens);
        for (int32_t id : ids)
            check_id(t, id, "vkllm_tokenizer_decode");
        copy_text(t.decode(ids, flags & VKLLM_DETOKENIZE_SPECIAL), buf, capacity, length,
                  "vkllm_tokenizer_decode");
    });
}

vkllm_status vkllm_tokenizer_is_end_of_generation(const vkllm_tokenizer *tokenizer, int32_t token,
                                                  int32_t *out) {
    return guard([&] {
        const Tokenizer &t = tok(tokenizer, "vkllm_tokenizer_is_end_of_generation");
        check_id(t, token, "vkllm_tokenizer_is_end_of_generation");
        require_arg(out, "vkllm_tokenizer_is_end_of_generation", "out");
        *out = t.is_end_of_generation(token);
    });
}

vkllm_status vkllm_detokenizer_create(const vkllm_tokenizer *tokenizer, uint32_t flags,
                                      vkllm_detokenizer **out) {
    return guard([&] {
        const Tokenizer &t = tok(tokenizer, "vkllm_detokenizer_create");
        require_arg(out, "vkllm_detokenizer_create", "out");
        auto d = std::make_unique<vkllm_detokenizer>();
        d->decoder = std::make_unique<vkllm::tokenizer::StreamDecoder>(
            t, (flags & VKLLM_DETOKENIZE_SPECIAL) != 0);
        *out = d.release();
    });
}

void vkllm_detokenizer_destroy(vkllm_detokenizer *detokenizer) {
    delete detokenizer;
}

vkllm_status vkllm_detokenizer_push(vkllm_detokenizer *d, int32_t token, char *buf, size_t capacity,
                                    size_t *length) {
    return guard([&] {
        require_arg(d, "vkllm_detokenizer_push", "detokenizer");
        const Tokenizer &t = d->decoder->tokenizer();
        check_id(t, token, "vkllm_detokenizer_push");
        // A retry after BUFFER_TOO_SMALL hands out the text already produced for this token.
        if (d->ready_for != token) {
            d->ready += d->decoder->push(token);
        }
        d->ready_for = token;
        copy_text(d->ready, buf, capacity, length, "vkllm_detokenizer_push");
        d->ready.clear();
        d->ready_for = -1;
    });
}

vkllm_status vkllm_detokenizer_flush(vkllm_detokenizer *d, char *buf, size_t capacity,
                                     size_t *length) {
    return guard([&] {
        require_arg(d, "vkllm_detokenizer_flush", "detokenizer");
        d->ready += d->decoder->flush();
        d->ready_for = -1;
        copy_text(d->ready, buf, capacity, length, "vkllm_detokenizer_flush");
        d->ready.clear();
    });
}

}  // extern "C"
