#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
// Sampling on the device, one workgroup per row: the host sampler's chain (src/engine/sampler.cpp)
// in its order — logit bias, the repetition, frequency and presence penalties over the last
// tokens of the row's history, top-k, typical, top-p, min-p, temperature — then a draw whose
// uniform number is Philox-4x32-10 of (the row's draw count, its sequence) under the seed
// (src/engine/philox.h, the host sampler's generator too), so a row's n-th draw is the same
// whether the steps ran one per submission, chained or on the host. The chosen token joins the
// row's history and the draw count goes on, on the device.
//
// The top-k candidates (at most 512) are found without sorting the vocabulary: a radix select
// of the k-th largest logit (four 8-bit passes of a shared histogram), a second one on the ids
// where ties at that logit overflow k (the lowest ids win, as on the host), then a bitonic sort
// of the few in shared memory, where typical, top-p and min-p cut the sorted list as the host
// does. With top-k off (0, or as large as the vocabulary) the host's other options must be
// min-p and temperature alone, which need no order: every token within min-p of the largest
// logit is drawn from, lanes owning contiguous ranges of ids. Both draws walk the candidates in
// id order, as the host's does, so that one number draws one token. Greedy (temperature <= 0)
// is top-1. A row without a finite candidate gives 0 (as argmax does); NaNs are never candidates.
// Every loop's trip count is bounded by the vocabulary over WG, 512 or the history window,
// which the C++ checks against llvmpipe's limit.
#include "common.glsl"

#include "sample.h"
layout(local_size_x_id = 0) in;

layout(binding = SampleBindings_x) coherent buffer X { float x[]; };
layout(binding = SampleBindings_options) readonly buffer Options { uint opt[]; };
layout(binding = SampleBindings_bias) readonly buffer Bias { uint bias[]; };
layout(binding = SampleBindings_history) buffer History { int hist[]; };
layout(binding = SampleBindings_state) buffer State { uint state[]; };
layout(binding = SampleBindings_ids) writeonly buffer Ids { int ids[]; };

const uint K = 512u;  // ArgmaxKernels::kMaxSampleTopK
const uint NONE = 0xffffffffu;

shared float s_l[K];  // candidates' logits, then sorted
shared uint s_id[K];  // their ids
shared float s_a[K];  // typical: each candidate's distance from the entropy; the draw: its weight
shared uint s_ix[K];  // ... and its place in the logit order
shared uint bins[256];
shared float red[WG];
shared float part[16];
shared uint s_u[5];

uint lane;
float INF;  // set once in main: GLSL has no infinite constant

bool valid(float v) { return !isnan(v) && v != -INF; }

// Larger floats give larger keys; both zeros the same key (they are equal logits).
uint okey(float v) {
    uint u = v == 0.0 ? 0u : floatBitsToUint(v);
    return (u & 0x80000000u) != 0u ? ~u : u | 0x80000000u;
}

// The workgroup's sum (max) of v: 16 lanes each gather WG / 16 values, then every lane adds
// the 16 in one order (the same result everywhere). Two barriers: lavapipe pays for each.
float reduce(float v, bool is_max) {
    red[lane] = v;
    barrier();
    if (lane < 16u) {
        float a = red[lane];
        for (uint j = lane + 16u; j < WG; j += 16u)
            a = is_max ? max(a, red[j]) : a + red[j];
        part[lane] = a;
    }
    barrier();
    float r = part[0];
    for (uint j = 1u; j < 16u; ++j)
        r = is_max ? max(r, part[j]) : r + part[j];
    return r;  // the next reduce's first barrier keeps part until every lane has read it
}

float reduce_sum(float v) { return reduce(v, false); }

// The `want`-th largest (1-based) key among the row's candidates: by logit (ties == NONE; want
// at most the candidates, whose count s_u[4] is left holding), or among those whose logit key
// is `ties`, by ~id (the want-th lowest id). s_u[1] is left holding how many of the elements
// equal to the result are needed, s_u[2] how many there are.
uint select_key(uint base, uint n, uint ties, uint want) {
    uint prefix = 0u, mask = 0u;
    for (int shift = 24; shift >= 0; shift -= 8) {
        for (uint b = lane; b < 256u; b += WG)
            bins[b] = 0u;
        barrier();
        for (uint i = lane; i < n; i += WG) {
            float v = x[base + i];
            if (!valid(v)) continue;
            uint k = okey(v);
            if (ties != NONE) {
                if (k != ties) continue;
                k = ~i;
            }
            if ((k & mask) == prefix) atomicAdd(bins[(k >> uint(shift)) & 255u], 1u);
        }
        barrier();
        if (lane == 0u) {
            if (shift == 24 && ties == NONE) {  // how many candidates there are, and want at most
                uint total = 0u;
                for (uint c = 0u; c < 256u; ++c)
                    total += bins[c];
                s_u[4] = total;
                want = min(want, total);
            }
            uint above = 0u, b = 255u;
            while (above + bins[b] < want)
                above += bins[b--];
            s_u[0] = b;
            s_u[1] = want - above;
            s_u[2] = bins[b];
        }
        barrier();
        prefix |= s_u[0] << uint(shift);
        mask |= 255u << uint(shift);
        want = s_u[1];
    }
    return prefix;
}

// a before b: the larger logit first, the lower id among equals (order 0); the smaller distance
// first, the earlier place among equals (order 1).
bool before(uint a, uint b, uint order) {
    if (order == 0u) return s_l[a] > s_l[b] || (s_l[a] == s_l[b] && s_id[a] < s_id[b]);
    return s_a[a] < s_a[b] || (s_a[a] == s_a[b] && s_ix[a] < s_ix[b]);
}

// Sorts the first `len` entries (a power of two, at most K), bitonically.
void sort_shared(uint order, uint len) {
    for (uint size = 2u; size <= len; size <<= 1u) {
        for (uint stride = size >> 1u; stride > 0u; stride >>= 1u) {
            for (uint t = lane; t < len / 2u; t += WG) {
                uint i = 2u * t - (t & (stride - 1u));
                uint j = i + stride;
                bool up = (i & size) == 0u;
                if (up ? before(j, i, order) : before(i, j, order)) {
                    if (order == 0u) {
                        float l = s_l[i];
                        s_l[i] = s_l[j];
                        s_l[j] = l;
                        uint d = s_id[i];
                        s_id[i] = s_id[j];
                        s_id[j] = d;
                    } else {
                        float a = s_a[i];
                        s_a[i] = s_a[j];
                        s_a[j] = a;
                        uint d = s_ix[i];
                        s_ix[i] = s_ix[j];
                        s_ix[j] = d;
                    }
                }
            }
            barrier();
        }
    }
}

// Sum over the first n sorted candidates of exp((l - l0) * scale).
float sum_exp(uint n, float scale) {
    float s = 0.0;
    for (uint j = lane; j < n; j += WG)
        s += exp((s_l[j] - s_l[0]) * scale);
    return reduce_sum(s);
}

// Philox-4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3").
uvec4 philox(uvec4 c, uvec2 k) {
    [[unroll]] for (int i = 0; i < 10; ++i) {
        uint hi0, lo0, hi1, lo1;
        umulExtended(0xD2511F53u, c.x, hi0, lo0);
        umulExtended(0xCD9E8D57u, c.z, hi1, lo1);
        c = uvec4(hi1 ^ c.y ^ k.x, lo1, hi0 ^ c.w ^ k.y, lo0);
        k += uvec2(0x9E3779B9u, 0xBB67AE85u);
    }
    return c;
}

void main() {
    uint r = flat_group();
    if (r >= p.rows) return;  // the whole workgroup
    lane = gl_LocalInvocationID.x;
    INF = uintBitsToFloat(0x7f800000u);
    uint row = p.row0 + r;
    uint base = r * p.cols;
    uint o = row * SAMPLE_ROW_WORDS;
    float temperature = uintBitsToFloat(opt[o + SAMPLE_TEMPERATURE]);
    int top_k = int(opt[o + SAMPLE_TOP_K]);
    float top_p = uintBitsToFloat(opt[o + SAMPLE_TOP_P]);
    float min_p = uintBitsToFloat(opt[o + SAMPLE_MIN_P]);
    float typical_p = uintBitsToFloat(opt[o + SAMPLE_TYPICAL_P]);
    float rp = uintBitsToFloat(opt[o + SAMPLE_REPEAT_PENALTY]);
    float presence = uintBitsToFloat(opt[o + SAMPLE_PRESENCE]);
    float frequency = uintBitsToFloat(opt[o + SAMPLE_FREQUENCY]);
    uint n = p.n;

    uint b0 = opt[o + SAMPLE_BIAS_FIRST], nb = opt[o + SAMPLE_BIAS_COUNT];
    for (uint j = lane; j < nb; j += WG) {
        uint id = bias[2u * (b0 + j)];
        if (id < n) x[base + id] += uintBitsToFloat(bias[2u * (b0 + j) + 1u]);
    }
    memoryBarrierBuffer();
    barrier();

    // The penalties, once per distinct token of the window, by its first occurrence there.
    uint seen = state[2u * row], draws = state[2u * row + 1u];
    uint window = min(seen, min(opt[o + SAMPLE_REPEAT_LAST_N], p.capacity));
    uint first = seen - window, h = row * p.capacity;
    for (uint j = lane; j < window; j += WG) {
        int t = hist[h + (first + j) % p.capacity];
        uint count = 0u;
        bool lead = true;
        for (uint k = 0u; k < window; ++k) {
            if (hist[h + (first + k) % p.capacity] != t) continue;
            ++count;
            lead = lead && k >= j;
        }
        if (!lead || t < 0 || uint(t) >= n) continue;
        float l = x[base + uint(t)];
        l = l <= 0.0 ? l * rp : l / rp;
        precise float penalty = float(count) * frequency + presence;
        x[base + uint(t)] = l - penalty;
    }
    memoryBarrierBuffer();
    barrier();

    uvec4 bits = philox(uvec4(draws, opt[o + SAMPLE_SEQUENCE], 0u, 0u),
                        uvec2(opt[o + SAMPLE_SEED_LO], opt[o + SAMPLE_SEED_HI]));
    float u = float(bits.x >> 8u) * (1.0 / 16777216.0);  // 24 bits in [0, 1)
    bool greedy = temperature <= 0.0;
    uint token = 0u;
    if (greedy || (top_k >= 1 && uint(top_k) <= K)) {
        for (uint j = lane; j < K; j += WG) {
            s_l[j] = -INF;
            s_id[j] = NONE;
        }
        uint k = greedy ? 1u : uint(top_k);
        uint t = select_key(base, n, NONE, k);
        uint n_valid = s_u[4], need = s_u[1], equal = s_u[2];
        if (n_valid > 0u) {
            k = min(k, n_valid);
            uint last_id = NONE;  // ties at t beyond `need` lose, the higher ids first
            if (need < equal) last_id = ~select_key(base, n, t, need);
            if (lane == 0u) s_u[3] = 0u;
            barrier();
            for (uint i = lane; i < n; i += WG) {
                float v = x[base + i];
                if (!valid(v)) continue;
                uint key = okey(v);
                if (key > t || (key == t && i <= last_id)) {
                    uint slot = atomicAdd(s_u[3], 1u);
                    s_l[slot] = v;
                    s_id[slot] = i;
                }
            }
            barrier();
            // Sorted only as far as the candidates reach: the padding is -inf past them.
            uint len = 1u;
            while (len < k)
                len <<= 1u;
            sort_shared(0u, len);
            if (!greedy && typical_p < 1.0) {
                float z = sum_exp(k, 1.0), log_z = log(z);
                float e = 0.0;  // the entropy, -sum p log p, with log p = d - log z
                for (uint j = lane; j < k; j += WG) {
                    float d = s_l[j] - s_l[0];
                    e += exp(d) / z * (log_z - d);
                }
                e = reduce_sum(e);
                for (uint j = lane; j < K; j += WG) {
                    s_a[j] = j < k ? abs(log_z - (s_l[j] - s_l[0]) - e) : INF;
                    s_ix[j] = j < k ? j : NONE;
                }
                barrier();
                sort_shared(1u, len);
                if (lane == 0u) {
                    float mass = 0.0;
                    uint keep = k;
                    for (uint j = 0u; j < k; ++j) {
                        mass += exp(s_l[s_ix[j]] - s_l[0]) / z;
                        if (mass > typical_p) {
                            keep = j + 1u;
                            break;
                        }
                    }
                    s_u[0] = keep;
                }
                barrier();
                uint keep = s_u[0];
                for (uint j = keep + lane; j < k; j += WG) {  // positions, each once
                    s_l[s_ix[j]] = -INF;
                    s_id[s_ix[j]] = NONE;
                }
                barrier();
                sort_shared(0u, len);
                k = keep;
            }
            if (!greedy && top_p < 1.0) {  // the smallest prefix whose mass reaches top_p
                float z = sum_exp(k, 1.0);
                if (lane == 0u) {
                    float mass = 0.0;
                    uint keep = k;
                    for (uint j = 0u; j < k; ++j) {
                        mass += exp(s_l[j] - s_l[0]) / z;
                        if (mass >= top_p) {
                            keep = j + 1u;
                            break;
                        }
                    }
                    s_u[0] = keep;
                }
                barrier();
                k = s_u[0];
                barrier();
            }
            if (!greedy && min_p > 0.0) {  // what is less likely than min_p times the best goes
                float floor_l = s_l[0] + log(min_p);
                uint keep = 0u;
                for (uint j = lane; j < k; j += WG)
                    keep += s_l[j] >= floor_l ? 1u : 0u;
                k = max(uint(reduce_sum(float(keep))), 1u);  // the list is sorted: a prefix
            }
            if (greedy) {
                token = s_id[0];
            } else {
                // The draw walks the candidates in id order, as the host's does: the token is
                // the highest id whose lower ids' mass is at most the target.
                float inv_t = 1.0 / temperature, best = s_l[0], mine = 0.0;
                for (uint j = lane; j < k; j += WG) {
                    s_a[j] = exp((s_l[j] - best) * inv_t);
                    mine += s_a[j];
                }
                float target = u * reduce_sum(mine);
                if (lane == 0u) s_u[0] = 0u;
                barrier();
                for (uint j = lane; j < k; j += WG) {
                    float below = 0.0;
                    for (uint i = 0u; i < k; ++i)
                        below += s_id[i] < s_id[j] ? s_a[i] : 0.0;
                    if (below <= target) atomicMax(s_u[0], s_id[j]);
                }
                barrier();
                token = s_u[0];
            }
        }
    } else {
        float m = -INF;
        for (uint i = lane; i < n; i += WG) {
            float v = x[base + i];
            if (valid(v)) m = max(m, v);
        }
        m = reduce(m, true);
        if (m != -INF) {
            float floor_l = min_p > 0.0 ? m + log(min_p) : -INF;
            float inv_t = 1.0 / temperature;
            uint chunk = (n + WG - 1u) / WG;
            uint lo = min(lane * chunk, n), hi = min(lo + chunk, n);
            float s = 0.0;
            for (uint i = lo; i < hi; ++i) {
                float v = x[base + i];
                if (valid(v) && v >= floor_l) s += exp((v - m) * inv_t);
            }
            red[lane] = s;
            barrier();
            if (lane == 0u)
                for (uint j = 1u; j < WG; ++j)
                    red[j] += red[j - 1u];
            barrier();
            float total = red[WG - 1u], end = red[lane];
            float start = lane == 0u ? 0.0 : red[lane - 1u];
            float target = u * total;
            if (end > start && (target < end ? target >= start : end == total)) {
                float acc = start;
                uint pick = NONE;
                for (uint i = lo; i < hi; ++i) {
                    float v = x[base + i];
                    if (!valid(v) || v < floor_l) continue;
                    pick = i;
                    acc += exp((v - m) * inv_t);
                    if (target < acc) break;
                }
                s_u[0] = pick;
            }
            barrier();
            token = s_u[0];
        }
    }
    if (lane == 0u) {
        ids[row] = int(token);
        hist[h + seen % p.capacity] = int(token);
        state[2u * row] = seen + 1u;
        state[2u * row + 1u] = draws + 1u;
    }
}
