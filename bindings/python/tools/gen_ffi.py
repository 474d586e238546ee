#!/usr/bin/env python3
"""Generates bindings/python/vkllm/_ffi.py, the raw ctypes layer, from include/vkllm.h.

    python3 bindings/python/tools/gen_ffi.py            # rewrites vkllm/_ffi.py
    python3 bindings/python/tools/gen_ffi.py --check    # fails when the committed file differs
    python3 bindings/python/tools/gen_ffi.py -o FILE    # writes elsewhere

The header is read by this file's own small parser, not by a C front end: vkllm.h is written in
a narrow, regular subset of C (typedef'd enums with explicit values, typedef'd structs of
scalars, fixed arrays, pointers and earlier structs, function-pointer typedefs, VKLLM_API
prototypes, integer #defines), and the parser accepts only that subset: any other construct
stops it with the line it could not read, so the header cannot drift out of what the binding
understands unnoticed. It needs nothing but Python (no pycparser fed by a preprocessor that
expands glibc's headers, no libclang wheel to pin per platform), keeps what a preprocessor
would lose (the #define constants and which declarations sit behind #ifdef
VKLLM_EXPERIMENTAL), and its output is checked against the C compiler's own view by
bindings/python/test_ffi_layout.py (every struct's size and field offsets, every constant).

Deprecated aliases (VKLLM_DEPRECATED) are left out: the bindings call the current names.
"""

import argparse
import ast
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", "..", ".."))
HEADER = os.path.join(ROOT, "include", "vkllm.h")
OUTPUT = os.path.join(ROOT, "bindings", "python", "vkllm", "_ffi.py")

SCALARS = {
    "void": None, "char": "ctypes.c_char", "int": "ctypes.c_int", "float": "ctypes.c_float",
    "double": "ctypes.c_double", "size_t": "ctypes.c_size_t",
    "int8_t": "ctypes.c_int8", "uint8_t": "ctypes.c_uint8", "int16_t": "ctypes.c_int16",
    "uint16_t": "ctypes.c_uint16", "int32_t": "ctypes.c_int32", "uint32_t": "ctypes.c_uint32",
    "int64_t": "ctypes.c_int64", "uint64_t": "ctypes.c_uint64",
}
LIMITS = {"UINT64_MAX": 2**64 - 1, "INT64_MIN": -2**63, "INT32_MAX": 2**31 - 1,
          "UINT32_MAX": 2**32 - 1}
# Macros that are the header's machinery, not values.
MACHINERY = {"VKLLM_H", "VKLLM_API", "VKLLM_DEPRECATED"}


class HeaderError(Exception):
    pass


def strip_comments(text):
    """The header without comments; line numbers kept."""
    def blank(m):
        return re.sub(r"[^\n]", " ", m.group(0))
    return re.sub(r"/\*.*?\*/|//[^\n]*", blank, text, flags=re.S)


class Header:
    """What vkllm.h declares, in order: ("const", name, value, experimental),
    ("enum", name, [(const, value)], exp), ("opaque", name, exp), ("struct", name, fields, exp),
    ("callback", name, (ret, params), exp), ("function", name, (ret, params), exp)."""

    def __init__(self, text):
        self.items = []
        self.kinds = {}  # type name -> enum | opaque | struct | callback
        self.values = {}  # constant name -> value
        self._parse(strip_comments(text))

    # --- lines and preprocessor --------------------------------------------------------
    def _parse(self, text):
        lines = text.split("\n")
        # Logical lines: backslash continuations joined, each with its first line number.
        logical, i = [], 0
        while i < len(lines):
            start, line = i + 1, lines[i]
            while line.rstrip().endswith("\\") and i + 1 < len(lines):
                i += 1
                line = line.rstrip()[:-1] + " " + lines[i]
            logical.append((start, line))
            i += 1
        stack = []  # "guard", "experimental" or "skip" per open conditional
        decl, decl_line, depth = [], None, 0
        for number, line in logical:
            s = line.strip()
            if s.startswith("#"):
                directive = s[1:].strip()
                word = directive.split(None, 1)[0] if directive else ""
                if word in ("ifndef", "ifdef", "if"):
                    if directive == "ifndef VKLLM_H":
                        stack.append("guard")
                    elif directive == "ifdef VKLLM_EXPERIMENTAL":
                        stack.append("experimental")
                    else:
                        stack.append("skip")
                elif word in ("elif", "else"):
                    if not stack or stack[-1] != "skip":
                        raise HeaderError(f"line {number}: #{word} of a block the generator "
                                          "reads: only machinery blocks may have branches")
                elif word == "endif":
                    if not stack:
                        raise HeaderError(f"line {number}: #endif without #if")
                    stack.pop()
                elif word == "include":
                    if directive not in ("include <stddef.h>", "include <stdint.h>"):
                        raise HeaderError(f"line {number}: unexpected {s}")
                elif word == "define":
                    body = directive[len("define"):].strip()
                    if "skip" not in stack:
                        self._define(number, body, "experimental" in stack)
                    elif re.match(r"\w+", body).group(0) not in MACHINERY:
                        raise HeaderError(f"line {number}: a constant inside a conditional "
                                          f"block the generator does not read: {s}")
                else:
                    raise HeaderError(f"line {number}: unexpected directive {s}")
                continue
            if "skip" in stack:
                # Only the C++ linkage lines live in machinery blocks.
                if s and s not in ('extern "C" {', "}"):
                    raise HeaderError(f"line {number}: a declaration inside a conditional "
                                      f"block the generator does not read: {s}")
                continue
            for part in re.split(r"([;{}])", line):
                if part == "{":
                    depth += 1
                elif part == "}":
                    depth -= 1
                if part == ";" and depth == 0:
                    self._declaration(decl_line, " ".join(decl), "experimental" in stack)
                    decl, decl_line = [], None
                elif part.strip():
                    if decl_line is None:
                        decl_line = number
                    decl.append(part.strip())
        if decl:
            raise HeaderError(f"line {decl_line}: a declaration without its ';'")
        if stack:
            raise HeaderError("an #if without its #endif")

    def _define(self, number, body, experimental):
        m = re.match(r"(\w+)(\(?)\s*(.*)$", body)
        name, function_like, value = m.group(1), m.group(2), m.group(3).strip()
        if name in MACHINERY or function_like:
            return
        if not name.startswith("VKLLM_"):
            raise HeaderError(f"line {number}: #define {name} is not VKLLM_")
        try:
            v = self._evaluate(value)
        except (ValueError, SyntaxError, KeyError) as e:
            raise HeaderError(f"line {number}: #define {name} {value}: not an integer "
                              f"constant ({e})") from None
        self.values[name] = v
        self.items.append(("const", name, v, experimental))

    def _evaluate(self, expr):
        expr = re.sub(r"\b(0[xX][0-9a-fA-F]+|\d+)[uUlL]*\b", r"\1", expr)

        def value(node):
            if isinstance(node, ast.Constant) and isinstance(node.value, int):
                return node.value
            if isinstance(node, ast.Name):
                if node.id in LIMITS:
                    return LIMITS[node.id]
                return self.values[node.id]
            if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
                return -value(node.operand)
            if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult,
                                                                    ast.BitOr, ast.LShift)):
                a, b = value(node.left), value(node.right)
                return {ast.Add: a + b, ast.Sub: a - b, ast.Mult: a * b, ast.BitOr: a | b,
                        ast.LShift: a << b}[type(node.op)]
            raise ValueError(ast.dump(node))
        return value(ast.parse(expr, mode="eval").body)

    # --- declarations -----------------------------------------------------------------
    def _declaration(self, number, text, experimental):
        text = re.sub(r"\s+", " ", text).strip()
        where = f"line {number}: "
        if text.startswith("VKLLM_DEPRECATED("):
            return  # an old name kept for C callers; bindings call the new one
        m = re.match(r"typedef enum (\w+) \{(.*)\} (\w+)$", text)
        if m:
            if m.group(1) != m.group(3):
                raise HeaderError(where + f"enum {m.group(1)} typedef'd as {m.group(3)}")
            constants, nxt = [], 0
            for entry in [e.strip() for e in m.group(2).split(",") if e.strip()]:
                em = re.match(r"(VKLLM_\w+)(?: = (.+))?$", entry)
                if not em:
                    raise HeaderError(where + f"enum entry {entry!r}")
                v = self._evaluate(em.group(2)) if em.group(2) else nxt
                self.values[em.group(1)] = v
                constants.append((em.group(1), v))
                nxt = v + 1
            self._add("enum", m.group(1), constants, experimental, where)
            return
        m = re.match(r"typedef struct (\w+) (\w+)$", text)
        if m:
            if m.group(1) != m.group(2):
                raise HeaderError(where + f"struct {m.group(1)} typedef'd as {m.group(2)}")
            self._add("opaque", m.group(1), None, experimental, where)
            return
        m = re.match(r"typedef struct (\w+) \{(.*)\} (\w+)$", text)
        if m:
            if m.group(1) != m.group(3):
                raise HeaderError(where + f"struct {m.group(1)} typedef'd as {m.group(3)}")
            fields = []
            for member in m.group(2).split(";"):
                if member.strip():
                    fields += self._members(member.strip(), where)
            self._add("struct", m.group(1), fields, experimental, where)
            return
        m = re.match(r"typedef (.+?) ?\( ?\* ?(\w+) ?\) ?\((.*)\)$", text)
        if m:
            self._add("callback", m.group(2),
                      (self._type(m.group(1), where), self._params(m.group(3), where)),
                      experimental, where)
            return
        m = re.match(r"struct (\w+)$", text)
        if m:
            return  # a forward declaration; the struct or handle is declared in its section
        m = re.match(r"VKLLM_API (.+?) ?\b(vkllm_\w+) ?\((.*)\)$", text)
        if m:
            self._add("function", m.group(2),
                      (self._type(m.group(1), where), self._params(m.group(3), where)),
                      experimental, where)
            return
        raise HeaderError(where + f"a declaration the generator does not know: {text}")

    def _add(self, kind, name, body, experimental, where):
        if kind != "function":
            if name in self.kinds:
                raise HeaderError(where + f"{name} declared twice")
            self.kinds[name] = kind
        self.items.append((kind, name, body, experimental))

    def _members(self, member, where):
        """[(name, type)] of one struct member declaration (`uint32_t m, n, k`)."""
        m = re.match(r"((?:const )?(?:struct )?\w+(?: const)?) (.+)$", member)
        if not m:
            raise HeaderError(where + f"struct member {member!r}")
        base, out = m.group(1), []
        for declarator in m.group(2).split(","):
            dm = re.match(r"^([\s*]*(?:const\s*)?[\s*]*)(\w+)\s*(?:\[\s*(\w+)\s*\])?$",
                          declarator.strip())
            if not dm:
                raise HeaderError(where + f"struct member declarator {declarator!r}")
            t = self._type(base + " " + dm.group(1), where)
            if dm.group(3):
                n = self._evaluate(dm.group(3))
                t = ("array", t, n, dm.group(3))
            out.append((dm.group(2), t))
        return out

    def _params(self, text, where):
        text = text.strip()
        if text == "void":
            return []
        params = []
        for p in text.split(","):
            m = re.match(r"(.*?[\s*])(\w+)$", p.strip())
            if not m:
                raise HeaderError(where + f"parameter {p!r} (every parameter is named)")
            params.append((m.group(2), self._type(m.group(1), where)))
        return params

    def _type(self, text, where):
        """A type as ("base", name) wrapped in ("ptr", inner) levels; const dropped."""
        tokens = re.findall(r"\w+|\*", text)
        tokens = [t for t in tokens if t not in ("const", "struct")]
        if not tokens or tokens[0] == "*":
            raise HeaderError(where + f"type {text!r}")
        name, stars = tokens[0], tokens[1:]
        if any(t != "*" for t in stars):
            raise HeaderError(where + f"type {text!r}: one type name then pointers expected")
        if name not in SCALARS and not name.startswith("vkllm_"):
            raise HeaderError(where + f"type {name} is neither a C scalar nor vkllm's")
        t = ("base", name)
        for _ in stars:
            t = ("ptr", t)
        return t


class Writer:
    """Python text for the Header's items."""

    def __init__(self, header):
        self.h = header
        self.written = set()  # the types declared so far, in header order

    def kind(self, name):
        if name in SCALARS:
            return "scalar"
        kind = self.h.kinds.get(name)
        if kind is None:
            raise HeaderError(f"{name} is used but never declared")
        if kind in ("enum", "struct", "callback") and name not in self.written:
            # Python names must exist before use; C allows this only for a pointer to a
            # struct declared later, which the header does not do.
            raise HeaderError(f"{name} is used before its declaration")
        return kind

    def ctype(self, t, context):
        """context: "field", "param", "return", or "callback" (a callback's parameters, where a
        char pointer stays a pointer: ctypes would turn c_char_p into bytes up to the first NUL,
        and text given with a length may be cut anywhere)."""
        if t[0] == "array":
            return f"{self.ctype(t[1], 'field')} * {t[3] if t[3] in self.h.values else t[2]}"
        if t[0] == "base":
            name = t[1]
            kind = self.kind(name)
            if kind == "scalar":
                if name == "void":
                    return "None"
                return SCALARS[name]
            if kind in ("enum", "struct", "callback"):
                return name
            raise HeaderError(f"{name} is a handle: only a pointer to it is a type")
        inner = t[1]
        if inner[0] == "base":
            name, kind = inner[1], self.kind(inner[1])
            if name == "char":
                return "ctypes.POINTER(ctypes.c_char)" if context == "callback" else \
                    "ctypes.c_char_p"
            if name == "void" or kind == "opaque":
                return "ctypes.c_void_p"  # handles are opaque addresses
        return f"ctypes.POINTER({self.ctype(inner, 'field')})"

    def write(self):
        blocks, functions, structs = [], [], []  # blocks: (blank lines before, text)
        section = None
        for kind, name, body, exp in self.h.items:
            if kind == "function":
                functions.append((name, body, exp))
                continue
            if kind != "struct":  # a struct's fields are written before its name exists
                self.written.add(name)
            if exp != section:
                blocks.append((2, "# --- Experimental (#ifdef VKLLM_EXPERIMENTAL): may change or "
                                  "go in any minor version ---" if exp else "# --- Stable ---"))
                section = exp
            if kind == "const":
                text = f"{name} = {body if abs(body) < 0x10000 else hex(body)}"
                if blocks and blocks[-1][1].split(" = ")[0].isupper() and blocks[-1][0] == 1:
                    blocks[-1] = (1, blocks[-1][1] + "\n" + text)  # a run of constants
                else:
                    blocks.append((1, text))
            elif kind == "enum":
                lines = [f"{name} = ctypes.c_int  # an enum"]
                lines += [f"{c} = {v if v < 0x10000 else hex(v)}" for c, v in body]
                blocks.append((1, "\n".join(lines)))
            elif kind == "opaque":
                blocks.append((1, f"# {name}: an opaque handle, passed as ctypes.c_void_p"))
            elif kind == "callback":
                ret, params = body
                args = [self.ctype(ret, "return")] + [self.ctype(t, "callback")
                                                     for _, t in params]
                line = f"{name} = ctypes.CFUNCTYPE({', '.join(args)})"
                if len(line) > 99:
                    line = f"{name} = ctypes.CFUNCTYPE(\n    " + ",\n    ".join(args) + ",\n)"
                blocks.append((1, f"# ({', '.join(p for p, _ in params)})\n{line}"))
            elif kind == "struct":
                structs.append(name)
                lines = [f"class {name}(ctypes.Structure):", "    _fields_ = ["]
                lines += [f"        ({field!r}, {self.ctype(t, 'field')})," for field, t in body]
                lines.append("    ]")
                blocks.append((2, "\n".join(lines)))
                self.written.add(name)
        blocks.append((2, "# Every struct, for the layout check (test_ffi_layout.py).\n"
                       "STRUCTS = (\n" + "".join(f"    {s},\n" for s in structs) + ")"))
        lines = ["# name: (restype, argtypes); EXPERIMENTAL names those the header declares only "
                 "under\n# VKLLM_EXPERIMENTAL.", "FUNCTIONS = {"]
        for name, (ret, params), exp in functions:
            args = ", ".join(self.ctype(t, "param") for _, t in params)
            mark = "  # experimental" if exp else ""
            line = f"    {name!r}: ({self.ctype(ret, 'return')}, [{args}]),{mark}"
            if len(line) > 99:
                wrapped = ",\n            ".join(self.ctype(t, "param") for _, t in params)
                line = (f"    {name!r}: (\n        {self.ctype(ret, 'return')},\n"
                        f"        [\n            {wrapped},\n        ],\n    ),{mark}")
            lines.append(line)
        lines.append("}")
        blocks.append((1, "\n".join(lines)))
        blocks.append((1, "EXPERIMENTAL = frozenset({\n" + "".join(
            f"    {name!r},\n" for name, _, exp in functions if exp) + "})"))
        blocks.append((2, DECLARE.strip()))
        out, after_class = PREAMBLE.rstrip("\n"), False
        for blank, text in blocks:
            out += "\n" * ((2 if after_class else blank) + 1) + text  # PEP 8's blank lines
            after_class = text.startswith("class ")
        return out + "\n"


PREAMBLE = '''# Generated by bindings/python/tools/gen_ffi.py from include/vkllm.h: do not edit.
"""The raw C API of libvkllm as ctypes declarations: every struct, enum constant, callback
type, #define constant and function prototype of include/vkllm.h, under their C names.

GENERATED from include/vkllm.h by bindings/python/tools/gen_ffi.py: do not edit. After changing
the header, regenerate it with
    python3 bindings/python/tools/gen_ffi.py
(ctest Python.FfiIsGeneratedFromTheHeader fails while it differs; Python.FfiLayoutMatchesC
compares every struct's size and field offsets, and every constant, with the C compiler's).

Handles are ctypes.c_void_p; a char pointer is ctypes.c_char_p, except among a callback's
parameters, where it is ctypes.POINTER(ctypes.c_char) (read it with ctypes.string_at). The
idiomatic layer (the other modules of this package) is written by hand on top of this one.
"""

import ctypes
'''

DECLARE = '''
def declare(lib):
    """Sets restype and argtypes of every function of FUNCTIONS on a ctypes.CDLL."""
    for name, (restype, argtypes) in FUNCTIONS.items():
        function = getattr(lib, name)
        function.restype = restype
        function.argtypes = argtypes
    return lib
'''


def generate(header_path=HEADER):
    with open(header_path, encoding="utf-8") as f:
        return Writer(Header(f.read())).write()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--header", default=HEADER)
    ap.add_argument("-o", "--output", default=OUTPUT)
    ap.add_argument("--check", action="store_true",
                    help="write nothing; exit 1 when OUTPUT differs from what the header gives")
    args = ap.parse_args()
    try:
        text = generate(args.header)
    except HeaderError as e:
        print(f"{args.header}: {e}", file=sys.stderr)
        return 2
    if args.check:
        try:
            with open(args.output, encoding="utf-8") as f:
                committed = f.read()
        except OSError:
            committed = None
        if committed != text:
            import difflib
            diff = difflib.unified_diff((committed or "").splitlines(True), text.splitlines(True),
                                        args.output + " (committed)", "generated from the header")
            sys.stdout.writelines(list(diff)[:80])
            print(f"\n{args.output} is not what {args.header} generates: run "
                  "python3 bindings/python/tools/gen_ffi.py and commit the result")
            return 1
        print(f"{args.output} is what {args.header} generates")
        return 0
    with open(args.output, "w", encoding="utf-8") as f:
        f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
