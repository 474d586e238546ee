// C side of model-load progress: the Go function vkllmgoOnProgress (exported in lowlevel.go)
// receives the runtime/cgo.Handle of the Go callback through user_data, converted here so that
// Go never makes an unsafe.Pointer from an integer.
#include "_cgo_export.h"
#include "vkllm.h"

static int32_t vkllmgo_on_progress(void *user_data, float progress) {
    return vkllmgoOnProgress((uintptr_t)user_data, progress);
}

vkllm_status vkllmgo_model_load(vkllm_runtime *runtime, const char *path, uintptr_t handle,
                                vkllm_model **out) {
    vkllm_model_params params;
    vkllm_model_params_init(&params);
    params.progress = vkllmgo_on_progress;
    params.progress_user_data = (void *)handle;
    return vkllm_model_load(runtime, path, &params, out);
}
