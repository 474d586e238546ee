//! What bindings/rust/README.md tells a dependent to write: Cargo passes link arguments of a
//! dependency's build script to that package's own targets only, so a program that should find
//! libvkllm under a non-system prefix without LD_LIBRARY_PATH adds the rpath itself, from the
//! directory vkllm-sys found (a direct dependency on vkllm-sys gives DEP_VKLLM_LIB_DIR).

fn main() {
    println!("cargo:rerun-if-env-changed=DEP_VKLLM_LIB_DIR");
    if let Ok(dir) = std::env::var("DEP_VKLLM_LIB_DIR") {
        println!("cargo:rustc-link-arg=-Wl,-rpath,{dir}");
    }
}
