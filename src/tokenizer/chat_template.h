// Chat templates: the conversation markup of the model families vkllm serves, rendered
// natively. The GGUF's tokenizer.chat_template is Jinja; rather than run Jinja, the family is
// recognised from it (or named by the caller) and rendered as its template would.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace vkllm::tokenizer {

enum class ChatFormat {
    ChatML,   // <|im_start|>role\n...<|im_end|>: Qwen2, Qwen2.5, Qwen3
    Llama3,   // <|start_header_id|>role<|end_header_id|>\n\n...<|eot_id|>
    Harmony,  // GPT-OSS: <|start|>role<|message|>...<|end|>, with channels
};

// "chatml" (also "qwen2", "qwen"), "llama3", "harmony" (also "gpt-oss").
std::optional<ChatFormat> chat_format_by_name(std::string_view name);
std::optional<ChatFormat> detect_chat_format(std::string_view jinja);

struct ChatMessage {
    std::string_view role;  // "system", "user", "assistant" (harmony also "developer")
    std::string_view content;
};

// `model_template` supplies details some families vary on (Qwen2.5's default system prompt);
// `date` is harmony's "Current date" (YYYY-MM-DD; empty for today). With add_assistant the text
// ends with the opening of an assistant turn, ready for generation.
std::string render_chat(ChatFormat format, const std::vector<ChatMessage> &messages,
                        bool add_assistant, std::string_view model_template,
                        const std::string &date = "");

}  // namespace vkllm::tokenizer
