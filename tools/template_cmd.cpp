// vkllm template: renders one conversation with a chat template through vkllm_chat_render_json
// and prints the prompt exactly. The conversation file is read with the library's JSON reader
// (the one exception to this tool's public-API-only rule, as for quantize's file transforms):
// its messages, tools and extra variables go back to the C API as JSON text.
#include <cstdio>
#include <ctime>
#include <optional>
#include <string>
#include <vector>

#include "chat/json_value.h"
#include "cli.h"
#include "cli_args.h"
#include "common/error.h"
#include "os.h"
#include "text_file.h"
#include "vkllm.h"

namespace {

const char *const kUsage =
    "usage: vkllm template (--template FILE | -m FILE) --conversation FILE [options]\n"
    "render a conversation with a chat template as transformers' apply_chat_template does and\n"
    "print the prompt exactly, nothing added; exit 1 with the template's message when it raises\n"
    "\n"
    "  --template FILE         the Jinja template\n"
    "  -m, --model FILE        else the GGUF model's tokenizer.chat_template (its BOS and EOS\n"
    "                          texts are the defaults)\n"
    "  --conversation FILE     JSON: {\"messages\": [...], \"tools\": [...],\n"
    "                          \"add_generation_prompt\": true, \"extra\": {...}}; tools, extra\n"
    "                          and add_generation_prompt (default false) may be left out; - is\n"
    "                          stdin\n"
    "  --bos TEXT              bos_token (default: the model's; none without -m)\n"
    "  --eos TEXT              eos_token (default: the model's; none without -m)\n"
    "  --now TIME              strftime_now's time, UTC: 2026-01-15T12:00:00 or seconds since\n"
    "                          1970 (default: the clock)\n"
    "  -h, --help              this help\n";

struct TemplateOptions {
    const char *template_file = nullptr;
    const char *model = nullptr;
    const char *conversation = nullptr;
    const char *bos = nullptr;
    const char *eos = nullptr;
    int64_t now = VKLLM_CHAT_NOW_CLOCK;
};

// "YYYY-MM-DDTHH:MM:SS" (UTC) or whole seconds since 1970.
int64_t time_arg(const char *text) {
    std::tm tm = {};
    char tail = 0;
    int n = std::sscanf(text, "%4d-%2d-%2dT%2d:%2d:%2d%c", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
                        &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &tail);
    if (n == 6) {
        tm.tm_year -= 1900;
        tm.tm_mon -= 1;
        std::tm check = tm;
        time_t t = vkllm_tool::utc_seconds(&tm);
        // timegm normalises 2026-02-30 into March: a date it moved was not a date.
        if (tm.tm_mday == check.tm_mday && tm.tm_mon == check.tm_mon &&
            tm.tm_hour == check.tm_hour && tm.tm_min == check.tm_min && tm.tm_sec == check.tm_sec)
            return int64_t(t);
    } else if (text[0] >= '0' && text[0] <= '9') {
        return vkllm_tool::int_arg("--now", text, 0, INT64_MAX);
    }
    throw vkllm_tool::ArgError(
        "--now expects a UTC time such as 2026-01-15T12:00:00, or seconds since 1970, not " +
        vkllm_tool::quoted(text));
}

void parse(int argc, char **argv, TemplateOptions &o) {
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        bool has_value = i + 1 < argc;
        auto value = [&] { return argv[++i]; };
        if (a == "--template" && has_value) {
            o.template_file = value();
        } else if ((a == "-m" || a == "--model") && has_value) {
            o.model = value();
        } else if (a == "--conversation" && has_value) {
            o.conversation = value();
        } else if (a == "--bos" && has_value) {
            o.bos = value();
        } else if (a == "--eos" && has_value) {
            o.eos = value();
        } else if (a == "--now" && has_value) {
            o.now = time_arg(value());
        } else if (a == "--template" || a == "-m" || a == "--model" || a == "--conversation" ||
                   a == "--bos" || a == "--eos" || a == "--now") {
            throw vkllm_tool::ArgError(a + " needs a value");
        } else {
            throw vkllm_tool::ArgError(
                (a.empty() || a[0] != '-' ? "unexpected argument " : "unknown option ") + a +
                " (vkllm template --help lists the options)");
        }
    }
    if (!o.template_file == !o.model)
        throw vkllm_tool::ArgError("one of --template FILE and -m FILE is required");
    if (!o.conversation) throw vkllm_tool::ArgError("--conversation FILE is required");
}

// A GGUF's template and special-token texts, read without a device.
struct ModelText {
    std::string chat_template;
    std::optional<std::string> bos, eos;
};

std::optional<std::string> special_text(const vkllm_tokenizer *tok, int32_t id) {
    if (id < 0) return std::nullopt;
    size_t len = 0;
    vkllm_tokenizer_get_piece(tok, id, VKLLM_DETOKENIZE_SPECIAL, nullptr, 0, &len);
    std::vector<char> buf(len + 1);
    if (vkllm_tokenizer_get_piece(tok, id, VKLLM_DETOKENIZE_SPECIAL, buf.data(), buf.size(),
                                  &len) != VKLLM_OK)
        return std::nullopt;
    return std::string(buf.data(), len);
}

vkllm_status read_model(const char *path, ModelText &out) {
    vkllm_gguf *gguf = nullptr;
    vkllm_status s = vkllm_gguf_open(path, &gguf);
    if (s != VKLLM_OK) return s;
    size_t len = 0;
    s = vkllm_gguf_get_string(gguf, "tokenizer.chat_template", nullptr, 0, &len);
    if (s == VKLLM_ERR_BUFFER_TOO_SMALL) {
        std::vector<char> buf(len + 1);
        s = vkllm_gguf_get_string(gguf, "tokenizer.chat_template", buf.data(), buf.size(), &len);
        out.chat_template.assign(buf.data(), len);
    }
    vkllm_tokenizer *tok = nullptr;
    if (s == VKLLM_OK) s = vkllm_tokenizer_create(gguf, &tok);
    if (s == VKLLM_OK) {
        vkllm_tokenizer_info info;
        info.struct_size = sizeof info;
        vkllm_tokenizer_get_info(tok, &info);
        out.bos = special_text(tok, info.bos);
        out.eos = special_text(tok, info.eos);
    }
    vkllm_tokenizer_destroy(tok);
    vkllm_gguf_destroy(gguf);
    return s;
}

int fail(const std::string &message) {
    std::fprintf(stderr, "vkllm: template: %s\n", message.c_str());
    return 1;
}

}  // namespace

int cmd_template(int argc, char **argv) {
    using vkllm::chat::Value;
    if (vkllm_tool::wants_help(argc, argv)) {
        std::fputs(kUsage, stdout);
        return 0;
    }
    TemplateOptions o;
    try {
        parse(argc, argv, o);
    } catch (const vkllm_tool::ArgError &e) {
        std::fprintf(stderr, "vkllm: template: %s\n%s", e.what(), kUsage);
        return 2;
    }
    std::string source, text, error;
    ModelText model;
    if (o.template_file) {
        if (!vkllm_tool::read_text_file(o.template_file, source, error)) return fail(error);
    } else {
        vkllm_status s = read_model(o.model, model);
        if (s != VKLLM_OK)
            return fail(std::string("reading ") + o.model + ": " + vkllm_last_error());
        if (model.chat_template.empty())
            return fail(std::string(o.model) + " has no tokenizer.chat_template");
        source = model.chat_template;
    }
    if (!vkllm_tool::read_text_file(o.conversation, text, error)) return fail(error);
    Value conv, messages;
    std::string tools, extra;
    bool add_generation_prompt = false;
    try {
        conv = vkllm::chat::parse_json(text);
        if (!conv.is_dict()) return fail(std::string(o.conversation) + " is not a JSON object");
        const Value *m = conv.dict().find(std::string("messages"));
        if (!m || !m->is_list())
            return fail(std::string(o.conversation) + " has no \"messages\" array");
        vkllm::chat::JsonOptions json;
        messages = *m;
        if (const Value *t = conv.dict().find(std::string("tools")); t && !t->is_none())
            tools = vkllm::chat::to_json(*t, json);
        if (const Value *x = conv.dict().find(std::string("extra")); x && !x->is_none())
            extra = vkllm::chat::to_json(*x, json);
        if (const Value *g = conv.dict().find(std::string("add_generation_prompt")))
            add_generation_prompt = g->truthy();
        text = vkllm::chat::to_json(messages, json);
    } catch (const vkllm::Error &e) {
        return fail(std::string(o.conversation) + ": " + e.what());
    }
    vkllm_chat_params p;
    vkllm_chat_params_init(&p);
    p.template_source = source.c_str();
    p.tools = tools.empty() ? nullptr : tools.c_str();
    p.extra = extra.empty() ? nullptr : extra.c_str();
    p.add_generation_prompt = add_generation_prompt ? 1 : 0;
    // No model is passed: an absent special token stays undefined, as transformers leaves it.
    if (o.bos)
        p.bos_token = o.bos;
    else if (model.bos)
        p.bos_token = model.bos->c_str();
    if (o.eos)
        p.eos_token = o.eos;
    else if (model.eos)
        p.eos_token = model.eos->c_str();
    p.now = o.now;
    size_t len = 0;
    vkllm_status s = vkllm_chat_render_json(&p, text.c_str(), nullptr, 0, &len);
    std::vector<char> out(len + 1);
    if (s == VKLLM_ERR_BUFFER_TOO_SMALL)
        s = vkllm_chat_render_json(&p, text.c_str(), out.data(), out.size(), &len);
    if (s != VKLLM_OK) return fail(vkllm_last_error());
    std::fwrite(out.data(), 1, len, stdout);
    return std::fflush(stdout) == 0 ? 0 : fail("cannot write the prompt");
}
