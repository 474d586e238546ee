// vkllm embed: the embeddings of texts (the command-line arguments, or the lines of a file) as
// JSON, one line per input, through vkllm_session_embed (vkllm_session_embed_tokens for
// per-token vectors).
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "cli.h"
#include "cli_args.h"
#include "embedder.h"
#include "text_file.h"

namespace {

const char *const kUsage =
    "usage: vkllm embed -m FILE [options] (-f FILE | TEXT...)\n"
    "print the embedding of each input as a JSON array of floats, one line per input in order:\n"
    "the TEXT arguments, or each line of -f FILE (an empty line too); with pooling none, an\n"
    "array of one array per token\n"
    "\n"
    "  -m, --model FILE        the GGUF model (an encoder such as all-MiniLM-L6-v2, or a\n"
    "                          decoder embedding model with --pooling last)\n"
    "  -f, --file FILE         the inputs, one per line; - is stdin\n"
    "  --pooling P             how token vectors become one (default: the model's own)\n"
    "  --normalize             each vector scaled to unit length\n"
    "  --max-tokens N          at most N tokens per input, special tokens included (default:\n"
    "                          the model's positions)\n"
    "  --truncate              cut a longer input (keeping its end token) instead of failing\n"
    "  -b, --batch N           inputs per call, run together on the device (default 16)\n"
    "  --device N|NAME         device index or name substring\n"
    "  --validate              enable the Vulkan validation layer\n"
    "  --pipeline-cache FILE   keep compiled pipelines in FILE between runs\n"
    "  -h, --help              this help\n"
    "P: none mean cls last\n";

void print_vector(const float *v, size_t n) {
    std::fputc('[', stdout);
    for (size_t i = 0; i < n; ++i) {
        if (i) std::fputs(", ", stdout);
        if (std::isfinite(v[i]))
            std::printf("%.9g", double(v[i]));
        else
            std::fputs("null", stdout);
    }
    std::fputc(']', stdout);
}

int fail(const std::string &message) {
    std::fprintf(stderr, "vkllm: embed: %s\n", message.c_str());
    return 1;
}

}  // namespace

int cmd_embed(int argc, char **argv) {
    if (vkllm_tool::wants_help(argc, argv)) {
        std::fputs(kUsage, stdout);
        return 0;
    }
    vkllm_tool::EmbedderOptions o;
    const char *file = nullptr;
    std::vector<std::string> texts;
    try {
        for (int i = 1; i < argc; ++i) {
            const std::string a = argv[i];
            if (vkllm_tool::embedder_option(argc, argv, i, o)) continue;
            if ((a == "-f" || a == "--file") && i + 1 < argc) {
                file = argv[++i];
            } else if (a == "-f" || a == "--file") {
                throw vkllm_tool::ArgError(a + " needs a value");
            } else if (!a.empty() && a[0] == '-') {
                throw vkllm_tool::ArgError("unknown option " + a +
                                           " (vkllm embed --help lists the options)");
            } else {
                texts.push_back(a);
            }
        }
        if (!o.model) throw vkllm_tool::ArgError("-m FILE is required");
        if (file && !texts.empty())
            throw vkllm_tool::ArgError("TEXT and -f FILE exclude each other");
        if (!file && texts.empty())
            throw vkllm_tool::ArgError("no input: give TEXT arguments or -f FILE");
    } catch (const vkllm_tool::ArgError &e) {
        std::fprintf(stderr, "vkllm: embed: %s\n%s", e.what(), kUsage);
        return 2;
    }
    if (file) {
        std::string text, error;
        if (!vkllm_tool::read_text_file(file, text, error)) return fail(error);
        texts = vkllm_tool::split_lines(text);
        if (texts.empty()) return fail(std::string(file) + " has no lines");
    }
    vkllm_tool::Embedder e;
    std::vector<std::vector<float>> vectors;
    vkllm_status s = e.open(o, texts);
    if (s == VKLLM_OK) s = e.embed(texts, vectors);
    if (s != VKLLM_OK) return fail(std::string(vkllm_status_string(s)) + ": " + vkllm_last_error());
    const size_t d = e.n_embd();
    for (const std::vector<float> &v : vectors) {
        if (e.pooling() == VKLLM_POOLING_NONE) {
            std::fputc('[', stdout);
            for (size_t r = 0; r * d < v.size(); ++r) {
                if (r) std::fputs(", ", stdout);
                print_vector(v.data() + r * d, d);
            }
            std::fputc(']', stdout);
        } else {
            print_vector(v.data(), v.size());
        }
        std::fputc('\n', stdout);
    }
    return std::fflush(stdout) == 0 ? 0 : fail("cannot write the embeddings");
}
