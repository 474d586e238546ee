// Engine tests on tiny random models the test writes (reference/tiny_model.h), each loaded on
// the device and, to compare with, in the CPU reference.
#pragma once

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "engine_fixture.h"
#include "reference/forward.h"
#include "reference/tiny_model.h"

class TinyModelTest : public EngineTest {
  protected:
    // Writes a tiny model, loads it on the device and (with_reference) in the CPU reference.
    vkllm_model *tiny(const TinyModelSpec &spec, const std::string &name,
                      bool with_reference = true) {
        std::string path = temp_path(name);
        write_tiny_model(path, spec);
        if (with_reference) reference_ = ref::load_model_ref(path);
        vkllm_model *m = load(path);
        std::remove(path.c_str());
        return m;
    }
    std::unique_ptr<ref::ModelRef> reference_;
};

// n deterministic ids of ordinary tokens: the tiny vocabulary's unk, bos and eos (0-2) never
// occur, so no sequence ends early by accident.
inline std::vector<int32_t> some_tokens(size_t n, uint32_t vocab, uint32_t seed) {
    std::vector<int32_t> t;
    uint32_t s = seed;
    for (size_t i = 0; i < n; ++i) {
        s = s * 1664525u + 1013904223u;
        t.push_back(int32_t(3 + (s >> 8) % (vocab - 3)));
    }
    return t;
}

// A qwen2 model with heads of 64, the size the fast attention kernels take (the default spec's
// heads are smaller and go to attention_small_head.comp).
inline TinyModelSpec qwen2_head64() {
    TinyModelSpec spec;
    spec.arch = "qwen2";
    spec.n_embd = 128, spec.n_head = 2, spec.n_head_kv = 1, spec.n_ff = 96;
    return spec;
}
