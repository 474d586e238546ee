#!/usr/bin/env python3
"""Every public C function reaches every binding (ctest Bindings.CoverEveryPublicFunction).

Lists the VKLLM_API functions of include/vkllm.h and, for each binding, the functions its
sources call:
  python  bindings/python/vkllm/*.py (the package's hand-written modules; not the generated
          _ffi.py, which declares every function, called or not): attribute uses `lib.vkllm_x`
          in code (not in strings or comments);
  rust    bindings/rust/vkllm/src/**.rs (the safe crate): `vkllm_x` in code;
  go      bindings/go/*.go but tests: `C.vkllm_x` in Go code, and calls `vkllm_x(` in the cgo
          preambles and the *.c files (prototypes do not count).
Deprecated names (VKLLM_DEPRECATED) and experimental calls (under #ifdef VKLLM_EXPERIMENTAL)
are not required. A function a binding leaves out needs a line in bindings/UNBOUND.md saying why:
  python vkllm_x: the reason
The check fails naming each function that has neither, each reason for a function the binding
calls after all, and each reason for a function the header no longer has. It needs no build.

Usage: check_binding_coverage.py [REPO_ROOT]   (default: the checkout this file is in)
"""

import ast
import os
import re
import sys

BINDINGS = ("python", "rust", "go")
# Generated raw layers: they declare what the header has, so a name there says nothing about
# whether the idiomatic layer calls it.
PYTHON_GENERATED = {"_ffi.py"}
REASON_LINE = re.compile(r"^(?:[-*]\s+)?(python|rust|go)\s+(vkllm_\w+)\s*:\s*(.*?)\s*$")


def strip_c_like(text, raw_backticks=False):
    """Blanks the comments and string/char literals of C, Rust or Go text, keeping the lines."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        two = text[i:i + 2]
        if two == "//":
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif two == "/*":
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == '"' or (c == "`" and raw_backticks):
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" and c == '"' else 1
            out.append(re.sub(r"[^\n]", " ", text[i:j + 1]))
            i = j + 1
        elif c == "'" and re.match(r"'(\\.|[^\\'])'", text[i:i + 4]) or (
                c == "'" and re.match(r"'\\[xu]", text[i:i + 3])):
            # A char literal (a Rust lifetime such as 'a is no literal and is left alone).
            j = text.find("'", i + 2)
            out.append(" " * (j + 1 - i))
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def header_functions(header):
    text = strip_c_like(header)
    # Experimental calls (declared only under #ifdef VKLLM_EXPERIMENTAL) may change or go in
    # any minor version: a binding may offer them, none has to.
    text = re.sub(r"^\s*#\s*ifdef\s+VKLLM_EXPERIMENTAL\b.*?^\s*#\s*endif\b", "", text,
                  flags=re.M | re.S)
    text = re.sub(r"^\s*#.*$", "", text, flags=re.M)  # the VKLLM_API definition itself
    names = [m.group(1) for m in re.finditer(r"\bVKLLM_API\b[^;{]*?\b(vkllm_\w+)\s*\(", text)]
    # The old names of renamed functions are kept for callers built against them; bindings
    # call the new ones.
    deprecated = set(re.findall(r"\bVKLLM_DEPRECATED\([^)]*\)\s*VKLLM_API\b[^;{]*?\b(vkllm_\w+)\s*\(",
                                text))
    return sorted(set(names) - deprecated)


def python_calls(source):
    # Attribute uses in the syntax tree: f-string expressions count, strings and comments not.
    return {node.attr for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.Attribute) and node.attr.startswith("vkllm_")}


def rust_calls(source):
    return set(re.findall(r"\b(vkllm_\w+)\b", strip_c_like(source)))


def c_calls(code):
    """Calls in C code: `vkllm_x(` after anything but a type name (which makes a prototype)."""
    used = set()
    for m in re.finditer(r"\b(vkllm_\w+)\s*\(", code):
        before = code[:m.start()].rstrip()
        word = re.search(r"(\w+|\*)$", before)
        if word is None or word.group(1) == "return" or not (
                word.group(1) == "*" or re.match(r"\w", word.group(1))):
            used.add(m.group(1))
    return used


def go_calls(source):
    used = set()
    # The cgo preamble: the comment right before `import "C"`, C code.
    for m in re.finditer(r"/\*(.*?)\*/\s*import\s+\"C\"", source, flags=re.S):
        used |= c_calls(strip_c_like(m.group(1)))
    used |= set(re.findall(r"\bC\.(vkllm_\w+)\b", strip_c_like(source, raw_backticks=True)))
    return used


def binding_sources(root, binding):
    if binding == "python":
        d = os.path.join(root, "bindings", "python", "vkllm")
        return [os.path.join(d, f) for f in sorted(os.listdir(d))
                if f.endswith(".py") and f not in PYTHON_GENERATED]
    if binding == "rust":
        d = os.path.join(root, "bindings", "rust", "vkllm", "src")
        return sorted(os.path.join(dp, f) for dp, _, fs in os.walk(d) for f in fs
                      if f.endswith(".rs"))
    d = os.path.join(root, "bindings", "go")
    return [os.path.join(d, f) for f in sorted(os.listdir(d))
            if (f.endswith(".go") and not f.endswith("_test.go")) or f.endswith(".c")]


def binding_calls(root, binding):
    used = set()
    for path in binding_sources(root, binding):
        with open(path, encoding="utf-8") as f:
            source = f.read()
        if binding == "python":
            used |= python_calls(source)
        elif binding == "rust":
            used |= rust_calls(source)
        elif path.endswith(".c"):
            used |= c_calls(strip_c_like(source))
        else:
            used |= go_calls(source)
    return used


def read_reasons(path):
    """{binding: {function: reason}} and the problems of the file's own form."""
    reasons = {b: {} for b in BINDINGS}
    problems = []
    if not os.path.exists(path):
        return reasons, problems
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            m = REASON_LINE.match(line)
            if not m:
                continue
            binding, name, reason = m.groups()
            where = f"{os.path.basename(path)}:{number}"
            if len(reason.split()) < 3:
                problems.append(f"{where}: {binding} {name}: a reason of a few words is needed")
            elif name in reasons[binding]:
                problems.append(f"{where}: {binding} {name} is given a reason twice")
            else:
                reasons[binding][name] = reason
    return reasons, problems


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                           os.path.join(os.path.dirname(__file__), os.pardir))
    with open(os.path.join(root, "include", "vkllm.h"), encoding="utf-8") as f:
        functions = header_functions(f.read())
    if len(functions) < 50:
        print(f"only {len(functions)} VKLLM_API functions found in include/vkllm.h: "
              "the header parser is broken")
        return 1
    reasons_path = os.path.join(root, "bindings", "UNBOUND.md")
    reasons, failures = read_reasons(reasons_path)
    public = set(functions)
    print(f"include/vkllm.h: {len(functions)} public functions")
    for binding in BINDINGS:
        called = binding_calls(root, binding)
        given = reasons[binding]
        missing = [f for f in functions if f not in called and f not in given]
        for f in missing:
            failures.append(f"{binding}: {f} is neither called nor given a reason in "
                            "bindings/UNBOUND.md")
        for f in sorted(given):
            if f not in public:
                failures.append(f"{binding}: UNBOUND.md gives a reason for {f}, which "
                                "include/vkllm.h does not declare")
            elif f in called:
                failures.append(f"{binding}: UNBOUND.md gives a reason for {f}, which the "
                                "binding calls")
        n_called = len(public & called)
        n_reason = len(public & set(given) - called)
        print(f"{binding}: {n_called} called, {n_reason} left out with a reason, "
              f"{len(missing)} missing, of {len(functions)}")
    for line in failures:
        print("FAIL " + line)
    print(f"binding coverage: {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
