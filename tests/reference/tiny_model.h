// Writes small random-weight Llama / Qwen2 / Qwen3 / BERT GGUF files, so that engine tests can use
// shapes, weight types and options that the shared test models do not have, and compare the
// engine with the CPU reference (reference/forward.h) on them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

struct TinyModelSpec {
    // "llama", "qwen2" (q/k/v biases), "qwen3" (q/k norms), "gemma3" (q/k norms, post-norms,
    // local layers with sliding_window and global ones in a pattern of 6), "gemma2" (post-norms,
    // even layers local with sliding_window, soft caps), "olmo2" (no pre-norms, post-norms,
    // q/k norms over whole rows), "phi3" (below), "qwen3moe" (q/k norms, n_expert routed experts
    // instead of the dense FFN), "smollm3" (llama's tensors; every fourth layer without RoPE) or
    // "granite" (llama's tensors and the four multipliers below); "bert" (an encoder: llama.cpp's
    // LLM_ARCH_BERT tensors and keys with biases everywhere, learned positions, two token types,
    // post-LayerNorms of layer_norm_eps, a WordPiece vocabulary; n_head_kv must equal n_head)
    std::string arch = "llama";
    uint32_t n_vocab = 64, n_embd = 32, n_head = 4, n_head_kv = 2, n_ff = 48, n_layer = 2;
    // Tokens of the vocabulary; 0: n_vocab. Fewer pads the embedding past the vocabulary, as
    // Qwen's files are, and the padded rows of the output get logits that outweigh the tokens'
    // (an argmax or a sampler that looked at them would choose them).
    uint32_t n_tokens = 0;
    uint32_t head_dim = 0;  // 0: n_embd / n_head
    // Tokens 3..258 are SentencePiece's byte tokens <0x00>..<0xFF> (n_tokens of 259 or more):
    // llama.cpp tokenizes text as it loads a model, and that needs them.
    bool byte_tokens = false;
    uint32_t n_ctx = 128;
    uint32_t weight_type = 0;  // ggml type of the matrices: F32, F16, BF16 or any type
                               // format::can_quantize() takes (rows of whole blocks); norms
                               // stay F32
    bool tied_output = false;  // omit output.weight
    bool rope_freqs = false;   // write Llama 3.1-style rope_freqs.weight (factors 1, 2, 4, ...)
    float rope_base = 10000.0f, rms_eps = 1e-5f;
    // gemma3: the local layers' window (0: none, all global); phi3: the key the converter
    // writes, which llama.cpp (and so vkllm) ignores
    uint32_t sliding_window = 0;
    float rope_linear_factor = 0;  // gemma3: the global layers' linear RoPE scaling (0: none)
    // phi3 (fused attn_qkv and ffn_up, no key_length as its converter writes): the rotated
    // dims of each head (0: all), and LongRoPE: with rope_orig_ctx > 0,
    // rope.scaling.original_context_length, rope_factors_long / rope_factors_short.weight
    // (distinct, neither all ones) and the converter's rope.scaling.attn_factor
    // sqrt(1 + ln(n_ctx / rope_orig_ctx) / ln(rope_orig_ctx)).
    uint32_t rot_dim = 0;
    uint32_t rope_orig_ctx = 0;
    // gemma2: attn_logit_softcapping and final_logit_softcapping (0: not written; a negative
    // one is, for refusal tests); gemma3: the final one.
    float attn_softcap = 0, final_softcap = 0;
    // qwen3moe: n_expert experts of n_ff_exp rows, n_expert_used per token (the router is
    // written F32, as llama.cpp's quantizer leaves it; n_ff is written but unused).
    uint32_t n_expert = 0, n_expert_used = 0, n_ff_exp = 0;
    // granite: granite.embedding_scale, residual_scale, attention.scale and logit_scale, each
    // written where it is not 0 (llama.cpp requires logit_scale).
    float embedding_scale = 0, residual_scale = 0, attention_scale = 0, logit_scale = 0;
    // bert: attention.layer_norm_epsilon (BERT's 1e-12) and pooling_type, llama.cpp's enum
    // (0 none, 1 mean, 2 cls, 3 last, 4 rank).
    float layer_norm_eps = 1e-12f;
    uint32_t pooling_type = 1;
    uint32_t seed = 1;
};

// Writes the model to `path` with a minimal SentencePiece-style vocabulary ("t0".."tN", no byte
// tokens; unk 0, bos 1, eos 2) so that loaders requiring a tokenizer accept it; bert gets the
// WordPiece vocabulary of tiny_wordpiece_vocab(). The weights are a deterministic function of
// the spec. Throws std::runtime_error on a spec it cannot
// write or a file it cannot create.
void write_tiny_model(const std::string &path, const TinyModelSpec &spec);

// The tiny bert models' vocabulary of n tokens (57 or more) in llama.cpp's GGUF form: [PAD] 0,
// [UNK] 1, [CLS] 2, [SEP] 3, [MASK] 4, then word-start pieces (a leading U+2581) for "a".."z",
// continuation pieces (no "##") for "a".."z", then whole words ("\u2581w57", ...).
std::vector<std::string> tiny_wordpiece_vocab(uint32_t n);
enum TinyBertToken : int32_t {
    kBertPad = 0,
    kBertUnk = 1,
    kBertCls = 2,
    kBertSep = 3,
    kBertMask = 4
};

// Float to BF16 bits, rounding to nearest even; NaN stays NaN.
uint16_t float_to_bf16(float f);
