// Reads a GGUF file into a ModelRef (reference/forward.h): every weight widened to double as
// the file stores it (quantized blocks dequantized as ggml does), and each architecture's
// hyperparameters with llama.cpp's defaults.
#include <algorithm>
#include <cmath>
#include <optional>
#include <stdexcept>

#include "format/gguf.h"
#include "format/quant.h"
#include "reference/forward.h"

namespace ref {

namespace {

using Vec = std::vector<double>;
using vkllm::format::GgufFile;
using vkllm::format::TensorInfo;

[[noreturn]] void bad(const GgufFile &f, const std::string &what) {
    throw std::runtime_error(f.path() + ": " + what);
}

// Every element exactly as the file stores it: F16 and BF16 widen to float without rounding;
// block-quantized types are dequantized as ggml does (format/quant.h, checked against gguf-py
// by the quantization tests).
Vec values(const GgufFile &f, const TensorInfo &t) {
    uint32_t type = t.type->id;
    if (!vkllm::format::can_dequantize(type))
        bad(f, t.name + " has type " + t.type->name + ", which the reference cannot read");
    std::vector<float> v(t.n_elements);
    vkllm::format::dequantize_row(type, f.tensor_data(t), v.data(), t.n_elements);
    return Vec(v.begin(), v.end());
}

const TensorInfo &tensor(const GgufFile &f, const std::string &name) {
    const TensorInfo *t = f.find_tensor(name);
    if (!t) bad(f, "no tensor " + name);
    return *t;
}

std::string shape(const TensorInfo &t) {
    std::string s;
    for (uint32_t d = 0; d < t.n_dims; ++d)
        s += (d ? ", " : "[") + std::to_string(t.dims[d]);
    return s + "]";
}

Matrix read_matrix(const GgufFile &f, const std::string &name, uint32_t cols, uint32_t rows) {
    const TensorInfo &t = tensor(f, name);
    if (t.n_dims != 2 || t.dims[0] != cols || t.dims[1] != rows)
        bad(f, name + " is " + shape(t) + ", expected [" + std::to_string(cols) + ", " +
                   std::to_string(rows) + "]");
    return Matrix{rows, cols, values(f, t)};
}

Vec read_vector(const GgufFile &f, const std::string &name, uint32_t n) {
    const TensorInfo &t = tensor(f, name);
    if (t.n_dims != 1 || t.dims[0] != n)
        bad(f, name + " is " + shape(t) + ", expected [" + std::to_string(n) + "]");
    return values(f, t);
}

// The n [cols, rows] slabs of a GGUF tensor [cols, rows, n]: slab e is expert e's matrix.
std::vector<Matrix> read_experts(const GgufFile &f, const std::string &name, uint32_t cols,
                                 uint32_t rows, uint32_t n) {
    const TensorInfo &t = tensor(f, name);
    if (t.n_dims != 3 || t.dims[0] != cols || t.dims[1] != rows || t.dims[2] != n)
        bad(f, name + " is " + shape(t) + ", expected [" + std::to_string(cols) + ", " +
                   std::to_string(rows) + ", " + std::to_string(n) + "]");
    Vec all = values(f, t);
    size_t slab = size_t(rows) * cols;
    std::vector<Matrix> out;
    for (uint32_t e = 0; e < n; ++e)
        out.push_back(
            Matrix{rows, cols, Vec(all.begin() + e * slab, all.begin() + (e + 1) * slab)});
    return out;
}

// The n columns of a GGUF tensor [rows, n]: column e is expert e's bias.
std::vector<Vec> read_expert_biases(const GgufFile &f, const std::string &name, uint32_t rows,
                                    uint32_t n) {
    Matrix m = read_matrix(f, name, rows, n);
    std::vector<Vec> out;
    for (uint32_t e = 0; e < n; ++e)
        out.emplace_back(m.w.begin() + size_t(e) * rows, m.w.begin() + size_t(e + 1) * rows);
    return out;
}

Vec read_optional_vector(const GgufFile &f, const std::string &name, uint32_t n) {
    return f.find_tensor(name) ? read_vector(f, name, n) : Vec();
}

uint32_t key_u32(const GgufFile &f, const std::string &key, std::optional<uint32_t> fallback) {
    std::optional<int64_t> v = f.get_int(key);
    if (!v && fallback) return *fallback;
    if (!v) bad(f, "no key " + key);
    if (*v <= 0 || *v > int64_t(UINT32_MAX)) bad(f, key + " = " + std::to_string(*v));
    return uint32_t(*v);
}

// ggml_rope_yarn_corr_dim: the pair index whose wavelength fits n_rot times into the original
// context, i.e. n_dims * ln(n_ctx_orig / (n_rot * 2 pi)) / (2 ln base).
double yarn_corr_dim(double n_dims, double n_ctx_orig, double n_rot, double base) {
    return n_dims * std::log(n_ctx_orig / (n_rot * 2.0 * 3.14159265358979323846)) /
           (2.0 * std::log(base));
}

// Rows [first, first + n) of m.
Matrix row_block(const Matrix &m, uint32_t first, uint32_t n) {
    auto at = [&](uint32_t r) { return m.w.begin() + std::ptrdiff_t(size_t(r) * m.cols); };
    return Matrix{n, m.cols, Vec(at(first), at(first + n))};
}

// GPT-2's fused attn_qkv: rows [0, q_dim) are Q, then K, then V (so for its bias).
void read_gpt2_layer(const GgufFile &f, const ModelRef &m, const std::string &b, LayerRef &L) {
    uint32_t d = m.n_embd;
    L.attn_norm = read_vector(f, b + "attn_norm.weight", d);
    L.attn_norm_b = read_vector(f, b + "attn_norm.bias", d);
    Matrix qkv = read_matrix(f, b + "attn_qkv.weight", d, 3 * d);
    Vec bqkv = read_vector(f, b + "attn_qkv.bias", 3 * d);
    Matrix *parts[3] = {&L.wq, &L.wk, &L.wv};
    Vec *biases[3] = {&L.bq, &L.bk, &L.bv};
    for (uint32_t i = 0; i < 3; ++i) {
        *parts[i] = Matrix{
            d, d, Vec(qkv.w.begin() + size_t(i) * d * d, qkv.w.begin() + size_t(i + 1) * d * d)};
        *biases[i] = Vec(bqkv.begin() + size_t(i) * d, bqkv.begin() + size_t(i + 1) * d);
    }
    L.wo = read_matrix(f, b + "attn_output.weight", d, d);
    L.bo = read_optional_vector(f, b + "attn_output.bias", d);
    L.ffn_norm = read_vector(f, b + "ffn_norm.weight", d);
    L.ffn_norm_b = read_vector(f, b + "ffn_norm.bias", d);
    L.up = read_matrix(f, b + "ffn_up.weight", d, m.n_ff);
    L.b_up = read_vector(f, b + "ffn_up.bias", m.n_ff);
    L.down = read_matrix(f, b + "ffn_down.weight", m.n_ff, d);
    L.b_down = read_optional_vector(f, b + "ffn_down.bias", d);
}

// llama.cpp's LLM_ARCH_BERT: no head_count_kv (all heads are key/value heads), learned
// positions of context_length rows, token_type_count rows of token types, biases (those of
// attn_output, ffn_up and ffn_down optional, as there).
std::unique_ptr<ModelRef> load_bert(const GgufFile &f) {
    auto m = std::make_unique<ModelRef>();
    m->arch = "bert";
    m->bert = true;
    m->n_embd = key_u32(f, "bert.embedding_length", std::nullopt);
    m->n_layer = key_u32(f, "bert.block_count", std::nullopt);
    m->n_head = key_u32(f, "bert.attention.head_count", std::nullopt);
    m->n_head_kv = key_u32(f, "bert.attention.head_count_kv", m->n_head);
    if (m->n_head_kv != m->n_head || m->n_embd % m->n_head != 0)
        bad(f, "heads that do not divide embedding_length evenly into key/value heads");
    m->head_dim = m->n_embd / m->n_head;
    m->n_ff = key_u32(f, "bert.feed_forward_length", std::nullopt);
    m->n_ctx_train = key_u32(f, "bert.context_length", std::nullopt);
    std::optional<double> eps = f.get_float("bert.attention.layer_norm_epsilon");
    if (!eps) bad(f, "no key bert.attention.layer_norm_epsilon");
    m->norm_eps = *eps;
    if (f.get_bool("bert.attention.causal").value_or(false)) bad(f, "a causal bert");
    std::optional<int64_t> pooling = f.get_int("bert.pooling_type");
    if (pooling && (*pooling < 0 || *pooling > 4))
        bad(f, "pooling_type " + std::to_string(*pooling));
    m->pooling_type = uint32_t(pooling.value_or(0));
    uint32_t n_types = key_u32(f, "tokenizer.ggml.token_type_count", std::nullopt);
    const uint32_t d = m->n_embd;
    const TensorInfo &embd = tensor(f, "token_embd.weight");
    if (embd.n_dims != 2) bad(f, "token_embd.weight is " + shape(embd));
    m->n_vocab = uint32_t(embd.dims[1]);
    m->token_embd = read_matrix(f, "token_embd.weight", d, m->n_vocab);
    m->token_types = read_matrix(f, "token_types.weight", d, n_types);
    m->position_embd = read_matrix(f, "position_embd.weight", d, m->n_ctx_train);
    m->embd_norm = read_vector(f, "token_embd_norm.weight", d);
    m->embd_norm_b = read_vector(f, "token_embd_norm.bias", d);
    for (uint32_t i = 0; i < m->n_layer; ++i) {
        const std::string b = "blk." + std::to_string(i) + ".";
        LayerRef L;
        L.wq = read_matrix(f, b + "attn_q.weight", d, d);
        L.wk = read_matrix(f, b + "attn_k.weight", d, d);
        L.wv = read_matrix(f, b + "attn_v.weight", d, d);
        L.wo = read_matrix(f, b + "attn_output.weight", d, d);
        L.bq = read_vector(f, b + "attn_q.bias", d);
        L.bk = read_vector(f, b + "attn_k.bias", d);
        L.bv = read_vector(f, b + "attn_v.bias", d);
        L.bo = read_optional_vector(f, b + "attn_output.bias", d);
        L.post_attn_norm = read_vector(f, b + "attn_output_norm.weight", d);
        L.post_attn_norm_b = read_vector(f, b + "attn_output_norm.bias", d);
        L.up = read_matrix(f, b + "ffn_up.weight", d, m->n_ff);
        L.b_up = read_optional_vector(f, b + "ffn_up.bias", m->n_ff);
        L.down = read_matrix(f, b + "ffn_down.weight", m->n_ff, d);
        L.b_down = read_optional_vector(f, b + "ffn_down.bias", d);
        L.post_ffn_norm = read_vector(f, b + "layer_output_norm.weight", d);
        L.post_ffn_norm_b = read_vector(f, b + "layer_output_norm.bias", d);
        m->layers.push_back(std::move(L));
    }
    return m;
}

}  // namespace

std::unique_ptr<ModelRef> load_model_ref(const std::string &gguf_path) {
    GgufFile f(gguf_path);
    auto m = std::make_unique<ModelRef>();
    m->arch = std::string(f.get_string("general.architecture").value_or(""));
    if (m->arch == "bert") return load_bert(f);
    const std::vector<std::string> known = {"llama",    "qwen2",   "qwen3",  "gpt2",  "qwen2moe",
                                            "gpt-oss",  "gemma2",  "gemma3", "olmo2", "phi3",
                                            "qwen3moe", "smollm3", "granite"};
    if (std::find(known.begin(), known.end(), m->arch) == known.end())
        bad(f, "architecture \"" + m->arch +
                   "\" (llama, qwen2, qwen3, gpt2, qwen2moe, gpt-oss, gemma2, gemma3, olmo2, phi3, "
                   "qwen3moe, smollm3, granite and bert are supported)");
    m->gpt2 = m->arch == "gpt2";
    m->gemma2 = m->arch == "gemma2";
    m->gemma3 = m->arch == "gemma3";
    m->phi3 = m->arch == "phi3";
    m->olmo2 = m->arch == "olmo2";
    const bool qwen2moe = m->arch == "qwen2moe", gpt_oss = m->arch == "gpt-oss";
    const bool qwen3moe = m->arch == "qwen3moe";
    const std::string a = m->arch + ".";
    m->n_embd = key_u32(f, a + "embedding_length", std::nullopt);
    m->n_layer = key_u32(f, a + "block_count", std::nullopt);
    m->n_head = key_u32(f, a + "attention.head_count", std::nullopt);
    m->n_head_kv = key_u32(f, a + "attention.head_count_kv", m->n_head);
    m->head_dim = key_u32(f, a + "attention.key_length", m->n_embd / m->n_head);
    m->rot_dim = m->gpt2 ? 0 : key_u32(f, a + "rope.dimension_count", m->head_dim);
    m->n_ff = key_u32(f, a + "feed_forward_length", std::nullopt);
    if (qwen2moe || gpt_oss || qwen3moe) {
        m->routing = gpt_oss ? Routing::top_k_then_softmax : Routing::softmax_then_top_k;
        m->norm_topk = qwen3moe;
        m->n_expert = key_u32(f, a + "expert_count", std::nullopt);
        m->n_expert_used = key_u32(f, a + "expert_used_count", std::nullopt);
        m->n_ff_exp = key_u32(f, a + "expert_feed_forward_length", std::nullopt);
        if (qwen2moe)
            m->n_ff_shexp = key_u32(f, a + "expert_shared_feed_forward_length", std::nullopt);
        m->swiglu_oai = gpt_oss;
        if (m->n_expert_used > m->n_expert) bad(f, "expert_used_count > expert_count");
    }
    m->rope_base = f.get_float(a + "rope.freq_base").value_or(10000.0);
    m->n_ctx_train = key_u32(f, a + "context_length", 4096);
    if (m->phi3) {
        // llama.cpp's n_ctx_orig_yarn: rope.scaling.original_context_length, else the
        // training context.
        m->rope_orig_ctx = key_u32(f, a + "rope.scaling.original_context_length", m->n_ctx_train);
        m->rope_attn_factor = f.get_float(a + "rope.scaling.attn_factor").value_or(1.0);
        if (f.find_tensor("rope_factors_long.weight") ||
            f.find_tensor("rope_factors_short.weight")) {
            m->rope_long = read_vector(f, "rope_factors_long.weight", m->rot_dim / 2);
            m->rope_short = read_vector(f, "rope_factors_short.weight", m->rot_dim / 2);
        }
    }
    if (f.find_tensor("rope_freqs.weight"))
        m->rope_freqs = read_vector(f, "rope_freqs.weight", m->rot_dim / 2);
    std::string eps_key =
        a + (m->gpt2 ? "attention.layer_norm_epsilon" : "attention.layer_norm_rms_epsilon");
    std::optional<double> eps = f.get_float(eps_key);
    if (!eps) bad(f, "no key " + eps_key);
    m->norm_eps = *eps;
    // Llama's converter (llama, smollm3, granite) permutes q/k rows for llama.cpp's
    // adjacent-pair RoPE.
    m->neox_rope = m->arch != "llama" && m->arch != "smollm3" && m->arch != "granite";
    const bool granite = m->arch == "granite";
    bool granite_rope = true;  // granite.rope.scaling.finetuned: false turns RoPE off
    if (granite) {
        // llama.cpp reads the multipliers as optional, 0 meaning none, except logit_scale.
        auto scale = [&](const std::string &key, bool required) {
            std::optional<double> v = f.get_float(a + key);
            if (!v && required) bad(f, "no key " + a + key);
            if (v && !(*v >= 0)) bad(f, a + key + " is negative");
            return v.value_or(0.0);
        };
        if (double s = scale("embedding_scale", false); s != 0) m->embd_scale = s;
        if (double s = scale("residual_scale", false); s != 0) m->residual_scale = s;
        m->attn_scale = scale("attention.scale", false);
        m->logit_scale = scale("logit_scale", true);
        if (m->logit_scale == 0) bad(f, "granite.logit_scale is 0");
        granite_rope = f.get_bool(a + "rope.scaling.finetuned").value_or(true);
    }
    if (m->n_head % m->n_head_kv != 0) bad(f, "head_count is not a multiple of head_count_kv");
    if (m->rot_dim % 2 != 0 || m->rot_dim > m->head_dim)
        bad(f, "rope.dimension_count " + std::to_string(m->rot_dim) + " for head_dim " +
                   std::to_string(m->head_dim));
    std::string scaling(f.get_string(a + "rope.scaling.type").value_or("none"));
    double global_linear = 1.0;  // gemma3's global layers' linear RoPE factor
    if (scaling == "yarn") {
        // llama.cpp's defaults (ext_factor 1 for YaRN, attn_factor 1, beta_fast 32,
        // beta_slow 1) unless the file sets them.
        m->yarn = true;
        std::optional<double> factor = f.get_float(a + "rope.scaling.factor");
        if (!factor || *factor <= 0) bad(f, "YaRN without a positive rope.scaling.factor");
        m->yarn_factor = *factor;
        m->yarn_orig_ctx = key_u32(f, a + "rope.scaling.original_context_length", std::nullopt);
        m->yarn_ext_factor = f.get_float(a + "rope.scaling.yarn_ext_factor").value_or(1.0);
        m->yarn_attn_factor = f.get_float(a + "rope.scaling.yarn_attn_factor").value_or(1.0);
        m->yarn_beta_fast = f.get_float(a + "rope.scaling.yarn_beta_fast").value_or(32.0);
        m->yarn_beta_slow = f.get_float(a + "rope.scaling.yarn_beta_slow").value_or(1.0);
        // (rope_freqs below applies to YaRN models too, as in ggml.)
        // ggml_rope_yarn_corr_dims: floor of the fast end, ceil of the slow end, clamped to
        // [0, rot_dim - 1].
        double n_dims = m->rot_dim;
        double start =
            std::floor(yarn_corr_dim(n_dims, m->yarn_orig_ctx, m->yarn_beta_fast, m->rope_base));
        double end =
            std::ceil(yarn_corr_dim(n_dims, m->yarn_orig_ctx, m->yarn_beta_slow, m->rope_base));
        m->yarn_corr_dims[0] = std::max(0.0, start);
        m->yarn_corr_dims[1] = std::min(n_dims - 1, end);
    } else if (m->gemma3 && scaling == "linear") {
        std::optional<double> factor = f.get_float(a + "rope.scaling.factor");
        if (!factor || *factor <= 0) bad(f, "linear RoPE scaling without a positive factor");
        global_linear = *factor;
    } else if (scaling != "none") {
        bad(f, "rope.scaling.type \"" + scaling + "\" (none and yarn are supported)");
    }
    // gpt-oss: sliding-window attention on even layers, full on odd ones (llama.cpp's
    // swa pattern 2: layer il slides when il % 2 < 1). gemma3: five local layers, then a
    // global one (pattern 6: il % 6 < 5 slides), when the file has a window.
    uint32_t window = gpt_oss ? key_u32(f, a + "attention.sliding_window", std::nullopt) : 0;
    if (m->gemma3) window = key_u32(f, a + "attention.sliding_window", 0);
    // gemma2: Gemma2Config's defaults where the file is silent (window 4096, caps 50 and 30);
    // layer i slides when i is even (HF: is_sliding = not layer_idx % 2).
    if (m->gemma2) {
        window = key_u32(f, a + "attention.sliding_window", 4096);
        m->attn_softcap = f.get_float(a + "attn_logit_softcapping").value_or(50.0);
        m->final_softcap = f.get_float(a + "final_logit_softcapping").value_or(30.0);
        if (m->attn_softcap <= 0 || m->final_softcap <= 0)
            bad(f, "a soft cap that is not positive");
    }
    if (m->gemma3) m->final_softcap = f.get_float(a + "final_logit_softcapping").value_or(0.0);
    if (m->gemma2 || m->gemma3) m->embd_scale = std::sqrt(double(m->n_embd));
    // query_pre_attn_scalar: head_dim, but n_embd / n_head for Gemma 2 27B (46 layers); Granite's
    // attention.scale where its file has one (read above).
    if (!(m->attn_scale > 0))
        m->attn_scale = 1.0 / std::sqrt(double(m->gemma2 && m->n_layer == 46 ? m->n_embd / m->n_head
                                                                             : m->head_dim));

    const TensorInfo &embd = tensor(f, "token_embd.weight");
    if (embd.n_dims != 2) bad(f, "token_embd.weight is " + shape(embd));
    m->n_vocab = uint32_t(embd.dims[1]);
    m->token_embd = read_matrix(f, "token_embd.weight", m->n_embd, m->n_vocab);
    m->output_norm = read_vector(f, "output_norm.weight", m->n_embd);
    if (m->gpt2) {
        m->output_norm_b = read_vector(f, "output_norm.bias", m->n_embd);
        uint32_t n_pos = key_u32(f, a + "context_length", std::nullopt);
        m->position_embd = read_matrix(f, "position_embd.weight", m->n_embd, n_pos);
    }
    m->tied_output = f.find_tensor("output.weight") == nullptr;
    m->output =
        m->tied_output ? m->token_embd : read_matrix(f, "output.weight", m->n_embd, m->n_vocab);

    uint32_t q_dim = m->n_head * m->head_dim, kv_dim = m->n_head_kv * m->head_dim;
    for (uint32_t i = 0; i < m->n_layer; ++i) {
        const std::string b = "blk." + std::to_string(i) + ".";
        LayerRef L;
        if (m->gpt2) {
            read_gpt2_layer(f, *m, b, L);
            m->layers.push_back(std::move(L));
            continue;
        }
        if (!m->olmo2) L.attn_norm = read_vector(f, b + "attn_norm.weight", m->n_embd);
        if (m->phi3) {
            if (f.find_tensor(b + "attn_qkv.weight")) {
                // Phi3Attention's qkv_proj: rows [0, q_dim) are Q, then K, then V.
                Matrix qkv = read_matrix(f, b + "attn_qkv.weight", m->n_embd, q_dim + 2 * kv_dim);
                L.wq = row_block(qkv, 0, q_dim);
                L.wk = row_block(qkv, q_dim, kv_dim);
                L.wv = row_block(qkv, q_dim + kv_dim, kv_dim);
            } else {  // llama.cpp also takes them apart
                L.wq = read_matrix(f, b + "attn_q.weight", m->n_embd, q_dim);
                L.wk = read_matrix(f, b + "attn_k.weight", m->n_embd, kv_dim);
                L.wv = read_matrix(f, b + "attn_v.weight", m->n_embd, kv_dim);
            }
            L.wo = read_matrix(f, b + "attn_output.weight", q_dim, m->n_embd);
            L.ffn_norm = read_vector(f, b + "ffn_norm.weight", m->n_embd);
            // Phi3MLP: gate_up_proj's output chunked in two, gate first.
            Matrix gate_up = read_matrix(f, b + "ffn_up.weight", m->n_embd, 2 * m->n_ff);
            L.gate = row_block(gate_up, 0, m->n_ff);
            L.up = row_block(gate_up, m->n_ff, m->n_ff);
            L.down = read_matrix(f, b + "ffn_down.weight", m->n_ff, m->n_embd);
            m->layers.push_back(std::move(L));
            continue;
        }
        L.wq = read_matrix(f, b + "attn_q.weight", m->n_embd, q_dim);
        L.wk = read_matrix(f, b + "attn_k.weight", m->n_embd, kv_dim);
        L.wv = read_matrix(f, b + "attn_v.weight", m->n_embd, kv_dim);
        L.bq = read_optional_vector(f, b + "attn_q.bias", q_dim);
        L.bk = read_optional_vector(f, b + "attn_k.bias", kv_dim);
        L.bv = read_optional_vector(f, b + "attn_v.bias", kv_dim);
        L.wo = read_matrix(f, b + "attn_output.weight", q_dim, m->n_embd);
        if (m->arch == "qwen3" || m->gemma3 || qwen3moe) {
            L.q_norm = read_vector(f, b + "attn_q_norm.weight", m->head_dim);
            L.k_norm = read_vector(f, b + "attn_k_norm.weight", m->head_dim);
        }
        if (m->olmo2) {
            L.q_norm = read_vector(f, b + "attn_q_norm.weight", q_dim);
            L.k_norm = read_vector(f, b + "attn_k_norm.weight", kv_dim);
        }
        if (m->gemma2 || m->olmo2) {
            L.window = m->gemma2 && i % 2 == 0 ? window : 0;
            L.post_attn_norm = read_vector(f, b + "post_attention_norm.weight", m->n_embd);
            L.post_ffn_norm = read_vector(f, b + "post_ffw_norm.weight", m->n_embd);
        }
        if (m->gemma3) {
            bool local = window > 0 && i % 6 < 5;
            L.window = local ? window : 0;
            L.rope_base = local ? 10000.0 : m->rope_base;
            L.rope_linear = local ? 1.0 : global_linear;
            L.post_attn_norm = read_vector(f, b + "post_attention_norm.weight", m->n_embd);
            L.post_ffn_norm = read_vector(f, b + "post_ffw_norm.weight", m->n_embd);
        }
        if (m->arch == "smollm3") L.rope = (i + 1) % 4 != 0;
        if (granite) {
            L.rope = granite_rope;
            L.bo = read_optional_vector(f, b + "attn_output.bias", m->n_embd);
        }
        if (gpt_oss) {
            L.bo = read_vector(f, b + "attn_output.bias", m->n_embd);
            L.sinks = read_vector(f, b + "attn_sinks.weight", m->n_head);
            L.window = i % 2 == 0 ? window : 0;
        }
        if (m->routing == Routing::none) {
            if (!m->olmo2) L.ffn_norm = read_vector(f, b + "ffn_norm.weight", m->n_embd);
            L.gate = read_matrix(f, b + "ffn_gate.weight", m->n_embd, m->n_ff);
            L.up = read_matrix(f, b + "ffn_up.weight", m->n_embd, m->n_ff);
            L.down = read_matrix(f, b + "ffn_down.weight", m->n_ff, m->n_embd);
            m->layers.push_back(std::move(L));
            continue;
        }
        // gpt-oss calls its pre-FFN norm post_attention_norm.
        L.ffn_norm = read_vector(
            f, b + (gpt_oss ? "post_attention_norm.weight" : "ffn_norm.weight"), m->n_embd);
        uint32_t d = m->n_embd, ne = m->n_expert, ff = m->n_ff_exp;
        L.router = read_matrix(f, b + "ffn_gate_inp.weight", d, ne);
        L.gate_exps = read_experts(f, b + "ffn_gate_exps.weight", d, ff, ne);
        L.up_exps = read_experts(f, b + "ffn_up_exps.weight", d, ff, ne);
        L.down_exps = read_experts(f, b + "ffn_down_exps.weight", ff, d, ne);
        if (gpt_oss) {
            L.router_b = read_vector(f, b + "ffn_gate_inp.bias", ne);
            L.gate_exps_b = read_expert_biases(f, b + "ffn_gate_exps.bias", ff, ne);
            L.up_exps_b = read_expert_biases(f, b + "ffn_up_exps.bias", ff, ne);
            L.down_exps_b = read_expert_biases(f, b + "ffn_down_exps.bias", d, ne);
        }
        if (qwen2moe) {
            L.shexp_gate = read_vector(f, b + "ffn_gate_inp_shexp.weight", d);
            L.gate_shexp = read_matrix(f, b + "ffn_gate_shexp.weight", d, m->n_ff_shexp);
            L.up_shexp = read_matrix(f, b + "ffn_up_shexp.weight", d, m->n_ff_shexp);
            L.down_shexp = read_matrix(f, b + "ffn_down_shexp.weight", m->n_ff_shexp, d);
        }
        m->layers.push_back(std::move(L));
    }
    return m;
}

}  // namespace ref
