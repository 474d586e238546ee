//! A program outside the bindings' workspace that depends on the `vkllm` crate: it prints the
//! version of the libvkllm it loaded.

fn main() {
    let v = vkllm::version();
    println!("vkllm {}.{}.{}", v / 10000, v / 100 % 100, v % 100);
}
