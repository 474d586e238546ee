// Where $VKLLM_SHARED_DATA_DIR is, for tests that compare with its files; empty when it is absent
// (those tests then skip, saying so).
#pragma once

#include <sys/stat.h>

#include <string>

inline std::string shared_data_dir() {
    std::string dir = VKLLM_SHARED_DATA_DIR;
    struct stat st;
    return ::stat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode) ? dir : std::string();
}
