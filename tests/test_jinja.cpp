// Unit tests of the Jinja interpreter (src/chat): the language as jinja2 has it in
// transformers' environment, JSON in and out, and hostile templates.
#include <gtest/gtest.h>

#include "chat/jinja.h"
#include "chat/json_value.h"
#include "common/error.h"

using namespace vkllm::chat;

namespace {

std::string render(const std::string &source, const std::string &context_json = "{}") {
    RenderOptions options;
    options.now = 1768478400;
    return render_template(source, parse_json(context_json), options);
}

TEST(Jinja, PrintsText) { EXPECT_EQ(render("Hello {{ 'world' }}!"), "Hello world!"); }

}  // namespace
