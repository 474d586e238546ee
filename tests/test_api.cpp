// The C API as an application sees it (also proves the header compiles as C++): versions,
// statuses, errors, argument checks, devices, runtime lifetime, stats and the self-check.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "environment.h"
#include "validation.h"
#include "vkllm.h"

namespace {

struct Log {
    std::vector<std::string> errors;
    static void fn(void *user, vkllm_log_level level, const char *msg) {
        if (level == VKLLM_LOG_ERROR) static_cast<Log *>(user)->errors.push_back(msg);
    }
};

// A runtime with validation on; the test fails on any validation error.
class RuntimeTest : public ::testing::Test {
  protected:
    void SetUp() override {
        vkllm_runtime_params p;
        vkllm_runtime_params_init(&p);
        if (vkllm_test_validation_in_process()) p.flags = VKLLM_RUNTIME_VALIDATION;
        p.log_fn = &Log::fn;
        p.log_user_data = &log_;
        ASSERT_EQ(vkllm_runtime_create(&p, &rt_), VKLLM_OK) << vkllm_last_error();
    }
    void TearDown() override {
        vkllm_runtime_stats s;
        s.struct_size = sizeof s;
        ASSERT_EQ(vkllm_runtime_get_stats(rt_, &s), VKLLM_OK);
        EXPECT_EQ(s.validation_errors, 0u) << (log_.errors.empty() ? "" : log_.errors[0]);
        vkllm_runtime_destroy(rt_);
    }
    Log log_;
    vkllm_runtime *rt_ = nullptr;
};

}  // namespace

TEST(Version, RuntimeVersionMatchesHeaderMacros) {
    EXPECT_EQ(vkllm_version(), uint32_t(VKLLM_VERSION_NUMBER));
    char want[32];
    std::snprintf(want, sizeof want, "%d.%d.%d", VKLLM_VERSION_MAJOR, VKLLM_VERSION_MINOR,
                  VKLLM_VERSION_PATCH);
    EXPECT_STREQ(vkllm_version_string(), want);
}

TEST(Status, EveryStatusHasADistinctStringAndUnknownValuesAreSafe) {
    std::vector<std::string> seen;
    for (int s = VKLLM_OK; s <= VKLLM_ERR_NOT_FOUND; ++s) {
        std::string str = vkllm_status_string(vkllm_status(s));
        EXPECT_NE(str, "unknown status") << s;
        for (const auto &o : seen)
            EXPECT_NE(str, o);
        seen.push_back(str);
    }
    EXPECT_STREQ(vkllm_status_string(vkllm_status(12345)), "unknown status");
    // The values are part of the ABI.
    EXPECT_EQ(VKLLM_ERR_INVALID_ARGUMENT, 1);
    EXPECT_EQ(VKLLM_ERR_NO_DEVICE, 2);
    EXPECT_EQ(VKLLM_ERR_FORMAT, 8);
    EXPECT_EQ(VKLLM_ERR_INTERNAL, 13);
}

TEST(Errors, NullArgumentsAreRejectedWithAMessageNamingThem) {
    EXPECT_EQ(vkllm_runtime_create(nullptr, nullptr), VKLLM_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(vkllm_last_error()).find("out"), std::string::npos) << vkllm_last_error();
    EXPECT_EQ(vkllm_devices_enumerate(nullptr, 0, nullptr), VKLLM_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(vkllm_devices_enumerate(nullptr, 3, nullptr), VKLLM_ERR_INVALID_ARGUMENT);
    vkllm_device_info info;
    info.struct_size = sizeof info;
    EXPECT_EQ(vkllm_runtime_get_device_info(nullptr, &info), VKLLM_ERR_INVALID_ARGUMENT);
    vkllm_runtime_stats stats;
    stats.struct_size = sizeof stats;
    EXPECT_EQ(vkllm_runtime_get_stats(nullptr, &stats), VKLLM_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(vkllm_runtime_self_check(nullptr, nullptr), VKLLM_ERR_INVALID_ARGUMENT);
    vkllm_runtime_destroy(nullptr);      // no-op
    vkllm_runtime_params_init(nullptr);  // no-op
}

TEST(Errors, BadStructSizeIsRejectedAndOutputIsUntouched) {
    vkllm_runtime_params p;
    vkllm_runtime_params_init(&p);
    p.struct_size = 3;
    vkllm_runtime *rt = reinterpret_cast<vkllm_runtime *>(0x1);
    EXPECT_EQ(vkllm_runtime_create(&p, &rt), VKLLM_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(rt, reinterpret_cast<vkllm_runtime *>(0x1));
    EXPECT_NE(std::string(vkllm_last_error()).find("struct_size"), std::string::npos);
}

TEST(Errors, SuccessClearsTheLastError) {
    EXPECT_EQ(vkllm_runtime_create(nullptr, nullptr), VKLLM_ERR_INVALID_ARGUMENT);
    EXPECT_STRNE(vkllm_last_error(), "");
    size_t n = 0;
    ASSERT_EQ(vkllm_devices_enumerate(nullptr, 0, &n), VKLLM_OK);
    EXPECT_STREQ(vkllm_last_error(), "");
}

TEST(Errors, TheLastErrorIsPerThread) {
    EXPECT_EQ(vkllm_runtime_create(nullptr, nullptr), VKLLM_ERR_INVALID_ARGUMENT);
    std::string other = "unset";
    std::thread([&] { other = vkllm_last_error(); }).join();
    EXPECT_EQ(other, "");
    EXPECT_STRNE(vkllm_last_error(), "");
}

TEST(Devices, EnumerateReportsCountAndFillsWhatFits) {
    size_t n = 0;
    ASSERT_EQ(vkllm_devices_enumerate(nullptr, 0, &n), VKLLM_OK) << vkllm_last_error();
    ASSERT_GE(n, 1u);
    std::vector<vkllm_device_info> infos(n);
    for (auto &i : infos)
        i.struct_size = sizeof i;
    size_t m = 0;
    ASSERT_EQ(vkllm_devices_enumerate(infos.data(), n, &m), VKLLM_OK);
    EXPECT_EQ(m, n);
    for (size_t i = 0; i < n; ++i) {
        EXPECT_EQ(infos[i].index, i);
        EXPECT_GT(std::string(infos[i].name).size(), 0u);
        EXPECT_GE(infos[i].max_storage_buffer_range, 1u << 27);
        EXPECT_GE(infos[i].heap_count, 1u);
    }
    // An old caller's smaller struct gets only its fields; the bytes after it stay untouched.
    struct {
        vkllm_device_info head;
        unsigned char guard[8];
    } small;
    std::memset(&small, 0xAB, sizeof small);
    small.head.struct_size = offsetof(vkllm_device_info, name);
    ASSERT_EQ(vkllm_devices_enumerate(&small.head, 1, &m), VKLLM_OK);
    EXPECT_EQ(small.head.struct_size, offsetof(vkllm_device_info, name));
    EXPECT_EQ(small.head.index, 0u);
    EXPECT_EQ(static_cast<unsigned char>(small.head.name[0]), 0xAB);
}

TEST(Runtime, MissingDeviceIndexOrNameIsNoDevice) {
    vkllm_runtime_params p;
    vkllm_runtime_params_init(&p);
    p.device_index = 999;
    vkllm_runtime *rt = nullptr;
    EXPECT_EQ(vkllm_runtime_create(&p, &rt), VKLLM_ERR_NO_DEVICE);
    EXPECT_EQ(rt, nullptr);
    EXPECT_NE(std::string(vkllm_last_error()).find("999"), std::string::npos);
    vkllm_runtime_params_init(&p);
    p.device_name = "no-such-gpu-anywhere";
    EXPECT_EQ(vkllm_runtime_create(&p, &rt), VKLLM_ERR_NO_DEVICE);
    EXPECT_NE(std::string(vkllm_last_error()).find("no-such-gpu-anywhere"), std::string::npos);
}

TEST(Runtime, DeviceChosenThroughTheEnvironment) {
    set_env("VKLLM_DEVICE", "999");
    vkllm_runtime *rt = nullptr;
    EXPECT_EQ(vkllm_runtime_create(nullptr, &rt), VKLLM_ERR_NO_DEVICE);
    EXPECT_NE(std::string(vkllm_last_error()).find("VKLLM_DEVICE"), std::string::npos);
    set_env("VKLLM_DEVICE", "0");
    ASSERT_EQ(vkllm_runtime_create(nullptr, &rt), VKLLM_OK) << vkllm_last_error();
    vkllm_device_info info;
    info.struct_size = sizeof info;
    ASSERT_EQ(vkllm_runtime_get_device_info(rt, &info), VKLLM_OK);
    EXPECT_EQ(info.index, 0u);
    vkllm_runtime_destroy(rt);
    unset_env("VKLLM_DEVICE");
}

TEST_F(RuntimeTest, SelfCheckPassesEveryKernel) {
    vkllm_self_check_result r;
    r.struct_size = sizeof r;
    ASSERT_EQ(vkllm_runtime_self_check(rt_, &r), VKLLM_OK) << vkllm_last_error();
    EXPECT_GE(r.kernels_checked, 12u);
    EXPECT_EQ(r.kernels_failed, 0u) << r.first_failure;
    EXPECT_LE(r.max_error, 1.0);
    EXPECT_GT(r.elapsed_ms, 0.0);
}

TEST_F(RuntimeTest, OneRuntimeServesSeveralThreadsAtOnce) {
    std::vector<vkllm_self_check_result> results(3);
    std::vector<vkllm_status> statuses(3);
    std::vector<std::thread> threads;
    for (size_t i = 0; i < results.size(); ++i) {
        threads.emplace_back([&, i] {
            results[i].struct_size = sizeof results[i];
            statuses[i] = vkllm_runtime_self_check(rt_, &results[i]);
        });
    }
    for (auto &t : threads)
        t.join();
    for (size_t i = 0; i < results.size(); ++i) {
        EXPECT_EQ(statuses[i], VKLLM_OK);
        EXPECT_EQ(results[i].kernels_failed, 0u) << results[i].first_failure;
    }
}

TEST_F(RuntimeTest, StatsCountPipelinesSubmitsAndMemory) {
    vkllm_runtime_stats s;
    s.struct_size = sizeof s;
    ASSERT_EQ(vkllm_runtime_get_stats(rt_, &s), VKLLM_OK);
    EXPECT_EQ(s.pipelines_created, 0u);
    EXPECT_EQ(s.pipeline_compile_ms, 0.0);
    vkllm_self_check_result r;
    r.struct_size = sizeof r;
    ASSERT_EQ(vkllm_runtime_self_check(rt_, &r), VKLLM_OK);
    vkllm_runtime_stats after;
    after.struct_size = sizeof after;
    ASSERT_EQ(vkllm_runtime_get_stats(rt_, &after), VKLLM_OK);
    EXPECT_GT(after.pipelines_created, 5u);
    // Compiling them took time, and less than the whole check that compiled and ran them.
    EXPECT_GT(after.pipeline_compile_ms, 0.0);
    EXPECT_LT(after.pipeline_compile_ms, r.elapsed_ms);
    EXPECT_GE(after.submits, r.kernels_checked);
    EXPECT_EQ(after.device_memory_allocated, 0u) << "self-check freed its buffers";
}

TEST(Runtime, PipelineCacheFileIsWrittenAtDestroyAndLoadedAtCreate) {
    std::string path = ::testing::TempDir() + "vkllm_api_cache.bin";
    std::remove(path.c_str());
    vkllm_runtime_params p;
    vkllm_runtime_params_init(&p);
    p.pipeline_cache_path = path.c_str();
    vkllm_runtime *rt = nullptr;
    ASSERT_EQ(vkllm_runtime_create(&p, &rt), VKLLM_OK) << vkllm_last_error();
    vkllm_self_check_result r;
    r.struct_size = sizeof r;
    ASSERT_EQ(vkllm_runtime_self_check(rt, &r), VKLLM_OK);
    vkllm_runtime_destroy(rt);
    ASSERT_EQ(vkllm_runtime_create(&p, &rt), VKLLM_OK);
    vkllm_runtime_stats s;
    s.struct_size = sizeof s;
    ASSERT_EQ(vkllm_runtime_get_stats(rt, &s), VKLLM_OK);
    EXPECT_GT(s.pipeline_cache_bytes_loaded, 0u);
    vkllm_runtime_destroy(rt);
    std::remove(path.c_str());
}

// A grammar is compiled once and read by many samplers: threads compiling grammars for one
// tokenizer at once share one token trie, and samplers of one grammar on several threads each
// keep their own parse state (ThreadSanitizer runs this in scripts/test).
TEST(GrammarThreads, OneGrammarServesSamplersOnSeveralThreads) {
    std::string path =
        std::string(VKLLM_TEST_DATA_DIR) + "/tokenizer/llama.cpp-vocab/ggml-vocab-gpt-2.gguf";
    vkllm_gguf *gguf = nullptr;
    ASSERT_EQ(vkllm_gguf_open(path.c_str(), &gguf), VKLLM_OK) << vkllm_last_error();
    vkllm_tokenizer *tok = nullptr;
    ASSERT_EQ(vkllm_tokenizer_create(gguf, &tok), VKLLM_OK) << vkllm_last_error();
    vkllm_gguf_destroy(gguf);
    const char *gbnf = "root ::= \"alpha\" | \"beta gamma\" | [0-9]{1,3} \" units\"";
    std::vector<vkllm_grammar *> grammars(2, nullptr);
    {
        std::vector<std::thread> compile;
        for (size_t i = 0; i < grammars.size(); ++i)
            compile.emplace_back([&, i] {
                EXPECT_EQ(vkllm_grammar_create(tok, gbnf, nullptr, &grammars[i]), VKLLM_OK);
            });
        for (auto &t : compile)
            t.join();
    }
    ASSERT_NE(grammars[0], nullptr);
    ASSERT_NE(grammars[1], nullptr);
    vkllm_tokenizer_info info;
    info.struct_size = sizeof info;
    ASSERT_EQ(vkllm_tokenizer_get_info(tok, &info), VKLLM_OK);
    const size_t n_vocab = size_t(info.n_vocab);
    std::vector<std::vector<std::string>> texts(4);
    std::vector<std::thread> threads;
    for (size_t i = 0; i < texts.size(); ++i)
        threads.emplace_back([&, i] {
            vkllm_sampling_params p;
            vkllm_sampling_params_init(&p);
            p.temperature = 1.0f;
            p.top_k = 0;
            p.top_p = 1.0f;
            p.min_p = 0.0f;
            p.seed = i;
            p.grammar = grammars[i % 2];
            vkllm_sampler *s = nullptr;
            ASSERT_EQ(vkllm_sampler_create(tok, &p, &s), VKLLM_OK);
            uint32_t rng = uint32_t(i) * 2654435761u + 1;
            std::vector<float> logits(n_vocab);
            for (int sample = 0; sample < 6; ++sample) {
                std::string text;
                vkllm_grammar_progress progress = VKLLM_GRAMMAR_INCOMPLETE;
                while (progress != VKLLM_GRAMMAR_FINISHED && text.size() < 64) {
                    for (float &l : logits) {
                        rng = rng * 1664525u + 1013904223u;
                        l = float(rng >> 8) / float(1 << 24) * 8.0f;
                    }
                    int32_t t = -1;
                    ASSERT_EQ(vkllm_sampler_sample(s, logits.data(), n_vocab, &t), VKLLM_OK);
                    int32_t eog = 0;
                    vkllm_tokenizer_is_end_of_generation(tok, t, &eog);
                    if (eog) break;
                    ASSERT_EQ(vkllm_sampler_accept(s, t), VKLLM_OK) << vkllm_last_error();
                    char piece[256];
                    size_t n = 0;
                    ASSERT_EQ(vkllm_tokenizer_get_piece(tok, t, 0, piece, sizeof piece, &n),
                              VKLLM_OK);
                    text.append(piece, n);
                    ASSERT_EQ(vkllm_sampler_get_grammar_progress(s, &progress), VKLLM_OK);
                }
                texts[i].push_back(text);
                ASSERT_EQ(vkllm_sampler_reset(s), VKLLM_OK);
            }
            vkllm_sampler_destroy(s);
        });
    for (auto &t : threads)
        t.join();
    for (const auto &per_thread : texts)
        for (const std::string &text : per_thread) {
            bool units = text.size() > 6 && text.compare(text.size() - 6, 6, " units") == 0 &&
                         text.find_first_not_of("0123456789") == text.size() - 6 &&
                         text.size() - 6 >= 1 && text.size() - 6 <= 3;
            EXPECT_TRUE(text == "alpha" || text == "beta gamma" || units) << text;
        }
    vkllm_grammar_destroy(grammars[0]);
    vkllm_grammar_destroy(grammars[1]);
    vkllm_tokenizer_destroy(tok);
}
