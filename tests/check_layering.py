#!/usr/bin/env python3
"""The layers of src/ depend one way, downwards (docs/ARCHITECTURE.md, DESIGN.md):

    api -> engine -> grammar -> models, tokenizer, chat -> gpu, format -> common

A file may include its own layer's headers and those of any layer below its own; never one
above (upward) nor a sibling on its own level (sideways: models, tokenizer and chat, gpu and
format).
The public header vkllm.h (include/) is the C ABI's vocabulary and may be included anywhere;
the shaders' interface headers (shaders/<family>/NAME.h) and the generated shader_names.h are
the gpu layer's.

    check_layering.py SRC_DIR directions   every '#include "..."' in SRC_DIR goes down
    check_layering.py SRC_DIR models-vulkan no header under models/ reaches a Vulkan header
                                           (volk.h, vulkan/*.h) through its includes: a plan
                                           is data, and the model code knows no Vulkan
    check_layering.py SRC_DIR os-headers    no file but common/platform.cpp includes a header
                                           of the operating system (POSIX's, Windows'): the
                                           OS is called in one place
    check_layering.py SRC_DIR gnu-builtins  no file but common/platform.cpp uses a GNU
                                           builtin (__builtin_*, __int128, typeof, #pragma
                                           GCC): the code stays MSVC-clean by construction

Prints every violation with the file and line, and exits 1 when there is one.
"""

import collections
import os
import re
import sys

# Rank of each directory under src/: a layer may include only its own and lower ranks.
LAYERS = {
    "api": 5,
    "engine": 4,
    "grammar": 3,
    "models": 2,
    "tokenizer": 2,
    "chat": 2,
    "gpu": 1,
    "format": 1,
    "common": 0,
}
# Headers outside src/ that any layer may include (include/).
PUBLIC = {"vkllm.h"}
VULKAN = re.compile(r"^(volk\.h|vulkan/.*)$")
# The one file that calls the operating system, and the headers that give away such a call: the
# C and C++ standard headers are everyone's, the rest are POSIX's, Linux's, Windows' or Apple's.
PLATFORM_FILE = "common/platform.cpp"
OS_HEADER = re.compile(r"^(unistd\.h|fcntl\.h|dlfcn\.h|pthread\.h|dirent\.h|io\.h|direct\.h|"
                       r"windows\.h|winbase\.h|sys/.*|linux/.*|mach/.*|mach-o/.*|android/.*|"
                       r"TargetConditionals\.h)$", re.IGNORECASE)
GNU_ONLY = re.compile(r"\b(__builtin_\w+|__int128|__typeof__|typeof)\b|#\s*pragma\s+GCC")
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')


def sources(src):
    for root, _, files in os.walk(src):
        for name in sorted(files):
            if name.endswith((".h", ".hpp", ".cpp", ".c")):
                yield os.path.relpath(os.path.join(root, name), src)


def includes(src, rel):
    """(line number, '<' or '"', included name) of each #include of src/rel."""
    with open(os.path.join(src, rel), encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            m = INCLUDE.match(line)
            if m:
                yield n, m.group(1), m.group(2)


def layer_of(rel):
    return rel.split("/", 1)[0] if "/" in rel else None


def included_layer(src, name):
    """The layer of an included name: its directory under src/; the shaders' interface headers
    (shaders/<family>/NAME.h, included as "<family>/NAME.h") and the generated shader registry
    (shader_names.h) are the gpu layer's own."""
    layer = layer_of(name)
    if layer in LAYERS:
        return layer
    if name == "shader_names.h" or os.path.isfile(os.path.join(src, "..", "shaders", name)):
        return "gpu"
    return None


def check_directions(src):
    errors = []
    for rel in sources(src):
        layer = layer_of(rel)
        if layer not in LAYERS:
            errors.append(f"src/{rel}: directory '{layer}' has no layer; add it to LAYERS in "
                          f"{os.path.basename(__file__)} (and to docs/ARCHITECTURE.md's map)")
            continue
        for n, kind, name in includes(src, rel):
            if kind != '"' or name in PUBLIC:
                continue
            to = included_layer(src, name)
            if to not in LAYERS:
                errors.append(f"src/{rel}:{n}: includes \"{name}\", which is in no layer")
            elif to == layer:
                continue
            elif LAYERS[to] > LAYERS[layer]:
                errors.append(f"src/{rel}:{n}: includes \"{name}\": upward, {layer} -> {to}")
            elif LAYERS[to] == LAYERS[layer]:
                errors.append(f"src/{rel}:{n}: includes \"{name}\": sideways, {layer} -> {to} "
                              "(siblings on one level use neither the other)")
    return errors


def check_models_vulkan(src):
    # Breadth-first through the quoted includes that resolve inside src/, so the chain reported
    # is a shortest one.
    errors = []
    for rel in sources(src):
        if layer_of(rel) != "models" or not rel.endswith(".h"):
            continue
        seen = {rel}
        queue = collections.deque([(rel, [f"src/{rel}"])])
        found = None
        while queue and not found:
            f, chain = queue.popleft()
            for n, kind, name in includes(src, f):
                here = chain[:-1] + [f"{chain[-1]}:{n}"]
                if VULKAN.match(name):
                    found = here + [f"<{name}>"]
                    break
                if kind == '"' and name not in seen and os.path.isfile(os.path.join(src, name)):
                    seen.add(name)
                    queue.append((name, here + [f"src/{name}"]))
        if found:
            errors.append(f"src/{rel} reaches a Vulkan header: " + " -> ".join(found))
    if errors:
        errors.append("models/ takes the gpu layer's plain types (gpu::Matrix, gpu::BufferRange, "
                      "...) from a Vulkan-free header (gpu/tensor.h), never from one that includes "
                      "gpu/vulkan.h")
    return errors


def check_os_headers(src):
    errors = []
    for rel in sources(src):
        if rel == PLATFORM_FILE:
            continue
        for n, kind, name in includes(src, rel):
            if kind == "<" and OS_HEADER.match(name):
                errors.append(f"src/{rel}:{n}: includes <{name}>: calls into the operating "
                              f"system belong in src/{PLATFORM_FILE} (common/platform.h)")
    return errors


def check_gnu_builtins(src):
    errors = []
    for rel in sources(src):
        if rel == PLATFORM_FILE:
            continue
        with open(os.path.join(src, rel), encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                code = line.split("//")[0]
                m = GNU_ONLY.search(code)
                if m:
                    errors.append(f"src/{rel}:{n}: {m.group(0)} is GNU-only: MSVC has no such "
                                  f"builtin (common/checked_int.h has portable overflow checks)")
    return errors


def main():
    if len(sys.argv) != 3 or sys.argv[2] not in ("directions", "models-vulkan", "os-headers",
                                                  "gnu-builtins"):
        sys.exit(__doc__)
    src, what = sys.argv[1], sys.argv[2]
    if what == "directions":
        errors = check_directions(src)
        ok = "every #include in src/ goes down: " + " -> ".join(
            "/".join(k for k in LAYERS if LAYERS[k] == r) for r in sorted(set(LAYERS.values()),
                                                                       reverse=True))
    elif what == "os-headers":
        errors = check_os_headers(src)
        ok = f"only src/{PLATFORM_FILE} includes operating-system headers"
    elif what == "gnu-builtins":
        errors = check_gnu_builtins(src)
        ok = "no GNU builtin in src/ outside the platform file"
    else:
        errors = check_models_vulkan(src)
        ok = "no header under src/models/ reaches a Vulkan header"
    for e in errors:
        print(e)
    if errors:
        print("FAILED")
        sys.exit(1)
    print(ok)


if __name__ == "__main__":
    main()
