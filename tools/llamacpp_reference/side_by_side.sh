#!/bin/bash
# One call on a GPU machine, within 8 minutes: the cooperative-matrix kernel tests under the
# validation layer, `vkllm self-check`, `vkllm devices` (its coopmat line), then pp512/tg128 of
# vkllm and of llama.cpp's Vulkan backend (node-llama-cpp 3.22.1's prebuilt libraries, driven
# by llama_bench.c) on the same seven files, each vkllm run followed by llama.cpp's; then, per
# file while the budget lasts, tg128 chained (16 greedy steps a submit), `vkllm tune` (its
# summary kept) and tg128 with the tuned kernels, unchained and chained; a --profile of the
# prefill and one of the tuned decode name the kernel of every dispatch. Writes
# $OUT/side_by_side.json (vkllm bench's JSON rows, with FLOPs per token and TFLOPS, the tuning
# summaries and llama.cpp's figures beside them), $OUT/side_by_side.md (the tables for
# docs/BENCHMARKS.md) and $OUT/log.txt.
#
# QUICK=1: the dry run, ~2 minutes on lavapipe: one one-layer file, pp64/tg16 (and tuned), the
# coopmat kernel tests listed rather than run (Coopmat.KernelSuites runs them). CI runs it on Mesa 26's
# lavapipe (GpuScript.QuickDryRunOnLavapipe26 in tests/coopmat.cmake) so that it cannot rot.
#
# Where the programs are (defaults: the payload layout below, beside this script):
#   VKLLM_CLI, VKLLM_TEST_KERNELS   vkllm and tests/test_kernels ($G/bin/...)
#   LLAMA_BENCH, LLAMA_BACKENDS     llama_bench and the directory of its backends ($G/ll/...);
#                                   without llama_bench the llama.cpp columns are empty
#   VKLLM_RUNNER                    a command that runs each Vulkan program (CI: scripts/mesa26
#                                   run --, for Debian 13's lavapipe and validation layer)
#   OUT, WORK                       results (default /tmp/out) and the made models (/tmp/w)
#
# The device machine has no compiler for vkllm and no node: everything travels as a payload made
# on the build machine (from the repository root; .gpu/ and .gl/ are in .git/info/exclude):
#   mkdir -p .gpu/bin .gpu/vl .gpu/ll; cp build/vkllm build/tests/test_kernels .gpu/bin/
#   cp build/libvkllm.so.0.3.* .gpu/bin/libvkllm.so.0.3; cp /usr/lib/x86_64-linux-gnu/libedit.so.2 .gpu/bin/
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
elapsed() { echo $(( $(date +%s) - T0 )); }
stamp() { echo "== [$(elapsed) s] $*"; }
if [ -d .gl ]; then for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig; fi
[ -d "$G/bin" ] || [ ! -f "$G/payload.tar.xz" ] || tar -xJf "$G/payload.tar.xz" -C "$G"
[ -d "$G/bin" ] && export LD_LIBRARY_PATH="$G/bin${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
[ -d "$G/vl" ] && export VK_LAYER_PATH="$G/vl"
V=${VKLLM_CLI:-$G/bin/vkllm}
TK=${VKLLM_TEST_KERNELS:-$G/bin/test_kernels}
L=${LLAMA_BENCH:-$G/ll/llama_bench}
LB=${LLAMA_BACKENDS:-$(dirname "$L")}
# shellcheck disable=SC2206 # a command and its arguments
R=(${VKLLM_RUNNER:-})
COOPMAT_TESTS='MatmulCoopmat*:AttentionCoopmat*'
if [ "${QUICK:-0}" = 1 ]; then
  LAY="--layers 1"; OSS=1; P=64; N=16; REPS=1; FILES="q05-Q8_0"; BUDGET=120; TUNE_BUDGET=150
  export GGML_VK_VISIBLE_DEVICES=0
else
  # The files of the decode goals first (issue 39: Qwen2.5-0.5B Q8_0, Llama-3.2-1B Q4_K_M and
  # the 3-layer GPT-OSS), so that tuning reaches them within the budget.
  LAY=""; OSS=3; P=512; N=128; REPS=3; BUDGET=300; TUNE_BUDGET=400
  FILES="q05-Q8_0 l1b-Q4_K_M oss3 q05-F16 q05-Q4_K_M l1b-Q8_0 l1b-F16"
fi

stamp setup
command -v nvidia-smi >/dev/null &&
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv 2>&1 | tail -2
if ! ${R[@]+"${R[@]}"} "$V" devices >"$W/devices.txt" 2>&1; then
  export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
  export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
  if ! ${R[@]+"${R[@]}"} "$V" devices >"$W/devices.txt" 2>&1; then
    cat "$W/devices.txt"
    ls -la /usr/local/nvidia/share/vulkan/icd.d/ /usr/share/vulkan/icd.d/ 2>&1; cat "$VK_DRIVER_FILES"
    VK_LOADER_DEBUG=error,warn ${R[@]+"${R[@]}"} "$V" devices 2>&1 | tail -20; exit 1
  fi
fi
cat "$W/devices.txt"
device=$(sed -n 's/^0: //p' "$W/devices.txt" | head -n 1)
coopmat=$(grep -i -m 1 'coop' "$W/devices.txt" | sed 's/^ *//')
echo "coopmat: ${coopmat:-(vkllm devices prints no cooperative-matrix line)}"

stamp "models (in the background), coopmat kernel tests, self-check"
mk() { [ -f "$W/$3.gguf" ] || "$V" make-model --preset "$1" --type "$2" $4 "$W/$3.gguf" >/dev/null 2>&1 ||
  echo "make-model $3 failed"; }
pids=""
for f in $FILES; do
  case $f in
  q05-*) mk qwen2.5-0.5b "${f#q05-}" "$f" "$LAY" & pids="$pids $!" ;;
  l1b-*) mk llama-3.2-1b "${f#l1b-}" "$f" "$LAY" & pids="$pids $!" ;;
  oss3) mk gpt-oss-20b MXFP4 oss3 "--layers $OSS" & pids="$pids $!" ;;
  esac
done
if [ "${QUICK:-0}" = 1 ]; then
  ${R[@]+"${R[@]}"} "$TK" --gtest_list_tests --gtest_filter="$COOPMAT_TESTS" >"$W/kernels.txt" 2>&1
  kt_rc=$?; kt_summary="$(grep -c '^  ' "$W/kernels.txt") coopmat kernel tests listed (QUICK: not run)"
else
  timeout 150 ${R[@]+"${R[@]}"} "$TK" --gtest_brief=1 --gtest_filter="$COOPMAT_TESTS" >"$W/kernels.txt" 2>&1
  kt_rc=$?; tail -15 "$W/kernels.txt"
  kt_summary=$(grep -E '^\[==========\] [0-9]+ tests? from' "$W/kernels.txt" | tail -n 1)
fi
echo "coopmat kernel tests: rc $kt_rc, ${kt_summary:-no summary}"
timeout 90 ${R[@]+"${R[@]}"} "$V" self-check >"$W/self_check.txt" 2>&1
sc_rc=$?; tail -8 "$W/self_check.txt"; echo "self-check rc $sc_rc"
# shellcheck disable=SC2086 # a list of ids
wait $pids; ls -la "$W"  # never a bare wait: it would wait for the tee above

stamp "side by side: vkllm bench, then llama.cpp Vulkan, per file"
# Field NAME of a JSON row (numbers and strings only).
field() { sed -n "s/.*\"$1\": \"\\{0,1\\}\\([^,\"}]*\\).*/\\1/p" <<<"$2"; }
# A string for a JSON value.
esc() { sed 's/\\/\\\\/g; s/"/\\"/g' <<<"$1" | awk '{ printf "%s%s", (NR > 1 ? "\\n" : ""), $0 }'; }
runs=""; table=""; tuned_table=""
for f in $FILES; do
  if [ "$(elapsed)" -gt "$BUDGET" ]; then echo "$f: skipped (past the ${BUDGET} s budget)"; continue; fi
  reps=$REPS; [ "$f" = oss3 ] && [ "$REPS" -gt 2 ] && reps=2
  # The whole prompt in one chunk, as llama-bench's 512-token micro-batch takes pp512 (the
  # library's default chunk of 64 rows is lavapipe's; one M tile of the matmul on a GPU).
  rows=$(timeout 90 ${R[@]+"${R[@]}"} "$V" bench -m "$W/$f.gguf" -p $P -n $N -r $reps -b $P --json 2>"$W/$f.err")
  echo "$rows"; [ -s "$W/$f.err" ] && tail -3 "$W/$f.err"
  pp=$(grep "\"test\": \"pp$P\"" <<<"$rows"); tg=$(grep "\"test\": \"tg$N\"" <<<"$rows")
  ll=""
  [ -x "$L" ] && ll=$(timeout 120 ${R[@]+"${R[@]}"} "$L" "$W/$f.gguf" -p $P -n $N -r $reps --backends "$LB" 2>&1 | tail -1)
  echo "${ll:-llama.cpp: no llama_bench ($L)}"
  # "... pp512 13788.12 ± 20.01 tok/s, tg128 669.10 ± 12.00 tok/s"
  lpp=$(sed -n "s/.* pp$P \\([0-9.]*\\) ± \\([0-9.]*\\) tok\\/s,.*/\\1 \\2/p" <<<"$ll")
  ltg=$(sed -n "s/.* tg$N \\([0-9.]*\\) ± \\([0-9.]*\\) tok\\/s.*/\\1 \\2/p" <<<"$ll")
  read -r lpp_m lpp_s <<<"${lpp:-null null}"; read -r ltg_m ltg_s <<<"${ltg:-null null}"
  # Decode chained, then tuned (unchained and chained), each tg row of vkllm bench's JSON.
  tgc=""; tgt=""; tgtc=""; tune_rc=null; tune_sum=""
  if [ "$(elapsed)" -le "$TUNE_BUDGET" ]; then
    tgn() { timeout 90 ${R[@]+"${R[@]}"} "$V" bench -m "$W/$f.gguf" -p 0 -n $N -r $reps --json "$@" \
      2>>"$W/$f.err" | grep -E "\"test\": \"tg$N( chain[0-9]+)?\""; }
    tgc=$(tgn --chain 16)
    timeout 150 ${R[@]+"${R[@]}"} "$V" tune -m "$W/$f.gguf" --pipeline-cache "$W/$f.cache" >"$W/$f.tune.txt" 2>&1
    tune_rc=$?; tune_sum=$(grep -E '^(tuned|decode matrix-vector)' "$W/$f.tune.txt"); echo "$tune_sum"
    tgt=$(tgn --pipeline-cache "$W/$f.cache"); tgtc=$(tgn --pipeline-cache "$W/$f.cache" --chain 16)
    echo "${tgc:-no chained row}"; echo "${tgt:-no tuned row}"; echo "${tgtc:-no tuned chained row}"
  else
    echo "$f: tuning skipped (past the ${TUNE_BUDGET} s budget)"
  fi
  runs="$runs${runs:+,}
  {\"file\": \"$f\", \"vkllm\": [${pp:-null}, ${tg:-null}], \"vkllm_tg_chained\": ${tgc:-null}, \"vkllm_tg_tuned\": ${tgt:-null}, \"vkllm_tg_tuned_chained\": ${tgtc:-null}, \"tune\": {\"rc\": $tune_rc, \"summary\": \"$(esc "$tune_sum")\"}, \"llama_cpp\": {\"pp_ts\": $lpp_m, \"pp_sd\": $lpp_s, \"tg_ts\": $ltg_m, \"tg_sd\": $ltg_s}}"
  table="$table$(awk -v f="$f" -v pp="$(field avg_ts "$pp") $(field stddev_ts "$pp")" \
    -v fl="$(field flops_per_token "$pp")" -v tg="$(field avg_ts "$tg") $(field stddev_ts "$tg")" \
    -v lpp="$lpp_m $lpp_s" -v ltg="$ltg_m $ltg_s" 'function ts(s, a) { split(s, a, " ");
      return a[1] == "" || a[1] == "null" ? "" : sprintf("%.0f ± %.0f", a[1], a[2]) }
    function ratio(x, y, a, b) { split(x, a, " "); split(y, b, " ");
      return a[1] == "" || b[1] == "" || b[1] == "null" || b[1] == 0 ? "" : sprintf("%.2f", a[1] / b[1]) }
    function tf(s, a) { split(s, a, " ");
      return a[1] == "" || a[1] == "null" || fl == "" ? "" : sprintf("%.3g", a[1] * fl / 1e12) }
    BEGIN { printf "\n| %s | %.3g | %s | %s | %s | %s | %s | %s | %s | %s |", f, fl / 1e9, ts(pp),
      tf(pp), ts(lpp), tf(lpp), ratio(pp, lpp), ts(tg), ts(ltg), ratio(tg, ltg) }')"
  tuned_table="$tuned_table$(awk -v f="$f" -v tg="$(field avg_ts "$tg") $(field stddev_ts "$tg")" \
    -v c="$(field avg_ts "$tgc") $(field stddev_ts "$tgc")" -v t="$(field avg_ts "$tgt") $(field stddev_ts "$tgt")" \
    -v tc="$(field avg_ts "$tgtc") $(field stddev_ts "$tgtc")" -v ltg="$ltg_m $ltg_s" \
    -v us="$(sed -n 's/.*: \([0-9.]* us -> [0-9.]* us\).*/\1/p' <<<"$tune_sum")" 'function ts(s, a) { split(s, a, " ");
      return a[1] == "" || a[1] == "null" ? "" : sprintf("%.0f ± %.0f", a[1], a[2]) }
    function ratio(x, y, a, b) { split(x, a, " "); split(y, b, " ");
      return a[1] == "" || b[1] == "" || b[1] == "null" || b[1] == 0 ? "" : sprintf("%.2f", a[1] / b[1]) }
    BEGIN { printf "\n| %s | %s | %s | %s | %s | %s | %s | %s | %s |", f, ts(tg), ts(c), ts(t), ts(tc),
      ts(ltg), ratio(t, ltg), ratio(tc, ltg), us }')"
done

stamp "profile of the prefill (the kernel of every dispatch), qwen2.5-0.5b Q8_0"
profile=""
if [ "$(elapsed)" -le "$BUDGET" ]; then
  profile=$(timeout 60 ${R[@]+"${R[@]}"} "$V" bench -m "$W/q05-Q8_0.gguf" -p $P -n 0 -r 1 --profile 2>&1 |
    sed -n "/^pp$P: device time per token/,/^| all kernels/p")
  echo "$profile"
fi
dprofile=""
if [ "$(elapsed)" -le "$TUNE_BUDGET" ] && [ -f "$W/q05-Q8_0.cache.tune" ]; then
  dprofile=$(timeout 60 ${R[@]+"${R[@]}"} "$V" bench -m "$W/q05-Q8_0.gguf" -p 0 -n 16 -r 1 --profile \
    --pipeline-cache "$W/q05-Q8_0.cache" 2>&1 | sed -n "/^tg16: device time per token/,/^| all kernels/p")
  echo "$dprofile"
fi

cat >"$OUT/side_by_side.json" <<EOF
{"device": "$(esc "$device")", "coopmat": "$(esc "$coopmat")", "quick": ${QUICK:-0},
 "coopmat_kernel_tests": {"rc": $kt_rc, "summary": "$(esc "$kt_summary")"},
 "self_check": {"rc": $sc_rc, "summary": "$(esc "$(tail -n 1 "$W/self_check.txt")")"},
 "n_prompt": $P, "n_gen": $N, "runs": [$runs
 ]}
EOF
{
  echo "Device: $device. Cooperative matrices: ${coopmat:-none reported}."
  echo "Coopmat kernel tests: rc $kt_rc, $kt_summary. self-check: rc $sc_rc."
  echo
  echo "| file | GFLOP/token pp$P | vkllm pp$P | TFLOPS | llama.cpp pp$P | TFLOPS | ratio | vkllm tg$N | llama.cpp tg$N | ratio |"
  echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|$table"
  echo
  echo "| file | tg$N | chained | tuned | tuned chained | llama.cpp tg$N | tuned ratio | tuned chained ratio | matvec us/token default -> tuned |"
  echo "|---|---:|---:|---:|---:|---:|---:|---:|---|$tuned_table"
  [ -n "$profile" ] && printf '\nqwen2.5-0.5b Q8_0, %s\n' "$profile"
  [ -n "$dprofile" ] && printf '\nqwen2.5-0.5b Q8_0, tuned, %s\n' "$dprofile"
} >"$OUT/side_by_side.md"
cat "$OUT/side_by_side.md"
stamp done
[ "$kt_rc" = 0 ] && [ "$sc_rc" = 0 ] && [ -n "$table" ]
