#include "options.h"

#include <cstdio>
#include <cstdlib>
#include <limits>

#include "auth.h"
#include "serve_usage.h"

namespace serve {

namespace {

bool read_uint(const std::string &text, uint64_t lo, uint64_t hi, uint64_t *out) {
    if (text.empty() || text[0] == '-' || text[0] == '+') return false;
    char *end = nullptr;
    unsigned long long v = std::strtoull(text.c_str(), &end, 10);
    if (*end != '\0' || v < lo || v > hi) return false;
    *out = v;
    return true;
}

}  // namespace

int parse_options(int argc, char **argv, Options *o) {
    std::string key_file;
    bool key_given = false;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "-h" || a == "--help") {
            std::fputs(kServeUsage, stdout);
            return 0;
        }
        if (a == "--validate") {
            o->validate = true;
            continue;
        }
        if (i + 1 >= argc) {
            std::fprintf(stderr, "vkllm serve: %s: %s (vkllm serve --help lists the options)\n",
                         a.c_str(), a.rfind("-", 0) == 0 ? "needs a value" : "unknown option");
            return 2;
        }
        const std::string v = argv[++i];
        uint64_t n = 0;
        auto number = [&](uint64_t lo, uint64_t hi) {
            if (read_uint(v, lo, hi, &n)) return true;
            std::fprintf(stderr, "vkllm serve: %s %s: expected a whole number from %llu to %llu\n",
                         a.c_str(), v.c_str(), (unsigned long long)lo, (unsigned long long)hi);
            return false;
        };
        if (a == "-m" || a == "--model") {
            o->model = v;
        } else if (a == "--host") {
            o->host = v;
        } else if (a == "--port") {
            if (!number(0, 65535)) return 2;
            o->port = int(n);
        } else if (a == "--parallel") {
            if (!number(1, 256)) return 2;
            o->parallel = uint32_t(n);
        } else if (a == "-c" || a == "--ctx-size") {
            if (!number(0, 1u << 20)) return 2;
            o->ctx = uint32_t(n);
        } else if (a == "--queue") {
            if (!number(0, 1u << 16)) return 2;
            o->queue = uint32_t(n);
        } else if (a == "--api-key") {
            o->api_key = v;
            key_given = true;
        } else if (a == "--api-key-file") {
            key_file = v;
        } else if (a == "--alias") {
            o->alias = v;
        } else if (a == "--max-tokens-limit") {
            if (!number(1, 1u << 20)) return 2;
            o->max_tokens_limit = uint32_t(n);
        } else if (a == "--body-limit") {
            if (!number(1024, uint64_t(1) << 32)) return 2;
            o->body_limit = size_t(n);
        } else if (a == "--timeout") {
            if (!number(1, 3600)) return 2;
            o->timeout_s = int(n);
        } else if (a == "--n-batch") {
            if (!number(1, 1u << 16)) return 2;
            o->n_batch = uint32_t(n);
        } else if (a == "--device") {
            o->device = v;
        } else if (a == "--chat-template") {
            o->chat_template = v;
        } else {
            std::fprintf(stderr,
                         "vkllm serve: %s: unknown option (vkllm serve --help lists them)\n",
                         a.c_str());
            return 2;
        }
    }
    if (o->model.empty()) {
        std::fprintf(stderr, "vkllm serve: -m MODEL is required (vkllm serve --help)\n");
        return 2;
    }
    if (key_given && !key_file.empty()) {
        std::fprintf(stderr, "vkllm serve: --api-key and --api-key-file: give one of them\n");
        return 2;
    }
    if (key_given && o->api_key.empty()) {
        std::fprintf(stderr, "vkllm serve: --api-key: the key is empty\n");
        return 2;
    }
    if (!key_file.empty()) {
        std::string error;
        if (!read_key_file(key_file, &o->api_key, &error)) {
            std::fprintf(stderr, "vkllm serve: --api-key-file: %s\n", error.c_str());
            return 2;
        }
    }
    return -1;
}

}  // namespace serve
