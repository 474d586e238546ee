// vkllm-serve's command line (docs/SERVER.md lists every option).
#pragma once

#include <cstdint>
#include <string>

namespace serve {

struct Options {
    std::string model;
    std::string host = "127.0.0.1";
    int port = 8080;  // 0: a free port, printed on the ready line
    uint32_t parallel = 4;
    uint32_t ctx = 0;    // per slot; 0: the model's, at most 4096
    uint32_t queue = 0;  // 0: 4 x parallel
    std::string api_key;
    std::string alias;
    uint32_t max_tokens_limit = 4096;
    size_t body_limit = 4194304;
    int timeout_s = 30;
    uint32_t n_batch = 256;
    std::string device;  // an index or a name substring; "": the best device
    bool validate = false;
    std::string chat_template;  // a built-in's name; "": the model's own
};

// Reads argv into *o. -1 when the server should start; otherwise the exit status, after the
// help (0) or a message naming the bad option (2) was printed.
int parse_options(int argc, char **argv, Options *o);

}  // namespace serve
