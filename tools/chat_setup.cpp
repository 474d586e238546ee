#include "chat_setup.h"

#include <string>
#include <vector>

#include "chat/builtin_templates.h"
#include "chat/json_value.h"
#include "common/error.h"
#include "generation.h"

namespace vkllm_tool {

namespace {

// The value of the last `flag VALUE` on the command line ("" when absent): the file names that
// Options keeps only the text of.
std::string option_value(int argc, char **argv, const char *flag) {
    std::string v;
    for (int i = 1; i + 1 < argc; ++i)
        if (std::string(argv[i]) == flag) v = argv[++i];
    return v;
}

// What the messages call the template in use.
std::string template_label(const Options &o, bool fallback, int argc, char **argv) {
    if (fallback) return "chatml (the model's file has no template)";
    if (o.template_name) return std::string("--template ") + o.template_name;
    if (!o.template_source.empty())
        return "--chat-template-file " + option_value(argc, argv, "--chat-template-file");
    return "the model's chat template (tokenizer.chat_template)";
}

// The first turn the chat will render: the system message, if any, and a user's line.
std::vector<Turn> first_turn(const Options &o) {
    std::vector<Turn> turns;
    if (o.system) turns.push_back({"system", o.system});
    turns.push_back({"user", "Hello"});
    return turns;
}

// Why --tools' text is not a JSON array of tools in OpenAI's function form; "" when it is.
std::string tools_problem(const std::string &text) {
    using vkllm::chat::Value;
    Value tools;
    try {
        tools = vkllm::chat::parse_json(text);
    } catch (const vkllm::Error &e) {
        return std::string("not JSON: ") + e.what();
    }
    if (!tools.is_list()) return "not a JSON array of tools";
    size_t i = 0;
    for (const Value &tool : tools.list()) {
        std::string where = "tool " + std::to_string(i++) + ": ";
        if (!tool.is_dict()) return where + "not an object";
        const Value *type = tool.dict().find(std::string("type"));
        if (type && !(type->is_str() && type->str() == "function"))
            return where + "\"type\" is not \"function\"";
        const Value *function = tool.dict().find(std::string("function"));
        if (!function || !function->is_dict()) return where + "no \"function\" object";
        const Value *name = function->dict().find(std::string("name"));
        if (!name || !name->is_str() || name->str().empty())
            return where + "no \"function\": {\"name\": ...}";
    }
    return std::string();
}

// The built-in of the model's family, by its architecture, where one architecture means one
// format (Phi-3's also serves phi-4, ChatGLM's both GLM formats); "" elsewhere.
std::string family_template(const vkllm_model *model) {
    vkllm_model_info mi;
    mi.struct_size = sizeof mi;
    if (vkllm_model_get_info(model, &mi) != VKLLM_OK) return std::string();
    const std::string arch = mi.architecture;
    for (const char *family : {"gemma", "granite", "llama4"})
        if (arch.rfind(family, 0) == 0) return family;
    return std::string();
}

const char kToolsForm[] =
    "[{\"type\": \"function\", \"function\": {\"name\": ..., \"description\": ..., "
    "\"parameters\": {...}}}]";

}  // namespace

void print_chat_notes(FILE *out) {
    std::fputs(
        "\nWithout -n an answer runs to its end token or a full context; when -n ends one,\n"
        "[stopped at -n N] follows it on stderr. A model file without a chat template is\n"
        "run with chatml, and a notice says so. The template and --tools are checked\n"
        "before the first prompt (exit status 2 names the option at fault); --tools is\n"
        "refused when the template does not write tools into the prompt. The built-in\n"
        "templates (--template help says what each stands for):\n",
        out);
    size_t n = 0;
    const vkllm::chat::BuiltinTemplate *all = vkllm::chat::builtin_templates(n);
    std::fputs("NAME:", out);
    for (size_t i = 0; i < n; ++i)
        std::fprintf(out, " %.*s", int(all[i].name.size()), all[i].name.data());
    std::fputs("\n", out);
}

void print_builtin_templates(FILE *out) {
    size_t n = 0;
    const vkllm::chat::BuiltinTemplate *all = vkllm::chat::builtin_templates(n);
    std::fprintf(out,
                 "built-in chat templates (--template NAME); each renders as the real template "
                 "of the models it names:\n");
    Options o;
    o.tools = R"([{"type": "function", "function": {"name": "f", "parameters": {}}}])";
    for (size_t i = 0; i < n; ++i) {
        std::string name(all[i].name);
        o.template_name = name.c_str();
        vkllm_status with, without;
        std::string a = render_chat(o, nullptr, first_turn(o), true, with);
        Options plain = o;
        plain.tools.clear();
        std::string b = render_chat(plain, nullptr, first_turn(plain), true, without);
        bool writes_tools = with == VKLLM_OK && (without != VKLLM_OK || a != b);
        std::fprintf(out, "  %-18s %.*s%s\n", name.c_str(), int(all[i].stands_for.size()),
                     all[i].stands_for.data(), writes_tools ? " (writes --tools)" : "");
    }
    std::fprintf(out, "(\"qwen\" and \"qwen2\" also name chatml, \"gpt-oss\" harmony)\n");
}

int prepare_chat_template(Options &o, const vkllm_model *model, int argc, char **argv) {
    const std::string tools_file = option_value(argc, argv, "--tools");
    if (o.template_kwargs) {
        std::string problem;
        try {
            if (!vkllm::chat::parse_json(o.template_kwargs).is_dict()) problem = "not an object";
        } catch (const vkllm::Error &e) {
            problem = std::string("not JSON: ") + e.what();
        }
        if (!problem.empty()) {
            std::fprintf(stderr,
                         "vkllm: --chat-template-kwargs: %s; the form is '{\"enable_thinking\": "
                         "false}'\n",
                         problem.c_str());
            return 2;
        }
    }
    if (!o.tools.empty()) {
        std::string problem = tools_problem(o.tools);
        if (!problem.empty()) {
            std::fprintf(stderr, "vkllm: --tools %s: %s; the form is %s\n", tools_file.c_str(),
                         problem.c_str(), kToolsForm);
            return 2;
        }
    }
    const bool fallback =
        !o.template_name && o.template_source.empty() && !*vkllm_model_get_chat_template(model);
    if (fallback) {
        o.template_name = "chatml";
        std::string family = family_template(model);
        std::string hint =
            family.empty() ? std::string() : " (the model's family: --template " + family + ")";
        std::fprintf(stderr,
                     "vkllm: %s has no chat template (tokenizer.chat_template): using chatml; "
                     "--template NAME chooses another%s; --template help lists them\n",
                     o.model, hint.c_str());
    }
    const bool from_option = (o.template_name && !fallback) || !o.template_source.empty();
    const std::string label = template_label(o, fallback, argc, argv);
    vkllm_status s;
    std::string with_tools = render_chat(o, model, first_turn(o), true, s);
    if (s == VKLLM_ERR_NOT_FOUND && o.template_name) {
        std::fprintf(stderr,
                     "vkllm: --template %s: no such built-in template; the names: %s "
                     "(--template help says what each stands for)\n",
                     o.template_name, vkllm::chat::builtin_template_names().c_str());
        return 2;
    }
    if (s != VKLLM_OK) {
        std::fprintf(stderr, "vkllm: %s fails on a first turn (%s): %s\n", label.c_str(),
                     o.system ? "--system and a user's line" : "a user's line", vkllm_last_error());
        if (!from_option)
            std::fprintf(stderr,
                         "vkllm: --template NAME or --chat-template-file FILE chooses another "
                         "(--template help lists the names)\n");
        return from_option ? 2 : 1;
    }
    if (!o.tools.empty()) {
        Options plain = o;
        plain.tools.clear();
        std::string without = render_chat(plain, model, first_turn(plain), true, s);
        if (s == VKLLM_OK && without == with_tools) {
            std::fprintf(stderr,
                         "vkllm: --tools %s: %s does not write tools into the prompt, so the "
                         "model would never see them; choose a template that does with "
                         "--chat-template-file FILE or --template NAME (--template help marks "
                         "them)\n",
                         tools_file.c_str(), label.c_str());
            return 2;
        }
    }
    return 0;
}

}  // namespace vkllm_tool
