#!/bin/sh
# The Windows build's install tree, as a mingw-w64 application uses it: installs into a
# temporary prefix, checks the layout (vkllm.dll in bin/, its import library in lib/) and that
# the package files name no path of this machine, then builds tests/install_consumer/consumer.c
# against the installed files only, through pkg-config (PKG_CONFIG_LIBDIR at the prefix only)
# and through find_package(vkllm) with the mingw toolchain file, and runs both under Wine: the
# first with vkllm.dll copied beside it, the second with the prefix's bin/ on WINEPATH, as an
# application ships the DLL or finds it on PATH. With the CLI built, runs the installed
# bin/vkllm.exe copied out of the prefix: it links the library in and imports no vkllm.dll.
# With VKLLM_STATIC, builds one linked with libvkllm.a through vkllm-static.pc, run likewise.
#     mingw.sh CMAKE BUILD_DIR WORK_DIR C_COMPILER TOOLCHAIN_FILE LIBDIR VERSION WINE OBJDUMP
#              STATIC(ON/OFF) TOOLS(ON/OFF)
set -eu
cmake=$1 build=$2 work=$3 cc=$4 toolchain=$5 libdir=$6 version=$7 wine=$8 objdump=$9
static=${10} tools=${11}
here=$(cd "$(dirname "$0")" && pwd)
source_dir=$(cd "$here/../.." && pwd)
prefix=$work/prefix
lib=$prefix/$libdir
expected="vkllm $version (header $version)"

. "$here/install_prefix.sh"
install_prefix

# The layout: Windows finds a DLL beside the program or on PATH (bin/), the linker finds the
# import library in lib/; neither is in the other's place.
for f in "$prefix/bin/vkllm.dll" "$lib/libvkllm.dll.a" "$prefix/include/vkllm.h" \
    "$lib/pkgconfig/vkllm.pc" "$lib/cmake/vkllm/vkllmConfig.cmake" \
    "$lib/cmake/vkllm/vkllmConfigVersion.cmake" "$lib/cmake/vkllm/vkllmTargets.cmake"; do
    [ -f "$f" ] || fail "$f is not installed"
done
for f in "$lib/vkllm.dll" "$prefix/bin/libvkllm.dll.a" "$lib/libvkllm.so"; do
    [ ! -e "$f" ] || fail "$f is installed"
done
echo "installed: bin/vkllm.dll, $libdir/libvkllm.dll.a, include/vkllm.h, vkllm.pc, CMake package"

case $static in
ON | on | 1 | TRUE | true)
    for f in "$lib/libvkllm.a" "$lib/pkgconfig/vkllm-static.pc"; do
        [ -f "$f" ] || fail "$f is not installed (VKLLM_STATIC)"
    done
    ;;
*)
    for f in "$lib/libvkllm.a" "$lib/pkgconfig/vkllm-static.pc"; do
        [ ! -e "$f" ] || fail "$f is installed without VKLLM_STATIC"
    done
    ;;
esac

# Relocatable: the package files know the prefix from their own place, never the build's, the
# sources' or the mingw sysroot's folders.
for f in "$lib"/pkgconfig/*.pc "$lib"/cmake/vkllm/*.cmake; do
    for host in "$build" "$source_dir" "$prefix" /usr/x86_64-w64-mingw32; do
        if grep -n -F "$host" "$f"; then
            fail "$f names $host"
        fi
    done
done

# Runs a program under Wine, failing on a non-zero exit (consumer.c's failed assertions), with
# its output in $out (Wine prints a console program's "\n" as "\r\n").
run() {
    raw=$("$wine" "$@") || fail "$* exited with status $? under Wine: $raw"
    out=$(printf '%s' "$raw" | tr -d '\r')
}

# pkg-config, with only the prefix's .pc files (none of the host's, none of the sysroot's).
command -v pkg-config >/dev/null || fail "pkg-config is not installed (scripts/deps.sh)"
export PKG_CONFIG_LIBDIR="$lib/pkgconfig" PKG_CONFIG_PATH=
got=$(pkg-config --modversion vkllm) || fail "pkg-config does not find vkllm.pc"
[ "$got" = "$version" ] || fail "pkg-config --modversion vkllm is $got, not $version"
flags=$(pkg-config --cflags --libs vkllm)
echo "pkg-config --cflags --libs vkllm: $flags"
# vkllm.h marks the functions dllimport only with VKLLM_SHARED.
case " $(pkg-config --cflags vkllm) " in
*" -DVKLLM_SHARED "*) ;;
*) fail "pkg-config --cflags vkllm does not define VKLLM_SHARED" ;;
esac
mkdir -p "$work/pkg-config"
# shellcheck disable=SC2086
"$cc" -std=c99 -Wall -Wextra -Werror "$here/consumer.c" $flags -o "$work/pkg-config/consumer.exe" ||
    fail "building with pkg-config's flags"
cp "$prefix/bin/vkllm.dll" "$work/pkg-config/"
run "$work/pkg-config/consumer.exe"
echo "pkg-config consumer: $out"
[ "$out" = "$expected" ] || fail "unexpected output: $out"

# A program with the library linked in (-static: the C++ runtime too), which needs no DLL.
no_vkllm_dll() {
    if "$objdump" -p "$1" | grep -i "DLL Name: vkllm"; then
        fail "$1 needs vkllm.dll at run time"
    fi
    mkdir -p "$work/elsewhere"
    cp "$1" "$work/elsewhere/"
}
case $static in
ON | on | 1 | TRUE | true)
    flags=$(pkg-config --cflags --libs vkllm-static) || fail "pkg-config does not find vkllm-static.pc"
    echo "pkg-config --cflags --libs vkllm-static: $flags"
    # shellcheck disable=SC2086
    "$cc" -static -std=c99 -Wall -Wextra -Werror "$here/consumer.c" $flags \
        -o "$work/consumer-static.exe" || fail "building with vkllm-static.pc's flags"
    no_vkllm_dll "$work/consumer-static.exe"
    run "$work/elsewhere/consumer-static.exe"
    echo "vkllm-static.pc consumer: $out"
    [ "$out" = "$expected" ] || fail "unexpected output: $out"
    ;;
esac

# find_package(vkllm) with the toolchain file, which searches for packages under the mingw
# sysroot only: vkllm_DIR names the installed package.
"$cmake" -S "$here" -B "$work/cmake-build" -G Ninja -DCMAKE_TOOLCHAIN_FILE="$toolchain" \
    -DCMAKE_BUILD_TYPE=Release -Dvkllm_DIR="$lib/cmake/vkllm" >"$work/cmake.log" 2>&1 || {
    cat "$work/cmake.log"
    fail "configuring the find_package(vkllm) consumer"
}
grep -q "vkllm $version from $lib/cmake/vkllm" "$work/cmake.log" ||
    fail "find_package(vkllm) did not find the installed package: $(cat "$work/cmake.log")"
"$cmake" --build "$work/cmake-build" -v >"$work/build.log" 2>&1 || {
    cat "$work/build.log"
    fail "building the find_package(vkllm) consumer"
}
grep -q -- "-DVKLLM_SHARED .*consumer.c" "$work/build.log" ||
    fail "vkllm::vkllm does not define VKLLM_SHARED for its users: $(cat "$work/build.log")"
grep -q -F "$lib/libvkllm.dll.a" "$work/build.log" ||
    fail "the consumer is not linked with the installed import library: $(cat "$work/build.log")"
WINEPATH=$("$wine" winepath -w "$prefix/bin" | tr -d '\r')
export WINEPATH
run "$work/cmake-build/consumer.exe"
unset WINEPATH
echo "find_package consumer: $out"
[ "$out" = "$expected" ] || fail "unexpected output: $out"

case $tools in
ON | on | 1 | TRUE | true)
    cli=$prefix/bin/vkllm.exe
    [ -f "$cli" ] || fail "bin/vkllm.exe is not installed"
    no_vkllm_dll "$cli"
    run "$work/elsewhere/vkllm.exe" --version
    echo "installed CLI: $out"
    [ "$out" = "vkllm $version" ] || fail "$cli --version does not print vkllm $version: $out"
    ;;
esac

rm -rf "$work"
echo "PASS: a mingw-w64 application builds against the installed vkllm through pkg-config and" \
    "find_package(vkllm) and runs with its vkllm.dll; bin/vkllm.exe (and a program linked" \
    "through vkllm-static.pc with VKLLM_STATIC) runs without it"
