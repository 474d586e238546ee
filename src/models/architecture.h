// The architectures vkllm serves as data: one row of models/architectures.def each, read into an
// Architecture here. read_config (models/config.h) follows a file's row; what no column can say
// is its row's special case (models/quirks.h).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace vkllm::models {

enum class Arch {
#define VKLLM_ARCHITECTURE(ENUM, ...) ENUM,
#include "models/architectures.def"
#undef VKLLM_ARCHITECTURE
};

// The columns of architectures.def, which says what each value means.
enum class Positions { RopePairs, RopeNeox, Learned };
enum class Norm { Rms, Layer };
enum class NormPlace { Pre, PrePost, Post, Encoder };
enum class QkNorm { NoQk, PerHead, WholeRow };
enum class Ffn { SwiGlu, GeGlu, Gelu, Experts, SharedExperts, OaiExperts };
enum class TopK { AsRouted, FileSays, Renormalized };
enum class RopeScalingKey { Unread, NoScaling, Linear, Yarn, LinearOrYarn };
enum class EmbdScale { One, SqrtEmbd };

// A soft cap's column: a positive default, or one of these.
constexpr float NoCap = -1;   // the key is not read
constexpr float FileCap = 0;  // read where the file states a non-zero one

struct ModelConfig;
class HParams;
// A row's special case: reads or refuses what its column values cannot say, last.
using SpecialCase = void (*)(const HParams &keys, ModelConfig &c);

struct Architecture {
    Arch arch;
    const char *name;  // general.architecture
    Positions positions;
    Norm norm;
    NormPlace place;
    QkNorm qk_norm;
    Ffn ffn;
    TopK topk;
    bool sinks;
    uint32_t swa_pattern;
    uint32_t default_window;
    float rope_base_swa;
    RopeScalingKey scaling;
    float attn_cap, final_cap;
    EmbdScale embd_scale;
    uint32_t no_rope_step;
    bool fused_projections;
    SpecialCase special;  // nullptr: none

    bool experts() const {
        return ffn == Ffn::Experts || ffn == Ffn::SharedExperts || ffn == Ffn::OaiExperts;
    }
};

// Every row, in the table's order (its Arch values).
const std::vector<Architecture> &architectures();

// The row of general.architecture `name` (exactly: names are case-sensitive, as llama.cpp's);
// nullptr where no row has it.
const Architecture *find_architecture(std::string_view name);

// The rows' names, ", "-separated, for the refusal of any other.
std::string architecture_names();

}  // namespace vkllm::models
