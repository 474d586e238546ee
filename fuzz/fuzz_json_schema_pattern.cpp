// The JSON Schema `pattern` compiler (src/grammar/json_schema_pattern) on arbitrary bytes as a
// regular expression. It may refuse the input, but only with vkllm::Error; whatever it accepts
// must be a GBNF expression the parser accepts (or refuses only for its size limits), and a
// state must start on the grammar and step through a short string without anything but
// vkllm::Error escaping. The limits are smaller than the converter's so that runs stay fast.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "common/error.h"
#include "grammar/gbnf_parser.h"
#include "grammar/grammar_state.h"
#include "grammar/json_schema_pattern.h"
#include "grammar/json_schema_rules.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    using namespace vkllm::grammar;
    std::string pattern(reinterpret_cast<const char *>(data), size);
    schema::PatternLimits limits;
    limits.max_bytes = 512;
    limits.max_depth = 8;
    limits.max_count = 64;
    std::string body;
    try {
        body = schema::pattern_to_gbnf(pattern, "#", "char", limits);
    } catch (const vkllm::Error &e) {
        if (e.status() != VKLLM_ERR_UNSUPPORTED && e.status() != VKLLM_ERR_INVALID_ARGUMENT)
            std::abort();
        return 0;
    }
    std::vector<std::string> deps;
    std::string text = "root ::= \"\\\"\" " + body +
                       " \"\\\"\"\nchar ::= " + *schema::primitive_rule("char", deps) + "\n";
    GbnfLimits gbnf_limits;
    gbnf_limits.max_elements = 1 << 16;
    std::shared_ptr<const Grammar> grammar;
    try {
        grammar = std::make_shared<const Grammar>(parse_gbnf(text, "root", gbnf_limits));
    } catch (const vkllm::Error &e) {
        std::string message = e.what();
        if (message.find("limit") == std::string::npos &&
            message.find("grows past") == std::string::npos &&
            message.find("rules (repetitions") == std::string::npos)
            std::abort();  // the compiler wrote GBNF that does not parse: a bug
        return 0;
    }
    try {
        GrammarState state(grammar);
        state.accept_bytes("\"ab-12_x\\n\\\"\xC3\xA9 Z\"");
    } catch (const vkllm::Error &) {
    }
    return 0;
}
