#include "models/architecture.h"

#include "models/quirks.h"

namespace vkllm::models {

const std::vector<Architecture> &architectures() {
    static const std::vector<Architecture> rows = {
#define VKLLM_ARCHITECTURE(ENUM, NAME, POSITIONS, NORM, PLACE, QK_NORM, FFN, TOPK, SINKS, SWA, \
                           WINDOW, SWA_BASE, SCALING, ATTN_CAP, FINAL_CAP, EMBD, NOPE, FUSED,  \
                           SPECIAL)                                                            \
    {Arch::ENUM,                                                                               \
     NAME,                                                                                     \
     Positions::POSITIONS,                                                                     \
     Norm::NORM,                                                                               \
     NormPlace::PLACE,                                                                         \
     QkNorm::QK_NORM,                                                                          \
     Ffn::FFN,                                                                                 \
     TopK::TOPK,                                                                               \
     SINKS != 0,                                                                               \
     SWA,                                                                                      \
     WINDOW,                                                                                   \
     SWA_BASE,                                                                                 \
     RopeScalingKey::SCALING,                                                                  \
     ATTN_CAP,                                                                                 \
     FINAL_CAP,                                                                                \
     EmbdScale::EMBD,                                                                          \
     NOPE,                                                                                     \
     FUSED != 0,                                                                               \
     SPECIAL},
#include "models/architectures.def"
#undef VKLLM_ARCHITECTURE
    };
    return rows;
}

const Architecture *find_architecture(std::string_view name) {
    for (const Architecture &a : architectures())
        if (name == a.name) return &a;
    return nullptr;
}

std::string architecture_names() {
    std::string names;
    for (const Architecture &a : architectures())
        names += (names.empty() ? "" : ", ") + std::string(a.name);
    return names;
}

}  // namespace vkllm::models
