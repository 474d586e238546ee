// vkllm similarity: the lines of a file ranked by the cosine of their embedding with a
// query's, the most similar first: the search step of retrieval (RAG) on the command line.
#include <algorithm>
#include <cstdio>
#include <numeric>
#include <string>
#include <vector>

#include "cli.h"
#include "cli_args.h"
#include "embedder.h"
#include "text_file.h"

namespace {

const char *const kUsage =
    "usage: vkllm similarity -m FILE --query TEXT -f FILE [options]\n"
    "rank the passages of FILE (one per line) by the cosine similarity of their embeddings\n"
    "with the query's, the most similar first: one line each, \"COSINE<tab>LINE<tab>PASSAGE\"\n"
    "(LINE counts from 1)\n"
    "\n"
    "  -m, --model FILE        the GGUF embedding model\n"
    "  --query TEXT            the query\n"
    "  -f, --file FILE         the passages, one per line; - is stdin\n"
    "  --top K                 print only the K most similar (default: every passage)\n"
    "  --pooling P             how token vectors become one (default: the model's own)\n"
    "  --max-tokens N          at most N tokens per text, special tokens included (default:\n"
    "                          the model's positions)\n"
    "  --truncate              cut a longer text (keeping its end token) instead of failing\n"
    "  -b, --batch N           texts per call, run together on the device (default 16)\n"
    "  --device N|NAME         device index or name substring\n"
    "  --validate              enable the Vulkan validation layer\n"
    "  --pipeline-cache FILE   keep compiled pipelines in FILE between runs\n"
    "  -h, --help              this help\n"
    "P: mean cls last\n";

int fail(const std::string &message) {
    std::fprintf(stderr, "vkllm: similarity: %s\n", message.c_str());
    return 1;
}

}  // namespace

int cmd_similarity(int argc, char **argv) {
    if (vkllm_tool::wants_help(argc, argv)) {
        std::fputs(kUsage, stdout);
        return 0;
    }
    vkllm_tool::EmbedderOptions o;
    const char *file = nullptr, *query = nullptr;
    size_t top = SIZE_MAX;
    try {
        for (int i = 1; i < argc; ++i) {
            const std::string a = argv[i];
            if (a == "--normalize")  // the cosine is computed on unit vectors anyway
                throw vkllm_tool::ArgError("unknown option " + a +
                                           " (vkllm similarity --help lists the options)");
            if (vkllm_tool::embedder_option(argc, argv, i, o)) continue;
            const bool valued = a == "-f" || a == "--file" || a == "--query" || a == "--top";
            if (valued && i + 1 == argc) throw vkllm_tool::ArgError(a + " needs a value");
            if (a == "-f" || a == "--file") {
                file = argv[++i];
            } else if (a == "--query") {
                query = argv[++i];
            } else if (a == "--top") {
                top = size_t(vkllm_tool::int_arg(a, argv[++i], 1, INT32_MAX));
            } else {
                throw vkllm_tool::ArgError(
                    (a.empty() || a[0] != '-' ? "unexpected argument " : "unknown option ") + a +
                    " (vkllm similarity --help lists the options)");
            }
        }
        if (!o.model || !query || !file)
            throw vkllm_tool::ArgError("-m FILE, --query TEXT and -f FILE are required");
        if (o.pooling == VKLLM_POOLING_NONE)
            throw vkllm_tool::ArgError("--pooling none gives no single vector to compare");
    } catch (const vkllm_tool::ArgError &e) {
        std::fprintf(stderr, "vkllm: similarity: %s\n%s", e.what(), kUsage);
        return 2;
    }
    std::string text, error;
    if (!vkllm_tool::read_text_file(file, text, error)) return fail(error);
    std::vector<std::string> texts = vkllm_tool::split_lines(text);
    if (texts.empty()) return fail(std::string(file) + " has no lines");
    texts.insert(texts.begin(), query);
    o.normalize = true;  // unit vectors: the cosine is their dot product
    vkllm_tool::Embedder e;
    std::vector<std::vector<float>> vectors;
    vkllm_status s = e.open(o, texts);
    if (s == VKLLM_OK && e.pooling() == VKLLM_POOLING_NONE)
        return fail(std::string(o.model) +
                    " states no pooling (one vector per token); pass --pooling mean, cls or last");
    if (s == VKLLM_OK) s = e.embed(texts, vectors);
    if (s != VKLLM_OK) return fail(std::string(vkllm_status_string(s)) + ": " + vkllm_last_error());
    std::vector<double> score(texts.size() - 1);
    for (size_t i = 1; i < texts.size(); ++i)
        score[i - 1] =
            std::inner_product(vectors[0].begin(), vectors[0].end(), vectors[i].begin(), 0.0);
    std::vector<size_t> order(score.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return score[a] > score[b]; });
    order.resize(std::min(top, order.size()));
    for (size_t i : order)
        std::printf("%.6f\t%zu\t%s\n", score[i], i + 1, texts[i + 1].c_str());
    return std::fflush(stdout) == 0 ? 0 : fail("cannot write the ranking");
}
