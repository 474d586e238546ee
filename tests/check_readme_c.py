#!/usr/bin/env python3
"""The README's C examples compile against include/vkllm.h as they are shown.

The README shows fragments that build on one another (a runtime, then a model, a session, a
prompt, ...). Each ```c block becomes a scope of its own inside one function whose parameters
are the names the fragments take from the text around them (PRELUDE); the file is compiled
with the warnings that catch a wrong name, type or argument count as errors.

Usage: check_readme_c.py README.md INCLUDE_DIR CC
"""

import re
import subprocess
import sys
import tempfile

# What the fragments use without declaring it: the objects earlier fragments made, and the
# callbacks and buffers the prose describes.
PRELUDE = r"""
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vkllm.h>

static int32_t print_text(void *user, int32_t token, const char *text, size_t len) {
    (void)user, (void)token;
    fwrite(text, 1, len, stdout);
    return 0;
}

static int32_t show(void *user, int32_t token, float logprob, const vkllm_token_logprob *top,
                    size_t n_top) {
    (void)user, (void)token, (void)logprob, (void)top, (void)n_top;
    return 0;
}

int readme_examples(int argc, char **argv, vkllm_runtime *rt, vkllm_model *model,
                    vkllm_session *session, vkllm_session *other, const char *prompt,
                    uint32_t n_prompt, int32_t eos_id, size_t n_vocab, const char *text,
                    size_t text_len, vkllm_sampling_params sampling) {
    int32_t ids[1024];
    size_t n = 0;
    int32_t out[4][256];
    vkllm_generate_params gp;
    vkllm_generate_params_init(&gp);
    (void)argc;
"""

# Fragments leave variables unused, and initialise structs partly (the rest zero, as the
# header's struct_size convention intends): those warnings stay off.
FLAGS = ["-std=c11", "-Wall", "-Wextra", "-Werror", "-Wno-unused-variable",
         "-Wno-unused-but-set-variable", "-Wno-unused-parameter",
         "-Wno-unused-but-set-parameter", "-Wno-missing-field-initializers",
         "-Werror=implicit-function-declaration", "-Werror=incompatible-pointer-types",
         "-Werror=int-conversion"]


def c_blocks(readme):
    return re.findall(r"^```c\n(.*?)^```$", readme, re.M | re.S)


def main():
    readme_path, include_dir, cc = sys.argv[1:4]
    with open(readme_path, encoding="utf-8") as f:
        blocks = c_blocks(f.read())
    if not blocks:
        print(f"{readme_path}: no ```c block")
        return 1
    body = []
    for i, block in enumerate(blocks, 1):
        # #include lines belong before the function; the prelude has them.
        code = "\n".join(l for l in block.splitlines() if not l.startswith("#include"))
        body.append(f"    {{ /* README block {i} */\n{code}\n    }}")
    source = PRELUDE + "\n".join(body) + "\n    return 0;\n}\n"
    with tempfile.NamedTemporaryFile("w", suffix=".c", delete=False) as f:
        f.write(source)
        path = f.name
    r = subprocess.run([cc, *FLAGS, "-I", include_dir, "-c", path, "-o", path + ".o"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        print(r.stdout + r.stderr)
        print(f"FAIL: the README's C blocks do not compile as shown (source: {path})")
        return 1
    print(f"ok: {len(blocks)} C blocks of {readme_path} compile against {include_dir}/vkllm.h")
    return 0


if __name__ == "__main__":
    sys.exit(main())
