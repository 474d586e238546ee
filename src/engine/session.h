// A session: the KV cache rings of its sequences, the per-step buffer and the recorded command
// buffers, and the steps that run the model. One thread at a time; many per model.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "engine/device_sampling.h"
#include "engine/logprobs.h"
#include "engine/model.h"
#include "models/plan.h"

namespace vkllm::engine {

// A context that a phone holds: a model's training context (32k to 128k positions per
// sequence) is the default only where it is smaller.
constexpr uint32_t kDefaultContext = 4096;

struct SessionOptions {
    uint32_t n_ctx = 0;     // KV slots per sequence; 0: the model's training context, at most
                            // kDefaultContext
    uint32_t n_seq = 1;     // sequences, decoded together in one step
    uint32_t n_batch = 64;  // prefill chunk length
    gpu::KvType kv_type = gpu::KvType::F16;
    bool record_every_step = false;  // ablation: no replay of recorded steps
    bool profile = false;            // time every dispatch on the device (Session::profile)
    // Keep what each recording recorded (gpu::Recording::log): the tests that check where the
    // barriers went read it through last_recording().
    bool log_recordings = false;
    bool streaming = false;  // when full: keep the first n_sink tokens and the most recent ones
    uint32_t n_sink = 4;
};

struct SessionStats {
    uint64_t recorded = 0;  // command buffers recorded; bounded by the step shapes, not tokens
    uint64_t submits = 0;
    uint64_t tokens_prefilled = 0;
    uint64_t tokens_decoded = 0;
    double prefill_ms = 0;
    double decode_ms = 0;
};

// Device time of one kernel (shader), summed over the session's steps.
struct KernelTime {
    std::string kernel;
    uint64_t dispatches = 0;
    double ms = 0;
};

class Session {
  public:
    // Throws VKLLM_ERR_INVALID_ARGUMENT for impossible options, VKLLM_ERR_UNSUPPORTED or
    // VKLLM_ERR_OUT_OF_DEVICE_MEMORY when the cache does not fit.
    Session(const Model &model, const SessionOptions &options);

    const Model &model() const { return model_; }
    const SessionOptions &options() const { return opt_; }
    const SessionStats &stats() const { return stats_; }
    uint64_t kv_bytes() const { return kv_bytes_; }
    uint64_t device_bytes() const { return device_bytes_; }  // every buffer the session holds
    // Profiled sessions: device time per kernel since creation, in the order first seen.
    const std::vector<KernelTime> &profile() const { return profile_; }
    // The recording the last step submitted (null before the first).
    const gpu::Recording *last_recording() const { return last_; }
    // K and V bytes of layer `layer` (sliding-window layers hold a fixed window).
    uint64_t layer_kv_bytes(uint32_t layer) const { return layer_kv_bytes_.at(layer); }

    // Runs `n` tokens of sequence `seq` through the model in chunks of n_batch. The logits after
    // the last token go to `logits` (n_vocab floats) when it is not null. `between_chunks`, called
    // after each chunk with the tokens done so far, stops the prefill by returning false
    // (VKLLM_ERR_CANCELLED; the chunks already run stay in the cache). VKLLM_ERR_CONTEXT_FULL,
    // before anything runs, when the tokens do not fit.
    // `lp`: the last token's log-probabilities too (one row).
    void prefill(uint32_t seq, const int32_t *tokens, size_t n, float *logits,
                 const std::function<bool(size_t)> &between_chunks = {},
                 const LogprobRequest *lp = nullptr);

    // Runs `n` tokens of sequence `seq` as prefill does and writes n_vocab floats per row to
    // `out`: the logits after each of `positions` (indices into the tokens, any order; null:
    // every one), or with `log_softmax` their log-probabilities over the tokenizer's ids (-inf
    // for the padded ids past them). The output head runs over whole chunks on the device, in
    // chunks whose logits fit one binding. Everything is checked before anything runs.
    void eval_logits(uint32_t seq, const int32_t *tokens, size_t n,
                     const std::vector<uint32_t> *positions, bool log_softmax, float *out);

    // One token for each of `n` distinct sequences, in one step. Writes n x n_vocab logits and/or
    // the argmax of each row (computed on the device) where the pointers are not null, and
    // with `lp` each row's log-probabilities.
    void decode(const uint32_t *seqs, const int32_t *tokens, size_t n, float *logits,
                int32_t *argmax, const LogprobRequest *lp = nullptr);

    // Greedy decoding of `steps` tokens for each of `n` distinct sequences in one submission:
    // the first step decodes `tokens`, each later one the argmax the step before chose, picked,
    // fed back and streamed out on the device. out[s * n + i] is sequence seqs[i]'s argmax after
    // step s; all `steps` tokens of each sequence are in the cache afterwards. `lp`: the
    // log-probabilities of each step's rows, computed on the device as part of the chain,
    // [step][sequence] like out.
    void decode_greedy(const uint32_t *seqs, const int32_t *tokens, size_t n, uint32_t steps,
                       int32_t *out, const LogprobRequest *lp = nullptr);
    // Sampled decoding of `steps` tokens for each of `n` distinct sequences in one submission,
    // as decode_greedy but each step's token drawn on the device (shaders/argmax/sample.comp)
    // with the options, history and draw counts of `sampling` (device_sampling.h), row i for
    // seqs[i]; the tokens drawn join the histories on the device as the chain goes.
    void decode_sampled(const uint32_t *seqs, const int32_t *tokens, size_t n, uint32_t steps,
                        const DeviceSamplingStep &sampling, int32_t *out,
                        const LogprobRequest *lp = nullptr);
    // One step of `n` tokens of any of the session's sequences (each sequence's tokens in
    // order; at most n_batch in all), writing each token's final hidden state (after the
    // model's last norm: what embeddings pool) to `out`, n x n_embd floats
    // (session_hidden.cpp). An encoder's tokens attend to every token of their sequence in the
    // step, so its sequences must be empty before. Everything is checked before anything runs.
    void hidden_states(const int32_t *tokens, const uint32_t *seqs, size_t n, float *out);
    // The most steps decode_greedy and decode_sampled chain in one submission.
    static constexpr uint32_t kMaxChainSteps = VKLLM_MAX_CHAINED_STEPS;

    // Any thread: stops prefill() at the end of its chunk (VKLLM_ERR_CANCELLED) and generation
    // before its next step, until clear_cancel().
    void cancel() { cancel_.store(true, std::memory_order_relaxed); }
    void clear_cancel() { cancel_.store(false, std::memory_order_relaxed); }
    bool cancelled() const { return cancel_.load(std::memory_order_relaxed); }

    uint32_t position(uint32_t seq) const { return n_past_.at(seq); }
    // Forgets everything from position `keep` on (0: the whole sequence). Refused when a ring
    // has wrapped so far that the dropped positions overwrote keys the kept ones still see.
    void truncate(uint32_t seq, uint32_t keep);
    // The token ids in sequence `seq`'s cache, in position order.
    const std::vector<int32_t> &tokens(uint32_t seq) const { return history_.at(seq); }

    // Saved sequence state (session_state.cpp; the bytes: engine/state_format.h). The bytes
    // save_state(seq) writes.
    uint64_t state_size(uint32_t seq) const;
    // Writes sequence `seq`'s state, exactly state_size(seq) bytes, to `out`.
    void save_state(uint32_t seq, uint8_t *out) const;
    // Replaces sequence `seq` with a saved state, from any sequence of any session of the same
    // model. Everything is checked before anything changes: VKLLM_ERR_FORMAT for bytes that are
    // not a whole, intact state; VKLLM_ERR_INVALID_ARGUMENT for a state of another model or KV
    // type, or positions this session's context or rings cannot hold as the saving one did.
    void load_state(uint32_t seq, const uint8_t *data, size_t size);
    // The same through a file (VKLLM_ERR_IO when it cannot be written or read).
    void save_state_file(uint32_t seq, const std::string &path) const;
    void load_state_file(uint32_t seq, const std::string &path);
    // Replaces sequence `dst` with the first `n_keep` positions of sequence `src`, copied on the
    // device. VKLLM_ERR_INVALID_ARGUMENT when a ring of `src` no longer holds them.
    void fork(uint32_t src, uint32_t dst, uint32_t n_keep);

  private:
    void check_seq(uint32_t seq) const;
    // Fixed slots of layer `layer`'s rings: the streaming sinks of a full-attention layer.
    uint32_t layer_sinks(uint32_t layer) const;
    // K (or V) bytes of one slot: every KV head's row.
    uint64_t slot_bytes() const;
    // Whether truncate(seq, keep) keeps every key the kept positions see.
    bool can_truncate(uint32_t seq, uint32_t keep) const;
    struct Tokens {
        std::vector<int32_t> ids;
        std::vector<uint32_t> seqs;
    };
    // decode_greedy, or with `sampled` decode_sampled once its buffers are written.
    void decode_chain(const uint32_t *seqs, const int32_t *tokens, size_t n, uint32_t steps,
                      int32_t *out, const LogprobRequest *lp, bool sampled);
    // Writes decode_sampled's buffers (allocated on first use; the bias's grown on demand,
    // dropping the recordings that bound the smaller one).
    void write_sampling(const DeviceSamplingStep &sampling, size_t n);
    void check_decode(const uint32_t *seqs, const int32_t *tokens, size_t n, uint32_t steps) const;
    // Room in the sequence and every id within the embedding.
    void check_prefill(uint32_t seq, const int32_t *tokens, size_t n) const;
    // The tokens fit sequence `seq` and are rows of the embedding.
    void check_tokens(uint32_t seq, const int32_t *tokens, size_t n) const;
    // VKLLM_ERR_UNSUPPORTED for an encoder, which makes no logits.
    void refuse_encoder() const;
    // Rows of logits (and of their argmax) the session holds: grown on demand for eval_logits,
    // dropping the recordings that bound the smaller buffers.
    void ensure_logit_rows(uint32_t rows);
    // Tokens per eval_logits chunk: n_batch, or fewer where a chunk's logits would exceed the
    // device's largest binding.
    uint32_t eval_chunk() const;
    // The log-probability rows' buffer, allocated at its largest on first use so that no
    // recording ever needs another.
    void ensure_logprob_rows();
    // Writes the step's arrays for the host; returns the tokens of each sequence.
    std::vector<uint32_t> write_step(const Tokens &t);
    void step(const Tokens &t, models::LogitRows rows, float *logits, int32_t *argmax,
              double &time_ms, uint64_t &token_count, const LogprobRequest *lp = nullptr);
    // `chain` 0: one step; k > 0: k greedy decode steps chained (decode_greedy), or with
    // `sampled` k sampled ones (decode_sampled). `logprobs`: models::StepShape's.
    gpu::Recording &recording(uint32_t n_tokens, models::LogitRows rows, uint32_t chain,
                              bool prefill, int32_t logprobs, bool sampled = false);
    // Submits that recording (recorded first if need be) and waits.
    void submit(uint32_t n_tokens, models::LogitRows rows, uint32_t chain, bool prefill,
                int32_t logprobs = -1, bool sampled = false);
    // `chain_step`: which step of a chain this is (its log-probability rows' slice).
    void record(gpu::Recording &rec, const models::Plan &plan, uint32_t n_tokens, bool prefill,
                uint32_t chain_step = 0);
    gpu::BufferRange act(models::Act a, uint32_t rows) const;
    gpu::StepView step_view(uint32_t n_tokens) const;
    // `prefill`: the step's tokens come in runs of one sequence (gpu::AttentionShape).
    gpu::AttentionShape attention_shape(uint32_t n_tokens, uint32_t layer,
                                        bool prefill = false) const;
    // The RoPE a StoreKv applies on the way into the cache, for a step of `rows` tokens.
    gpu::KvRope kv_rope(const models::op::StoreKv &s, uint32_t rows) const;
    void check_fits(uint32_t seq, size_t n) const;
    void add_profile(const gpu::Recording &rec);

    const Model &model_;
    gpu::Context &ctx_;
    SessionOptions opt_;
    uint32_t max_rows_;
    std::vector<gpu::Buffer> acts_;  // by models::Act
    gpu::Buffer step_;               // host-visible: tokens, positions, seq ids, kv_begin
    uint64_t step_stride_ = 0;
    gpu::Buffer ids_;          // host-visible argmax of each logits row
    uint32_t logit_rows_ = 0;  // rows of the logits activation and of ids_
    gpu::Buffer logprobs_;     // host-visible log-probability rows (op::Logprobs); lazily
    gpu::Buffer chain_;        // host-visible: decode_greedy's tokens, [step][sequence]
    // Host-visible, decode_sampled's: each row's options, the bias pairs, the history rings and
    // the (history length, draws) pairs; lazily.
    gpu::Buffer sample_options_, sample_bias_, sample_history_, sample_state_;
    std::vector<gpu::Buffer> k_cache_, v_cache_;
    std::vector<uint32_t> capacity_;  // KV slots per sequence of each layer
    std::vector<uint64_t> layer_kv_bytes_;
    uint64_t kv_bytes_ = 0;
    uint64_t device_bytes_ = 0;
    gpu::Buffer route_;         // mixture of experts: the step's routing and expert groups
    gpu::Buffer attn_scratch_;  // split-K attention's partial results (GPUs)
    gpu::Buffer qkv_arrivals_;  // the QKV projection's count of each head's stored rows
    std::vector<uint32_t> n_past_;
    // The most positions each sequence's rings were written up to since it was last empty: a
    // rewind leaves the slots of the positions it dropped holding them, so what a ring has
    // lost depends on this, not on n_past_ (max(written_, n_past_) is the high-water mark).
    std::vector<uint32_t> written_;
    std::vector<std::vector<int32_t>> history_;  // each sequence's ids, as tokens() gives them
    std::map<std::tuple<uint32_t, int, uint32_t, bool, int32_t, bool>,
             std::unique_ptr<gpu::Recording>>
        recordings_;
    SessionStats stats_;
    const gpu::Recording *last_ = nullptr;
    std::vector<KernelTime> profile_;
    std::atomic<bool> cancel_{false};
};

}  // namespace vkllm::engine
