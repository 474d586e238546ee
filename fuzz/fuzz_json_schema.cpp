// The JSON Schema converter (src/grammar/json_schema) on arbitrary bytes as a schema. It may
// refuse the input, but only with vkllm::Error and never with VKLLM_ERR_INTERNAL (the status
// of a grammar the converter wrote and could not parse back: a converter bug). Whatever it
// accepts must be GBNF the parser accepts, and the grammar must be usable: a state starts on it
// and steps through a short JSON text without anything but vkllm::Error escaping. The limits are
// smaller than the library's so that runs stay fast.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>

#include "common/error.h"
#include "grammar/gbnf_parser.h"
#include "grammar/grammar_state.h"
#include "grammar/json_schema.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    using namespace vkllm::grammar;
    std::string schema(reinterpret_cast<const char *>(data), size);
    JsonSchemaLimits limits;
    limits.max_depth = 16;
    limits.max_rules = 2000;
    limits.max_enum = 256;
    limits.max_count = 256;
    limits.max_bytes = 1 << 18;
    limits.max_visits = 20000;
    std::string gbnf;
    try {
        gbnf = json_schema_to_gbnf(schema, limits);
    } catch (const vkllm::Error &e) {
        if (e.status() == VKLLM_ERR_INTERNAL) std::abort();
        return 0;
    }
    std::shared_ptr<const Grammar> grammar;
    try {
        grammar = std::make_shared<const Grammar>(parse_gbnf(gbnf));
    } catch (const vkllm::Error &) {
        std::abort();
    }
    try {
        GrammarState state(grammar);
        state.accept_bytes("{\"a\": [1, \"x\", null, true], \"b\": -2.5}");
    } catch (const vkllm::Error &) {
    }
    return 0;
}
