// Every tiny architecture model of reference/tiny_archs.h (the files
// tools/llamacpp_reference/tiny_greedy.mjs runs llama.cpp on) is written to a file that the CPU
// reference reads back with the spec's architecture and layer count.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <memory>

#include "reference/forward.h"
#include "reference/tiny_archs.h"

TEST(TinyArchs, EveryArchitectureWritesAFileTheReferenceReads) {
    const std::filesystem::path dir =
        std::filesystem::temp_directory_path() / "vkllm_tiny_archs_test";
    std::filesystem::create_directories(dir);
    ASSERT_FALSE(tiny_archs().empty());
    for (const TinyArch &t : tiny_archs()) {
        const std::string path = (dir / (t.name + ".gguf")).string();
        ASSERT_NO_THROW(write_tiny_model(path, t.spec)) << t.name;
        std::unique_ptr<ref::ModelRef> m;
        ASSERT_NO_THROW(m = ref::load_model_ref(path)) << t.name;
        EXPECT_EQ(m->arch, t.spec.arch) << t.name;
        EXPECT_EQ(m->layers.size(), t.spec.n_layer) << t.name;
        std::filesystem::remove(path);
    }
}
