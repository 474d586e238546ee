// The identity fuzz_tune_file parses against, and write_seeds writes its seeds for.
#pragma once

#include "engine/tune_file.h"

inline vkllm::engine::TuneIdentity fuzz_tune_identity() {
    return {"10de:2330 NVIDIA H100 80GB HBM3 uuid 00112233445566778899aabbccddeeff",
            "NVIDIA 560.35.03 (0x8c0c8000)", "0.2.0"};
}
