// Rendering helpers shared by the Jinja interpreter's unit tests (test_jinja*.cpp): a fixed
// clock, so strftime_now is reproducible, and the check that a render fails with a given error.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "chat/jinja.h"
#include "chat/json_value.h"
#include "common/error.h"

namespace jinja_test {

inline vkllm::chat::RenderOptions fixed_time() {
    vkllm::chat::RenderOptions options;
    options.now = 1768478400;  // 2026-01-15T12:00:00 UTC
    return options;
}

inline std::string render(const std::string &source, const std::string &context_json = "{}") {
    return vkllm::chat::render_template(source, vkllm::chat::parse_json(context_json),
                                        fixed_time());
}

// The render fails with a vkllm::Error whose message contains `what`.
inline void expect_error(const std::string &source, const std::string &what,
                         const vkllm::chat::RenderOptions &options = fixed_time()) {
    try {
        std::string out =
            vkllm::chat::render_template(source, vkllm::chat::parse_json("{}"), options);
        ADD_FAILURE() << "rendered without error: " << source.substr(0, 200) << " -> "
                      << out.substr(0, 200);
    } catch (const vkllm::Error &e) {
        EXPECT_NE(std::string(e.what()).find(what), std::string::npos)
            << source.substr(0, 200) << ": " << e.what();
    }
}

}  // namespace jinja_test
