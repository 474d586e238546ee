#!/usr/bin/env python3
"""check_binding_coverage.py fails where it should (ctest
Bindings.CoverageCheckFailsOnGapsAndStaleReasons): on a copy of the header and the bindings it
is given a function a binding stops calling, a reason for a function the binding calls, a
reason for a function the header lacks, a call hidden in a comment or a string, a Rust
function that only the generated vkllm-sys declares, a C prototype that is no call, and a
Python call only in the generated _ffi.py; and it passes on the copy as it is, and where an
experimental function (#ifdef VKLLM_EXPERIMENTAL) goes unbound."""

import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
CHECK = os.path.join(HERE, "check_binding_coverage.py")


def run(root):
    out = subprocess.run([sys.executable, CHECK, root], capture_output=True, text=True)
    return out.returncode, out.stdout


def edit(root, path, old, new):
    p = os.path.join(root, path)
    with open(p, encoding="utf-8") as f:
        text = f.read()
    if old not in text:
        raise AssertionError(f"{path} has no {old!r} to change")
    with open(p, "w", encoding="utf-8") as f:
        f.write(text.replace(old, new))


def main():
    failures = []

    def expect(case, mutate, code, *lines):
        with tempfile.TemporaryDirectory() as tmp:
            shutil.copytree(os.path.join(ROOT, "include"), os.path.join(tmp, "include"))
            shutil.copytree(os.path.join(ROOT, "bindings"), os.path.join(tmp, "bindings"),
                            ignore=shutil.ignore_patterns("target", "__pycache__"))
            mutate(tmp)
            got_code, out = run(tmp)
            missing = [line for line in lines if line not in out]
            if got_code != code or missing:
                failures.append(f"{case}: exit {got_code} (want {code}), missing {missing}\n{out}")

    expect("the bindings as they are", lambda r: None, 0, "binding coverage: 0 failures")
    expect("Python stops calling vkllm_gguf_destroy",
           lambda r: edit(r, "bindings/python/vkllm/gguf.py",
                          "_destroy = staticmethod(lib.vkllm_gguf_destroy)",
                          "_destroy = None  # lib.vkllm_gguf_destroy"),
           1, "FAIL python: vkllm_gguf_destroy is neither called nor given a reason")
    expect("a Python call only in the generated raw layer",
           lambda r: (edit(r, "bindings/python/vkllm/gguf.py",
                           "_destroy = staticmethod(lib.vkllm_gguf_destroy)", "_destroy = None"),
                      edit(r, "bindings/python/vkllm/_ffi.py", "\ndef declare(lib):",
                           "\ndef destroy(lib, gguf):\n    lib.vkllm_gguf_destroy(gguf)\n\n"
                           "\ndef declare(lib):")),
           1, "FAIL python: vkllm_gguf_destroy is neither called nor given a reason")
    expect("a Rust call only in a string",
           lambda r: edit(r, "bindings/rust/vkllm/src/gguf.rs",
                          "unsafe { sys::vkllm_gguf_destroy(self.raw.as_ptr()) }",
                          'let _ = "sys::vkllm_gguf_destroy(self.raw.as_ptr())";'),
           1, "FAIL rust: vkllm_gguf_destroy is neither called")
    # vkllm-sys declares every function (bindgen): only a call in the safe crate counts.
    expect("a Rust function only the generated vkllm-sys declares",
           lambda r: edit(r, "bindings/rust/vkllm/src/gguf.rs",
                          "unsafe { sys::vkllm_gguf_destroy(self.raw.as_ptr()) }", "let _ = self;"),
           1, "FAIL rust: vkllm_gguf_destroy is neither called")
    expect("a Go call only in a C prototype of a cgo preamble",
           lambda r: (edit(r, "bindings/go/gguf.go", "C.vkllm_gguf_destroy(g.h)", "_ = g.h"),
                      edit(r, "bindings/go/gguf.go", '#include "vkllm.h"\n*/',
                           '#include "vkllm.h"\nvoid vkllm_gguf_destroy(vkllm_gguf *gguf);\n*/')),
           1, "FAIL go: vkllm_gguf_destroy is neither called")
    expect("Python stops calling an experimental function",
           lambda r: edit(r, "bindings/python/vkllm/session.py",
                          "lib.vkllm_session_get_profile(", "lib.vkllm_session_get_stats("),
           0, "binding coverage: 0 failures")
    destroy = "VKLLM_API void vkllm_gguf_destroy(vkllm_gguf *gguf);"
    expect("a function moved behind the experimental fence that Go stops calling",
           lambda r: (edit(r, "include/vkllm.h", destroy,
                           "#ifdef VKLLM_EXPERIMENTAL\n" + destroy + "\n#endif"),
                      edit(r, "bindings/go/gguf.go", "C.vkllm_gguf_destroy(g.h)", "_ = g.h")),
           0, "binding coverage: 0 failures")
    stale = ("\nrust vkllm_gguf_open: the binding reads model files some other way, really.\n"
             "python vkllm_gone_away: this function was removed from the header long ago.\n")
    expect("reasons for a called and for an unknown function",
           lambda r: open(os.path.join(r, "bindings", "UNBOUND.md"), "a").write(stale), 1,
           "FAIL rust: UNBOUND.md gives a reason for vkllm_gguf_open, which the binding calls",
           "FAIL python: UNBOUND.md gives a reason for vkllm_gone_away, which include/vkllm.h "
           "does not declare")
    expect("a reason of one word",
           lambda r: open(os.path.join(r, "bindings", "UNBOUND.md"), "a").write(
               "\ngo vkllm_gone_away: no\n"), 1, "a reason of a few words is needed")
    for f in failures:
        print("FAIL " + f)
    print(f"binding coverage check: {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
