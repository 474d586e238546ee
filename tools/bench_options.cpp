#include "bench_options.h"

#include <algorithm>
#include <string>

#include "cli_args.h"

namespace vkllm_tool {

namespace {

// "16,300": whole numbers from 0, separated by commas.
std::vector<uint32_t> list_arg(const std::string &flag, const char *text) {
    std::vector<uint32_t> values;
    std::string list = text;
    for (size_t start = 0;;) {
        size_t comma = list.find(',', start);
        std::string item = list.substr(start, comma == std::string::npos ? comma : comma - start);
        values.push_back(uint32_t(vkllm_tool::int_arg(flag, item.c_str(), 0, UINT32_MAX)));
        if (comma == std::string::npos) return values;
        start = comma + 1;
    }
}

}  // namespace

bool parse_bench_options(int argc, char **argv, BenchOptions &o) try {
    vkllm_runtime_params_init(&o.runtime);
    using vkllm_tool::int_arg;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : nullptr;
        if ((a == "-m" || a == "--model") && v) {
            o.model = v;
        } else if ((a == "-p" || a == "--n-prompt") && v) {
            o.prompts = list_arg(a, v);
        } else if ((a == "-n" || a == "--n-gen") && v) {
            o.gens = list_arg(a, v);
        } else if ((a == "-r" || a == "--repetitions") && v) {
            o.reps = uint32_t(int_arg(a, v, 1, UINT32_MAX));
        } else if ((a == "-c" || a == "--ctx-size") && v) {
            o.n_ctx = uint32_t(int_arg(a, v, 0, UINT32_MAX));
        } else if ((a == "-b" || a == "--batch-size") && v) {
            o.n_batch = uint32_t(int_arg(a, v, 1, UINT32_MAX));
        } else if ((a == "-s" || a == "--seqs") && v) {
            o.n_seq = uint32_t(int_arg(a, v, 1, 256));
        } else if (a == "--chain" && v) {
            o.chain = uint32_t(int_arg(a, v, 1, VKLLM_MAX_CHAINED_STEPS));
        } else if (a == "--pipeline-cache" && v) {
            o.runtime.pipeline_cache_path = v;
        } else if (a == "--device" && v) {
            vkllm_tool::device_arg(v, o.runtime);
        } else if (a == "--validate") {
            o.runtime.flags |= VKLLM_RUNTIME_VALIDATION;
            continue;
        } else if (a == "--no-kv-cache") {
            o.kv_cache = false;
            continue;
        } else if (a == "--json") {
            o.json = true;
            continue;
        } else if (a == "--record-every-step") {
            o.record_every_step = true;
            continue;
        } else if (a == "--profile") {
            o.profile = true;
            continue;
        } else if (a == "--fork") {
            o.fork = true;
            continue;
        } else if (a == "--restore") {
            o.restore = true;
            continue;
        } else if (a == "--no-warmup") {
            o.warm_up = false;
            continue;
        } else if (!v && a.size() > 1 && a[0] == '-') {
            throw vkllm_tool::ArgError(a +
                                       " is missing its value, or is not an option of "
                                       "vkllm bench");
        } else {
            throw vkllm_tool::ArgError("unknown option " + a);
        }
        ++i;
    }
    if (!o.model) throw vkllm_tool::ArgError("-m MODEL is required");
    if (o.n_seq > 1 && !o.kv_cache)
        throw vkllm_tool::ArgError("--no-kv-cache measures one sequence (-s 1)");
    if (o.chain && !o.kv_cache)
        throw vkllm_tool::ArgError("--chain decodes with the cache (no --no-kv-cache)");
    if (o.fork && o.n_seq < 2) throw vkllm_tool::ArgError("--fork needs -s 2 or more");
    if ((o.fork || o.restore) && !o.kv_cache)
        throw vkllm_tool::ArgError("--fork and --restore keep a cache (no --no-kv-cache)");
    o.n_prompt = *std::max_element(o.prompts.begin(), o.prompts.end());
    o.n_gen = *std::max_element(o.gens.begin(), o.gens.end());
    if (o.restore && *std::min_element(o.prompts.begin(), o.prompts.end()) < 2)
        throw vkllm_tool::ArgError("--restore needs a prompt of 2 tokens or more (-p)");
    if (o.n_prompt == 0 && o.n_gen == 0)
        throw vkllm_tool::ArgError("nothing to measure (-p 0 -n 0)");
    // The cache holds the prompt and every generated token but the last (which is never
    // decoded); the no-cache path evaluates the same sequence at most.
    uint64_t needed = uint64_t(o.n_prompt) + o.n_gen;
    if (o.n_ctx && o.n_ctx < needed)
        throw vkllm_tool::ArgError("-p " + std::to_string(o.n_prompt) + " and -n " +
                                   std::to_string(o.n_gen) + " need a context of " +
                                   std::to_string(needed) + " tokens; -c " +
                                   std::to_string(o.n_ctx) + " is smaller");
    return true;
} catch (const vkllm_tool::ArgError &e) {
    std::fprintf(stderr, "vkllm: bench: %s\n", e.what());
    return false;
}

void bench_usage(FILE *out) {
    std::fputs(
        "usage: vkllm bench -m FILE [options]\n"
        "prompt processing (pp) and greedy generation (tg) speed, like llama-bench\n"
        "\n"
        "  -m, --model FILE        the GGUF model\n"
        "  -p, --n-prompt N        prompt tokens, prefilled in one call (default 512; 0: no pp\n"
        "                          test); a list, 16,300, as llama-bench takes\n"
        "  -n, --n-gen N           tokens generated greedily after the prompt (default 128; 0:\n"
        "                          no tg test); a list too. Lists run every pair: a pp row\n"
        "                          per -p value, a tg row per -n value, and with several -p\n"
        "                          values one per pair, \"tgN @ dP\" (after P prompt tokens)\n"
        "  -r, --repetitions N     measured repetitions, after one warm-up (default 3)\n"
        "  -c, --ctx-size N        session context (default p + n, the largest of each list;\n"
        "                          it must hold them)\n"
        "  -b, --batch-size N      prefill chunk (default: the library's)\n"
        "  -s, --seqs N            batched decode: N sequences, each prefilled with the prompt,\n"
        "                          then decoded together one token each per step (t/s counts\n"
        "                          all of them)\n"
        "  --chain N               generate N greedy steps per submission, each token chosen\n"
        "                          on the device and fed to the next step (no logits read back)\n"
        "  --fork                  with -s N: prefill the prompt once and fork it into the\n"
        "                          other sequences (vkllm_session_fork)\n"
        "  --restore               restore all but the prompt's last token from a state saved\n"
        "                          before the runs (vkllm_session_state_load), then prefill\n"
        "                          the last: time to first token with a cached prefix\n"
        "  --no-kv-cache           recompute the whole sequence for every generated token\n"
        "  --record-every-step     record the step's command buffers again every step\n"
        "                          (ablation)\n"
        "  --profile               device time per kernel (timestamp queries), per token of\n"
        "                          each test\n"
        "  --json                  one JSON object per test instead of a markdown table\n"
        "  --no-warmup             measure from the first run (which then includes compiling\n"
        "                          the pipelines): for long runs on slow devices\n"
        "  --device N|NAME         device index or name substring (default: VKLLM_DEVICE, else\n"
        "                          the best device)\n"
        "  --validate              enable the Vulkan validation layer (slow: for checks only)\n"
        "  --pipeline-cache FILE   load and save compiled pipelines there (the first prefill,\n"
        "                          reported as time to first token, compiles what it lacks);\n"
        "                          the kernel variants `vkllm tune` kept in FILE.tune are used\n"
        "                          (the backend cell says \"tuned N shapes\")\n"
        "  -h, --help              this help\n",
        out);
}

}  // namespace vkllm_tool
