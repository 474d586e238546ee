// Writes the seed corpora of fuzz/corpus/ (committed; rerun after changing the model writer):
// small valid models of each architecture and weight type the tiny-model writer knows, texts
// for the tokenizers, conversations for the chat templates, replies of each format for the
// reply parser, small Jinja templates with their variables for the interpreter, GBNF grammars
// with a text to run through them, the JSON Schema corpus of the converter's test
// (tests/data/json_schema, read from the source tree), regular expressions for `pattern`, tune
// files (fuzz_tune_file's identity, and one stale), request bodies of vkllm-serve's routes.
//   write_seeds OUT_DIR   (writes OUT_DIR/{gguf,model_load,tokenizer,pretokenize,chat_template,
//                         reply_parser,jinja,gbnf,json_schema,json_schema_pattern,tune_file,
//                         serve_request}/)
#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "reference/tiny_model.h"
#include "tune_file_identity.h"

namespace {

void write(const std::string &path, const std::string &bytes) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), std::streamsize(bytes.size()));
    if (!out) throw std::runtime_error("cannot write " + path);
}

std::string read(const std::string &path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace

int main(int argc, char **argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: write_seeds OUT_DIR\n");
        return 2;
    }
    std::string out = argv[1];
    for (const char *d : {"", "/gguf", "/model_load", "/tokenizer", "/pretokenize",
                          "/chat_template", "/reply_parser", "/jinja", "/gbnf", "/json_schema",
                          "/json_schema_pattern", "/tune_file", "/serve_request"})
        mkdir((out + d).c_str(), 0755);

    struct Model {
        const char *name;
        TinyModelSpec spec;
    };
    std::vector<Model> models;
    TinyModelSpec small;
    small.n_vocab = 16, small.n_embd = 16, small.n_head = 2, small.n_head_kv = 1, small.n_ff = 24;
    small.n_layer = 1, small.n_ctx = 16;
    models.push_back({"llama-f32", small});
    TinyModelSpec s = small;
    s.arch = "qwen2", s.weight_type = 1;
    models.push_back({"qwen2-f16", s});
    s = small;
    s.arch = "qwen3", s.tied_output = true;
    models.push_back({"qwen3-tied-f32", s});
    s = small;
    s.rope_freqs = true, s.weight_type = 30;  // BF16
    models.push_back({"llama-bf16-rope-freqs", s});
    s = small;
    s.n_embd = 32, s.n_ff = 32, s.n_head = 2, s.n_head_kv = 2, s.weight_type = 8;  // Q8_0
    models.push_back({"llama-q8_0", s});
    s.weight_type = 2;  // Q4_0
    models.push_back({"llama-q4_0", s});
    for (const Model &m : models) {
        std::string tmp = out + "/model_load/" + m.name + ".gguf";
        write_tiny_model(tmp, m.spec);
        write(out + "/gguf/" + m.name + ".gguf", read(tmp));
    }

    // Tokenizer inputs: a selector byte (vocabulary, special parsing, BOS/EOS), then text.
    const char *texts[] = {
        "Hello world",
        " Hello  world\n\n\tindented",
        "<|im_start|>user\nWhat is 2+2?<|im_end|>\n<|im_start|>assistant\n",
        "<s>[INST] Bonjour [/INST]</s>",
        "na\xc3\xafve caf\xc3\xa9, \xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e \xf0\x9f\xa4\x96",
        "don't we'll I'M 12345 3.14159 0x1F",
        "\xe2\x96\x81leading marker and trailing spaces   ",
        "<|endoftext|><|start|>assistant<|channel|>final<|message|>hi<|return|>",
    };
    int i = 0;
    for (const char *t : texts)
        for (uint8_t sel : {0, 1, 2, 3, 4, 5, 6, 7})
            write(out + "/tokenizer/" + std::to_string(i++), std::string(1, char(sel)) + t);

    // Pre-tokenizer inputs: a rule set's index, then text; or from 0x80, a pattern, NUL, text.
    i = 0;
    for (const char *t : texts)
        for (uint8_t sel : {0, 2, 5, 6, 7, 8, 12, 19, 22, 24, 26, 30})
            write(out + "/pretokenize/" + std::to_string(i++), std::string(1, char(sel)) + t);
    const char *patterns[] = {
        R"(\s+(?!\S)|\s+)",
        R"((?i:'s|'t)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3})",
        R"([\p{L}&&[^\p{Han}]]+|(?=(\d{3})+(?!\d))|\s+$)",
        R"(a++b|[^(\s|.,)]+|(?:x\p{M}*)+)",
    };
    for (const char *p : patterns)
        write(out + "/pretokenize/" + std::to_string(i++),
              std::string(1, '\x80') + p + std::string(1, '\0') + texts[5]);

    // Conversations: template selector, then role and content fields, NUL-separated.
    auto conv = [](char sel, std::vector<std::string> fields, char last) {
        std::string s(1, sel);
        for (const std::string &f : fields)
            s += std::string(1, '\0') + f;
        return s + std::string(1, '\0') + last;
    };
    i = 0;
    for (char sel : {0, 2, 3})
        write(out + "/chat_template/" + std::to_string(i++),
              conv(sel,
                   {"system", "You are terse.", "user", "Hi", "assistant", "Hello!", "user", "Bye"},
                   1));
    write(out + "/chat_template/" + std::to_string(i++),
          conv(3, {"developer", "Answer in French.", "user", "Why?"}, 0));
    write(out + "/chat_template/" + std::to_string(i++),
          std::string("{% for message in messages %}<|im_start|>{{ message['role'] }}") +
              std::string(1, '\0') + "user" + std::string(1, '\0') + "hi" + std::string(1, '\0') +
              "\x01");

    // Replies: a format byte (0 plain, 1 Hermes, 2 Mistral, 3 Llama 3, 4 harmony; +0x80 inside
    // reasoning), then the text, 0xFF where a push ends.
    const std::string cut(1, '\xff');
    const std::vector<std::string> replies = {
        "\x01<think>\nPlan." + cut + "\n</thi" + cut + "nk>\n\nHi<tool_call>\n{\"name\": \"f\", " +
            cut + "\"arguments\": {\"a\": 1}}\n</tool_call>",
        "\x81still thinking</think>answer",
        "\x01<tool_call>\n<function=f>\n<parameter=x>\n1\n</parameter>\n</function>\n</tool_call>",
        "\x02[THINK]hm[/THINK][TOOL_CALLS][{\"name\": \"f\", \"arguments\": {}, \"id\": \"a\"}]",
        "\x02[TOOL_CALLS]f[CALL_ID]abc[ARGS]{\"x\": [1, 2]}",
        "\x03<|python_tag|>{\"name\": \"f\", \"parameters\": {\"q\": \"\\u00e9\"}}",
        "\x04<|channel|>analysis<|message|>think<|end|><|start|>assistant<|channel|>commentary "
        "to=functions.f <|constrain|>json<|message|>{}<|call|>",
        "\x04<|channel|>final<|message|>Done." + cut + "<|return|>",
    };
    i = 0;
    for (const std::string &r : replies)
        write(out + "/reply_parser/" + std::to_string(i++), r);
    // Jinja templates: the template, NUL, the JSON text of its variables. Each exercises a
    // part of the language that real chat templates use.
    const std::string messages =
        R"({"messages": [{"role": "system", "content": " Be brief. "}, {"role": "user", "content": "Hi \u00e9"},)"
        R"( {"role": "assistant", "content": null, "tool_calls": [{"id": "abc123XYZ", "type": "function",)"
        R"( "function": {"name": "f", "arguments": {"x": [1, 2.5, true]}}}]}],)"
        R"( "tools": [{"type": "function", "function": {"name": "f", "parameters": {}}}],)"
        R"( "add_generation_prompt": true, "bos_token": "<s>"})";
    const char *templates[] = {
        "{{ bos_token }}{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content | trim "
        "}}<|im_end|>\n"
        "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}",
        "{%- set ns = namespace(sys='', n=0) -%}\n{%- for m in messages if m.role != 'tool' -%}\n"
        "  {%- if loop.first and m.role == 'system' %}{% set ns.sys = m.content %}{% continue %}{% "
        "endif -%}\n"
        "  {%- set ns.n = ns.n + 1 -%}[{{ loop.index0 }}/{{ loop.length }} {{ m['role'] | upper "
        "}}]\n"
        "{%- endfor %}{{ ns.sys.strip().split(' ')[-1] }}{{ ns.n }}",
        "{% macro render(v, indent=0) %}{% if v is mapping %}{% for k, x in v.items() %}{{ ' ' * "
        "indent }}"
        "{{ k }}: {{ render(x, indent + 2) }}{% endfor %}{% elif v is iterable and v is not string "
        "%}"
        "[{{ v | map('string') | join(', ') }}]{% else %}{{ v }}{% endif %}{% endmacro %}"
        "{% for t in tools %}{{ render(t.function) }}{{ t | tojson(indent=2) }}{% endfor %}",
        "{%- for m in messages %}{%- if m.tool_calls is defined and m.tool_calls is not none %}"
        "{%- for c in m.tool_calls %}{{ c.function.arguments | tojson(sort_keys=true) }}"
        "{{ c.id[:3] ~ c.id[-3:] ~ c.id[::-1] }}{% endfor %}{% endif %}{% endfor %}"
        "{% if messages[0]['role'] != 'user' %}{{ raise_exception('first role: ' ~ "
        "messages[0].role) }}{% endif %}",
        "{% set x %}{% filter upper %}{{ 'a' if true else 'b' }}{% endfilter %}{% endset %}{{ x ~ "
        "7 // 2 ~ 2 ** 3 }}"
        "{{ strftime_now('%d %B %Y') }}{{ (messages | selectattr('role', 'equalto', 'user') | list "
        "| length) }}"
        "{{ {'b': 1, 'a': none} | dictsort }}{{ range(3) | sum }}{% raw %}{{ raw }}{% endraw %}{# "
        "c #}",
        "{% macro w(a, b='d') %}<{{ caller(a) }}|{{ b }}>{% endmacro %}{% call(v) w(1) %}{{ v + 1 "
        "}}{% endcall %}"
        "{% generation %}{{ messages[-1].content is none }}{% endgeneration %}{{ '%s=%d' % ('n', "
        "3) }}",
    };
    i = 0;
    for (const char *t : templates)
        write(out + "/jinja/" + std::to_string(i++),
              std::string(t) + std::string(1, '\0') + messages);

    // Grammars, each with a text after a NUL (fuzz_gbnf runs the text through the grammar).
    const char *grammars[][2] = {
        {"root ::= ws value ws\n"
         "value ::= object | array | string | number | \"true\" | \"false\" | \"null\"\n"
         "object ::= \"{\" ws ( member ( \",\" ws member )* )? \"}\"\n"
         "member ::= string ws \":\" ws value ws\n"
         "array ::= \"[\" ws ( value ws ( \",\" ws value ws )* )? \"]\"\n"
         "string ::= \"\\\"\" ( [^\"\\\\\\x00-\\x1F] | \"\\\\\" ( [\"\\\\/bfnrt] | \"u\" "
         "[0-9a-fA-F]{4} ) )* \"\\\"\"\n"
         "number ::= \"-\"? ( \"0\" | [1-9] [0-9]* ) ( \".\" [0-9]+ )? ( [eE] [-+]? [0-9]+ )?\n"
         "ws ::= [ \\t\\n\\r]*\n",
         "{\"a\": [1, -2.5e3, \"\\u00e9\", null], \"b\": {}}"},
        {"# arithmetic\nroot ::= expr\nexpr ::= term ((\"+\" | \"-\") term)*\n"
         "term ::= [0-9]+ | \"(\" expr \")\"",
         "(1+2)-3"},
        {"root ::= [0-9]{4} \"-\" (\"0\" [1-9] | \"1\" [0-2]) \"-\" [0-3] [0-9]{1,1}",
         "2024-05-17"},
        {"root ::= (\"- \" [^\\n]+ \"\\n\"){1,3} .? [\\u3041-\\u3096]* \"\\U0001F600\"?",
         "- a\n- b\n\xE3\x81\x82\xF0\x9F\x98\x80"},
        {"root ::= \"yes\" | \"no\" | (\n  \"maybe\" # comment\n)", "maybe"},
    };
    i = 0;
    for (const auto &g : grammars)
        write(out + "/gbnf/" + std::to_string(i++),
              std::string(g[0]) + std::string(1, '\0') + g[1]);

    // JSON schemas: the converter test's corpus, file for file.
    std::vector<std::string> schemas;
    for (const auto &entry : std::filesystem::directory_iterator(VKLLM_JSON_SCHEMA_CORPUS)) {
        std::string name = entry.path().filename().string();
        if (name.size() > 5 && name.substr(name.size() - 5) == ".json") schemas.push_back(name);
    }
    std::sort(schemas.begin(), schemas.end());
    for (const std::string &name : schemas)
        write(out + "/json_schema/" + name.substr(0, name.size() - 5),
              read(std::string(VKLLM_JSON_SCHEMA_CORPUS) + "/" + name));

    // Regular expressions of the kinds JSON Schemas carry in `pattern`.
    const char *regexes[] = {
        "^[0-9]{5}(-[0-9]{4})?$",
        "^\\d{4}-\\d{2}-\\d{2}$",
        "^(?:[A-Z][a-z]+ ?)+$",
        "^[^@\\s]+@[^@\\s]+\\.[a-z]{2,}$",
        "ab|^c\\.d$|e*?f{2,}",
        "^(?<year>\\d{4})[\\-/\\u00e9\\x41\\t]\\w+\\W\\S\\s.[^\\]\\\\\"]$",
        "((a|b)+c?){1,3}[\xC3\xA9-\xC3\xBF\xF0\x9F\x98\x80]",
    };
    i = 0;
    for (const char *p : regexes)
        write(out + "/json_schema_pattern/" + std::to_string(i++), p);

    // Tune files: none tuned, one entry, both families over several weight types, and a stale
    // file (another vkllm version) that the fuzzer must refuse.
    using vkllm::gpu::MatvecFamily;
    using vkllm::gpu::WeightType;
    const vkllm::engine::TuneIdentity id = fuzz_tune_identity();
    vkllm::gpu::MatvecTuning tuned;
    write(out + "/tune_file/empty", vkllm::engine::format_tune_file(id, tuned));
    tuned[{MatvecFamily::Dense, WeightType::Q8_0_G8, 896, 4864}] = {128, 4, true};
    write(out + "/tune_file/one", vkllm::engine::format_tune_file(id, tuned));
    tuned[{MatvecFamily::Dense, WeightType::F16, 4864, 896}] = {64, 2, false};
    tuned[{MatvecFamily::Dense, WeightType::Q4_K, 151936, 896}] = {1024, 64, true};
    tuned[{MatvecFamily::Moe, WeightType::MXFP4_G16, 2880, 2880}] = {64, 2, false};
    tuned[{MatvecFamily::Moe, WeightType::Q6_K_G8, 768, 2048}] = {8, 1, true};
    write(out + "/tune_file/families", vkllm::engine::format_tune_file(id, tuned));
    vkllm::engine::TuneIdentity stale = id;
    stale.vkllm = "0.1.0";
    write(out + "/tune_file/stale", vkllm::engine::format_tune_file(stale, tuned));

    // vkllm-serve's request bodies: the first byte picks the route (fuzz_serve_request.cpp).
    const char *bodies[][2] = {
        {"c", R"({"model": "m", "messages": [{"role": "system", "content": "Be brief."},)"
              R"( {"role": "user", "content": [{"type": "text", "text": "Hi "},)"
              R"( {"type": "text", "text": "there"}]}], "temperature": 0.7, "top_p": 0.9,)"
              R"( "n": 2, "seed": 42, "stop": ["

", "END"], "max_tokens": 64,)"
              R"( "logit_bias": {"5": -100, "7": 3.5}, "logprobs": true, "top_logprobs": 3,)"
              R"( "stream": true, "stream_options": {"include_usage": true}})"},
        {"c", R"({"messages": [{"role": "user", "content": "weather?"}, {"role": "assistant",)"
              R"( "content": null, "tool_calls": [{"id": "c1", "type": "function", "function":)"
              R"( {"name": "get", "arguments": "{"city": "Paris"}"}}]}, {"role": "tool",)"
              R"( "tool_call_id": "c1", "content": "sunny"}], "tools": [{"type": "function",)"
              R"( "function": {"name": "get", "parameters": {"type": "object", "properties":)"
              R"( {"city": {"type": "string"}}}}}], "tool_choice": "auto",)"
              R"( "presence_penalty": -1.5, "frequency_penalty": 2, "max_completion_tokens": 9})"},
        {"c", R"({"messages": [{"role": "user", "content": "a person"}], "response_format":)"
              R"( {"type": "json_schema", "json_schema": {"name": "p", "strict": true, "schema":)"
              R"( {"type": "object", "properties": {"age": {"type": "integer"}}}}}})"},
        {"c", R"({"messages": [{"role": "user", "content": "x"}], "response_format":)"
              R"( {"type": "json_object"}, "tool_choice": "required", "tools": [{"function":)"
              R"( {"name": "f"}}], "temperature": "hot", "n": 99})"},
        {"p", R"({"prompt": "Once upon a time", "echo": true, "logprobs": 5, "max_tokens": 8,)"
              R"( "stop": "
", "temperature": 0})"},
        {"p", R"({"prompt": [[1, 2, 3]], "stream": true, "n": 1, "logit_bias": {"2": 100}})"},
        {"t", R"({"content": "Hello <|im_start|>", "add_special": true, "with_pieces": true,)"
              R"( "parse_special": false})"},
        {"d", R"({"tokens": [1, 2, 3, 15]})"},
        {"c",
         "{\"messages\": [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["
         "[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}"},
    };
    i = 0;
    for (const auto &b : bodies)
        write(out + "/serve_request/" + std::to_string(i++), std::string(b[0]) + b[1]);
    return 0;
}
