//! Finds libvkllm: $VKLLM_LIB_DIR, else `pkg-config --libs-only-L vkllm`, else the repository's
//! build directory (../../build relative to this crate). An rpath is added so that test binaries
//! run without LD_LIBRARY_PATH.

use std::env;
use std::path::PathBuf;
use std::process::Command;

fn from_pkg_config() -> Option<Vec<PathBuf>> {
    let out = Command::new("pkg-config")
        .args(["--libs-only-L", "vkllm"])
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let text = String::from_utf8(out.stdout).ok()?;
    Some(
        text.split_whitespace()
            .filter_map(|flag| flag.strip_prefix("-L"))
            .map(PathBuf::from)
            .collect(),
    )
}

fn main() {
    println!("cargo:rerun-if-env-changed=VKLLM_LIB_DIR");
    println!("cargo:rerun-if-env-changed=PKG_CONFIG_PATH");
    let dirs: Vec<PathBuf> = match env::var_os("VKLLM_LIB_DIR") {
        Some(dir) if !dir.is_empty() => vec![PathBuf::from(dir)],
        _ => from_pkg_config().unwrap_or_else(|| {
            let manifest = PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").unwrap());
            vec![manifest.join("../../../build")]
        }),
    };
    for dir in &dirs {
        let dir = dir.canonicalize().unwrap_or_else(|_| dir.clone());
        println!("cargo:rustc-link-search=native={}", dir.display());
        println!("cargo:rustc-link-arg=-Wl,-rpath,{}", dir.display());
        // rustc-link-arg applies to this package's own targets only; dependents read the
        // directory back as DEP_VKLLM_LIB_DIR (see vkllm/build.rs) to add the rpath themselves.
        println!("cargo:lib_dir={}", dir.display());
    }
    println!("cargo:rustc-link-lib=dylib=vkllm");
}
