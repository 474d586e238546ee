// vkllm-serve: an OpenAI-compatible HTTP server over the public C API (docs/SERVER.md).
// `vkllm serve ARGS` runs it.
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>

#include <pthread.h>
#include <unistd.h>

#include "engine.h"
#include "http_server.h"
#include "options.h"
#include "server_context.h"

namespace {

// The model's id: --alias, else the file's name without its directory and .gguf.
std::string model_id(const serve::Options &o) {
    if (!o.alias.empty()) return o.alias;
    std::string name = o.model.substr(o.model.find_last_of("/\\") + 1);
    const std::string ext = ".gguf";
    if (name.size() > ext.size() && name.compare(name.size() - ext.size(), ext.size(), ext) == 0)
        name.resize(name.size() - ext.size());
    return name;
}

// The reply format of a built-in template, by name: their text is the library's, so the names
// that teach markers are listed (as tools/generation.cpp's reply_format does for chatml).
vkllm_reply_format builtin_reply_format(const std::string &name) {
    if (name == "chatml" || name == "qwen" || name == "qwen2" || name == "qwen2.5" ||
        name == "deepseek-r1")
        return VKLLM_REPLY_HERMES;
    if (name == "harmony" || name == "gpt-oss") return VKLLM_REPLY_HARMONY;
    if (name.rfind("mistral", 0) == 0) return VKLLM_REPLY_MISTRAL;
    if (name == "llama3") return VKLLM_REPLY_LLAMA3;
    return VKLLM_REPLY_PLAIN;
}

int fail(const char *what) {
    std::fprintf(stderr, "vkllm serve: %s: %s\n", what, vkllm_last_error());
    return 1;
}

struct Loaded {
    vkllm_runtime *rt = nullptr;
    vkllm_model *model = nullptr;
    ~Loaded() {
        vkllm_model_destroy(model);
        vkllm_runtime_destroy(rt);
    }
};

}  // namespace

int main(int argc, char **argv) {
    serve::ServerContext ctx;
    if (int status = serve::parse_options(argc, argv, &ctx.options); status >= 0) return status;
    const serve::Options &o = ctx.options;

    // SIGINT and SIGTERM are taken by one thread (sigwait), never by a handler interrupting
    // the server's threads; a client gone mid-write is an error return, not SIGPIPE.
    sigset_t stop_signals;
    sigemptyset(&stop_signals);
    sigaddset(&stop_signals, SIGINT);
    sigaddset(&stop_signals, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
    std::signal(SIGPIPE, SIG_IGN);

    Loaded l;
    vkllm_runtime_params rp;
    vkllm_runtime_params_init(&rp);
    if (!o.device.empty()) {
        if (o.device.find_first_not_of("0123456789") == std::string::npos)
            rp.device_index = std::stoi(o.device);
        else
            rp.device_name = o.device.c_str();
    }
    if (o.validate) rp.flags |= VKLLM_RUNTIME_VALIDATION;
    if (vkllm_runtime_create(&rp, &l.rt) != VKLLM_OK) return fail("opening the device");
    vkllm_model_params mp;
    vkllm_model_params_init(&mp);
    if (vkllm_model_load(l.rt, o.model.c_str(), &mp, &l.model) != VKLLM_OK)
        return fail(("loading " + o.model).c_str());

    ctx.model = l.model;
    ctx.tokenizer = vkllm_model_get_tokenizer(l.model);
    vkllm_tokenizer_info ti;
    ti.struct_size = sizeof ti;
    if (vkllm_tokenizer_get_info(ctx.tokenizer, &ti) != VKLLM_OK) return fail("the tokenizer");
    ctx.n_vocab = ti.n_vocab;
    ctx.model_id = model_id(o);
    ctx.chat_template = o.chat_template;
    if (ctx.chat_template.empty() && !*vkllm_model_get_chat_template(l.model)) {
        // As `vkllm run --chat` does for a model without a template.
        ctx.chat_template = "chatml";
        std::fprintf(stderr,
                     "vkllm serve: %s has no chat template: /v1/chat/completions uses chatml "
                     "(--chat-template NAME chooses another)\n",
                     o.model.c_str());
    }
    ctx.reply_format = ctx.chat_template.empty()
                           ? vkllm_reply_format_of_template(vkllm_model_get_chat_template(l.model))
                           : builtin_reply_format(ctx.chat_template);

    serve::EngineOptions eo;
    eo.parallel = o.parallel;
    eo.ctx = o.ctx;
    eo.queue_limit = o.queue;
    eo.n_batch = o.n_batch;
    std::string error;
    std::unique_ptr<serve::Engine> engine = serve::Engine::create(l.model, eo, &error);
    if (!engine) {
        std::fprintf(stderr, "vkllm serve: starting the engine: %s\n", error.c_str());
        return 1;
    }
    ctx.engine = engine.get();

    httplib::Server server;
    serve::configure_server(server, ctx);
    int port = o.port;
    if (port == 0)
        port = server.bind_to_any_port(o.host);
    else if (!server.bind_to_port(o.host, port))
        port = -1;
    if (port <= 0) {
        std::fprintf(stderr, "vkllm serve: cannot listen on %s port %d\n", o.host.c_str(), o.port);
        return 1;
    }

    serve::ConnectionWatch connections(port, std::chrono::seconds(o.timeout_s));
    ctx.connections = &connections;

    std::atomic<bool> stopping{false};
    std::thread waiter([&] {
        int sig = 0;
        sigwait(&stop_signals, &sig);
        stopping = true;
        engine->shutdown();  // streams in flight end; their threads return
        server.stop();
    });

    const bool v6 = o.host.find(':') != std::string::npos;
    std::printf("vkllm serve: listening on http://%s%s%s:%d\n", v6 ? "[" : "", o.host.c_str(),
                v6 ? "]" : "", port);
    std::fflush(stdout);
    bool ok = server.listen_after_bind();
    const bool signalled = stopping;
    if (!signalled) kill(getpid(), SIGTERM);  // wakes the waiter, which is blocked in sigwait
    waiter.join();
    if (!ok && !signalled) {
        std::fprintf(stderr, "vkllm serve: the server stopped unexpectedly\n");
        return 1;
    }
    return 0;
}
