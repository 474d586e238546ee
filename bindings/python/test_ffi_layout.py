"""The generated ctypes layer (vkllm/_ffi.py) lays every struct out as the C compiler does
(ctest Python.FfiLayoutMatchesC): a C program compiled against include/vkllm.h prints each
struct's size and each field's offset, each enum's size and each constant's value, and they
are compared with ctypes.sizeof, the fields' offsets and _ffi's values. Needs a C compiler
($VKLLM_CC, else cc), not the library."""

import ctypes
import importlib.util
import os
import subprocess
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
FFI = os.path.join(HERE, "vkllm", "_ffi.py")


def load_ffi(source=None):
    """_ffi.py as a module of its own (the package's __init__ would load the library), or the
    given source text in its place."""
    spec = importlib.util.spec_from_loader("vkllm_ffi_under_test", loader=None)
    module = importlib.util.module_from_spec(spec)
    if source is None:
        with open(FFI, encoding="utf-8") as f:
            source = f.read()
    exec(compile(source, FFI, "exec"), module.__dict__)
    return module


def constants(ffi):
    return {n: v for n, v in vars(ffi).items() if n.startswith("VKLLM_") and isinstance(v, int)}


def enums(ffi):
    return [n for n, v in vars(ffi).items() if n.startswith("vkllm_") and v is ctypes.c_int]


def c_program(ffi):
    lines = ["#define VKLLM_EXPERIMENTAL", '#include "vkllm.h"', "#include <stddef.h>",
             "#include <stdio.h>", "int main(void) {"]
    for struct in ffi.STRUCTS:
        s = struct.__name__
        lines.append(f'    printf("size {s} %zu\\n", sizeof({s}));')
        for field, _ in struct._fields_:
            lines.append(f'    printf("offset {s}.{field} %zu\\n", offsetof({s}, {field}));')
    for e in enums(ffi):
        lines.append(f'    printf("size {e} %zu\\n", sizeof({e}));')
    for c in constants(ffi):
        lines.append(f'    printf("value {c} %llu\\n", (unsigned long long)({c}));')
    lines += ["    return 0;", "}"]
    return "\n".join(lines) + "\n"


def measure_in_c(ffi):
    """{"size S": n, "offset S.f": n, "value C": n} as the C compiler sees the header."""
    cc = os.environ.get("VKLLM_CC") or "cc"
    with tempfile.TemporaryDirectory() as tmp:
        src, exe = os.path.join(tmp, "layout.c"), os.path.join(tmp, "layout")
        with open(src, "w", encoding="utf-8") as f:
            f.write(c_program(ffi))
        subprocess.run([cc, "-std=c99", "-Wall", "-Werror", "-I", os.path.join(ROOT, "include"),
                        src, "-o", exe], check=True)
        out = subprocess.run([exe], check=True, capture_output=True, text=True).stdout
    return {" ".join(line.split()[:2]): int(line.split()[2]) for line in out.splitlines()}


def measure_in_ctypes(ffi):
    got = {}
    for struct in ffi.STRUCTS:
        s = struct.__name__
        got[f"size {s}"] = ctypes.sizeof(struct)
        for field, _ in struct._fields_:
            got[f"offset {s}.{field}"] = getattr(struct, field).offset
    for e in enums(ffi):
        got[f"size {e}"] = ctypes.sizeof(getattr(ffi, e))
    for c, v in constants(ffi).items():
        got[f"value {c}"] = v % 2**64
    return got


def differences(c, py):
    return [f"{k}: C {c.get(k)}, ctypes {py.get(k)}" for k in sorted(set(c) | set(py))
            if c.get(k) != py.get(k)]


class FfiLayoutMatchesC(unittest.TestCase):
    def test_every_struct_enum_and_constant_is_as_the_c_compiler_sees_it(self):
        ffi = load_ffi()
        c = measure_in_c(ffi)
        self.assertGreaterEqual(len(ffi.STRUCTS), 30)
        self.assertEqual(differences(c, measure_in_ctypes(ffi)), [])

    def test_a_field_of_another_type_in_the_binding_is_found(self):
        # vkllm_model_info's n_vocab widened to 64 bits moves the fields after it (the size
        # stays: the padding before device_bytes takes the 4 bytes).
        with open(FFI, encoding="utf-8") as f:
            source = f.read()
        old = "('n_vocab', ctypes.c_uint32),\n        ('n_embd'"
        self.assertIn(old, source)
        drifted = load_ffi(source.replace(old, "('n_vocab', ctypes.c_uint64),\n        ('n_embd'",
                                          1))
        found = differences(measure_in_c(drifted), measure_in_ctypes(drifted))
        self.assertIn("offset vkllm_model_info.n_embd: C 76, ctypes 80", found)
        self.assertIn("offset vkllm_model_info.n_ctx_train: C 96, ctypes 100", found)

    def test_a_constant_of_another_value_in_the_binding_is_found(self):
        with open(FFI, encoding="utf-8") as f:
            source = f.read()
        drifted = load_ffi(source.replace("VKLLM_MAX_TOP_LOGPROBS = 20",
                                          "VKLLM_MAX_TOP_LOGPROBS = 16"))
        self.assertEqual(differences(measure_in_c(drifted), measure_in_ctypes(drifted)),
                         ["value VKLLM_MAX_TOP_LOGPROBS: C 20, ctypes 16"])


if __name__ == "__main__":
    unittest.main()
