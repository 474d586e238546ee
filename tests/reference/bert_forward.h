// A plain C++ forward pass of BERT encoders (llama.cpp's "bert": BertModel as sentence-transformers
// models such as all-MiniLM-L6-v2 use it) in double precision, and the pooled embeddings made
// from it: the reference vkllm's embeddings are tested against.
//
// Per input sequence of n tokens, at positions 0..n-1 (each sequence starts at 0):
//   x = LayerNorm(token_embd[t] + position_embd[p] + token_types[0])
//   per layer: q, k, v = W x + b; each head attends to every position of its own sequence (no
//   causal mask), scores scaled by 1/sqrt(head_dim); a = W_o attn + b_o;
//   x = LayerNorm(x + a) (attn_output_norm); h = W_down GELU(W_up x + b_up) + b_down;
//   x = LayerNorm(x + h) (layer_output_norm).
// LayerNorm is (x - mean) / sqrt(var + eps) * w + b with eps attention.layer_norm_epsilon.
// Token type 0 for every token, as llama.cpp does ("sentence A").
#pragma once

#include <cstdint>
#include <vector>

#include "reference/forward.h"

namespace ref {

// llama.cpp's pooling types (enum llama_pooling_type); rank is not computed here.
enum class Pooling : uint32_t { none = 0, mean = 1, cls = 2, last = 3 };

// BERT's GELU is the erf form (Hugging Face's "gelu"); llama.cpp computes the tanh approximation
// for it (ggml_gelu; the two differ by up to ~1e-3), and on the CPU reads it from a table: the
// input rounded to F16, the output stored as F16, 0 at -10 and below, x at 10 and above
// (tanh_f16_table, to hold llama.cpp's own output to a tighter bound).
enum class Gelu { erf, tanh, tanh_f16_table };

using Rows = std::vector<std::vector<double>>;

// The last layer's hidden states of each sequence (result[s]: one row of n_embd per token), all
// sequences packed into one batch in which each row attends only to its own sequence. With
// pad_to, every sequence shorter than pad_to is padded with pad_token rows up to it, which
// no row attends to and whose outputs are dropped (a padded batch, as an engine may run it).
// Throws std::invalid_argument for a model that is not bert, an empty sequence, one (padded)
// longer than context_length or a token out of range.
std::vector<Rows> bert_hidden_states(const ModelRef &m,
                                     const std::vector<std::vector<int32_t>> &seqs,
                                     Gelu gelu = Gelu::erf, uint32_t pad_to = 0,
                                     int32_t pad_token = 0);

// One sequence's embedding rows: every hidden state for Pooling::none, else one row: the mean
// of the hidden states, the first one ([CLS]) or the last one. `normalize` divides each row by
// its L2 norm.
Rows pool(const Rows &hidden, Pooling pooling, bool normalize);

// bert_hidden_states then pool, per sequence.
std::vector<Rows> bert_embed(const ModelRef &m, const std::vector<std::vector<int32_t>> &seqs,
                             Pooling pooling, bool normalize, Gelu gelu = Gelu::erf);

// Cosine similarity of two vectors of the same length (1 when both are zero).
double cosine(const std::vector<double> &a, const std::vector<double> &b);

}  // namespace ref
