// The reply parser on arbitrary model output. The first byte picks the format (and whether the
// reply starts inside a reasoning block); the rest is the reply, pushed in pieces split at
// 0xFF bytes. The parts must be those of the same reply pushed whole: a difference traps.
#include <string>
#include <vector>

#include "chat/reply_parser.h"

using vkllm::chat::ReplyFormat;
using vkllm::chat::ReplyParser;
using vkllm::chat::ReplyPart;

namespace {

std::string parts(ReplyFormat format, bool in_reasoning, const std::vector<std::string> &pieces) {
    ReplyParser p(format, in_reasoning);
    std::string reasoning, content, calls;
    auto take = [&](const ReplyPart &part) {
        reasoning += part.reasoning;
        content += part.content;
        for (const auto &c : part.tool_calls)
            calls += c.id + '\1' + c.name + '\1' + c.arguments + '\2';
    };
    for (const std::string &piece : pieces)
        take(p.push(piece));
    take(p.finish());
    return reasoning + '\3' + content + '\3' + calls;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size == 0) return 0;
    static const ReplyFormat formats[] = {ReplyFormat::Plain, ReplyFormat::Hermes,
                                          ReplyFormat::Mistral, ReplyFormat::Llama3,
                                          ReplyFormat::Harmony};
    ReplyFormat format = formats[data[0] % 5];
    bool in_reasoning = data[0] & 0x80;
    std::vector<std::string> pieces(1);
    std::string whole;
    for (size_t i = 1; i < size; ++i) {
        if (data[i] == 0xFF) {
            pieces.emplace_back();
        } else {
            pieces.back().push_back(char(data[i]));
            whole.push_back(char(data[i]));
        }
    }
    if (parts(format, in_reasoning, pieces) != parts(format, in_reasoning, {whole}))
        __builtin_trap();
    return 0;
}
