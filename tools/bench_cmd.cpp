// vkllm bench: prompt-processing and generation speed in the manner of llama-bench, through
// the public C API only, so it measures what an application gets.
//
// Each repetition empties the session, prefills p tokens (pp) and then generates n tokens
// greedily after them (tg: each step decodes one token, reads its logits back and takes the
// argmax on the host, as an application sampling on the CPU would). With --no-kv-cache each
// generated token instead recomputes the whole sequence from an empty cache: the ablation
// that shows what the KV cache is worth. With --chain N, generation instead chains N greedy
// steps per submission, the token chosen on the device (vkllm_session_decode_greedy). A warm-up
// repetition first compiles the pipelines and records the command buffers; it is not measured. With
// --profile the session times every kernel on the device, and a table per test says where the
// device time of a token went. With --fork, -s N sequences get the prompt by one prefill and
// N - 1 forks; with --restore, by restoring a saved state of all but its last token (saved once,
// before the runs) and prefilling that one: what an app pays for a cached prefix.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "bench_options.h"
#include "cli.h"
#include "cli_args.h"
#include "coopmat_text.h"
#include "prefill_flops.h"
#include "quant_targets.h"
#include "token_json.h"
#include "vkllm.h"

namespace {

int report(vkllm_status s, const char *what) {
    std::fprintf(stderr, "vkllm: bench: %s: %s: %s\n", what, vkllm_status_string(s),
                 vkllm_last_error());
    return 1;
}

// What the table says about the model, from its file.
struct ModelFacts {
    std::string model;  // "gpt2 124M"
    std::string type;   // "Q8_0"
    uint64_t size = 0;  // bytes of tensor data
    uint64_t params = 0;
    vkllm_tool::PrefillFlops flops;
};

// The file type as llama.cpp names it; files without general.file_type (or with one this
// tool does not name) get the type of most of their matrix bytes.
std::string file_type(const vkllm_gguf *g, uint64_t n_tensors) {
    int64_t ftype = -1;
    if (vkllm_gguf_get_int(g, "general.file_type", &ftype) == VKLLM_OK && ftype >= 0) {
        if (const vkllm_tool::Target *t = vkllm_tool::find_target_by_ftype(uint32_t(ftype)))
            return t->name;
        // GPT-OSS's scheme (MXFP4 experts, the rest wider) is not a quantize target.
        if (ftype == 38) return "MXFP4_MOE";
    }
    std::vector<uint64_t> bytes(VKLLM_GGML_TYPE_COUNT, 0);
    for (size_t i = 0; i < n_tensors; ++i) {
        vkllm_tensor_info t;
        t.struct_size = sizeof t;
        if (vkllm_gguf_get_tensor(g, i, &t) == VKLLM_OK && t.n_dims >= 2 &&
            t.type < VKLLM_GGML_TYPE_COUNT)
            bytes[t.type] += t.n_bytes;
    }
    size_t most = size_t(std::max_element(bytes.begin(), bytes.end()) - bytes.begin());
    const char *name = vkllm_ggml_type_name(uint32_t(most));
    return name ? name : "?";
}

vkllm_status read_facts(const char *path, ModelFacts &f) {
    vkllm_gguf *g = nullptr;
    vkllm_status s = vkllm_gguf_open(path, &g);
    if (s != VKLLM_OK) return s;
    vkllm_model_summary m;
    m.struct_size = sizeof m;
    s = vkllm_gguf_get_summary(g, &m);
    if (s == VKLLM_OK) {
        char label[32];
        if (m.n_params >= 1000000000ull)
            std::snprintf(label, sizeof label, "%.1fB", double(m.n_params) / 1e9);
        else
            std::snprintf(label, sizeof label, "%.0fM", double(m.n_params) / 1e6);
        f.model = std::string(m.architecture) + " " + label;
        f.type = file_type(g, m.n_tensors);
        f.size = m.tensor_bytes;
        f.params = m.n_params;
        s = vkllm_tool::prefill_flops(g, f.flops);
    }
    vkllm_gguf_destroy(g);
    return s;
}

// Runtime, model and session, released in order.
struct Handles {
    vkllm_runtime *rt = nullptr;
    vkllm_model *model = nullptr;
    vkllm_session *session = nullptr;
    Handles() = default;
    Handles(const Handles &) = delete;
    Handles &operator=(const Handles &) = delete;
    ~Handles() {
        vkllm_session_destroy(session);
        vkllm_model_destroy(model);
        vkllm_runtime_destroy(rt);
    }
};

double ms_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// Device time per kernel: dispatches and ms.
using Profile = std::map<std::string, std::pair<uint64_t, double>>;

vkllm_status read_profile(const vkllm_session *session, Profile &out) {
    size_t count = 0;
    vkllm_status s = vkllm_session_get_profile(session, nullptr, 0, &count);
    if (s != VKLLM_OK) return s;
    std::vector<vkllm_kernel_time> k(count);
    s = vkllm_session_get_profile(session, k.data(), k.size(), &count);
    if (s != VKLLM_OK) return s;
    out.clear();
    for (size_t i = 0; i < count && i < k.size(); ++i)
        out[k[i].kernel] = {k[i].dispatches, k[i].ms};
    return VKLLM_OK;
}

// Adds what `after` has beyond `before` to `sum`.
void add_difference(const Profile &before, const Profile &after, Profile &sum) {
    for (const auto &[name, v] : after) {
        auto b = before.find(name);
        uint64_t d = v.first - (b == before.end() ? 0 : b->second.first);
        double ms = v.second - (b == before.end() ? 0 : b->second.second);
        if (d == 0) continue;
        sum[name].first += d;
        sum[name].second += ms;
    }
}

struct Timing {
    double pp_ms = 0;
    double first_seq_pp_ms = 0;  // the prefill of the first sequence alone
    double tg_ms = 0;
    Profile pp_profile, tg_profile;  // with --profile
};

// One repetition: empty cache, prompt, then n_gen greedy tokens.
class Runner {
  public:
    Runner(vkllm_session *session, const vkllm_tool::BenchOptions &o, uint32_t n_vocab)
        : session_(session), o_(o), n_vocab_(n_vocab), logits_(size_t(n_vocab) * o.n_seq) {
        // Spread over the vocabulary, away from the first ids (often control tokens), and
        // the same for every run of a model.
        for (uint32_t i = 0; i < o.n_prompt; ++i)
            prompt_.push_back(int32_t(3 + (uint64_t(i) * 7919) % (n_vocab - 3)));
    }

    vkllm_status run(Timing &t) {
        vkllm_status s = vkllm_session_reset(session_, -1);
        if (s != VKLLM_OK) return s;
        std::vector<int32_t> sequence = prompt_;
        // What generation starts from (3 without a prompt), per sequence.
        std::vector<int32_t> next(o_.n_seq, 3);
        std::vector<uint32_t> seqs(o_.n_seq);
        Profile start, mid, end;
        if (o_.profile && (s = read_profile(session_, start)) != VKLLM_OK) return s;
        if (o_.restore && state_.empty() && (s = save_prefix()) != VKLLM_OK) return s;
        if (!prompt_.empty()) {
            auto t0 = std::chrono::steady_clock::now();
            for (uint32_t q = 0; q < o_.n_seq; ++q) {
                s = o_.fork && q > 0 ? vkllm_session_fork(session_, 0, q, o_.n_prompt) : prefill(q);
                if (s != VKLLM_OK) return s;
                if (q == 0) t.first_seq_pp_ms = ms_since(t0);
                next[q] = argmax(0);
            }
            t.pp_ms = ms_since(t0);
        }
        for (uint32_t q = 0; q < o_.n_seq; ++q)
            seqs[q] = q;
        if (o_.profile && (s = read_profile(session_, mid)) != VKLLM_OK) return s;
        auto t0 = std::chrono::steady_clock::now();
        for (uint32_t i = 0; o_.chain && i < o_.n_gen;) {
            uint32_t steps = std::min(o_.chain, o_.n_gen - i);
            chained_.resize(size_t(steps) * o_.n_seq);
            s = vkllm_session_decode_greedy(session_, seqs.data(), next.data(), o_.n_seq, steps,
                                            chained_.data());
            if (s != VKLLM_OK) return s;
            next.assign(chained_.end() - o_.n_seq, chained_.end());
            i += steps;
        }
        for (uint32_t i = 0; !o_.chain && i < o_.n_gen; ++i) {
            if (o_.kv_cache) {
                s = vkllm_session_decode(session_, seqs.data(), next.data(), o_.n_seq,
                                         logits_.data());
            } else {
                sequence.push_back(next[0]);
                s = vkllm_session_reset(session_, -1);
                if (s == VKLLM_OK)
                    s = vkllm_session_eval(session_, 0, sequence.data(), sequence.size(),
                                           logits_.data());
            }
            if (s != VKLLM_OK) return s;
            for (uint32_t q = 0; q < o_.n_seq; ++q)
                next[q] = argmax(q);
        }
        t.tg_ms = ms_since(t0);
        if (o_.profile) {
            if ((s = read_profile(session_, end)) != VKLLM_OK) return s;
            add_difference(start, mid, t.pp_profile);
            add_difference(mid, end, t.tg_profile);
        }
        return VKLLM_OK;
    }

  private:
    // The prompt into sequence q, its last token's logits into row 0; --restore: all of it but
    // that token from the saved state.
    vkllm_status prefill(uint32_t q) {
        size_t done = 0;
        if (o_.restore) {
            vkllm_status s = vkllm_session_state_load(session_, q, state_.data(), state_.size());
            if (s != VKLLM_OK) return s;
            done = prompt_.size() - 1;
        }
        return vkllm_session_eval(session_, q, prompt_.data() + done, prompt_.size() - done,
                                  logits_.data());
    }

    // --restore: the state of the prompt but its last token, saved once.
    vkllm_status save_prefix() {
        vkllm_status s =
            vkllm_session_eval(session_, 0, prompt_.data(), prompt_.size() - 1, nullptr);
        size_t size = 0, length = 0;
        if (s == VKLLM_OK) s = vkllm_session_get_state_size(session_, 0, &size);
        state_.resize(size);
        if (s == VKLLM_OK)
            s = vkllm_session_state_save(session_, 0, state_.data(), state_.size(), &length);
        if (s == VKLLM_OK) s = vkllm_session_reset(session_, 0);
        return s;
    }

    // The greedy token of logits row `row`.
    int32_t argmax(uint32_t row) const {
        auto first = logits_.begin() + size_t(row) * n_vocab_;
        return int32_t(std::max_element(first, first + n_vocab_) - first);
    }

    vkllm_session *session_;
    const vkllm_tool::BenchOptions &o_;
    uint32_t n_vocab_;
    std::vector<float> logits_;
    std::vector<int32_t> prompt_;
    std::vector<int32_t> chained_;
    std::vector<uint8_t> state_;  // --restore
};

struct Result {
    std::string test;  // "pp512", "tg128", "tg128 no-kv"
    uint32_t n_prompt, n_gen;
    std::vector<double> samples;  // tokens per second
    Profile profile;              // summed over the measured repetitions
    double wall_ms = 0;           // likewise
    double flops_per_token = 0;   // pp rows of a plain prefill: the arithmetic of a token
    double mean() const {
        double sum = 0;
        for (double x : samples)
            sum += x;
        return sum / double(samples.size());
    }
    // The sample standard deviation, as llama-bench reports it (0 for one sample).
    double stddev() const {
        if (samples.size() < 2) return 0;
        double m = mean(), sum = 0;
        for (double x : samples)
            sum += (x - m) * (x - m);
        return std::sqrt(sum / double(samples.size() - 1));
    }
};

// `coopmat`: the cooperative-matrix shape prefill ran on, empty where it ran none;
// `tuned_shapes`: the runtime's stats count of shapes running a tuned kernel variant.
void print_json(const ModelFacts &f, const std::string &device, const std::string &coopmat,
                uint64_t tuned_shapes, bool kv_cache, const Result &r) {
    std::printf(
        "{\"model\": %s, \"type\": %s, \"size\": %llu, \"params\": %llu, \"test\": %s, "
        "\"n_prompt\": %u, \"n_gen\": %u, \"kv_cache\": %s, \"samples_ts\": [",
        vkllm_tool::json_text(f.model).c_str(), vkllm_tool::json_text(f.type).c_str(),
        (unsigned long long)f.size, (unsigned long long)f.params,
        vkllm_tool::json_text(r.test).c_str(), r.n_prompt, r.n_gen, kv_cache ? "true" : "false");
    for (size_t i = 0; i < r.samples.size(); ++i)
        std::printf("%s%.6g", i ? ", " : "", r.samples[i]);
    std::printf(
        "], \"avg_ts\": %.6g, \"stddev_ts\": %.6g, \"device\": %s, \"coopmat\": %s, "
        "\"tuned_shapes\": %llu",
        r.mean(), r.stddev(), vkllm_tool::json_text(device).c_str(),
        coopmat.empty() ? "null" : vkllm_tool::json_text(coopmat).c_str(),
        (unsigned long long)tuned_shapes);
    if (r.flops_per_token > 0)
        std::printf(", \"flops_per_token\": %.0f, \"tflops\": %.6g", r.flops_per_token,
                    r.flops_per_token * r.mean() / 1e12);
    std::printf("}\n");
}

// A pp row's arithmetic: what a GPU figure is as TFLOPS (tools/prefill_flops.h counts it).
void print_flops(const ModelFacts &f, const Result &r) {
    const vkllm_tool::PrefillFlops &c = f.flops;
    std::printf(
        "%s: %.4g GFLOP per token (weights %.4g, output head %.4g, attention %.4g) at %.2f "
        "tok/s: %.4g TFLOPS\n",
        r.test.c_str(), r.flops_per_token / 1e9, c.weights / 1e9, c.head / r.n_prompt / 1e9,
        c.attention(r.n_prompt) / 1e9, r.mean(), r.flops_per_token * r.mean() / 1e12);
}

// llama-bench's markdown table, a row per test.
class Table {
  public:
    Table(const ModelFacts &f, const std::string &device, const std::string &widest_test) {
        char buf[64];
        double mib = double(f.size) / 1048576.0;
        if (mib >= 1024)
            std::snprintf(buf, sizeof buf, "%.2f GiB", mib / 1024);
        else
            std::snprintf(buf, sizeof buf, "%.2f MiB", mib);
        std::string size = buf;
        if (f.params >= 1000000000ull)
            std::snprintf(buf, sizeof buf, "%.2f B", double(f.params) / 1e9);
        else
            std::snprintf(buf, sizeof buf, "%.2f M", double(f.params) / 1e6);
        cells_ = {f.model, f.type, size, buf, device};
        widths_ = {5, 4, 4, 6, 7, 4, 20};  // the headers' lengths, t/s wide enough for values
        for (size_t i = 0; i < cells_.size(); ++i)
            widths_[i] = std::max(widths_[i], cells_[i].size());
        widths_[5] = std::max(widths_[5], widest_test.size());
    }

    void header() const {
        row({"model", "type", "size", "params", "backend", "test", "t/s"});
        std::string rule = "|";
        for (size_t i = 0; i < widths_.size(); ++i) {
            // Numbers right-aligned, as llama-bench aligns them.
            bool right = i == 2 || i == 3 || i == 6;
            rule +=
                " " + std::string(widths_[i] - (right ? 1 : 0), '-') + (right ? ":" : "") + " |";
        }
        std::printf("%s\n", rule.c_str());
    }

    void add(const Result &r) const {
        char ts[64];
        std::snprintf(ts, sizeof ts, "%.2f ± %.2f", r.mean(), r.stddev());
        std::vector<std::string> cells = cells_;
        cells.push_back(r.test);
        cells.push_back(ts);
        row(cells);
    }

  private:
    void row(const std::vector<std::string> &cells) const {
        std::string line = "|";
        for (size_t i = 0; i < cells.size(); ++i) {
            bool right = i == 2 || i == 3 || i == 6;
            // "±" is two bytes but one column.
            size_t shown = cells[i].size() - (cells[i].find("±") != std::string::npos ? 1 : 0);
            std::string pad(widths_[i] > shown ? widths_[i] - shown : 0, ' ');
            line += " " + (right ? pad + cells[i] : cells[i] + pad) + " |";
        }
        std::printf("%s\n", line.c_str());
        std::fflush(stdout);
    }

    std::vector<std::string> cells_;
    std::vector<size_t> widths_;
};

// Where the device time of a token went: a row per kernel, most time first, then what the
// kernels add up to beside the wall-clock time (the rest is submission, waiting and the host).
void print_profile(const Result &r, uint32_t tokens) {
    std::vector<std::pair<std::string, std::pair<uint64_t, double>>> rows(r.profile.begin(),
                                                                          r.profile.end());
    std::sort(rows.begin(), rows.end(),
              [](const auto &a, const auto &b) { return a.second.second > b.second.second; });
    double total = 0;
    for (const auto &row : rows)
        total += row.second.second;
    double per = double(tokens);
    std::printf("\n%s: device time per token, by kernel\n\n", r.test.c_str());
    std::printf("| kernel | dispatches/token | ms/token | %% of device time |\n");
    std::printf("| ------ | ---------------: | -------: | ---------------: |\n");
    for (const auto &[name, v] : rows)
        std::printf("| %s | %.1f | %.3f | %.1f |\n", name.c_str(), double(v.first) / per,
                    v.second / per, total > 0 ? 100.0 * v.second / total : 0.0);
    std::printf("| all kernels | | %.3f | of %.3f ms/token wall-clock (%.0f%%) |\n", total / per,
                r.wall_ms / per, r.wall_ms > 0 ? 100.0 * total / r.wall_ms : 0.0);
}

int bench(const vkllm_tool::BenchOptions &o) {
    ModelFacts facts;
    vkllm_status s = read_facts(o.model, facts);
    if (s != VKLLM_OK) return report(s, "reading the model");

    Handles h;
    s = vkllm_runtime_create(&o.runtime, &h.rt);
    if (s != VKLLM_OK) return report(s, "creating the runtime");
    vkllm_device_info device;
    device.struct_size = sizeof device;
    s = vkllm_runtime_get_device_info(h.rt, &device);
    if (s != VKLLM_OK) return report(s, "reading the device");
    s = vkllm_model_load(h.rt, o.model, nullptr, &h.model);
    if (s != VKLLM_OK) return report(s, "loading the model");
    vkllm_model_info info;
    info.struct_size = sizeof info;
    s = vkllm_model_get_info(h.model, &info);
    if (s != VKLLM_OK) return report(s, "reading the model");
    if (info.n_vocab < 4) {
        std::fprintf(stderr, "vkllm: bench: a vocabulary of %u tokens is too small\n",
                     info.n_vocab);
        return 1;
    }

    uint64_t n_ctx = o.n_ctx ? o.n_ctx : uint64_t(o.n_prompt) + o.n_gen;
    if (n_ctx > info.n_ctx_train) {
        std::fprintf(stderr,
                     "vkllm: bench: a context of %llu tokens is more than the %u positions the "
                     "model was trained for; use smaller -p and -n\n",
                     (unsigned long long)n_ctx, info.n_ctx_train);
        return 1;
    }
    vkllm_session_params sp;
    vkllm_session_params_init(&sp);
    sp.n_ctx = uint32_t(n_ctx);
    sp.n_seq = o.n_seq;
    if (o.n_batch) sp.n_batch = o.n_batch;
    if (o.record_every_step) sp.flags |= VKLLM_SESSION_RECORD_EVERY_STEP;
    if (o.profile) sp.flags |= VKLLM_SESSION_PROFILE;
    s = vkllm_session_create(h.model, &sp, &h.session);
    if (s != VKLLM_OK) return report(s, "creating the session");

    std::string batch = o.n_seq > 1 ? " x" + std::to_string(o.n_seq) : "";
    auto pp_name = [&](uint32_t p) {
        return "pp" + std::to_string(p) + batch + (o.fork ? " fork" : "") +
               (o.restore ? " restored" : "");
    };
    // With several prompt lengths a tg row says which it followed (llama-bench's depth).
    auto tg_name = [&](uint32_t n, uint32_t p) {
        return "tg" + std::to_string(n) + batch + (o.kv_cache ? "" : " no-kv") +
               (o.record_every_step ? " re-record" : "") +
               (o.chain ? " chain" + std::to_string(o.chain) : "") +
               (o.prompts.size() > 1 ? " @ d" + std::to_string(p) : "");
    };
    std::string widest;
    for (uint32_t p : o.prompts)
        for (uint32_t n : o.gens)
            for (const std::string &name : {pp_name(p), tg_name(n, p)})
                if (name.size() > widest.size()) widest = name;
    // Which prefill kernels ran: the backend cell names the cooperative matrices where used.
    std::string coopmat = device.cooperative_matrix == VKLLM_COOPMAT_USED
                              ? vkllm_tool::coopmat_shape_text(device.coopmat_shape)
                              : "";
    // Whether decode runs kernel variants tuned for this device (`vkllm tune`, read from the
    // tune file beside --pipeline-cache): the backend cell says so.
    vkllm_runtime_stats start;
    start.struct_size = sizeof start;
    s = vkllm_runtime_get_stats(h.rt, &start);
    if (s != VKLLM_OK) return report(s, "reading the runtime's counters");
    std::string backend = device.name;
    if (!coopmat.empty()) backend += ", coopmat " + coopmat;
    if (start.tuned_shapes) backend += ", tuned " + std::to_string(start.tuned_shapes) + " shapes";
    Table table(facts, backend, widest);
    if (!o.json) table.header();
    double first_pp_ms = -1;  // the first prefill compiles the pipelines it needs
    uint32_t first_pp = 0;
    std::vector<uint32_t> pp_done;
    std::vector<Result> flops_rows;  // printed below the table
    for (uint32_t p : o.prompts) {
        for (uint32_t n : o.gens) {
            if (p == 0 && n == 0) continue;
            vkllm_tool::BenchOptions one = o;
            one.n_prompt = p;
            one.n_gen = n;
            bool new_pp = p > 0 && std::find(pp_done.begin(), pp_done.end(), p) == pp_done.end();
            if (new_pp) pp_done.push_back(p);
            Result pp{pp_name(p), p, 0, {}};
            // A fork or a restored prefix prefills less than the prompt: no count for those.
            if (!o.fork && !o.restore) pp.flops_per_token = facts.flops.per_token(p);
            Result tg{tg_name(n, p), p, n, {}};
            Runner runner(h.session, one, info.n_vocab);
            if (o.warm_up) {
                Timing first;
                s = runner.run(first);
                if (s != VKLLM_OK) return report(s, "warm-up");
                if (first_pp_ms < 0 && p > 0) first_pp_ms = first.first_seq_pp_ms, first_pp = p;
            }
            for (uint32_t r = 0; r < o.reps; ++r) {
                Timing t;
                s = runner.run(t);
                if (s != VKLLM_OK) return report(s, "benchmark");
                if (first_pp_ms < 0 && p > 0) first_pp_ms = t.first_seq_pp_ms, first_pp = p;
                pp.samples.push_back(1000.0 * p * o.n_seq / std::max(t.pp_ms, 1e-6));
                tg.samples.push_back(1000.0 * n * o.n_seq / std::max(t.tg_ms, 1e-6));
                add_difference({}, t.pp_profile, pp.profile);
                add_difference({}, t.tg_profile, tg.profile);
                pp.wall_ms += t.pp_ms;
                tg.wall_ms += t.tg_ms;
            }
            for (const Result *r : {&pp, &tg}) {
                if (r == &pp ? !new_pp : n == 0) continue;
                if (o.json)
                    print_json(facts, device.name, coopmat, start.tuned_shapes, o.kv_cache, *r);
                else
                    table.add(*r);
                if (r == &pp && pp.flops_per_token > 0) flops_rows.push_back(pp);
            }
            if (o.profile && !o.json)
                for (const Result *r : {&pp, &tg})
                    if (!r->profile.empty() && (r == &tg || new_pp))
                        print_profile(*r, o.reps * o.n_seq * (r == &pp ? p : n));
        }
    }
    if (!o.json && !flops_rows.empty()) {
        std::printf("\n");
        for (const Result &r : flops_rows)
            print_flops(facts, r);
    }
    if (!o.json && first_pp > 0) {
        vkllm_runtime_stats rs;
        rs.struct_size = sizeof rs;
        if (vkllm_runtime_get_stats(h.rt, &rs) == VKLLM_OK)
            std::printf(
                "\ntime to first token: %.1f ms (the first prefill of %u tokens, compiling "
                "the pipelines it needs; %llu pipelines, %llu bytes of pipeline cache "
                "loaded)\n",
                first_pp_ms, first_pp, (unsigned long long)rs.pipelines_created,
                (unsigned long long)rs.pipeline_cache_bytes_loaded);
    }
    return 0;
}

}  // namespace

int cmd_bench(int argc, char **argv) {
    vkllm_tool::BenchOptions o;
    if (vkllm_tool::wants_help(argc, argv)) {
        vkllm_tool::bench_usage(stdout);
        return 0;
    }
    if (!vkllm_tool::parse_bench_options(argc, argv, o)) {
        std::fputs("(vkllm bench --help lists the options)\n", stderr);
        return 2;
    }
    return bench(o);
}
