/*
 * vkllm.h — the public C API of libvkllm, an embeddable LLM inference library on Vulkan.
 *
 * This is the only header an application needs. It is plain C99 and also compiles as C++.
 *
 * CONVENTIONS (they hold for every function below unless its comment says otherwise)
 *
 *   Status in, objects out.  Every function that can fail returns a vkllm_status; results
 *   come back through out-parameters, which are written only on success.
 *
 *   Errors.  On failure the function also sets a thread-local message with the detail
 *   (what failed, which argument, which file offset...). Read it with vkllm_last_error()
 *   on the same thread before the next vkllm_* call on that thread. A failed call changes
 *   nothing: no half-created object is left behind and out-parameters are untouched.
 *
 *   Handles are opaque.  Every create has a destroy; destroy(NULL) is a no-op.
 *
 *   Params structs evolve without breaking callers.  They are passed by pointer, their first
 *   field is `struct_size`, and each has an *_init() function that fills defaults. Always
 *   call the init function first, then set the fields you need. New fields are only ever
 *   appended, so an old caller (with a smaller struct_size) keeps working. Output structs
 *   (vkllm_device_info, ...) also start with `struct_size`, set by the caller: the library
 *   fills only the fields that fit.
 *
 *   Nothing unwinds through this API and the library never calls exit() or abort() on bad
 *   input: every exported function catches everything and maps it to a status.
 *
 *   Only symbols starting with `vkllm_` are exported.
 *
 *   Names.  A function is vkllm_<object>_<verb> (vkllm_session_generate), a getter
 *   vkllm_<object>_get_<thing> (vkllm_model_get_info), and every handle is released by
 *   vkllm_<object>_destroy. A params struct is filled by vkllm_<struct>_init. Params and
 *   result structs are named for the object they create or describe (vkllm_session_params,
 *   vkllm_model_info) or for the call they serve (vkllm_conversation_reply_params; the
 *   session's generate_params and generate_result, the runtime's tune_result and
 *   self_check_result go without their object's prefix, as in 0.2: 0.3 renamed no type).
 *   A few functions belong to no object and keep plain names: vkllm_version,
 *   vkllm_version_string, vkllm_status_string and vkllm_last_error (the library itself);
 *   vkllm_devices_enumerate (it runs before any runtime exists, to choose one);
 *   vkllm_chat_apply_template, vkllm_chat_render and vkllm_chat_render_json (chat templates
 *   are functions of text, with no handle); vkllm_reply_format_of_template and
 *   vkllm_prompt_opens_reasoning (they read text to choose a reply parser's arguments);
 *   vkllm_ggml_type_name and vkllm_json_schema_to_gbnf (conversions of values, under "Free
 *   helpers" at the end).
 *
 *   Renames.  A renamed function keeps its old name for one minor version, marked
 *   VKLLM_DEPRECATED (compilers then warn, naming the replacement): see "Deprecated names" at
 *   the end, and docs/MIGRATION.md for each version's changes.
 *
 *   Experimental.  What benchmarks and the library's tests use to look inside it, which may
 *   change or go in any minor version, is declared only where VKLLM_EXPERIMENTAL is defined
 *   before this header is included (as zstd's ZSTD_STATIC_LINKING_ONLY fences its unstable
 *   API):
 *
 *       #define VKLLM_EXPERIMENTAL
 *       #include "vkllm.h"
 *
 *   The library exports those functions either way; the fence keeps applications from coming
 *   to depend on them by accident.
 *
 * THREAD SAFETY
 *
 *   vkllm_version*, vkllm_status_string, vkllm_last_error, vkllm_devices_enumerate and
 *   vkllm_chat_apply_template may be called from any thread at any time. vkllm_runtime,
 *   vkllm_gguf, vkllm_tokenizer and vkllm_model may be used from several threads at once
 *   (destroying one must not race with its other uses). A vkllm_session and a
 *   vkllm_detokenizer are used by one thread at a time; different sessions of one model may
 *   run on different threads at once, and give the same results as run one after another.
 *   A call that changes a session (eval, decode, generate, reset, truncate, state save and
 *   load, fork) while another such call on it is running, on another thread or from inside
 *   its own callback, is refused with VKLLM_ERR_INVALID_ARGUMENT and changes nothing. The
 *   exception: vkllm_session_cancel may be called from any thread at any time. A
 *   vkllm_sampler is used by one thread at a time.
 *
 * DEVICE LOSS
 *
 *   A driver may lose the device (a hang, a reset, a removed GPU). The call that sees it
 *   returns VKLLM_ERR_DEVICE_LOST, and from then on every call on that runtime's sessions
 *   returns it too, as do model loads and new sessions on that runtime; destroying sessions,
 *   models and the runtime still works and frees everything. Recover by creating them again.
 *
 * OBJECTS
 *
 *   In the order of this header's sections:
 *
 *   vkllm_runtime      a Vulkan device with its memory and compiled kernels
 *   vkllm_gguf         an opened model file: metadata, no weights loaded
 *   vkllm_tokenizer    text <-> token ids (from a vkllm_gguf, or owned by a vkllm_model), and
 *   vkllm_detokenizer  its streaming text
 *   vkllm_model        weights on a runtime's device, immutable, shared by sessions
 *   vkllm_session      KV caches of one or more sequences and the recorded steps
 *   vkllm_sampler      chooses the next token from a row of logits
 *   vkllm_grammar      a compiled grammar that constrains a sampler
 *   (chat templates)   functions that render a conversation as prompt text
 *   vkllm_reply_parser splits a chat reply into reasoning, answer and tool calls
 *   vkllm_conversation the messages of a chat, answered on a session's sequence
 */
#ifndef VKLLM_H
#define VKLLM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Which functions the library exports. Windows: vkllm.dll exports what it marks dllexport
 * (the library's own build defines VKLLM_BUILDING_SHARED); a program using the DLL defines
 * VKLLM_SHARED (find_package and pkg-config do) to import them; a static link defines neither.
 * Elsewhere: default visibility, everything else being hidden (and a version script). */
#if defined(_WIN32) && defined(VKLLM_BUILDING_SHARED)
#define VKLLM_API __declspec(dllexport)
#elif defined(_WIN32) && defined(VKLLM_SHARED)
#define VKLLM_API __declspec(dllimport)
#elif defined(_WIN32)
#define VKLLM_API
#elif defined(__GNUC__) || defined(__clang__)
#define VKLLM_API __attribute__((visibility("default")))
#else
#define VKLLM_API
#endif

/* Marks a name kept for one minor version after its rename (see the end of this header). */
#if defined(__GNUC__) || defined(__clang__)
#define VKLLM_DEPRECATED(replacement) __attribute__((deprecated("use " replacement)))
#elif defined(_MSC_VER)
#define VKLLM_DEPRECATED(replacement) __declspec(deprecated("use " replacement))
#else
#define VKLLM_DEPRECATED(replacement)
#endif

/* ---------------------------------------------------------------------------------------
 * Version
 * ------------------------------------------------------------------------------------- */

#define VKLLM_VERSION_MAJOR 0
#define VKLLM_VERSION_MINOR 3
#define VKLLM_VERSION_PATCH 0
/* MAJOR * 10000 + MINOR * 100 + PATCH, comparable with vkllm_version(). */
#define VKLLM_VERSION_NUMBER \
    (VKLLM_VERSION_MAJOR * 10000 + VKLLM_VERSION_MINOR * 100 + VKLLM_VERSION_PATCH)

/* The version of the library actually loaded, as VKLLM_VERSION_NUMBER encodes it. A binding
 * compiled against one header can compare it with its own VKLLM_VERSION_NUMBER and refuse a
 * library with a different major version. */
VKLLM_API uint32_t vkllm_version(void);

/* The same version as "MAJOR.MINOR.PATCH". Static storage; never NULL. */
VKLLM_API const char *vkllm_version_string(void);

/* ---------------------------------------------------------------------------------------
 * Status codes and errors
 * ------------------------------------------------------------------------------------- */

/* The numeric values are stable: they will not change in any 0.x or later release, and new
 * codes are only appended. */
typedef enum vkllm_status {
    VKLLM_OK = 0,
    VKLLM_ERR_INVALID_ARGUMENT = 1, /* NULL handle, out-of-range value, bad struct_size */
    VKLLM_ERR_NO_DEVICE = 2,        /* no Vulkan loader, no driver, or no usable device */
    VKLLM_ERR_OUT_OF_HOST_MEMORY = 3,
    VKLLM_ERR_OUT_OF_DEVICE_MEMORY = 4,
    VKLLM_ERR_VULKAN = 5,            /* a Vulkan call failed unexpectedly */
    VKLLM_ERR_DEVICE_LOST = 6,       /* the device was lost; the runtime must be recreated */
    VKLLM_ERR_IO = 7,                /* a file could not be opened, read or written */
    VKLLM_ERR_FORMAT = 8,            /* a file is malformed or truncated */
    VKLLM_ERR_UNSUPPORTED = 9,       /* valid input this build or device cannot handle */
    VKLLM_ERR_BUFFER_TOO_SMALL = 10, /* a caller buffer is too small; the needed size is
                                        reported through the function's size out-parameter */
    VKLLM_ERR_CONTEXT_FULL = 11,     /* a session has no room for more tokens */
    VKLLM_ERR_CANCELLED = 12,        /* a callback asked to stop */
    VKLLM_ERR_INTERNAL = 13,         /* a bug in vkllm; please report it with the message */
    VKLLM_ERR_NOT_FOUND = 14,        /* a named key, tensor or template does not exist */
    VKLLM_STATUS_FORCE32 = 0x7FFFFFFF
} vkllm_status;

/* A short constant description of a status ("invalid argument", ...). Static storage; never
 * NULL, also for values that are not a vkllm_status. */
VKLLM_API const char *vkllm_status_string(vkllm_status status);

/* The detailed message of the last failed vkllm_* call on this thread, or "" if the last call
 * succeeded. The pointer stays valid until the next vkllm_* call on this thread. Never NULL. */
VKLLM_API const char *vkllm_last_error(void);

/* ---------------------------------------------------------------------------------------
 * Logging
 * ------------------------------------------------------------------------------------- */

typedef enum vkllm_log_level {
    VKLLM_LOG_DEBUG = 0,
    VKLLM_LOG_INFO = 1,
    VKLLM_LOG_WARNING = 2,
    VKLLM_LOG_ERROR = 3,
    VKLLM_LOG_LEVEL_FORCE32 = 0x7FFFFFFF
} vkllm_log_level;

/* Receives the library's diagnostics, Vulkan validation messages included. Called on the
 * thread that caused the message; `message` is valid only during the call. Must not call back
 * into vkllm. */
typedef void (*vkllm_log_fn)(void *user_data, vkllm_log_level level, const char *message);

/* ---------------------------------------------------------------------------------------
 * Runtime: a Vulkan instance, one device, its queue, memory and compiled kernels
 * ------------------------------------------------------------------------------------- */

/* The devices a runtime can be created on. */

typedef enum vkllm_device_type {
    VKLLM_DEVICE_OTHER = 0,
    VKLLM_DEVICE_INTEGRATED_GPU = 1,
    VKLLM_DEVICE_DISCRETE_GPU = 2,
    VKLLM_DEVICE_VIRTUAL_GPU = 3,
    VKLLM_DEVICE_CPU = 4, /* a software rasterizer such as Mesa's lavapipe */
    VKLLM_DEVICE_TYPE_FORCE32 = 0x7FFFFFFF
} vkllm_device_type;

#define VKLLM_MAX_MEMORY_HEAPS 16

/* Cooperative matrices (VK_KHR_cooperative_matrix): the matrix units of GPUs (NVIDIA's tensor
 * cores, AMD's WMMA, Intel's XMX) as Vulkan exposes them. vkllm's prefill multiplies its
 * matrices on them where the device, the build and the choice below all allow it; everywhere
 * else it runs the same kernels it runs without them, with the same results up to rounding. */

/* Whether vkllm runs its prefill kernels on cooperative matrices on a device, or why not
 * (vkllm_device_info.cooperative_matrix). The values are stable. */
typedef enum vkllm_coopmat_use {
    /* The device does not offer VK_KHR_cooperative_matrix, or VKLLM_VULKAN_MASK_FEATURES
     * hides it (see vkllm_runtime_params). */
    VKLLM_COOPMAT_ABSENT = 0,
    /* Used: prefill's matrix products run on cooperative matrices of coopmat_shape. */
    VKLLM_COOPMAT_USED = 1,
    /* Offered, but not as the kernels need it: no f16 x f16 + f32 -> f32 shape at subgroup
     * scope, one of the features cooperativeMatrix, shaderFloat16, vulkanMemoryModel or
     * vulkanMemoryModelDeviceScope missing, or the device used below Vulkan 1.2. */
    VKLLM_COOPMAT_UNSUITABLE = 2,
    /* The device could, but this library was built without the cooperative-matrix shaders
     * (its build found no glslang that compiles GL_KHR_cooperative_matrix: README). */
    VKLLM_COOPMAT_NOT_BUILT = 3,
    /* The device and the build could, but VKLLM_COOPMAT chose against it: "off", or "auto"
     * (the default) on a CPU device such as lavapipe, which keeps its own batched kernels. */
    VKLLM_COOPMAT_NOT_CHOSEN = 4,
    VKLLM_COOPMAT_USE_FORCE32 = 0x7FFFFFFF
} vkllm_coopmat_use;

/* The element types of a cooperative matrix: the values of Vulkan's VkComponentTypeKHR, so a
 * type newer than this header (bfloat16, fp8) comes through as Vulkan's own value. */
typedef enum vkllm_component_type {
    VKLLM_COMPONENT_F16 = 0,
    VKLLM_COMPONENT_F32 = 1,
    VKLLM_COMPONENT_F64 = 2,
    VKLLM_COMPONENT_S8 = 3,
    VKLLM_COMPONENT_S16 = 4,
    VKLLM_COMPONENT_S32 = 5,
    VKLLM_COMPONENT_S64 = 6,
    VKLLM_COMPONENT_U8 = 7,
    VKLLM_COMPONENT_U16 = 8,
    VKLLM_COMPONENT_U32 = 9,
    VKLLM_COMPONENT_U64 = 10,
    VKLLM_COMPONENT_TYPE_FORCE32 = 0x7FFFFFFF
} vkllm_component_type;

/* One product a device computes cooperatively: Result (m x n) = A (m x k) * B (k x n) + C
 * (m x n), with the element types given. NVIDIA GPUs list 16x16x16 and 16x8x16 among others,
 * AMD RDNA3 16x16x16, Mesa 26's lavapipe 8x8x8. */
typedef struct vkllm_coopmat_shape {
    uint32_t m, n, k;
    vkllm_component_type a_type, b_type, c_type, result_type;
    int32_t subgroup_scope; /* 1: one subgroup computes it (what vkllm's kernels use); 0: another
                               scope, such as a workgroup */
} vkllm_coopmat_shape;

/* The most cooperative-matrix shapes a vkllm_device_info lists. */
#define VKLLM_MAX_COOPMAT_SHAPES 32

/* What vkllm knows about one Vulkan device. Set struct_size = sizeof(vkllm_device_info)
 * before passing it to the library. */
typedef struct vkllm_device_info {
    size_t struct_size;
    uint32_t index; /* position in vkllm_devices_enumerate's order */
    vkllm_device_type type;
    char name[256];        /* e.g. "llvmpipe (LLVM 15.0.6, 256 bits)" */
    char driver_name[256]; /* e.g. "llvmpipe"; empty if the driver does not say */
    char driver_info[256]; /* e.g. "Mesa 22.3.6 (LLVM 15.0.6)" */
    uint32_t vendor_id;
    uint32_t device_id;
    uint32_t api_version;   /* Vulkan version, encoded as VK_MAKE_API_VERSION; at most
                               VKLLM_VULKAN_API_VERSION where that caps it (see runtime) */
    int32_t usable;         /* 1 if vkllm can run on it (Vulkan 1.1, compute queue) */
    int32_t unified_memory; /* 1 if device-local memory is also host-visible (no staging) */
    uint32_t heap_count;
    uint64_t heap_size[VKLLM_MAX_MEMORY_HEAPS];
    int32_t heap_device_local[VKLLM_MAX_MEMORY_HEAPS];
    uint64_t max_storage_buffer_range; /* largest storage-buffer binding, in bytes */
    uint64_t max_texel_buffer_elements;
    uint64_t max_allocation_size;
    uint32_t max_compute_shared_memory;
    uint32_t max_workgroup_invocations;
    uint32_t subgroup_size;
    int32_t shader_float16; /* float16 arithmetic in shaders */
    int32_t shader_int8;    /* int8 arithmetic in shaders */
    int32_t storage_16bit;  /* 16-bit types in storage buffers */
    int32_t timestamps;     /* compute queue supports timestamp queries */
    /* Appended in 0.2: cooperative matrices. A caller built against an older header
     * passes its shorter struct and gets the fields it knows. */
    /* Whether prefill runs on cooperative matrices here (VKLLM_COOPMAT_USED) or why not. As a
     * runtime would choose at this moment (VKLLM_COOPMAT and VKLLM_VULKAN_MASK_FEATURES
     * applied); vkllm_runtime_get_device_info says what its runtime did choose. */
    vkllm_coopmat_use cooperative_matrix;
    /* The f16 x f16 + f32 -> f32 subgroup shape the kernels use, or would use where
     * cooperative_matrix says another reason; all zero where the device has none. */
    vkllm_coopmat_shape coopmat_shape;
    /* Every shape the device offers (the first VKLLM_MAX_COOPMAT_SHAPES of them), as its driver
     * lists them; 0 where VK_KHR_cooperative_matrix is absent or masked. */
    uint32_t coopmat_shape_count;
    vkllm_coopmat_shape coopmat_shapes[VKLLM_MAX_COOPMAT_SHAPES];
} vkllm_device_info;

/* Lists the Vulkan devices of this machine, in the order that device indices refer to, as
 * vkllm_runtime_create sees them (with the VKLLM_VULKAN_* variables and VKLLM_COOPMAT applied,
 * see there).
 * Writes up to `capacity` entries to `infos` (each with struct_size set by the caller, the same
 * in every entry; `infos` may be NULL when capacity is 0) and the total number of devices to
 * *count. The entries are taken to be struct_size bytes apart, so an array of the shorter
 * struct of an older header is filled entry by entry as it lies. Returns
 * VKLLM_ERR_NO_DEVICE when there is no Vulkan loader or driver, VKLLM_ERR_INVALID_ARGUMENT
 * for a value of those variables it does not take. Thread-safe. */
VKLLM_API vkllm_status vkllm_devices_enumerate(vkllm_device_info *infos, size_t capacity,
                                               size_t *count);

typedef struct vkllm_runtime vkllm_runtime;
/* Declared here for vkllm_runtime_tune; described with its functions below. */
typedef struct vkllm_model vkllm_model;

/* Runtime flags (vkllm_runtime_params.flags). */
/* Enable VK_LAYER_KHRONOS_validation (it must be installed); its messages go to log_fn and are
 * counted in vkllm_runtime_stats. For development and tests: it slows everything down. */
#define VKLLM_RUNTIME_VALIDATION 0x1u

typedef struct vkllm_runtime_params {
    size_t struct_size;
    /* Device choice, strongest first: device_index >= 0; else device_name (a case-insensitive
     * substring of the device name) if not NULL; else the VKLLM_DEVICE environment variable
     * (an index or a name substring); else the best usable device: discrete GPU, then
     * integrated, virtual, other, then CPU. Default: -1 and NULL.
     * For testing the paths of older devices on a newer one, two environment variables,
     * read at create: VKLLM_VULKAN_API_VERSION ("1.0", "1.1" or "1.2") caps the Vulkan version
     * of the instance and of every device (1.1 phones; below 1.1 no device is usable), and
     * VKLLM_VULKAN_MASK_FEATURES, a comma-separated list of shaderFloat16, shaderInt8,
     * storageBuffer16BitAccess, subgroupArithmetic, VK_KHR_driver_properties,
     * VK_KHR_shader_float16_int8 and VK_KHR_cooperative_matrix, makes each device report those
     * as absent (an extension name hides the extension, which matters at 1.1, where vkllm reads
     * those features through it; VK_KHR_cooperative_matrix keeps prefill on the kernels of
     * devices without it). A third chooses the prefill kernels: VKLLM_COOPMAT=auto (default:
     * cooperative matrices on GPUs that have them, not on CPU devices), on (wherever the device
     * and the build have them, lavapipe included: how they are tested without a GPU) or off
     * (nowhere); vkllm_device_info.cooperative_matrix says what was chosen. Any other value of
     * the three fails with VKLLM_ERR_INVALID_ARGUMENT, on every device, and creates nothing. */
    int32_t device_index;
    const char *device_name;
    uint32_t flags; /* VKLLM_RUNTIME_* bits; default 0 */
    /* File where compiled pipelines are kept between runs (pipeline compilation is slow on
     * phones and on lavapipe). Read at create if it exists and matches the device (otherwise
     * ignored), written at destroy. NULL (default): no file. The string is copied. */
    const char *pipeline_cache_path;
    vkllm_log_fn log_fn; /* NULL (default): messages of level WARNING and above go to stderr */
    void *log_user_data;
    /* The most bytes of device memory the runtime may hold at once (weights, KV caches,
     * activations, staging; what vkllm_runtime_stats counts as device_memory_allocated), for an
     * app that shares the device with other work. A model or session that would not fit fails
     * with VKLLM_ERR_OUT_OF_DEVICE_MEMORY and leaves nothing allocated, as when the driver
     * itself runs out. 0 (default): no limit but the device's. */
    uint64_t device_memory_budget;
} vkllm_runtime_params;

/* Fills *params with defaults (struct_size included). No-op on NULL. */
VKLLM_API void vkllm_runtime_params_init(vkllm_runtime_params *params);

/* Creates a runtime on the chosen device. `params` may be NULL for defaults.
 * Errors: VKLLM_ERR_NO_DEVICE (no loader, no driver, no usable device, or the requested
 * device does not exist), VKLLM_ERR_UNSUPPORTED (validation requested but the layer is not
 * installed), VKLLM_ERR_INVALID_ARGUMENT, VKLLM_ERR_OUT_OF_*_MEMORY, VKLLM_ERR_VULKAN. */
VKLLM_API vkllm_status vkllm_runtime_create(const vkllm_runtime_params *params,
                                            vkllm_runtime **out);

/* Releases the caller's reference. When no model uses the device any more, waits for it to be
 * idle, writes the pipeline cache file if one was given, and frees everything. NULL: no-op. */
VKLLM_API void vkllm_runtime_destroy(vkllm_runtime *runtime);

/* The device the runtime runs on. `info->struct_size` must be set by the caller. */
VKLLM_API vkllm_status vkllm_runtime_get_device_info(const vkllm_runtime *runtime,
                                                     vkllm_device_info *info);

/* Counters of a runtime since its creation. Set struct_size before the call. */
typedef struct vkllm_runtime_stats {
    size_t struct_size;
    uint64_t validation_errors;   /* validation-layer messages of severity error */
    uint64_t validation_warnings; /* ... of severity warning */
    uint64_t pipelines_created;
    uint64_t pipeline_cache_bytes_loaded; /* size of the cache file accepted at create, or 0 */
    uint64_t device_memory_allocated;     /* bytes in live VkDeviceMemory allocations */
    uint64_t submits;                     /* queue submissions */
    /* Appended in 0.2: milliseconds spent compiling shader modules and pipelines. They are
     * compiled on first use, inside the first prefill or decode that needs them, so a caller
     * timing a first call can take the difference of two readings out of it. */
    double pipeline_compile_ms;
    /* Appended in 0.2: weight shapes whose kernels run a tuned variant, from the tune file
     * read at create or from vkllm_runtime_tune. */
    uint64_t tuned_shapes;
} vkllm_runtime_stats;

VKLLM_API vkllm_status vkllm_runtime_get_stats(const vkllm_runtime *runtime,
                                               vkllm_runtime_stats *stats);

/* Result of vkllm_runtime_self_check. Set struct_size before the call. */
typedef struct vkllm_self_check_result {
    size_t struct_size;
    uint32_t kernels_checked;
    uint32_t kernels_failed;
    double max_error;        /* largest error relative to the check's tolerance (<= 1: pass) */
    char first_failure[128]; /* name of the first kernel that failed, or "" */
    double elapsed_ms;
} vkllm_self_check_result;

/* Runs every compute kernel once on fixed pseudo-random data and compares it with a CPU
 * computation. A failure of a kernel is reported in *result with VKLLM_OK returned; an error
 * status means the check could not run. Useful to diagnose a driver. */
VKLLM_API vkllm_status vkllm_runtime_self_check(vkllm_runtime *runtime,
                                                vkllm_self_check_result *result);

/* Result of vkllm_runtime_tune. Set struct_size before the call. */
typedef struct vkllm_tune_result {
    size_t struct_size;
    uint32_t shapes;              /* distinct matrix-vector shapes of the model's decode step */
    uint32_t candidates_timed;    /* variants timed, over all shapes */
    uint32_t candidates_rejected; /* variants whose output differed from the reference kernel */
    uint32_t shapes_changed;      /* shapes whose winner is not the default variant */
    double default_us; /* one decode step's matrix-vector time with the default variants */
    double tuned_us;   /* ... with the winners (both summed over the model's matrices) */
    double elapsed_ms;
    uint32_t file_written; /* 1: the tune file beside the pipeline cache was written */
} vkllm_tune_result;

/* Tunes the runtime's decode kernels to its device: for every weight shape of `model` (its dense
 * and expert matrix-vector products), times each candidate variant of the kernel (workgroup size,
 * rows per workgroup, subgroup or shared-memory sums), after checking its output against the
 * reference kernel on the model's own weights (a candidate that differs is rejected and cannot
 * win), and keeps the fastest for the runtime. Sessions created afterwards use the winners;
 * existing ones keep the kernels they recorded. Outputs do not depend on the choice beyond
 * float rounding.
 * With a pipeline_cache_path, the winners are also written to the tune file beside it (the
 * same path plus ".tune"), keyed by device, driver version, vkllm version and shape, merged
 * with what the file held for other shapes; vkllm_runtime_create reads it. A missing tune file
 * is nothing; a stale (another device, driver or vkllm version), truncated or malformed one is
 * ignored with a WARNING and changes nothing else. What each shape tried and picked, with the
 * times, goes to the log at level INFO (`vkllm tune` prints it).
 * `result` may be NULL. Takes seconds on a GPU; about a minute for a 0.5B model on lavapipe.
 * Errors: VKLLM_ERR_INVALID_ARGUMENT (NULL runtime or model, a model loaded on another
 * runtime), VKLLM_ERR_IO (the tune file could not be written; the winners stay in use). */
VKLLM_API vkllm_status vkllm_runtime_tune(vkllm_runtime *runtime, const vkllm_model *model,
                                          vkllm_tune_result *result);

/* ---------------------------------------------------------------------------------------
 * Model files (GGUF): metadata without loading weights
 *
 * A vkllm_gguf is an opened, fully validated GGUF file (versions 2 and 3), memory-mapped,
 * not read into RAM. Opening checks every count, length, offset and size against the file:
 * a truncated or hostile file gives VKLLM_ERR_FORMAT with a message naming what is wrong and
 * its byte offset; a tensor type unknown to vkllm gives VKLLM_ERR_UNSUPPORTED naming it.
 * A vkllm_gguf is immutable: any number of threads may read it at once.
 * ------------------------------------------------------------------------------------- */

typedef struct vkllm_gguf vkllm_gguf;

/* Metadata value types, with GGUF's numbering. */
typedef enum vkllm_gguf_type {
    VKLLM_GGUF_UINT8 = 0,
    VKLLM_GGUF_INT8 = 1,
    VKLLM_GGUF_UINT16 = 2,
    VKLLM_GGUF_INT16 = 3,
    VKLLM_GGUF_UINT32 = 4,
    VKLLM_GGUF_INT32 = 5,
    VKLLM_GGUF_FLOAT32 = 6,
    VKLLM_GGUF_BOOL = 7,
    VKLLM_GGUF_STRING = 8,
    VKLLM_GGUF_ARRAY = 9,
    VKLLM_GGUF_UINT64 = 10,
    VKLLM_GGUF_INT64 = 11,
    VKLLM_GGUF_FLOAT64 = 12,
    VKLLM_GGUF_TYPE_FORCE32 = 0x7FFFFFFF
} vkllm_gguf_type;

/* The file must not be truncated or rewritten while it is open: like any memory map, pages
 * that vanish from under it fault the process (SIGBUS). Replace model files by renaming. */
VKLLM_API vkllm_status vkllm_gguf_open(const char *path, vkllm_gguf **out);

/* Unmaps the file. NULL: no-op. Strings returned by the functions below die with it. */
VKLLM_API void vkllm_gguf_destroy(vkllm_gguf *gguf);

/* ggml tensor types are numbered as in ggml (0 F32, 1 F16, 8 Q8_0, 12 Q4_K, 39 MXFP4 ...). */
#define VKLLM_GGML_TYPE_COUNT 48

/* What a model file is, in one struct. Fields the file does not state are 0 or "". */
typedef struct vkllm_model_summary {
    size_t struct_size;
    uint32_t gguf_version;
    char architecture[64]; /* general.architecture, e.g. "llama", "qwen2", "gpt-oss" */
    char name[256];        /* general.name */
    uint64_t file_bytes;
    uint64_t tensor_bytes; /* size of all tensor data */
    uint64_t n_params;     /* elements in all tensors */
    uint64_t n_tensors;
    uint64_t n_keys;
    uint32_t context_length;  /* <arch>.context_length */
    uint32_t n_layers;        /* <arch>.block_count */
    uint32_t n_embd;          /* <arch>.embedding_length */
    uint32_t n_heads;         /* <arch>.attention.head_count */
    uint32_t n_kv_heads;      /* <arch>.attention.head_count_kv (n_heads when absent) */
    uint32_t n_experts;       /* <arch>.expert_count */
    uint32_t n_experts_used;  /* <arch>.expert_used_count */
    uint32_t n_vocab;         /* entries of tokenizer.ggml.tokens */
    char tokenizer_model[32]; /* tokenizer.ggml.model: "gpt2", "llama" ... */
    char tokenizer_pre[32];   /* tokenizer.ggml.pre: "qwen2", "llama-bpe" ... */
    uint64_t tensors_of_type[VKLLM_GGML_TYPE_COUNT]; /* tensor count per ggml type */
} vkllm_model_summary;

VKLLM_API vkllm_status vkllm_gguf_get_summary(const vkllm_gguf *gguf, vkllm_model_summary *out);

/* One metadata key. `name` stays valid until vkllm_gguf_destroy. For arrays, `element_type`
 * and `count` describe the elements; for scalars element_type == type and count == 1. */
typedef struct vkllm_gguf_key {
    size_t struct_size;
    const char *name;
    vkllm_gguf_type type;
    vkllm_gguf_type element_type;
    uint64_t count;
} vkllm_gguf_key;

/* Keys are numbered 0 .. n_keys-1 in file order. VKLLM_ERR_NOT_FOUND past the end. */
VKLLM_API vkllm_status vkllm_gguf_get_key(const vkllm_gguf *gguf, size_t index,
                                          vkllm_gguf_key *out);

/* Typed reads of a key by name. VKLLM_ERR_NOT_FOUND when the key is absent; VKLLM_ERR_FORMAT
 * when it has another type. get_int accepts every integer type and bool (a uint64 above
 * INT64_MAX is VKLLM_ERR_FORMAT); get_float accepts floats and integers. */
VKLLM_API vkllm_status vkllm_gguf_get_int(const vkllm_gguf *gguf, const char *key, int64_t *out);
VKLLM_API vkllm_status vkllm_gguf_get_float(const vkllm_gguf *gguf, const char *key, double *out);

/* Copies a string value and a terminating NUL into buf. *length gets the string's length
 * (without the NUL) also when the buffer is too small (VKLLM_ERR_BUFFER_TOO_SMALL); buf may be
 * NULL when capacity is 0. Values may contain NUL bytes: use *length. */
VKLLM_API vkllm_status vkllm_gguf_get_string(const vkllm_gguf *gguf, const char *key, char *buf,
                                             size_t capacity, size_t *length);

/* Any value as readable text (numbers, quoted strings, arrays as their first elements and
 * their length), with the same buffer rules as vkllm_gguf_get_string. */
VKLLM_API vkllm_status vkllm_gguf_get_text(const vkllm_gguf *gguf, const char *key, char *buf,
                                           size_t capacity, size_t *length);

typedef struct vkllm_tensor_info {
    size_t struct_size;
    const char *name; /* valid until vkllm_gguf_destroy */
    uint32_t type;    /* ggml type */
    const char *type_name;
    uint32_t n_dims;
    uint64_t dims[4]; /* innermost first: a weight matrix is [in_features, out_features] */
    uint64_t n_elements;
    uint64_t n_bytes;
    uint64_t file_offset;
} vkllm_tensor_info;

/* Tensors are numbered 0 .. n_tensors-1 in file order. VKLLM_ERR_NOT_FOUND past the end. */
VKLLM_API vkllm_status vkllm_gguf_get_tensor(const vkllm_gguf *gguf, size_t index,
                                             vkllm_tensor_info *out);

/* ---------------------------------------------------------------------------------------
 * Tokenizers
 *
 * Built from a model file's tokenizer.ggml.* metadata: BPE ("gpt2": GPT-2, Qwen, Llama 3,
 * SmolLM, GPT-OSS, DeepSeek, Mistral's Tekken, Falcon, Command-R...) with every
 * tokenizer.ggml.pre name llama.cpp's loader accepts (the README lists them; a file without
 * the key gets llama.cpp's "default" rules and a warning in the log), and SentencePiece
 * ("llama": Llama 2, TinyLlama, Gemma). Encodings match llama.cpp and the models' own Hugging
 * Face tokenizers; where those two differ, vkllm follows the model's tokenizer: the
 * pre-tokenizer names "qwen2", "qwen", "deepseek-r1-qwen" and "qwen35" NFC-normalise the text
 * first, as Qwen's tokenizer does and llama.cpp does not. A vkllm_tokenizer is immutable: any
 * number of threads may use it at once. It needs no device.
 * ------------------------------------------------------------------------------------- */

typedef struct vkllm_tokenizer vkllm_tokenizer;

/* Builds the tokenizer of an opened model file; the file may be closed afterwards.
 * VKLLM_ERR_UNSUPPORTED names an unknown tokenizer model or pre-tokenizer (the message lists
 * the known names); VKLLM_ERR_FORMAT an inconsistent vocabulary. */
VKLLM_API vkllm_status vkllm_tokenizer_create(const vkllm_gguf *gguf, vkllm_tokenizer **out);

/* NULL: no-op. */
VKLLM_API void vkllm_tokenizer_destroy(vkllm_tokenizer *tokenizer);

typedef struct vkllm_tokenizer_info {
    size_t struct_size;
    uint32_t n_vocab;
    int32_t bos; /* -1 when the model has none */
    int32_t eos;
    int32_t eot;
    int32_t unk;
    int32_t pad;
    int32_t add_bos; /* 1 if VKLLM_TOKENIZE_ADD_SPECIAL adds BOS */
    int32_t add_eos;
    char model[32]; /* "gpt2" (BPE), "llama" (SentencePiece) or "bert" (WordPiece) */
    char pre[32];   /* the pre-tokenizer name, "" for SentencePiece and WordPiece */
} vkllm_tokenizer_info;

VKLLM_API vkllm_status vkllm_tokenizer_get_info(const vkllm_tokenizer *tokenizer,
                                                vkllm_tokenizer_info *out);

/* vkllm_tokenizer_encode flags. A SentencePiece model's user-defined pieces (Gemma's runs of
 * spaces, its HTML tags) are part of its segmentation: they are matched with or without
 * PARSE_SPECIAL. */
#define VKLLM_TOKENIZE_ADD_SPECIAL 0x1u /* add BOS (and EOS) where the model asks for them */
#define VKLLM_TOKENIZE_PARSE_SPECIAL                          \
    0x2u /* text of control and added tokens ("<|im_start|>") \
            becomes those tokens; else it is plain text */

/* Tokenizes `length` bytes of UTF-8 `text` (NULL allowed when length is 0; invalid UTF-8 is
 * encoded byte by byte, never rejected). Writes the ids to `tokens` and their number to
 * *n_tokens. When `capacity` is too small, returns VKLLM_ERR_BUFFER_TOO_SMALL with the number
 * needed in *n_tokens and writes no ids (`tokens` may be NULL to ask for the size). Special
 * tokens are parsed only with VKLLM_TOKENIZE_PARSE_SPECIAL: text a chat template rendered needs
 * it (else the model reads "<|im_end|>" as ten characters and does not stop where it should);
 * vkllm_conversation passes it itself. */
VKLLM_API vkllm_status vkllm_tokenizer_encode(const vkllm_tokenizer *tokenizer, const char *text,
                                              size_t length, uint32_t flags, int32_t *tokens,
                                              size_t capacity, size_t *n_tokens);

/* vkllm_tokenizer_get_piece / vkllm_tokenizer_decode flags. */
#define VKLLM_DETOKENIZE_SPECIAL                                   \
    0x1u /* render control tokens (BOS, <|im_end|>) as their text; \
            by default they produce no text */

/* The bytes of one token, which may be part of a UTF-8 character (byte tokens), with a NUL
 * after them; the buffer rules of vkllm_gguf_get_string. VKLLM_ERR_INVALID_ARGUMENT for an id
 * outside the vocabulary. */
VKLLM_API vkllm_status vkllm_tokenizer_get_piece(const vkllm_tokenizer *tokenizer, int32_t token,
                                                 uint32_t flags, char *buf, size_t capacity,
                                                 size_t *length);

/* The text of a sequence of tokens (the leading dummy-prefix space removed where the
 * SentencePiece vocabulary adds one), with a NUL after it; the buffer rules of
 * vkllm_gguf_get_string. VKLLM_ERR_INVALID_ARGUMENT, writing nothing, when any id is outside
 * the vocabulary. */
VKLLM_API vkllm_status vkllm_tokenizer_decode(const vkllm_tokenizer *tokenizer,
                                              const int32_t *tokens, size_t n_tokens,
                                              uint32_t flags, char *buf, size_t capacity,
                                              size_t *length);

/* 1 in *out when generation should stop at this token (EOS, EOT, <|im_end|> ...), else 0.
 * VKLLM_ERR_INVALID_ARGUMENT for an id outside the vocabulary. */
VKLLM_API vkllm_status vkllm_tokenizer_is_end_of_generation(const vkllm_tokenizer *tokenizer,
                                                            int32_t token, int32_t *out);

/* Streaming detokenization: text handed out never ends inside a UTF-8 character; the bytes
 * of an incomplete one are held until the token that completes it. One per stream; not
 * thread-safe. The tokenizer must outlive it. */
typedef struct vkllm_detokenizer vkllm_detokenizer;

VKLLM_API vkllm_status vkllm_detokenizer_create(const vkllm_tokenizer *tokenizer, uint32_t flags,
                                                vkllm_detokenizer **out);
VKLLM_API void vkllm_detokenizer_destroy(vkllm_detokenizer *detokenizer);

/* Feeds one token; writes the text that became complete (maybe none) and a NUL. When the
 * buffer is too small: VKLLM_ERR_BUFFER_TOO_SMALL, the size needed in *length, and the token
 * is not consumed (call again with a larger buffer). VKLLM_ERR_INVALID_ARGUMENT for an id
 * outside the vocabulary, which leaves the stream as it was. */
VKLLM_API vkllm_status vkllm_detokenizer_push(vkllm_detokenizer *detokenizer, int32_t token,
                                              char *buf, size_t capacity, size_t *length);

/* Ends the stream: writes what is still held (an incomplete character, as its raw bytes) and
 * makes the detokenizer ready for a new stream. Same buffer rules as push. */
VKLLM_API vkllm_status vkllm_detokenizer_flush(vkllm_detokenizer *detokenizer, char *buf,
                                               size_t capacity, size_t *length);

/* ---------------------------------------------------------------------------------------
 * Models: weights on the device
 *
 * A vkllm_model is immutable after load: any number of sessions, on any threads, may use it.
 * It keeps its runtime alive, and its sessions keep it alive: destroy functions release the
 * caller's reference, and the memory goes when the last user is gone.
 * ------------------------------------------------------------------------------------- */

/* Called during vkllm_model_load with the fraction loaded so far (0 to 1). Return 0 to go on,
 * anything else to stop the load (VKLLM_ERR_CANCELLED; nothing is kept). */
typedef int32_t (*vkllm_progress_fn)(void *user_data, float progress);

typedef struct vkllm_model_params {
    size_t struct_size;
    vkllm_progress_fn progress; /* NULL: none */
    void *progress_user_data;
} vkllm_model_params;

VKLLM_API void vkllm_model_params_init(vkllm_model_params *params);

/* Loads a GGUF model onto the runtime's device (architectures llama, qwen2, qwen3, gpt2, qwen2moe,
 * gpt-oss, gemma2, gemma3, olmo2, phi3, qwen3moe, smollm3, granite; weights F32, F16, BF16, Q8_0,
 * Q4_0, Q4_1, Q5_0, Q5_1, Q4_K, Q5_K, Q6_K and MXFP4, used as stored, so device memory is about the
 * file's tensor data). On unified-memory devices the weights are copied once, from the file map
 * into device memory. Errors: VKLLM_ERR_IO, VKLLM_ERR_FORMAT (malformed file, missing tensor, wrong
 * shape), VKLLM_ERR_UNSUPPORTED (naming the architecture or the tensor and its type),
 * VKLLM_ERR_OUT_OF_DEVICE_MEMORY, VKLLM_ERR_CANCELLED. `params` may be NULL. A tokenizer with more
 * tokens than the embedding has rows is VKLLM_ERR_FORMAT (a token without an embedding cannot be
 * run); fewer is accepted, as in vocabularies padded to a round size: the extra rows' ids are never
 * generated (see vkllm_model_info.n_vocab). */
VKLLM_API vkllm_status vkllm_model_load(vkllm_runtime *runtime, const char *path,
                                        const vkllm_model_params *params, vkllm_model **out);

/* Releases the caller's reference. NULL: no-op. */
VKLLM_API void vkllm_model_destroy(vkllm_model *model);

/* The model's tokenizer, owned by the model (do not destroy it); NULL for a NULL model. */
VKLLM_API const vkllm_tokenizer *vkllm_model_get_tokenizer(const vkllm_model *model);

/* How the rows of an input become its embedding (see "Session: embeddings"): llama.cpp's enum
 * llama_pooling_type, as GGUF's <arch>.pooling_type stores it. */
typedef enum vkllm_pooling {
    VKLLM_POOLING_MODEL = -1, /* the model's own (vkllm_model_info.pooling; NONE where the
                                 file states none) */
    VKLLM_POOLING_NONE = 0,   /* one vector per token (vkllm_session_embed_tokens only) */
    VKLLM_POOLING_MEAN = 1,   /* the mean of every token's vector, [CLS] and [SEP] included */
    VKLLM_POOLING_CLS = 2,    /* the first token's */
    VKLLM_POOLING_LAST = 3,   /* the last token's (decoder embedding models: Qwen3-Embedding) */
    VKLLM_POOLING_FORCE32 = 0x7FFFFFFF
} vkllm_pooling;

typedef struct vkllm_model_info {
    size_t struct_size;
    char architecture[64];
    uint32_t n_vocab; /* rows of the embedding, and logits per row that sessions write; at least
                         the tokenizer's n_vocab. Rows past the tokenizer's tokens (padding) have
                         logits but no text: the library never chooses them (greedy on the
                         device, sampling, chained decoding), though sessions accept them as
                         input. */
    uint32_t n_embd;
    uint32_t n_layers;
    uint32_t n_heads;
    uint32_t n_kv_heads;
    uint32_t head_dim;
    uint32_t n_ctx_train;
    uint64_t device_bytes; /* device memory of the weights: their bytes as stored in the file
                              (quantized blocks stay quantized), norms and biases widened to
                              F32 */
    uint64_t file_bytes;
    uint64_t tensor_bytes; /* bytes of tensor data in the file */
    /* Appended in 0.3: the model's own pooling for embeddings, <arch>.pooling_type;
     * VKLLM_POOLING_NONE where the file states none. */
    vkllm_pooling pooling;
} vkllm_model_info;

VKLLM_API vkllm_status vkllm_model_get_info(const vkllm_model *model, vkllm_model_info *out);

/* The model's chat template (GGUF tokenizer.chat_template), "" when it has none. Valid while
 * the model lives; never NULL for a valid model. */
VKLLM_API const char *vkllm_model_get_chat_template(const vkllm_model *model);

/* The loaded model's GGUF metadata, owned by the model (do not close it; valid while the model
 * lives): every vkllm_gguf_* metadata function reads it (key_at, get_int, get_float,
 * get_string, get_text, summary) with no second open of the file. It holds the keys only, copied
 * at load: it has no tensors (vkllm_gguf_get_tensor gives VKLLM_ERR_NOT_FOUND, the summary counts
 * none). NULL for a NULL model. */
VKLLM_API const vkllm_gguf *vkllm_model_get_gguf(const vkllm_model *model);

/* ---------------------------------------------------------------------------------------
 * Sessions: KV cache and recorded command buffers
 *
 * A session holds one or more sequences (independent conversations), each with a KV cache
 * ring on the device. The decode step and the prefill chunks are command buffers recorded once
 * and replayed. A session is used by one thread at a time (vkllm_session_cancel excepted).
 * ------------------------------------------------------------------------------------- */

typedef struct vkllm_session vkllm_session;

/* The type of a session's KV cache (vkllm_session_params.kv_type, vkllm_session_info.kv_type). The
 * values are stable. */
typedef enum vkllm_kv_type {
    VKLLM_KV_F16 = 0, /* the default */
    VKLLM_KV_F32 = 1, /* twice F16's memory */
    /* 8-bit: blocks of 32 values with an F16 scale, about half of F16's memory; needs a head
     * size that is a multiple of 32 (VKLLM_ERR_UNSUPPORTED otherwise). */
    VKLLM_KV_Q8_0 = 2,
    VKLLM_KV_TYPE_FORCE32 = 0x7FFFFFFF
} vkllm_kv_type;

/* Session flags (vkllm_session_params.flags). 0x1 and 0x4 were the KV cache type before 0.3
 * (now vkllm_session_params.kv_type): they are refused with VKLLM_ERR_INVALID_ARGUMENT. */
#define VKLLM_SESSION_STREAMING                                       \
    0x2u /* when a sequence is full, keep its first n_sink tokens and \
            the most recent ones instead of VKLLM_ERR_CONTEXT_FULL */
typedef struct vkllm_session_params {
    size_t struct_size;
    uint32_t n_ctx;        /* KV slots per sequence; 0 (default): the model's training context,
                              at most 4096 (vkllm_session_get_info tells what a session got) */
    uint32_t n_seq;        /* sequences; default 1 */
    uint32_t n_batch;      /* prefill chunk; default 64 */
    uint32_t flags;        /* VKLLM_SESSION_* (more under "Experimental", VKLLM_EXPERIMENTAL) */
    uint32_t n_sink;       /* streaming: tokens kept at the start; default 4 */
    vkllm_kv_type kv_type; /* default VKLLM_KV_F16 */
} vkllm_session_params;

VKLLM_API void vkllm_session_params_init(vkllm_session_params *params);
VKLLM_API vkllm_status vkllm_session_create(vkllm_model *model, const vkllm_session_params *params,
                                            vkllm_session **out);
VKLLM_API void vkllm_session_destroy(vkllm_session *session);

/* What a session is, as created (defaults resolved). Set struct_size before the call. */
typedef struct vkllm_session_info {
    size_t struct_size;
    uint32_t n_ctx; /* KV slots per sequence */
    uint32_t n_seq;
    uint32_t n_batch; /* prefill chunk, after clamping to the context */
    uint32_t n_sink;  /* 0 unless streaming */
    uint32_t flags;   /* the VKLLM_SESSION_* flags it was created with */
    vkllm_kv_type kv_type;
    uint64_t kv_cache_bytes; /* K and V of every layer and sequence */
    uint64_t device_bytes;   /* all the session's device memory: KV caches, activations, step
                                buffers (the model's weights not included) */
} vkllm_session_info;

VKLLM_API vkllm_status vkllm_session_get_info(const vkllm_session *session,
                                              vkllm_session_info *out);

/* Tokens in the sequence's cache so far (the next token's position). */
VKLLM_API vkllm_status vkllm_session_get_position(const vkllm_session *session, uint32_t seq,
                                                  uint32_t *n_past);

typedef struct vkllm_session_stats {
    size_t struct_size;
    uint64_t command_buffers_recorded; /* bounded by the step shapes, never by tokens */
    uint64_t submits;
    uint64_t tokens_prefilled;
    uint64_t tokens_decoded;
    double prefill_ms;
    double decode_ms;
    uint64_t kv_cache_bytes;
} vkllm_session_stats;

VKLLM_API vkllm_status vkllm_session_get_stats(const vkllm_session *session,
                                               vkllm_session_stats *out);

/* The token ids in sequence `seq`'s cache, in position order (what eval, decode and generate
 * put there; a restored state brings its own). Writes up to `capacity` ids to `tokens` (may be
 * NULL when capacity is 0) and their number to *count; VKLLM_ERR_BUFFER_TOO_SMALL, writing
 * nothing, when capacity is smaller. */
VKLLM_API vkllm_status vkllm_session_get_tokens(const vkllm_session *session, uint32_t seq,
                                                int32_t *tokens, size_t capacity, size_t *count);

/* Empties sequence `seq`, or every sequence when seq is -1. */
VKLLM_API vkllm_status vkllm_session_reset(vkllm_session *session, int32_t seq);

/* Keeps the first `n_keep` positions of a sequence and forgets the rest (to edit a chat turn
 * or retry). VKLLM_ERR_INVALID_ARGUMENT, changing nothing, when a ring has overwritten keys the
 * kept positions still see: once a streaming session's ring has wrapped only the last
 * position (or everything, n_keep 0) can go, and once GPT-OSS's sliding-window rings have
 * wrapped at most n_batch positions can. */
VKLLM_API vkllm_status vkllm_session_truncate(vkllm_session *session, uint32_t seq,
                                              uint32_t n_keep);

/* Low-level: appends `n` tokens to sequence `seq` (prefill, in chunks) and writes the logits
 * after the last one (vkllm_model_info.n_vocab floats) when `logits` is not NULL.
 * VKLLM_ERR_CONTEXT_FULL, before anything runs, when they do not fit; VKLLM_ERR_INVALID_ARGUMENT,
 * before anything runs, for an id outside 0 to vkllm_model_info.n_vocab - 1 (the embedding's
 * rows). */
VKLLM_API vkllm_status vkllm_session_eval(vkllm_session *session, uint32_t seq,
                                          const int32_t *tokens, size_t n, float *logits);

/* Low-level: one token for each of `n` distinct sequences, run together in one step (batched
 * decode). Writes n x vkllm_model_info.n_vocab logits when `logits` is not NULL. Ids as in
 * vkllm_session_eval. A caller choosing from the logits of a padded vocabulary should look only
 * at the tokenizer's n_vocab first entries of each row, as the library does. */
VKLLM_API vkllm_status vkllm_session_decode(vkllm_session *session, const uint32_t *seqs,
                                            const int32_t *tokens, size_t n, float *logits);

/* The most steps vkllm_session_decode_greedy chains in one submission. */
#define VKLLM_MAX_CHAINED_STEPS 64

/* Low-level, greedy: `steps` decode steps for each of `n` distinct sequences, chained in one
 * submission with the choice made on the device. The first step decodes `tokens`; each later
 * step decodes the token the step before chose (its logits' argmax among the tokenizer's ids,
 * never a padded embedding row past them; lowest id on ties), with no round trip to the host in
 * between. out[s * n + i] (steps x n ids) is sequence seqs[i]'s argmax after step s. All
 * `steps` tokens of every sequence are in the cache afterwards (vkllm_session_truncate rewinds a
 * chain that went past an end token). On a GPU this is how decoding stops waiting on the host:
 * one submit per `steps` tokens. Steps are 1 to VKLLM_MAX_CHAINED_STEPS;
 * VKLLM_ERR_CONTEXT_FULL, before anything runs, when they do not fit. The same tokens as `steps`
 * calls of vkllm_session_decode taking the argmax of the tokenizer's ids each time. */
VKLLM_API vkllm_status vkllm_session_decode_greedy(vkllm_session *session, const uint32_t *seqs,
                                                   const int32_t *tokens, size_t n, uint32_t steps,
                                                   int32_t *out);

/* ---------------------------------------------------------------------------------------
 * Session: logits of every position, and log-probabilities
 *
 * Log-probabilities are those of the model's own distribution: the log-softmax of the raw
 * logits over the tokenizer's ids (vkllm_tokenizer_info.n_vocab), before temperature,
 * penalties or any filtering, as OpenAI's `logprobs` and llama.cpp's server (with its default
 * post_sampling_probs false) report them. The rows a padded embedding has past the tokenizer's
 * ids are no token: they take no part in the normalisation, their log-probability is -INFINITY
 * and they are never among the most likely ids. NaN logits likewise take no part. Most likely
 * ids come largest first, the lowest id first on ties.
 * ------------------------------------------------------------------------------------- */

/* What vkllm_session_eval_logits writes for each row. */
typedef enum vkllm_logits_kind {
    VKLLM_LOGITS_RAW = 0,         /* the logits, as vkllm_session_eval writes them */
    VKLLM_LOGITS_LOG_SOFTMAX = 1, /* log-probabilities (above) */
    VKLLM_LOGITS_KIND_FORCE32 = 0x7FFFFFFF
} vkllm_logits_kind;

typedef struct vkllm_eval_params {
    size_t struct_size;
    vkllm_logits_kind kind; /* default VKLLM_LOGITS_RAW */
    /* Which positions to write, as indices into the call's tokens (0 to n - 1), in any order,
     * repeats allowed: row i of the output is the one after tokens[positions[i]]. NULL
     * (default): every position, row i after tokens[i]. */
    const uint32_t *positions;
    size_t n_positions; /* entries of positions; 0 when it is NULL */
} vkllm_eval_params;

VKLLM_API void vkllm_eval_params_init(vkllm_eval_params *params);

/* Appends `n` tokens to sequence `seq`, as vkllm_session_eval does, and writes the logits (or
 * log-probabilities) after each chosen position: rows x vkllm_model_info.n_vocab floats to
 * `out`, rows being n_positions, or n when positions is NULL. The output head runs on the
 * device over all rows of a prefill chunk at once; a chunk whose rows would exceed the device's
 * largest storage binding is split. `params` may be NULL (every position, raw logits).
 * Errors, each before anything runs and changing nothing: VKLLM_ERR_INVALID_ARGUMENT for a
 * NULL session, tokens (with n > 0) or out (with rows > 0), a bad struct_size, an unknown
 * kind, positions NULL with n_positions > 0, a position >= n, or a token id as in
 * vkllm_session_eval; VKLLM_ERR_CONTEXT_FULL when the tokens do not fit. */
VKLLM_API vkllm_status vkllm_session_eval_logits(vkllm_session *session, uint32_t seq,
                                                 const int32_t *tokens, size_t n,
                                                 const vkllm_eval_params *params, float *out);

/* The most alternatives vkllm_generate_params.top_logprobs asks for. */
#define VKLLM_MAX_TOP_LOGPROBS 20

/* A token and its log-probability. */
typedef struct vkllm_token_logprob {
    int32_t token;
    float logprob;
} vkllm_token_logprob;

/* Receives, just before on_token does, each generated token's log-probability and the
 * `n_top` most likely tokens at its position (vkllm_generate_params.top_logprobs of them, or
 * fewer when the vocabulary has fewer), all valid during the call only. The end-of-generation
 * token that ends generation is not reported, as it is not passed to on_token. Return 0 to go
 * on, anything else to stop (VKLLM_ERR_CANCELLED). */
typedef int32_t (*vkllm_logprobs_fn)(void *user_data, int32_t token, float logprob,
                                     const vkllm_token_logprob *top, size_t n_top);

/* ---------------------------------------------------------------------------------------
 * Session: generation
 * ------------------------------------------------------------------------------------- */

/* Receives each generated token and the text it completes (never half a UTF-8 character; text
 * that could begin a stop string is held back). At the end, held text comes with token -1.
 * `text` is valid during the call only. Return 0 to go on, anything else to stop
 * (VKLLM_ERR_CANCELLED). */
typedef int32_t (*vkllm_token_fn)(void *user_data, int32_t token, const char *text, size_t length);

/* Called between prefill chunks with the prompt tokens done. Return 0 to go on, anything else
 * to stop (VKLLM_ERR_CANCELLED; the chunks done stay in the cache). */
typedef int32_t (*vkllm_prefill_fn)(void *user_data, size_t done, size_t total);

typedef enum vkllm_stop_reason {
    VKLLM_STOP_END_OF_GENERATION = 0, /* an end-of-generation token (not passed to on_token) */
    VKLLM_STOP_MAX_TOKENS = 1,
    VKLLM_STOP_STRING = 2, /* a stop string (not passed to on_token) */
    VKLLM_STOP_CANCELLED = 3,
    VKLLM_STOP_REASON_FORCE32 = 0x7FFFFFFF
} vkllm_stop_reason;

typedef struct vkllm_generate_params {
    size_t struct_size;
    uint32_t seq; /* default 0 */
    /* Default 256. 0: prefill only: the prompt goes into the cache and nothing is sampled or
     * passed to on_token (n_generated 0, VKLLM_STOP_MAX_TOKENS); the sequence's position grows
     * by the prompt's length, so a later vkllm_session_generate continues after it (a system prompt
     * prefilled now, answered later). */
    uint32_t max_tokens;
    const char *const *stop; /* stop strings; NULL when n_stop is 0 */
    size_t n_stop;
    int32_t render_special; /* control tokens as text in the stream; default 0 */
    vkllm_token_fn on_token;
    vkllm_prefill_fn on_prefill;
    void *user_data; /* passed to every callback */
    /* Greedy sampling without a repetition penalty decodes up to this many tokens per
     * submission (vkllm_session_decode_greedy), and on_token then receives them together when
     * the submission completes. Sampled generation chains too where the device's sampler takes
     * the options (no grammar, no logprobs reported, top_k at most 512, or 0 with top_p and
     * typical_p off; repeat_last_n at most 1,024): it runs the same chain and draws the same
     * numbers as the host's, so the tokens are the same as with one step per submission but
     * where a draw falls within float rounding of a boundary between two. A stop inside a chain
     * leaves the cache exactly as one step at a time would: the tokens are the same either way.
     * Default 0: the library's choice, 8 on GPUs and 1 on CPU devices (lavapipe, where a submission
     * costs little next to a step and tokens then stream one by one); 1: one step per submission.
     * Streaming sessions chain only until their ring wraps. */
    uint32_t steps_per_submit;
    /* Nonzero: end-of-generation tokens do not end generation; each is passed to on_token
     * (its text empty unless render_special) and decoded like any other token, so only
     * max_tokens, a stop string or the callback ends it. For benchmarks and for comparing
     * continuations with runners that go on past an end token. (llama.cpp's --ignore-eos
     * instead never samples them.) Default 0. It fills what was the struct's tail padding, so
     * sizeof is unchanged: callers that started from vkllm_generate_params_init, as required,
     * have 0 here. */
    int32_t ignore_eog;
    /* Log-probabilities of the generated tokens (see "Session: logits of every position,
     * and log-probabilities"), through on_logprobs with user_data; NULL (default): none. They are
     * computed on the device, where chained greedy steps (steps_per_submit) run too, with no
     * extra round trip to the host. */
    vkllm_logprobs_fn on_logprobs;
    /* Alternatives on_logprobs receives per token: 0 (default) to VKLLM_MAX_TOP_LOGPROBS;
     * VKLLM_ERR_INVALID_ARGUMENT outside that range. */
    int32_t top_logprobs;
} vkllm_generate_params;

VKLLM_API void vkllm_generate_params_init(vkllm_generate_params *params);

/* Where a grammar stands after the text generated so far (see "Grammars"). */
typedef enum vkllm_grammar_progress {
    VKLLM_GRAMMAR_INCOMPLETE = 0, /* more text is needed: end tokens are not allowed */
    VKLLM_GRAMMAR_COMPLETE = 1,   /* the text may end here, or go on */
    VKLLM_GRAMMAR_FINISHED = 2,   /* the text is complete and nothing can follow */
    VKLLM_GRAMMAR_PROGRESS_FORCE32 = 0x7FFFFFFF
} vkllm_grammar_progress;

typedef struct vkllm_generate_result {
    size_t struct_size;
    size_t n_prompt; /* prompt tokens prefilled */
    size_t n_generated;
    vkllm_stop_reason stop_reason;
    double prefill_ms;
    double decode_ms;
    uint64_t seed; /* the sampling seed used (a random one for VKLLM_SEED_RANDOM) */
    /* Appended in 0.2. Whether the text on_token received is a whole string of the
     * sampling grammar: VKLLM_GRAMMAR_INCOMPLETE means the answer was cut before the grammar
     * was done (by max_tokens, a full context, a stop string or a cancel) and an app must not
     * parse it as the grammar's language (JSON, say); COMPLETE or FINISHED: the grammar
     * accepts the text as it is. Without a grammar, COMPLETE. The text a stop string leaves
     * is shorter than what the grammar read, so it is parsed again from the grammar's start.
     * A field, not another stop reason: why the text ended and whether it is whole are
     * separate facts, and callers that switch on stop_reason keep working. */
    vkllm_grammar_progress grammar_progress;
} vkllm_generate_result;

/* Described under "Samplers", which follow the session's functions. */
struct vkllm_sampling_params;
struct vkllm_sampler;

/* Appends `prompt` to a sequence and generates from it, streaming through on_token. The
 * generated tokens (but the last, which ended it) are in the cache afterwards, so a
 * conversation continues with the next prompt's tokens only. `sampling`, `params` and `result`
 * may be NULL. On VKLLM_ERR_CANCELLED the result is still filled and the session usable.
 * Prompt ids as in vkllm_session_eval (VKLLM_ERR_INVALID_ARGUMENT, before anything runs, for one
 * outside the embedding); every generated token is one of the tokenizer's. */
VKLLM_API vkllm_status vkllm_session_generate(vkllm_session *session, const int32_t *prompt,
                                              size_t n_prompt,
                                              const struct vkllm_sampling_params *sampling,
                                              const vkllm_generate_params *params,
                                              vkllm_generate_result *result);

/* One sequence of vkllm_session_generate_batch: its input, and what became of it. */
typedef struct vkllm_batch_sequence {
    size_t struct_size; /* sizeof(vkllm_batch_sequence); the first's is the array's stride */
    uint32_t seq;       /* the session's sequence; distinct within a batch */
    const int32_t *prompt;
    size_t n_prompt;               /* at least 1 */
    struct vkllm_sampler *sampler; /* NULL: greedy. Each prompt token is accepted into it (as
                                      vkllm_sampler_accept_prompt does), then each generated
                                      token: a sampler per sequence, not shared. One with a
                                      grammar ends its sequence when the grammar is FINISHED */
    int32_t *tokens;               /* out: the generated tokens (an end token that stops it not
                                      included); room for max_tokens */
    size_t n_generated;            /* out */
    vkllm_stop_reason stop_reason; /* out: END_OF_GENERATION or MAX_TOKENS */
} vkllm_batch_sequence;

/* Generates for several sequences in one call: each prompt is prefilled (one after another),
 * then every sequence still going gets one token per step, all decoded together in one
 * vkllm_session_decode step, each row through its sequence's sampler. A sequence stops at an
 * end-of-generation token (unless params->ignore_eog) or at params->max_tokens; the others go
 * on. Of `params` only max_tokens and ignore_eog are read (callbacks, stop strings and seq are
 * not: NULL gives the defaults). Each sequence's tokens are those vkllm_session_generate would give
 * it alone with a sampler of the same seed, as far as the batched step computes the logits a step
 * of one sequence does: a step of several rows may round differently from a step of one (on
 * lavapipe the tiny test models' rows are bit-identical, SmolLM2's differ by up to 7e-4), which
 * changes a token only where a draw or an argmax falls that close to a boundary. Runs are
 * reproducible per seed on one device. The generated tokens (but the last) are in the cache
 * afterwards, as with vkllm_session_generate. Errors before anything runs:
 * VKLLM_ERR_INVALID_ARGUMENT (a repeated or missing sequence, an empty prompt, an id outside the
 * embedding, a NULL tokens array, a sampler shared by two sequences), VKLLM_ERR_CONTEXT_FULL (a
 * sequence without room for its prompt and max_tokens - 1 generated tokens; streaming sessions
 * excepted). VKLLM_ERR_CANCELLED (vkllm_session_cancel) with every sequence's n_generated and
 * tokens filled so far and its stop_reason VKLLM_STOP_CANCELLED. */
VKLLM_API vkllm_status vkllm_session_generate_batch(vkllm_session *session,
                                                    vkllm_batch_sequence *seqs, size_t n_seqs,
                                                    const vkllm_generate_params *params);

/* Stops the call that runs the model on this session (vkllm_session_eval, vkllm_session_decode,
 * vkllm_session_decode_greedy, vkllm_session_generate, vkllm_session_generate_batch): a prefill at
 * the end of its current chunk, generation before its next decode step. That call returns
 * VKLLM_ERR_CANCELLED (vkllm_session_generate with its result filled, stop_reason
 * VKLLM_STOP_CANCELLED) and the session stays usable: the chunks and tokens done stay in the cache
 * (vkllm_session_get_position says how far it got; vkllm_session_truncate undoes it). A single
 * decode step is not interrupted. Any thread may call it at any time (but not racing with
 * vkllm_session_destroy), also from a callback; it only sets a flag (an atomic store). Each of
 * those calls clears the flag as it starts, so a cancel made while none runs is dropped, and so is
 * one that races with a call's start: it stops the call that is running when it is made, never a
 * later one. VKLLM_ERR_INVALID_ARGUMENT only for a NULL session. */
VKLLM_API vkllm_status vkllm_session_cancel(vkllm_session *session);

/* ---------------------------------------------------------------------------------------
 * Session: embeddings
 *
 * An embedding is a model's final hidden states (after its last norm, before any output
 * head), one vector of vkllm_model_info.n_embd floats per token, or pooled into one vector per
 * input as llama.cpp's pooling types define them. Encoders (bert: all-MiniLM-L6-v2) attend both
 * ways over each whole input; decoders (Qwen3-Embedding, with last-token pooling) causally. A
 * call runs its inputs on the session's sequences, which it empties first and leaves empty, so
 * a session used for embeddings needs no more context than its longest input. The inputs of a
 * call are batched on the device; each input's vectors are those it gets alone.
 * ------------------------------------------------------------------------------------- */

/* vkllm_embed_params flags. Each vector scaled to unit L2 norm (a zero vector stays zero): */
#define VKLLM_EMBED_NORMALIZE (1u << 0)
/* An input longer than max_tokens is cut: the text's end is dropped and the model's end token
 * (BERT's [SEP]) kept, as sentence-transformers does. Without it such an input is
 * VKLLM_ERR_CONTEXT_FULL, as in llama.cpp. */
#define VKLLM_EMBED_TRUNCATE (1u << 1)

typedef struct vkllm_embed_params {
    size_t struct_size;
    vkllm_pooling pooling; /* default VKLLM_POOLING_MODEL */
    uint32_t flags;        /* VKLLM_EMBED_*; default 0 */
    /* The most tokens of one input, special tokens included; 0 (default): the session's context
     * and the model's positions (vkllm_model_info.n_ctx_train), whichever is smaller. Larger
     * than those it limits nothing more. all-MiniLM-L6-v2's sentence-transformers setting is
     * 256. */
    uint32_t max_tokens;
} vkllm_embed_params;

VKLLM_API void vkllm_embed_params_init(vkllm_embed_params *params);

/* Embeds `n` texts (UTF-8, NUL-terminated), each tokenized with the model's own special tokens
 * (BERT's [CLS] ... [SEP]; a decoder's BOS and EOS where its vocabulary asks for them), and
 * writes n x vkllm_model_info.n_embd floats to `out`, input by input. `out_len` is the number
 * of floats `out` holds. An empty text is valid where the model's special tokens remain (BERT
 * embeds [CLS][SEP]); where nothing remains it is refused. Special-token text in a text
 * ("[SEP]") is plain text. `params` may be NULL (the model's pooling, no flags).
 * Errors, each before anything runs and writing nothing: VKLLM_ERR_INVALID_ARGUMENT for a NULL
 * session, texts, texts[i] or out, n == 0, a bad struct_size, an unknown pooling or flag,
 * VKLLM_POOLING_NONE (asked for or the model's own: per-token vectors come from
 * vkllm_session_embed_tokens), a text that tokenizes to nothing, or out_len below n x n_embd;
 * VKLLM_ERR_CONTEXT_FULL for a text longer than max_tokens (or the session's context, or the
 * model's positions) without VKLLM_EMBED_TRUNCATE. Any of these leave the session as it was. */
VKLLM_API vkllm_status vkllm_session_embed(vkllm_session *session, const char *const *texts,
                                           size_t n, const vkllm_embed_params *params, float *out,
                                           size_t out_len);

/* The same from token ids: input i is inputs[i], n_tokens[i] ids (used as given: add the
 * model's special tokens yourself, vkllm_tokenizer_encode with VKLLM_TOKENIZE_ADD_SPECIAL).
 * With VKLLM_POOLING_NONE `out` receives sum(n_tokens) x n_embd floats, token by token, input
 * by input; else n x n_embd. VKLLM_EMBED_TRUNCATE keeps an input's first max_tokens ids, the
 * last of them replaced by the input's own last id where that is the model's end token (BERT's
 * [SEP], EOS). Errors as vkllm_session_embed's, and VKLLM_ERR_INVALID_ARGUMENT for a NULL
 * inputs, n_tokens or inputs[i], an empty input or an id outside the embedding. */
VKLLM_API vkllm_status vkllm_session_embed_tokens(vkllm_session *session,
                                                  const int32_t *const *inputs,
                                                  const size_t *n_tokens, size_t n,
                                                  const vkllm_embed_params *params, float *out,
                                                  size_t out_len);

/* ---------------------------------------------------------------------------------------
 * Session: state: save, restore and fork a sequence
 *
 * A sequence's state is its KV cache (in the session's cache type), its position, the token
 * ids in it and what its rings need (the most recent positions of sliding-window and streaming
 * rings, the streaming sinks). It is saved to a buffer or a file and restored into the same or
 * another sequence of any session of the same model; restoring and continuing gives logits
 * bit-identical to never having saved. The bytes are versioned and carry a fingerprint of the
 * model file (docs/STATE.md, "Session state and fork"), the session settings they depend on and a
 * checksum. Loading checks all of it before it changes anything: VKLLM_ERR_FORMAT for bytes
 * that are not a whole, intact state of this version (truncated, corrupted, another kind of
 * file); VKLLM_ERR_INVALID_ARGUMENT for a state of another model file or KV cache type, more
 * positions than a non-streaming target's n_ctx, or rings that kept fewer positions than the
 * target's hold (a ring that has wrapped restores into a session whose ring is no larger: same
 * n_ctx and streaming settings, and for sliding-window layers n_batch no larger).
 * ------------------------------------------------------------------------------------- */

/* The bytes vkllm_session_state_save would write for sequence `seq` now. */
VKLLM_API vkllm_status vkllm_session_get_state_size(const vkllm_session *session, uint32_t seq,
                                                    size_t *size);

/* Writes sequence `seq`'s state to buf. *length gets its size also when the buffer is too
 * small (VKLLM_ERR_BUFFER_TOO_SMALL, nothing written); buf may be NULL when capacity is 0. */
VKLLM_API vkllm_status vkllm_session_state_save(vkllm_session *session, uint32_t seq, void *buf,
                                                size_t capacity, size_t *length);

/* Replaces sequence `seq` with a saved state (the errors above). Only the positions the
 * sequence's rings hold are uploaded. */
VKLLM_API vkllm_status vkllm_session_state_load(vkllm_session *session, uint32_t seq,
                                                const void *data, size_t size);

/* The same through a file at `path` (UTF-8): save replaces it, VKLLM_ERR_IO when it cannot be
 * written (no partial file is left) or read. */
VKLLM_API vkllm_status vkllm_session_state_save_file(vkllm_session *session, uint32_t seq,
                                                     const char *path);
VKLLM_API vkllm_status vkllm_session_state_load_file(vkllm_session *session, uint32_t seq,
                                                     const char *path);

/* Replaces sequence `dst_seq` with the first `n_keep` positions of sequence `src_seq` (up to
 * its position), copied on the device without a round trip through the host: n samples of one
 * prompt prefill it once, then fork it n - 1 times. VKLLM_ERR_INVALID_ARGUMENT, changing
 * nothing, for a sequence that does not exist, src_seq equal to dst_seq, or n_keep positions
 * that src_seq's rings no longer hold (after a streaming or sliding-window ring wrapped, only
 * the most recent positions are whole: n_keep = its position always works). */
VKLLM_API vkllm_status vkllm_session_fork(vkllm_session *session, uint32_t src_seq,
                                          uint32_t dst_seq, uint32_t n_keep);

/* ---------------------------------------------------------------------------------------
 * Samplers: choosing the next token from a row of logits
 * ------------------------------------------------------------------------------------- */

/* A bias added to one token's logit before sampling; -INFINITY bans the token. */
typedef struct vkllm_logit_bias {
    int32_t token; /* one of the tokenizer's ids */
    float bias;    /* finite, or -INFINITY */
} vkllm_logit_bias;

/* vkllm_sampling_params.seed: a seed read once from the system's random source when the sampler
 * (or vkllm_session_generate's) is created; vkllm_sampler_get_seed and vkllm_generate_result.seed
 * tell which (llama.cpp's -s -1). */
#define VKLLM_SEED_RANDOM UINT64_MAX

/* How the next token is chosen, as llama.cpp's default chain does it, in this order:
 *   1. logit bias        logit[t] += bias (a ban removes t from every later stage)
 *   2. penalties         over the last repeat_last_n tokens accepted (prompt and generated):
 *                        the repetition penalty once per distinct token (a positive logit is
 *                        divided by it, a negative one multiplied), then logit -= count *
 *                        frequency_penalty + presence_penalty (OpenAI's semantics)
 *   3. top-k             the top_k highest logits (ties: lower id first)
 *   4. typical           locally typical sampling: by |-log p - entropy|, smallest first, the
 *                        fewest tokens whose probability exceeds typical_p
 *   5. top-p             the fewest most likely tokens whose probability reaches top_p
 *   6. min-p             tokens at least min_p times as likely as the most likely one
 *   7. temperature       logits / temperature, then a draw from their softmax
 * Stages 4 to 6 compute probabilities at temperature 1, as llama.cpp does. temperature <= 0 is
 * greedy: the highest logit after stages 1 and 2 (lowest id on ties); greedy with no bias and no
 * penalty takes the argmax computed on the device without reading the logits back. Only the
 * tokenizer's ids are candidates, never the rows a padded embedding has past them.
 * Out-of-range values are VKLLM_ERR_INVALID_ARGUMENT naming the field: NaN anywhere, top_k below
 * -1, min_p above 1, repeat_penalty <= 0, repeat_last_n below -1, a bias of +INFINITY or a biased
 * id outside the tokenizer's. */
typedef struct vkllm_sampling_params {
    size_t struct_size;
    float temperature;     /* default 0.8; <= 0: greedy */
    int32_t top_k;         /* default 40; 0 or -1: off */
    float top_p;           /* default 0.95; >= 1: off */
    float min_p;           /* default 0.05; <= 0: off */
    float repeat_penalty;  /* default 1 (off) */
    int32_t repeat_last_n; /* default 64: the tokens the penalties look at; 0: none (penalties
                              off); -1: every token accepted */
    uint64_t seed;         /* default 0; the same seed gives the same tokens. VKLLM_SEED_RANDOM:
                              a random one */
    /* Appended in 0.1: callers built before them get the defaults. */
    float presence_penalty;             /* default 0 (off) */
    float frequency_penalty;            /* default 0 (off) */
    float typical_p;                    /* default 1; >= 1: off */
    const vkllm_logit_bias *logit_bias; /* NULL when n_logit_bias is 0; copied at creation */
    size_t n_logit_bias;
    /* Appended in 0.2. NULL (default): none. A compiled grammar (see "Grammars") the
     * generated text must follow; the sampler keeps its own reference and parse state, so the
     * handle may be destroyed once the sampler (or vkllm_session_generate) has started, and one
     * grammar serves any number of samplers. */
    const struct vkllm_grammar *grammar;
} vkllm_sampling_params;

VKLLM_API void vkllm_sampling_params_init(vkllm_sampling_params *params);

/* A sampler: the chain of vkllm_sampling_params with its random generator and the history the
 * penalties read. It applies to any logits a session wrote: vkllm_session_eval's, or each row
 * of vkllm_session_decode's. One thread at a time; one sampler per sequence. */
typedef struct vkllm_sampler vkllm_sampler;

/* Creates a sampler. `tokenizer` (e.g. vkllm_model_get_tokenizer's) bounds the candidates to its
 * ids, so a padded vocabulary's extra rows are never chosen; NULL: every entry of a row is a
 * candidate. `params` NULL: vkllm_sampling_params_init's defaults. The logit-bias array is
 * copied. VKLLM_ERR_INVALID_ARGUMENT for out-of-range params (see vkllm_sampling_params). */
VKLLM_API vkllm_status vkllm_sampler_create(const vkllm_tokenizer *tokenizer,
                                            const vkllm_sampling_params *params,
                                            vkllm_sampler **out);

/* NULL: no-op. */
VKLLM_API void vkllm_sampler_destroy(vkllm_sampler *sampler);

/* Chooses a token from one row of `n_vocab` logits (vkllm_model_info.n_vocab; the row is not
 * changed). It does not record the choice: call vkllm_sampler_accept with the token the
 * sequence keeps. VKLLM_ERR_INVALID_ARGUMENT when the row is shorter than the tokenizer's
 * vocabulary or when the logit bias bans every candidate; with a grammar, also when the grammar
 * allows no token (the vocabulary cannot spell any continuation, or it is FINISHED and the
 * tokenizer has no end-of-generation token). */
VKLLM_API vkllm_status vkllm_sampler_sample(vkllm_sampler *sampler, const float *logits,
                                            size_t n_vocab, int32_t *token);

/* Adds a token of the sequence to the history the penalties read (ids outside the row are
 * ignored by them). Without a grammar any id is accepted, prompt tokens too (as
 * vkllm_session_generate does). With a grammar the token also advances it, so give prompt tokens to
 * vkllm_sampler_accept_prompt and only generated ones here: a token the grammar does not allow
 * is VKLLM_ERR_INVALID_ARGUMENT and changes nothing. */
VKLLM_API vkllm_status vkllm_sampler_accept(vkllm_sampler *sampler, int32_t token);

/* Forgets the history, restarts the random generator from the seed and the grammar from its
 * start: the sampler then draws as it did when created. */
VKLLM_API vkllm_status vkllm_sampler_reset(vkllm_sampler *sampler);

/* The seed the sampler draws from (the one read from the system for VKLLM_SEED_RANDOM). */
VKLLM_API vkllm_status vkllm_sampler_get_seed(const vkllm_sampler *sampler, uint64_t *seed);

/* A sampler's grammar state after the tokens accepted so far: FINISHED means the app's loop
 * should stop (vkllm_sampler_sample would then choose an end-of-generation token). A sampler
 * without a grammar reports COMPLETE. */
VKLLM_API vkllm_status vkllm_sampler_get_grammar_progress(const vkllm_sampler *sampler,
                                                          vkllm_grammar_progress *progress);

/* Tokens of the prompt, for the penalties' history only: they never advance the grammar, which
 * constrains generated text. (vkllm_sampler_accept advances both: it is for tokens the
 * sampler's sequence generates, and there a token the grammar does not allow is
 * VKLLM_ERR_INVALID_ARGUMENT and changes nothing.) */
VKLLM_API vkllm_status vkllm_sampler_accept_prompt(vkllm_sampler *sampler, const int32_t *tokens,
                                                   size_t n);

/* For apps that run their own sampling chain: sets to -INFINITY every logit of the row (n_vocab
 * entries, vkllm_model_info.n_vocab) whose token the sampler's grammar does not allow next (end
 * tokens unless the grammar is complete; every id past the tokenizer's). A sampler without a
 * grammar changes nothing. */
VKLLM_API vkllm_status vkllm_sampler_apply_grammar(vkllm_sampler *sampler, float *logits,
                                                   size_t n_vocab);

/* ---------------------------------------------------------------------------------------
 * Grammars: output an app can parse
 *
 * A grammar constrains sampling so that the generated text is a string of a formal language:
 * a JSON object of a given shape, one of a list of labels, a date. Grammars are written in
 * GBNF, llama.cpp's format (its grammars/README.md; docs/GRAMMARS.md here):
 *
 *     root   ::= answer " because " reason
 *     answer ::= "yes" | "no"
 *     reason ::= [a-z ,]{1,80} "."      # rules, literals, classes, * + ? {m,n}, ( | )
 *
 * or converted from a JSON Schema (docs/JSON_SCHEMA.md lists what is supported; any other
 * keyword is refused, never ignored). A grammar is compiled once for a tokenizer's vocabulary
 * and is then read-only: any number of samplers, on any threads, share it.
 *
 * A sampler given a grammar (vkllm_sampling_params.grammar) keeps a parse state. At each step
 * it runs its chain as usual and checks the token it chose against the grammar: the common
 * case costs microseconds. Only when that token is not allowed does it compute the set of
 * tokens that are (a walk of the vocabulary's token trie against the parse state), remove the
 * others and run the chain again. End-of-generation tokens are allowed only where the grammar
 * is complete. Tokens may span several grammar elements and end inside a UTF-8 character. The
 * log-probabilities vkllm_session_generate reports stay the model's own, before the constraint.
 *
 * vkllm_session_generate with a grammar starts from the grammar's start for each call, reads the
 * logits back every step (the chained greedy path of steps_per_submit needs the host between steps,
 * so it steps one token per submission), and stops with VKLLM_STOP_END_OF_GENERATION when the
 * model ends a complete text or when nothing more can follow. When something else stops it
 * first, vkllm_generate_result.grammar_progress is VKLLM_GRAMMAR_INCOMPLETE.
 * ------------------------------------------------------------------------------------- */

typedef struct vkllm_grammar vkllm_grammar;

/* Compiles GBNF text (NUL-terminated) for `tokenizer`'s vocabulary (vkllm_model_get_tokenizer's
 * or vkllm_tokenizer_create's; not needed after the call). `root`: the rule to start from, NULL
 * for "root". The first use of a tokenizer builds its token trie (about 0.1 s for a 150k
 * vocabulary on one CPU core), kept for later grammars. VKLLM_ERR_INVALID_ARGUMENT for NULL
 * arguments and for a bad grammar, with "line L, column C: ..." in vkllm_last_error() (columns
 * count code points): a syntax error, an undefined or twice-defined rule, a left-recursive rule
 * (write it with repetition), a repetition count above 4,096, a grammar past the size limits. */
VKLLM_API vkllm_status vkllm_grammar_create(const vkllm_tokenizer *tokenizer, const char *gbnf,
                                            const char *root, vkllm_grammar **out);

/* Compiles a JSON Schema (JSON text, NUL-terminated) for `tokenizer`'s vocabulary: the text
 * generated is one JSON value the schema accepts. NULL or "" or "{}": any JSON value.
 * VKLLM_ERR_UNSUPPORTED naming the keyword and its JSON pointer for a keyword the converter
 * cannot enforce; VKLLM_ERR_INVALID_ARGUMENT for malformed JSON or a malformed schema. */
VKLLM_API vkllm_status vkllm_grammar_create_from_json_schema(const vkllm_tokenizer *tokenizer,
                                                             const char *schema,
                                                             vkllm_grammar **out);

/* NULL: no-op. Samplers created with the grammar keep working. */
VKLLM_API void vkllm_grammar_destroy(vkllm_grammar *grammar);

/* Where a sampler's grammar stands (vkllm_grammar_progress) is defined with the session's
 * generation, whose result reports it; the sampler's grammar calls are under "Samplers". */

/* ---------------------------------------------------------------------------------------
 * Chat templates
 * ------------------------------------------------------------------------------------- */

typedef struct vkllm_chat_message {
    const char *role;    /* "system", "user", "assistant" (harmony also "developer") */
    const char *content; /* UTF-8, NUL-terminated */
} vkllm_chat_message;

/* Renders a conversation of plain turns as the prompt text a chat model expects: the simple
 * form of vkllm_chat_render below. The template is the built-in one named by `template_name`
 * ("chatml" for Qwen2/2.5/3, "qwen2.5" (with its tools), "llama3", "harmony" for GPT-OSS,
 * "gemma", "llama2", "mistral-v1", "mistral-v3", "mistral-v3-tekken", "mistral-v7-tekken",
 * "phi3", "phi4", "phi4-mini", "deepseek3", "deepseek-r1", "command-r", "granite", "chatglm3",
 * "chatglm4", "llama4", "lfm2", "kimi-k2": each renders as the real template it stands for,
 * docs/CHAT.md), or, when that is NULL,
 * `model_template`: the model's Jinja template (vkllm_model_get_chat_template, or the GGUF key
 * tokenizer.chat_template read with vkllm_gguf_get_string), run as transformers runs it, its
 * default system turn and date stamp included. bos_token and eos_token are left undefined, so
 * tokenize the result with VKLLM_TOKENIZE_ADD_SPECIAL | VKLLM_TOKENIZE_PARSE_SPECIAL and the
 * tokenizer adds BOS once. `add_assistant` != 0 ends the text with the opening of an assistant
 * turn, ready for generation. Buffer rules of vkllm_gguf_get_string.
 * Errors: VKLLM_ERR_NOT_FOUND for an unknown template_name; VKLLM_ERR_UNSUPPORTED when neither
 * is given (a model without a template: name one); VKLLM_ERR_INVALID_ARGUMENT with the
 * template's own message when it raises or does not parse (see vkllm_chat_render). */
VKLLM_API vkllm_status vkllm_chat_apply_template(const char *template_name,
                                                 const char *model_template,
                                                 const vkllm_chat_message *messages,
                                                 size_t n_messages, int32_t add_assistant,
                                                 char *buf, size_t capacity, size_t *length);

/* A tool call: in a conversation's turns (for a template) and in a parsed reply. Its strings are
 * NUL-terminated UTF-8. */
typedef struct vkllm_tool_call {
    const char *id;        /* the call's id ("" or NULL where there is none) */
    const char *name;      /* the function's name */
    const char *arguments; /* JSON text of the arguments (an object) */
} vkllm_tool_call;

/* A turn of a conversation for vkllm_chat_render: the shape Hugging Face chat templates read
 * (OpenAI's messages). Strings are NUL-terminated UTF-8. */
typedef struct vkllm_chat_turn {
    size_t struct_size;                /* sizeof(vkllm_chat_turn); the first turn's is the
                                          array's stride */
    const char *role;                  /* "system", "user", "assistant", "tool", ... */
    const char *content;               /* NULL: none (an assistant turn that only calls) */
    const char *reasoning_content;     /* an assistant's reasoning; NULL: absent */
    const vkllm_tool_call *tool_calls; /* its calls */
    size_t n_tool_calls;
    const char *tool_call_id; /* a "tool" turn: the call it answers; NULL: absent */
    const char *name;         /* a "tool" turn: the tool's name; NULL: absent */
} vkllm_chat_turn;

/* strftime_now reads the clock (local time). */
#define VKLLM_CHAT_NOW_CLOCK INT64_MIN

typedef struct vkllm_chat_params {
    size_t struct_size;
    const struct vkllm_model *model; /* its template, BOS and EOS are the defaults; NULL: none */
    const char *template_source;     /* Jinja text: used when set */
    const char *template_name;       /* else a built-in: "chatml", "gemma", ... (the list at
                                        vkllm_chat_apply_template) */
    /* (neither: the model's own tokenizer.chat_template, else VKLLM_ERR_NOT_FOUND) */
    const char *tools;             /* JSON array of tools (OpenAI function form); NULL: None */
    const char *extra;             /* JSON object of more variables (enable_thinking,
                                      reasoning_effort, ...); NULL: none */
    int32_t add_generation_prompt; /* default 1: end with the opening of the reply */
    const char *bos_token;         /* NULL: the model's BOS text, else undefined */
    const char *eos_token;         /* NULL: the model's EOS text, else undefined */
    int64_t now;                   /* strftime_now's time, seconds since 1970 read as UTC (fix it
                                      for reproducible prompts); default VKLLM_CHAT_NOW_CLOCK */
} vkllm_chat_params;

VKLLM_API void vkllm_chat_params_init(vkllm_chat_params *params);

/* Renders a conversation with a chat template exactly as transformers' apply_chat_template
 * does with jinja2 (trim_blocks, lstrip_blocks, loop controls, tojson as json.dumps,
 * raise_exception, strftime_now, namespace; documents None), in a sandbox: no file or
 * environment access, bounded time and memory. Tool-call arguments are parsed into objects, as
 * templates expect them. Tokenize the result with VKLLM_TOKENIZE_PARSE_SPECIAL (and without
 * ADD_SPECIAL when the template writes BOS itself). Buffer rules of vkllm_gguf_get_string.
 * Errors: VKLLM_ERR_INVALID_ARGUMENT with the template's own message (raise_exception's text,
 * "line L, column C: ..." for a syntax error, Python's message for a failure on the data) or
 * naming malformed JSON; VKLLM_ERR_NOT_FOUND for an unknown template_name or when no template is
 * given and the model has none. */
VKLLM_API vkllm_status vkllm_chat_render(const vkllm_chat_params *params,
                                         const vkllm_chat_turn *turns, size_t n_turns, char *buf,
                                         size_t capacity, size_t *length);

/* The same with the messages as a JSON array of OpenAI-style message objects (what a binding
 * or a server already holds). */
VKLLM_API vkllm_status vkllm_chat_render_json(const vkllm_chat_params *params,
                                              const char *messages_json, char *buf, size_t capacity,
                                              size_t *length);

/* ---------------------------------------------------------------------------------------
 * Chat replies: reasoning, answer and tool calls
 *
 * A chat model's reply mixes its reasoning, its answer and its tool calls, marked as its
 * template taught it: <think>...</think>, <tool_call>{...}</tool_call>, [TOOL_CALLS],
 * harmony's channels. A reply parser takes the reply as it streams (the detokenizer's text,
 * special tokens rendered) and hands back each part as soon as it is certain; a marker split
 * across pushes is held until it is whole or proves not to be one, so pushing a reply at once
 * or a byte at a time gives the same parts. Each stretch of reasoning or answer between markers
 * is trimmed of surrounding whitespace. A tool call that is not valid JSON stays in the answer,
 * markers included, as the model wrote it.
 *
 *     vkllm_reply_parser *p;
 *     vkllm_reply_parser_create(vkllm_reply_format_of_template(model_template),
 *                               vkllm_prompt_opens_reasoning(prompt), &p);
 *     vkllm_reply_part part = {sizeof part};
 *     for each piece of generated text:
 *         vkllm_reply_parser_push(p, piece, strlen(piece), &part);
 *         show part.reasoning apart, part.content as the answer, run part.tool_calls
 *     vkllm_reply_parser_finish(p, &part);   (and show that part too)
 * ------------------------------------------------------------------------------------- */

typedef enum vkllm_reply_format {
    VKLLM_REPLY_PLAIN = 0,   /* all answer, passed through as generated */
    VKLLM_REPLY_HERMES = 1,  /* <think>; <tool_call>{"name", "arguments"}</tool_call> (Qwen 2.5/3,
                                Hermes, SmolLM3, DeepSeek-R1 distills) or Qwen3-Coder's
                                <function=NAME><parameter=KEY>...</parameter></function> */
    VKLLM_REPLY_MISTRAL = 2, /* [THINK]; [TOOL_CALLS][{...}] (v0.3) or
                                [TOOL_CALLS]NAME[CALL_ID]ID[ARGS]{...} */
    VKLLM_REPLY_LLAMA3 = 3,  /* a reply that is one {"name", "parameters"} object, maybe after
                                <|python_tag|> (Llama 3.1-3.3) */
    VKLLM_REPLY_HARMONY = 4, /* GPT-OSS: analysis is reasoning, final the answer, commentary
                                to=functions.NAME a call */
    VKLLM_REPLY_FORMAT_FORCE32 = 0x7FFFFFFF
} vkllm_reply_format;

/* The reply format a chat template (Jinja text, e.g. vkllm_model_get_chat_template's) teaches its
 * model, read from the markers it writes; VKLLM_REPLY_PLAIN for NULL or for none. */
VKLLM_API vkllm_reply_format vkllm_reply_format_of_template(const char *template_source);

/* 1 when a rendered prompt ends inside an open reasoning block (DeepSeek-R1's template ends its
 * generation prompt with "<think>\n"): pass it to vkllm_reply_parser_create. 0 otherwise and
 * for NULL. */
VKLLM_API int32_t vkllm_prompt_opens_reasoning(const char *prompt);

typedef struct vkllm_reply_parser vkllm_reply_parser;

/* What a push or finish made certain. The strings and calls belong to the parser and stay
 * valid until its next push, finish or destroy. */
typedef struct vkllm_reply_part {
    size_t struct_size;                /* sizeof(vkllm_reply_part) */
    const char *reasoning;             /* text to append to the reasoning ("" for none) */
    const char *content;               /* text to append to the answer ("" for none) */
    const vkllm_tool_call *tool_calls; /* the calls completed (NULL when none) */
    size_t n_tool_calls;
} vkllm_reply_part;

/* A parser for one reply at a time, used by one thread at a time. in_reasoning != 0: the reply
 * begins inside a reasoning block (see vkllm_prompt_opens_reasoning). Errors:
 * VKLLM_ERR_INVALID_ARGUMENT for an unknown format or a NULL out. */
VKLLM_API vkllm_status vkllm_reply_parser_create(vkllm_reply_format format, int32_t in_reasoning,
                                                 vkllm_reply_parser **out);
VKLLM_API void vkllm_reply_parser_destroy(vkllm_reply_parser *parser);

/* Feeds `length` bytes of the reply (any split, even inside a UTF-8 character). */
VKLLM_API vkllm_status vkllm_reply_parser_push(vkllm_reply_parser *parser, const char *text,
                                               size_t length, vkllm_reply_part *part);

/* Ends the reply: what is still held (an unfinished call as answer text), then the parser is
 * ready for a new reply as created. */
VKLLM_API vkllm_status vkllm_reply_parser_finish(vkllm_reply_parser *parser,
                                                 vkllm_reply_part *part);

/* ---------------------------------------------------------------------------------------
 * Conversations: multi-turn chat on a session
 *
 * A conversation keeps the messages of a chat (system, user, assistant, tool results), renders
 * them through a chat template for each reply, and generates the assistant's reply on one
 * sequence of a session, prefilling only what that sequence's cache does not hold yet: the
 * tokens of the re-rendered conversation that follow the longest prefix it shares with the
 * cache (vkllm_session_get_tokens), the rest being kept (vkllm_session_truncate). The reply
 * streams through the reply parser of the template's format (see "Chat replies") as pieces of
 * content, reasoning and tool calls, and joins the messages as an assistant turn, its tool
 * calls included; the app then adds the tools' results as "tool" messages and asks for the
 * next reply.
 *
 *     vkllm_conversation *c;
 *     vkllm_conversation_create(session, NULL, &c);      (the model's own template)
 *     vkllm_chat_turn user = {sizeof user, "user", "Hello!"};
 *     vkllm_conversation_add(c, &user);
 *     vkllm_conversation_reply_params rp;
 *     vkllm_conversation_reply_params_init(&rp);
 *     rp.on_piece = show;                                 (content, reasoning, tool calls)
 *     vkllm_conversation_result r = {sizeof r};
 *     vkllm_conversation_reply(c, &sampling, &rp, &r);    (r.n_prefilled: the new tokens)
 *
 * Tokens: the rendered text is tokenized with VKLLM_TOKENIZE_PARSE_SPECIAL (the template's
 * "<|im_end|>" is the control token, as the model was trained) and the tokenizer's BOS put in
 * front where the model asks for one and the template did not write it; vkllm_tokenizer_encode
 * itself parses special tokens only when asked.
 *
 * A conversation is used by one thread at a time, the thread that uses its session; it borrows
 * the session, which must outlive it. It owns its sequence of the session between its calls:
 * other calls may change that sequence (a reset, a state load), and the next reply simply
 * reuses less of the cache.
 * ------------------------------------------------------------------------------------- */

typedef struct vkllm_conversation vkllm_conversation;

typedef struct vkllm_conversation_params {
    size_t struct_size;
    uint32_t seq;                /* the session's sequence it uses; default 0 */
    const char *template_source; /* Jinja text: used when set (copied) */
    const char *template_name;   /* else a built-in, by name (vkllm_chat_params.template_name) */
    /* (neither: the model's own tokenizer.chat_template, else VKLLM_ERR_NOT_FOUND at create) */
    const char *tools; /* JSON array of tools (OpenAI function form) the template is given;
                          NULL (default): None. Copied */
    const char *extra; /* JSON object of more template variables; NULL: none. Copied */
    int64_t now;       /* strftime_now's time, as vkllm_chat_params.now; default
                          VKLLM_CHAT_NOW_CLOCK */
} vkllm_conversation_params;

VKLLM_API void vkllm_conversation_params_init(vkllm_conversation_params *params);

/* Creates an empty conversation on sequence params->seq of `session` (params NULL: defaults).
 * The template, tools and extra variables are checked now: VKLLM_ERR_NOT_FOUND for an unknown
 * template name or a model without a template when none is given, VKLLM_ERR_INVALID_ARGUMENT for
 * a template that does not parse, tools or extra that are not JSON, a sequence the session does
 * not have. The session's sequence is not touched until the first reply. */
VKLLM_API vkllm_status vkllm_conversation_create(vkllm_session *session,
                                                 const vkllm_conversation_params *params,
                                                 vkllm_conversation **out);

/* NULL: no-op. The session and its cache stay as they are. */
VKLLM_API void vkllm_conversation_destroy(vkllm_conversation *conversation);

/* Appends a message (the strings are copied): "system", "user", "assistant" (with its
 * tool_calls, whose arguments must be JSON text), or "tool" (a call's result: content, with
 * tool_call_id and name). VKLLM_ERR_INVALID_ARGUMENT, adding nothing, for a NULL role or
 * malformed tool-call arguments. */
VKLLM_API vkllm_status vkllm_conversation_add(vkllm_conversation *conversation,
                                              const vkllm_chat_turn *turn);

/* Appends one message given as a JSON object, or several as a JSON array, in OpenAI's shape
 * ({"role", "content", "tool_calls": [{"id", "type", "function": {"name", "arguments"}}],
 * "tool_call_id", "name", ...}; other keys are kept for the template). Tool-call arguments may
 * be an object or, as OpenAI sends them, JSON text. VKLLM_ERR_INVALID_ARGUMENT, adding nothing,
 * for malformed JSON or a message without a string role. */
VKLLM_API vkllm_status vkllm_conversation_add_json(vkllm_conversation *conversation,
                                                   const char *messages_json);

/* The number of messages. */
VKLLM_API vkllm_status vkllm_conversation_get_count(const vkllm_conversation *conversation,
                                                    size_t *count);

/* Message `index` (0 first) as a turn: role, content (NULL when it has none), reasoning_content,
 * tool_calls (arguments as JSON text), tool_call_id and name. The strings belong to the
 * conversation and stay valid until the message is removed (vkllm_conversation_truncate) or the
 * conversation destroyed. `out->struct_size` is set by the caller. VKLLM_ERR_NOT_FOUND past the
 * end. */
VKLLM_API vkllm_status vkllm_conversation_get_message(const vkllm_conversation *conversation,
                                                      size_t index, vkllm_chat_turn *out);

/* Keeps the first `n_keep` messages and forgets the rest (0: start over; n - 1 after a reply:
 * retry it). The cache is left alone: the next reply reuses what still matches. */
VKLLM_API vkllm_status vkllm_conversation_truncate(vkllm_conversation *conversation, size_t n_keep);

/* What a piece of a streamed reply is. */
typedef enum vkllm_chat_piece_kind {
    VKLLM_CHAT_PIECE_CONTENT = 0,   /* answer text */
    VKLLM_CHAT_PIECE_REASONING = 1, /* reasoning text (<think>, harmony's analysis...) */
    VKLLM_CHAT_PIECE_TOOL_CALL = 2, /* a complete tool call */
    VKLLM_CHAT_PIECE_KIND_FORCE32 = 0x7FFFFFFF
} vkllm_chat_piece_kind;

/* Receives each piece of a reply as the reply parser makes it certain: for CONTENT and REASONING
 * `text` (never ending inside a UTF-8 character) and `call` NULL; for TOOL_CALL the call (its id
 * given by the conversation when the model gave none: "call" and five digits) with `text` its
 * arguments. Valid during the call only. Return 0 to go on, anything else to stop the reply
 * (VKLLM_ERR_CANCELLED). Must not call vkllm functions on the conversation or its session. */
typedef int32_t (*vkllm_chat_piece_fn)(void *user_data, vkllm_chat_piece_kind kind,
                                       const char *text, size_t length,
                                       const vkllm_tool_call *call);

typedef struct vkllm_conversation_reply_params {
    size_t struct_size;
    /* The most tokens of the reply. 0 (default): no cap but the context: until an end token or
     * until the sequence is full (a streaming session: n_ctx tokens). */
    uint32_t max_tokens;
    vkllm_chat_piece_fn on_piece; /* NULL: none (read the reply with get_message) */
    void *user_data;
    /* Stop strings (OpenAI's `stop`): the reply ends before the first one it writes
     * (VKLLM_STOP_STRING), which is not part of it. NULL when n_stop is 0 (default). */
    const char *const *stop;
    size_t n_stop;
} vkllm_conversation_reply_params;

VKLLM_API void vkllm_conversation_reply_params_init(vkllm_conversation_reply_params *params);

/* What a reply did. Set struct_size before the call. */
typedef struct vkllm_conversation_result {
    size_t struct_size;
    size_t n_prompt;               /* tokens of the rendered conversation */
    size_t n_reused;               /* of them, those the sequence's cache already held */
    size_t n_prefilled;            /* of them, those prefilled now: n_prompt - n_reused */
    size_t n_generated;            /* tokens of the reply */
    vkllm_stop_reason stop_reason; /* END_OF_GENERATION; MAX_TOKENS (max_tokens or the context's
                                      end); CANCELLED */
    size_t n_tool_calls;           /* tool calls in the reply */
    double prefill_ms;
    double decode_ms;
    uint64_t seed; /* the sampling seed used */
    /* Appended in 0.2. Whether the reply's raw text (markers included, as the grammar saw
     * it) is a whole string of the sampling grammar, as vkllm_generate_result.grammar_progress:
     * VKLLM_GRAMMAR_INCOMPLETE when max_tokens, the context's end, a stop string or a cancel cut
     * it before the grammar was done, and an app must not parse it as the grammar's language;
     * COMPLETE or FINISHED: the grammar accepts it. Without a grammar, COMPLETE. */
    vkllm_grammar_progress grammar_progress;
} vkllm_conversation_result;

/* Renders the conversation with the opening of an assistant turn, prefills the tokens the cache
 * does not hold, generates the reply with `sampling` (NULL: vkllm_sampling_params_init's
 * defaults; a grammar constrains the reply's raw text, markers included), streams it through
 * params->on_piece (params NULL: defaults) and appends it as an assistant message: its content,
 * reasoning_content and tool_calls. `result` may be NULL. The reply's tokens (but the last) stay
 * in the cache, so the next reply prefills only what follows them. Where the cache cannot rewind
 * to the shared prefix (a streaming or sliding-window ring that has wrapped), the reply goes on
 * after everything cached with what the template adds after the last reply (n_reused is then the
 * sequence's position, n_prompt n_reused + n_prefilled); where the rendering does not extend the
 * one up to that reply, the sequence is emptied and the whole conversation prefilled.
 * Errors, before anything changes: VKLLM_ERR_CONTEXT_FULL when the rendered conversation does
 * not fit the sequence (not in streaming sessions); VKLLM_ERR_INVALID_ARGUMENT with the
 * template's message when it refuses the messages. The session's errors (bad sampling params, a
 * device loss) leave the messages as they were, the cache perhaps holding less of them.
 * VKLLM_ERR_CANCELLED (on_piece asked, or vkllm_session_cancel): the reply so far is appended
 * and *result filled. */
VKLLM_API vkllm_status vkllm_conversation_reply(vkllm_conversation *conversation,
                                                const vkllm_sampling_params *sampling,
                                                const vkllm_conversation_reply_params *params,
                                                vkllm_conversation_result *result);

/* ---------------------------------------------------------------------------------------
 * Free helpers: no object needed
 * ------------------------------------------------------------------------------------- */

/* The name of a ggml tensor type ("Q4_K"), or NULL for an id ggml does not define. */
VKLLM_API const char *vkllm_ggml_type_name(uint32_t type);

/* The GBNF text a JSON Schema converts to, to read or edit: written NUL-terminated to `buf`
 * (`capacity` bytes; may be NULL when capacity is 0), its length without the NUL to *length.
 * VKLLM_ERR_BUFFER_TOO_SMALL (with *length set) when it does not fit; errors as
 * vkllm_grammar_create_from_json_schema. */
VKLLM_API vkllm_status vkllm_json_schema_to_gbnf(const char *schema, char *buf, size_t capacity,
                                                 size_t *length);

/* ---------------------------------------------------------------------------------------
 * Experimental: measurement knobs (only with VKLLM_EXPERIMENTAL defined)
 *
 * What benchmarks, profilers and the library's own tests use to look inside a session or a
 * model. They may change or go in any minor version, and are declared only for code that
 * defines VKLLM_EXPERIMENTAL before including this header (see CONVENTIONS): an application
 * that does not cannot come to depend on them by accident.
 * ------------------------------------------------------------------------------------- */

#ifdef VKLLM_EXPERIMENTAL

#define VKLLM_SESSION_RECORD_EVERY_STEP                                                 \
    0x8u /* an ablation for measurements: record the step's command buffers again every \
            step instead of replaying them (what an engine without recorded steps pays) */

#define VKLLM_SESSION_PROFILE                                                                    \
    0x10u /* time every kernel on the device with timestamp queries (vkllm_session_get_profile); \
             steps run somewhat slower. VKLLM_ERR_UNSUPPORTED on a device without compute        \
             timestamps. */

/* K and V cache bytes of layer `layer` of the model (all sequences). Sliding-window layers
 * (GPT-OSS's even layers) keep a ring of the window plus one prefill chunk, whatever n_ctx;
 * the others n_ctx slots. VKLLM_ERR_INVALID_ARGUMENT for a layer the model does not have. */
VKLLM_API vkllm_status vkllm_session_get_layer_kv_bytes(const vkllm_session *session,
                                                        uint32_t layer, uint64_t *bytes);

/* Device time of one kernel (compute shader) in a profiled session. */
typedef struct vkllm_kernel_time {
    const char *kernel;  /* the shader's name; valid while the session lives */
    uint64_t dispatches; /* dispatches of it run so far */
    double ms;           /* their device time, summed */
} vkllm_kernel_time;

/* The device time spent in each kernel since a session created with VKLLM_SESSION_PROFILE was
 * created (VKLLM_ERR_INVALID_ARGUMENT for another session). Writes up to `capacity` entries to
 * `out` (may be NULL when capacity is 0), most time first, and the number of kernels to *count.
 * The times are those of the submitted steps: subtract two readings to profile a span. */
VKLLM_API vkllm_status vkllm_session_get_profile(const vkllm_session *session,
                                                 vkllm_kernel_time *out, size_t capacity,
                                                 size_t *count);

/* Times the model's RoPE cos/sin table was computed: 1 for a model with rotary positions (it is
 * computed once, at load, and shared by its sessions), 0 for one with learned positions. */
VKLLM_API vkllm_status vkllm_model_get_rope_table_builds(const vkllm_model *model, uint64_t *count);

#endif /* VKLLM_EXPERIMENTAL */

/* ---------------------------------------------------------------------------------------
 * Deprecated names
 *
 * Version 0.3 finished the naming scheme (see CONVENTIONS). The 0.2 names it changed are still
 * exported and do exactly what their replacements do; they go in 0.4. Compilers warn where
 * they are used, naming the replacement. (The 0.1 names that 0.2 deprecated are gone.)
 * ------------------------------------------------------------------------------------- */

VKLLM_DEPRECATED("vkllm_gguf_get_key")
VKLLM_API vkllm_status vkllm_gguf_key_at(const vkllm_gguf *gguf, size_t index, vkllm_gguf_key *out);
VKLLM_DEPRECATED("vkllm_gguf_get_tensor")
VKLLM_API vkllm_status vkllm_gguf_tensor_at(const vkllm_gguf *gguf, size_t index,
                                            vkllm_tensor_info *out);
VKLLM_DEPRECATED("vkllm_tokenizer_encode")
VKLLM_API vkllm_status vkllm_tokenize(const vkllm_tokenizer *tokenizer, const char *text,
                                      size_t length, uint32_t flags, int32_t *tokens,
                                      size_t capacity, size_t *n_tokens);
VKLLM_DEPRECATED("vkllm_tokenizer_decode")
VKLLM_API vkllm_status vkllm_detokenize(const vkllm_tokenizer *tokenizer, const int32_t *tokens,
                                        size_t n_tokens, uint32_t flags, char *buf, size_t capacity,
                                        size_t *length);
VKLLM_DEPRECATED("vkllm_tokenizer_get_piece")
VKLLM_API vkllm_status vkllm_token_to_piece(const vkllm_tokenizer *tokenizer, int32_t token,
                                            uint32_t flags, char *buf, size_t capacity,
                                            size_t *length);
VKLLM_DEPRECATED("vkllm_tokenizer_is_end_of_generation")
VKLLM_API vkllm_status vkllm_token_is_end_of_generation(const vkllm_tokenizer *tokenizer,
                                                        int32_t token, int32_t *out);
VKLLM_DEPRECATED("vkllm_model_get_gguf")
VKLLM_API const vkllm_gguf *vkllm_model_gguf(const vkllm_model *model);
VKLLM_DEPRECATED("vkllm_session_get_state_size")
VKLLM_API vkllm_status vkllm_session_state_size(const vkllm_session *session, uint32_t seq,
                                                size_t *size);
VKLLM_DEPRECATED("vkllm_session_generate")
VKLLM_API vkllm_status vkllm_generate(vkllm_session *session, const int32_t *prompt,
                                      size_t n_prompt, const vkllm_sampling_params *sampling,
                                      const vkllm_generate_params *params,
                                      vkllm_generate_result *result);
VKLLM_DEPRECATED("vkllm_session_generate_batch")
VKLLM_API vkllm_status vkllm_generate_batch(vkllm_session *session, vkllm_batch_sequence *seqs,
                                            size_t n_seqs, const vkllm_generate_params *params);
VKLLM_DEPRECATED("vkllm_sampler_get_seed")
VKLLM_API vkllm_status vkllm_sampler_seed(const vkllm_sampler *sampler, uint64_t *seed);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* VKLLM_H */
