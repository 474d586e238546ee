#include "engine/session.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <variant>

namespace vkllm::engine {

using models::Act;
using models::LogitRows;

namespace {

// Step arrays, in this order, each one aligned binding in the step buffer.
// The step's per-token arrays. kAttendPositions: the position each token attends up to, an
// encoder's last of its sequence (attention both ways), read by its Attend ops alone.
enum StepArray {
    kTokens = 0,
    kPositions = 1,
    kSeqIds = 2,
    kKvBegin = 3,
    kAttendPositions = 4,
    kStepArrays = 5
};

// The handlers of std::visit as one overload set.
template <class... Handlers>
struct Overloaded : Handlers... {
    using Handlers::operator()...;
};
template <class... Handlers>
Overloaded(Handlers...) -> Overloaded<Handlers...>;

double ms_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

Session::Session(const Model &model, const SessionOptions &options)
    : model_(model), ctx_(model.context()), opt_(options) {
    const models::ModelConfig &c = model.config();
    if (opt_.n_ctx == 0)
        opt_.n_ctx = std::min({c.n_ctx_train, model.max_positions(), kDefaultContext});
    if (opt_.n_seq == 0 || opt_.n_seq > 256)
        fail(VKLLM_ERR_INVALID_ARGUMENT, "session: n_seq %u must be 1 to 256", opt_.n_seq);
    if (opt_.n_ctx > model.max_positions())
        fail(VKLLM_ERR_INVALID_ARGUMENT, "session: n_ctx %u exceeds the model's %u positions",
             opt_.n_ctx, model.max_positions());
    if (opt_.streaming && c.learned_positions)
        fail(VKLLM_ERR_UNSUPPORTED,
             "session: a streaming window needs rotary positions; %s's positions are learned, "
             "%u of them, and a position past them has no embedding",
             c.arch_name.c_str(), model.max_positions());
    if (opt_.profile && !ctx_.device().info().timestamps)
        fail(VKLLM_ERR_UNSUPPORTED, "session: profiling needs compute timestamps, which %s lacks",
             ctx_.device().info().name);
    if (!opt_.streaming) opt_.n_sink = 0;
    if (opt_.n_sink >= opt_.n_ctx)
        fail(VKLLM_ERR_INVALID_ARGUMENT, "session: n_sink %u must be below n_ctx %u", opt_.n_sink,
             opt_.n_ctx);
    if (opt_.n_batch == 0) opt_.n_batch = 64;
    // An encoder attends over each whole input in one step.
    if (c.encoder) opt_.n_batch = opt_.n_ctx;
    // A chunk must not overwrite a slot that one of its own earlier tokens still needs.
    opt_.n_batch = std::min(opt_.n_batch, opt_.n_ctx - opt_.n_sink);
    max_rows_ = std::max(opt_.n_batch, opt_.n_seq);

    if (opt_.kv_type == gpu::KvType::Q8_0 && c.head_dim % 32)
        fail(VKLLM_ERR_UNSUPPORTED,
             "session: a Q8_0 KV cache needs head_dim a multiple of 32; this model's is %u",
             c.head_dim);
    uint64_t layer_bytes_max = 0;
    for (uint32_t l = 0; l < c.n_layer; ++l) {
        // A sliding-window layer's ring holds the window and one prefill chunk (whose first
        // token still sees window - 1 earlier keys while its last is stored): its memory does
        // not grow with the context.
        uint32_t cap = opt_.n_ctx;
        if (c.swa_layer(l)) cap = std::min(cap, c.sliding_window + opt_.n_batch - 1);
        capacity_.push_back(cap);
        uint64_t layer_bytes =
            uint64_t(cap) * c.n_head_kv * gpu::kv_row_bytes(opt_.kv_type, c.head_dim) * opt_.n_seq;
        layer_kv_bytes_.push_back(2 * layer_bytes);
        kv_bytes_ += 2 * layer_bytes;
        layer_bytes_max = std::max(layer_bytes_max, layer_bytes);
    }
    if (layer_bytes_max > ctx_.device().info().max_storage_buffer_range)
        fail(VKLLM_ERR_UNSUPPORTED,
             "session: a layer's KV cache of %llu MiB exceeds the device's largest binding "
             "(%llu MiB); use a smaller n_ctx or n_seq",
             (unsigned long long)(layer_bytes_max >> 20),
             (unsigned long long)(ctx_.device().info().max_storage_buffer_range >> 20));
    std::vector<uint64_t> act_bytes;
    for (int a = 0; a < models::kActCount; ++a) {
        Act act = Act(a);
        uint32_t rows = act == Act::Logits ? opt_.n_seq : act == Act::Last ? 1 : max_rows_;
        act_bytes.push_back(uint64_t(rows) * models::act_width(c, act) * sizeof(float));
    }
    // Split-K attention's slices, for the steps that split (decode-sized ones).
    uint64_t scratch_bytes = 0;
    for (uint32_t n = 1; n <= std::min(max_rows_, 8u); ++n)
        for (uint32_t l = 0; l < c.n_layer; ++l)
            scratch_bytes = std::max(scratch_bytes,
                                     ctx_.kernels().attention_scratch_bytes(attention_shape(n, l)));
    // Refused before anything is allocated when the memory budget cannot hold it.
    gpu::Allocator &alloc = ctx_.allocator();
    uint64_t arrival_bytes = gpu::LinearKernels::qkv_arrivals_bytes(c.n_head, c.n_head_kv);
    uint64_t total = kv_bytes_ + scratch_bytes + arrival_bytes;
    for (uint64_t b : act_bytes)
        total += b;
    alloc.require_budget(total, "the session's KV cache and activations");

    for (int a = 0; a < models::kActCount; ++a) {
        // Logits (and hidden states) are read by the host after a step: keep them host-visible.
        bool host = Act(a) == Act::Logits || Act(a) == Act::Hidden;
        acts_.push_back(
            alloc.allocate(act_bytes[a], host ? gpu::MemoryKind::Host : gpu::MemoryKind::Device));
    }
    step_stride_ = (uint64_t(max_rows_) * 4 + 255) / 256 * 256;
    step_ = alloc.allocate(step_stride_ * kStepArrays, gpu::MemoryKind::Host);
    ids_ = alloc.allocate(uint64_t(opt_.n_seq) * 4, gpu::MemoryKind::Host);
    logit_rows_ = opt_.n_seq;
    chain_ = alloc.allocate(uint64_t(kMaxChainSteps) * opt_.n_seq * 4, gpu::MemoryKind::Host);
    // Split-K's counts and the fused KV store's start at zero; every use leaves them so.
    gpu::Recording zero(ctx_.device());
    zero.begin();
    if (scratch_bytes) {
        attn_scratch_ = alloc.allocate(scratch_bytes, gpu::MemoryKind::Device);
        zero.fill(attn_scratch_.range(), 0);
    }
    qkv_arrivals_ = alloc.allocate(arrival_bytes, gpu::MemoryKind::Device);
    zero.fill(qkv_arrivals_.range(), 0);
    zero.end();
    zero.submit();
    if (c.moe())
        route_ = alloc.allocate(gpu::moe_route_words(max_rows_, c.n_expert_used, c.n_expert) * 4,
                                gpu::MemoryKind::Device);
    for (uint32_t l = 0; l < c.n_layer; ++l) {
        k_cache_.push_back(alloc.allocate(layer_kv_bytes_[l] / 2, gpu::MemoryKind::Device));
        v_cache_.push_back(alloc.allocate(layer_kv_bytes_[l] / 2, gpu::MemoryKind::Device));
    }
    for (const gpu::Buffer *b : {&step_, &ids_, &chain_, &attn_scratch_, &qkv_arrivals_, &route_})
        device_bytes_ += b->size();
    for (const std::vector<gpu::Buffer> *set : {&acts_, &k_cache_, &v_cache_})
        for (const gpu::Buffer &b : *set)
            device_bytes_ += b.size();
    n_past_.assign(opt_.n_seq, 0);
    written_.assign(opt_.n_seq, 0);
    history_.resize(opt_.n_seq);
}

gpu::BufferRange Session::act(Act a, uint32_t rows) const {
    return acts_[size_t(a)].range(
        0, uint64_t(rows) * models::act_width(model_.config(), a) * sizeof(float));
}

gpu::StepView Session::step_view(uint32_t n) const {
    return gpu::StepView{step_.range(kPositions * step_stride_, uint64_t(n) * 4),
                         step_.range(kSeqIds * step_stride_, uint64_t(n) * 4),
                         step_.range(kKvBegin * step_stride_, uint64_t(n) * 4)};
}

gpu::AttentionShape Session::attention_shape(uint32_t n, uint32_t layer, bool prefill) const {
    const models::ModelConfig &c = model_.config();
    gpu::AttentionShape s;
    s.n_tokens = n;
    s.n_heads = c.n_head;
    s.n_kv_heads = c.n_head_kv;
    s.head_dim = c.head_dim;
    s.capacity = capacity_[layer];
    // Sliding-window layers see only their window: streaming sinks are a full layer's matter.
    s.n_sink = c.swa_layer(layer) ? 0 : opt_.n_sink;
    s.kv_type = opt_.kv_type;
    s.scale = c.attn_scale;
    s.window = c.swa_layer(layer) ? c.sliding_window : 0;
    s.prefill = prefill;
    s.softcap = c.attn_softcap;
    return s;
}

gpu::KvRope Session::kv_rope(const models::op::StoreKv &s, uint32_t rows) const {
    const models::ModelConfig &c = model_.config();
    if (s.rope != models::Rope::KAndQ) return {};
    return {c.neox ? gpu::RopeLayout::Neox : gpu::RopeLayout::Interleaved,
            model_.rope_table(s.layer, opt_.n_ctx),
            c.rot_dim,
            model_.max_positions(),
            act(Act::Q, rows),
            c.n_head};
}

void Session::record(gpu::Recording &rec, const models::Plan &plan, uint32_t n_tokens, bool prefill,
                     uint32_t chain_step) {
    namespace op = models::op;
    const models::ModelConfig &c = model_.config();
    gpu::Kernels &k = ctx_.kernels();
    uint32_t rows = n_tokens;
    gpu::StepView view = step_view(n_tokens);
    auto width = [&c](Act a) { return models::act_width(c, a); };
    // One handler per op and no catch-all: an op the plan may hold and this does not record
    // does not compile.
    Overloaded record_op{
        [&](const op::Embed &e) {
            k.get_rows(rec, e.table, step_.range(kTokens * step_stride_, uint64_t(rows) * 4),
                       act(Act::X, rows), rows, e.scale);
        },
        [&](const op::RmsNorm &n) {
            uint32_t r = rows * (width(n.in) / n.cols);
            k.rms_norm(rec, act(n.in, rows), n.weight, act(n.out, rows), r, n.cols, c.norm_eps);
        },
        [&](const op::LayerNorm &ln) {
            k.layer_norm(rec, act(ln.in, rows), ln.weight, ln.bias, act(ln.out, rows), rows,
                         c.n_embd, c.norm_eps);
        },
        [&](const op::AddPositions &ap) {
            k.get_rows(rec, ap.table, view.positions, act(Act::H, rows), rows);
            k.binary(rec, gpu::Binary::Add, act(Act::X, rows), act(Act::H, rows), act(Act::X, rows),
                     rows * c.n_embd, rows * c.n_embd);
        },
        [&](const op::Gelu &ge) {
            k.unary(rec, gpu::Unary::GELU, act(ge.io, rows), act(ge.io, rows), rows * width(ge.io));
        },
        [&](const op::Linear &l) {
            k.linear(rec, l.w, act(l.in, rows), act(l.out, rows), rows,
                     {l.bias, l.write == models::Write::Accumulate, l.scale}, {l.norm, c.norm_eps});
        },
        [&](const op::LinearQkv &qkv) {
            if (!qkv.store) {
                k.linear_qkv(rec, qkv.w, act(qkv.in, rows), act(Act::Q, rows), act(Act::K, rows),
                             act(Act::V, rows), c.kv_dim(), rows, qkv.bias, {qkv.norm, c.norm_eps});
                return;
            }
            uint32_t layer = qkv.store->layer;
            gpu::KvStoreTarget t{
                k_cache_[layer].range(),      v_cache_[layer].range(),   view,
                attention_shape(rows, layer), kv_rope(*qkv.store, rows), qkv_arrivals_.range()};
            k.linear_qkv_store(rec, qkv.w, act(qkv.in, rows), act(Act::Q, rows), act(Act::K, rows),
                               act(Act::V, rows), rows, qkv.bias, {qkv.norm, c.norm_eps}, t);
        },
        [&](const op::Add &a) {
            k.binary(rec, gpu::Binary::Add, act(a.a, rows), act(a.b, rows), act(a.out, rows),
                     rows * width(a.out), rows * width(a.out));
        },
        [&](const op::StoreKv &s) {
            k.kv_store(rec, act(Act::K, rows), act(Act::V, rows), k_cache_[s.layer].range(),
                       v_cache_[s.layer].range(), view, attention_shape(rows, s.layer),
                       kv_rope(s, rows));
        },
        [&](const op::Attend &at) {
            gpu::StepView seen = view;
            if (c.encoder)
                seen.positions = step_.range(kAttendPositions * step_stride_, uint64_t(rows) * 4);
            k.attention(rec, act(Act::Q, rows), k_cache_[at.layer].range(),
                        v_cache_[at.layer].range(), act(Act::Attn, rows), seen,
                        attention_shape(rows, at.layer, prefill), at.sinks,
                        attn_scratch_.size() ? attn_scratch_.range() : gpu::BufferRange{});
        },
        [&](const op::LinearSwiGlu &ls) {
            k.linear_swiglu(
                rec, ls.gate, ls.up, act(ls.in, rows), act(ls.out, rows), act(ls.up_out, rows),
                rows, {ls.norm, c.norm_eps},
                ls.glu == models::Glu::GeGlu ? gpu::Binary::GeGLU : gpu::Binary::SwiGLU);
        },
        [&](const op::MoeRoute &mr) {
            k.moe_route(rec, act(Act::Router, rows), route_.range(), rows, c.n_expert,
                        c.n_expert_used, mr.gating,
                        mr.weights == models::ExpertWeights::Renormalized);
        },
        [&](const op::MoeSwiGlu &ms) {
            k.moe_swiglu(
                rec, ms.gate, ms.up, act(ms.in, rows), act(ms.out, rows), act(ms.up_out, rows),
                route_.range(), ms.gate_bias, ms.up_bias, rows, c.n_expert_used,
                ms.glu == models::Glu::SwiGluOai ? gpu::Binary::SwiGLUOai : gpu::Binary::SwiGLU);
        },
        [&](const op::MoeLinear &ml) {
            k.moe_matvec(rec, ml.w, act(ml.in, rows), act(ml.out, rows), route_.range(), ml.bias,
                         rows, c.n_expert_used, ml.input == models::ExpertInput::PerEntry);
        },
        [&](const op::MoeCombine &mc) {
            bool shared = mc.shared == models::SharedExpert::Gated;
            gpu::BufferRange none{};
            k.moe_combine(rec, act(Act::ExpOut, rows), route_.range(),
                          shared ? act(Act::Shared, rows) : none,
                          shared ? act(Act::SharedGate, rows) : none, act(Act::H, rows), rows,
                          c.n_embd, c.n_expert_used);
        },
        [&](const op::TakeLast &t) {
            uint64_t row_bytes = uint64_t(width(t.in)) * sizeof(float);
            rec.copy(acts_[size_t(t.in)].range((rows - 1) * row_bytes, row_bytes), act(t.out, 1));
            rows = 1;
        },
        [&](const op::SoftCap &sc) {
            k.unary(rec, gpu::Unary::SoftCap, act(sc.io, rows), act(sc.io, rows),
                    rows * width(sc.io), sc.cap);
        },
        [&](const op::Argmax &am) {
            k.argmax(rec, act(am.in, rows), ids_.range(0, uint64_t(rows) * 4), rows, width(am.in),
                     model_.n_tokens());
        },
        [&](const op::Logprobs &lp) {
            k.logprobs(rec, act(lp.in, rows), logprobs_.range(), rows, width(lp.in),
                       model_.n_tokens(), lp.top, chain_step * rows);
        },
    };
    for (const models::Op &o : plan.ops)
        std::visit(record_op, o);
}

gpu::Recording &Session::recording(uint32_t n_tokens, LogitRows rows, uint32_t chain, bool prefill,
                                   int32_t logprobs, bool sampled) {
    auto key = std::make_tuple(n_tokens, int(rows), chain, prefill, logprobs, sampled);
    auto it = recordings_.find(key);
    if (it != recordings_.end()) return *it->second;
    // A profile labels every dispatch; a step has at most a few thousand of them.
    const uint32_t kMaxProfiled = 8192;
    auto rec = std::make_unique<gpu::Recording>(
        ctx_.device(), opt_.profile ? kMaxProfiled * std::max(chain, 1u) : 0, opt_.profile);
    rec->keep_log(opt_.log_recordings);
    const gpu::Kernels &k = ctx_.kernels();
    models::Fusions fusions;
    fusions.norm = [&](const gpu::Matrix &w, Act in, uint32_t r, const gpu::BufferRange &norm) {
        return k.norm_fusable(w, act(in, r), norm, r);
    };
    fusions.qkv_store = [&](const gpu::Matrix &w, Act in, uint32_t r, uint32_t layer) {
        return k.qkv_store_fusable(w, act(in, r), r, attention_shape(r, layer));
    };
    models::Plan plan =
        models::build_plan(model_.config(), model_.weights(), {n_tokens, rows, logprobs}, fusions);
    rec->begin();
    if (chain == 0) record(*rec, plan, n_tokens, prefill);
    // The same dispatches again for every step: each reads the step arrays the step before
    // advanced, so one recording serves any starting position.
    for (uint32_t s = 0; s < chain; ++s) {
        record(*rec, plan, n_tokens, prefill, s);
        if (sampled)  // the draw replaces the plan's argmax
            ctx_.kernels().sample(
                *rec, act(Act::Logits, n_tokens),
                {sample_options_.range(), sample_bias_.range(), sample_history_.range(),
                 sample_state_.range(), ids_.range(0, uint64_t(n_tokens) * 4)},
                n_tokens, models::act_width(model_.config(), Act::Logits), model_.n_tokens(),
                kDeviceSamplingHistory);
        ctx_.kernels().chain_advance(*rec, ids_.range(0, uint64_t(n_tokens) * 4),
                                     step_.range(kTokens * step_stride_, uint64_t(n_tokens) * 4),
                                     step_view(n_tokens),
                                     chain_.range(0, uint64_t(chain) * n_tokens * 4), n_tokens, s,
                                     opt_.n_ctx - opt_.n_sink, opt_.n_sink);
    }
    rec->end();
    ++stats_.recorded;
    return *(recordings_[key] = std::move(rec));
}

void Session::check_fits(uint32_t seq, size_t n) const {
    if (seq >= opt_.n_seq)
        fail(VKLLM_ERR_INVALID_ARGUMENT, "sequence %u does not exist (the session has %u)", seq,
             opt_.n_seq);
    uint64_t end = uint64_t(n_past_[seq]) + n;
    if (!opt_.streaming && end > opt_.n_ctx)
        fail(VKLLM_ERR_CONTEXT_FULL,
             "sequence %u: %llu tokens do not fit its context of %u (%u already used)", seq,
             (unsigned long long)n, opt_.n_ctx, n_past_[seq]);
    if (opt_.streaming && end > model_.max_positions())
        fail(VKLLM_ERR_CONTEXT_FULL,
             "sequence %u: position %llu is past the %u positions the model was trained for", seq,
             (unsigned long long)end - 1, model_.max_positions());
}

std::vector<uint32_t> Session::write_step(const Tokens &t) {
    uint32_t n = uint32_t(t.ids.size());
    uint32_t window = opt_.n_ctx - opt_.n_sink;
    std::vector<uint32_t> count(opt_.n_seq, 0), last(opt_.n_seq, 0);
    int32_t *arrays = static_cast<int32_t *>(step_.mapped());
    auto at = [&](StepArray a, uint32_t i) -> int32_t & {
        return arrays[(a * step_stride_) / 4 + i];
    };
    for (uint32_t i = 0; i < n; ++i) {
        uint32_t s = t.seqs[i];
        uint32_t pos = n_past_[s] + count[s]++;
        last[s] = pos;
        at(kTokens, i) = t.ids[i];
        at(kPositions, i) = int32_t(pos);
        at(kSeqIds, i) = int32_t(s);
    }
    // Keys a token may see: the sinks, then the most recent `window` positions of the step's
    // last token, so no token reads a slot a later token of the same step has overwritten.
    // (shaders/argmax/chain_advance.comp applies the same rule between chained steps.)
    for (uint32_t i = 0; i < n; ++i) {
        uint32_t s = t.seqs[i];
        uint32_t begin = last[s] + 1 > window ? last[s] + 1 - window : 0;
        at(kKvBegin, i) = int32_t(std::max(begin, opt_.n_sink));
        at(kAttendPositions, i) = int32_t(last[s]);
    }
    return count;
}

void Session::step(const Tokens &t, LogitRows rows, float *logits, int32_t *argmax, double &time_ms,
                   uint64_t &token_count, const LogprobRequest *lp) {
    auto t0 = std::chrono::steady_clock::now();
    uint32_t n = uint32_t(t.ids.size());
    std::vector<uint32_t> count = write_step(t);
    // Runs of tokens of one sequence (4 or more each on average) are a prompt being processed.
    auto seqs = uint32_t(std::count_if(count.begin(), count.end(), [](uint32_t c) { return c; }));
    if (lp) ensure_logprob_rows();
    submit(n, rows, 0, n >= 4 * seqs, lp ? int32_t(lp->top) : -1);
    for (uint32_t s = 0; s < opt_.n_seq; ++s)
        n_past_[s] += count[s];
    for (uint32_t i = 0; i < n; ++i)
        history_[t.seqs[i]].push_back(t.ids[i]);
    uint32_t out_rows = rows == LogitRows::All ? n : 1;
    if (logits && rows != LogitRows::None)
        std::memcpy(logits, acts_[size_t(Act::Logits)].mapped(),
                    size_t(out_rows) * model_.config().n_vocab * sizeof(float));
    if (argmax && rows != LogitRows::None)
        std::memcpy(argmax, ids_.mapped(), size_t(out_rows) * sizeof(int32_t));
    if (lp && rows != LogitRows::None)
        *lp->rows = read_logprob_rows(logprobs_.mapped(), out_rows, lp->top);
    time_ms += ms_since(t0);
    token_count += n;
}

void Session::submit(uint32_t n_tokens, LogitRows rows, uint32_t chain, bool prefill,
                     int32_t logprobs, bool sampled) {
    if (opt_.record_every_step) recordings_.clear();
    gpu::Recording &rec = recording(n_tokens, rows, chain, prefill, logprobs, sampled);
    last_ = &rec;
    rec.submit();
    ++stats_.submits;
    if (opt_.profile) add_profile(rec);
}

void Session::add_profile(const gpu::Recording &rec) {
    for (const gpu::Timing &t : rec.timings()) {
        auto it = std::find_if(profile_.begin(), profile_.end(),
                               [&](const KernelTime &k) { return k.kernel == t.label; });
        if (it == profile_.end()) it = profile_.insert(profile_.end(), KernelTime{t.label});
        ++it->dispatches;
        it->ms += t.ms;
    }
}

void Session::check_prefill(uint32_t seq, const int32_t *tokens, size_t n) const {
    refuse_encoder();
    check_tokens(seq, tokens, n);
}

void Session::refuse_encoder() const {
    if (model_.config().encoder)
        fail(VKLLM_ERR_UNSUPPORTED,
             "%s is an encoder: it has no output head to make logits or generate with; it makes "
             "embeddings (vkllm_session_embed)",
             model_.config().arch_name.c_str());
}

void Session::check_tokens(uint32_t seq, const int32_t *tokens, size_t n) const {
    check_fits(seq, n);
    int32_t vocab = int32_t(model_.config().n_vocab);
    for (size_t i = 0; i < n; ++i)
        if (tokens[i] < 0 || tokens[i] >= vocab)
            fail(VKLLM_ERR_INVALID_ARGUMENT,
                 "token %d at index %zu is outside the vocabulary (0 to %d, the embedding's rows)",
                 tokens[i], i, vocab - 1);
}

void Session::prefill(uint32_t seq, const int32_t *tokens, size_t n, float *logits,
                      const std::function<bool(size_t)> &between_chunks, const LogprobRequest *lp) {
    check_prefill(seq, tokens, n);
    for (size_t done = 0; done < n;) {
        size_t len = std::min<size_t>(opt_.n_batch, n - done);
        bool last = done + len == n;
        Tokens t{std::vector<int32_t>(tokens + done, tokens + done + len),
                 std::vector<uint32_t>(len, seq)};
        step(t, last && (logits || lp) ? LogitRows::Last : LogitRows::None, logits, nullptr,
             stats_.prefill_ms, stats_.tokens_prefilled, last ? lp : nullptr);
        done += len;
        if (!last && ((between_chunks && !between_chunks(done)) || cancelled()))
            fail(VKLLM_ERR_CANCELLED, "prefill cancelled after %zu of %zu tokens", done, n);
    }
}

void Session::check_decode(const uint32_t *seqs, const int32_t *tokens, size_t n,
                           uint32_t steps) const {
    refuse_encoder();
    if (n == 0 || n > opt_.n_seq)
        fail(VKLLM_ERR_INVALID_ARGUMENT, "decode of %zu sequences in a session of %u", n,
             opt_.n_seq);
    std::vector<bool> seen(opt_.n_seq, false);
    int32_t vocab = int32_t(model_.config().n_vocab);
    for (size_t i = 0; i < n; ++i) {
        check_fits(seqs[i], steps);
        if (seen[seqs[i]])
            fail(VKLLM_ERR_INVALID_ARGUMENT, "sequence %u appears twice in one decode", seqs[i]);
        seen[seqs[i]] = true;
        if (tokens[i] < 0 || tokens[i] >= vocab)
            fail(VKLLM_ERR_INVALID_ARGUMENT,
                 "token %d is outside the vocabulary (0 to %d, the embedding's rows)", tokens[i],
                 vocab - 1);
    }
}

void Session::decode(const uint32_t *seqs, const int32_t *tokens, size_t n, float *logits,
                     int32_t *argmax, const LogprobRequest *lp) {
    check_decode(seqs, tokens, n, 1);
    Tokens t{std::vector<int32_t>(tokens, tokens + n), std::vector<uint32_t>(seqs, seqs + n)};
    step(t, LogitRows::All, logits, argmax, stats_.decode_ms, stats_.tokens_decoded, lp);
}

void Session::decode_greedy(const uint32_t *seqs, const int32_t *tokens, size_t n, uint32_t steps,
                            int32_t *out, const LogprobRequest *lp) {
    if (steps == 0 || steps > kMaxChainSteps)
        fail(VKLLM_ERR_INVALID_ARGUMENT, "greedy decode of %u steps: 1 to %u are chained", steps,
             kMaxChainSteps);
    check_decode(seqs, tokens, n, steps);
    decode_chain(seqs, tokens, n, steps, out, lp, false);
}

void Session::decode_chain(const uint32_t *seqs, const int32_t *tokens, size_t n, uint32_t steps,
                           int32_t *out, const LogprobRequest *lp, bool sampled) {
    auto t0 = std::chrono::steady_clock::now();
    Tokens t{std::vector<int32_t>(tokens, tokens + n), std::vector<uint32_t>(seqs, seqs + n)};
    if (lp) ensure_logprob_rows();
    write_step(t);
    submit(uint32_t(n), LogitRows::All, steps, false, lp ? int32_t(lp->top) : -1, sampled);
    for (size_t i = 0; i < n; ++i)
        n_past_[seqs[i]] += steps;
    std::memcpy(out, chain_.mapped(), size_t(steps) * n * sizeof(int32_t));
    // The cache holds each sequence's first token and the choices that were fed back.
    for (size_t i = 0; i < n; ++i) {
        history_[seqs[i]].push_back(tokens[i]);
        for (uint32_t s = 0; s + 1 < steps; ++s)
            history_[seqs[i]].push_back(out[s * n + i]);
    }
    if (lp) *lp->rows = read_logprob_rows(logprobs_.mapped(), steps * uint32_t(n), lp->top);
    stats_.decode_ms += ms_since(t0);
    stats_.tokens_decoded += uint64_t(steps) * n;
}

bool Session::can_truncate(uint32_t seq, uint32_t keep) const {
    if (keep == 0 || keep >= n_past_.at(seq)) return true;
    const models::ModelConfig &c = model_.config();
    for (uint32_t l = 0; l < c.n_layer; ++l) {
        // A ring of `rotating` slots after `sinks` fixed ones, where a token sees the `visible`
        // most recent positions: dropped position p overwrote p - rotating. Lossy when one of
        // those is a key the next token (at `keep`) still sees.
        bool swa = c.swa_layer(l);
        uint32_t sinks = swa ? 0 : opt_.n_sink;
        uint32_t rotating = capacity_[l] - sinks;
        uint32_t visible = opt_.n_ctx - opt_.n_sink;
        if (swa) visible = std::min(visible, c.sliding_window);
        int64_t lost_last = int64_t(std::max(written_[seq], n_past_[seq])) - 1 - rotating;
        int64_t seen_first = std::max<int64_t>(int64_t(keep) + 1 - visible, sinks);
        if (seen_first <= std::min<int64_t>(lost_last, int64_t(keep) - 1)) return false;
    }
    return true;
}

void Session::truncate(uint32_t seq, uint32_t keep) {
    if (seq >= opt_.n_seq)
        fail(VKLLM_ERR_INVALID_ARGUMENT, "sequence %u does not exist (the session has %u)", seq,
             opt_.n_seq);
    if (keep > n_past_[seq])
        fail(VKLLM_ERR_INVALID_ARGUMENT, "sequence %u has only %u positions, cannot keep %u", seq,
             n_past_[seq], keep);
    if (!can_truncate(seq, keep))
        fail(VKLLM_ERR_INVALID_ARGUMENT,
             "sequence %u: keeping %u of %u positions is impossible, the ring has overwritten keys "
             "they need; only a full reset is possible",
             seq, keep, n_past_[seq]);
    written_[seq] = keep == 0 ? 0 : std::max(written_[seq], n_past_[seq]);
    n_past_[seq] = keep;
    history_[seq].resize(keep);
}

}  // namespace vkllm::engine
