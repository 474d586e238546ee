#!/bin/sh
# Installs the build into a temporary prefix, then builds a crate outside the bindings'
# workspace (rust_consumer/: depends on vkllm and vkllm-sys, with the build.rs the README
# documents) with only PKG_CONFIG_PATH pointing at the prefix (no VKLLM_LIB_DIR), offline, and
# runs it with no LD_LIBRARY_PATH: it must load the prefix's libvkllm through its rpath.
#     rust_consumer.sh CARGO CMAKE BUILD_DIR WORK_DIR LIBDIR VERSION
set -eu
cargo=$1 cmake=$2 build=$3 work=$4 libdir=$5 version=$6
here=$(cd "$(dirname "$0")" && pwd)
rust=$(cd "$here/../../bindings/rust" && pwd)
prefix=$work/prefix
lib=$prefix/$libdir
soversion=${version%.*} # MAJOR.MINOR: the SONAME (CMakeLists.txt, VKLLM_SOVERSION)

. "$here/install_prefix.sh"
install_prefix

# A copy with its own manifest (the path dependencies are absolute there), so that Cargo.lock
# and target/ stay out of the source tree.
cp -r "$here/rust_consumer" "$work/crate"
cat >"$work/crate/Cargo.toml" <<TOML
[package]
name = "vkllm-consumer"
version = "0.1.0"
edition = "2021"
publish = false

[dependencies]
vkllm = { path = "$rust/vkllm" }
vkllm-sys = { path = "$rust/vkllm-sys" }

[workspace]
TOML

unset VKLLM_LIB_DIR LD_LIBRARY_PATH
PKG_CONFIG_PATH=$lib/pkgconfig CARGO_TARGET_DIR=$work/target \
    "$cargo" build --offline -j1 --manifest-path "$work/crate/Cargo.toml" >"$work/cargo.log" 2>&1 || {
    cat "$work/cargo.log"
    fail "cargo build of a crate that depends on vkllm"
}
exe=$work/target/debug/vkllm-consumer
out=$("$exe") || fail "the Rust consumer: $out"
echo "Rust consumer: $out"
[ "$out" = "vkllm $version" ] || fail "unexpected output: $out"
used=$(ldd "$exe" | awk -v so="libvkllm.so.$soversion" '$1 == so { print $3 }')
[ -n "$used" ] && [ "$(readlink -f "$used")" = "$(readlink -f "$lib/libvkllm.so.$soversion")" ] ||
    fail "the Rust consumer does not use the installed library: $(ldd "$exe")"

rm -rf "$work"
echo "PASS: a crate depending on vkllm builds against an installed prefix and runs"
