#include "reference/tiny_model.h"

#include "reference/cpu_ops.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>
#include <stdexcept>
#include <vector>

#include "common/half.h"
#include "format/ggml_types.h"
#include "format/quant.h"
#include "gguf_builder.h"

uint16_t float_to_bf16(float f) {
    uint32_t x;
    std::memcpy(&x, &f, 4);
    // Rounding could carry a NaN's payload into the exponent and make it infinite.
    if ((x & 0x7fffffffu) > 0x7f800000u) return uint16_t((x >> 16) | 0x40u);
    uint32_t round = 0x7fffu + ((x >> 16) & 1u);
    return uint16_t((x + round) >> 16);
}

namespace {

// std::mt19937's output sequence is fixed by the standard, but the distributions built on it
// are not, so values are derived from its raw output to be the same with every library.
class Random {
  public:
    explicit Random(uint32_t seed) : gen_(seed) {}
    // Uniform in [-1, 1).
    float symmetric() { return float(gen_() >> 8) * (2.0f / 16777216.0f) - 1.0f; }

  private:
    std::mt19937 gen_;
};

std::vector<uint8_t> encode(const std::vector<float> &v, uint32_t type) {
    if (type == 8) return ref::to_q8_0(v, nullptr);
    if (type != 0 && type != 1 && type != 30) {  // the library's quantizers (format/quant.h)
        const vkllm::format::GgmlType *t = vkllm::format::ggml_type(type);
        std::vector<uint8_t> bytes(v.size() / t->block_elements * t->block_bytes);
        vkllm::format::quantize_row(type, v.data(), bytes.data(), v.size());
        return bytes;
    }
    std::vector<uint8_t> bytes(v.size() * (type == 0 ? 4 : 2));
    for (size_t i = 0; i < v.size(); ++i) {
        if (type == 0) {
            std::memcpy(&bytes[4 * i], &v[i], 4);
        } else {
            uint16_t h = type == 1 ? vkllm::float_to_half(v[i]) : float_to_bf16(v[i]);
            std::memcpy(&bytes[2 * i], &h, 2);
        }
    }
    return bytes;
}

class TensorWriter {
  public:
    TensorWriter(GgufBuilder &b, const TinyModelSpec &spec) : b_(b), spec_(spec), rng_(spec.seed) {}

    // A [cols, rows] matrix with the spread of N(0, 1/cols) (uniform, so no outliers), which
    // keeps activations near unit scale through every projection. Rows from `loud_from` on
    // are `loud_gain` times larger.
    void matrix(const std::string &name, uint32_t cols, uint32_t rows,
                uint32_t loud_from = UINT32_MAX, float loud_gain = 1.0f) {
        float a = std::sqrt(3.0f / float(cols));
        std::vector<float> v(size_t(cols) * rows);
        for (size_t i = 0; i < v.size(); ++i)
            v[i] = a * rng_.symmetric() * (i / cols >= loud_from ? loud_gain : 1.0f);
        b_.tensor(name, spec_.weight_type, {cols, rows}, encode(v, spec_.weight_type));
    }
    // n [cols, rows] matrices stacked as a [cols, rows, n] tensor (a layer's experts).
    void experts(const std::string &name, uint32_t cols, uint32_t rows, uint32_t n) {
        float a = std::sqrt(3.0f / float(cols));
        std::vector<float> v(size_t(cols) * rows * n);
        for (float &x : v)
            x = a * rng_.symmetric();
        b_.tensor(name, spec_.weight_type, {cols, rows, n}, encode(v, spec_.weight_type));
    }
    // A router's [cols, rows] matrix, F32 whatever the weight type.
    void router(const std::string &name, uint32_t cols, uint32_t rows) {
        float a = std::sqrt(3.0f / float(cols));
        std::vector<float> v(size_t(cols) * rows);
        for (float &x : v)
            x = a * rng_.symmetric();
        b_.tensor(name, 0, {cols, rows}, encode(v, 0));
    }
    // RMSNorm gains near 1, as trained models have.
    void norm(const std::string &name, uint32_t n) { filled(name, n, 1.0f, 0.2f); }
    void bias(const std::string &name, uint32_t n) { filled(name, n, 0.0f, 0.05f); }

  private:
    void filled(const std::string &name, uint32_t n, float centre, float spread) {
        std::vector<float> v(n);
        for (float &x : v)
            x = centre + spread * rng_.symmetric();
        b_.tensor(name, 0, {n}, encode(v, 0));
    }

    GgufBuilder &b_;
    const TinyModelSpec &spec_;
    Random rng_;
};

void save(const GgufBuilder &b, const std::string &path) {
    std::vector<uint8_t> bytes = b.finish();
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char *>(bytes.data()), std::streamsize(bytes.size()));
    if (!out) throw std::runtime_error("write_tiny_model: cannot write " + path);
}

// The keys and tensors convert_hf_to_gguf.py's BertModel writes and llama.cpp's LLM_ARCH_BERT
// reads (no head_count_kv: BERT's heads are all key/value heads).
void write_tiny_bert(const std::string &path, const TinyModelSpec &spec) {
    const uint32_t d = spec.n_embd;
    if (spec.n_vocab < 57 || (spec.n_tokens && spec.n_tokens != spec.n_vocab) || spec.n_head == 0 ||
        spec.n_head_kv != spec.n_head || d % spec.n_head != 0 ||
        (spec.head_dim && spec.head_dim != d / spec.n_head) || spec.pooling_type > 4 ||
        spec.tied_output || spec.rope_freqs || spec.n_expert || spec.byte_tokens)
        throw std::runtime_error("write_tiny_model: inconsistent bert shape or options");
    GgufBuilder b;
    b.kv_string("general.architecture", "bert");
    b.kv_string("general.name", "tiny-bert-seed" + std::to_string(spec.seed));
    b.kv_u32("bert.context_length", spec.n_ctx);
    b.kv_u32("bert.embedding_length", d);
    b.kv_u32("bert.feed_forward_length", spec.n_ff);
    b.kv_u32("bert.block_count", spec.n_layer);
    b.kv_u32("bert.attention.head_count", spec.n_head);
    b.kv_f32("bert.attention.layer_norm_epsilon", spec.layer_norm_eps);
    b.kv_bool("bert.attention.causal", false);
    b.kv_u32("bert.pooling_type", spec.pooling_type);

    // BertModel.set_vocab: control tokens keep their text, the others get the phantom space.
    std::vector<std::string> tokens = tiny_wordpiece_vocab(spec.n_vocab);
    std::vector<int32_t> types(tokens.size(), 1);  // NORMAL
    for (int32_t i = kBertPad; i <= kBertMask; ++i)
        types[size_t(i)] = 3;  // CONTROL
    b.kv_string("tokenizer.ggml.model", "bert");
    b.kv_u32("tokenizer.ggml.token_type_count", 2);
    b.kv_strings("tokenizer.ggml.tokens", tokens);
    b.kv_i32s("tokenizer.ggml.token_type", types);
    // gguf-py's SpecialVocab writes [CLS] as bos too (llama.cpp's WPM vocabulary prepends bos and
    // ignores cls_token_id).
    b.kv_u32("tokenizer.ggml.bos_token_id", kBertCls);
    b.kv_u32("tokenizer.ggml.unknown_token_id", kBertUnk);
    b.kv_u32("tokenizer.ggml.seperator_token_id", kBertSep);  // llama.cpp's spelling
    b.kv_u32("tokenizer.ggml.padding_token_id", kBertPad);
    b.kv_u32("tokenizer.ggml.cls_token_id", kBertCls);
    b.kv_u32("tokenizer.ggml.mask_token_id", kBertMask);

    TensorWriter w(b, spec);
    w.matrix("token_embd.weight", d, spec.n_vocab);
    w.matrix("token_types.weight", d, 2);
    w.matrix("position_embd.weight", d, spec.n_ctx);
    w.norm("token_embd_norm.weight", d);
    w.bias("token_embd_norm.bias", d);
    for (uint32_t i = 0; i < spec.n_layer; ++i) {
        const std::string p = "blk." + std::to_string(i) + ".";
        for (const char *m : {"attn_q", "attn_k", "attn_v", "attn_output"}) {
            w.matrix(p + m + ".weight", d, d);
            w.bias(p + m + ".bias", d);
        }
        w.norm(p + "attn_output_norm.weight", d);
        w.bias(p + "attn_output_norm.bias", d);
        w.matrix(p + "ffn_up.weight", d, spec.n_ff);
        w.bias(p + "ffn_up.bias", spec.n_ff);
        w.matrix(p + "ffn_down.weight", spec.n_ff, d);
        w.bias(p + "ffn_down.bias", d);
        w.norm(p + "layer_output_norm.weight", d);
        w.bias(p + "layer_output_norm.bias", d);
    }
    save(b, path);
}

}  // namespace

std::vector<std::string> tiny_wordpiece_vocab(uint32_t n) {
    if (n < 57) throw std::runtime_error("tiny_wordpiece_vocab: fewer than 57 tokens");
    std::vector<std::string> v = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"};
    const std::string phantom = "\xe2\x96\x81";  // U+2581
    for (char c = 'a'; c <= 'z'; ++c)
        v.push_back(phantom + c);
    for (char c = 'a'; c <= 'z'; ++c)
        v.push_back(std::string(1, c));
    while (v.size() < n)
        v.push_back(phantom + "w" + std::to_string(v.size()));
    return v;
}

void write_tiny_model(const std::string &path, const TinyModelSpec &spec) {
    const std::string &arch = spec.arch;
    if (arch == "bert") {
        if (!vkllm::format::can_quantize(spec.weight_type))
            throw std::runtime_error("write_tiny_model: weight type " +
                                     std::to_string(spec.weight_type) + " cannot be written");
        write_tiny_bert(path, spec);
        return;
    }
    const bool moe = arch == "qwen3moe";
    if (arch != "llama" && arch != "qwen2" && arch != "qwen3" && arch != "gemma2" &&
        arch != "gemma3" && arch != "olmo2" && arch != "phi3" && arch != "smollm3" &&
        arch != "granite" && !moe)
        throw std::runtime_error("write_tiny_model: architecture \"" + arch + "\"");
    if (!vkllm::format::can_quantize(spec.weight_type))
        throw std::runtime_error("write_tiny_model: weight type " +
                                 std::to_string(spec.weight_type) + " cannot be written");
    uint32_t head_dim = spec.head_dim ? spec.head_dim : spec.n_embd / spec.n_head;
    uint32_t n_tokens = spec.n_tokens ? spec.n_tokens : spec.n_vocab;
    if (spec.n_vocab < 3 || n_tokens < 3 || n_tokens > spec.n_vocab || spec.n_head == 0 ||
        spec.n_head_kv == 0 || spec.n_head % spec.n_head_kv != 0 || head_dim == 0 ||
        head_dim % 2 != 0 || (spec.byte_tokens && n_tokens < 3 + 256))
        throw std::runtime_error("write_tiny_model: inconsistent shape");
    const bool phi3 = arch == "phi3";
    uint32_t rot_dim = spec.rot_dim ? spec.rot_dim : head_dim;
    if (rot_dim > head_dim || rot_dim % 2 || (phi3 && head_dim * spec.n_head != spec.n_embd) ||
        (spec.rope_orig_ctx && (!phi3 || spec.rope_orig_ctx >= spec.n_ctx)))
        throw std::runtime_error("write_tiny_model: inconsistent phi3 options");
    if (moe && (spec.n_expert == 0 || spec.n_expert_used == 0 ||
                spec.n_expert_used > spec.n_expert || spec.n_ff_exp == 0))
        throw std::runtime_error("write_tiny_model: inconsistent experts");

    GgufBuilder b;
    b.kv_string("general.architecture", arch);
    // llama.cpp gives the special tokens of a model whose name contains "phi3" or "phi-3"
    // Phi-3's stripping rules, looking up "</s>", "<unk>", "<s>" and "<|endoftext|>" by text,
    // which this vocabulary lacks: the tiny phi3 is named "phi" to stay clear of that.
    b.kv_string("general.name",
                "tiny-" + (phi3 ? std::string("phi") : arch) + "-seed" + std::to_string(spec.seed));
    b.kv_u32(arch + ".context_length", spec.n_ctx);
    b.kv_u32(arch + ".embedding_length", spec.n_embd);
    b.kv_u32(arch + ".block_count", spec.n_layer);
    b.kv_u32(arch + ".feed_forward_length", spec.n_ff);
    b.kv_u32(arch + ".attention.head_count", spec.n_head);
    b.kv_u32(arch + ".attention.head_count_kv", spec.n_head_kv);
    if (!phi3) {  // Phi3MiniModel writes no head sizes: n_embd / n_head
        b.kv_u32(arch + ".attention.key_length", head_dim);
        b.kv_u32(arch + ".attention.value_length", head_dim);
    }
    b.kv_u32(arch + ".rope.dimension_count", rot_dim);
    b.kv_f32(arch + ".rope.freq_base", spec.rope_base);
    b.kv_f32(arch + ".attention.layer_norm_rms_epsilon", spec.rms_eps);
    if (spec.sliding_window) b.kv_u32(arch + ".attention.sliding_window", spec.sliding_window);
    if (spec.rope_orig_ctx) {
        b.kv_u32(arch + ".rope.scaling.original_context_length", spec.rope_orig_ctx);
        double scale = double(spec.n_ctx) / spec.rope_orig_ctx;
        b.kv_f32(arch + ".rope.scaling.attn_factor",
                 float(std::sqrt(1 + std::log(scale) / std::log(double(spec.rope_orig_ctx)))));
    }
    if (spec.attn_softcap != 0) b.kv_f32(arch + ".attn_logit_softcapping", spec.attn_softcap);
    if (spec.final_softcap != 0) b.kv_f32(arch + ".final_logit_softcapping", spec.final_softcap);
    if (spec.rope_linear_factor > 0) {
        b.kv_string(arch + ".rope.scaling.type", "linear");
        b.kv_f32(arch + ".rope.scaling.factor", spec.rope_linear_factor);
    }
    if (spec.embedding_scale != 0) b.kv_f32(arch + ".embedding_scale", spec.embedding_scale);
    if (spec.residual_scale != 0) b.kv_f32(arch + ".residual_scale", spec.residual_scale);
    if (spec.attention_scale != 0) b.kv_f32(arch + ".attention.scale", spec.attention_scale);
    if (spec.logit_scale != 0) b.kv_f32(arch + ".logit_scale", spec.logit_scale);
    if (moe) {  // the keys of convert_hf_to_gguf.py's Qwen2MoeModel (Qwen3MoeModel's base)
        b.kv_u32(arch + ".expert_count", spec.n_expert);
        b.kv_u32(arch + ".expert_used_count", spec.n_expert_used);
        b.kv_u32(arch + ".expert_feed_forward_length", spec.n_ff_exp);
    }

    std::vector<std::string> tokens;
    std::vector<float> scores;
    std::vector<int32_t> types;
    for (uint32_t i = 0; i < n_tokens; ++i) {
        bool byte = spec.byte_tokens && i >= 3 && i < 3 + 256;
        char hex[8];
        std::snprintf(hex, sizeof hex, "<0x%02X>", (i - 3) & 0xffu);
        tokens.push_back(byte ? std::string(hex) : "t" + std::to_string(i));
        scores.push_back(-float(i));
        types.push_back(i == 0 ? 2 : i <= 2 ? 3 : byte ? 6 : 1);  // UNKNOWN, CONTROL, BYTE, NORMAL
    }
    b.kv_string("tokenizer.ggml.model", "llama");
    b.kv_strings("tokenizer.ggml.tokens", tokens);
    b.kv_f32s("tokenizer.ggml.scores", scores);
    b.kv_i32s("tokenizer.ggml.token_type", types);
    b.kv_u32("tokenizer.ggml.unknown_token_id", 0);
    b.kv_u32("tokenizer.ggml.bos_token_id", 1);
    b.kv_u32("tokenizer.ggml.eos_token_id", 2);

    TensorWriter w(b, spec);
    uint32_t q_dim = spec.n_head * head_dim, kv_dim = spec.n_head_kv * head_dim;
    // Padding rows 8 times larger give logits whose spread is 8 times the tokens': the largest
    // of them beats every token's.
    const float kPaddingGain = 8.0f;
    w.matrix("token_embd.weight", spec.n_embd, spec.n_vocab,
             spec.tied_output ? n_tokens : UINT32_MAX, kPaddingGain);
    for (uint32_t i = 0; i < spec.n_layer; ++i) {
        const std::string p = "blk." + std::to_string(i) + ".";
        const bool olmo2 = arch == "olmo2",
                   post_norms = olmo2 || arch == "gemma2" || arch == "gemma3";
        if (!olmo2) w.norm(p + "attn_norm.weight", spec.n_embd);
        if (phi3) {  // Q, K and V stacked, gate and up stacked (gate first)
            w.matrix(p + "attn_qkv.weight", spec.n_embd, q_dim + 2 * kv_dim);
            w.matrix(p + "attn_output.weight", q_dim, spec.n_embd);
            w.norm(p + "ffn_norm.weight", spec.n_embd);
            w.matrix(p + "ffn_up.weight", spec.n_embd, 2 * spec.n_ff);
            w.matrix(p + "ffn_down.weight", spec.n_ff, spec.n_embd);
            continue;
        }
        w.matrix(p + "attn_q.weight", spec.n_embd, q_dim);
        w.matrix(p + "attn_k.weight", spec.n_embd, kv_dim);
        w.matrix(p + "attn_v.weight", spec.n_embd, kv_dim);
        if (arch == "qwen2") {
            w.bias(p + "attn_q.bias", q_dim);
            w.bias(p + "attn_k.bias", kv_dim);
            w.bias(p + "attn_v.bias", kv_dim);
        }
        if (arch == "qwen3" || arch == "gemma3" || moe) {
            w.norm(p + "attn_q_norm.weight", head_dim);
            w.norm(p + "attn_k_norm.weight", head_dim);
        }
        if (olmo2) {  // over the whole q and k rows
            w.norm(p + "attn_q_norm.weight", q_dim);
            w.norm(p + "attn_k_norm.weight", kv_dim);
        }
        w.matrix(p + "attn_output.weight", q_dim, spec.n_embd);
        if (post_norms) w.norm(p + "post_attention_norm.weight", spec.n_embd);
        if (!olmo2) w.norm(p + "ffn_norm.weight", spec.n_embd);
        if (post_norms) w.norm(p + "post_ffw_norm.weight", spec.n_embd);
        if (moe) {
            w.router(p + "ffn_gate_inp.weight", spec.n_embd, spec.n_expert);
            w.experts(p + "ffn_gate_exps.weight", spec.n_embd, spec.n_ff_exp, spec.n_expert);
            w.experts(p + "ffn_up_exps.weight", spec.n_embd, spec.n_ff_exp, spec.n_expert);
            w.experts(p + "ffn_down_exps.weight", spec.n_ff_exp, spec.n_embd, spec.n_expert);
            continue;
        }
        w.matrix(p + "ffn_gate.weight", spec.n_embd, spec.n_ff);
        w.matrix(p + "ffn_up.weight", spec.n_embd, spec.n_ff);
        w.matrix(p + "ffn_down.weight", spec.n_ff, spec.n_embd);
    }
    w.norm("output_norm.weight", spec.n_embd);
    if (!spec.tied_output)
        w.matrix("output.weight", spec.n_embd, spec.n_vocab, n_tokens, kPaddingGain);
    if (spec.rope_freqs) {
        std::vector<float> f(head_dim / 2);
        for (size_t i = 0; i < f.size(); ++i)
            f[i] = float(1u << (i % 4));
        b.tensor("rope_freqs.weight", 0, {f.size()}, encode(f, 0));
    }

    if (spec.rope_orig_ctx) {
        // Long factors growing with the pair (stretching the slow pairs, as LongRoPE's do), short
        // ones near 1: each table rotates every pair but the first differently.
        std::vector<float> longf(rot_dim / 2), shortf(rot_dim / 2);
        for (size_t i = 0; i < longf.size(); ++i) {
            longf[i] = 1.0f + 1.5f * float(i);
            shortf[i] = 1.0f + 0.25f * float(i % 3) + 0.05f * float(i);
        }
        b.tensor("rope_factors_long.weight", 0, {longf.size()}, encode(longf, 0));
        b.tensor("rope_factors_short.weight", 0, {shortf.size()}, encode(shortf, 0));
    }
    save(b, path);
}
