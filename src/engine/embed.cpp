#include "engine/embed.h"

#include <algorithm>
#include <cmath>

#include "common/error.h"

namespace vkllm::engine {

namespace {

// Pools an input's rows (n x d, from its step's hidden states) into `out`, in double.
void pool(const float *rows, size_t n, uint32_t d, const EmbedRequest &r, float *out) {
    if (r.pooling == Pooling::None) {
        std::copy(rows, rows + n * d, out);
        if (r.normalize) {
            for (size_t i = 0; i < n; ++i) {
                double sq = 0;
                for (uint32_t j = 0; j < d; ++j)
                    sq += double(out[i * d + j]) * out[i * d + j];
                double scale = sq > 0 ? 1 / std::sqrt(sq) : 1;
                for (uint32_t j = 0; j < d; ++j)
                    out[i * d + j] = float(out[i * d + j] * scale);
            }
        }
        return;
    }
    std::vector<double> v(d, 0.0);
    if (r.pooling == Pooling::Mean) {
        for (size_t i = 0; i < n; ++i)
            for (uint32_t j = 0; j < d; ++j)
                v[j] += rows[i * d + j];
        for (double &x : v)
            x /= double(n);
    } else {
        const float *row = rows + (r.pooling == Pooling::Cls ? 0 : (n - 1) * d);
        for (uint32_t j = 0; j < d; ++j)
            v[j] = row[j];
    }
    double scale = 1;
    if (r.normalize) {
        double sq = 0;
        for (double x : v)
            sq += x * x;
        if (sq > 0) scale = 1 / std::sqrt(sq);
    }
    for (uint32_t j = 0; j < d; ++j)
        out[j] = float(v[j] * scale);
}

}  // namespace

Pooling model_pooling(const Model &model) {
    uint32_t p = model.config().pooling;
    return p <= uint32_t(Pooling::Last) ? Pooling(p) : Pooling::None;
}

uint64_t embed_size(const Model &model, const std::vector<std::vector<int32_t>> &inputs,
                    Pooling pooling) {
    uint64_t rows = 0;
    for (const std::vector<int32_t> &in : inputs)
        rows += pooling == Pooling::None ? in.size() : 1;
    return rows * model.config().n_embd;
}

void embed(Session &session, const std::vector<std::vector<int32_t>> &inputs,
           const EmbedRequest &request, float *out) {
    const Model &model = session.model();
    const models::ModelConfig &c = model.config();
    const SessionOptions &o = session.options();
    // An encoder's input is one step; a decoder's runs in chunks of n_batch on one sequence.
    uint32_t limit = std::min(o.n_ctx, model.max_positions());
    for (size_t i = 0; i < inputs.size(); ++i) {
        const std::vector<int32_t> &in = inputs[i];
        if (in.empty()) fail(VKLLM_ERR_INVALID_ARGUMENT, "input %zu has no tokens", i);
        if (in.size() > limit)
            fail(VKLLM_ERR_CONTEXT_FULL,
                 "input %zu has %zu tokens; the session holds %u per sequence (the model %u "
                 "positions)",
                 i, in.size(), o.n_ctx, model.max_positions());
        for (int32_t id : in)
            if (id < 0 || id >= int32_t(c.n_vocab))
                fail(VKLLM_ERR_INVALID_ARGUMENT,
                     "input %zu: token %d is outside the vocabulary (0 to %u)", i, id,
                     c.n_vocab - 1);
    }
    for (uint32_t s = 0; s < o.n_seq; ++s)
        session.truncate(s, 0);
    uint32_t d = c.n_embd;
    std::vector<float> hidden;
    size_t next = 0;
    float *dst = out;
    while (next < inputs.size()) {
        // As many whole inputs as one step holds (one per sequence, n_batch tokens in all), or
        // a decoder's longer input alone, chunk by chunk.
        size_t first = next, tokens = 0;
        while (next < inputs.size() && next - first < o.n_seq &&
               tokens + inputs[next].size() <= o.n_batch)
            tokens += inputs[next++].size();
        std::vector<int32_t> ids;
        std::vector<uint32_t> seqs;
        if (next == first) {  // a decoder's input longer than a step (an encoder's never is)
            const std::vector<int32_t> &in = inputs[next++];
            hidden.resize(in.size() * size_t(d));
            for (size_t done = 0; done < in.size();) {
                size_t len = std::min<size_t>(o.n_batch, in.size() - done);
                seqs.assign(len, 0);
                session.hidden_states(in.data() + done, seqs.data(), len, hidden.data() + done * d);
                done += len;
            }
            session.truncate(0, 0);
            pool(hidden.data(), in.size(), d, request, dst);
            dst += request.pooling == Pooling::None ? in.size() * d : d;
            continue;
        }
        for (size_t k = first; k < next; ++k) {
            ids.insert(ids.end(), inputs[k].begin(), inputs[k].end());
            seqs.insert(seqs.end(), inputs[k].size(), uint32_t(k - first));
        }
        hidden.resize(ids.size() * size_t(d));
        session.hidden_states(ids.data(), seqs.data(), ids.size(), hidden.data());
        const float *rows = hidden.data();
        for (size_t k = first; k < next; ++k) {
            size_t n = inputs[k].size();
            pool(rows, n, d, request, dst);
            rows += n * d;
            dst += request.pooling == Pooling::None ? n * d : d;
            session.truncate(uint32_t(k - first), 0);
        }
    }
}

}  // namespace vkllm::engine
