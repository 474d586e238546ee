// vkllm: the command-line face of libvkllm. Uses only the public C API.
//
//   vkllm devices                     list the Vulkan devices
//   vkllm self-check [options]        run every kernel against a CPU computation
//   vkllm version
//
// Options: --device N|NAME   pick a device (also VKLLM_DEVICE)
//          --validate        enable the Vulkan validation layer; any error fails the command
//          --pipeline-cache FILE
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "vkllm.h"

namespace {

int usage(FILE *out) {
    std::fputs(
        "usage: vkllm <command> [options]\n"
        "\n"
        "commands:\n"
        "  devices       list the Vulkan devices vkllm can see\n"
        "  self-check    run every compute kernel on the chosen device and compare it with\n"
        "                a CPU computation\n"
        "  version       print the library version\n"
        "\n"
        "options:\n"
        "  --device N|NAME         device index or name substring (default: VKLLM_DEVICE, else\n"
        "                          the best device)\n"
        "  --validate              enable VK_LAYER_KHRONOS_validation; errors fail the command\n"
        "  --pipeline-cache FILE   keep compiled pipelines in FILE between runs\n",
        out);
    return out == stdout ? 0 : 2;
}

int report(vkllm_status s, const char *what) {
    std::fprintf(stderr, "vkllm: %s: %s: %s\n", what, vkllm_status_string(s), vkllm_last_error());
    return 1;
}

const char *type_name(vkllm_device_type t) {
    switch (t) {
        case VKLLM_DEVICE_DISCRETE_GPU:
            return "discrete GPU";
        case VKLLM_DEVICE_INTEGRATED_GPU:
            return "integrated GPU";
        case VKLLM_DEVICE_VIRTUAL_GPU:
            return "virtual GPU";
        case VKLLM_DEVICE_CPU:
            return "CPU";
        default:
            return "other";
    }
}

void print_device(const vkllm_device_info &d) {
    std::printf("%u: %s (%s)%s\n", d.index, d.name, type_name(d.type),
                d.usable ? "" : " [unusable]");
    std::printf("   driver %s %s, Vulkan %u.%u, vendor 0x%04x device 0x%04x\n", d.driver_name,
                d.driver_info, d.api_version >> 22, (d.api_version >> 12) & 0x3ff, d.vendor_id,
                d.device_id);
    for (uint32_t h = 0; h < d.heap_count; ++h)
        std::printf("   heap %u: %llu MiB%s\n", h, (unsigned long long)(d.heap_size[h] >> 20),
                    d.heap_device_local[h] ? " device-local" : "");
    std::printf(
        "   unified memory %s, max binding %llu MiB, max texel elements %llu, shared %u KiB\n",
        d.unified_memory ? "yes" : "no", (unsigned long long)(d.max_storage_buffer_range >> 20),
        (unsigned long long)d.max_texel_buffer_elements, d.max_compute_shared_memory / 1024);
    std::printf(
        "   subgroup %u, workgroup %u, float16 %s, int8 %s, 16-bit storage %s, timestamps %s\n",
        d.subgroup_size, d.max_workgroup_invocations, d.shader_float16 ? "yes" : "no",
        d.shader_int8 ? "yes" : "no", d.storage_16bit ? "yes" : "no", d.timestamps ? "yes" : "no");
}

int cmd_devices() {
    size_t n = 0;
    vkllm_status s = vkllm_devices_enumerate(nullptr, 0, &n);
    if (s != VKLLM_OK) return report(s, "listing devices");
    std::vector<vkllm_device_info> infos(n);
    for (auto &i : infos)
        i.struct_size = sizeof i;
    s = vkllm_devices_enumerate(infos.data(), n, &n);
    if (s != VKLLM_OK) return report(s, "listing devices");
    for (const auto &d : infos)
        print_device(d);
    return 0;
}

int cmd_self_check(const vkllm_runtime_params &params) {
    vkllm_runtime *rt = nullptr;
    vkllm_status s = vkllm_runtime_create(&params, &rt);
    if (s != VKLLM_OK) return report(s, "creating the runtime");
    vkllm_device_info d;
    d.struct_size = sizeof d;
    vkllm_runtime_device_info(rt, &d);
    std::printf("self-check on device %u: %s\n", d.index, d.name);
    vkllm_self_check_result r;
    r.struct_size = sizeof r;
    s = vkllm_runtime_self_check(rt, &r);
    vkllm_runtime_stats st;
    st.struct_size = sizeof st;
    vkllm_runtime_stats_get(rt, &st);
    vkllm_runtime_destroy(rt);
    if (s != VKLLM_OK) return report(s, "self-check");
    std::printf("%u kernels checked, %u failed, worst error %.3f of tolerance, %.1f ms\n",
                r.kernels_checked, r.kernels_failed, r.max_error, r.elapsed_ms);
    if (r.kernels_failed) std::printf("first failure: %s\n", r.first_failure);
    if (params.flags & VKLLM_RUNTIME_VALIDATION)
        std::printf("validation: %llu errors, %llu warnings\n",
                    (unsigned long long)st.validation_errors,
                    (unsigned long long)st.validation_warnings);
    return (r.kernels_failed || st.validation_errors) ? 1 : 0;
}

}  // namespace

int main(int argc, char **argv) {
    if (argc < 2) return usage(stderr);
    std::string cmd = argv[1];
    vkllm_runtime_params params;
    vkllm_runtime_params_init(&params);
    for (int i = 2; i < argc; ++i) {
        std::string a = argv[i];
        if (a == "--device" && i + 1 < argc) {
            const char *v = argv[++i];
            char *end = nullptr;
            long idx = std::strtol(v, &end, 10);
            if (*v && *end == '\0' && idx >= 0)
                params.device_index = int32_t(idx);
            else
                params.device_name = v;
        } else if (a == "--validate") {
            params.flags |= VKLLM_RUNTIME_VALIDATION;
        } else if (a == "--pipeline-cache" && i + 1 < argc) {
            params.pipeline_cache_path = argv[++i];
        } else {
            std::fprintf(stderr, "vkllm: unknown option %s\n", a.c_str());
            return usage(stderr);
        }
    }
    if (cmd == "devices") return cmd_devices();
    if (cmd == "self-check") return cmd_self_check(params);
    if (cmd == "version") {
        std::printf("vkllm %s\n", vkllm_version_string());
        return 0;
    }
    if (cmd == "-h" || cmd == "--help" || cmd == "help") return usage(stdout);
    std::fprintf(stderr, "vkllm: unknown command %s\n", cmd.c_str());
    return usage(stderr);
}
