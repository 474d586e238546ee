#!/bin/sh
# The shared library exports only vkllm_* symbols, carries SONAME libvkllm.so.0, and does
# not link libvulkan (Vulkan is loaded at run time through volk).
set -u
lib="$1"
status=0
extra=$(nm -D --defined-only "$lib" | awk '{print $3}' | grep -v '^vkllm_' | grep -vE '^(_init|_fini|_edata|_end|__bss_start)$')
if [ -n "$extra" ]; then
    echo "FAIL: exported symbols outside vkllm_*:"; echo "$extra" | head -20; status=1
fi
count=$(nm -D --defined-only "$lib" | awk '{print $3}' | grep -c '^vkllm_')
[ "$count" -gt 0 ] || { echo "FAIL: no vkllm_* symbol exported"; status=1; }
readelf -d "$lib" | grep -q 'SONAME.*\[libvkllm\.so\.0\]' || { echo "FAIL: SONAME is not libvkllm.so.0"; status=1; }
if readelf -d "$lib" | grep NEEDED | grep -qi vulkan; then
    echo "FAIL: links libvulkan:"; readelf -d "$lib" | grep NEEDED; status=1
fi
[ $status -eq 0 ] && echo "ok: $count vkllm_* symbols, SONAME libvkllm.so.0, no libvulkan"
exit $status
