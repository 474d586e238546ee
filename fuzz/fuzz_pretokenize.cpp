// The pre-tokenizers and their regex engine on arbitrary bytes. The first byte picks the mode:
// below 0x80, a rule set (its index modulo the table's size) splits the rest, and the pieces
// must be non-empty and cover the text in order; from 0x80, the rest is a pattern, a NUL, then
// a text: the pattern compiles or is refused with VKLLM_ERR_INTERNAL, and its matches must be
// in order and inside the text. The only other error allowed is the matcher's step budget
// (VKLLM_ERR_UNSUPPORTED): anything else, a crash or a hang is a failure.
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.h"
#include "tokenizer/pretokenize.h"
#include "tokenizer/regex.h"

using namespace vkllm::tokenizer;

namespace {

void split_with_rules(uint8_t pick, std::string_view text) {
    const std::vector<PreTokenizerRules> &all = all_pretokenizers();
    PreTokenizer pre(all[pick % all.size()]);
    std::vector<std::string_view> pieces = pre.split(text);
    const char *at = text.data();
    for (std::string_view p : pieces) {
        if (p.empty() || p.data() != at) __builtin_trap();
        at += p.size();
    }
    if (at != text.data() + text.size()) __builtin_trap();
}

void match_pattern(std::string_view rest) {
    size_t nul = rest.find('\0');
    if (nul == std::string_view::npos) return;
    std::vector<Regex> compiled;
    try {
        compiled.emplace_back(rest.substr(0, nul));
    } catch (const vkllm::Error &e) {
        if (e.status() != VKLLM_ERR_INTERNAL) __builtin_trap();
        return;
    }
    CodePoints text(rest.substr(nul + 1));
    std::vector<Regex::Match> matches;
    compiled[0].find_all(text, 0, text.size(), matches);
    size_t last = 0;
    for (const Regex::Match &m : matches) {
        if (m.begin < last || m.end < m.begin || m.end > text.size()) __builtin_trap();
        last = m.end;
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size == 0) return 0;
    std::string_view rest(reinterpret_cast<const char *>(data + 1), size - 1);
    try {
        if (data[0] < 0x80)
            split_with_rules(data[0], rest);
        else
            match_pattern(rest);
    } catch (const vkllm::Error &e) {
        if (e.status() != VKLLM_ERR_UNSUPPORTED) __builtin_trap();
    }
    return 0;
}
