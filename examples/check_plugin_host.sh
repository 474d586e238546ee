#!/bin/sh
# Test of examples/plugin_host: the binary must not be linked with libvkllm (no NEEDED entry),
# must run the library it is given through dlopen, and must print the same text as
# examples/generate, which is linked with it.
#     check_plugin_host.sh PLUGIN_HOST GENERATE LIBRARY MODEL
set -u
host=$1 generate=$2 library=$3 model=$4
if ! readelf -d "$host" >/dev/null; then
    echo "FAIL: readelf cannot read $host"
    exit 1
fi
if readelf -d "$host" | grep NEEDED | grep -q libvkllm; then
    echo "FAIL: $host is linked with libvkllm:"
    readelf -d "$host" | grep NEEDED
    exit 1
fi
linked=$("$generate" "$model" "Hello world" 8 2>/dev/null) || { echo "FAIL: generate"; exit 1; }
loaded=$("$host" "$library" "$model" "Hello world" 8) || { echo "FAIL: plugin_host"; exit 1; }
if [ "$linked" != "$loaded" ]; then
    echo "FAIL: plugin_host printed '$loaded', generate '$linked'"
    exit 1
fi
case $loaded in
"Hello world"?*) ;;
*) echo "FAIL: no generated text after the prompt: '$loaded'"; exit 1 ;;
esac
# Through $VKLLM_LIBRARY too.
VKLLM_LIBRARY=$library "$host" "$model" "Hello world" 8 >/dev/null || {
    echo "FAIL: plugin_host with VKLLM_LIBRARY"
    exit 1
}
echo "PASS: plugin_host is not linked with libvkllm and generates the same text as generate"
