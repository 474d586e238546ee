#include "prompt.h"

namespace serve {

std::vector<int32_t> tokenize(const vkllm_tokenizer *tokenizer, const std::string &text,
                              uint32_t flags) {
    size_t n = 0;
    vkllm_tokenizer_encode(tokenizer, text.data(), text.size(), flags, nullptr, 0, &n);
    std::vector<int32_t> ids(n);
    if (vkllm_tokenizer_encode(tokenizer, text.data(), text.size(), flags, ids.data(), ids.size(),
                               &n) != VKLLM_OK)
        throw std::runtime_error(std::string("tokenizing failed: ") + vkllm_last_error());
    ids.resize(n);
    return ids;
}

std::string detokenize(const vkllm_tokenizer *tokenizer, const std::vector<int32_t> &tokens,
                       bool special) {
    const uint32_t flags = special ? VKLLM_DETOKENIZE_SPECIAL : 0;
    size_t len = 0;
    vkllm_status s =
        vkllm_tokenizer_decode(tokenizer, tokens.data(), tokens.size(), flags, nullptr, 0, &len);
    if (s != VKLLM_OK && s != VKLLM_ERR_BUFFER_TOO_SMALL) return "";
    std::string buf(len + 1, '\0');
    if (vkllm_tokenizer_decode(tokenizer, tokens.data(), tokens.size(), flags, buf.data(),
                               buf.size(), &len) != VKLLM_OK)
        return "";
    buf.resize(len);
    return buf;
}

namespace {

// The template's text for the messages, with or without the tools.
std::string render(const ServerContext &ctx, const std::string &messages_json,
                   const std::string &tools_json) {
    vkllm_chat_params p;
    vkllm_chat_params_init(&p);
    p.model = ctx.model;
    p.template_name = ctx.chat_template.empty() ? nullptr : ctx.chat_template.c_str();
    p.tools = tools_json.empty() ? nullptr : tools_json.c_str();
    p.add_generation_prompt = 1;
    size_t len = 0;
    vkllm_status s = vkllm_chat_render_json(&p, messages_json.c_str(), nullptr, 0, &len);
    std::string text;
    if (s == VKLLM_ERR_BUFFER_TOO_SMALL) {
        text.assign(len + 1, '\0');
        s = vkllm_chat_render_json(&p, messages_json.c_str(), text.data(), text.size(), &len);
        text.resize(len);
    }
    if (s != VKLLM_OK)
        throw RequestError(
            std::string("the chat template fails on these messages: ") + vkllm_last_error(),
            "messages");
    return text;
}

}  // namespace

ChatPrompt chat_prompt(const ServerContext &ctx, const ChatRequest &request) {
    const std::string text = render(ctx, request.messages_json, request.tools_json);
    // As `vkllm chat --tools` checks it, on a first turn (a template may write the tools only
    // there): tools the template does not write would never reach the model.
    if (!request.tools_json.empty()) {
        const std::string first = R"([{"role": "user", "content": "Hello"}])";
        if (render(ctx, first, request.tools_json) == render(ctx, first, ""))
            throw RequestError(
                "the model's chat template does not write tools into the prompt, "
                "so the model would never see them",
                "tools", "unsupported_value");
    }
    // As `vkllm run --chat` (tools/generation.cpp's chat_ids): special tokens parsed, BOS put in
    // front where the model asks for one and the template did not write it.
    ChatPrompt out;
    out.tokens = tokenize(ctx.tokenizer, text, VKLLM_TOKENIZE_PARSE_SPECIAL);
    vkllm_tokenizer_info info;
    info.struct_size = sizeof info;
    if (vkllm_tokenizer_get_info(ctx.tokenizer, &info) == VKLLM_OK && info.add_bos &&
        info.bos >= 0 && (out.tokens.empty() || out.tokens[0] != info.bos))
        out.tokens.insert(out.tokens.begin(), info.bos);
    out.opens_reasoning = vkllm_prompt_opens_reasoning(text.c_str()) != 0;
    return out;
}

std::vector<int32_t> completion_prompt(const ServerContext &ctx, const CompletionRequest &r,
                                       std::string *text) {
    if (r.prompt_is_tokens) {
        *text = detokenize(ctx.tokenizer, r.prompt_tokens, true);
        return r.prompt_tokens;
    }
    *text = r.prompt_text;
    // As llama-server: the model's BOS added, special tokens' text read as those tokens.
    std::vector<int32_t> ids = tokenize(ctx.tokenizer, r.prompt_text,
                                        VKLLM_TOKENIZE_ADD_SPECIAL | VKLLM_TOKENIZE_PARSE_SPECIAL);
    if (ids.empty()) throw RequestError("'prompt' holds no tokens", "prompt");
    return ids;
}

std::shared_ptr<const vkllm_grammar> schema_grammar(const ServerContext &ctx,
                                                    const std::string &schema) {
    vkllm_grammar *g = nullptr;
    if (vkllm_grammar_create_from_json_schema(ctx.tokenizer, schema.c_str(), &g) != VKLLM_OK)
        throw RequestError(std::string("the JSON schema cannot be enforced: ") + vkllm_last_error(),
                           "response_format.json_schema.schema");
    return std::shared_ptr<const vkllm_grammar>(
        g, [](const vkllm_grammar *p) { vkllm_grammar_destroy(const_cast<vkllm_grammar *>(p)); });
}

void fit_to_context(const ServerContext &ctx, CommonFields &common, const char *prompt_param) {
    GenerationRequest &g = common.generation;
    const size_t n_ctx = ctx.engine->context_size();
    const size_t n_prompt = g.prompt.size();
    if (n_prompt >= n_ctx)
        throw RequestError("the prompt has " + std::to_string(n_prompt) +
                               " tokens; the context holds " + std::to_string(n_ctx) +
                               " with room for at least one generated token",
                           prompt_param, "context_length_exceeded");
    const size_t room = n_ctx - n_prompt;
    if (common.max_tokens_given && g.max_tokens > room)
        throw RequestError("the prompt's " + std::to_string(n_prompt) + " tokens and max_tokens " +
                               std::to_string(g.max_tokens) + " exceed the context of " +
                               std::to_string(n_ctx) + " tokens",
                           "max_tokens", "context_length_exceeded");
    if (!common.max_tokens_given)
        g.max_tokens = uint32_t(std::min<size_t>(g.max_tokens ? g.max_tokens : room, room));
}

}  // namespace serve
