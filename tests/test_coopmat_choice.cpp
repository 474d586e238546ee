// Choice and visibility of the cooperative-matrix kernels: what vkllm_device_info says about a
// device's cooperative matrices under VKLLM_COOPMAT and VKLLM_VULKAN_MASK_FEATURES, a
// misspelt VKLLM_COOPMAT refused before anything is made, a device without them running with
// no message above INFO, and a profiled prefill naming the kernels it ran. The parts that need
// a device offering VK_KHR_cooperative_matrix (Mesa 26's lavapipe: scripts/mesa26 run) skip
// elsewhere, saying so.
#include <cstdio>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "environment.h"
#include "gpu/pipeline.h"
#include "shader_names.h"
#include "tiny_model_fixture.h"
#include "validation.h"

namespace {

// Sets (or, with NULL, removes) an environment variable for a scope, then puts back what the
// test was started with (a run under VKLLM_COOPMAT=on keeps it for the other tests).
class ScopedEnv {
  public:
    ScopedEnv(const char *name, const char *value) : name_(name) {
        const char *old = std::getenv(name);
        had_ = old != nullptr;
        if (had_) old_ = old;
        if (value)
            set_env(name, value);
        else
            unset_env(name);
    }
    ~ScopedEnv() {
        if (had_)
            set_env(name_, old_.c_str());
        else
            unset_env(name_);
    }
    ScopedEnv(const ScopedEnv &) = delete;
    ScopedEnv &operator=(const ScopedEnv &) = delete;

  private:
    const char *name_;
    bool had_ = false;
    std::string old_;
};

std::vector<vkllm_device_info> enumerate() {
    size_t n = 0;
    EXPECT_EQ(vkllm_devices_enumerate(nullptr, 0, &n), VKLLM_OK) << vkllm_last_error();
    std::vector<vkllm_device_info> infos(n);
    for (vkllm_device_info &i : infos)
        i.struct_size = sizeof i;
    EXPECT_EQ(vkllm_devices_enumerate(infos.data(), n, &n), VKLLM_OK) << vkllm_last_error();
    return infos;
}

bool same_shape(const vkllm_coopmat_shape &a, const vkllm_coopmat_shape &b) {
    return std::memcmp(&a, &b, sizeof a) == 0;
}

// The kernels' shape: f16 operands, f32 accumulator and result, one subgroup's.
bool kernel_shape(const vkllm_coopmat_shape &s) {
    return s.m > 0 && s.n > 0 && s.k > 0 && s.a_type == VKLLM_COMPONENT_F16 &&
           s.b_type == VKLLM_COMPONENT_F16 && s.c_type == VKLLM_COMPONENT_F32 &&
           s.result_type == VKLLM_COMPONENT_F32 && s.subgroup_scope == 1;
}

bool listed(const vkllm_device_info &d, const vkllm_coopmat_shape &s) {
    for (uint32_t i = 0; i < d.coopmat_shape_count; ++i)
        if (same_shape(d.coopmat_shapes[i], s)) return true;
    return false;
}

// The first device that offers cooperative matrices with the kernels' shape, or -1.
int offering_device(const std::vector<vkllm_device_info> &infos) {
    for (const vkllm_device_info &d : infos)
        if (d.usable && kernel_shape(d.coopmat_shape) && listed(d, d.coopmat_shape))
            return int(d.index);
    return -1;
}

// Every message of a runtime at WARNING or above.
void collect_warnings(void *user, vkllm_log_level level, const char *msg) {
    if (level >= VKLLM_LOG_WARNING) static_cast<std::vector<std::string> *>(user)->push_back(msg);
}

// The build compiled the cooperative-matrix shaders (cmake/coopmat.cmake found a glslang).
bool shaders_built() {
    return vkllm::gpu::shaders::kCoopmatShaders;
}

bool in_registry(const char *shader) {
    for (size_t i = 0; i < vkllm::gpu::kShaderCount; ++i)
        if (std::strcmp(vkllm::gpu::kShaders[i].name, shader) == 0) return true;
    return false;
}

}  // namespace

// Every device says whether prefill runs on cooperative matrices, with shapes that agree: none
// where it is absent, the kernels' shape among those listed where they are used.
TEST(CoopmatChoice, EveryDeviceReportsItsShapesAndWhetherTheKernelsUseThem) {
    std::vector<vkllm_device_info> infos = enumerate();
    ASSERT_FALSE(infos.empty());
    for (const vkllm_device_info &d : infos) {
        SCOPED_TRACE(d.name);
        EXPECT_LE(d.coopmat_shape_count, uint32_t(VKLLM_MAX_COOPMAT_SHAPES));
        switch (d.cooperative_matrix) {
            case VKLLM_COOPMAT_ABSENT:
                EXPECT_EQ(d.coopmat_shape_count, 0u);
                EXPECT_EQ(d.coopmat_shape.m, 0u);
                break;
            case VKLLM_COOPMAT_USED:
            case VKLLM_COOPMAT_NOT_BUILT:
            case VKLLM_COOPMAT_NOT_CHOSEN:
                EXPECT_TRUE(kernel_shape(d.coopmat_shape));
                EXPECT_TRUE(listed(d, d.coopmat_shape));
                break;
            case VKLLM_COOPMAT_UNSUITABLE:
                break;
            default:
                ADD_FAILURE() << "cooperative_matrix " << int(d.cooperative_matrix);
        }
        for (uint32_t i = 0; i < d.coopmat_shape_count; ++i)
            EXPECT_GT(d.coopmat_shapes[i].m * d.coopmat_shapes[i].n * d.coopmat_shapes[i].k, 0u);
    }
}

// On a device that offers them, VKLLM_COOPMAT chooses and the mask hides: "on" uses them
// (where the build has the shaders), "off" does not, "auto" only on GPUs; masked, the device
// reports none, whatever VKLLM_COOPMAT says. A runtime's info says what it chose.
TEST(CoopmatChoice, VkllmCoopmatChoosesAndTheMaskHidesThem) {
    ScopedEnv no_mask("VKLLM_VULKAN_MASK_FEATURES", nullptr);
    int index = -1;
    {
        ScopedEnv on("VKLLM_COOPMAT", "on");
        index = offering_device(enumerate());
    }
    if (index < 0)
        GTEST_SKIP() << "no device here offers VK_KHR_cooperative_matrix with an "
                        "f16*f16+f32->f32 subgroup shape (Mesa 26's lavapipe does: "
                        "scripts/mesa26 run)";
    const vkllm_coopmat_use built_or =
        shaders_built() ? VKLLM_COOPMAT_USED : VKLLM_COOPMAT_NOT_BUILT;
    auto use = [&](const char *coopmat) {
        ScopedEnv env("VKLLM_COOPMAT", coopmat);
        return enumerate().at(size_t(index));
    };
    vkllm_device_info on = use("on"), off = use("off"), automatic = use("auto"),
                      unset = use(nullptr);
    EXPECT_EQ(on.cooperative_matrix, built_or);
    EXPECT_EQ(off.cooperative_matrix,
              shaders_built() ? VKLLM_COOPMAT_NOT_CHOSEN : VKLLM_COOPMAT_NOT_BUILT);
    bool cpu = on.type == VKLLM_DEVICE_CPU;
    EXPECT_EQ(automatic.cooperative_matrix,
              !shaders_built() ? VKLLM_COOPMAT_NOT_BUILT
                               : (cpu ? VKLLM_COOPMAT_NOT_CHOSEN : VKLLM_COOPMAT_USED));
    EXPECT_EQ(unset.cooperative_matrix, automatic.cooperative_matrix);
    for (const vkllm_device_info *d : {&off, &automatic}) {
        EXPECT_TRUE(same_shape(d->coopmat_shape, on.coopmat_shape)) << "the choice, not the shape";
        EXPECT_EQ(d->coopmat_shape_count, on.coopmat_shape_count);
    }

    {
        ScopedEnv mask("VKLLM_VULKAN_MASK_FEATURES", "VK_KHR_cooperative_matrix");
        vkllm_device_info masked = use("on");
        EXPECT_EQ(masked.cooperative_matrix, VKLLM_COOPMAT_ABSENT);
        EXPECT_EQ(masked.coopmat_shape_count, 0u);
        EXPECT_EQ(masked.coopmat_shape.m, 0u);
        EXPECT_STREQ(masked.name, on.name);
    }

    // A runtime made on it under "on" says so too.
    ScopedEnv env("VKLLM_COOPMAT", "on");
    vkllm_runtime_params p;
    vkllm_runtime_params_init(&p);
    p.device_index = index;
    if (vkllm_test_validation_in_process()) p.flags = VKLLM_RUNTIME_VALIDATION;
    vkllm_runtime *rt = nullptr;
    ASSERT_EQ(vkllm_runtime_create(&p, &rt), VKLLM_OK) << vkllm_last_error();
    vkllm_device_info info;
    info.struct_size = sizeof info;
    EXPECT_EQ(vkllm_runtime_get_device_info(rt, &info), VKLLM_OK);
    EXPECT_EQ(info.cooperative_matrix, built_or);
    EXPECT_TRUE(same_shape(info.coopmat_shape, on.coopmat_shape));
    vkllm_runtime_stats st;
    st.struct_size = sizeof st;
    EXPECT_EQ(vkllm_runtime_get_stats(rt, &st), VKLLM_OK);
    EXPECT_EQ(st.validation_errors + st.validation_warnings, 0u)
        << "enabling the extension keeps the validation layer quiet";
    vkllm_runtime_destroy(rt);
}

// Enabling the extension (and the Vulkan memory model its shaders use) keeps every other
// kernel valid: tiny models of three layouts (llama, qwen2 with heads of 64, a qwen3moe whose
// router has a Device-scope barrier) generate under the validation layer with nothing said
// above INFO.
TEST(CoopmatChoice, EnablingThemKeepsTheOtherKernelsValid) {
    ScopedEnv no_mask("VKLLM_VULKAN_MASK_FEATURES", nullptr);
    ScopedEnv on("VKLLM_COOPMAT", "on");
    int index = offering_device(enumerate());
    if (index < 0 || !shaders_built())
        GTEST_SKIP() << "no device here on which this build enables VK_KHR_cooperative_matrix "
                        "(Mesa 26's lavapipe: scripts/mesa26 run)";
    std::vector<std::string> warnings;
    vkllm_runtime_params p;
    vkllm_runtime_params_init(&p);
    p.device_index = index;
    if (vkllm_test_validation_in_process()) p.flags = VKLLM_RUNTIME_VALIDATION;
    p.log_fn = &collect_warnings;
    p.log_user_data = &warnings;
    vkllm_runtime *rt = nullptr;
    ASSERT_EQ(vkllm_runtime_create(&p, &rt), VKLLM_OK) << vkllm_last_error();
    TinyModelSpec moe;
    moe.arch = "qwen3moe";
    moe.n_embd = 64, moe.n_head = 4, moe.n_head_kv = 2, moe.head_dim = 32;
    moe.n_expert = 6, moe.n_expert_used = 2, moe.n_ff_exp = 32;
    for (const TinyModelSpec &spec : {TinyModelSpec{}, qwen2_head64(), moe}) {
        SCOPED_TRACE(spec.arch);
        std::string path = ::testing::TempDir() + "vkllm_coopmat_enabled.gguf";
        write_tiny_model(path, spec);
        vkllm_model *m = nullptr;
        EXPECT_EQ(vkllm_model_load(rt, path.c_str(), nullptr, &m), VKLLM_OK) << vkllm_last_error();
        std::remove(path.c_str());
        vkllm_session *s = nullptr;
        if (m) {
            EXPECT_EQ(vkllm_session_create(m, nullptr, &s), VKLLM_OK) << vkllm_last_error();
        }
        if (s) {
            std::vector<int32_t> prompt = some_tokens(24, spec.n_vocab, 9);
            vkllm_generate_params gp;
            vkllm_generate_params_init(&gp);
            gp.max_tokens = 4;
            EXPECT_EQ(
                vkllm_session_generate(s, prompt.data(), prompt.size(), nullptr, &gp, nullptr),
                VKLLM_OK)
                << vkllm_last_error();
        }
        vkllm_session_destroy(s);
        vkllm_model_destroy(m);
    }
    vkllm_runtime_stats st;
    st.struct_size = sizeof st;
    EXPECT_EQ(vkllm_runtime_get_stats(rt, &st), VKLLM_OK);
    EXPECT_EQ(st.validation_errors + st.validation_warnings, 0u);
    vkllm_runtime_destroy(rt);
    for (const std::string &w : warnings)
        ADD_FAILURE() << w;
}

// A value VKLLM_COOPMAT does not take fails runtime creation and device enumeration with
// VKLLM_ERR_INVALID_ARGUMENT naming the variable and its values, on every device (whether or
// not it has cooperative matrices), and leaves the caller's outputs as they were.
TEST(CoopmatChoice, AMisspeltVkllmCoopmatIsRefusedAndChangesNothing) {
    for (const char *bad : {"yes", "ON", " on", "1", "auto,off"}) {
        SCOPED_TRACE(bad);
        ScopedEnv env("VKLLM_COOPMAT", bad);
        vkllm_runtime *rt = nullptr;
        EXPECT_EQ(vkllm_runtime_create(nullptr, &rt), VKLLM_ERR_INVALID_ARGUMENT);
        EXPECT_EQ(rt, nullptr);
        std::string message = vkllm_last_error();
        EXPECT_NE(message.find(std::string("VKLLM_COOPMAT is \"") + bad + "\""), std::string::npos)
            << message;
        EXPECT_NE(message.find("auto, on or off"), std::string::npos) << message;

        vkllm_device_info info;
        std::memset(&info, 0xAB, sizeof info);
        info.struct_size = sizeof info;
        size_t count = 12345;
        EXPECT_EQ(vkllm_devices_enumerate(&info, 1, &count), VKLLM_ERR_INVALID_ARGUMENT);
        EXPECT_EQ(count, 12345u);
        EXPECT_EQ(info.name[0], char(0xAB)) << "nothing written";
    }
    // Nothing stays behind: with the variable gone a runtime is made as before.
    ScopedEnv gone("VKLLM_COOPMAT", nullptr);
    vkllm_runtime *rt = nullptr;
    EXPECT_EQ(vkllm_runtime_create(nullptr, &rt), VKLLM_OK) << vkllm_last_error();
    vkllm_runtime_destroy(rt);
}

// A device without cooperative matrices (this machine's, or any with the extension masked)
// runs today's kernels with nothing above INFO said about it: creating the runtime, loading
// a model and generating after a prefill.
TEST(CoopmatChoice, ADeviceWithoutThemRunsWithNoMessageAboveInfo) {
    ScopedEnv mask("VKLLM_VULKAN_MASK_FEATURES", "VK_KHR_cooperative_matrix");
    std::vector<std::string> warnings;
    vkllm_runtime_params p;
    vkllm_runtime_params_init(&p);
    if (vkllm_test_validation_in_process()) p.flags = VKLLM_RUNTIME_VALIDATION;
    p.log_fn = &collect_warnings;
    p.log_user_data = &warnings;
    vkllm_runtime *rt = nullptr;
    ASSERT_EQ(vkllm_runtime_create(&p, &rt), VKLLM_OK) << vkllm_last_error();
    vkllm_device_info info;
    info.struct_size = sizeof info;
    ASSERT_EQ(vkllm_runtime_get_device_info(rt, &info), VKLLM_OK);
    EXPECT_EQ(info.cooperative_matrix, VKLLM_COOPMAT_ABSENT);

    std::string path = ::testing::TempDir() + "vkllm_coopmat_absent.gguf";
    TinyModelSpec spec;
    write_tiny_model(path, spec);
    vkllm_model *m = nullptr;
    EXPECT_EQ(vkllm_model_load(rt, path.c_str(), nullptr, &m), VKLLM_OK) << vkllm_last_error();
    std::remove(path.c_str());
    if (m) {
        vkllm_session_params sp;
        vkllm_session_params_init(&sp);
        sp.n_ctx = 64;
        vkllm_session *s = nullptr;
        EXPECT_EQ(vkllm_session_create(m, &sp, &s), VKLLM_OK) << vkllm_last_error();
        std::vector<int32_t> prompt = some_tokens(24, spec.n_vocab, 5);
        vkllm_sampling_params samp;
        vkllm_sampling_params_init(&samp);
        samp.temperature = 0;
        vkllm_generate_params gp;
        vkllm_generate_params_init(&gp);
        gp.max_tokens = 4;
        vkllm_generate_result r;
        r.struct_size = sizeof r;
        if (s) {
            EXPECT_EQ(vkllm_session_generate(s, prompt.data(), prompt.size(), &samp, &gp, &r),
                      VKLLM_OK)
                << vkllm_last_error();
            EXPECT_EQ(r.n_generated, 4u);
        }
        vkllm_session_destroy(s);
        vkllm_model_destroy(m);
    }
    vkllm_runtime_destroy(rt);
    for (const std::string &w : warnings)
        ADD_FAILURE() << w;
}

namespace {

// What one profiled prefill ran, on a runtime made under VKLLM_COOPMAT=`coopmat`.
struct Profiled {
    vkllm_device_info info{};
    std::set<std::string> kernels;
    std::string names;  // for messages
    uint64_t validation_messages = 0;
};

Profiled profiled_prefill(const char *coopmat, const std::string &model, uint32_t n_vocab) {
    Profiled out;
    ScopedEnv env("VKLLM_COOPMAT", coopmat);
    vkllm_runtime_params p;
    vkllm_runtime_params_init(&p);
    if (vkllm_test_validation_in_process()) p.flags = VKLLM_RUNTIME_VALIDATION;
    vkllm_runtime *rt = nullptr;
    EXPECT_EQ(vkllm_runtime_create(&p, &rt), VKLLM_OK) << vkllm_last_error();
    if (!rt) return out;
    out.info.struct_size = sizeof out.info;
    EXPECT_EQ(vkllm_runtime_get_device_info(rt, &out.info), VKLLM_OK);
    vkllm_model *m = nullptr;
    EXPECT_EQ(vkllm_model_load(rt, model.c_str(), nullptr, &m), VKLLM_OK) << vkllm_last_error();
    vkllm_session *s = nullptr;
    if (m) {
        vkllm_session_params sp;
        vkllm_session_params_init(&sp);
        sp.n_ctx = 128;
        sp.flags = VKLLM_SESSION_PROFILE;
        EXPECT_EQ(vkllm_session_create(m, &sp, &s), VKLLM_OK) << vkllm_last_error();
    }
    if (s) {
        std::vector<int32_t> prompt = some_tokens(40, n_vocab, 3);
        EXPECT_EQ(vkllm_session_eval(s, 0, prompt.data(), prompt.size(), nullptr), VKLLM_OK)
            << vkllm_last_error();
        size_t n = 0;
        EXPECT_EQ(vkllm_session_get_profile(s, nullptr, 0, &n), VKLLM_OK);
        std::vector<vkllm_kernel_time> k(n);
        EXPECT_EQ(vkllm_session_get_profile(s, k.data(), k.size(), &n), VKLLM_OK);
        for (size_t i = 0; i < n; ++i) {
            out.kernels.insert(k[i].kernel);
            out.names += std::string(" ") + k[i].kernel;
            EXPECT_GT(k[i].dispatches, 0u) << k[i].kernel;
        }
    }
    vkllm_session_destroy(s);
    vkllm_model_destroy(m);
    vkllm_runtime_stats st;
    st.struct_size = sizeof st;
    EXPECT_EQ(vkllm_runtime_get_stats(rt, &st), VKLLM_OK);
    out.validation_messages = st.validation_errors + st.validation_warnings;
    vkllm_runtime_destroy(rt);
    return out;
}

bool any_coopmat_kernel(const std::set<std::string> &kernels) {
    for (const std::string &name : kernels)
        if (name.find("_coopmat") != std::string::npos) return true;
    return false;
}

bool any_matvec_kernel(const std::set<std::string> &kernels) {
    for (const std::string &name : kernels)
        if (name.rfind("matvec", 0) == 0) return true;
    return false;
}

}  // namespace

// A profiled prefill names each kernel it dispatched by its shader (what `vkllm bench
// --profile` prints): under VKLLM_COOPMAT=off no *_coopmat shader ran, and the matrix products
// went to the tiled matmul on GPUs and to the batched matvec on CPU devices; under "on", on a
// device and build that have them, to matmul_coopmat.
TEST(CoopmatProfile, AProfiledPrefillNamesTheKernelsItRan) {
    TinyModelSpec spec = qwen2_head64();
    std::string path = ::testing::TempDir() + "vkllm_coopmat_profile.gguf";
    write_tiny_model(path, spec);
    Profiled off = profiled_prefill("off", path, spec.n_vocab);
    Profiled on = profiled_prefill("on", path, spec.n_vocab);
    std::remove(path.c_str());

    EXPECT_NE(off.info.cooperative_matrix, VKLLM_COOPMAT_USED);
    EXPECT_FALSE(any_coopmat_kernel(off.kernels)) << "VKLLM_COOPMAT=off, yet:" << off.names;
    if (off.info.type == VKLLM_DEVICE_CPU)
        EXPECT_TRUE(any_matvec_kernel(off.kernels)) << off.names;
    else
        EXPECT_EQ(off.kernels.count("matmul"), 1u) << off.names;
    EXPECT_EQ(off.validation_messages + on.validation_messages, 0u);

    if (on.info.cooperative_matrix != VKLLM_COOPMAT_USED) {
        // A device without them (Mesa 22's lavapipe): "on" changes nothing.
        EXPECT_EQ(on.kernels, off.kernels) << "no cooperative matrices here: the same kernels";
        return;
    }
    if (!in_registry("matmul_coopmat"))
        GTEST_SKIP() << "this build has no matmul_coopmat shader yet; ran:" << on.names;
    EXPECT_EQ(on.kernels.count("matmul_coopmat"), 1u) << on.names;
}
