// vkllm quantize: rewrites a GGUF model with its weight matrices in another ggml type, the
// way llama.cpp's llama-quantize does (same type names, file types and Q4_K_M/Q5_K_M
// mixtures, in simplified form). Unlike the rest of the tool it works on the file format
// directly (src/format), not through the C API: it is a file transform, not an ABI user.
#include <strings.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <exception>
#include <new>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "cli.h"
#include "common/error.h"
#include "format/gguf.h"
#include "format/gguf_writer.h"
#include "format/quant.h"

namespace {

using vkllm::format::GgufFile;
using vkllm::format::TensorInfo;

enum : uint32_t {
    kF32 = 0,
    kF16 = 1,
    kQ4_0 = 2,
    kQ4_1 = 3,
    kQ5_0 = 6,
    kQ5_1 = 7,
    kQ8_0 = 8,
    kQ4_K = 12,
    kQ5_K = 13,
    kQ6_K = 14,
    kBF16 = 30,
};

struct Target {
    const char *name;
    uint32_t type;   // the type of most matrices
    uint32_t ftype;  // llama.cpp's LLAMA_FTYPE_MOSTLY_*, stored as general.file_type
    bool mixture;    // the _M rules: more bits where llama.cpp found them to matter
};

const Target kTargets[] = {
    {"F16", kF16, 1, false},    {"BF16", kBF16, 32, false},  {"Q8_0", kQ8_0, 7, false},
    {"Q4_0", kQ4_0, 2, false},  {"Q4_1", kQ4_1, 3, false},   {"Q5_0", kQ5_0, 8, false},
    {"Q5_1", kQ5_1, 9, false},  {"Q4_K", kQ4_K, 14, false},  {"Q5_K", kQ5_K, 16, false},
    {"Q6_K", kQ6_K, 18, false}, {"Q4_K_M", kQ4_K, 15, true}, {"Q5_K_M", kQ5_K, 17, true},
};

void usage(FILE *out) {
    std::fputs(
        "usage: vkllm quantize [--quiet] IN.gguf OUT.gguf TYPE\n"
        "TYPE: F16 BF16 Q8_0 Q4_0 Q4_1 Q5_0 Q5_1 Q4_K Q5_K Q6_K Q4_K_M Q5_K_M\n",
        out);
}

bool ends_with(const std::string &s, const char *suffix) {
    size_t n = std::strlen(suffix);
    return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
}

// The layer of a "blk.N.*" tensor, or -1.
int layer_of(const std::string &name) {
    int layer = -1, consumed = 0;
    if (std::sscanf(name.c_str(), "blk.%d.%n", &layer, &consumed) == 1 && consumed > 0)
        return layer;
    return -1;
}

// llama.cpp's use_more_bits: the first and last eighth of the layers and every third one
// between them.
bool use_more_bits(int layer, int n_layers) {
    return layer < n_layers / 8 || layer >= 7 * n_layers / 8 || (layer - n_layers / 8) % 3 == 2;
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
            n_layers_ = std::max(n_layers_, layer_of(t.name) + 1);
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
        uint32_t want = target_.type;
        if (target_.mixture) {
            int layer = layer_of(t.name);
            if (t.name == "output.weight" || (!has_output_ && t.name == "token_embd.weight"))
                want = kQ6_K;
            else if (layer >= 0 &&
                     (ends_with(t.name, ".attn_v.weight") ||
                      ends_with(t.name, ".ffn_down.weight")) &&
                     use_more_bits(layer, n_layers_))
                want = kQ6_K;
        }
        // Rows must be whole blocks. K-quants fall back as llama.cpp's do, to the 32-block type
        // of about the same size (Q4_K -> Q5_0, Q5_K -> Q5_1, Q6_K -> Q8_0: Qwen2.5-0.5B's
        // 896-wide rows take this path), then anything to F16.
        uint32_t type = want;
        uint32_t first = want == kQ4_K ? kQ5_0 : want == kQ5_K ? kQ5_1 : kQ8_0;
        for (uint32_t fallback : {first, uint32_t(kF16)}) {
            if (t.dims[0] % vkllm::format::ggml_type(type)->block_elements == 0) break;
            type = fallback;
        }
        if (type != want)
            p.note =
                vkllm::sformat("row of %llu is not whole %s blocks", (unsigned long long)t.dims[0],
                               vkllm::format::ggml_type(want)->name);
        p.type = type;
        p.convert = type != t.type->id;
        return p;
    }

  private:
    const Target &target_;
    bool has_output_ = false;
    int n_layers_ = 0;
};

// Converts the rows of one tensor, split between at most two threads (the rows are
// independent; more threads would not pay on the small machines this runs on).
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
    unsigned threads = std::min(2u, std::max(1u, std::thread::hardware_concurrency()));
    if (threads < 2 || rows < 2 || rows * cols < 65536) {
        work(0, rows);
        return;
    }
    std::exception_ptr error;
    std::thread helper([&]() {
        try {
            work(rows / 2, rows);
        } catch (...) {
            error = std::current_exception();
        }
    });
    try {
        work(0, rows / 2);
    } catch (...) {
        helper.join();
        throw;
    }
    helper.join();
    if (error) std::rethrow_exception(error);
}

std::string shape(const TensorInfo &t) {
    std::string s;
    for (uint32_t d = 0; d < t.n_dims; ++d)
        s += (d ? " x " : "") + std::to_string(t.dims[d]);
    return s;
}

uint64_t file_size(const std::string &path) {
    struct stat st;
    return ::stat(path.c_str(), &st) == 0 ? uint64_t(st.st_size) : 0;
}

int quantize(const std::string &in_path, const std::string &out_path, const Target &target,
             bool quiet) {
    auto start = std::chrono::steady_clock::now();
    GgufFile in(in_path);
    Planner planner(in, target);
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
    bool quiet = false;
    std::vector<std::string> args;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        if (a == "--quiet" || a == "-q") {
            quiet = true;
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
    const Target *target = nullptr;
    for (const Target &t : kTargets)
        if (strcasecmp(args[2].c_str(), t.name) == 0) target = &t;
    if (!target) {
        std::fprintf(stderr, "vkllm: quantize: unknown type %s\n", args[2].c_str());
        usage(stderr);
        return 2;
    }
    try {
        return quantize(args[0], args[1], *target, quiet);
    } catch (const vkllm::Error &e) {
        std::fprintf(stderr, "vkllm: quantize: %s: %s\n", vkllm_status_string(e.status()),
                     e.what());
    } catch (const std::bad_alloc &) {
        std::fprintf(stderr, "vkllm: quantize: out of memory\n");
    }
    return 1;
}
