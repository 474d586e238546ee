#!/bin/sh
# Installs the build into a temporary prefix, then builds a program in its own module that
# imports vkllm.dev/vkllm from a checkout (a go.work workspace, no replace directive), with only
# PKG_CONFIG_PATH pointing at the prefix and the rpath bindings/go/README.md documents, offline,
# and runs it with no LD_LIBRARY_PATH: it must load the prefix's libvkllm.
#     go_consumer.sh GO CMAKE BUILD_DIR WORK_DIR LIBDIR VERSION
set -eu
go=$1 cmake=$2 build=$3 work=$4 libdir=$5 version=$6
here=$(cd "$(dirname "$0")" && pwd)
binding=$(cd "$here/../../bindings/go" && pwd)
prefix=$work/prefix
lib=$prefix/$libdir
soversion=${version%.*} # MAJOR.MINOR: the SONAME (CMakeLists.txt, VKLLM_SOVERSION)

. "$here/install_prefix.sh"
install_prefix

mkdir -p "$work/app"
cp "$here/go_consumer/main.go" "$work/app/"
cat >"$work/app/go.mod" <<MOD
module example.com/vkllm-consumer

go 1.21
MOD
cat >"$work/go.work" <<WORK
go 1.21

use (
	./app
	$binding
)
WORK

unset LD_LIBRARY_PATH CGO_CFLAGS
exe=$work/consumer
(cd "$work/app" && PKG_CONFIG_PATH=$lib/pkgconfig CGO_LDFLAGS="-Wl,-rpath,$lib" GOFLAGS= \
    GOPROXY=off GOWORK="$work/go.work" "$go" build -o "$exe" .) >"$work/go.log" 2>&1 || {
    cat "$work/go.log"
    fail "go build of a module that imports vkllm.dev/vkllm"
}
out=$("$exe") || fail "the Go consumer: $out"
echo "Go consumer: $out"
[ "$out" = "vkllm $version" ] || fail "unexpected output: $out"
used=$(ldd "$exe" | awk -v so="libvkllm.so.$soversion" '$1 == so { print $3 }')
[ -n "$used" ] && [ "$(readlink -f "$used")" = "$(readlink -f "$lib/libvkllm.so.$soversion")" ] ||
    fail "the Go consumer does not use the installed library: $(ldd "$exe")"

rm -rf "$work"
echo "PASS: a Go module importing vkllm builds against an installed prefix and runs"
