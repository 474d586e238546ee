#include "stop_strings.h"

#include <algorithm>

namespace serve {

StopStrings::StopStrings(std::vector<std::string> stops) {
    for (auto &s : stops)
        if (!s.empty()) stops_.push_back(std::move(s));
}

StopStrings::Result StopStrings::push(std::string_view text) {
    Result r;
    if (stopped_) return r;
    held_ += text;
    size_t first = std::string::npos;
    for (const auto &s : stops_)
        first = std::min(first, held_.find(s));
    if (first != std::string::npos) {
        r.text = held_.substr(0, first);
        r.stopped = stopped_ = true;
        held_.clear();
        return r;
    }
    // The longest tail of the stream that a stop string starts with. Stop strings are whole
    // UTF-8, so that tail starts on a character boundary and the text before it is whole too.
    size_t keep = 0;
    for (const auto &s : stops_) {
        for (size_t n = std::min(s.size() - 1, held_.size()); n > keep; --n) {
            if (held_.compare(held_.size() - n, n, s, 0, n) == 0) {
                keep = n;
                break;
            }
        }
    }
    r.text = held_.substr(0, held_.size() - keep);
    held_.erase(0, held_.size() - keep);
    return r;
}

std::string StopStrings::flush() {
    std::string out;
    if (!stopped_) out.swap(held_);
    return out;
}

}  // namespace serve
