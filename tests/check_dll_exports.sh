#!/bin/sh
# vkllm.dll exports only vkllm_* symbols (VKLLM_API's dllexport), and some of them, not the 0.1
# names 0.3 removed; it imports no vulkan-1.dll (Vulkan is loaded at run time through volk) and no
# mingw runtime DLL (linked in).
#   check_dll_exports.sh OBJDUMP DLL
set -u
objdump="$1"
dll="$2"
dump=$("$objdump" -p "$dll") || { echo "FAIL: $objdump -p $dll"; exit 1; }
# The export table's rows after "[Ordinal/Name Pointer] Table": "<tab>[   0] vkllm_chat_render".
names=$(echo "$dump" | sed -n '/^\[Ordinal\/Name Pointer\] Table/,/^$/p' |
    sed -n 's/^[[:space:]]\{1,\}\[ *[0-9]*\] //p')
status=0
extra=$(echo "$names" | grep -v '^vkllm_')
if [ -n "$extra" ]; then
    echo "FAIL: exported symbols outside vkllm_*:"; echo "$extra" | head -20; status=1
fi
count=$(echo "$names" | grep -c '^vkllm_')
[ "$count" -gt 0 ] || { echo "FAIL: no vkllm_* symbol exported"; status=1; }
for gone in vkllm_runtime_stats_get vkllm_runtime_device_info vkllm_gguf_close vkllm_gguf_summary \
    vkllm_model_tokenizer vkllm_model_chat_template vkllm_session_position \
    vkllm_session_layer_kv_bytes vkllm_session_profile; do
    if echo "$names" | grep -qx "$gone"; then
        echo "FAIL: $gone, a 0.1 name removed in 0.3, is still exported"; status=1
    fi
done
imports=$(echo "$dump" | sed -n 's/^[[:space:]]*DLL Name: //p')
if echo "$imports" | grep -qiE 'vulkan|libstdc|libgcc|winpthread'; then
    echo "FAIL: imports:"; echo "$imports"; status=1
fi
[ $status -eq 0 ] && echo "ok: $count vkllm_* symbols exported; imports $(echo $imports)"
exit $status
