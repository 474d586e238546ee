#include "reference/tiny_archs.h"

namespace {

// A vocabulary llama.cpp loads (byte tokens), just past them.
TinyModelSpec base() {
    TinyModelSpec s;
    s.n_vocab = 272;
    s.byte_tokens = true;
    return s;
}

std::vector<TinyArch> make() {
    std::vector<TinyArch> a;
    {
        TinyModelSpec s = base();  // Llama 3.1+: frequency factors, an output head of its own
        s.arch = "llama";
        s.rope_freqs = true;
        s.n_layer = 3;
        s.seed = 11;
        a.push_back({"llama", s});
    }
    {
        TinyModelSpec s = base();  // q/k/v biases, NEOX RoPE, tied output
        s.arch = "qwen2";
        s.n_layer = 3;
        s.tied_output = true;
        s.rope_base = 1e6f;
        s.rms_eps = 1e-6f;
        s.seed = 12;
        a.push_back({"qwen2", s});
    }
    {
        TinyModelSpec s = base();  // per-head q/k norms, head_dim apart from n_embd / n_head
        s.arch = "qwen3";
        s.n_layer = 3;
        s.head_dim = 16;
        s.rope_base = 1e6f;
        s.rms_eps = 1e-6f;
        s.seed = 13;
        a.push_back({"qwen3", s});
    }
    {
        TinyModelSpec s =
            base();  // five local layers then a global one (and one more), both RoPE bases,
                     // linear scaling of the global ones, QK-norm, post-norms, GELU gate
        s.arch = "gemma3";
        s.n_embd = 64, s.n_head = 4, s.n_head_kv = 2, s.head_dim = 32, s.n_ff = 96;
        s.n_layer = 7;
        s.sliding_window = 8;
        s.rope_base = 1e6f;
        s.rope_linear_factor = 2;
        s.rms_eps = 1e-6f;
        s.tied_output = true;
        s.seed = 14;
        a.push_back({"gemma3", s});
    }
    {
        // Fused Q/K/V and gate/up, partial NEOX rotation (12 of 16 dims), LongRoPE tables
        // (original context 256 of 1024: a context above 256 takes the long factors, one up to
        // 256 the short ones; llama.cpp pads its context to a multiple of 256, so an original
        // context of 256 lets its choice be either), the attention factor, a sliding_window key
        // that llama.cpp ignores, an untied output.
        TinyModelSpec s = base();
        s.arch = "phi3";
        s.n_embd = 64, s.n_head = 4, s.n_head_kv = 2, s.n_ff = 96;
        s.n_layer = 3;
        s.rot_dim = 12;
        s.n_ctx = 1024;
        s.rope_orig_ctx = 256;
        s.sliding_window = 16;
        s.seed = 15;
        a.push_back({"phi3", s});
    }
    {
        // Local layers (0, 2) with a window of 6 and global ones (1, 3), attention scores capped
        // at 3 and logits at 4 (both bite on these weights), post-norms, GELU gate, heads of 32
        // apart from n_embd / n_head, tied output.
        TinyModelSpec s = base();
        s.arch = "gemma2";
        s.n_embd = 64, s.n_head = 4, s.n_head_kv = 2, s.head_dim = 32, s.n_ff = 96;
        s.n_layer = 4;
        s.sliding_window = 6;
        s.attn_softcap = 3;
        s.final_softcap = 4;
        s.rms_eps = 1e-6f;
        s.tied_output = true;
        s.seed = 15;
        a.push_back({"gemma2", s});
    }
    {
        // No pre-norms, post-norms, QK-norm over whole rows of different widths (GQA), an
        // output head of its own.
        TinyModelSpec s = base();
        s.arch = "olmo2";
        s.n_embd = 64, s.n_head = 4, s.n_head_kv = 2, s.n_ff = 96;
        s.n_layer = 3;
        s.rope_base = 500000.0f;
        s.rms_eps = 1e-6f;
        s.seed = 16;
        a.push_back({"olmo2", s});
    }
    {
        // 6 routed experts, 2 per token, renormalised; QK-norm, heads of 32
        // that are not n_embd / n_head, NEOX RoPE, an output head of its own
        TinyModelSpec s = base();
        s.arch = "qwen3moe";
        s.n_embd = 64, s.n_head = 4, s.n_head_kv = 2, s.head_dim = 32, s.n_ff = 96;
        s.n_expert = 6, s.n_expert_used = 2, s.n_ff_exp = 32;
        s.n_layer = 3;
        s.rope_base = 1e6f;
        s.rms_eps = 1e-6f;
        s.seed = 15;
        a.push_back({"qwen3moe", s});
    }
    {
        // five layers: the fourth (il 3) without RoPE; adjacent-pair RoPE on
        // the converter's permuted q/k; tied output
        TinyModelSpec s = base();
        s.arch = "smollm3";
        s.n_layer = 5;
        s.tied_output = true;
        s.rope_base = 5e6f;
        s.rms_eps = 1e-6f;
        s.seed = 16;
        a.push_back({"smollm3", s});
    }
    {
        // the four multipliers away from 1 (and the attention's from
        // 1/sqrt(head_dim)), adjacent-pair RoPE, tied output
        TinyModelSpec s = base();
        s.arch = "granite";
        s.n_layer = 3;
        s.tied_output = true;
        s.rope_base = 1e7f;
        s.embedding_scale = 0.5f, s.residual_scale = 0.8f, s.attention_scale = 0.6f;
        s.logit_scale = 8.0f;
        s.seed = 17;
        a.push_back({"granite", s});
    }
    return a;
}

// Three layers of three heads of 32 (all-MiniLM-L6-v2's head size), an FFN of 160, LayerNorm eps
// of 1e-12 as BERT's, a WordPiece vocabulary of 96, 64 positions.
std::vector<TinyArch> make_embed() {
    std::vector<TinyArch> a;
    const char *names[] = {"bert-none", "bert-mean", "bert-cls", "bert-last"};
    for (uint32_t pooling = 0; pooling < 4; ++pooling) {
        TinyModelSpec s;
        s.arch = "bert";
        s.n_vocab = 96;
        s.n_embd = 96, s.n_head = 3, s.n_head_kv = 3, s.n_ff = 160;
        s.n_layer = 3;
        s.n_ctx = 64;
        s.pooling_type = pooling;
        s.seed = 21;
        a.push_back({names[pooling], s});
    }
    return a;
}

}  // namespace

const std::vector<TinyArch> &tiny_embed_archs() {
    static const std::vector<TinyArch> archs = make_embed();
    return archs;
}

const std::vector<TinyArch> &tiny_archs() {
    static const std::vector<TinyArch> archs = make();
    return archs;
}
