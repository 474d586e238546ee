// What every route reads: the options, the model, the engine and the request counters.
#pragma once

#include <string>

#include "connection_watch.h"
#include "engine.h"
#include "metrics_text.h"
#include "options.h"
#include "request_parse.h"
#include "vkllm.h"

namespace serve {

struct ServerContext {
    Options options;
    vkllm_model *model = nullptr;
    const vkllm_tokenizer *tokenizer = nullptr;
    Engine *engine = nullptr;
    std::string model_id;                                 // --alias, else the file's name
    std::string chat_template;                            // a built-in's name; "": the model's own
    vkllm_reply_format reply_format = VKLLM_REPLY_PLAIN;  // of that template
    uint32_t n_vocab = 0;
    HttpCounters counters;
    ConnectionWatch *connections = nullptr;  // set once the port is bound, before listening

    Limits limits() const { return Limits{options.max_tokens_limit, options.parallel, n_vocab}; }
};

}  // namespace serve
