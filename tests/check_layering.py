#!/usr/bin/env python3
"""The layers of src/ depend one way, downwards (docs/ARCHITECTURE.md):

    api -> engine -> grammar -> models, tokenizer, chat -> gpu, format -> common

A file may include its own layer's headers and those of any layer below its own; never one
above (upward) nor a sibling on its own level (sideways: models, tokenizer and chat, gpu and
format).
The public header vkllm.h (include/) is the C ABI's vocabulary and may be included anywhere;
the shaders' interface headers (shaders/<family>/NAME.h, shaders/include/NAME.h) and the
generated shader_names.h are the gpu layer's; the shaders themselves include nothing from src/.

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
    check_layering.py SRC_DIR shaders-include
                                           the shaders (SRC_DIR/../shaders) include only
                                           shaders: their own folder's files, shaders/include/
                                           and the generated weight_types.glsl; nothing from
                                           src/, and of <...> headers only C++'s and volk.h
    check_layering.py SRC_DIR push-by-name  no file of SRC_DIR fills a shader's push constants
                                           (a VKLLM_PUSH_BEGIN struct of shaders/) by position
                                           in a braced initializer: each member is set by
                                           name, so a member added or moved is never a value
                                           in the wrong slot
    check_layering.py self-test            plants a violation of each of the last two in a
                                           scratch tree and fails unless each is reported

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


def includes(root, rel):
    """(line number, '<' or '"', included name) of each #include of root/rel."""
    with open(os.path.join(root, rel), encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            m = INCLUDE.match(line)
            if m:
                yield n, m.group(1), m.group(2)


def layer_of(rel):
    return rel.split("/", 1)[0] if "/" in rel else None


def included_layer(src, name):
    """The layer of an included name: its directory under src/; the shaders' interface headers
    (shaders/<family>/NAME.h, included as "<family>/NAME.h", and shaders/include/NAME.h) and the
    generated shader registry (shader_names.h) are the gpu layer's own."""
    layer = layer_of(name)
    if layer in LAYERS:
        return layer
    shaders = os.path.join(src, "..", "shaders")
    if name == "shader_names.h" or any(os.path.isfile(os.path.join(shaders, d, name))
                                       for d in ("", "include")):
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


def resolve(src, name):
    """Where a quoted include is found, relative to the repository: src/, shaders/ or
    shaders/include/ (the include path of the library's sources); None if in none of them."""
    for d in ("src", "shaders", "shaders/include"):
        if os.path.isfile(os.path.join(src, "..", d, name)):
            return f"{d}/{name}"
    return None


def check_models_vulkan(src):
    # Breadth-first through the quoted includes that resolve inside src/, so the chain reported
    # is a shortest one.
    errors = []
    for rel in sources(src):
        if layer_of(rel) != "models" or not rel.endswith(".h"):
            continue
        seen = {rel}
        queue = collections.deque([(f"src/{rel}", [f"src/{rel}"])])
        found = None
        while queue and not found:
            f, chain = queue.popleft()
            for n, kind, name in includes(os.path.join(src, ".."), f):
                here = chain[:-1] + [f"{chain[-1]}:{n}"]
                if VULKAN.match(name):
                    found = here + [f"<{name}>"]
                    break
                where = resolve(src, name) if kind == '"' and name not in seen else None
                if where:
                    seen.add(name)
                    queue.append((where, here + [where]))
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


# Generated into the build's shaders/include/ (cmake/shaders.cmake), so no file of shaders/.
SHADER_GENERATED = {"weight_types.glsl"}
SHADER_SOURCE = (".h", ".glsl", ".comp")


def check_shaders_include(src):
    shaders = os.path.normpath(os.path.join(src, "..", "shaders"))
    errors = []
    for root, _, files in sorted(os.walk(shaders)):
        for name in sorted(f for f in files if f.endswith(SHADER_SOURCE)):
            path = os.path.join(root, name)
            rel = os.path.relpath(path, os.path.join(shaders, ".."))
            with open(path, encoding="utf-8") as f:
                for n, line in enumerate(f, 1):
                    m = INCLUDE.match(line)
                    if not m:
                        continue
                    kind, inc = m.group(1), m.group(2)
                    if kind == "<":
                        ok = "/" not in inc and (not inc.endswith(".h") or inc == "volk.h")
                    else:
                        ok = inc in SHADER_GENERATED or any(
                            os.path.isfile(os.path.join(d, inc))
                            for d in (root, os.path.join(shaders, "include")))
                    if not ok:
                        errors.append(f"{rel}:{n}: includes {kind}{inc}"
                                      f"{'>' if kind == '<' else kind}: the shaders include "
                                      "only their own folder, shaders/include/ and C++'s headers, "
                                      "nothing from src/ (what the interfaces need lives in "
                                      "shaders/include/interface.h)")
    return errors


def push_structs(src):
    names = set()
    for root, _, files in os.walk(os.path.join(src, "..", "shaders")):
        for name in files:
            if name.endswith(".h"):
                with open(os.path.join(root, name), encoding="utf-8") as f:
                    names.update(re.findall(r"^\s*VKLLM_PUSH_BEGIN\((\w+)\)", f.read(), re.M))
    return names


def check_push_by_name(src):
    names = push_structs(src)
    if not names:
        return ["no VKLLM_PUSH_BEGIN struct found under shaders/: nothing to check"]
    # NAME, an optional variable and '=', then a brace that is not '{}' (value-initialized).
    aggregate = re.compile(r"\b(" + "|".join(sorted(names)) + r")\b(\s+\w+)?\s*(=\s*)?\{(?!\s*\})")
    errors = []
    for rel in sources(src):
        with open(os.path.join(src, rel), encoding="utf-8") as f:
            text = f.read()
        code = re.sub(r"//[^\n]*", "", text)
        for m in aggregate.finditer(code):
            n = code.count("\n", 0, m.start()) + 1
            errors.append(f"src/{rel}:{n}: {m.group(1)} filled by position: declare it value-"
                          f"initialized ({m.group(1)} push{{}};) and set each member by name "
                          "(push.rows = ...;)")
    return errors


def self_test():
    """Plants one violation of shaders-include and push-by-name each in a scratch tree (and a
    clean tree beside it) and checks that exactly the planted ones are reported."""
    import tempfile
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        def write(rel, text):
            path = os.path.join(tmp, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
        src = os.path.join(tmp, "src")
        write("shaders/include/interface.h", "#include <cstdint>\n#include <volk.h>\n")
        write("shaders/fam/op.h", '#include "interface.h"\nVKLLM_PUSH_BEGIN(OpPush)\n'
                                  "uint n;\nVKLLM_PUSH_END(OpPush)\n")
        write("shaders/fam/op.comp", '#include "op.h"\n#include "weight_types.glsl"\n')
        write("src/gpu/kernels/op.cpp", "shaders::OpPush push{};\npush.n = 1;\n"
                                        "// shaders::OpPush old{1};\nVkPushConstantRange r{0, 4};\n")
        if check_shaders_include(src) or check_push_by_name(src):
            failures.append("a clean tree reported: " +
                            "; ".join(check_shaders_include(src) + check_push_by_name(src)))
        write("shaders/fam/op.h", '#include "interface.h"\n#include "gpu/pipeline.h"\n'
                                  "#include <vulkan/vulkan_core.h>\nVKLLM_PUSH_BEGIN(OpPush)\n"
                                  "uint n;\nVKLLM_PUSH_END(OpPush)\n")
        write("src/gpu/pipeline.h", "\n")
        write("src/gpu/kernels/op.cpp", "shaders::OpPush push{1};\nOpPush again = {\n  2};\n"
                                        "return shaders::OpPush{3};\n")
        got = check_shaders_include(src)
        if len(got) != 2 or not all("shaders/fam/op.h:" in e for e in got):
            failures.append(f"shaders-include: want op.h:2 and op.h:3, got {got}")
        got = check_push_by_name(src)
        if [e.split(": ")[0] for e in got] != ["src/gpu/kernels/op.cpp:" + n for n in "124"]:
            failures.append(f"push-by-name: want op.cpp:1, :2 and :4, got {got}")
    return failures


def main():
    if sys.argv[1:] == ["self-test"]:
        failures = self_test()
        for f in failures:
            print(f)
        if failures:
            print("FAILED")
            sys.exit(1)
        print("self-test: each planted violation reported, a clean tree passes")
        return
    if len(sys.argv) != 3 or sys.argv[2] not in ("directions", "models-vulkan", "os-headers",
                                                  "gnu-builtins", "shaders-include",
                                                  "push-by-name"):
        sys.exit(__doc__)
    src, what = sys.argv[1], sys.argv[2]
    if what == "shaders-include":
        errors = check_shaders_include(src)
        ok = "the shaders include only shaders/ (and C++'s headers), nothing from src/"
    elif what == "push-by-name":
        errors = check_push_by_name(src)
        ok = "every push-constant struct is filled member by member, by name"
    elif what == "directions":
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
