// The GBNF parser and the grammar engine (src/grammar) on arbitrary grammars. The input is split
// at its first NUL byte: a grammar, then a text that is run through it in pieces of 1 to 4 bytes
// (so UTF-8 characters are cut between pieces, as tokens cut them). Parsing and the engine may
// fail, but only with vkllm::Error; anything else escaping, a crash, a leak or a hang is a bug.
// The limits are smaller than the library's so that runs stay fast. Also checked: a grammar the
// parser accepts prints back (to_gbnf) to text that parses to the same rules, and feeding the text
// whole or in pieces agrees.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "common/error.h"
#include "grammar/gbnf_parser.h"
#include "grammar/grammar_state.h"

namespace {

bool same_lines(const std::string &a, const std::string &b) {
    auto lines = [](const std::string &text) {
        std::vector<std::string> out;
        size_t start = 0;
        for (size_t nl; (nl = text.find('\n', start)) != std::string::npos; start = nl + 1)
            out.push_back(text.substr(start, nl - start));
        std::sort(out.begin(), out.end());
        return out;
    };
    return lines(a) == lines(b);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    using namespace vkllm::grammar;
    std::string input(reinterpret_cast<const char *>(data), size);
    size_t nul = input.find('\0');
    std::string source = input.substr(0, nul);
    std::string text = nul == std::string::npos ? std::string() : input.substr(nul + 1, 512);
    GbnfLimits limits;
    limits.max_text_bytes = 1 << 16;
    limits.max_rules = 4096;
    limits.max_elements = 1 << 16;
    limits.max_repetition = 256;
    std::shared_ptr<const Grammar> grammar;
    try {
        grammar = std::make_shared<const Grammar>(parse_gbnf(source, "root", limits));
    } catch (const vkllm::Error &) {
        return 0;
    }
    // The printed grammar parses back to the same rules (in another order, perhaps).
    std::string printed = to_gbnf(*grammar);
    try {
        if (!same_lines(printed, to_gbnf(parse_gbnf(printed)))) std::abort();
    } catch (const vkllm::Error &) {
        std::abort();
    }
    try {
        GrammarState whole(grammar);
        bool whole_ok = whole.accept_bytes(text);
        GrammarState pieces(grammar);
        bool pieces_ok = true;
        for (size_t i = 0, n; i < text.size() && pieces_ok; i += n) {
            n = 1 + (uint8_t(text[i]) % 4);
            pieces_ok = pieces.accept_bytes(text.substr(i, n));
        }
        // A rejected piece leaves its state; the whole text is rejected iff some piece was.
        if (whole_ok != pieces_ok) std::abort();
        if (whole_ok && whole.is_complete() != pieces.is_complete()) std::abort();
    } catch (const vkllm::Error &) {
    }
    return 0;
}
