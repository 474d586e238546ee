# Sourced by the install tests: fail(), and install_prefix, which installs the build ($cmake,
# $build) into $prefix under a fresh $work, showing cmake's log when the install fails.
fail() {
    echo "FAIL: $*"
    exit 1
}

install_prefix() {
    rm -rf "$work"
    mkdir -p "$work"
    "$cmake" --install "$build" --prefix "$prefix" >"$work/install.log" || {
        cat "$work/install.log"
        fail "cmake --install"
    }
}
