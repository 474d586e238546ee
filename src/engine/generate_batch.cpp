#include "engine/generate_batch.h"

#include <algorithm>

namespace vkllm::engine {

void generate_batch(Session &session, std::vector<BatchSequence> &seqs, uint32_t max_tokens,
                    bool ignore_eog) {
    const uint32_t n_seq = session.options().n_seq;
    if (seqs.empty() || seqs.size() > n_seq)
        fail(VKLLM_ERR_INVALID_ARGUMENT, "generate_batch: %zu sequences in a session of %u",
             seqs.size(), n_seq);
    const Model &model = session.model();
    const SessionOptions &so = session.options();
    std::vector<bool> seen(n_seq, false);
    for (const BatchSequence &b : seqs) {
        if (b.seq >= n_seq || seen[b.seq])
            fail(VKLLM_ERR_INVALID_ARGUMENT,
                 "generate_batch: sequence %u does not exist or is named twice", b.seq);
        seen[b.seq] = true;
        if (b.prompt.empty())
            fail(VKLLM_ERR_INVALID_ARGUMENT, "generate_batch: sequence %u has an empty prompt",
                 b.seq);
        for (int32_t t : b.prompt)
            if (t < 0 || uint32_t(t) >= model.config().n_vocab)
                fail(VKLLM_ERR_INVALID_ARGUMENT,
                     "generate_batch: sequence %u: token %d is outside the vocabulary", b.seq, t);
    }
    for (const BatchSequence &b : seqs) {
        // Checked for every sequence before any runs: the prompt and every generated token but
        // the last (which is never decoded) must fit.
        uint64_t end =
            uint64_t(session.position(b.seq)) + b.prompt.size() + (max_tokens ? max_tokens - 1 : 0);
        if (!so.streaming && end > so.n_ctx)
            fail(VKLLM_ERR_CONTEXT_FULL,
                 "generate_batch: sequence %u: %zu prompt tokens and %u generated do not fit its "
                 "context of %u (%u used)",
                 b.seq, b.prompt.size(), max_tokens, so.n_ctx, session.position(b.seq));
    }
    const tokenizer::Tokenizer &tok = *model.tokenizer();
    const size_t n_vocab = model.config().n_vocab, n_ids = model.n_tokens();
    std::vector<float> logits(n_vocab * seqs.size());
    std::vector<int32_t> argmax(seqs.size()), next(seqs.size());
    // Row `row` of the logits (and of the device's argmax) is sequence i's.
    auto choose = [&](size_t row, size_t i) {
        next[i] = seqs[i].sampler->sample(logits.data() + row * n_vocab, n_ids, argmax[row]);
    };
    for (size_t i = 0; i < seqs.size(); ++i) {
        BatchSequence &b = seqs[i];
        b.tokens.clear();
        b.reason = StopReason::MaxTokens;
        for (int32_t t : b.prompt)
            b.sampler->accept_prompt(t);
        float *row = max_tokens ? logits.data() : nullptr;
        session.prefill(b.seq, b.prompt.data(), b.prompt.size(), row);
        if (!max_tokens) continue;
        argmax[0] = int32_t(std::max_element(row, row + n_ids) - row);
        choose(0, i);
    }
    if (!max_tokens) return;
    std::vector<size_t> going(seqs.size());
    for (size_t i = 0; i < seqs.size(); ++i)
        going[i] = i;
    for (;;) {
        // The token each sequence chose ends it or is kept and decoded.
        std::vector<size_t> still;
        for (size_t i : going) {
            BatchSequence &b = seqs[i];
            if (!ignore_eog && tok.is_end_of_generation(next[i])) {
                b.reason = StopReason::EndOfGeneration;
                continue;
            }
            b.sampler->accept(next[i]);
            b.tokens.push_back(next[i]);
            // A finished grammar ends the sequence here, its last token not decoded.
            if (b.sampler->progress() == grammar::Progress::Finished)
                b.reason = StopReason::EndOfGeneration;
            else if (b.tokens.size() < max_tokens)
                still.push_back(i);
        }
        going.swap(still);
        if (going.empty()) return;
        if (session.cancelled())
            fail(VKLLM_ERR_CANCELLED, "batched generation cancelled by vkllm_session_cancel");
        std::vector<uint32_t> ids;
        std::vector<int32_t> tokens;
        for (size_t i : going) {
            ids.push_back(seqs[i].seq);
            tokens.push_back(next[i]);
        }
        session.decode(ids.data(), tokens.data(), ids.size(), logits.data(), argmax.data());
        for (size_t r = 0; r < going.size(); ++r)
            choose(r, going[r]);
    }
}

}  // namespace vkllm::engine
