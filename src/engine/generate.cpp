#include "engine/generate.h"

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

}  // namespace

void generate(Session &session, const std::vector<int32_t> &prompt, const GenerateOptions &o,
              GenerateResult &result) {
    result = GenerateResult{};
    if (prompt.empty())
        fail(VKLLM_ERR_INVALID_ARGUMENT, "generate: the prompt is empty (give at least one token)");
    const Model &model = session.model();
    const tokenizer::Tokenizer &tok = *model.tokenizer();
    size_t n_vocab = model.config().n_vocab;
    Sampler sampler(o.sampling);
    for (int32_t t : prompt)
        sampler.accept(t);

    std::vector<float> logits(n_vocab);
    auto t0 = std::chrono::steady_clock::now();
    auto elapsed = [](std::chrono::steady_clock::time_point since) {
        return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - since)
            .count();
    };
    try {
        session.prefill(o.seq, prompt.data(), prompt.size(), logits.data(), [&](size_t done) {
            return !o.on_prefill || o.on_prefill(done, prompt.size());
        });
    } catch (...) {
        result.prefill_ms = elapsed(t0);
        throw;
    }
    result.n_prompt = prompt.size();
    result.prefill_ms = elapsed(t0);
    // The prefill returned logits; greedy decoding still takes the argmax from them.
    int32_t argmax = int32_t(std::max_element(logits.begin(), logits.end()) - logits.begin());

    tokenizer::StreamDecoder text(tok, o.render_special, false);
    StopFilter filter(o.stop);
    auto t1 = std::chrono::steady_clock::now();
    auto emit = [&](int32_t token, const std::string &released) {
        if (o.on_token && !o.on_token(token, released)) {
            result.reason = StopReason::Cancelled;
            result.decode_ms = elapsed(t1);
            fail(VKLLM_ERR_CANCELLED, "generation cancelled by the token callback after %zu tokens",
                 result.n_generated);
        }
    };
    for (;;) {
        int32_t token = sampler.sample(logits.data(), n_vocab, argmax);
        if (tok.is_end_of_generation(token)) {
            result.reason = StopReason::EndOfGeneration;
            break;
        }
        sampler.accept(token);
        ++result.n_generated;
        bool stopped = false;
        std::string released = filter.push(text.push(token), stopped);
        emit(token, released);
        if (stopped) {
            result.reason = StopReason::StopString;
            break;
        }
        if (result.n_generated >= o.max_tokens) {
            result.reason = StopReason::MaxTokens;
            break;
        }
        uint32_t seq = o.seq;
        session.decode(&seq, &token, 1, sampler.needs_logits() ? logits.data() : nullptr, &argmax);
    }
    if (result.reason != StopReason::StopString) {
        bool stopped = false;
        std::string rest = filter.push(text.flush(), stopped);
        if (!stopped) rest += filter.flush();
        if (!rest.empty()) emit(-1, rest);
    }
    result.decode_ms = elapsed(t1);
}

}  // namespace vkllm::engine
