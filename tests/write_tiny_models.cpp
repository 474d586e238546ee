// Writes every tiny architecture model of reference/tiny_archs.h into a directory, as
// "<name>.gguf": the files tools/llamacpp_reference/tiny_greedy.mjs runs llama.cpp on. Each
// file is read back by the CPU reference, which must accept it and find the spec's layers,
// else the tool fails (ctest Tiny.EveryArchitectureWritesAFileTheReferenceReads).
#include <cstdio>
#include <exception>
#include <memory>

#include "reference/forward.h"
#include "reference/tiny_archs.h"

int main(int argc, char **argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: vkllm_write_tiny_models DIR\n");
        return 2;
    }
    try {
        for (const TinyArch &t : tiny_archs()) {
            std::string path = std::string(argv[1]) + "/" + t.name + ".gguf";
            write_tiny_model(path, t.spec);
            std::unique_ptr<ref::ModelRef> m = ref::load_model_ref(path);
            if (m->arch != t.spec.arch || m->layers.size() != t.spec.n_layer) {
                std::fprintf(stderr,
                             "vkllm_write_tiny_models: %s reads back as %s with %zu layers\n",
                             path.c_str(), m->arch.c_str(), m->layers.size());
                return 1;
            }
            std::printf("%s: %s, %zu layers\n", path.c_str(), m->arch.c_str(), m->layers.size());
        }
    } catch (const std::exception &e) {
        std::fprintf(stderr, "vkllm_write_tiny_models: %s\n", e.what());
        return 1;
    }
    return 0;
}
