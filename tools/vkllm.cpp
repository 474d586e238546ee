// vkllm: the command-line face of libvkllm. Uses only the public C API (but quantize and
// make-model, file transforms, and template's reading of a JSON file). `vkllm --help` lists the
// commands, `vkllm CMD --help` each command's options; README.md's command-line section is checked
// against them (tests/check_cli_readme.py).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "cli.h"
#include "cli_args.h"
#include "coopmat_text.h"
#include "os.h"
#include "text_file.h"
#include "vkllm.h"

namespace {

int usage(FILE *out) {
    std::fputs(
        "usage: vkllm <command> [options]\n"
        "       vkllm <command> --help      the command's options\n"
        "       vkllm --version\n"
        "\n"
        "commands:\n"
        "  run              generate text from a prompt\n"
        "  chat             talk with a chat model through its chat template\n"
        "  template         render a conversation with a chat template, as transformers does\n"
        "  embed            print the embeddings of texts as JSON, one line per input\n"
        "  similarity       rank the lines of a file by similarity with a query\n"
        "  devices          list the Vulkan devices vkllm can see\n"
        "  info             describe a GGUF model file: summary, metadata, tensors\n"
        "  tokenize         print the token ids of a text\n"
        "  bench-tokenizer  tokenizer throughput on a text file\n"
        "  bench-grammar    what a grammar constraint costs per token, on a real vocabulary\n"
        "  self-check       run every compute kernel on a device against a CPU computation\n"
        "  tune             time the decode kernels' variants on a model's shapes and keep the\n"
        "                   fastest beside the pipeline cache\n"
        "  quantize         rewrite a model with its matrices in another type\n"
        "  make-model       write a random-weight model of a real model's shape\n"
        "  bench            prompt processing and generation speed, like llama-bench\n"
        "  serve            an OpenAI-compatible HTTP server with continuous batching\n"
        "  version          print the library version (also --version, -V)\n"
        "\n"
        "options of the commands that use a device (run, chat, bench, self-check, tune):\n"
        "  --device N|NAME         device index or name substring (default: VKLLM_DEVICE, else\n"
        "                          the best device)\n"
        "  --validate              enable the Vulkan validation layer "
        "(VK_LAYER_KHRONOS_validation)\n"
        "  --pipeline-cache FILE   keep compiled pipelines in FILE between runs, and the\n"
        "                          kernel variants `vkllm tune` picked in FILE.tune\n",
        out);
    return out == stdout ? 0 : 2;
}

// The commands handled in this file: their usage, and the options each accepts.
struct Command {
    const char *name;
    const char *usage;
    std::vector<std::string> options;  // those that take a value end with '='
    bool text_argument;                // tokenize's TEXT
};

const std::vector<Command> &commands() {
    static const std::vector<Command> list = {
        {"devices",
         "usage: vkllm devices\n"
         "list the Vulkan devices vkllm can see: memory heaps, limits and features\n",
         {},
         false},
        {"info",
         "usage: vkllm info -m FILE\n"
         "describe a GGUF model file: the summary, every metadata key, every tensor\n"
         "\n"
         "  -m, --model FILE        the GGUF file\n"
         "  -h, --help              this help\n",
         {"-m=", "--model="},
         false},
        {"tokenize",
         "usage: vkllm tokenize -m FILE [options] [TEXT]\n"
         "print the token ids of TEXT (else of --file, else of stdin) as llama-tokenize does:\n"
         "start and end tokens added as the model asks, special tokens parsed\n"
         "\n"
         "  -m, --model FILE        the GGUF model (its tokenizer only)\n"
         "  --file FILE             the text from a file\n"
         "  --no-bos                add no start or end token\n"
         "  --no-special            special-token text is plain text\n"
         "  --pieces                each id with its piece of text\n"
         "  --json                  one JSON object: ids (and pieces with --pieces)\n"
         "  -h, --help              this help\n",
         {"-m=", "--model=", "--file=", "--no-bos", "--no-special", "--pieces", "--json"},
         true},
        {"bench-tokenizer",
         "usage: vkllm bench-tokenizer -m FILE --file TEXT\n"
         "tokenizer throughput: encodes and decodes the file 5 times, the best run reported\n"
         "\n"
         "  -m, --model FILE        the GGUF model (its tokenizer only)\n"
         "  --file TEXT             the text file\n"
         "  -h, --help              this help\n",
         {"-m=", "--model=", "--file="},
         false},
        {"self-check",
         "usage: vkllm self-check [options]\n"
         "run every compute kernel on the device and compare it with a CPU computation; exit\n"
         "status 1 when a kernel fails or the validation layer reports an error\n"
         "\n"
         "  --device N|NAME         device index or name substring (default: VKLLM_DEVICE, else\n"
         "                          the best device)\n"
         "  --validate              enable the Vulkan validation layer\n"
         "  --pipeline-cache FILE   keep compiled pipelines in FILE between runs\n"
         "  -h, --help              this help\n",
         {"--device=", "--validate", "--pipeline-cache="},
         false},
        {"tune",
         "usage: vkllm tune -m FILE [options]\n"
         "time every variant of the decode kernels on the model's weight shapes (each checked\n"
         "against the reference kernel first) and keep the fastest for this device in the tune\n"
         "file beside --pipeline-cache FILE (FILE.tune), which run, chat and bench with the same\n"
         "--pipeline-cache use; prints what each shape tried and picked, then a summary\n"
         "\n"
         "  -m, --model FILE        the GGUF model\n"
         "  --pipeline-cache FILE   keep compiled pipelines in FILE and the winners in FILE.tune\n"
         "                          (without it the winners are only printed)\n"
         "  --device N|NAME         device index or name substring (default: VKLLM_DEVICE, else\n"
         "                          the best device)\n"
         "  --validate              enable the Vulkan validation layer\n"
         "  -h, --help              this help\n",
         {"-m=", "--model=", "--device=", "--validate", "--pipeline-cache="},
         false},
        {"version",
         "usage: vkllm version (or vkllm --version, vkllm -V)\n"
         "print the library version\n",
         {},
         false},
    };
    return list;
}

const Command *find_command(const std::string &name) {
    for (const Command &c : commands())
        if (name == c.name) return &c;
    return nullptr;
}

int report(vkllm_status s, const char *what) {
    std::fprintf(stderr, "vkllm: %s: %s: %s\n", what, vkllm_status_string(s), vkllm_last_error());
    return 1;
}

const char *type_name(vkllm_device_type t) {
    switch (t) {
        case VKLLM_DEVICE_DISCRETE_GPU:
            return "discrete GPU";
        case VKLLM_DEVICE_INTEGRATED_GPU:
            return "integrated GPU";
        case VKLLM_DEVICE_VIRTUAL_GPU:
            return "virtual GPU";
        case VKLLM_DEVICE_CPU:
            return "CPU";
        default:
            return "other";
    }
}

void print_device(const vkllm_device_info &d) {
    std::printf("%u: %s (%s)%s\n", d.index, d.name, type_name(d.type),
                d.usable ? "" : " [unusable]");
    std::printf("   driver %s %s, Vulkan %u.%u, vendor 0x%04x device 0x%04x\n", d.driver_name,
                d.driver_info, d.api_version >> 22, (d.api_version >> 12) & 0x3ff, d.vendor_id,
                d.device_id);
    for (uint32_t h = 0; h < d.heap_count; ++h)
        std::printf("   heap %u: %llu MiB%s\n", h, (unsigned long long)(d.heap_size[h] >> 20),
                    d.heap_device_local[h] ? " device-local" : "");
    std::printf(
        "   unified memory %s, max binding %llu MiB, max texel elements %llu, shared %u KiB\n",
        d.unified_memory ? "yes" : "no", (unsigned long long)(d.max_storage_buffer_range >> 20),
        (unsigned long long)d.max_texel_buffer_elements, d.max_compute_shared_memory / 1024);
    std::printf(
        "   subgroup %u, workgroup %u, float16 %s, int8 %s, 16-bit storage %s, timestamps %s\n",
        d.subgroup_size, d.max_workgroup_invocations, d.shader_float16 ? "yes" : "no",
        d.shader_int8 ? "yes" : "no", d.storage_16bit ? "yes" : "no", d.timestamps ? "yes" : "no");
    std::printf("   cooperative matrix: %s\n", vkllm_tool::coopmat_summary(d).c_str());
}

int cmd_devices() {
    size_t n = 0;
    vkllm_status s = vkllm_devices_enumerate(nullptr, 0, &n);
    if (s != VKLLM_OK) return report(s, "listing devices");
    std::vector<vkllm_device_info> infos(n);
    for (auto &i : infos)
        i.struct_size = sizeof i;
    s = vkllm_devices_enumerate(infos.data(), n, &n);
    if (s != VKLLM_OK) return report(s, "listing devices");
    for (const auto &d : infos)
        print_device(d);
    return 0;
}

std::string dims_text(const vkllm_tensor_info &t) {
    std::string s;
    for (uint32_t d = 0; d < t.n_dims; ++d)
        s += (d ? " x " : "") + std::to_string(t.dims[d]);
    return s;
}

std::string human_count(uint64_t n) {
    char buf[32];
    if (n >= 1000000000ull)
        std::snprintf(buf, sizeof buf, "%.2f B", double(n) / 1e9);
    else if (n >= 1000000ull)
        std::snprintf(buf, sizeof buf, "%.2f M", double(n) / 1e6);
    else if (n >= 1000ull)
        std::snprintf(buf, sizeof buf, "%.2f K", double(n) / 1e3);
    else
        std::snprintf(buf, sizeof buf, "%llu", (unsigned long long)n);
    return buf;
}

// Like gguf-dump, but readable: the summary, every key, every tensor.
int cmd_info(const char *path) {
    vkllm_gguf *g = nullptr;
    vkllm_status s = vkllm_gguf_open(path, &g);
    if (s != VKLLM_OK) return report(s, "reading the model");
    vkllm_model_summary m;
    m.struct_size = sizeof m;
    vkllm_gguf_get_summary(g, &m);
    std::printf("%s: GGUF v%u, %.1f MiB\n", path, m.gguf_version, double(m.file_bytes) / 1048576.0);
    std::printf("  architecture     %s\n", m.architecture[0] ? m.architecture : "(none)");
    if (m.name[0]) std::printf("  name             %s\n", m.name);
    std::printf("  parameters       %s in %llu tensors (%.1f MiB)\n",
                human_count(m.n_params).c_str(), (unsigned long long)m.n_tensors,
                double(m.tensor_bytes) / 1048576.0);
    std::printf("  layers           %u\n", m.n_layers);
    std::printf("  embedding        %u\n", m.n_embd);
    std::printf("  heads            %u (%u key/value)\n", m.n_heads, m.n_kv_heads);
    if (m.n_experts)
        std::printf("  experts          %u, %u used per token\n", m.n_experts, m.n_experts_used);
    std::printf("  context length   %u\n", m.context_length);
    std::printf("  vocabulary       %u (%s%s%s)\n", m.n_vocab, m.tokenizer_model,
                m.tokenizer_pre[0] ? ", pre " : "", m.tokenizer_pre);
    std::printf("  tensor types    ");
    for (uint32_t t = 0; t < VKLLM_GGML_TYPE_COUNT; ++t)
        if (m.tensors_of_type[t])
            std::printf(" %s: %llu", vkllm_ggml_type_name(t),
                        (unsigned long long)m.tensors_of_type[t]);
    std::printf("\n\nmetadata (%llu keys):\n", (unsigned long long)m.n_keys);
    std::vector<char> text(4096);
    for (size_t i = 0; i < m.n_keys; ++i) {
        vkllm_gguf_key k;
        k.struct_size = sizeof k;
        vkllm_gguf_get_key(g, i, &k);
        size_t len = 0;
        if (vkllm_gguf_get_text(g, k.name, text.data(), text.size(), &len) ==
            VKLLM_ERR_BUFFER_TOO_SMALL) {
            text.resize(len + 1);
            vkllm_gguf_get_text(g, k.name, text.data(), text.size(), &len);
        }
        std::printf("  %-40s %s\n", k.name, text.data());
    }
    std::printf("\ntensors (%llu):\n", (unsigned long long)m.n_tensors);
    for (size_t i = 0; i < m.n_tensors; ++i) {
        vkllm_tensor_info t;
        t.struct_size = sizeof t;
        vkllm_gguf_get_tensor(g, i, &t);
        std::printf("  %-40s %-7s %-20s %10.3f MiB\n", t.name, t.type_name, dims_text(t).c_str(),
                    double(t.n_bytes) / 1048576.0);
    }
    vkllm_gguf_destroy(g);
    return 0;
}

// JSON string body for bytes that may not be valid UTF-8 (a piece can be half a character):
// invalid bytes become U+FFFD, so the output is always valid JSON.
std::string json_escape(const std::string &s) {
    std::string out;
    for (size_t i = 0; i < s.size();) {
        unsigned char c = static_cast<unsigned char>(s[i]);
        size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
        bool ok = n > 0 && i + n <= s.size();
        for (size_t k = 1; ok && k < n; ++k)
            ok = (static_cast<unsigned char>(s[i + k]) & 0xC0) == 0x80;
        if (!ok) {
            out += "\\ufffd";
            ++i;
        } else if (c == '"' || c == '\\') {
            out += '\\';
            out += char(c);
            ++i;
        } else if (c < 0x20) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\u%04x", c);
            out += buf;
            ++i;
        } else {
            out.append(s, i, n);
            i += n;
        }
    }
    return out;
}

struct TokenizeOptions {
    bool bos = true;
    bool special = true;
    bool json = false;
    bool pieces = false;
    const char *file = nullptr;
    std::string text;
    bool have_text = false;
};

// Like llama-tokenize: BOS as the model asks and special tokens parsed, unless told not to.
int cmd_tokenize(const char *model, const TokenizeOptions &o) {
    std::string text = o.text, error;
    const char *file = o.file ? o.file : o.have_text ? nullptr : "-";
    if (file && !vkllm_tool::read_text_file(file, text, error)) {
        std::fprintf(stderr, "vkllm: tokenize: %s\n", error.c_str());
        return 1;
    }
    vkllm_gguf *g = nullptr;
    vkllm_status s = vkllm_gguf_open(model, &g);
    if (s != VKLLM_OK) return report(s, "reading the model");
    vkllm_tokenizer *tok = nullptr;
    s = vkllm_tokenizer_create(g, &tok);
    vkllm_gguf_destroy(g);
    if (s != VKLLM_OK) return report(s, "loading the tokenizer");
    uint32_t flags =
        (o.bos ? VKLLM_TOKENIZE_ADD_SPECIAL : 0) | (o.special ? VKLLM_TOKENIZE_PARSE_SPECIAL : 0);
    size_t n = 0;
    vkllm_tokenizer_encode(tok, text.data(), text.size(), flags, nullptr, 0, &n);
    std::vector<int32_t> ids(n);
    s = vkllm_tokenizer_encode(tok, text.data(), text.size(), flags, ids.data(), ids.size(), &n);
    if (s != VKLLM_OK) {
        vkllm_tokenizer_destroy(tok);
        return report(s, "tokenizing");
    }
    std::vector<std::string> pieces;
    for (int32_t id : ids) {
        char buf[256];
        size_t len = 0;
        std::string piece;
        if (vkllm_tokenizer_get_piece(tok, id, VKLLM_DETOKENIZE_SPECIAL, buf, sizeof buf, &len) ==
            VKLLM_OK)
            piece.assign(buf, len);
        else {
            std::vector<char> big(len + 1);
            vkllm_tokenizer_get_piece(tok, id, VKLLM_DETOKENIZE_SPECIAL, big.data(), big.size(),
                                      &len);
            piece.assign(big.data(), len);
        }
        pieces.push_back(piece);
    }
    vkllm_tokenizer_destroy(tok);
    if (o.json) {
        std::printf("{\"ids\": [");
        for (size_t i = 0; i < ids.size(); ++i)
            std::printf("%s%d", i ? ", " : "", ids[i]);
        std::printf("]");
        if (o.pieces) {
            std::printf(", \"pieces\": [");
            for (size_t i = 0; i < pieces.size(); ++i)
                std::printf("%s\"%s\"", i ? ", " : "", json_escape(pieces[i]).c_str());
            std::printf("]");
        }
        std::printf("}\n");
    } else if (o.pieces) {
        for (size_t i = 0; i < ids.size(); ++i)
            std::printf("%6d -> '%s'\n", ids[i], pieces[i].c_str());
    } else {
        std::printf("[");
        for (size_t i = 0; i < ids.size(); ++i)
            std::printf("%s%d", i ? ", " : "", ids[i]);
        std::printf("]\n");
    }
    return 0;
}

// Tokenizer throughput: encodes and decodes the text `runs` times and reports the best run.
int cmd_bench_tokenizer(const char *model, const char *file, int runs) {
    std::string text, error;
    if (!vkllm_tool::read_text_file(file, text, error)) {
        std::fprintf(stderr, "vkllm: bench-tokenizer: %s\n", error.c_str());
        return 1;
    }
    if (text.empty()) {
        std::fprintf(stderr, "vkllm: bench-tokenizer: %s is empty: nothing to measure\n", file);
        return 1;
    }
    vkllm_gguf *g = nullptr;
    vkllm_status s = vkllm_gguf_open(model, &g);
    if (s != VKLLM_OK) return report(s, "reading the model");
    auto t0 = std::chrono::steady_clock::now();
    vkllm_tokenizer *tok = nullptr;
    s = vkllm_tokenizer_create(g, &tok);
    double load_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    vkllm_gguf_destroy(g);
    if (s != VKLLM_OK) return report(s, "loading the tokenizer");
    std::vector<int32_t> ids(text.size() + 16);
    size_t n = 0;
    double best_encode = 1e30, best_decode = 1e30;
    std::vector<char> out(text.size() * 2 + 1024);
    size_t out_len = 0;
    for (int r = 0; r < runs; ++r) {
        auto a = std::chrono::steady_clock::now();
        s = vkllm_tokenizer_encode(tok, text.data(), text.size(), 0, ids.data(), ids.size(), &n);
        auto b = std::chrono::steady_clock::now();
        if (s == VKLLM_OK)
            s = vkllm_tokenizer_decode(tok, ids.data(), n, 0, out.data(), out.size(), &out_len);
        auto c = std::chrono::steady_clock::now();
        if (s != VKLLM_OK) {
            vkllm_tokenizer_destroy(tok);
            return report(s, "benchmark");
        }
        best_encode = std::min(best_encode, std::chrono::duration<double>(b - a).count());
        best_decode = std::min(best_decode, std::chrono::duration<double>(c - b).count());
    }
    vkllm_tokenizer_destroy(tok);
    double mb = double(text.size()) / 1e6;
    std::printf("tokenizer %s: load %.0f ms\n", model, load_ms);
    std::printf("text %.2f MB -> %zu tokens (%.2f bytes/token), round trip %s\n", mb, n,
                double(text.size()) / double(n),
                std::string(out.data(), out_len) == text
                    ? "exact"
                    : "not exact (the tokenizer normalises text)");
    std::printf("encode %.2f MB/s (%.0f tokens/s), decode %.1f MB/s, best of %d\n",
                mb / best_encode, double(n) / best_encode, mb / best_decode, runs);
    return 0;
}

int cmd_self_check(const vkllm_runtime_params &params) {
    vkllm_runtime *rt = nullptr;
    vkllm_status s = vkllm_runtime_create(&params, &rt);
    if (s != VKLLM_OK) return report(s, "creating the runtime");
    vkllm_device_info d;
    d.struct_size = sizeof d;
    vkllm_runtime_get_device_info(rt, &d);
    std::printf("self-check on device %u: %s\n", d.index, d.name);
    vkllm_self_check_result r;
    r.struct_size = sizeof r;
    s = vkllm_runtime_self_check(rt, &r);
    vkllm_runtime_stats st;
    st.struct_size = sizeof st;
    vkllm_runtime_get_stats(rt, &st);
    vkllm_runtime_destroy(rt);
    if (s != VKLLM_OK) return report(s, "self-check");
    std::printf("%u kernels checked, %u failed, worst error %.3f of tolerance, %.1f ms\n",
                r.kernels_checked, r.kernels_failed, r.max_error, r.elapsed_ms);
    if (r.kernels_failed) std::printf("first failure: %s\n", r.first_failure);
    if (params.flags & VKLLM_RUNTIME_VALIDATION)
        std::printf("validation: %llu errors, %llu warnings\n",
                    (unsigned long long)st.validation_errors,
                    (unsigned long long)st.validation_warnings);
    return (r.kernels_failed || st.validation_errors) ? 1 : 0;
}

}  // namespace

int main(int argc, char **argv) {
    vkllm_tool::utf8_arguments(argc, argv);
    if (argc < 2) return usage(stderr);
    std::string cmd = argv[1];
    if (cmd == "-h" || cmd == "--help") return usage(stdout);
    if (cmd == "help" && argc == 2) return usage(stdout);
    // `vkllm help CMD` is `vkllm CMD --help`.
    char help_flag[] = "--help";
    std::vector<char *> help_args = {argv[0], argc > 2 ? argv[2] : nullptr, help_flag, nullptr};
    if (cmd == "help") {
        cmd = argv[2];
        argc = 3;
        argv = help_args.data();
    }
    if (cmd == "--version" || cmd == "-V") cmd = "version";
    if (cmd == "run") return cmd_run(argc - 1, argv + 1);
    if (cmd == "chat") return cmd_chat(argc - 1, argv + 1);
    if (cmd == "template") return cmd_template(argc - 1, argv + 1);
    if (cmd == "quantize") return cmd_quantize(argc - 1, argv + 1);
    if (cmd == "make-model") return cmd_make_model(argc - 1, argv + 1);
    if (cmd == "bench") return cmd_bench(argc - 1, argv + 1);
    if (cmd == "bench-grammar") return cmd_bench_grammar(argc - 1, argv + 1);
    if (cmd == "embed") return cmd_embed(argc - 1, argv + 1);
    if (cmd == "similarity") return cmd_similarity(argc - 1, argv + 1);
    if (cmd == "serve") return cmd_serve(argc - 1, argv + 1, argv[0]);
    const Command *command = find_command(cmd);
    if (!command) {
        std::fprintf(stderr, "vkllm: unknown command %s\n", cmd.c_str());
        return usage(stderr);
    }
    const char *model = nullptr;
    TokenizeOptions tok;
    vkllm_runtime_params params;
    vkllm_runtime_params_init(&params);
    for (int i = 2; i < argc; ++i) {
        std::string a = argv[i];
        if (a == "-h" || a == "--help") {
            std::fputs(command->usage, stdout);
            return 0;
        }
        const auto &known = command->options;
        bool flag = std::find(known.begin(), known.end(), a) != known.end();
        bool valued = std::find(known.begin(), known.end(), a + "=") != known.end();
        if (valued && i + 1 == argc) {
            std::fprintf(stderr, "vkllm: %s: %s needs a value\n", command->name, a.c_str());
            return 2;
        }
        if (valued && a == "--device") {
            vkllm_tool::device_arg(argv[++i], params);
        } else if (valued && (a == "-m" || a == "--model")) {
            model = argv[++i];
        } else if (valued && a == "--file") {
            tok.file = argv[++i];
        } else if (valued && a == "--pipeline-cache") {
            params.pipeline_cache_path = argv[++i];
        } else if (flag && a == "--no-bos") {
            tok.bos = false;
        } else if (flag && a == "--no-special") {
            tok.special = false;
        } else if (flag && a == "--json") {
            tok.json = true;
        } else if (flag && a == "--pieces") {
            tok.pieces = true;
        } else if (flag && a == "--validate") {
            params.flags |= VKLLM_RUNTIME_VALIDATION;
        } else if (command->text_argument && !tok.have_text && (a.empty() || a[0] != '-')) {
            tok.text = a;
            tok.have_text = true;
        } else {
            std::fprintf(stderr, "vkllm: %s: %s %s (vkllm %s --help lists the options)\n",
                         command->name,
                         a.empty() || a[0] != '-' ? "unexpected argument" : "unknown option",
                         a.c_str(), command->name);
            return 2;
        }
    }
    bool needs_model =
        cmd == "info" || cmd == "tokenize" || cmd == "bench-tokenizer" || cmd == "tune";
    if ((needs_model && !model) || (cmd == "bench-tokenizer" && !tok.file)) {
        std::fprintf(stderr, "vkllm: %s: -m FILE%s is required\n%s", command->name,
                     cmd == "bench-tokenizer" ? " --file TEXT" : "", command->usage);
        return 2;
    }
    if (tok.have_text && tok.file) {
        std::fprintf(stderr, "vkllm: tokenize: TEXT and --file exclude each other\n");
        return 2;
    }
    if (cmd == "devices") return cmd_devices();
    if (cmd == "tokenize") return cmd_tokenize(model, tok);
    if (cmd == "bench-tokenizer") return cmd_bench_tokenizer(model, tok.file, 5);
    if (cmd == "info") return cmd_info(model);
    if (cmd == "self-check") return cmd_self_check(params);
    if (cmd == "tune") return cmd_tune(model, params);
    std::printf("vkllm %s\n", vkllm_version_string());
    return 0;
}
