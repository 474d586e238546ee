// The tokenizers on arbitrary bytes: the first byte picks a vocabulary (real ones, listed in
// VKLLM_FUZZ_VOCABS, colon-separated GGUF paths: BPE, SentencePiece and WordPiece) and the
// flags (special-token parsing on or off, BOS/EOS on or off); the rest is the text. The ids are
// then turned back into text three ways (pieces, whole, streamed). For byte-level BPE without
// special tokens, the text of the ids is the input itself whenever the input is valid UTF-8 (after
// NFC for Qwen2, whose tokenizer normalises).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "tokenizer/unicode.h"
#include "vkllm.h"

namespace {

std::vector<vkllm_tokenizer *> g_tokenizers;
std::vector<std::string> g_models, g_pres;

bool valid_utf8(const uint8_t *s, size_t n) {
    for (size_t i = 0; i < n;) {
        uint8_t c = s[i];
        size_t len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
        if (len == 0 || i + len > n) return false;
        uint32_t cp = len == 1 ? c : c & (0x7f >> len);
        for (size_t k = 1; k < len; ++k) {
            if ((s[i + k] & 0xc0) != 0x80) return false;
            cp = cp << 6 | (s[i + k] & 0x3f);
        }
        static const uint32_t min_of[] = {0, 0, 0x80, 0x800, 0x10000};
        if (cp < min_of[len] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return false;
        i += len;
    }
    return true;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
    const char *list = std::getenv("VKLLM_FUZZ_VOCABS");
    std::string paths = list ? list : "";
    for (size_t at = 0; at <= paths.size();) {
        size_t end = paths.find(':', at);
        if (end == std::string::npos) end = paths.size();
        std::string path = paths.substr(at, end - at);
        at = end + 1;
        if (path.empty()) continue;
        vkllm_gguf *g = nullptr;
        vkllm_tokenizer *t = nullptr;
        if (vkllm_gguf_open(path.c_str(), &g) != VKLLM_OK ||
            vkllm_tokenizer_create(g, &t) != VKLLM_OK) {
            std::fprintf(stderr, "fuzz_tokenizer: %s: %s\n", path.c_str(), vkllm_last_error());
            std::exit(1);
        }
        vkllm_gguf_destroy(g);
        vkllm_tokenizer_info info;
        info.struct_size = sizeof info;
        vkllm_tokenizer_get_info(t, &info);
        g_tokenizers.push_back(t);
        g_models.push_back(info.model);
        g_pres.push_back(info.pre);
    }
    std::atexit([] {
        for (vkllm_tokenizer *t : g_tokenizers)
            vkllm_tokenizer_destroy(t);
    });
    if (g_tokenizers.empty()) {
        std::fprintf(stderr, "fuzz_tokenizer: set VKLLM_FUZZ_VOCABS to GGUF vocabularies\n");
        std::exit(1);
    }
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size == 0) return 0;
    uint8_t pick = data[0];
    size_t which = (pick >> 2) % g_tokenizers.size();
    const vkllm_tokenizer *tok = g_tokenizers[which];
    uint32_t flags =
        (pick & 1 ? VKLLM_TOKENIZE_PARSE_SPECIAL : 0) | (pick & 2 ? VKLLM_TOKENIZE_ADD_SPECIAL : 0);
    const char *text = reinterpret_cast<const char *>(data + 1);
    size_t length = size - 1;

    size_t n = 0;
    std::vector<int32_t> ids(16);
    vkllm_status st = vkllm_tokenizer_encode(tok, text, length, flags, ids.data(), ids.size(), &n);
    if (st == VKLLM_ERR_BUFFER_TOO_SMALL) {
        ids.resize(n);
        st = vkllm_tokenizer_encode(tok, text, length, flags, ids.data(), ids.size(), &n);
    }
    if (st != VKLLM_OK) return 0;
    ids.resize(n);

    std::vector<char> buf(64);
    for (int32_t id : ids) {
        size_t len = 0;
        vkllm_tokenizer_get_piece(tok, id, 0, buf.data(), buf.size(), &len);
    }
    size_t len = 0;
    if (vkllm_tokenizer_decode(tok, ids.data(), ids.size(), 0, buf.data(), buf.size(), &len) ==
        VKLLM_ERR_BUFFER_TOO_SMALL) {
        buf.resize(len + 1);
        vkllm_tokenizer_decode(tok, ids.data(), ids.size(), 0, buf.data(), buf.size(), &len);
    }
    std::string whole(buf.data(), len);

    // Streamed piece by piece, the text is the same as detokenized at once.
    vkllm_detokenizer *d = nullptr;
    std::string streamed;
    bool all_ok = vkllm_detokenizer_create(tok, 0, &d) == VKLLM_OK;
    std::vector<char> piece(1024);
    for (size_t i = 0; all_ok && i <= ids.size(); ++i) {
        size_t got = 0;
        vkllm_status s = i < ids.size()
                             ? vkllm_detokenizer_push(d, ids[i], piece.data(), piece.size(), &got)
                             : vkllm_detokenizer_flush(d, piece.data(), piece.size(), &got);
        all_ok = s == VKLLM_OK;
        if (all_ok) streamed.append(piece.data(), got);
    }
    vkllm_detokenizer_destroy(d);
    if (all_ok && streamed != whole) {
        std::fprintf(stderr, "streamed text differs from the whole text\n");
        __builtin_trap();
    }

    if (g_models[which] == "gpt2" && flags == 0 && valid_utf8(data + 1, length) &&
        std::memchr(text, 0, length) == nullptr) {
        std::string want(text, length);
        if (g_pres[which] == "qwen2") want = vkllm::tokenizer::nfc(want);
        if (whole != want) {
            std::fprintf(stderr, "byte-level BPE did not round-trip %zu bytes\n", length);
            __builtin_trap();
        }
    }
    return 0;
}
