// JSON text <-> template values. The C API takes tool-call arguments, tools and extra
// variables as JSON text; templates print values back with `tojson`, which transformers defines
// as Python's json.dumps(x, ensure_ascii=False, indent=..., separators=..., sort_keys=...), so
// the writer reproduces json.dumps byte for byte.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "chat/jinja_value.h"

namespace vkllm::chat {

// Objects become insertion-ordered dicts (a repeated key keeps its first place and its last
// value, as Python's json does), integers that fit int64 ints, other numbers floats. Throws
// vkllm::Error (VKLLM_ERR_INVALID_ARGUMENT) naming the byte offset of the first error. Nesting
// deeper than max_depth is refused.
Value parse_json(std::string_view text, int max_depth = 128);

struct JsonOptions {
    bool ensure_ascii = false;
    std::optional<std::string> indent;  // the text of one level; none: everything on one line
    std::string item_separator = ", ";  // json.dumps: ", " without indent, "," with it
    std::string key_separator = ": ";
    bool sort_keys = false;
    size_t max_bytes = size_t(16) << 20;
};

// json.dumps(v). Values JSON cannot hold (undefined, namespaces, callables) raise TypeError's
// message, as do dict keys other than str, int, float, bool and None.
std::string to_json(const Value &v, const JsonOptions &options);

}  // namespace vkllm::chat
