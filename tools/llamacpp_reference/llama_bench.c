// llama.cpp's prefill and decode speed measured as llama-bench measures them (pp = N prompt
// tokens as one batch, tg = M tokens decoded one at a time after a 1-token prompt, each the
// mean of R runs after one warm-up), printed in bench.mjs's line. It links node-llama-cpp's
// prebuilt Vulkan libraries directly, for a machine that has a GPU but no node (the device
// machine): only the libraries travel.
//
// A reference tool, never part of vkllm. Build against the llama.h of the prebuilt's source
// bundle (node-llama-cpp/llama/gitRelease.bundle, `de3ff81` for 3.22.1):
//   git clone -q .../node-llama-cpp/llama/gitRelease.bundle /tmp/llsrc
//   B=.../@node-llama-cpp/linux-x64-vulkan/bins/linux-x64-vulkan
//   cc -O2 -o llama_bench tools/llamacpp_reference/llama_bench.c -I/tmp/llsrc/include
//      -I/tmp/llsrc/ggml/include $B/libllama.vulkan.v0.5.0.so $B/libggml.vulkan.v0.5.0.so
//      $B/libggml-base.so -Wl,-rpath,'$ORIGIN' -lm          (one line)
//   llama_bench MODEL [-p 512] [-n 128] [-r 3] [--backends DIR]
// DIR holds the backends (libggml-vulkan.so, libggml-cpu-*.so); default: the program's folder.
#include <libgen.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ggml-backend.h"
#include "llama.h"

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

// Ordinary ids, away from the special ones at either end of most vocabularies (as bench.mjs).
static void fill_ids(llama_token *out, int n, unsigned seed, int n_vocab) {
    unsigned x = seed;
    int span = (n_vocab < 30000 ? n_vocab : 30000) - 1000;
    if (span < 1) span = 1;
    for (int i = 0; i < n; ++i) {
        x = x * 1103515245u + 12345u;
        out[i] = 1000 + (llama_token)((x >> 8) % (unsigned)span);
    }
}

static void quiet(enum ggml_log_level level, const char *text, void *user) {
    (void)user;
    if (level >= GGML_LOG_LEVEL_ERROR) fputs(text, stderr);
}

static double prefill(struct llama_context *ctx, llama_token *ids, int n, unsigned seed,
                      int n_vocab) {
    llama_memory_clear(llama_get_memory(ctx), true);
    fill_ids(ids, n, seed, n_vocab);
    double t0 = now_s();
    if (llama_decode(ctx, llama_batch_get_one(ids, n)) != 0) return NAN;
    llama_synchronize(ctx);
    return n / (now_s() - t0);
}

static double decode(struct llama_context *ctx, llama_token *ids, int n, unsigned seed,
                     int n_vocab) {
    llama_memory_clear(llama_get_memory(ctx), true);
    fill_ids(ids, n + 1, seed, n_vocab);
    if (llama_decode(ctx, llama_batch_get_one(ids, 1)) != 0) return NAN;
    llama_synchronize(ctx);
    double t0 = now_s();
    for (int i = 1; i <= n; ++i) {
        if (llama_decode(ctx, llama_batch_get_one(ids + i, 1)) != 0) return NAN;
        llama_synchronize(ctx);
    }
    return n / (now_s() - t0);
}

static void stats(const double *xs, int n, double *mean, double *sd) {
    double s = 0, q = 0;
    for (int i = 0; i < n; ++i) s += xs[i];
    *mean = s / n;
    for (int i = 0; i < n; ++i) q += (xs[i] - *mean) * (xs[i] - *mean);
    *sd = n > 1 ? sqrt(q / (n - 1)) : 0;
}

int main(int argc, char **argv) {
    const char *model_path = NULL, *backends = NULL;
    int n_prompt = 512, n_gen = 128, reps = 3;
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "-p") && i + 1 < argc) n_prompt = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-n") && i + 1 < argc) n_gen = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-r") && i + 1 < argc) reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--backends") && i + 1 < argc) backends = argv[++i];
        else model_path = argv[i];
    }
    if (!model_path || n_prompt < 1 || n_gen < 1 || reps < 1 || reps > 100) {
        fprintf(stderr, "usage: llama_bench MODEL [-p N] [-n N] [-r N] [--backends DIR]\n");
        return 2;
    }
    char self[PATH_MAX];
    ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    if (!backends && len > 0) {
        self[len] = 0;
        backends = dirname(self);
    }
    llama_log_set(quiet, NULL);
    ggml_backend_load_all_from_path(backends);
    llama_backend_init();

    struct llama_model_params mp = llama_model_default_params();
    mp.n_gpu_layers = 999;
    struct llama_model *model = llama_model_load_from_file(model_path, mp);
    if (!model) {
        fprintf(stderr, "llama_bench: cannot load %s\n", model_path);
        return 1;
    }
    struct llama_context_params cp = llama_context_default_params();
    cp.n_ctx = (uint32_t)(n_prompt + n_gen + 8);
    cp.n_batch = cp.n_ubatch = (uint32_t)n_prompt;
    cp.no_perf = true;
    struct llama_context *ctx = llama_init_from_model(model, cp);
    if (!ctx) {
        fprintf(stderr, "llama_bench: cannot make a context\n");
        return 1;
    }
    int n_vocab = llama_vocab_n_tokens(llama_model_get_vocab(model));
    llama_token *ids = malloc(sizeof(llama_token) * (size_t)(n_prompt + n_gen + 1));
    double pp[100], tg[100], pm, ps, tm, ts;
    prefill(ctx, ids, n_prompt, 1, n_vocab);  // warm-up
    for (int r = 0; r < reps; ++r) pp[r] = prefill(ctx, ids, n_prompt, 2u + (unsigned)r, n_vocab);
    decode(ctx, ids, n_gen, 1, n_vocab);
    for (int r = 0; r < reps; ++r) tg[r] = decode(ctx, ids, n_gen, 10u + (unsigned)r, n_vocab);
    stats(pp, reps, &pm, &ps);
    stats(tg, reps, &tm, &ts);
    const char *dev = "?";
    for (size_t i = 0; i < ggml_backend_dev_count(); ++i) {
        ggml_backend_dev_t d = ggml_backend_dev_get(i);
        if (ggml_backend_dev_type(d) != GGML_BACKEND_DEVICE_TYPE_CPU) {
            dev = ggml_backend_dev_description(d);
            break;
        }
    }
    char *slash = strrchr(model_path, '/');
    printf("llama.cpp vulkan (%s, flash attention %s) %s: pp%d %.2f ± %.2f tok/s, tg%d %.2f ± "
           "%.2f tok/s\n",
           dev, llama_flash_attn_type_name(cp.flash_attn_type), slash ? slash + 1 : model_path,
           n_prompt, pm, ps, n_gen, tm, ts);
    free(ids);
    llama_free(ctx);
    llama_model_free(model);
    return 0;
}
