/* A host that loads libvkllm at run time, as a plugin, through dlopen/dlsym only: it is not
 * linked with the library. It refuses a library whose major version differs from the header
 * it was compiled with (while the major version is 0, whose minor version differs), then
 * generates text with greedy sampling.
 *
 *     plugin_host [LIBRARY] MODEL.gguf ["PROMPT"] [N_TOKENS]
 *
 * LIBRARY defaults to $VKLLM_LIBRARY, else libvkllm.so.MAJOR.MINOR (this header's version) on the
 * loader path. Only the header's types and macros are used; every function comes from dlsym.
 */
#define _POSIX_C_SOURCE 200809L
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vkllm.h"

/* The SONAME's version: MAJOR.MINOR, "0.3". */
#define STRINGIFY(x) #x
#define VERSION_TEXT(major, minor) STRINGIFY(major) "." STRINGIFY(minor)
#define SONAME_VERSION VERSION_TEXT(VKLLM_VERSION_MAJOR, VKLLM_VERSION_MINOR)

/* The entry points used, as pointers (one table, filled from dlsym). */
struct vkllm_api {
    uint32_t (*version)(void);
    const char *(*version_string)(void);
    const char *(*status_string)(vkllm_status);
    const char *(*last_error)(void);
    vkllm_status (*runtime_create)(const vkllm_runtime_params *, vkllm_runtime **);
    void (*runtime_destroy)(vkllm_runtime *);
    vkllm_status (*model_load)(vkllm_runtime *, const char *, const vkllm_model_params *,
                               vkllm_model **);
    void (*model_destroy)(vkllm_model *);
    const vkllm_tokenizer *(*model_get_tokenizer)(const vkllm_model *);
    vkllm_status (*tokenizer_encode)(const vkllm_tokenizer *, const char *, size_t, uint32_t,
                                     int32_t *, size_t, size_t *);
    void (*session_params_init)(vkllm_session_params *);
    vkllm_status (*session_create)(vkllm_model *, const vkllm_session_params *, vkllm_session **);
    void (*session_destroy)(vkllm_session *);
    void (*sampling_params_init)(vkllm_sampling_params *);
    void (*generate_params_init)(vkllm_generate_params *);
    vkllm_status (*session_generate)(vkllm_session *, const int32_t *, size_t,
                                     const vkllm_sampling_params *, const vkllm_generate_params *,
                                     vkllm_generate_result *);
};

/* dlsym returns void *; POSIX guarantees it converts to a function pointer, ISO C does not,
 * so copy the bits instead of casting. */
static int bind(void *lib, const char *name, void *slot, size_t size) {
    void *sym = dlsym(lib, name);
    if (!sym) {
        fprintf(stderr, "plugin_host: %s is missing from the library: %s\n", name, dlerror());
        return 0;
    }
    memcpy(slot, &sym, size);
    return 1;
}

#define BIND(api, lib, field) bind(lib, "vkllm_" #field, &(api)->field, sizeof((api)->field))

static int32_t print_token(void *user_data, int32_t token, const char *text, size_t length) {
    (void)user_data;
    (void)token;
    fwrite(text, 1, length, stdout);
    fflush(stdout);
    return 0;
}

static int run(const struct vkllm_api *api, const char *model_path, const char *prompt,
               uint32_t n_tokens) {
    vkllm_runtime *runtime = NULL;
    vkllm_model *model = NULL;
    vkllm_session *session = NULL;
    vkllm_session_params sp;
    vkllm_sampling_params sampling;
    vkllm_generate_params gen;
    int32_t ids[512];
    size_t n_ids = 0;
    vkllm_status s;
    const char *what = "runtime";

    if ((s = api->runtime_create(NULL, &runtime)) != VKLLM_OK) goto fail;
    what = model_path;
    if ((s = api->model_load(runtime, model_path, NULL, &model)) != VKLLM_OK) goto fail;
    what = "tokenize";
    s = api->tokenizer_encode(api->model_get_tokenizer(model), prompt, strlen(prompt),
                              VKLLM_TOKENIZE_ADD_SPECIAL, ids, sizeof ids / sizeof ids[0], &n_ids);
    if (s != VKLLM_OK) goto fail;
    what = "session";
    api->session_params_init(&sp);
    sp.n_ctx = (uint32_t)n_ids + n_tokens + 1;
    if ((s = api->session_create(model, &sp, &session)) != VKLLM_OK) goto fail;
    what = "generate";
    api->sampling_params_init(&sampling);
    sampling.temperature = 0.0f;
    api->generate_params_init(&gen);
    gen.max_tokens = n_tokens;
    gen.on_token = print_token;
    fputs(prompt, stdout);
    s = api->session_generate(session, ids, n_ids, &sampling, &gen, NULL);
    putchar('\n');
    if (s != VKLLM_OK) goto fail;
    api->session_destroy(session);
    api->model_destroy(model);
    api->runtime_destroy(runtime);
    return 0;
fail:
    fprintf(stderr, "plugin_host: %s: %s (%s)\n", what, api->last_error(), api->status_string(s));
    api->session_destroy(session);
    api->model_destroy(model);
    api->runtime_destroy(runtime);
    return 1;
}

int main(int argc, char **argv) {
    const char *library = getenv("VKLLM_LIBRARY");
    struct vkllm_api api;
    void *lib;
    uint32_t loaded;
    int arg = 1, rc;

    /* A first argument naming a shared object is the library. */
    if (argc > 2 && strstr(argv[1], ".so")) library = argv[arg++];
    if (!library || !*library) library = "libvkllm.so." SONAME_VERSION;
    if (argc - arg < 1 || argc - arg > 3) {
        fprintf(stderr, "usage: %s [LIBRARY] MODEL.gguf [PROMPT] [N_TOKENS]\n", argv[0]);
        return 2;
    }

    lib = dlopen(library, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        fprintf(stderr, "plugin_host: cannot load %s: %s\n", library, dlerror());
        return 1;
    }
    memset(&api, 0, sizeof api);
    if (!BIND(&api, lib, version) || !BIND(&api, lib, version_string)) {
        dlclose(lib);
        return 1;
    }
    loaded = api.version();
    /* While the major version is 0, a minor version may change the ABI (as the SONAME says). */
    if (loaded / 10000 != VKLLM_VERSION_MAJOR ||
        (VKLLM_VERSION_MAJOR == 0 && loaded / 100 % 100 != VKLLM_VERSION_MINOR)) {
        fprintf(stderr,
                "plugin_host: %s is vkllm %s; this host was built for version %d.%d (header "
                "%d.%d.%d): refusing it\n",
                library, api.version_string(), VKLLM_VERSION_MAJOR, VKLLM_VERSION_MINOR,
                VKLLM_VERSION_MAJOR, VKLLM_VERSION_MINOR, VKLLM_VERSION_PATCH);
        dlclose(lib);
        return 1;
    }
    fprintf(stderr, "plugin_host: loaded vkllm %s from %s (built against %d.%d.%d)\n",
            api.version_string(), library, VKLLM_VERSION_MAJOR, VKLLM_VERSION_MINOR,
            VKLLM_VERSION_PATCH);
    if (!BIND(&api, lib, status_string) || !BIND(&api, lib, last_error) ||
        !BIND(&api, lib, runtime_create) || !BIND(&api, lib, runtime_destroy) ||
        !BIND(&api, lib, model_load) || !BIND(&api, lib, model_destroy) ||
        !BIND(&api, lib, model_get_tokenizer) || !BIND(&api, lib, tokenizer_encode) ||
        !BIND(&api, lib, session_params_init) || !BIND(&api, lib, session_create) ||
        !BIND(&api, lib, session_destroy) || !BIND(&api, lib, sampling_params_init) ||
        !BIND(&api, lib, generate_params_init) || !BIND(&api, lib, session_generate)) {
        dlclose(lib);
        return 1;
    }

    rc = run(&api, argv[arg], argc - arg > 1 ? argv[arg + 1] : "Once upon a time",
             argc - arg > 2 ? (uint32_t)strtoul(argv[arg + 2], NULL, 10) : 32);
    dlclose(lib);
    return rc;
}
