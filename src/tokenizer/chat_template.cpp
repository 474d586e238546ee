#include "tokenizer/chat_template.h"

#include <ctime>

namespace vkllm::tokenizer {

namespace {

std::string_view trim(std::string_view s) {
    const char *ws = " \t\n\r\f\v";
    size_t b = s.find_first_not_of(ws);
    if (b == std::string_view::npos) return {};
    return s.substr(b, s.find_last_not_of(ws) - b + 1);
}

// Qwen's and SmolLM2's templates write a default system turn when the conversation has none;
// its text is a literal in the Jinja source, e.g. '<|im_start|>system\nYou are Qwen,
// ...<|im_end|>\n', where the newline after "system" is the escape \n (Qwen) or a real line
// break inside the string literal (SmolLM2).
std::string chatml_default_system(std::string_view jinja) {
    const std::string_view open = "<|im_start|>system";
    for (size_t pos = 0; (pos = jinja.find(open, pos)) != std::string_view::npos;) {
        pos += open.size();
        if (jinja.substr(pos, 2) == "\\n")
            pos += 2;
        else if (jinja.substr(pos, 1) == "\n")
            pos += 1;
        else
            continue;
        size_t end = jinja.find("<|im_end|>", pos);
        if (end == std::string_view::npos) break;
        std::string_view text = jinja.substr(pos, end - pos);
        // Only a plain literal qualifies, not an expression such as ' + messages[0].content.
        if (text.find_first_of("'\"{}+") == std::string_view::npos) {
            std::string out;
            for (size_t i = 0; i < text.size(); ++i) {
                if (text[i] == '\\' && i + 1 < text.size() && text[i + 1] == 'n') {
                    out += '\n';
                    ++i;
                } else {
                    out += text[i];
                }
            }
            return out;
        }
    }
    return "";
}

std::string today() {
    std::time_t now = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&now, &tm);
    char buf[16];
    std::strftime(buf, sizeof buf, "%Y-%m-%d", &tm);
    return buf;
}

std::string render_chatml(const std::vector<ChatMessage> &messages, bool add_assistant,
                          std::string_view jinja) {
    std::string out;
    if (messages.empty() || messages[0].role != "system") {
        std::string def = chatml_default_system(jinja);
        if (!def.empty()) out += "<|im_start|>system\n" + def + "<|im_end|>\n";
    }
    for (const ChatMessage &m : messages) {
        out += "<|im_start|>";
        out += m.role;
        out += "\n";
        out += m.content;
        out += "<|im_end|>\n";
    }
    if (add_assistant) out += "<|im_start|>assistant\n";
    return out;
}

// BOS is not written: tokenizing with VKLLM_TOKENIZE_ADD_SPECIAL adds it.
std::string render_llama3(const std::vector<ChatMessage> &messages, bool add_assistant) {
    std::string out;
    for (const ChatMessage &m : messages) {
        out += "<|start_header_id|>";
        out += m.role;
        out += "<|end_header_id|>\n\n";
        out += trim(m.content);
        out += "<|eot_id|>";
    }
    if (add_assistant) out += "<|start_header_id|>assistant<|end_header_id|>\n\n";
    return out;
}

// The system turn carries meta information; the caller's system prompt becomes the developer
// turn's instructions; earlier assistant turns are shown as their final answers.
std::string render_harmony(const std::vector<ChatMessage> &messages, bool add_assistant,
                           const std::string &date) {
    std::string out =
        "<|start|>system<|message|>You are ChatGPT, a large language model trained "
        "by OpenAI.\nKnowledge cutoff: 2024-06\nCurrent date: ";
    out += date.empty() ? today() : date;
    out +=
        "\n\nReasoning: medium\n\n# Valid channels: analysis, commentary, final. Channel must "
        "be included for every message.<|end|>";
    size_t first = 0;
    if (!messages.empty() && (messages[0].role == "system" || messages[0].role == "developer")) {
        out += "<|start|>developer<|message|># Instructions\n\n";
        out += messages[0].content;
        out += "\n\n<|end|>";
        first = 1;
    }
    for (size_t i = first; i < messages.size(); ++i) {
        const ChatMessage &m = messages[i];
        if (m.role == "assistant") {
            out += "<|start|>assistant<|channel|>final<|message|>";
            out += m.content;
            // A closing assistant turn with nothing to generate after it ends the exchange.
            out += (i + 1 == messages.size() && !add_assistant) ? "<|return|>" : "<|end|>";
        } else {
            out += "<|start|>";
            out += m.role;
            out += "<|message|>";
            out += m.content;
            out += "<|end|>";
        }
    }
    if (add_assistant) out += "<|start|>assistant";
    return out;
}

}  // namespace

std::optional<ChatFormat> chat_format_by_name(std::string_view name) {
    if (name == "chatml" || name == "qwen2" || name == "qwen") return ChatFormat::ChatML;
    if (name == "llama3") return ChatFormat::Llama3;
    if (name == "harmony" || name == "gpt-oss") return ChatFormat::Harmony;
    return std::nullopt;
}

std::optional<ChatFormat> detect_chat_format(std::string_view jinja) {
    if (jinja.find("<|channel|>") != std::string_view::npos &&
        jinja.find("<|start|>") != std::string_view::npos)
        return ChatFormat::Harmony;
    if (jinja.find("<|start_header_id|>") != std::string_view::npos &&
        jinja.find("<|eot_id|>") != std::string_view::npos)
        return ChatFormat::Llama3;
    if (jinja.find("<|im_start|>") != std::string_view::npos) return ChatFormat::ChatML;
    return std::nullopt;
}

std::string render_chat(ChatFormat format, const std::vector<ChatMessage> &messages,
                        bool add_assistant, std::string_view model_template,
                        const std::string &date) {
    switch (format) {
        case ChatFormat::ChatML:
            return render_chatml(messages, add_assistant, model_template);
        case ChatFormat::Llama3:
            return render_llama3(messages, add_assistant);
        case ChatFormat::Harmony:
            return render_harmony(messages, add_assistant, date);
    }
    return "";
}

}  // namespace vkllm::tokenizer
