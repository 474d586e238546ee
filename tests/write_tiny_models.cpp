// Writes every tiny architecture model of reference/tiny_archs.h into a directory, as
// "<name>.gguf": the files tools/llamacpp_reference/tiny_greedy.mjs runs llama.cpp on. That the
// reference reads each back is tested by TinyArchs.EveryArchitectureWritesAFileTheReferenceReads.
#include <cstdio>
#include <exception>

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
            std::printf("%s\n", path.c_str());
        }
    } catch (const std::exception &e) {
        std::fprintf(stderr, "vkllm_write_tiny_models: %s\n", e.what());
        return 1;
    }
    return 0;
}
