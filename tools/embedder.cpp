// The shared part of `vkllm embed` and `vkllm similarity` (tools/embedder.h).
#include "embedder.h"

#include <algorithm>
#include <cstring>

#include "cli_args.h"

namespace vkllm_tool {

namespace {

vkllm_pooling pooling_arg(const char *text) {
    const std::string s = text;
    if (s == "none") return VKLLM_POOLING_NONE;
    if (s == "mean") return VKLLM_POOLING_MEAN;
    if (s == "cls") return VKLLM_POOLING_CLS;
    if (s == "last") return VKLLM_POOLING_LAST;
    throw ArgError("--pooling expects none, mean, cls or last, not " + quoted(text));
}

}  // namespace

bool embedder_option(int argc, char **argv, int &i, EmbedderOptions &o) {
    const std::string a = argv[i];
    static const char *const valued[] = {"-m", "--model", "--pooling", "--max-tokens",
                                         "-b", "--batch", "--device",  "--pipeline-cache"};
    bool takes_value = false;
    for (const char *v : valued)
        takes_value |= a == v;
    if (takes_value && i + 1 == argc) throw ArgError(a + " needs a value");
    if (a == "-m" || a == "--model") {
        o.model = argv[++i];
    } else if (a == "--pooling") {
        o.pooling = pooling_arg(argv[++i]);
    } else if (a == "--max-tokens") {
        o.max_tokens = uint32_t(int_arg(a, argv[++i], 0, UINT32_MAX));
    } else if (a == "-b" || a == "--batch") {
        o.batch = uint32_t(int_arg(a, argv[++i], 1, 1024));
    } else if (a == "--device") {
        device_arg(argv[++i], o.runtime);
    } else if (a == "--pipeline-cache") {
        o.runtime.pipeline_cache_path = argv[++i];
    } else if (a == "--normalize") {
        o.normalize = true;
    } else if (a == "--truncate") {
        o.truncate = true;
    } else if (a == "--validate") {
        o.runtime.flags |= VKLLM_RUNTIME_VALIDATION;
    } else {
        return false;
    }
    return true;
}

std::vector<std::string> split_lines(const std::string &text) {
    std::vector<std::string> lines;
    size_t start = 0;
    while (start < text.size()) {
        size_t end = text.find('\n', start);
        if (end == std::string::npos) end = text.size();
        std::string line = text.substr(start, end - start);
        if (!line.empty() && line.back() == '\r') line.pop_back();
        lines.push_back(line);
        start = end + 1;
    }
    return lines;
}

Embedder::~Embedder() {
    vkllm_session_destroy(session_);
    vkllm_model_destroy(model_);
    vkllm_runtime_destroy(rt_);
}

std::vector<int32_t> Embedder::tokenize(const std::string &text) const {
    const vkllm_tokenizer *tok = vkllm_model_get_tokenizer(model_);
    std::vector<int32_t> ids(text.size() + 8);
    size_t n = 0;
    vkllm_status s = vkllm_tokenizer_encode(tok, text.data(), text.size(),
                                            VKLLM_TOKENIZE_ADD_SPECIAL, ids.data(), ids.size(), &n);
    if (s == VKLLM_ERR_BUFFER_TOO_SMALL) {
        ids.resize(n);
        vkllm_tokenizer_encode(tok, text.data(), text.size(), VKLLM_TOKENIZE_ADD_SPECIAL,
                               ids.data(), ids.size(), &n);
    }
    ids.resize(n);
    return ids;
}

vkllm_status Embedder::open(const EmbedderOptions &o, const std::vector<std::string> &texts) {
    o_ = o;
    vkllm_status s = vkllm_runtime_create(&o.runtime, &rt_);
    if (s == VKLLM_OK) s = vkllm_model_load(rt_, o.model, nullptr, &model_);
    if (s != VKLLM_OK) return s;
    vkllm_model_info info;
    info.struct_size = sizeof info;
    if ((s = vkllm_model_get_info(model_, &info)) != VKLLM_OK) return s;
    n_embd_ = info.n_embd;
    pooling_ = o.pooling == VKLLM_POOLING_MODEL ? info.pooling : o.pooling;
    // A context as long as the longest input (the call refuses one over the model's positions
    // itself, with its message); cut inputs need no more than the cut.
    size_t longest = 1;
    for (const std::string &t : texts)
        longest = std::max(longest, tokenize(t).size());
    uint32_t limit = info.n_ctx_train > 0 ? info.n_ctx_train : uint32_t(longest);
    if (o.truncate && o.max_tokens > 0) limit = std::min(limit, o.max_tokens);
    n_ctx_ = uint32_t(std::min<size_t>(longest, limit));
    vkllm_session_params p;
    vkllm_session_params_init(&p);
    p.n_ctx = n_ctx_;
    p.n_seq = uint32_t(std::clamp<size_t>(texts.size(), 1, o.batch));
    return vkllm_session_create(model_, &p, &session_);
}

vkllm_status Embedder::embed(const std::vector<std::string> &texts,
                             std::vector<std::vector<float>> &out) {
    vkllm_embed_params p;
    vkllm_embed_params_init(&p);
    p.pooling = pooling_;
    p.flags =
        (o_.normalize ? VKLLM_EMBED_NORMALIZE : 0u) | (o_.truncate ? VKLLM_EMBED_TRUNCATE : 0u);
    p.max_tokens = o_.max_tokens;
    uint32_t limit = n_ctx_;
    if (o_.max_tokens > 0) limit = std::min(limit, o_.max_tokens);
    out.clear();
    for (size_t first = 0; first < texts.size(); first += o_.batch) {
        const size_t n = std::min<size_t>(o_.batch, texts.size() - first);
        std::vector<size_t> rows(n, 1);
        std::vector<std::vector<int32_t>> ids;
        std::vector<const int32_t *> id_ptrs;
        std::vector<size_t> lens;
        std::vector<const char *> text_ptrs;
        for (size_t i = 0; i < n; ++i) {
            const std::string &t = texts[first + i];
            if (pooling_ == VKLLM_POOLING_NONE) {
                ids.push_back(tokenize(t));
                rows[i] =
                    o_.truncate ? std::min<size_t>(ids.back().size(), limit) : ids.back().size();
            } else {
                text_ptrs.push_back(t.c_str());
            }
        }
        for (const auto &v : ids)
            id_ptrs.push_back(v.data()), lens.push_back(v.size());
        size_t total = 0;
        for (size_t r : rows)
            total += r;
        std::vector<float> flat(total * n_embd_);
        vkllm_status s =
            pooling_ == VKLLM_POOLING_NONE
                ? vkllm_session_embed_tokens(session_, id_ptrs.data(), lens.data(), n, &p,
                                             flat.data(), flat.size())
                : vkllm_session_embed(session_, text_ptrs.data(), n, &p, flat.data(), flat.size());
        if (s != VKLLM_OK) return s;
        size_t at = 0;
        for (size_t r : rows) {
            out.emplace_back(flat.begin() + at, flat.begin() + at + r * n_embd_);
            at += r * n_embd_;
        }
    }
    return VKLLM_OK;
}

}  // namespace vkllm_tool
