// tests/data: the models, vocabularies, reference outputs and chat templates the tests compare
// with (tests/data/README.md says where each comes from), at the path the build gives.
#pragma once

#include <string>

inline std::string test_data_dir() {
    return VKLLM_TEST_DATA_DIR;
}
