// The tune file's reader (engine/tune_file.h) on arbitrary bytes, against a fixed identity. It
// may refuse an input, with a reason, but never crash, leak or throw. Also checked: what it
// accepts formats to a text that parses to the same winners, and formatting is a fixed point
// (the same winners give the same bytes).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "tune_file_identity.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    using namespace vkllm::engine;
    static const TuneIdentity id = fuzz_tune_identity();
    std::string_view text(reinterpret_cast<const char *>(data), size);
    std::string why;
    auto winners = parse_tune_file(text, id, &why);
    if (!winners) {
        if (why.empty() || why.find('\n') != std::string::npos) std::abort();
        return 0;
    }
    std::string formatted = format_tune_file(id, *winners);
    auto again = parse_tune_file(formatted, id, &why);
    if (!again || *again != *winners) std::abort();
    if (format_tune_file(id, *again) != formatted) std::abort();
    return 0;
}
