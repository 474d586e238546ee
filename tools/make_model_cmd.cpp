// vkllm make-model: writes a GGUF file with a real model's exact shape and random weights,
// so loading and speed can be measured without downloading gigabytes (or for models whose
// licence forbids redistribution). Like quantize it works on the file format directly
// (src/format): it makes files, it does not use the library through its ABI.
#include <strings.h>
#include <sys/stat.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <random>
#include <string>
#include <vector>

#include "byte_vocab.h"
#include "cli.h"
#include "cli_args.h"
#include "common/error.h"
#include "format/gguf.h"
#include "format/gguf_writer.h"
#include "format/quant.h"
#include "model_presets.h"
#include "quant_targets.h"
#include "split_rows.h"

namespace {

using vkllm_tool::Fill;
using vkllm_tool::Preset;
using vkllm_tool::TensorSpec;

void usage(FILE *out) {
    std::fprintf(out,
                 "usage: vkllm make-model --preset NAME [options] OUT.gguf\n"
                 "write a model of a real model's exact shape with random weights (for\n"
                 "benchmarks, and for models whose licence forbids redistribution)\n"
                 "\n"
                 "  --preset NAME           the model's shape (the names below)\n"
                 "  --type TYPE             the matrices' type (default F16; the types below)\n"
                 "  --vocab VOCAB.gguf      copy that file's tokenizer (default: a byte\n"
                 "                          vocabulary)\n"
                 "  --seed N                the weights' seed (default 0)\n"
                 "  --layers N              fewer layers than the preset's (1 to 4096)\n"
                 "  -h, --help              this help\n"
                 "\n"
                 "NAME: %s\nTYPE: %s MXFP4\n"
                 "MXFP4: the FFN matrices (experts included) MXFP4, as GPT-OSS's checkpoint\n"
                 "stores them; the output head Q8_0; the other matrices F16\n",
                 vkllm_tool::preset_names().c_str(), vkllm_tool::target_names().c_str());
}

// GPT-OSS's MXFP4 files (llama.cpp's LLAMA_FTYPE_MOSTLY_MXFP4_MOE = 38): `vkllm quantize`
// does not offer it, so it is make-model's own target, with its own rule (tensor_type).
const uint32_t kMxfp4 = 39;
const vkllm_tool::Target kMxfp4Target = {"MXFP4", kMxfp4, 38, false};

struct Options {
    const Preset *preset = nullptr;
    const vkllm_tool::Target *target = vkllm_tool::find_target("F16");
    std::string vocab;
    uint64_t seed = 0;
    uint32_t layers = 0;  // 0: the preset's
    std::string out;
};

// Each tensor draws from its own generator, seeded by the seed and its name, so a tensor's
// values do not depend on the others: blk.0 of a --layers 1 file is blk.0 of the full model.
// The values come from mt19937's raw output (which the standard fixes, unlike its
// distributions) through exact arithmetic, so a seed gives the same bytes everywhere.
class Uniform {
  public:
    Uniform(uint64_t seed, const std::string &name) {
        uint32_t hash = 2166136261u;  // FNV-1a
        for (unsigned char c : name)
            hash = (hash ^ c) * 16777619u;
        std::seed_seq seq{uint32_t(seed), uint32_t(seed >> 32), hash};
        gen_.seed(seq);
    }

    // center + half_width * v with v uniform in (-1, 1). v has 25 significant bits and
    // half_width 24, so the product is exact in double and a fused multiply-add rounds the
    // same as a multiply and an add: the compiler's choice cannot change the result.
    float next(double center, float half_width) {
        int64_t k = int64_t(gen_() >> 8);
        double v = double(2 * k + 1 - (int64_t(1) << 24)) / double(int64_t(1) << 24);
        return float(center + double(half_width) * v);
    }

  private:
    std::mt19937 gen_;
};

void fill(const Preset &preset, const TensorSpec &t, uint64_t seed, std::vector<float> &values) {
    uint64_t n = 1;
    for (uint64_t d : t.dims)
        n *= d;
    values.resize(size_t(n));
    if (t.fill == Fill::RopeFactors) {
        values = vkllm_tool::llama3_rope_factors(preset);
        return;
    }
    if (t.fill == Fill::LongRopeLong || t.fill == Fill::LongRopeShort) {
        const float *f =
            t.fill == Fill::LongRopeLong ? preset.longrope_long : preset.longrope_short;
        values.assign(f, f + n);
        return;
    }
    double center = t.fill == Fill::NormWeight ? 1.0 : 0.0;
    // Matrices: a variance of 1 / columns keeps each output near the scale of the input.
    float half_width = t.fill == Fill::Matrix || t.fill == Fill::Router
                           ? float(std::sqrt(3.0 / double(t.dims[0])))
                       : t.fill == Fill::NormWeight ? 0.2f
                                                    : 0.05f;
    Uniform u(seed, t.name);
    for (float &v : values)
        v = u.next(center, half_width);
}

bool ends_with(const std::string &s, const char *suffix) {
    size_t n = std::strlen(suffix);
    return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
}

// The type a tensor is stored in. Norms, biases, RoPE factors and MoE routers stay F32, as in
// llama.cpp's files (llama-quantize leaves ffn_gate_inp alone too).
uint32_t tensor_type(const Options &o, const TensorSpec &t, uint32_t n_layers) {
    if (t.fill != Fill::Matrix) return vkllm_tool::ggml::F32;
    if (o.target == &kMxfp4Target) {
        // As GPT-OSS's checkpoint: the FFN weights in MXFP4, the rest at 16 bits; but the
        // output head Q8_0, half of F16's bytes for a matrix every token reads whole.
        bool ffn = ends_with(t.name, "_exps.weight") || ends_with(t.name, "_shexp.weight") ||
                   ends_with(t.name, ".ffn_gate.weight") || ends_with(t.name, ".ffn_up.weight") ||
                   ends_with(t.name, ".ffn_down.weight");
        uint32_t type = ffn                         ? kMxfp4
                        : t.name == "output.weight" ? vkllm_tool::ggml::Q8_0
                                                    : vkllm_tool::ggml::F16;
        return t.dims[0] % 32 == 0 ? type : vkllm_tool::ggml::F16;
    }
    return vkllm_tool::choose_type(*o.target, t.name, t.dims[0], int(n_layers), o.preset->output)
        .type;
}

// Rows of F32 values to `type`, as `vkllm quantize` converts them.
void convert(const std::vector<float> &values, uint64_t cols, uint32_t type,
             std::vector<uint8_t> &out) {
    const vkllm::format::GgmlType &dst = *vkllm::format::ggml_type(type);
    uint64_t rows = values.size() / cols;
    uint64_t dst_row = cols / dst.block_elements * dst.block_bytes;
    out.resize(size_t(rows * dst_row));
    vkllm_tool::split_rows(rows, cols, [&](uint64_t first, uint64_t last) {
        for (uint64_t r = first; r < last; ++r)
            vkllm::format::quantize_row(type, values.data() + r * cols, out.data() + r * dst_row,
                                        cols);
    });
}

// Copies the tokenizer.* keys of a vocabulary file; returns its number of tokens.
size_t copy_vocab(const std::string &path, vkllm::format::GgufWriter &w) {
    vkllm::format::GgufFile vocab(path);
    const vkllm::format::KeyValue *tokens = vocab.find("tokenizer.ggml.tokens");
    if (!vocab.find("tokenizer.ggml.model") || !tokens)
        vkllm::fail(VKLLM_ERR_FORMAT, "%s has no tokenizer (tokenizer.ggml.* keys)", path.c_str());
    for (const vkllm::format::KeyValue &kv : vocab.keys())
        if (kv.key.compare(0, 10, "tokenizer.") == 0) w.copy_key(vocab, kv);
    return size_t(tokens->count);
}

uint64_t file_size(const std::string &path) {
    struct stat st;
    return ::stat(path.c_str(), &st) == 0 ? uint64_t(st.st_size) : 0;
}

int make_model(const Options &o) {
    auto start = std::chrono::steady_clock::now();
    const Preset &p = *o.preset;
    uint32_t n_layers = o.layers ? o.layers : p.n_layer;
    std::vector<TensorSpec> specs = vkllm_tool::preset_tensors(p, n_layers);

    vkllm::format::GgufWriter writer;
    vkllm_tool::write_hparams(p, n_layers, writer);
    writer.set_u32("general.file_type", o.target->ftype);
    writer.set_u32("general.quantization_version", 2);  // ggml's GGML_QNT_VERSION
    size_t n_tokens = o.vocab.empty() ? vkllm_tool::write_byte_vocab(p.vocab, p.n_vocab, writer)
                                      : copy_vocab(o.vocab, writer);
    // A smaller vocabulary is fine (ids past it are never produced by the tokenizer), a larger
    // one could produce ids the embedding does not have.
    if (n_tokens > p.n_vocab)
        vkllm::fail(VKLLM_ERR_INVALID_ARGUMENT,
                    "%s has %zu tokens, more than the %u rows of %s's embedding", o.vocab.c_str(),
                    n_tokens, p.n_vocab, p.name);

    std::vector<uint32_t> types;
    uint64_t n_params = 0;
    for (const TensorSpec &t : specs) {
        uint32_t type = tensor_type(o, t, n_layers);
        types.push_back(type);
        writer.add_tensor(t.name, type, t.dims);
        uint64_t n = 1;
        for (uint64_t d : t.dims)
            n *= d;
        n_params += n;
    }

    std::vector<float> values;
    std::vector<uint8_t> bytes;
    writer.write(o.out, [&](size_t i) -> const void * {
        fill(p, specs[i], o.seed, values);
        if (types[i] == vkllm_tool::ggml::F32) return values.data();
        convert(values, specs[i].dims[0], types[i], bytes);
        return bytes.data();
    });
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    uint64_t size = file_size(o.out);
    std::printf(
        "wrote %s: %s with %u of %u layers, %s, %zu tensors, %llu parameters (%.2f M), "
        "vocabulary of %zu tokens, %llu bytes (%.2f MiB) in %.1f s\n",
        o.out.c_str(), p.name, n_layers, p.n_layer, o.target->name, specs.size(),
        (unsigned long long)n_params, double(n_params) / 1e6, n_tokens, (unsigned long long)size,
        double(size) / (1 << 20), seconds);
    return 0;
}

}  // namespace

int cmd_make_model(int argc, char **argv) {
    Options o;
    for (int i = 1; i < argc; ++i)
        try {
            std::string a = argv[i];
            bool has_value = i + 1 < argc;
            if (a == "-h" || a == "--help") {
                usage(stdout);
                return 0;
            } else if (a == "--preset" && has_value) {
                o.preset = vkllm_tool::find_preset(argv[++i]);
                if (!o.preset) {
                    std::fprintf(stderr, "vkllm: make-model: unknown preset %s\n", argv[i]);
                    usage(stderr);
                    return 2;
                }
            } else if (a == "--type" && has_value) {
                o.target = strcasecmp(argv[++i], "MXFP4") == 0 ? &kMxfp4Target
                                                               : vkllm_tool::find_target(argv[i]);
                if (!o.target) {
                    std::fprintf(stderr, "vkllm: make-model: unknown type %s\n", argv[i]);
                    usage(stderr);
                    return 2;
                }
            } else if (a == "--vocab" && has_value) {
                o.vocab = argv[++i];
            } else if (a == "--seed" && has_value) {
                o.seed = vkllm_tool::uint_arg(a, argv[++i], 0, UINT64_MAX);
            } else if (a == "--layers" && has_value) {
                o.layers = uint32_t(vkllm_tool::int_arg(a, argv[++i], 1, 4096));
            } else if (a.size() > 1 && a[0] == '-') {
                std::fprintf(
                    stderr, "vkllm: make-model: %s%s (vkllm make-model --help lists the options)\n",
                    has_value ? "unknown option " : a.c_str(),
                    has_value ? a.c_str() : " is missing its value, or is unknown");
                return 2;
            } else if (o.out.empty()) {
                o.out = a;
            } else {
                std::fprintf(stderr, "vkllm: make-model: more than one output file (%s)\n",
                             a.c_str());
                return 2;
            }
        } catch (const vkllm_tool::ArgError &e) {
            std::fprintf(stderr, "vkllm: make-model: %s\n", e.what());
            return 2;
        }
    if (!o.preset || o.out.empty()) {
        usage(stderr);
        return 2;
    }
    try {
        return make_model(o);
    } catch (const vkllm::Error &e) {
        std::fprintf(stderr, "vkllm: make-model: %s: %s\n", vkllm_status_string(e.status()),
                     e.what());
    } catch (const std::bad_alloc &) {
        std::fprintf(stderr, "vkllm: make-model: out of memory\n");
    }
    return 1;
}
