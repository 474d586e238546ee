# Rust and Go bindings tests (bindings/rust, bindings/go). include()d from tests/CMakeLists.txt,
# where the target `vkllm` and VKLLM_TEST_DATA_DIR exist. Each runs only when its toolchain is
# installed; both build offline (no external crates or
# modules) into the build tree, and link the freshly built libvkllm with an rpath to it.
# Rust.Bindings runs vkllm-sys's tests too: bindgen's layout test of every struct (its size,
# alignment and field offsets as the C compiler gave them) and the experimental calls.

set(VKLLM_BINDINGS_TEST_MODEL ${VKLLM_TEST_DATA_DIR}/models/tiny-qwen2-f32.gguf)
# The encoder the embedding tests run on.
set(VKLLM_BINDINGS_TEST_BERT ${VKLLM_TEST_DATA_DIR}/models/tiny-bert-mean-f32.gguf)

find_program(VKLLM_CARGO cargo)
if(VKLLM_CARGO)
  add_test(NAME Rust.Bindings COMMAND ${VKLLM_CARGO} test --offline -j1 --all-features
           WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}/bindings/rust)
  set_tests_properties(Rust.Bindings PROPERTIES
    ENVIRONMENT "VKLLM_LIB_DIR=$<TARGET_FILE_DIR:vkllm>;VKLLM_TEST_MODEL=${VKLLM_BINDINGS_TEST_MODEL};VKLLM_TEST_BERT=${VKLLM_BINDINGS_TEST_BERT};CARGO_TARGET_DIR=${CMAKE_BINARY_DIR}/cargo-target"
    TIMEOUT 600)
endif()

# The Go package builds as a user's would: against an installed prefix, through pkg-config
# (its #cgo pkg-config: vkllm), with an rpath to the prefix's lib for the test binaries.
find_program(VKLLM_GO go)
if(VKLLM_GO)
  set(VKLLM_GO_PREFIX ${CMAKE_CURRENT_BINARY_DIR}/go_prefix)
  add_test(NAME Go.InstallPrefix
           COMMAND ${CMAKE_COMMAND} --install ${CMAKE_BINARY_DIR} --prefix ${VKLLM_GO_PREFIX})
  set_tests_properties(Go.InstallPrefix PROPERTIES FIXTURES_SETUP vkllm_go_prefix)
  add_test(NAME Go.Bindings COMMAND ${VKLLM_GO} test -p 1 -count=1 ./...
           WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}/bindings/go)
  set_tests_properties(Go.Bindings PROPERTIES FIXTURES_REQUIRED vkllm_go_prefix
    ENVIRONMENT "PKG_CONFIG_PATH=${VKLLM_GO_PREFIX}/${CMAKE_INSTALL_LIBDIR}/pkgconfig;CGO_LDFLAGS=-Wl,-rpath,${VKLLM_GO_PREFIX}/${CMAKE_INSTALL_LIBDIR};GOFLAGS=-mod=mod;GOCACHE=${CMAKE_BINARY_DIR}/go-cache;GOPATH=${CMAKE_BINARY_DIR}/go-path;VKLLM_TEST_MODEL=${VKLLM_BINDINGS_TEST_MODEL};VKLLM_TEST_BERT=${VKLLM_BINDINGS_TEST_BERT}"
    TIMEOUT 600)
endif()

# vkllm-sys is generated from include/vkllm.h (scripts/gen-rust-sys). The files record the
# header's SHA-256, checked everywhere, so that a header changed without regenerating fails here
# even where bindgen is missing; where the pinned bindgen is installed (scripts/deps.sh installs
# it), the files are regenerated and must equal the committed ones (skipped, not passed, without it).
if(UNIX)
  add_test(NAME Rust.SysBindingsRecordTheHeadersHash
           COMMAND ${PROJECT_SOURCE_DIR}/scripts/gen-rust-sys --check-hash)
  add_test(NAME Rust.SysBindingsRegenerateUnchanged
           COMMAND ${PROJECT_SOURCE_DIR}/scripts/gen-rust-sys --check)
  set_tests_properties(Rust.SysBindingsRegenerateUnchanged PROPERTIES SKIP_RETURN_CODE 77)
endif()

# A crate outside the bindings' workspace that depends on vkllm builds against an installed
# prefix through pkg-config, offline, and runs with the rpath its build.rs adds (the README's).
find_program(VKLLM_CARGO cargo)
if(VKLLM_CARGO)
  add_test(NAME Rust.DependentCrateBuildsAgainstAnInstalledPrefix
           COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/install_consumer/rust_consumer.sh ${VKLLM_CARGO}
                   ${CMAKE_COMMAND} ${CMAKE_BINARY_DIR} ${CMAKE_CURRENT_BINARY_DIR}/rust_consumer
                   ${CMAKE_INSTALL_LIBDIR} ${PROJECT_VERSION})
  set_tests_properties(Rust.DependentCrateBuildsAgainstAnInstalledPrefix PROPERTIES TIMEOUT 600)
endif()

# A module of its own that imports vkllm.dev/vkllm through a go.work workspace (no replace)
# builds against an installed prefix through pkg-config, offline, and runs.
find_program(VKLLM_GO go)
if(VKLLM_GO)
  add_test(NAME Go.DependentModuleBuildsAgainstAnInstalledPrefix
           COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/install_consumer/go_consumer.sh ${VKLLM_GO}
                   ${CMAKE_COMMAND} ${CMAKE_BINARY_DIR} ${CMAKE_CURRENT_BINARY_DIR}/go_consumer
                   ${CMAKE_INSTALL_LIBDIR} ${PROJECT_VERSION})
  set_tests_properties(Go.DependentModuleBuildsAgainstAnInstalledPrefix PROPERTIES TIMEOUT 600
    ENVIRONMENT "GOCACHE=${CMAKE_BINARY_DIR}/go-cache;GOPATH=${CMAKE_BINARY_DIR}/go-path")
endif()

# Every VKLLM_API function of include/vkllm.h is called by the Python, Rust and Go bindings, or
# bindings/UNBOUND.md says why not (tests/check_binding_coverage.py; reads sources, builds
# nothing).
if(Python3_FOUND)
  add_test(NAME Bindings.CoverEveryPublicFunction
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/check_binding_coverage.py
                   ${PROJECT_SOURCE_DIR})
  # ... and the check itself fails on a gap, a stale reason, or a call hidden in a comment.
  add_test(NAME Bindings.CoverageCheckFailsOnGapsAndStaleReasons
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/test_binding_coverage.py)
endif()
