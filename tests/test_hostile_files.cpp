// A generated corpus of broken model files, each loaded as a whole model: truncated at every
// section boundary, counts and lengths near 2^64, offsets past the end, misaligned data,
// overflowing shapes, duplicate and missing tensors, shapes that disagree with the metadata,
// known keys of the wrong type. Each must be VKLLM_ERR_FORMAT or VKLLM_ERR_UNSUPPORTED with a
// message, leave no device memory behind, and leave the runtime able to load the intact file.
// (The sanitizer pass of scripts/test runs this too: nothing may leak.)
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <functional>

#include "engine_fixture.h"
#include "reference/tiny_model.h"

namespace {

std::vector<uint8_t> read_file(const std::string &path) {
    std::ifstream in(path, std::ios::binary);
    return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

void write_file(const std::string &path, const std::vector<uint8_t> &bytes) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char *>(bytes.data()), std::streamsize(bytes.size()));
}

// Where the parts of a GGUF file start: enough of a reader to aim the mutations. It trusts
// the file, which is the intact one written by write_tiny_model.
struct Layout {
    struct Kv {
        std::string key;
        size_t start, type_at, value_at, end;
        uint32_t type;
    };
    struct Tensor {
        std::string name;
        size_t start, n_dims_at, dims_at, type_at, offset_at, end;
        uint32_t n_dims;
        uint64_t offset;
    };
    std::vector<Kv> kvs;
    std::vector<Tensor> tensors;
    size_t data_start = 0;

    explicit Layout(const std::vector<uint8_t> &f) {
        size_t at = 8;
        uint64_t n_tensors = u64(f, at), n_kv = u64(f, at + 8);
        at += 16;
        for (uint64_t i = 0; i < n_kv; ++i) {
            Kv kv;
            kv.start = at;
            kv.key = str(f, at);
            kv.type_at = at;
            kv.type = u32(f, at);
            at += 4;
            kv.value_at = at;
            skip_value(f, at, kv.type);
            kv.end = at;
            kvs.push_back(kv);
        }
        for (uint64_t i = 0; i < n_tensors; ++i) {
            Tensor t;
            t.start = at;
            t.name = str(f, at);
            t.n_dims_at = at;
            t.n_dims = u32(f, at);
            at += 4;
            t.dims_at = at;
            at += 8 * t.n_dims;
            t.type_at = at;
            at += 4;
            t.offset_at = at;
            t.offset = u64(f, at);
            at += 8;
            t.end = at;
            tensors.push_back(t);
        }
        data_start = (at + 31) / 32 * 32;
    }

    const Kv &kv(const std::string &key) const {
        for (const Kv &k : kvs)
            if (k.key == key) return k;
        throw std::runtime_error("no key " + key);
    }
    const Tensor &tensor(const std::string &name) const {
        for (const Tensor &t : tensors)
            if (t.name == name) return t;
        throw std::runtime_error("no tensor " + name);
    }

    static uint32_t u32(const std::vector<uint8_t> &f, size_t at) {
        uint32_t v;
        std::memcpy(&v, f.data() + at, 4);
        return v;
    }
    static uint64_t u64(const std::vector<uint8_t> &f, size_t at) {
        uint64_t v;
        std::memcpy(&v, f.data() + at, 8);
        return v;
    }
    static std::string str(const std::vector<uint8_t> &f, size_t &at) {
        uint64_t n = u64(f, at);
        std::string s(reinterpret_cast<const char *>(f.data() + at + 8), n);
        at += 8 + n;
        return s;
    }
    static void skip_value(const std::vector<uint8_t> &f, size_t &at, uint32_t type) {
        static const size_t sizes[] = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};
        if (type == 8) {
            str(f, at);
        } else if (type == 9) {
            uint32_t element = u32(f, at);
            uint64_t n = u64(f, at + 4);
            at += 12;
            for (uint64_t i = 0; i < n; ++i)
                skip_value(f, at, element);
        } else {
            at += sizes[type];
        }
    }
};

void put32(std::vector<uint8_t> &f, size_t at, uint32_t v) {
    std::memcpy(f.data() + at, &v, 4);
}
void put64(std::vector<uint8_t> &f, size_t at, uint64_t v) {
    std::memcpy(f.data() + at, &v, 8);
}

struct Case {
    std::string name;
    std::vector<uint8_t> bytes;
};

// The corpus, from the intact file `f`.
std::vector<Case> hostile_corpus(const std::vector<uint8_t> &f) {
    Layout L(f);
    std::vector<Case> out;
    auto add = [&](const std::string &name, const std::function<void(std::vector<uint8_t> &)> &m) {
        std::vector<uint8_t> b = f;
        m(b);
        out.push_back({name, std::move(b)});
    };
    auto truncate_at = [&](const std::string &what, size_t at) {
        add("truncated at " + what + " (byte " + std::to_string(at) + ")",
            [at](std::vector<uint8_t> &b) { b.resize(at); });
    };

    // Truncated at every section boundary, and inside the sections.
    for (size_t at : {size_t(0), size_t(3), size_t(4), size_t(8), size_t(16), size_t(24)})
        truncate_at("the header", at);
    for (const Layout::Kv &kv : L.kvs) {
        truncate_at("key " + kv.key, kv.start);
        truncate_at("the type of " + kv.key, kv.type_at);
        truncate_at("the value of " + kv.key, kv.value_at);
        if (kv.end - kv.value_at > 1) truncate_at("inside " + kv.key, kv.end - 1);
    }
    for (const Layout::Tensor &t : L.tensors) {
        truncate_at("tensor info " + t.name, t.start);
        truncate_at("the dims of " + t.name, t.dims_at);
        truncate_at("the offset of " + t.name, t.offset_at);
    }
    truncate_at("the padding before the data", L.tensors.back().end);
    truncate_at("the data", L.data_start);
    for (const Layout::Tensor &t : L.tensors)
        truncate_at("inside the data of " + t.name, L.data_start + t.offset + 1);
    truncate_at("the last byte", f.size() - 1);

    // Counts and lengths near 2^64 (and merely too large).
    const uint64_t huge[] = {UINT64_MAX, UINT64_MAX - 7, uint64_t(1) << 63, uint64_t(1) << 32};
    for (uint64_t n : huge) {
        std::string v = std::to_string(n);
        add("tensor count " + v, [n](std::vector<uint8_t> &b) { put64(b, 8, n); });
        add("key count " + v, [n](std::vector<uint8_t> &b) { put64(b, 16, n); });
        add("key length " + v, [&, n](std::vector<uint8_t> &b) { put64(b, L.kvs[3].start, n); });
        add("string length " + v, [&, n](std::vector<uint8_t> &b) {
            put64(b, L.kv("general.architecture").value_at, n);
        });
        add("token array count " + v, [&, n](std::vector<uint8_t> &b) {
            put64(b, L.kv("tokenizer.ggml.tokens").value_at + 4, n);
        });
        add("tensor name length " + v,
            [&, n](std::vector<uint8_t> &b) { put64(b, L.tensors[1].start, n); });
        add("tensor offset " + v,
            [&, n](std::vector<uint8_t> &b) { put64(b, L.tensors[1].offset_at, n); });
    }
    add("n_dims 5", [&](std::vector<uint8_t> &b) { put32(b, L.tensors[0].n_dims_at, 5); });
    add("n_dims 2^32-1",
        [&](std::vector<uint8_t> &b) { put32(b, L.tensors[0].n_dims_at, UINT32_MAX); });

    // Offsets past the end, misaligned data, data overlapping another tensor's.
    const Layout::Tensor &last = L.tensors.back();
    add("offset past the end",
        [&](std::vector<uint8_t> &b) { put64(b, last.offset_at, b.size() - L.data_start); });
    add("data running past the end",
        [&](std::vector<uint8_t> &b) { put64(b, last.offset_at, last.offset + 32); });
    add("misaligned offset", [&](std::vector<uint8_t> &b) {
        put64(b, L.tensors[1].offset_at, L.tensors[1].offset + 4);
    });
    add("alignment key of 0 is not a power of two", [&](std::vector<uint8_t> &b) {
        // general.name is a string key: its value is replaced by an alignment that cannot be.
        const Layout::Kv &kv = L.kv("general.name");
        std::string entry(8, '\0');
        entry[0] = 17;
        entry += "general.alignment";
        entry += std::string("\x04\0\0\0\0\0\0\0", 8);  // u32 type, value 0
        b.erase(b.begin() + long(kv.start), b.begin() + long(kv.end));
        b.insert(b.begin() + long(kv.start), entry.begin(), entry.end());
    });

    // Overflowing and impossible shapes.
    const Layout::Tensor &embd = L.tensor("token_embd.weight");
    add("dims whose product overflows", [&](std::vector<uint8_t> &b) {
        put64(b, embd.dims_at, uint64_t(1) << 40);
        put64(b, embd.dims_at + 8, uint64_t(1) << 40);
    });
    add("a zero dim", [&](std::vector<uint8_t> &b) { put64(b, embd.dims_at, 0); });
    add("a dim of 2^63", [&](std::vector<uint8_t> &b) { put64(b, embd.dims_at + 8, 1ull << 63); });
    add("an unknown tensor type", [&](std::vector<uint8_t> &b) { put32(b, embd.type_at, 1000); });
    add("a removed tensor type (Q4_2)",
        [&](std::vector<uint8_t> &b) { put32(b, embd.type_at, 4); });

    // Duplicate and missing tensors (renames of equal length).
    const Layout::Tensor &q = L.tensor("blk.0.attn_q.weight");
    add("duplicate tensor name", [&](std::vector<uint8_t> &b) {
        std::memcpy(b.data() + q.start + 8, "blk.0.attn_k.weight", 19);
    });
    add("a required tensor missing", [&](std::vector<uint8_t> &b) {
        std::memcpy(b.data() + q.start + 8, "blk.0.attn_x.weight", 19);
    });
    add("a layer's tensors missing (block_count 3)",
        [&](std::vector<uint8_t> &b) { put32(b, L.kv("llama.block_count").value_at, 3); });
    add("no tensors at all", [&](std::vector<uint8_t> &b) { put64(b, 8, 0); });

    // Shapes that disagree with the metadata.
    add("matrix dims swapped", [&](std::vector<uint8_t> &b) {
        uint64_t d0 = Layout::u64(b, embd.dims_at), d1 = Layout::u64(b, embd.dims_at + 8);
        put64(b, embd.dims_at, d1);
        put64(b, embd.dims_at + 8, d0);
    });
    add("embedding_length 16 for 32-wide tensors",
        [&](std::vector<uint8_t> &b) { put32(b, L.kv("llama.embedding_length").value_at, 16); });
    add("feed_forward_length 47",
        [&](std::vector<uint8_t> &b) { put32(b, L.kv("llama.feed_forward_length").value_at, 47); });
    add("head_count 3 (not a multiple of head_count_kv)",
        [&](std::vector<uint8_t> &b) { put32(b, L.kv("llama.attention.head_count").value_at, 3); });
    add("head_count 0",
        [&](std::vector<uint8_t> &b) { put32(b, L.kv("llama.attention.head_count").value_at, 0); });
    add("block_count 0",
        [&](std::vector<uint8_t> &b) { put32(b, L.kv("llama.block_count").value_at, 0); });
    add("block_count 2^32-1",
        [&](std::vector<uint8_t> &b) { put32(b, L.kv("llama.block_count").value_at, UINT32_MAX); });
    add("key_length 2^31", [&](std::vector<uint8_t> &b) {
        put32(b, L.kv("llama.attention.key_length").value_at, 1u << 31);
    });
    add("more tokens than embedding rows", [&](std::vector<uint8_t> &b) {
        put64(b, embd.dims_at + 8, Layout::u64(b, embd.dims_at + 8) / 2);
    });
    add("bos token id past the vocabulary", [&](std::vector<uint8_t> &b) {
        put32(b, L.kv("tokenizer.ggml.bos_token_id").value_at, 1000);
    });

    // Known keys of the wrong type (same-size types, so the rest of the file still parses),
    // and type ids that do not exist.
    add("block_count as f32",
        [&](std::vector<uint8_t> &b) { put32(b, L.kv("llama.block_count").type_at, 6); });
    add("embedding_length as bool", [&](std::vector<uint8_t> &b) {
        put32(b, L.kv("llama.embedding_length").type_at, 7);
        put32(b, L.kv("llama.embedding_length").value_at, 1);  // the value's first byte
    });
    add("architecture as u64",
        [&](std::vector<uint8_t> &b) { put32(b, L.kv("general.architecture").type_at, 10); });
    add("tokens as an array of u32",
        [&](std::vector<uint8_t> &b) { put32(b, L.kv("tokenizer.ggml.tokens").value_at, 4); });
    add("scores as an array of strings",
        [&](std::vector<uint8_t> &b) { put32(b, L.kv("tokenizer.ggml.scores").value_at, 8); });
    add("tokenizer model as an array",
        [&](std::vector<uint8_t> &b) { put32(b, L.kv("tokenizer.ggml.model").type_at, 9); });
    add("value type 13", [&](std::vector<uint8_t> &b) { put32(b, L.kvs[2].type_at, 13); });
    add("value type 2^32-1",
        [&](std::vector<uint8_t> &b) { put32(b, L.kvs[2].type_at, UINT32_MAX); });
    add("array of arrays",
        [&](std::vector<uint8_t> &b) { put32(b, L.kv("tokenizer.ggml.token_type").value_at, 9); });
    add("unknown architecture", [&](std::vector<uint8_t> &b) {
        size_t at = L.kv("general.architecture").value_at + 8;
        std::memcpy(b.data() + at, "xyzzy", 5);
    });
    add("bad magic", [](std::vector<uint8_t> &b) { std::memcpy(b.data(), "GGUG", 4); });
    add("version 1", [](std::vector<uint8_t> &b) { put32(b, 4, 1); });
    add("version 4", [](std::vector<uint8_t> &b) { put32(b, 4, 4); });
    add("NaN rms epsilon", [&](std::vector<uint8_t> &b) {
        put32(b, L.kv("llama.attention.layer_norm_rms_epsilon").value_at, 0x7fc00000u);
    });
    return out;
}

}  // namespace

class HostileFiles : public EngineTest {};

TEST_F(HostileFiles, EveryBrokenModelIsAFormatOrUnsupportedErrorAndChangesNothing) {
    TinyModelSpec spec;
    std::string intact = temp_path("hostile_intact"), path = temp_path("hostile");
    write_tiny_model(intact, spec);
    std::vector<Case> corpus = hostile_corpus(read_file(intact));
    vkllm_runtime_stats before;
    before.struct_size = sizeof before;
    ASSERT_EQ(vkllm_runtime_get_stats(rt_, &before), VKLLM_OK);
    size_t format = 0, unsupported = 0;
    for (const Case &c : corpus) {
        write_file(path, c.bytes);
        vkllm_model *m = reinterpret_cast<vkllm_model *>(0x1);
        vkllm_status st = vkllm_model_load(rt_, path.c_str(), nullptr, &m);
        EXPECT_TRUE(st == VKLLM_ERR_FORMAT || st == VKLLM_ERR_UNSUPPORTED)
            << c.name << ": " << vkllm_status_string(st) << ": " << vkllm_last_error();
        EXPECT_GT(std::strlen(vkllm_last_error()), 10u) << c.name;
        EXPECT_EQ(m, reinterpret_cast<vkllm_model *>(0x1)) << c.name;
        if (st == VKLLM_OK) vkllm_model_destroy(m);
        (st == VKLLM_ERR_FORMAT ? format : unsupported) += 1;
        // The file alone, without a device: the reader refuses it or the model load did.
        vkllm_gguf *g = nullptr;
        if (vkllm_gguf_open(path.c_str(), &g) == VKLLM_OK) vkllm_gguf_destroy(g);
        vkllm_runtime_stats after;
        after.struct_size = sizeof after;
        ASSERT_EQ(vkllm_runtime_get_stats(rt_, &after), VKLLM_OK);
        EXPECT_EQ(after.device_memory_allocated, before.device_memory_allocated) << c.name;
    }
    std::printf("%zu broken files: %zu format errors, %zu unsupported\n", corpus.size(), format,
                unsupported);
    EXPECT_GE(corpus.size(), 100u);
    // The runtime still loads and runs the intact file.
    vkllm_model *m = load(intact);
    ASSERT_NE(m, nullptr);
    vkllm_session *s = session(m, 32);
    std::vector<float> logits(spec.n_vocab);
    std::vector<int32_t> prompt = token_ids(4, spec.n_vocab, 1);
    EXPECT_EQ(vkllm_session_eval(s, 0, prompt.data(), prompt.size(), logits.data()), VKLLM_OK);
    EXPECT_GT(max_abs(logits), 0.0);
}
