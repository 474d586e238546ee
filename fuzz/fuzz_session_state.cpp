// Saved session states from arbitrary bytes (vkllm_session_state_load), on the Vulkan device
// (lavapipe in CI), into sequence 1 of a session of a small seed model. A refused input must
// leave the sequence exactly as it was (its position and its token ids); an accepted one is
// run on (a token decoded over the restored cache) and the sequence is put back.
// VKLLM_FUZZ_STATE_MODEL names the model (default: the seed corpus' llama-f32.gguf); with
// VKLLM_FUZZ_STATE_SEEDS set to a directory, the start writes real states of that model there
// (a few positions, a ring that has wrapped) for the fuzzer to begin from (scripts/fuzz).
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "vkllm.h"

namespace {

// Kept in globals, reachable until exit (see fuzz_model_load).
vkllm_runtime *g_runtime = nullptr;
vkllm_model *g_model = nullptr;
vkllm_session *g_session = nullptr;
std::vector<uint8_t> g_original;  // sequence 1's state before every input
uint32_t g_original_position = 0;

[[noreturn]] void die(const char *what) {
    std::fprintf(stderr, "fuzz_session_state: %s: %s\n", what, vkllm_last_error());
    std::abort();
}

std::vector<uint8_t> save(uint32_t seq) {
    size_t size = 0, length = 0;
    if (vkllm_session_get_state_size(g_session, seq, &size) != VKLLM_OK) die("state size");
    std::vector<uint8_t> bytes(size);
    if (vkllm_session_state_save(g_session, seq, bytes.data(), size, &length) != VKLLM_OK)
        die("save");
    return bytes;
}

uint32_t position(uint32_t seq) {
    uint32_t pos = 0;
    if (vkllm_session_get_position(g_session, seq, &pos) != VKLLM_OK) die("position");
    return pos;
}

void eval(uint32_t seq, uint32_t n, uint32_t first) {
    for (uint32_t i = 0; i < n; ++i) {
        int32_t id = int32_t(3 + (first + 7 * i) % 13);  // the seed model has 16 ids
        if (vkllm_session_decode(g_session, &seq, &id, 1, nullptr) != VKLLM_OK) die("decode");
    }
}

void write_seed(const std::string &dir, const char *name) {
    std::vector<uint8_t> bytes = save(0);
    std::string path = dir + "/" + name;
    std::FILE *f = std::fopen(path.c_str(), "wb");
    if (!f || std::fwrite(bytes.data(), 1, bytes.size(), f) != bytes.size()) die("write a seed");
    std::fclose(f);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
    vkllm_runtime_params p;
    vkllm_runtime_params_init(&p);
    p.device_memory_budget = uint64_t(256) << 20;
    if (vkllm_runtime_create(&p, &g_runtime) != VKLLM_OK) die("no runtime");
    const char *model_path = std::getenv("VKLLM_FUZZ_STATE_MODEL");
    if (!model_path) model_path = "fuzz/corpus/gguf/llama-f32.gguf";
    if (vkllm_model_load(g_runtime, model_path, nullptr, &g_model) != VKLLM_OK) die(model_path);
    vkllm_session_params sp;
    vkllm_session_params_init(&sp);
    sp.n_ctx = 12;  // the seed model encodes 16 positions
    sp.n_seq = 2;
    sp.n_batch = 4;
    sp.flags = VKLLM_SESSION_STREAMING;
    sp.n_sink = 2;
    if (vkllm_session_create(g_model, &sp, &g_session) != VKLLM_OK) die("session");
    if (const char *dir = std::getenv("VKLLM_FUZZ_STATE_SEEDS")) {
        eval(0, 3, 0);
        write_seed(dir, "3-positions");
        eval(0, 12, 3);  // past the 12-slot ring: wrapped, the sinks kept
        write_seed(dir, "15-positions-wrapped");
        vkllm_session_reset(g_session, 0);
        write_seed(dir, "empty");
    }
    eval(1, 5, 11);
    g_original = save(1);
    g_original_position = position(1);
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (vkllm_session_state_load(g_session, 1, data, size) != VKLLM_OK) {
        if (position(1) != g_original_position || save(1) != g_original)
            die("a refused state changed the sequence");
        return 0;
    }
    eval(1, 1, uint32_t(size));
    if (vkllm_session_state_load(g_session, 1, g_original.data(), g_original.size()) != VKLLM_OK)
        die("restoring the original state");
    return 0;
}
