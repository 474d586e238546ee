// Devices and runtimes through the C ABI.
#include <cstring>
#include <memory>

#include "api/guard.h"
#include "api/runtime.h"
#include "engine/tune.h"
#include "gpu/self_check.h"

using vkllm::fail;
using vkllm::api::guard;
using vkllm::api::require_arg;
using vkllm::api::require_struct;

extern "C" {

vkllm_status vkllm_devices_enumerate(vkllm_device_info *infos, size_t capacity, size_t *count) {
    return guard([&] {
        require_arg(count, "vkllm_devices_enumerate", "count");
        if (capacity > 0) require_arg(infos, "vkllm_devices_enumerate", "infos");
        // The caller's array is of its own struct, which an older header made shorter: its
        // entries lie struct_size bytes apart.
        size_t stride = capacity > 0 ? infos[0].struct_size : 0;
        auto entry = [&](size_t i) {
            return reinterpret_cast<vkllm_device_info *>(reinterpret_cast<char *>(infos) +
                                                         i * stride);
        };
        for (size_t i = 0; i < capacity; ++i) {
            require_struct(entry(i), "vkllm_devices_enumerate", "infos[i]");
            if (entry(i)->struct_size != stride)
                fail(VKLLM_ERR_INVALID_ARGUMENT,
                     "vkllm_devices_enumerate: infos[%zu].struct_size is %zu, infos[0]'s %zu; "
                     "set every entry's to sizeof(vkllm_device_info)",
                     i, entry(i)->struct_size, stride);
        }
        vkllm::gpu::Instance instance(false, vkllm::Logger{},
                                      vkllm::gpu::vulkan_options_from_environment());
        auto devices = vkllm::gpu::query_devices(instance);
        for (size_t i = 0; i < capacity && i < devices.size(); ++i)
            vkllm::gpu::copy_device_info(devices[i].info, entry(i));
        *count = devices.size();
    });
}

void vkllm_runtime_params_init(vkllm_runtime_params *params) {
    if (!params) return;
    std::memset(params, 0, sizeof *params);
    params->struct_size = sizeof *params;
    params->device_index = -1;
}

vkllm_status vkllm_runtime_create(const vkllm_runtime_params *params, vkllm_runtime **out) {
    return guard([&] {
        require_arg(out, "vkllm_runtime_create", "out");
        // Fields past the caller's struct_size keep their defaults (an older caller).
        vkllm_runtime_params p;
        vkllm_runtime_params_init(&p);
        if (params) {
            if (params->struct_size < sizeof(size_t) || params->struct_size > sizeof p)
                fail(VKLLM_ERR_INVALID_ARGUMENT,
                     "vkllm_runtime_create: params->struct_size is %zu; call "
                     "vkllm_runtime_params_init first",
                     params->struct_size);
            std::memcpy(&p, params, params->struct_size);
        }
        vkllm::gpu::ContextParams cp;
        cp.device_index = p.device_index;
        if (p.device_name) cp.device_name = p.device_name;
        cp.validation = p.flags & VKLLM_RUNTIME_VALIDATION;
        if (p.pipeline_cache_path) cp.pipeline_cache_path = p.pipeline_cache_path;
        cp.log = vkllm::Logger{p.log_fn, p.log_user_data};
        cp.device_memory_budget = p.device_memory_budget;
        cp.vulkan = vkllm::gpu::vulkan_options_from_environment();
        auto rt = std::make_unique<vkllm_runtime>();
        rt->context = std::make_shared<vkllm::gpu::Context>(cp);
        rt->pipeline_cache_path = cp.pipeline_cache_path;
        rt->log = cp.log;
        vkllm::engine::load_tuning(*rt->context, rt->pipeline_cache_path, rt->log);
        *out = rt.release();
    });
}

void vkllm_runtime_destroy(vkllm_runtime *runtime) {
    // Destruction cannot report failure; a destructor that throws is still contained here.
    try {
        delete runtime;
    } catch (...) {
    }
}

vkllm_status vkllm_runtime_get_device_info(const vkllm_runtime *runtime, vkllm_device_info *info) {
    return guard([&] {
        require_arg(runtime, "vkllm_runtime_get_device_info", "runtime");
        require_struct(info, "vkllm_runtime_get_device_info", "info");
        vkllm::gpu::copy_device_info(runtime->context->device().info(), info);
    });
}

vkllm_status vkllm_runtime_get_stats(const vkllm_runtime *runtime, vkllm_runtime_stats *stats) {
    return guard([&] {
        require_arg(runtime, "vkllm_runtime_get_stats", "runtime");
        require_struct(stats, "vkllm_runtime_get_stats", "stats");
        vkllm::gpu::Context &c = *runtime->context;
        vkllm_runtime_stats s{};
        s.validation_errors = c.instance().validation_errors();
        s.validation_warnings = c.instance().validation_warnings();
        s.pipelines_created = c.pipelines().created();
        s.pipeline_cache_bytes_loaded = c.pipelines().cache_bytes_loaded();
        s.device_memory_allocated = c.allocator().bytes_allocated();
        s.submits = c.device().submits();
        s.pipeline_compile_ms = c.pipelines().compile_ms();
        s.tuned_shapes = c.kernels().env().tuning().size();
        size_t keep = stats->struct_size;
        std::memcpy(stats, &s, std::min(keep, sizeof s));
        stats->struct_size = keep;
    });
}

}  // extern "C"

extern "C" vkllm_status vkllm_runtime_self_check(vkllm_runtime *runtime,
                                                 vkllm_self_check_result *result) {
    return guard([&] {
        require_arg(runtime, "vkllm_runtime_self_check", "runtime");
        require_struct(result, "vkllm_runtime_self_check", "result");
        vkllm_self_check_result r{};
        r.struct_size = sizeof r;
        vkllm::gpu::self_check(*runtime->context, r);
        size_t keep = result->struct_size;
        std::memcpy(result, &r, std::min(keep, sizeof r));
        result->struct_size = keep;
    });
}
