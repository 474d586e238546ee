// vkllm bench-grammar: what a grammar constraint costs per generated token, on a real
// vocabulary and without a device. A text the grammar accepts is tokenized and replayed token
// by token, as a constrained generation would produce it, and each step is timed both ways
// the sampler can pay: check-first (is the token it drew allowed? then advance) and the full
// mask (every token's verdict). Like make-model it works below the C API, on the grammar
// engine itself (src/grammar), so what it times is the engine and nothing around it.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "cli.h"
#include "cli_args.h"
#include "common/error.h"
#include "format/gguf.h"
#include "grammar/gbnf_parser.h"
#include "grammar/grammar_state.h"
#include "grammar/token_mask.h"
#include "grammar/token_trie.h"
#include "text_file.h"
#include "tokenizer/tokenizer.h"

namespace {

using vkllm::grammar::GrammarState;
using vkllm::grammar::TokenTrie;
using Clock = std::chrono::steady_clock;

struct Options {
    const char *model = nullptr;
    const char *grammar_file = nullptr;
    const char *text_file = nullptr;
    uint32_t choices = 0;  // 0: --grammar-file
    uint32_t reps = 3;
};

void usage(FILE *out) {
    std::fputs(
        "usage: vkllm bench-grammar -m FILE (--grammar-file F.gbnf | --choices N) [--text FILE]\n"
        "                           [-r N]\n"
        "what a grammar constraint costs per token: the text is tokenized and replayed token\n"
        "by token under the grammar, each step timed as check-first (the token checked alone,\n"
        "then the state advanced) and as a full mask of the vocabulary; no device is used\n"
        "\n"
        "  -m, --model FILE        the GGUF model (its tokenizer only)\n"
        "  --grammar-file FILE     the GBNF grammar, started at its rule root\n"
        "  --choices N             instead, a choice of N labels (1 to 4096):\n"
        "                          root ::= \"label-0001\" | \"label-0002\" | ...\n"
        "  --text FILE             the text to replay, which the grammar must accept (with\n"
        "                          --choices the default is the middle label)\n"
        "  -r, --repetitions N     replays, each from a fresh state; each token's best time is\n"
        "                          kept (default 3)\n"
        "  -h, --help              this help\n",
        out);
}

bool parse(int argc, char **argv, Options &o) try {
    using vkllm_tool::int_arg;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : nullptr;
        if ((a == "-m" || a == "--model") && v) {
            o.model = v;
        } else if (a == "--grammar-file" && v) {
            o.grammar_file = v;
        } else if (a == "--choices" && v) {
            // Past kMaxStacks labels sharing a prefix, the engine refuses the grammar as too
            // ambiguous (every label is a live branch until the labels differ).
            o.choices = uint32_t(int_arg(a, v, 1, int64_t(vkllm::grammar::kMaxStacks)));
        } else if (a == "--text" && v) {
            o.text_file = v;
        } else if ((a == "-r" || a == "--repetitions") && v) {
            o.reps = uint32_t(int_arg(a, v, 1, 1000));
        } else if (!v && a.size() > 1 && a[0] == '-') {
            throw vkllm_tool::ArgError(a +
                                       " is missing its value, or is not an option of "
                                       "vkllm bench-grammar");
        } else {
            throw vkllm_tool::ArgError("unknown option " + a);
        }
        ++i;
    }
    if (!o.model) throw vkllm_tool::ArgError("-m MODEL is required");
    if (!o.grammar_file == !o.choices)
        throw vkllm_tool::ArgError("give one of --grammar-file and --choices (not both)");
    if (o.grammar_file && !o.text_file)
        throw vkllm_tool::ArgError("--grammar-file needs --text: a text the grammar accepts");
    return true;
} catch (const vkllm_tool::ArgError &e) {
    std::fprintf(stderr, "vkllm: bench-grammar: %s\n", e.what());
    return false;
}

std::string label(uint32_t i) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "label-%04u", i);
    return buf;
}

std::string choice_grammar(uint32_t n) {
    std::string g = "root ::= \"" + label(1) + "\"";
    for (uint32_t i = 2; i <= n; ++i)
        g += " | \"" + label(i) + "\"";
    return g + "\n";
}

double ms_since(Clock::time_point start) {
    return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

struct Summary {
    double mean = 0, median = 0, max = 0, min = 0;
    size_t argmax = 0;
};

Summary summarize(const std::vector<double> &v) {
    Summary s;
    if (v.empty()) return s;
    std::vector<double> sorted = v;
    std::sort(sorted.begin(), sorted.end());
    for (double x : v)
        s.mean += x;
    s.mean /= double(v.size());
    s.median = sorted[sorted.size() / 2];
    s.min = sorted.front();
    s.max = sorted.back();
    s.argmax = size_t(std::max_element(v.begin(), v.end()) - v.begin());
    return s;
}

// A piece for a one-line message: control bytes escaped.
std::string shown(const std::string &piece) {
    std::string out;
    for (unsigned char c : piece) {
        if (c == '\n') {
            out += "\\n";
        } else if (c < 0x20 || c == 0x7f) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\x%02x", c);
            out += buf;
        } else {
            out += char(c);
        }
    }
    return out;
}

// The replay: the tokens' pieces, and how many leading bytes of the first piece are not the
// text's (SentencePiece's dummy-prefix space: generated text continues a prompt and keeps it,
// a replayed text starts the output, so that space is skipped untimed).
struct Replay {
    std::vector<int32_t> ids;
    std::vector<std::string> pieces;
    size_t skipped_prefix = 0;
};

int bench(const Options &o) {
    std::string text, error;
    if (o.text_file && !vkllm_tool::read_text_file(o.text_file, text, error)) {
        std::fprintf(stderr, "vkllm: bench-grammar: %s\n", error.c_str());
        return 1;
    }
    std::string grammar_text;
    if (o.grammar_file) {
        if (!vkllm_tool::read_text_file(o.grammar_file, grammar_text, error)) {
            std::fprintf(stderr, "vkllm: bench-grammar: %s\n", error.c_str());
            return 1;
        }
    } else {
        grammar_text = choice_grammar(o.choices);
        if (!o.text_file) text = label(o.choices / 2 + 1);
    }
    if (text.empty()) {
        std::fprintf(stderr, "vkllm: bench-grammar: %s is empty: nothing to replay\n", o.text_file);
        return 1;
    }
    std::shared_ptr<const vkllm::grammar::Grammar> grammar;
    try {
        grammar = std::make_shared<const vkllm::grammar::Grammar>(
            vkllm::grammar::parse_gbnf(grammar_text));
    } catch (const vkllm::Error &e) {
        std::fprintf(stderr, "vkllm: bench-grammar: %s: %s\n",
                     o.grammar_file ? o.grammar_file : "--choices", e.what());
        return 1;
    }
    std::unique_ptr<vkllm::tokenizer::Tokenizer> tokenizer;
    std::unique_ptr<TokenTrie> trie;
    double trie_ms = 0;
    try {
        vkllm::format::GgufFile file(o.model);
        tokenizer =
            std::make_unique<vkllm::tokenizer::Tokenizer>(vkllm::tokenizer::load_vocab(file));
        auto start = Clock::now();
        trie = std::make_unique<TokenTrie>(TokenTrie::from_tokenizer(*tokenizer));
        trie_ms = ms_since(start);
    } catch (const vkllm::Error &e) {
        std::fprintf(stderr, "vkllm: bench-grammar: loading the tokenizer: %s\n", e.what());
        return 1;
    }

    Replay r;
    r.ids = tokenizer->encode(text, {});
    std::string spelled;
    for (int32_t id : r.ids) {
        r.pieces.push_back(trie->piece(id));
        spelled += r.pieces.back();
    }
    if (spelled != text && !r.pieces.empty() && r.pieces[0].size() > 1 && r.pieces[0][0] == ' ' &&
        spelled.compare(1, std::string::npos, text) == 0)
        r.skipped_prefix = 1;
    else if (spelled != text) {
        std::fprintf(stderr,
                     "vkllm: bench-grammar: the tokens of the text do not spell it back (the "
                     "tokenizer normalises it): nothing to replay exactly\n");
        return 1;
    }

    // One untimed pass first, so that a text the grammar refuses is reported where it fails.
    try {
        GrammarState s(grammar);
        std::string so_far;
        for (size_t i = 0; i < r.ids.size(); ++i) {
            std::string piece = r.pieces[i].substr(i == 0 ? r.skipped_prefix : 0);
            if (!s.accept_bytes(piece)) {
                std::fprintf(stderr,
                             "vkllm: bench-grammar: the grammar refuses the text at token %zu "
                             "(id %d, '%s') after %zu bytes; the text must be one the grammar "
                             "accepts\n",
                             i, r.ids[i], shown(piece).c_str(), so_far.size());
                return 1;
            }
            so_far += piece;
        }
        if (!s.is_complete())
            std::printf(
                "note: the text is a beginning of a sentence of the grammar, not a "
                "whole one\n");
    } catch (const vkllm::Error &e) {
        std::fprintf(stderr, "vkllm: bench-grammar: replaying the text: %s\n", e.what());
        return 1;
    }

    size_t n = r.ids.size(), first = r.skipped_prefix ? 1 : 0;
    std::vector<double> check_us(n, 1e300), mask_ms(n, 1e300);
    std::vector<double> allowed(n, 0);
    std::vector<uint8_t> mask;
    try {
        for (uint32_t rep = 0; rep < o.reps; ++rep) {
            // Check-first alone: what a step costs when the sampler's token is allowed.
            GrammarState checked(grammar);
            if (first) checked.accept_bytes(r.pieces[0].substr(1));
            for (size_t i = first; i < n; ++i) {
                auto start = Clock::now();
                bool ok = vkllm::grammar::token_allowed(checked, *trie, r.ids[i]) &&
                          checked.accept_bytes(r.pieces[i]);
                check_us[i] = std::min(check_us[i], ms_since(start) * 1e3);
                if (!ok) throw vkllm::Error(VKLLM_ERR_INTERNAL, "check-first refused the text");
            }
            // A mask before every token: what a step costs when the sampler's token is refused.
            GrammarState masked(grammar);
            if (first) masked.accept_bytes(r.pieces[0].substr(1));
            for (size_t i = first; i < n; ++i) {
                auto start = Clock::now();
                vkllm::grammar::MaskStats stats = vkllm::grammar::token_mask(masked, *trie, mask);
                mask_ms[i] = std::min(mask_ms[i], ms_since(start));
                allowed[i] = double(stats.allowed);
                if (!mask[size_t(r.ids[i])])
                    throw vkllm::Error(VKLLM_ERR_INTERNAL, "the mask refuses a token of the text");
                masked.accept_bytes(r.pieces[i]);
            }
        }
    } catch (const vkllm::Error &e) {
        std::fprintf(stderr, "vkllm: bench-grammar: %s\n", e.what());
        return 1;
    }
    check_us.erase(check_us.begin(), check_us.begin() + long(first));
    mask_ms.erase(mask_ms.begin(), mask_ms.begin() + long(first));
    allowed.erase(allowed.begin(), allowed.begin() + long(first));

    std::printf("vocabulary: %zu tokens, trie of %zu nodes (%.1f MiB), built in %.0f ms\n",
                trie->vocab_size(), trie->nodes().size(), double(trie->memory_bytes()) / 1048576.0,
                trie_ms);
    std::printf(
        "grammar: %s, %zu rules\n",
        o.grammar_file ? o.grammar_file : ("--choices " + std::to_string(o.choices)).c_str(),
        grammar->rule_count());
    std::printf("text: %zu bytes, %zu tokens replayed%s\n", text.size(), mask_ms.size(),
                first ? " (the first token's dummy-prefix space skipped)" : "");
    if (mask_ms.empty()) return 0;
    Summary c = summarize(check_us), m = summarize(mask_ms), a = summarize(allowed);
    std::printf(
        "check-first per token (token_allowed + advance): mean %.2f us, median %.2f us, "
        "max %.2f us\n",
        c.mean, c.median, c.max);
    std::printf(
        "mask per token: mean %.3f ms, median %.3f ms, max %.3f ms (before token %zu, "
        "'%s')\n",
        m.mean, m.median, m.max, m.argmax + first, shown(r.pieces[m.argmax + first]).c_str());
    std::printf("allowed tokens per mask: mean %.0f, median %.0f, min %.0f, max %.0f\n", a.mean,
                a.median, a.min, a.max);
    std::printf("times: best of %u replays per token, each replay from a fresh state\n", o.reps);
    return 0;
}

}  // namespace

int cmd_bench_grammar(int argc, char **argv) {
    Options o;
    if (vkllm_tool::wants_help(argc, argv)) {
        usage(stdout);
        return 0;
    }
    if (!parse(argc, argv, o)) {
        std::fputs("(vkllm bench-grammar --help lists the options)\n", stderr);
        return 2;
    }
    return bench(o);
}
