//! Adds an rpath to libvkllm's directory (found by vkllm-sys) so that this crate's tests and
//! examples run without LD_LIBRARY_PATH.

fn main() {
    println!("cargo:rerun-if-env-changed=DEP_VKLLM_LIB_DIR");
    if let Ok(dir) = std::env::var("DEP_VKLLM_LIB_DIR") {
        println!("cargo:rustc-link-arg=-Wl,-rpath,{dir}");
    }
}
