#!/bin/sh
# The shared library exports only vkllm_* symbols, carries SONAME libvkllm.so.MAJOR.MINOR (the
# ABI may change between minor versions while MAJOR is 0), does not link libvulkan (Vulkan is
# loaded at run time through volk), and no longer exports the 0.1 names that 0.3 removed.
#     check_exports.sh LIBRARY SOVERSION
set -u
lib="$1"
soversion="$2"
status=0
symbols=$(nm -D --defined-only "$lib" | awk '{print $3}')
extra=$(echo "$symbols" | grep -v '^vkllm_' | grep -vE '^(_init|_fini|_edata|_end|__bss_start)$')
if [ -n "$extra" ]; then
    echo "FAIL: exported symbols outside vkllm_*:"; echo "$extra" | head -20; status=1
fi
count=$(echo "$symbols" | grep -c '^vkllm_')
[ "$count" -gt 0 ] || { echo "FAIL: no vkllm_* symbol exported"; status=1; }
readelf -d "$lib" | grep -q "SONAME.*\[libvkllm\.so\.$soversion\]" ||
    { echo "FAIL: SONAME is not libvkllm.so.$soversion"; status=1; }
if readelf -d "$lib" | grep NEEDED | grep -qi vulkan; then
    echo "FAIL: links libvulkan:"; readelf -d "$lib" | grep NEEDED; status=1
fi
for gone in vkllm_runtime_stats_get vkllm_runtime_device_info vkllm_gguf_close vkllm_gguf_summary \
    vkllm_model_tokenizer vkllm_model_chat_template vkllm_session_position \
    vkllm_session_layer_kv_bytes vkllm_session_profile; do
    if echo "$symbols" | grep -qx "$gone"; then
        echo "FAIL: $gone, a 0.1 name removed in 0.3, is still exported"; status=1
    fi
done
[ $status -eq 0 ] && echo "ok: $count vkllm_* symbols, SONAME libvkllm.so.$soversion, no libvulkan, no 0.1 names"
exit $status
