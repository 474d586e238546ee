"""vkllm/_ffi.py is what tools/gen_ffi.py makes of include/vkllm.h (ctest
Python.FfiIsGeneratedFromTheHeader): the committed file is regenerated and compared, and the
check fails on a copy edited by hand, on a header that changed without regenerating, and on a
header construct the generator does not read. Needs neither the library nor a compiler."""

import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
GEN = os.path.join(HERE, "tools", "gen_ffi.py")
HEADER = os.path.join(ROOT, "include", "vkllm.h")
FFI = os.path.join(HERE, "vkllm", "_ffi.py")


def check(header=HEADER, output=FFI):
    out = subprocess.run([sys.executable, GEN, "--check", "--header", header, "-o", output],
                         capture_output=True, text=True)
    return out.returncode, out.stdout + out.stderr


def edited_copy(tmp, path, old, new):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    if old not in text:
        raise AssertionError(f"{path} has no {old!r}")
    copy = os.path.join(tmp, os.path.basename(path))
    with open(copy, "w", encoding="utf-8") as f:
        f.write(text.replace(old, new, 1))
    return copy


class FfiIsGeneratedFromTheHeader(unittest.TestCase):
    def test_the_committed_file_is_what_the_header_generates(self):
        code, out = check()
        self.assertEqual(code, 0, out)

    def test_a_hand_edit_of_the_generated_file_fails_the_check(self):
        with tempfile.TemporaryDirectory() as tmp:
            ffi = edited_copy(tmp, FFI, "('n_vocab', ctypes.c_uint32)",
                              "('n_vocab', ctypes.c_uint64)")
            code, out = check(output=ffi)
        self.assertEqual(code, 1, out)
        self.assertIn("+        ('n_vocab', ctypes.c_uint32),", out)

    def test_a_header_change_without_regenerating_fails_the_check(self):
        with tempfile.TemporaryDirectory() as tmp:
            header = edited_copy(tmp, HEADER,
                                 "    int32_t top_logprobs;\n} vkllm_generate_params;",
                                 "    int32_t top_logprobs;\n    uint32_t appended;\n"
                                 "} vkllm_generate_params;")
            code, out = check(header=header)
        self.assertEqual(code, 1, out)
        self.assertIn("+        ('appended', ctypes.c_uint32),", out)

    def test_an_experimental_function_is_generated_and_marked(self):
        with open(FFI, encoding="utf-8") as f:
            text = f.read()
        self.assertIn("'vkllm_session_get_profile',", text.split("EXPERIMENTAL = ")[1])
        self.assertNotIn("'vkllm_session_generate',", text.split("EXPERIMENTAL = ")[1])
        self.assertNotIn("'vkllm_tokenize'", text)  # a deprecated alias is left out

    def test_a_construct_the_generator_does_not_read_is_refused_with_its_line(self):
        with tempfile.TemporaryDirectory() as tmp:
            header = edited_copy(tmp, HEADER, "typedef struct vkllm_logit_bias {",
                                 "typedef union vkllm_u { int32_t i; float f; } vkllm_u;\n"
                                 "typedef struct vkllm_logit_bias {")
            shutil.copy(FFI, os.path.join(tmp, "_ffi.py"))
            code, out = check(header=header, output=os.path.join(tmp, "_ffi.py"))
        self.assertEqual(code, 2, out)
        self.assertIn("a declaration the generator does not know: typedef union vkllm_u", out)


if __name__ == "__main__":
    unittest.main()
