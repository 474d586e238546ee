#include "serve_usage.h"

namespace serve {

const char kServeUsage[] =
    "usage: vkllm serve -m MODEL [options]\n"
    "An OpenAI-compatible HTTP server (docs/SERVER.md): /v1/chat/completions, /v1/completions,\n"
    "/v1/models, /health, /metrics, /tokenize, /detokenize and a chat page at /.\n"
    "  -m, --model FILE        the GGUF model (required)\n"
    "  --host ADDR             address to bind (default 127.0.0.1: this machine only)\n"
    "  --port N                port (default 8080; 0 picks a free one)\n"
    "  --parallel N            sequences decoded together, and the most n a request may ask\n"
    "                          (default 4)\n"
    "  -c, --ctx-size N        context per sequence (default: the model's, at most 4096)\n"
    "  --queue N               requests waiting beyond the busy slots before 429 (default\n"
    "                          4 x --parallel)\n"
    "  --api-key KEY           require 'Authorization: Bearer KEY' (all routes but / and\n"
    "                          /health)\n"
    "  --api-key-file F        the same, the key read from F's first line\n"
    "  --alias NAME            the model's id in /v1/models and answers (default: the file's\n"
    "                          name without .gguf)\n"
    "  --max-tokens-limit N    the most max_tokens a request may ask (default 4096)\n"
    "  --body-limit BYTES      the largest request body (default 4194304; larger: 413)\n"
    "  --timeout S             seconds a client may take to send or read (default 30)\n"
    "  --n-batch N             prompt tokens prefilled between decode steps (default 256)\n"
    "  --device N|NAME         device index or name substring (default: VKLLM_DEVICE, else\n"
    "                          the best device)\n"
    "  --validate              enable the Vulkan validation layer\n"
    "  --chat-template NAME    a built-in chat template instead of the model's own\n"
    "  -h, --help              this help\n"
    "When ready it prints 'vkllm serve: listening on http://HOST:PORT'. SIGINT or SIGTERM\n"
    "stops it: requests in flight are cancelled, exit status 0. `vkllm serve` runs the\n"
    "vkllm-serve program beside vkllm (built where cpp-httplib and nlohmann-json are found).\n";

}  // namespace serve
