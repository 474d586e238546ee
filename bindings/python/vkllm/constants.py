"""The C API's constants under Python names (VKLLM_X is X), and its enums as IntEnums that
compare equal to the C values. Every value comes from _ffi, generated from the header."""

import enum

from . import _ffi

# The groups of constants this package offers as ints, by their C prefix (the stop reasons and
# grammar progress are IntEnum members, below).
_PUBLIC = ("VKLLM_OK", "VKLLM_ERR_", "VKLLM_TOKENIZE_", "VKLLM_DETOKENIZE_", "VKLLM_SESSION_",
           "VKLLM_RUNTIME_", "VKLLM_SEED_", "VKLLM_KV_", "VKLLM_REPLY_", "VKLLM_LOGITS_",
           "VKLLM_MAX_TOP_LOGPROBS", "VKLLM_MAX_COOPMAT_SHAPES", "VKLLM_MAX_CHAINED_STEPS",
           "VKLLM_GGUF_", "VKLLM_CHAT_PIECE_", "VKLLM_EMBED_")

__all__ = []
for _name, _value in vars(_ffi).items():
    if _name.startswith(_PUBLIC) and not _name.endswith("_FORCE32"):
        globals()[_name[len("VKLLM_"):]] = _value
        __all__.append(_name[len("VKLLM_"):])
del _name, _value


class StopReason(enum.IntEnum):
    """Why a generation ended (vkllm_stop_reason); compares equal to the C values."""
    END_OF_GENERATION = _ffi.VKLLM_STOP_END_OF_GENERATION  # an end token, or a finished grammar
    MAX_TOKENS = _ffi.VKLLM_STOP_MAX_TOKENS
    STRING = _ffi.VKLLM_STOP_STRING  # a stop string
    CANCELLED = _ffi.VKLLM_STOP_CANCELLED


class GrammarProgress(enum.IntEnum):
    """Where a grammar stands after the text generated (vkllm_grammar_progress)."""
    INCOMPLETE = _ffi.VKLLM_GRAMMAR_INCOMPLETE  # more text is needed: the text is cut short
    COMPLETE = _ffi.VKLLM_GRAMMAR_COMPLETE  # the text may end here, or go on
    FINISHED = _ffi.VKLLM_GRAMMAR_FINISHED  # the text is complete and nothing can follow


class CoopmatUse(enum.IntEnum):
    """Whether prefill runs on cooperative matrices on a device, or why not
    (vkllm_coopmat_use)."""
    ABSENT = _ffi.VKLLM_COOPMAT_ABSENT  # no VK_KHR_cooperative_matrix, or masked
    USED = _ffi.VKLLM_COOPMAT_USED  # prefill's matrix products run on them (coopmat_shape)
    UNSUITABLE = _ffi.VKLLM_COOPMAT_UNSUITABLE  # no shape or feature the kernels need
    NOT_BUILT = _ffi.VKLLM_COOPMAT_NOT_BUILT  # the library has no cooperative-matrix shaders
    NOT_CHOSEN = _ffi.VKLLM_COOPMAT_NOT_CHOSEN  # VKLLM_COOPMAT=off, or auto on a CPU device


class ComponentType(enum.IntEnum):
    """A cooperative matrix's element type (vkllm_component_type: Vulkan's values)."""
    F16 = _ffi.VKLLM_COMPONENT_F16
    F32 = _ffi.VKLLM_COMPONENT_F32
    F64 = _ffi.VKLLM_COMPONENT_F64
    S8 = _ffi.VKLLM_COMPONENT_S8
    S16 = _ffi.VKLLM_COMPONENT_S16
    S32 = _ffi.VKLLM_COMPONENT_S32
    S64 = _ffi.VKLLM_COMPONENT_S64
    U8 = _ffi.VKLLM_COMPONENT_U8
    U16 = _ffi.VKLLM_COMPONENT_U16
    U32 = _ffi.VKLLM_COMPONENT_U32
    U64 = _ffi.VKLLM_COMPONENT_U64


class Pooling(enum.IntEnum):
    """How the rows of an input become its embedding (vkllm_pooling: llama.cpp's pooling
    types)."""
    MODEL = _ffi.VKLLM_POOLING_MODEL  # the model's own (Model.info().pooling)
    NONE = _ffi.VKLLM_POOLING_NONE  # one vector per token (Session.embed_tokens only)
    MEAN = _ffi.VKLLM_POOLING_MEAN  # the mean of every token's vector, [CLS] and [SEP] included
    CLS = _ffi.VKLLM_POOLING_CLS  # the first token's
    LAST = _ffi.VKLLM_POOLING_LAST  # the last token's (decoder embedding models)


# The older names of the enums' members, equal to them.
STOP_END_OF_GENERATION = StopReason.END_OF_GENERATION
STOP_MAX_TOKENS = StopReason.MAX_TOKENS
STOP_STRING = StopReason.STRING
STOP_CANCELLED = StopReason.CANCELLED
GRAMMAR_INCOMPLETE = GrammarProgress.INCOMPLETE
GRAMMAR_COMPLETE = GrammarProgress.COMPLETE
GRAMMAR_FINISHED = GrammarProgress.FINISHED
__all__ += ["StopReason", "GrammarProgress", "CoopmatUse", "ComponentType", "Pooling",
            "STOP_END_OF_GENERATION", "STOP_MAX_TOKENS", "STOP_STRING", "STOP_CANCELLED",
            "GRAMMAR_INCOMPLETE", "GRAMMAR_COMPLETE", "GRAMMAR_FINISHED"]
