// Where scripts/fetch-models keeps the real trained models (SmolLM2-135M-Instruct, Gemma 3
// 270M), for the tests that run them; an empty path when a model is absent (those tests then
// skip, saying so). The same rule as the script: $VKLLM_MODEL_CACHE, else
// $XDG_CACHE_HOME/vkllm/models, else ~/.cache/vkllm/models.
#pragma once

#include <sys/stat.h>

#include <cstdlib>
#include <string>

inline std::string model_cache_dir() {
    if (const char *dir = std::getenv("VKLLM_MODEL_CACHE"); dir && *dir) return dir;
    if (const char *xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
        return std::string(xdg) + "/vkllm/models";
    const char *home = std::getenv("HOME");
    return std::string(home ? home : "") + "/.cache/vkllm/models";
}

// The path of a cached model file ("SmolLM2-135M-Instruct.Q4_1.gguf",
// "gemma-3-270m-q4_k_m.gguf"), or "" when it is not there.
inline std::string cached_model(const char *file) {
    std::string path = model_cache_dir() + "/" + file;
    struct stat st;
    return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) ? path : std::string();
}
