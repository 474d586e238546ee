#include "request_parse.h"

#include <algorithm>
#include <cmath>

#include "utf8.h"

namespace serve {

using nlohmann::json;

namespace {

// The deepest nesting of arrays and objects outside strings, stopping once past `limit` (the
// parser itself recurses, so a deep body must never reach it).
int nesting_depth(const std::string &s, int limit) {
    int depth = 0, deepest = 0;
    bool in_string = false, escaped = false;
    for (char c : s) {
        if (in_string) {
            if (escaped)
                escaped = false;
            else if (c == '\\')
                escaped = true;
            else if (c == '"')
                in_string = false;
        } else if (c == '"') {
            in_string = true;
        } else if (c == '[' || c == '{') {
            deepest = std::max(deepest, ++depth);
            if (deepest > limit) return deepest;
        } else if (c == ']' || c == '}') {
            --depth;
        }
    }
    return deepest;
}

// The field's value, or null when it is absent or JSON null (OpenAI reads null as unset).
const json *field(const json &object, const char *name) {
    auto it = object.find(name);
    if (it == object.end() || it->is_null()) return nullptr;
    return &*it;
}

[[noreturn]] void wrong_type(const std::string &param, const char *what) {
    throw RequestError("'" + param + "' must be " + what, param);
}

bool get_bool(const json &v, const std::string &param) {
    if (!v.is_boolean()) wrong_type(param, "a boolean");
    return v.get<bool>();
}

double get_number(const json &v, const std::string &param, double lo, double hi) {
    if (!v.is_number()) wrong_type(param, "a number");
    double d = v.get<double>();
    if (!(d >= lo && d <= hi))
        throw RequestError("'" + param + "' must be between " + json(lo).dump() + " and " +
                               json(hi).dump() + ", not " + v.dump(),
                           param);
    return d;
}

int64_t get_int(const json &v, const std::string &param, int64_t lo, int64_t hi) {
    if (!v.is_number_integer()) wrong_type(param, "an integer");
    if (v.is_number_unsigned() && v.get<uint64_t>() > uint64_t(INT64_MAX))
        throw RequestError("'" + param + "' must be at most " + std::to_string(hi), param);
    int64_t i = v.get<int64_t>();
    if (i < lo || i > hi)
        throw RequestError("'" + param + "' must be between " + std::to_string(lo) + " and " +
                               std::to_string(hi) + ", not " + std::to_string(i),
                           param);
    return i;
}

const std::string &get_string(const json &v, const std::string &param) {
    if (!v.is_string()) wrong_type(param, "a string");
    return v.get_ref<const std::string &>();
}

int32_t token_id(const json &v, const std::string &param, const Limits &limits) {
    if (!v.is_number_integer()) wrong_type(param, "a token id (an integer)");
    if (limits.n_vocab == 0) throw RequestError("'" + param + "': no vocabulary", param);
    return int32_t(get_int(v, param, 0, int64_t(limits.n_vocab) - 1));
}

std::vector<vkllm_logit_bias> parse_logit_bias(const json &v, const Limits &limits) {
    if (!v.is_object()) wrong_type("logit_bias", "an object of token ids to biases");
    std::vector<vkllm_logit_bias> out;
    for (auto it = v.begin(); it != v.end(); ++it) {
        const std::string &key = it.key();
        const std::string param = "logit_bias." + key;
        size_t used = 0;
        long long id = -1;
        try {
            id = std::stoll(key, &used);
        } catch (const std::exception &) {
            used = 0;
        }
        if (used != key.size() || key.empty() || id < 0 || id >= int64_t(limits.n_vocab))
            throw RequestError("'logit_bias' keys must be token ids below " +
                                   std::to_string(limits.n_vocab) + ", not \"" + key + "\"",
                               "logit_bias");
        double bias = get_number(it.value(), param, -100, 100);
        // OpenAI: -100 bans the token.
        out.push_back({int32_t(id), bias <= -100 ? -INFINITY : float(bias)});
    }
    return out;
}

std::vector<std::string> parse_stop(const json &v) {
    std::vector<std::string> out;
    if (v.is_string()) {
        if (!v.get<std::string>().empty()) out.push_back(v.get<std::string>());
        return out;
    }
    if (!v.is_array()) wrong_type("stop", "a string or an array of strings");
    if (v.size() > 4) throw RequestError("'stop' may hold at most 4 strings", "stop");
    for (size_t i = 0; i < v.size(); ++i) {
        const std::string &s = get_string(v[i], "stop[" + std::to_string(i) + "]");
        if (!s.empty()) out.push_back(s);
    }
    return out;
}

CommonFields parse_common(const json &body, const Limits &limits, uint32_t default_max_tokens) {
    CommonFields c;
    GenerationRequest &g = c.generation;
    Sampling &s = g.sampling;
    if (const json *v = field(body, "model")) get_string(*v, "model");
    if (const json *v = field(body, "stream")) c.stream = get_bool(*v, "stream");
    if (const json *v = field(body, "stream_options")) {
        if (!v->is_object()) wrong_type("stream_options", "an object");
        if (const json *u = field(*v, "include_usage"))
            c.include_usage = get_bool(*u, "stream_options.include_usage");
    }
    if (const json *v = field(body, "n")) g.n_choices = uint32_t(get_int(*v, "n", 1, limits.max_n));
    g.max_tokens = default_max_tokens;
    for (const char *name : {"max_tokens", "max_completion_tokens"})
        if (const json *v = field(body, name)) {
            g.max_tokens = uint32_t(get_int(*v, name, 1, limits.max_tokens));
            c.max_tokens_given = true;
        }
    if (const json *v = field(body, "temperature"))
        s.temperature = float(get_number(*v, "temperature", 0, 2));
    if (const json *v = field(body, "top_p")) s.top_p = float(get_number(*v, "top_p", 0, 1));
    if (const json *v = field(body, "presence_penalty"))
        s.presence_penalty = float(get_number(*v, "presence_penalty", -2, 2));
    if (const json *v = field(body, "frequency_penalty"))
        s.frequency_penalty = float(get_number(*v, "frequency_penalty", -2, 2));
    if (const json *v = field(body, "seed")) {
        if (!v->is_number_integer()) wrong_type("seed", "an integer");
        s.has_seed = true;
        s.seed = v->is_number_unsigned() ? v->get<uint64_t>() : uint64_t(v->get<int64_t>());
    }
    if (const json *v = field(body, "logit_bias")) s.logit_bias = parse_logit_bias(*v, limits);
    if (const json *v = field(body, "stop")) g.stop = parse_stop(*v);
    return c;
}

// A message's content: a string, or an array of {"type": "text", "text": ...} parts joined.
json joined_content(const json &content, const std::string &param) {
    if (content.is_string()) return content;
    if (!content.is_array()) wrong_type(param, "a string or an array of content parts");
    std::string text;
    for (size_t j = 0; j < content.size(); ++j) {
        const std::string where = param + "[" + std::to_string(j) + "]";
        const json &part = content[j];
        if (!part.is_object()) wrong_type(where, "a content part object");
        const json *type = field(part, "type");
        if (!type) throw RequestError("'" + where + ".type' is missing", where + ".type");
        if (get_string(*type, where + ".type") != "text")
            throw RequestError("'" + where +
                                   ".type': only \"text\" content parts are supported, "
                                   "not \"" +
                                   type->get<std::string>() + "\"",
                               where + ".type");
        const json *t = field(part, "text");
        if (!t) throw RequestError("'" + where + ".text' is missing", where + ".text");
        text += get_string(*t, where + ".text");
    }
    return text;
}

std::string parse_messages(const json &body) {
    const json *messages = field(body, "messages");
    if (!messages) throw RequestError("'messages' is missing", "messages");
    if (!messages->is_array()) wrong_type("messages", "an array of messages");
    if (messages->empty()) throw RequestError("'messages' must not be empty", "messages");
    json out = json::array();
    for (size_t i = 0; i < messages->size(); ++i) {
        const std::string where = "messages[" + std::to_string(i) + "]";
        const json &m = (*messages)[i];
        if (!m.is_object()) wrong_type(where, "an object");
        const json *role = field(m, "role");
        if (!role) throw RequestError("'" + where + ".role' is missing", where + ".role");
        get_string(*role, where + ".role");
        json copy = m;
        if (const json *content = field(m, "content"))
            copy["content"] = joined_content(*content, where + ".content");
        if (const json *calls = field(m, "tool_calls"))
            if (!calls->is_array()) wrong_type(where + ".tool_calls", "an array");
        out.push_back(std::move(copy));
    }
    return out.dump();
}

// The tools for the template, and tool_choice: "none" gives the template no tools; "required"
// or a named function forces a call (docs/SERVER.md).
std::string parse_tools(const json &body, ChatRequest &r) {
    const json *tools = field(body, "tools");
    if (!tools) return "";
    if (!tools->is_array()) wrong_type("tools", "an array of tools");
    std::vector<std::string> names;
    for (size_t i = 0; i < tools->size(); ++i) {
        const std::string where = "tools[" + std::to_string(i) + "]";
        const json &t = (*tools)[i];
        if (!t.is_object()) wrong_type(where, "an object");
        if (const json *type = field(t, "type"))
            if (get_string(*type, where + ".type") != "function")
                throw RequestError("'" + where + ".type' must be \"function\"", where + ".type");
        const json *f = field(t, "function");
        if (!f || !f->is_object()) wrong_type(where + ".function", "an object");
        const json *name = field(*f, "name");
        if (!name || get_string(*name, where + ".function.name").empty())
            throw RequestError("'" + where + ".function.name' is missing",
                               where + ".function.name");
        names.push_back(name->get<std::string>());
        if (const json *p = field(*f, "parameters"))
            if (!p->is_object()) wrong_type(where + ".function.parameters", "an object");
    }
    if (tools->empty()) return "";
    if (const json *choice = field(body, "tool_choice")) {
        if (choice->is_object()) {
            const json *f = field(*choice, "function");
            const json *name = f && f->is_object() ? field(*f, "name") : nullptr;
            if (!name) wrong_type("tool_choice.function.name", "a string");
            const std::string &n = get_string(*name, "tool_choice.function.name");
            if (std::find(names.begin(), names.end(), n) == names.end())
                throw RequestError("'tool_choice' names " + n + ", which is not among the tools",
                                   "tool_choice.function.name");
            r.tool_choice = ToolChoice::Named;
            r.tool_name = n;
        } else {
            const std::string &c = get_string(*choice, "tool_choice");
            if (c == "none") return "";
            if (c == "required")
                r.tool_choice = ToolChoice::Required;
            else if (c != "auto")
                throw RequestError(
                    "'tool_choice' must be \"auto\", \"none\", \"required\" or a function",
                    "tool_choice");
        }
    }
    return tools->dump();
}

void parse_response_format(const json &body, ChatRequest &r) {
    const json *f = field(body, "response_format");
    if (!f) return;
    if (!f->is_object()) wrong_type("response_format", "an object");
    const json *type = field(*f, "type");
    if (!type) throw RequestError("'response_format.type' is missing", "response_format.type");
    const std::string &t = get_string(*type, "response_format.type");
    if (t == "text") return;
    if (t == "json_object") {
        r.format = ResponseFormat::JsonObject;
        r.schema_json = R"({"type": "object"})";
        return;
    }
    if (t != "json_schema")
        throw RequestError(
            "'response_format.type' must be \"text\", \"json_object\" or "
            "\"json_schema\"",
            "response_format.type");
    r.format = ResponseFormat::JsonSchema;
    const json *js = field(*f, "json_schema");
    if (!js)
        throw RequestError("'response_format.json_schema' is missing",
                           "response_format.json_schema");
    if (!js->is_object()) wrong_type("response_format.json_schema", "an object");
    if (const json *strict = field(*js, "strict"))
        get_bool(*strict, "response_format.json_schema.strict");
    const json *schema = field(*js, "schema");
    if (schema && !schema->is_object())
        wrong_type("response_format.json_schema.schema", "an object");
    r.schema_json = schema ? schema->dump() : "{}";
}

}  // namespace

json parse_body(const std::string &body) {
    size_t bad = invalid_utf8_at(body);
    if (bad != std::string::npos)
        throw RequestError("the body is not valid UTF-8 (at byte " + std::to_string(bad) + ")", "");
    if (nesting_depth(body, kMaxJsonDepth) > kMaxJsonDepth)
        throw RequestError("the body nests arrays and objects deeper than " +
                               std::to_string(kMaxJsonDepth) + " levels",
                           "");
    json j;
    try {
        j = json::parse(body);
    } catch (const json::exception &e) {
        throw RequestError(std::string("the body is not valid JSON: ") + e.what(), "");
    }
    if (!j.is_object()) throw RequestError("the body must be a JSON object", "");
    return j;
}

ChatRequest parse_chat_request(const json &body, const Limits &limits) {
    ChatRequest r;
    r.messages_json = parse_messages(body);
    r.common = parse_common(body, limits, limits.max_tokens);
    r.tools_json = parse_tools(body, r);
    parse_response_format(body, r);
    if (r.tool_choice != ToolChoice::Auto && r.format != ResponseFormat::Text)
        throw RequestError(
            "a forced 'tool_choice' and 'response_format' cannot both shape the "
            "reply",
            "tool_choice");
    if (const json *v = field(body, "logprobs")) r.logprobs = get_bool(*v, "logprobs");
    if (const json *v = field(body, "top_logprobs")) {
        r.top_logprobs = int32_t(get_int(*v, "top_logprobs", 0, VKLLM_MAX_TOP_LOGPROBS));
        if (!r.logprobs)
            throw RequestError("'top_logprobs' needs 'logprobs': true", "top_logprobs");
    }
    r.common.generation.top_logprobs = r.logprobs ? r.top_logprobs : -1;
    return r;
}

CompletionRequest parse_completion_request(const json &body, const Limits &limits) {
    CompletionRequest r;
    const json *prompt = field(body, "prompt");
    if (!prompt) throw RequestError("'prompt' is missing", "prompt");
    // One prompt per request: a string, token ids, or an array holding one of those.
    const json *p = prompt;
    if (p->is_array() && p->size() == 1 && ((*p)[0].is_string() || (*p)[0].is_array()))
        p = &(*p)[0];
    if (p->is_string()) {
        r.prompt_text = p->get<std::string>();
    } else if (p->is_array()) {
        if (p->empty()) throw RequestError("'prompt' must not be empty", "prompt");
        r.prompt_is_tokens = true;
        for (size_t i = 0; i < p->size(); ++i) {
            const json &t = (*p)[i];
            if (t.is_string() || t.is_array())
                throw RequestError("'prompt': one prompt per request", "prompt");
            r.prompt_tokens.push_back(token_id(t, "prompt[" + std::to_string(i) + "]", limits));
        }
    } else {
        wrong_type("prompt", "a string or an array of token ids");
    }
    // OpenAI's default for this endpoint.
    r.common = parse_common(body, limits, std::min<uint32_t>(16, limits.max_tokens));
    if (const json *v = field(body, "echo")) r.echo = get_bool(*v, "echo");
    if (const json *v = field(body, "logprobs"))
        r.logprobs = int32_t(get_int(*v, "logprobs", 0, 5));
    r.common.generation.top_logprobs = r.logprobs;
    r.common.generation.prompt_logprobs = r.echo && r.logprobs >= 0;
    return r;
}

TokenizeRequest parse_tokenize_request(const json &body) {
    TokenizeRequest r;
    const json *content = field(body, "content");
    if (!content) throw RequestError("'content' is missing", "content");
    r.content = get_string(*content, "content");
    if (const json *v = field(body, "add_special")) r.add_special = get_bool(*v, "add_special");
    if (const json *v = field(body, "parse_special"))
        r.parse_special = get_bool(*v, "parse_special");
    if (const json *v = field(body, "with_pieces")) r.with_pieces = get_bool(*v, "with_pieces");
    return r;
}

std::vector<int32_t> parse_detokenize_request(const json &body, const Limits &limits) {
    const json *tokens = field(body, "tokens");
    if (!tokens) throw RequestError("'tokens' is missing", "tokens");
    if (!tokens->is_array()) wrong_type("tokens", "an array of token ids");
    std::vector<int32_t> ids;
    for (size_t i = 0; i < tokens->size(); ++i)
        ids.push_back(token_id((*tokens)[i], "tokens[" + std::to_string(i) + "]", limits));
    return ids;
}

}  // namespace serve
