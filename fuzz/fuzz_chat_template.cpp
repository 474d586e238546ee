// Chat-template application on arbitrary messages. The input is split at NUL bytes: the first
// field picks the template (by name, or by a model's Jinja text),
// the rest alternate role and content. The last byte's low bit asks for the assistant turn.
#include <string>
#include <vector>

#include "vkllm.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size == 0) return 0;
    std::vector<std::string> fields(1);
    for (size_t i = 0; i + 1 < size; ++i) {
        if (data[i] == 0)
            fields.emplace_back();
        else
            fields.back().push_back(char(data[i]));
    }
    int32_t add_assistant = data[size - 1] & 1;
    static const char *names[] = {"chatml",
                                  "qwen2",
                                  "llama3",
                                  "harmony",
                                  "gpt-oss",
                                  "qwen",
                                  "gemma",
                                  "llama2",
                                  "mistral-v1",
                                  "mistral-v3",
                                  "mistral-v7-tekken",
                                  "phi3",
                                  "phi4",
                                  "phi4-mini",
                                  "deepseek3",
                                  "deepseek-r1",
                                  "command-r",
                                  "granite",
                                  "chatglm3",
                                  "mistral-v3-tekken",
                                  "chatglm4",
                                  "llama4",
                                  "lfm2",
                                  "kimi-k2",
                                  "qwen2.5"};
    const size_t n_names = sizeof names / sizeof names[0];
    const std::string &head = fields[0];
    const char *name = nullptr;
    std::string model_template;
    // A first byte below n_names names a template (the rest of the field is the model's
    // template, which adds details); anything else is a model's template to recognise, or to
    // refuse.
    if (!head.empty() && uint8_t(head[0]) < n_names) {
        name = names[uint8_t(head[0])];
        model_template = head.substr(1);
    } else {
        model_template = head;
    }
    std::vector<vkllm_chat_message> messages;
    for (size_t i = 1; i + 1 < fields.size(); i += 2)
        messages.push_back(vkllm_chat_message{fields[i].c_str(), fields[i + 1].c_str()});
    std::vector<char> buf(256);
    size_t length = 0;
    const char *tmpl = model_template.empty() ? nullptr : model_template.c_str();
    vkllm_status st = vkllm_chat_apply_template(name, tmpl, messages.data(), messages.size(),
                                                add_assistant, buf.data(), buf.size(), &length);
    if (st == VKLLM_ERR_BUFFER_TOO_SMALL) {
        buf.resize(length + 1);
        st = vkllm_chat_apply_template(name, tmpl, messages.data(), messages.size(), add_assistant,
                                       buf.data(), buf.size(), &length);
        if (st != VKLLM_OK || buf[length] != '\0') __builtin_trap();
    }
    return 0;
}
