#!/bin/sh
# pip-installs bindings/python into a fresh venv (--no-deps; offline with --no-build-isolation
# when setuptools and wheel are at hand), installs the build into a temporary prefix, then
# imports vkllm from outside the source tree with only PKG_CONFIG_PATH pointing at the prefix
# (no VKLLM_LIBRARY, no LD_LIBRARY_PATH), and checks that without it the import fails with
# ImportError that says how to point at the library.
#     python_package.sh PYTHON CMAKE BUILD_DIR WORK_DIR LIBDIR VERSION
set -eu
python=$1 cmake=$2 build=$3 work=$4 libdir=$5 version=$6
here=$(cd "$(dirname "$0")" && pwd)
src=$here/../../bindings/python
prefix=$work/prefix

. "$here/install_prefix.sh"
install_prefix

# A copy, so that the build's egg-info and build/ stay out of the source tree.
cp -r "$src" "$work/pkg"
find "$work/pkg" -name __pycache__ -prune -exec rm -rf {} +
# Offline with the venv's (or else the system's) setuptools and wheel; when neither has both,
# pip fetches them from PyPI for an isolated build.
builds_offline() { "$work/venv/bin/python" -c "import setuptools, wheel" 2>/dev/null; }
"$python" -m venv "$work/venv" || fail "python3 -m venv"
if ! builds_offline; then
    rm -rf "$work/venv"
    "$python" -m venv --system-site-packages "$work/venv" || fail "python3 -m venv"
fi
if builds_offline; then
    how="--no-build-isolation --no-index"
else
    how=""
    echo "no setuptools and wheel in $python: pip fetches them for the build"
fi
# shellcheck disable=SC2086
"$work/venv/bin/python" -m pip install --no-deps $how "$work/pkg" >"$work/pip.log" 2>&1 || {
    cat "$work/pip.log"
    fail "pip install bindings/python"
}
rm -rf "$work/pkg"

cd "$work"
unset VKLLM_LIBRARY LD_LIBRARY_PATH
empty=$work/no-pkgconfig
mkdir -p "$empty"
# Without any way to the library: ImportError naming VKLLM_LIBRARY, never a raw OSError.
out=$(PKG_CONFIG_PATH= PKG_CONFIG_LIBDIR=$empty "$work/venv/bin/python" -c '
import sys
try:
    import vkllm
except ImportError as e:
    print(e)
    sys.exit(0)
print("imported", vkllm.__file__)
sys.exit(1)
') || fail "importing vkllm without the library did not raise ImportError: $out"
echo "without the library: $out"
case $out in
*VKLLM_LIBRARY*PKG_CONFIG_PATH*) ;;
*) fail "the ImportError does not say how to point at the library: $out" ;;
esac

# Through pkg-config only.
out=$(PKG_CONFIG_PATH=$prefix/$libdir/pkgconfig "$work/venv/bin/python" -c '
import importlib.metadata, os, vkllm
print(os.path.dirname(vkllm.__file__), importlib.metadata.version("vkllm"), vkllm.version(),
      os.path.realpath(vkllm._lib.lib._name))
') || fail "importing vkllm with PKG_CONFIG_PATH=$prefix/$libdir/pkgconfig: $out"
echo "installed: $out"
# shellcheck disable=SC2086
set -- $out
case $1 in
"$work/venv/"*) ;;
*) fail "vkllm was imported from $1, not from the venv" ;;
esac
[ "$2" = "$version" ] || fail "the package's version is $2, the library's project version $version"
[ "$3" = "$version" ] || fail "vkllm.version() is $3, not $version"
[ "$4" = "$(readlink -f "$prefix/$libdir/libvkllm.so.${version%.*}")" ] ||
    fail "the library loaded is $4, not the prefix's"

rm -rf "$work"
echo "PASS: pip-installed vkllm finds the installed library through pkg-config"
