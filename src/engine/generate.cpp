#include "engine/generate.h"

#include <algorithm>
#include <chrono>

namespace vkllm::engine {

namespace {

// Text is released once no stop string could still begin inside it.
class StopFilter {
  public:
    explicit StopFilter(const std::vector<std::string> &stop) : stop_(stop) {}

    // Appends text; returns what can be released, and whether a stop string was completed
    // (the text before it is released, the stop string and anything after are not).
    std::string push(std::string_view text, bool &stopped) {
        held_ += text;
        stopped = false;
        size_t cut = std::string::npos;
        for (const std::string &s : stop_) {
            size_t at = s.empty() ? std::string::npos : held_.find(s);
            if (at != std::string::npos && at < cut) cut = at;
        }
        if (cut != std::string::npos) {
            stopped = true;
            std::string out = held_.substr(0, cut);
            held_.clear();
            return out;
        }
        size_t keep = 0;  // the longest tail of held_ that is a proper prefix of a stop string
        for (const std::string &s : stop_)
            for (size_t n = std::min(s.size() - (s.empty() ? 0 : 1), held_.size()); n > keep; --n)
                if (held_.compare(held_.size() - n, n, s, 0, n) == 0) {
                    keep = n;
                    break;
                }
        std::string out = held_.substr(0, held_.size() - keep);
        held_.erase(0, held_.size() - keep);
        return out;
    }
    std::string flush() {
        std::string out;
        out.swap(held_);
        return out;
    }

  private:
    const std::vector<std::string> &stop_;
    std::string held_;
};

// Decode steps to chain after `generated` tokens (sampled ones only where they are drawn on the
// device, `on_device`): none beyond the token limit, at most a
// prefill chunk (a sliding-window ring then still holds every key a rewind keeps), and, in a
// streaming session, none past the point where the ring wraps (from then on a rewind of more
// than one position would lose keys).
// The steps per submit asked for. By default GPUs chain: there a step is short next to a round
// trip through the host. On a CPU device (lavapipe) chaining measured no gain and would stream
// in bursts.
uint32_t steps_wanted(const Session &session, const GenerateOptions &o) {
    if (o.steps_per_submit) return o.steps_per_submit;
    return session.model().context().device().info().type == VKLLM_DEVICE_CPU
               ? 1
               : kDefaultStepsPerSubmit;
}

uint32_t chain_steps(const Session &session, const GenerateOptions &o, const Sampler &sampler,
                     size_t generated, bool on_device) {
    uint32_t wanted = steps_wanted(session, o);
    if (wanted <= 1 || (sampler.needs_logits() && !on_device)) return 1;
    const SessionOptions &so = session.options();
    uint64_t steps = std::min<uint64_t>(wanted, o.max_tokens - generated);
    steps = std::min<uint64_t>(steps, std::min(Session::kMaxChainSteps, so.n_batch));
    uint32_t past = session.position(o.seq);
    steps = past < so.n_ctx ? std::min<uint64_t>(steps, so.n_ctx - past) : 1;
    return uint32_t(std::max<uint64_t>(steps, 1));
}

}  // namespace

void generate(Session &session, const std::vector<int32_t> &prompt, const GenerateOptions &o,
              GenerateResult &result) {
    result = GenerateResult{};
    if (prompt.empty())
        fail(VKLLM_ERR_INVALID_ARGUMENT, "generate: the prompt is empty (give at least one token)");
    const Model &model = session.model();
    const tokenizer::Tokenizer &tok = *model.tokenizer();
    // Logits have a row per embedding row, but only the tokenizer's ids are candidates: the
    // rows past them (a padded vocabulary) have no text (Model::n_tokens).
    size_t n_candidates = model.n_tokens();
    Sampler sampler(o.sampling);
    result.seed = sampler.seed();
    result.grammar_progress = sampler.progress();  // nothing generated yet: the empty text's
    TokenLogprobs logprobs(o.top_logprobs, bool(o.on_logprobs));
    for (int32_t t : prompt)
        sampler.accept_prompt(t);
    // Where steps are chained, sampled tokens after the first are drawn on the device where its
    // kernel takes the options, at any chain length, from the host sampler's stream (philox.h):
    // its draw counter goes on there, so that the chain's length changes no token. Unchained
    // steps (a CPU device's default) draw on the host, which is faster there (lavapipe's one
    // workgroup per row) and draws the same numbers from the same chain: the same tokens but
    // where a draw falls within float rounding of a boundary between two. Not where
    // log-probabilities are reported: a sampled token's may need its row's logits, which only
    // the host keeps.
    DeviceSamplingStep on_device;
    const bool device_draws = sampler.needs_logits() && !o.on_logprobs &&
                              steps_wanted(session, o) > 1 &&
                              device_sampling_fits(o.sampling, n_candidates);
    if (device_draws) add_sampling_row(on_device.rows, o.sampling, sampler.seed(), 0, n_candidates);

    std::vector<float> logits(model.config().n_vocab);
    auto t0 = std::chrono::steady_clock::now();
    auto elapsed = [](std::chrono::steady_clock::time_point since) {
        return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - since)
            .count();
    };
    // max_tokens 0 only prefills: the prompt goes into the cache, nothing is sampled, so the
    // prefill computes no logits either.
    bool sample = o.max_tokens > 0;
    try {
        session.prefill(
            o.seq, prompt.data(), prompt.size(), sample ? logits.data() : nullptr,
            [&](size_t done) { return !o.on_prefill || o.on_prefill(done, prompt.size()); },
            sample ? logprobs.request() : nullptr);
    } catch (...) {
        result.prefill_ms = elapsed(t0);
        throw;
    }
    result.n_prompt = prompt.size();
    result.prefill_ms = elapsed(t0);
    if (!sample) {
        result.reason = StopReason::MaxTokens;
        return;
    }
    // The prefill returned logits; greedy decoding still takes the argmax from them.
    int32_t argmax = int32_t(std::max_element(logits.begin(), logits.begin() + long(n_candidates)) -
                             logits.begin());

    tokenizer::StreamDecoder text(tok, o.render_special, false);
    StopFilter filter(o.stop);
    uint32_t seq = o.seq;
    // Tokens a chain of greedy (or device-sampled) steps chose ahead: `next` is the next one to
    // emit. The chain decoded every one of them but the last, from position `chain_start` on.
    std::vector<int32_t> chained;
    size_t next = 0;
    uint32_t chain_start = 0;
    // Ending at a chained token leaves the cache as step-by-step decoding would: the tokens
    // before it decoded, it and the rest not.
    auto rewind = [&] {
        if (!chained.empty()) session.truncate(seq, chain_start + uint32_t(next));
    };
    // Under a grammar, the text on_token received: a stop string, or a cancel while text is
    // held back, leaves it shorter than what the grammar accepted, so it is parsed again.
    const bool constrained = bool(o.sampling.grammar);
    std::string delivered;
    auto progress = [&](bool cut) {
        return cut ? sampler.progress_of(delivered) : sampler.progress();
    };
    auto t1 = std::chrono::steady_clock::now();
    auto cancel = [&](const char *by) {
        rewind();
        result.grammar_progress = progress(!o.stop.empty());
        result.reason = StopReason::Cancelled;
        result.decode_ms = elapsed(t1);
        fail(VKLLM_ERR_CANCELLED, "generation cancelled by %s after %zu tokens", by,
             result.n_generated);
    };
    auto emit = [&](int32_t token, const std::string &released) {
        if (constrained) delivered += released;
        if (o.on_token && !o.on_token(token, released)) cancel("the token callback");
    };
    for (;;) {
        // The row of the last step's log-probabilities that is this token's.
        size_t row = next < chained.size() ? next : 0;
        if (next >= chained.size() && sampler.needs_logits())
            logprobs.keep_raw(logits.data(), n_candidates);
        int32_t token = next < chained.size() ? chained[next++]
                                              : sampler.sample(logits.data(), n_candidates, argmax);
        if (!o.ignore_eog && tok.is_end_of_generation(token)) {
            result.reason = StopReason::EndOfGeneration;
            break;
        }
        sampler.accept(token);
        ++result.n_generated;
        bool stopped = false;
        std::string released = filter.push(text.push(token), stopped);
        if (o.on_logprobs && !o.on_logprobs(token, logprobs.logprob(token, row), logprobs.top(row)))
            cancel("the logprobs callback");
        emit(token, released);
        if (stopped) {
            result.reason = StopReason::StopString;
            break;
        }
        // A grammar that nothing can follow ends the text as an end token would, without
        // decoding the last token (as if the end token were sampled next).
        if (sampler.progress() == grammar::Progress::Finished) {
            result.reason = StopReason::EndOfGeneration;
            break;
        }
        if (result.n_generated >= o.max_tokens) {
            result.reason = StopReason::MaxTokens;
            break;
        }
        if (next < chained.size()) continue;  // decoded already, and the next one chosen
        if (session.cancelled()) cancel("vkllm_session_cancel");
        chained.clear();
        next = 0;
        uint32_t steps = chain_steps(session, o, sampler, result.n_generated, device_draws);
        if (device_draws) {
            chain_start = session.position(seq);
            chained.resize(steps);
            on_device.history = {sampler.recent()};
            // One draw per token, the first the host's: token k is draw k of the stream.
            on_device.draws = {uint32_t(result.n_generated)};
            session.decode_sampled(&seq, &token, 1, steps, on_device, chained.data(),
                                   logprobs.request());
        } else if (steps > 1) {
            chain_start = session.position(seq);
            chained.resize(steps);
            session.decode_greedy(&seq, &token, 1, steps, chained.data(), logprobs.request());
        } else {
            session.decode(&seq, &token, 1, sampler.needs_logits() ? logits.data() : nullptr,
                           &argmax, logprobs.request());
        }
    }
    rewind();
    if (result.reason != StopReason::StopString) {
        bool stopped = false;
        std::string rest = filter.push(text.flush(), stopped);
        if (!stopped) rest += filter.flush();
        if (!rest.empty()) emit(-1, rest);
    }
    result.grammar_progress = progress(result.reason == StopReason::StopString);
    result.decode_ms = elapsed(t1);
}

}  // namespace vkllm::engine
