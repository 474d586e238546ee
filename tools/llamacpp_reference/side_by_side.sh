#!/bin/bash
# Device-machine check for issue 28: kernel tests under validation, self-check, then vkllm and
# llama.cpp (node-llama-cpp 3.22.1's prebuilt Vulkan libraries) side by side on the same files.
# QUICK=1: a dry run on lavapipe with small sizes.
# The device machine has no compiler for vkllm and no node: everything travels as a payload made
# on the build machine (from the repository root; .gpu/ and .gl/ are in .git/info/exclude):
#   mkdir -p .gpu/bin .gpu/vl .gpu/ll; cp build/vkllm build/tests/test_kernels .gpu/bin/
#   cp build/libvkllm.so.0.* .gpu/bin/libvkllm.so.0; cp /usr/lib/x86_64-linux-gnu/libedit.so.2 .gpu/bin/
#   (the validation layer's .so and its json with "library_path" made relative, into .gpu/vl;
#    node-llama-cpp's linux-x64-vulkan libraries and llama_bench.c built as its header says, .gpu/ll)
#   tar -cJf .gpu/payload.tar.xz -C .gpu bin vl ll; cp tools/llamacpp_reference/side_by_side.sh .gpu/run.sh
# and the Vulkan loader's packages into .gl (the device tool's README); then, on the device:
#   bash .gpu/run.sh     (carry .gl, .gpu/payload.tar.xz, .gpu/run.sh). BENCHMARKS.md has the results.
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
G=$(cd "$(dirname "$0")" && pwd)
W=${WORK:-/tmp/w}; mkdir -p "$W"
exec > >(tee "$OUT/log.txt") 2>&1
T0=$(date +%s)
stamp() { echo "== [$(( $(date +%s) - T0 )) s] $*"; }
if [ -d .gl ]; then for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig; fi
[ -d "$G/bin" ] || tar -xJf "$G/payload.tar.xz" -C "$G"
export LD_LIBRARY_PATH="$G/bin${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export VK_LAYER_PATH="$G/vl"
V="$G/bin/vkllm"; L="$G/ll/llama_bench"
if [ "${QUICK:-0}" = 1 ]; then LAY="--layers 1"; OSS=1; P=16; N=4; R=1; TK="--gtest_filter=*Rope*"
  export GGML_VK_VISIBLE_DEVICES=0
else LAY=""; OSS=3; P=512; N=128; R=3; TK=""; fi
stamp setup; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv 2>&1 | tail -2
if ! "$V" devices; then
  export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
  export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
  if ! "$V" devices; then
    ls -la /usr/local/nvidia/share/vulkan/icd.d/ /usr/share/vulkan/icd.d/ 2>&1; cat "$VK_DRIVER_FILES"
    VK_LOADER_DEBUG=error,warn "$V" devices 2>&1 | tail -20; exit 1
  fi
fi
stamp "models (in the background) + kernel tests"
mk() { [ -f "$W/$3.gguf" ] || "$V" make-model --preset "$1" --type "$2" $LAY "$W/$3.gguf" >/dev/null 2>&1 || echo "make-model $3 failed"; }
pids=""; mk qwen2.5-0.5b Q8_0 q05-Q8_0 & pids="$pids $!"; mk qwen2.5-0.5b F16 q05-F16 & pids="$pids $!"; mk qwen2.5-0.5b Q4_K_M q05-Q4_K_M & pids="$pids $!"
mk llama-3.2-1b Q8_0 l1b-Q8_0 & pids="$pids $!"; mk llama-3.2-1b F16 l1b-F16 & pids="$pids $!"
mk llama-3.2-1b Q4_K_M l1b-Q4_K_M & pids="$pids $!"
[ -f "$W/oss3.gguf" ] || "$V" make-model --preset gpt-oss-20b --type MXFP4 --layers $OSS "$W/oss3.gguf" >/dev/null 2>&1 & pids="$pids $!"
timeout 200 "$G/bin/test_kernels" --gtest_brief=1 $TK 2>&1 | tail -15; echo "test_kernels rc ${PIPESTATUS[0]}"
timeout 60 "$V" self-check 2>&1 | tail -8
timeout 60 "$G/bin/test_vulkan11" --gtest_brief=1 --gtest_filter='Vulkan11.*' 2>&1 | tail -8
VKLLM_VULKAN_API_VERSION=1.1 timeout 60 "$V" self-check 2>&1 | tail -3
wait $pids; ls -la "$W"  # never a bare wait: it would wait for the tee above
stamp "side by side: vkllm bench, then llama.cpp Vulkan, per file"
for m in q05-Q8_0 q05-F16 q05-Q4_K_M l1b-Q8_0 l1b-F16 l1b-Q4_K_M; do
  timeout 90 "$V" bench -m "$W/$m.gguf" -p $P -n $N -r $R 2>&1 | grep -v "^$"
  timeout 120 "$L" "$W/$m.gguf" -p $P -n $N -r $R --backends "$G/ll" 2>&1 | tail -2
done
stamp "chained, batched, profile (qwen2.5-0.5b Q8_0)"
timeout 60 "$V" bench -m "$W/q05-Q8_0.gguf" -p 0 -n $N -r $R --chain 16 2>&1 | grep -v "^$"
timeout 60 "$V" bench -m "$W/l1b-Q8_0.gguf" -p 0 -n $N -r $R --chain 16 2>&1 | grep -v "^$"
timeout 60 "$V" bench -m "$W/q05-Q8_0.gguf" -p 64 -n $N -r $R -s 8 2>&1 | grep -v "^$"
timeout 60 "$V" bench -m "$W/q05-Q8_0.gguf" -p $P -n 64 -r 1 --profile 2>&1 | grep -v "^$" | head -60
stamp "gpt-oss-20b, 3 layers, MXFP4"
timeout 90 "$V" bench -m "$W/oss3.gguf" -p $P -n $N -r 2 2>&1 | grep -v "^$"
timeout 120 "$L" "$W/oss3.gguf" -p $P -n $N -r 2 --backends "$G/ll" 2>&1 | tail -2
stamp done
