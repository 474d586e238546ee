#include "generation.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "chat/builtin_templates.h"
#include "line_reader.h"
#include "token_json.h"

namespace vkllm_tool {

namespace {

int32_t progress_bar(void *, float p) {
    int width = 40, done = int(p * float(width) + 0.5f);
    std::fprintf(stderr, "\rloading [%.*s%*s] %3d%%", done,
                 "########################################", width - done, "",
                 int(p * 100.0f + 0.5f));
    if (p >= 1.0f) std::fprintf(stderr, "\n");
    return 0;
}

// Once on_sigint has set g_interrupted, these stop the answer through the library's
// cancellation, which leaves the session usable.
void mark_first_token(Stream *st) {
    if (st->compile_at_first_token < 0) st->compile_at_first_token = compile_ms(st->rt);
}

int32_t on_token(void *user, int32_t token, const char *text, size_t length) {
    auto *st = static_cast<Stream *>(user);
    mark_first_token(st);
    if (token >= 0) st->ids.push_back(token);
    st->text.append(text, length);
    if (st->view) {
        st->view->push(text, length);
    } else if (st->print_text) {
        std::fwrite(text, 1, length, stdout);
        std::fflush(stdout);
    }
    return g_interrupted ? 1 : 0;
}

int32_t on_logprobs(void *user, int32_t token, float logprob, const vkllm_token_logprob *top,
                    size_t n_top) {
    auto *st = static_cast<Stream *>(user);
    mark_first_token(st);
    std::string line = token_json(st->json, token, logprob, top, n_top);
    std::printf("%s\n", line.c_str());
    std::fflush(stdout);
    return g_interrupted ? 1 : 0;
}

int32_t on_prefill(void *, size_t, size_t) {
    return g_interrupted ? 1 : 0;
}

vkllm_model_info model_info(const vkllm_model *model) {
    vkllm_model_info mi;
    mi.struct_size = sizeof mi;
    vkllm_model_get_info(model, &mi);
    return mi;
}

}  // namespace

int fail_with(vkllm_status s, const char *what) {
    return fail_with(s, what, vkllm_last_error());
}

int fail_with(vkllm_status s, const char *what, const std::string &message) {
    std::fprintf(stderr, "vkllm: %s: %s: %s\n", what, vkllm_status_string(s), message.c_str());
    return 1;
}

vkllm_status load(const Options &o, Loaded &l, const char *&stage) {
    auto t0 = std::chrono::steady_clock::now();
    stage = "opening the device";
    vkllm_status s = vkllm_runtime_create(&o.runtime, &l.rt);
    if (s != VKLLM_OK) return s;
    stage = "loading the model";
    vkllm_model_params mp;
    vkllm_model_params_init(&mp);
    if (isatty(STDERR_FILENO)) mp.progress = progress_bar;
    s = vkllm_model_load(l.rt, o.model, &mp, &l.model);
    if (s != VKLLM_OK) return s;
    vkllm_model_info mi = model_info(l.model);
    if (o.n_ctx > mi.n_ctx_train) {
        std::fprintf(stderr,
                     "vkllm: -c %u is more than the %u positions the model was trained for\n",
                     o.n_ctx, mi.n_ctx_train);
        stage = nullptr;
        return VKLLM_ERR_INVALID_ARGUMENT;
    }
    if (o.constraint != Options::Constraint::None) {
        const vkllm_tokenizer *tok = vkllm_model_get_tokenizer(l.model);
        const char *text = o.constraint_text.c_str();
        s = o.constraint == Options::Constraint::Gbnf
                ? vkllm_grammar_create(tok, text, nullptr, &l.grammar)
                : vkllm_grammar_create_from_json_schema(tok, text, &l.grammar);
        if (s != VKLLM_OK) {
            // As compilers write it: where the grammar came from, then the place in it.
            std::fprintf(stderr, "vkllm: %s: %s\n", o.constraint_source.c_str(),
                         vkllm_last_error());
            stage = nullptr;
            return s;
        }
    }
    l.load_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    vkllm_session_params sp;
    vkllm_session_params_init(&sp);
    sp.n_ctx = o.n_ctx;
    sp.n_seq = o.samples;
    if (o.n_batch) sp.n_batch = o.n_batch;
    if (o.kv_f32) sp.kv_type = VKLLM_KV_F32;
    if (o.kv_q8) sp.kv_type = VKLLM_KV_Q8_0;
    if (o.context_shift) sp.flags |= VKLLM_SESSION_STREAMING;
    stage = "creating the session";
    return vkllm_session_create(l.model, &sp, &l.session);
}

std::vector<int32_t> tokenize(const vkllm_tokenizer *tok, const std::string &text, uint32_t flags,
                              vkllm_status &s) {
    size_t n = 0;
    vkllm_tokenizer_encode(tok, text.data(), text.size(), flags, nullptr, 0, &n);
    std::vector<int32_t> ids(n);
    s = vkllm_tokenizer_encode(tok, text.data(), text.size(), flags, ids.data(), ids.size(), &n);
    return ids;
}

std::string render_chat(const Options &o, const vkllm_model *model, const std::vector<Turn> &turns,
                        bool open_answer, vkllm_status &s) {
    std::vector<vkllm_chat_turn> ct(turns.size());
    std::vector<std::vector<vkllm_tool_call>> calls(turns.size());
    for (size_t i = 0; i < turns.size(); ++i) {
        const Turn &t = turns[i];
        for (const ToolCall &c : t.calls)
            calls[i].push_back({c.id.c_str(), c.name.c_str(), c.arguments.c_str()});
        ct[i] = {sizeof(vkllm_chat_turn),
                 t.role.c_str(),
                 t.has_content ? t.content.c_str() : nullptr,
                 t.reasoning.empty() ? nullptr : t.reasoning.c_str(),
                 calls[i].data(),
                 calls[i].size(),
                 t.tool_call_id.empty() ? nullptr : t.tool_call_id.c_str(),
                 t.name.empty() ? nullptr : t.name.c_str()};
    }
    vkllm_chat_params p;
    vkllm_chat_params_init(&p);
    p.model = model;
    p.template_name = o.template_name;
    p.template_source = o.template_source.empty() ? nullptr : o.template_source.c_str();
    p.tools = o.tools.empty() ? nullptr : o.tools.c_str();
    p.extra = o.template_kwargs;
    p.add_generation_prompt = open_answer ? 1 : 0;
    size_t len = 0;
    s = vkllm_chat_render(&p, ct.data(), ct.size(), nullptr, 0, &len);
    if (s != VKLLM_ERR_BUFFER_TOO_SMALL) return std::string();
    std::vector<char> buf(len + 1);
    s = vkllm_chat_render(&p, ct.data(), ct.size(), buf.data(), buf.size(), &len);
    return std::string(buf.data(), len);
}

vkllm_reply_format reply_format(const Options &o, const vkllm_model *model) {
    if (o.template_name) {
        std::string name = o.template_name;
        // The built-in ChatML teaches no markers, but the Qwen models it serves write them.
        if (name == "chatml" || name == "qwen" || name == "qwen2") return VKLLM_REPLY_HERMES;
        if (name == "harmony" || name == "gpt-oss") return VKLLM_REPLY_HARMONY;
        return vkllm_reply_format_of_template(
            std::string(vkllm::chat::builtin_template(name)).c_str());
    }
    return vkllm_reply_format_of_template(o.template_source.empty()
                                              ? vkllm_model_get_chat_template(model)
                                              : o.template_source.c_str());
}

std::vector<int32_t> chat_ids(const vkllm_tokenizer *tok, const std::string &text,
                              vkllm_status &s) {
    std::vector<int32_t> ids = tokenize(tok, text, VKLLM_TOKENIZE_PARSE_SPECIAL, s);
    vkllm_tokenizer_info info;
    info.struct_size = sizeof info;
    if (s == VKLLM_OK && vkllm_tokenizer_get_info(tok, &info) == VKLLM_OK && info.add_bos &&
        info.bos >= 0 && (ids.empty() || ids[0] != info.bos))
        ids.insert(ids.begin(), info.bos);
    return ids;
}

void on_sigint(int) {
    g_interrupted = 1;
}

uint32_t context_size(const Loaded &l) {
    vkllm_session_info si;
    si.struct_size = sizeof si;
    vkllm_session_get_info(l.session, &si);
    return si.n_ctx;
}

// Pieces are printed as they are, bytes of a partial UTF-8 character included.
void print_prompt_tokens(const vkllm_tokenizer *tok, const std::vector<int32_t> &ids) {
    std::vector<char> buf;
    auto text = [&](auto &&fill) {
        size_t len = 0;
        fill(static_cast<char *>(nullptr), size_t(0), &len);
        buf.resize(len + 1);
        return fill(buf.data(), buf.size(), &len) == VKLLM_OK ? std::string(buf.data(), len)
                                                              : std::string("?");
    };
    std::string all = text([&](char *out, size_t cap, size_t *len) {
        return vkllm_tokenizer_decode(tok, ids.data(), ids.size(), VKLLM_DETOKENIZE_SPECIAL, out,
                                      cap, len);
    });
    std::fprintf(stderr, "prompt: '%s'\nnumber of tokens in prompt = %zu\n", all.c_str(),
                 ids.size());
    for (int32_t id : ids) {
        std::string piece = text([&](char *out, size_t cap, size_t *len) {
            return vkllm_tokenizer_get_piece(tok, id, VKLLM_DETOKENIZE_SPECIAL, out, cap, len);
        });
        std::fprintf(stderr, "%6d -> '%s'\n", id, piece.c_str());
    }
}

uint32_t answer_limit(const Options &o, const Loaded &l, size_t n_past, size_t n_prompt) {
    if (o.context_shift) return o.n_predict;
    uint64_t room = uint64_t(context_size(l)) - n_past - n_prompt + 1;
    return uint32_t(std::min<uint64_t>(o.n_predict, room));
}

vkllm_status generate(const Options &o, const Loaded &l, const std::vector<int32_t> &prompt,
                      uint32_t max_tokens, Stream &st, vkllm_generate_result &r) {
    vkllm_generate_params gp;
    vkllm_generate_params_init(&gp);
    gp.max_tokens = max_tokens;
    std::vector<const char *> stop;
    for (const std::string &text : o.stop)
        stop.push_back(text.c_str());
    gp.stop = stop.data();
    gp.n_stop = stop.size();
    gp.ignore_eog = o.ignore_eos ? 1 : 0;
    gp.render_special = st.view && st.view->wants_special() ? 1 : 0;
    gp.on_token = on_token;
    gp.on_prefill = on_prefill;
    if (st.json) {
        gp.on_logprobs = on_logprobs;
        gp.top_logprobs = o.top_logprobs;
    }
    gp.user_data = &st;
    r.struct_size = sizeof r;
    vkllm_sampling_params sp = o.sampling;
    sp.grammar = l.grammar;
    st.rt = l.rt;
    st.compile_at_first_token = -1;
    double before = compile_ms(l.rt);
    vkllm_status s = vkllm_session_generate(l.session, prompt.data(), prompt.size(), &sp, &gp, &r);
    if (s != VKLLM_OK) st.error = vkllm_last_error();
    double after = compile_ms(l.rt);
    double first = st.compile_at_first_token < 0 ? after : st.compile_at_first_token;
    st.compile_prefill_ms = first - before;
    st.compile_decode_ms = after - first;
    return s;
}

void report_unfinished(const Options &o, const std::string &by, const std::string &what) {
    std::fprintf(stderr,
                 "vkllm: run: %s is unfinished: %s stopped it before the grammar (%s) was "
                 "complete, so it is not valid output (exit status %d)\n",
                 what.c_str(), by.c_str(), o.constraint_source.c_str(),
                 by == "^C" ? 130 : kExitUnfinished);
}

double compile_ms(const vkllm_runtime *rt) {
    vkllm_runtime_stats rs;
    rs.struct_size = sizeof rs;
    return rt && vkllm_runtime_get_stats(rt, &rs) == VKLLM_OK ? rs.pipeline_compile_ms : 0.0;
}

void print_stats(const Loaded &l, const vkllm_generate_result &r, const Stream &gen) {
    vkllm_session_stats st;
    st.struct_size = sizeof st;
    vkllm_session_get_stats(l.session, &st);
    vkllm_device_info d;
    d.struct_size = sizeof d;
    vkllm_runtime_get_device_info(l.rt, &d);
    vkllm_model_info mi = model_info(l.model);
    vkllm_runtime_stats rs;
    rs.struct_size = sizeof rs;
    vkllm_runtime_get_stats(l.rt, &rs);
    std::fprintf(stderr,
                 "\n[%s] weights %.1f MiB on the device for %.1f MiB of tensor data; device "
                 "memory allocated %.1f MiB (KV cache %.1f MiB)",
                 d.name, double(mi.device_bytes) / 1048576.0, double(mi.tensor_bytes) / 1048576.0,
                 double(rs.device_memory_allocated) / 1048576.0,
                 double(st.kv_cache_bytes) / 1048576.0);
    auto rate = [](size_t n, double ms) { return ms > 0 ? 1000.0 * double(n) / ms : 0.0; };
    std::fprintf(stderr,
                 "\n[%s] load %.0f ms | compile %.0f ms | prefill %zu tokens %.1f tok/s | decode "
                 "%zu tokens %.1f tok/s | seed %llu | command buffers recorded %llu, submits "
                 "%llu\n",
                 d.name, l.load_ms, rs.pipeline_compile_ms, r.n_prompt,
                 rate(r.n_prompt, r.prefill_ms - gen.compile_prefill_ms), r.n_generated,
                 rate(r.n_generated, r.decode_ms - gen.compile_decode_ms),
                 (unsigned long long)r.seed, (unsigned long long)st.command_buffers_recorded,
                 (unsigned long long)st.submits);
}

}  // namespace vkllm_tool
