#!/bin/sh
# Installs the build into a temporary prefix, checks the layout, then builds a small program
# against the installed files only, both through pkg-config and through find_package(vkllm),
# and runs both. Fails (never skips) when a piece is missing, pkg-config included.
# With the CLI built, runs the installed bin/vkllm with no LD_LIBRARY_PATH and no libvkllm.so.
#     run.sh CMAKE BUILD_DIR WORK_DIR C_COMPILER LIBDIR VERSION STATIC(ON/OFF) TOOLS(ON/OFF)
set -eu
cmake=$1 build=$2 work=$3 cc=$4 libdir=$5 version=$6 static=$7 tools=${8:-OFF}
here=$(cd "$(dirname "$0")" && pwd)
prefix=$work/prefix
soversion=${version%.*} # MAJOR.MINOR: the SONAME (CMakeLists.txt, VKLLM_SOVERSION)

. "$here/install_prefix.sh"
install_prefix

# The layout.
lib=$prefix/$libdir
for f in "$prefix/include/vkllm.h" "$lib/libvkllm.so.$version" "$lib/pkgconfig/vkllm.pc" \
    "$lib/cmake/vkllm/vkllmConfig.cmake" "$lib/cmake/vkllm/vkllmConfigVersion.cmake" \
    "$lib/cmake/vkllm/vkllmTargets.cmake"; do
    [ -f "$f" ] || fail "$f is not installed"
done
[ "$(readlink "$lib/libvkllm.so.$soversion")" = "libvkllm.so.$version" ] ||
    fail "libvkllm.so.$soversion is not a link to libvkllm.so.$version"
[ "$(readlink "$lib/libvkllm.so")" = "libvkllm.so.$soversion" ] ||
    fail "libvkllm.so is not a link to libvkllm.so.$soversion"
readelf -d "$lib/libvkllm.so.$version" | grep -q "SONAME.*\[libvkllm.so.$soversion\]" ||
    fail "the SONAME of libvkllm.so.$version is not libvkllm.so.$soversion"
case $static in
ON | on | 1 | TRUE | true) [ -f "$lib/libvkllm.a" ] || fail "libvkllm.a is not installed (VKLLM_STATIC)" ;;
*) [ ! -e "$lib/libvkllm.a" ] || fail "libvkllm.a is installed without VKLLM_STATIC" ;;
esac
echo "installed: include/vkllm.h, $libdir/libvkllm.so{,.$soversion,.$version}, vkllm.pc, CMake package"

# pkg-config.
command -v pkg-config >/dev/null || fail "pkg-config is not installed (scripts/deps.sh)"
export PKG_CONFIG_PATH="$lib/pkgconfig"
got=$(pkg-config --modversion vkllm) || fail "pkg-config does not find vkllm.pc"
[ "$got" = "$version" ] || fail "pkg-config --modversion vkllm is $got, not $version"
flags=$(pkg-config --cflags --libs vkllm)
echo "pkg-config --cflags --libs vkllm: $flags"
# shellcheck disable=SC2086
"$cc" -std=c99 -Wall -Wextra -Werror "$here/consumer.c" $flags -o "$work/consumer-pkg-config" ||
    fail "building with pkg-config's flags"
out=$(LD_LIBRARY_PATH="$lib" "$work/consumer-pkg-config") || fail "the pkg-config consumer"
echo "pkg-config consumer: $out"
[ "$out" = "vkllm $version (header $version)" ] || fail "unexpected output: $out"

# find_package(vkllm): no LD_LIBRARY_PATH, CMake's build RPATH finds the installed library.
"$cmake" -S "$here" -B "$work/cmake-build" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" \
    -DCMAKE_C_COMPILER="$cc" >"$work/cmake.log" 2>&1 || {
    cat "$work/cmake.log"
    fail "configuring the find_package(vkllm) consumer"
}
grep -q "vkllm $version from $lib/cmake/vkllm" "$work/cmake.log" ||
    fail "find_package(vkllm) did not find the installed package: $(cat "$work/cmake.log")"
"$cmake" --build "$work/cmake-build" >"$work/build.log" 2>&1 || {
    cat "$work/build.log"
    fail "building the find_package(vkllm) consumer"
}
out=$("$work/cmake-build/consumer") || fail "the find_package consumer"
echo "find_package consumer: $out"
[ "$out" = "vkllm $version (header $version)" ] || fail "unexpected output: $out"
ldd "$work/cmake-build/consumer" | grep -q "libvkllm.so.$soversion => $lib/" ||
    fail "the find_package consumer does not use the installed library: $(ldd "$work/cmake-build/consumer")"

# The installed CLI (when built) carries the library (it links the static archive): it runs
# with no LD_LIBRARY_PATH, names no libvkllm among its needed libraries and has no RUNPATH to
# find one, and runs copied out of the prefix.
case $tools in
ON | on | 1 | TRUE | true)
    cli=$prefix/bin/vkllm
    [ -x "$cli" ] || fail "bin/vkllm is not installed"
    out=$(env -u LD_LIBRARY_PATH "$cli" --version 2>&1) || fail "$cli --version: $out"
    echo "installed CLI: $out"
    case $out in
    *"$version"*) ;;
    *) fail "$cli --version does not print $version: $out" ;;
    esac
    if readelf -d "$cli" | grep NEEDED | grep -q libvkllm; then
        fail "the installed CLI needs libvkllm at run time: $(readelf -d "$cli" | grep NEEDED)"
    fi
    if readelf -d "$cli" | grep -Eq 'RPATH|RUNPATH'; then
        fail "the installed CLI has a search path it does not need: $(readelf -d "$cli" | grep -E 'RPATH|RUNPATH')"
    fi
    mkdir -p "$work/elsewhere"
    cp "$cli" "$work/elsewhere/vkllm"
    out=$(env -u LD_LIBRARY_PATH "$work/elsewhere/vkllm" --version 2>&1) ||
        fail "the CLI copied out of the prefix: $out"
    ;;
esac

rm -rf "$work"
echo "PASS: installed vkllm works through pkg-config, find_package(vkllm) and bin/vkllm"
