# Sourced by scripts/demo and scripts/test: installs the Debian packages the build and the
# tests need, once. Nothing is downloaded at run time.
VKLLM_PACKAGES="cmake ninja-build g++ libgtest-dev libvulkan-dev libvulkan-volk-dev glslc \
glslang-tools spirv-tools mesa-vulkan-drivers vulkan-validationlayers vulkan-tools \
clang-format python3"

vkllm_missing_packages() {
    missing=""
    for p in $VKLLM_PACKAGES; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
            missing="$missing $p"
    done
    echo "$missing"
}

vkllm_install_deps() {
    missing=$(vkllm_missing_packages)
    [ -z "$missing" ] && return 0
    if [ "$(id -u)" != 0 ]; then
        echo "vkllm: missing Debian packages:$missing" >&2
        echo "vkllm: run this script as root, or: sudo apt-get install$missing" >&2
        exit 1
    fi
    echo "vkllm: installing$missing"
    export DEBIAN_FRONTEND=noninteractive
    # The package lists of a fresh machine may be empty or stale: refresh only when needed.
    apt-get install -y --no-install-recommends $missing ||
        { apt-get update && apt-get install -y --no-install-recommends $missing; }
}

vkllm_configure() {
    cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release "$@"
}
