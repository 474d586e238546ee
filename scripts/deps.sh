# Sourced by scripts/demo and scripts/test: installs the Debian packages the build and the
# tests need, once. Nothing is downloaded at run time (scripts/test also installs the gguf
# Python package, once, for the interoperability test, and fetches the JSON-Schema-Test-Suite).
VKLLM_PACKAGES="cmake ninja-build g++ libgtest-dev libvulkan-dev libvulkan-volk-dev glslc \
glslang-tools spirv-tools mesa-vulkan-drivers vulkan-validationlayers vulkan-tools \
clang-format pkg-config libedit-dev python3 python3-numpy python3-yaml python3-requests python3-pip \
libcpp-httplib-dev nlohmann-json3-dev"

# The Rust and Go bindings' tests need their toolchains: Debian's when none is on the PATH
# (a rustup or golang.org install is used as it is).
command -v cargo >/dev/null 2>&1 || VKLLM_PACKAGES="$VKLLM_PACKAGES cargo"
command -v go >/dev/null 2>&1 || VKLLM_PACKAGES="$VKLLM_PACKAGES golang-go"
# bindgen 0.60.1 and the libclang it loads, for the check that vkllm-sys is what the header
# generates (scripts/gen-rust-sys; seconds to install, where building bindgen-cli takes minutes).
VKLLM_PACKAGES="$VKLLM_PACKAGES bindgen libclang1-14 libclang-common-14-dev"

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

# Debian 13's lavapipe (Mesa 26, with VK_KHR_cooperative_matrix) and glslang 15, once, into
# the cache of scripts/mesa26 (about 40 s and 460 MB unpacked): the build compiles the
# cooperative-matrix shaders with that glslang where the system's cannot (cmake/coopmat.cmake,
# which looks for the cache at every configure), and the Coopmat.* tests run on that lavapipe.
# Debian and Ubuntu on x86-64 only; elsewhere, or when the download fails, it warns and the build
# has no coopmat shaders (their tests are then not registered; everything else runs as before).
vkllm_install_coopmat_toolchain() {
    [ -n "$(scripts/mesa26 dir)" ] && return 0
    if [ "$(uname -m)" != x86_64 ] || ! command -v apt-get >/dev/null 2>&1; then
        echo "vkllm: no Debian 13 lavapipe and glslang here (Debian or Ubuntu x86-64 only):" \
            "the cooperative-matrix shaders are built only with a glslang that compiles them" >&2
        return 0
    fi
    scripts/mesa26 fetch ||
        echo "vkllm: scripts/mesa26 fetch failed: building without the cooperative-matrix" \
            "shaders, and their tests on lavapipe 26 are not run" >&2
}

# llama.cpp's GGUF reader (gguf-py) for tests/test_gguf_interop.py, into build/pydeps (the
# tests' VKLLM_PYDEPS) rather than the system: its dependencies are Debian's packages above.
# Also the JSON-Schema-Test-Suite (below).
vkllm_install_pydeps() {
    vkllm_install_json_schema_suite
    [ -d build/pydeps/gguf ] && [ -d build/pydeps/jsonschema ] && [ -d build/pydeps/tokenizers ] &&
        return 0
    # jsonschema validates the JSON Schema corpus and sampled outputs
    # (tests/check_json_schema_samples.py); its dependencies are pinned with it. Hugging Face's
    # tokenizers tokenizes for the float64 embedding reference (tests/reference/bert_f64.py) and
    # writes the WordPiece test data (tools/gen_wordpiece_reference.py); reading a tokenizer.json
    # needs none of its dependencies.
    echo "vkllm: installing gguf==0.19.0, jsonschema==4.26.0 and tokenizers==0.23.3 into build/pydeps"
    /usr/bin/python3 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore \
        --target build/pydeps --upgrade \
        --no-deps gguf==0.19.0 jsonschema==4.26.0 jsonschema-specifications==2025.9.1 \
        referencing==0.37.0 rpds-py==2026.9.1 attrs==26.1.0 typing-extensions==4.16.0 \
        tokenizers==0.23.3
}

# The end-to-end tests of `vkllm serve` (tests/serve/): the real `openai` client from PyPI with
# every dependency pinned (no resolver runs: --no-deps), into build/pydeps-serve, for Debian's
# Python 3.11; and playwright-core from npm, into build/node-serve, which drives Debian's
# chromium, installed here (the tests alone need it, not scripts/demo), headless for the chat
# page's test (it downloads no browser of its own). Without npm nothing is installed and that
# test fails, saying what it lacks.
VKLLM_SERVE_PYDEPS="openai==3.63.0 httpx2==2.17.0 httpcore2==2.17.0 h11==0.16.0 anyio==4.16.0 \
idna==3.21 sniffio==1.3.1 truststore==0.10.5 jiter==0.19.0 pydantic==2.14.4 pydantic-core==2.50.5 \
annotated-types==0.8.0 typing-inspection==0.4.5 typing-extensions==4.16.0"
VKLLM_PLAYWRIGHT=playwright-core@1.65.2

vkllm_install_serve_deps() {
    packages=$VKLLM_PACKAGES
    VKLLM_PACKAGES=chromium
    vkllm_install_deps
    VKLLM_PACKAGES=$packages
    if [ ! -f build/pydeps-serve/.vkllm-pins ] ||
        [ "$(cat build/pydeps-serve/.vkllm-pins)" != "$VKLLM_SERVE_PYDEPS" ]; then
        echo "vkllm: installing the openai client ($VKLLM_SERVE_PYDEPS) into build/pydeps-serve"
        rm -rf build/pydeps-serve
        /usr/bin/python3 -m pip install --quiet --disable-pip-version-check \
            --root-user-action=ignore --target build/pydeps-serve --no-deps $VKLLM_SERVE_PYDEPS ||
            return 1
        echo "$VKLLM_SERVE_PYDEPS" >build/pydeps-serve/.vkllm-pins
    fi
    [ -f build/node-serve/node_modules/playwright-core/package.json ] &&
        grep -q "\"version\": \"${VKLLM_PLAYWRIGHT#*@}\"" \
            build/node-serve/node_modules/playwright-core/package.json && return 0
    if ! command -v npm >/dev/null 2>&1; then
        echo "vkllm: no npm: no playwright-core, and Serve.ChatPageInChromium fails" >&2
        return 0
    fi
    echo "vkllm: installing $VKLLM_PLAYWRIGHT into build/node-serve"
    mkdir -p build/node-serve
    npm install --silent --no-audit --no-fund --prefix build/node-serve "$VKLLM_PLAYWRIGHT"
}

# The official JSON-Schema-Test-Suite (draft 2020-12, MIT) for tests/test_json_schema_suite.cpp,
# as the jsonschema sdist ships it (pinned by its sha256), into
# build/pydeps/json-schema-test-suite. Without network it warns and the test skips.
VKLLM_JSONSCHEMA_SDIST_SHA256=0c26707e2efad8aa1bfc5b7ce170f3fccc2e4918ff85989ba9ffa9facb2be326

vkllm_install_json_schema_suite() {
    suite=build/pydeps/json-schema-test-suite
    [ -d "$suite/draft2020-12" ] && return 0
    echo "vkllm: fetching the JSON-Schema-Test-Suite (jsonschema-4.26.0 sdist) into $suite"
    tmp=$(mktemp -d)
    if /usr/bin/python3 -m pip download --quiet --disable-pip-version-check --no-deps \
        --no-binary :all: --dest "$tmp" jsonschema==4.26.0 &&
        echo "$VKLLM_JSONSCHEMA_SDIST_SHA256  $tmp/jsonschema-4.26.0.tar.gz" | sha256sum -c --quiet &&
        tar -xzf "$tmp/jsonschema-4.26.0.tar.gz" -C "$tmp" jsonschema-4.26.0/json; then
        mkdir -p "$suite"
        cp "$tmp/jsonschema-4.26.0/json/LICENSE" "$suite/"
        cp -r "$tmp/jsonschema-4.26.0/json/tests/draft2020-12" "$suite/"
    else
        echo "vkllm: could not fetch the JSON-Schema-Test-Suite; its test will be skipped" >&2
    fi
    rm -rf "$tmp"
}

# The Windows build and its tests under Wine (scripts/test-windows, docs/PLATFORMS.md): the
# mingw-w64 cross compiler with the posix thread model (std::thread, std::mutex), Wine, whose
# Vulkan reaches the host's lavapipe, and the X server it needs for Vulkan.
VKLLM_WINDOWS_PACKAGES="g++-mingw-w64-x86-64-posix wine wine64 xvfb xauth"

vkllm_install_windows_deps() {
    vkllm_main_packages=$VKLLM_PACKAGES
    VKLLM_PACKAGES=$VKLLM_WINDOWS_PACKAGES
    vkllm_install_deps
    VKLLM_PACKAGES=$vkllm_main_packages
}

# The aarch64 build and its host-only tests under emulation (scripts/test-arm64): the cross
# compiler, whose own root (/usr/aarch64-linux-gnu) holds the C and C++ runtimes the tests run
# with, and qemu-user. GoogleTest is built from libgtest-dev's sources, as for Windows.
VKLLM_ARM64_PACKAGES="g++-aarch64-linux-gnu qemu-user"

vkllm_install_arm64_deps() {
    vkllm_main_packages=$VKLLM_PACKAGES
    VKLLM_PACKAGES=$VKLLM_ARM64_PACKAGES
    vkllm_install_deps
    VKLLM_PACKAGES=$vkllm_main_packages
}
