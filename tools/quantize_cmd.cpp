// vkllm quantize: rewrites a GGUF model with its weight matrices in another ggml type, the
// way llama.cpp's llama-quantize does (same type names, file types and Q4_K_M/Q5_K_M
// mixtures, in simplified form). Unlike the rest of the tool it works on the file format
// directly (src/format), not through the C API: it is a file transform, not an ABI user.
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <new>
#include <set>
#include <string>
#include <vector>

#include "cli.h"
#include "common/error.h"
#include "format/gguf.h"
#include "format/gguf_writer.h"
#include "format/quant.h"
#include "quant_targets.h"
#include "split_rows.h"

namespace {

using vkllm::format::GgufFile;
using vkllm::format::TensorInfo;

using vkllm_tool::Target;

void usage(FILE *out) {
    std::fprintf(out,
                 "usage: vkllm quantize [options] IN.gguf OUT.gguf TYPE\n"
                 "rewrite a model with its matrices in TYPE, as llama-quantize does (the\n"
                 "Q4_K_M and Q5_K_M mixtures simplified)\n"
                 "\n"
                 "  -q, --quiet             only the summary, no line per tensor\n"
                 "  --allow-requantize      convert matrices that are already quantized\n"
                 "                          (refused without it: they would lose precision\n"
                 "                          twice; F32, F16 and BF16 always convert)\n"
                 "  -h, --help              this help\n"
                 "\n"
                 "TYPE: %s\n",
                 vkllm_tool::target_names().c_str());
}

bool ends_with(const std::string &s, const char *suffix) {
    size_t n = std::strlen(suffix);
    return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
}

struct Plan {
    const TensorInfo *in;
    uint32_t type;     // the type written
    bool convert;      // false: the bytes are copied as they are
    std::string note;  // why the type differs from the target's, if it does
};

class Planner {
  public:
    Planner(const GgufFile &in, const Target &target) : target_(target) {
        has_output_ = in.find_tensor("output.weight") != nullptr;
        for (const TensorInfo &t : in.tensors())
            n_layers_ = std::max(n_layers_, vkllm_tool::layer_of(t.name) + 1);
    }

    Plan plan(const TensorInfo &t) const {
        Plan p{&t, t.type->id, false, ""};
        // Matrices only: norms and biases are small and precision-critical. The MoE router
        // (ffn_gate_inp) stays as it is, as in llama.cpp.
        bool matrix = t.n_dims == 2 && ends_with(t.name, ".weight") &&
                      !ends_with(t.name, "ffn_gate_inp.weight");
        if (!matrix) return p;
        if (!vkllm::format::can_dequantize(t.type->id)) {
            p.note = "no conversion from this type";
            return p;
        }
        vkllm_tool::TypeChoice c =
            vkllm_tool::choose_type(target_, t.name, t.dims[0], n_layers_, has_output_);
        p.type = c.type;
        p.note = c.note;
        p.convert = c.type != t.type->id;
        return p;
    }

  private:
    const Target &target_;
    bool has_output_ = false;
    int n_layers_ = 0;
};

// Converts the rows of one tensor.
void convert(const GgufFile &in, const Plan &p, std::vector<uint8_t> &out) {
    const TensorInfo &t = *p.in;
    const vkllm::format::GgmlType &dst = *vkllm::format::ggml_type(p.type);
    uint64_t cols = t.dims[0], rows = t.n_elements / cols;
    uint64_t src_row = cols / t.type->block_elements * t.type->block_bytes;
    uint64_t dst_row = cols / dst.block_elements * dst.block_bytes;
    out.resize(size_t(rows * dst_row));
    const uint8_t *src = in.tensor_data(t);
    auto work = [&](uint64_t first, uint64_t last) {
        std::vector<float> row(static_cast<size_t>(cols));
        for (uint64_t r = first; r < last; ++r) {
            vkllm::format::dequantize_row(t.type->id, src + r * src_row, row.data(), cols);
            vkllm::format::quantize_row(p.type, row.data(), out.data() + r * dst_row, cols);
        }
    };
    vkllm_tool::split_rows(rows, cols, work);
}

std::string shape(const TensorInfo &t) {
    std::string s;
    for (uint32_t d = 0; d < t.n_dims; ++d)
        s += (d ? " x " : "") + std::to_string(t.dims[d]);
    return s;
}

// Converting a quantized matrix adds the new type's error to the one it already has, as
// llama-quantize warns: refused unless asked for. Copying one unchanged is not requantizing.
bool requantizes(const Plan &p) {
    uint32_t from = p.in->type->id;
    return p.convert && from != vkllm_tool::ggml::F32 && from != vkllm_tool::ggml::F16 &&
           from != vkllm_tool::ggml::BF16;
}

uint64_t file_size(const std::string &path) {
    struct stat st;
    return ::stat(path.c_str(), &st) == 0 ? uint64_t(st.st_size) : 0;
}

int quantize(const std::string &in_path, const std::string &out_path, const Target &target,
             bool quiet, bool allow_requantize) {
    auto start = std::chrono::steady_clock::now();
    GgufFile in(in_path);
    Planner planner(in, target);
    if (!allow_requantize)
        for (const TensorInfo &t : in.tensors())
            if (requantizes(planner.plan(t))) {
                std::fprintf(stderr,
                             "vkllm: quantize: %s is already quantized (%s): requantizing it "
                             "to %s loses precision twice; pass --allow-requantize to do it "
                             "anyway\n",
                             t.name.c_str(), t.type->name, target.name);
                return 1;
            }
    std::vector<Plan> plans;
    vkllm::format::GgufWriter writer;
    writer.copy_keys(in);
    writer.set_u32("general.quantization_version", 2);  // ggml's GGML_QNT_VERSION
    writer.set_u32("general.file_type", target.ftype);
    size_t converted = 0;
    for (const TensorInfo &t : in.tensors()) {
        plans.push_back(planner.plan(t));
        const Plan &p = plans.back();
        converted += p.convert;
        std::vector<uint64_t> dims(t.dims, t.dims + t.n_dims);
        writer.add_tensor(t.name, p.type, dims, p.convert ? nullptr : in.tensor_data(t));
        if (!quiet) {
            std::string line =
                vkllm::sformat("  %-40s %-20s %-6s -> %s", t.name.c_str(), shape(t).c_str(),
                               t.type->name, vkllm::format::ggml_type(p.type)->name);
            if (!p.note.empty()) line += " (" + p.note + ")";
            std::puts(line.c_str());
        }
    }
    std::vector<uint8_t> buffer;
    writer.write(out_path, [&](size_t i) -> const void * {
        convert(in, plans[i], buffer);
        return buffer.data();
    });
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    uint64_t in_bytes = in.file_size(), out_bytes = file_size(out_path);
    std::printf(
        "quantized %zu of %zu tensors to %s: %llu bytes (%.2f MiB) -> %llu bytes (%.2f MiB) in "
        "%.3f s\n",
        converted, plans.size(), target.name, (unsigned long long)in_bytes,
        double(in_bytes) / (1 << 20), (unsigned long long)out_bytes, double(out_bytes) / (1 << 20),
        seconds);
    return 0;
}

}  // namespace

int cmd_quantize(int argc, char **argv) {
    bool quiet = false, allow_requantize = false;
    std::vector<std::string> args;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        if (a == "--quiet" || a == "-q") {
            quiet = true;
        } else if (a == "--allow-requantize") {
            allow_requantize = true;
        } else if (a == "-h" || a == "--help") {
            usage(stdout);
            return 0;
        } else if (a.size() > 1 && a[0] == '-') {
            std::fprintf(stderr, "vkllm: quantize: unknown option %s\n", a.c_str());
            usage(stderr);
            return 2;
        } else {
            args.push_back(a);
        }
    }
    if (args.size() != 3) {
        usage(stderr);
        return 2;
    }
    const Target *target = vkllm_tool::find_target(args[2]);
    if (!target) {
        std::fprintf(stderr, "vkllm: quantize: unknown type %s\n", args[2].c_str());
        usage(stderr);
        return 2;
    }
    try {
        return quantize(args[0], args[1], *target, quiet, allow_requantize);
    } catch (const vkllm::Error &e) {
        std::fprintf(stderr, "vkllm: quantize: %s: %s\n", vkllm_status_string(e.status()),
                     e.what());
    } catch (const std::bad_alloc &) {
        std::fprintf(stderr, "vkllm: quantize: out of memory\n");
    }
    return 1;
}
