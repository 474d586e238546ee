#!/usr/bin/env python3
"""Writes tests/data/pretokenize_golden.json: every pre-tokenizer rule set of
src/tokenizer/pretokenize_rules.cpp (read from that file, so the patterns are exactly the C++
table's), and the splits of a few hundred inputs by each, as the Python `regex` module
(pip install regex) finds them: an independent implementation of the same patterns. Each
regex of a set splits every piece the previous ones left into its matches and the text between
them, as llama.cpp and the Hugging Face pre-tokenizers do. Splits are stored as piece lengths in
code points. Deterministic for a given `regex` version; the characters used have the same
properties in its Unicode data as in Unicode 14.0 (checked), so the file holds for the C++
tables too.

    python3 tools/gen_pretokenize_golden.py [output.json]
"""

import json
import os
import random
import re
import sys
import unicodedata

import regex

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


def cpp_strings(text):
    """The C++ string literals of `text` (raw or plain, adjacent ones joined) and constant names,
    in order, as ("str", value) or ("name", identifier)."""
    out = []
    pos = 0
    token = re.compile(r'R"\((.*?)\)"|"((?:[^"\\]|\\.)*)"|\b(k[A-Z]\w*)\b', re.S)
    for m in token.finditer(text):
        if m.group(1) is not None:
            value = m.group(1)
        elif m.group(2) is not None:
            value = m.group(2).encode("latin-1", "backslashreplace").decode("unicode_escape")
        else:
            out.append(("name", m.group(3)))
            continue
        if out and out[-1][0] == "str" and text[pos:m.start()].strip() == "":
            out[-1] = ("str", out[-1][1] + value)
        else:
            out.append(("str", value))
        pos = m.end()
    return out


def read_rules():
    src = open(os.path.join(ROOT, "src", "tokenizer", "pretokenize_rules.cpp"),
               encoding="utf-8").read()
    constants = {}
    for m in re.finditer(r"constexpr char (k\w+)\[\] =(.*?);\n", src, re.S):
        (kind, value), = cpp_strings(m.group(2))
        constants[m.group(1)] = value
    table = src[src.index("kRules = {"):src.index("\n};\n", src.index("kRules = {"))]
    rules = []
    # Each row: {"names", {regexes...}, flags}; rows start on a line "    {".
    for row in re.split(r"\n    \{", table)[1:]:
        row = re.sub(r"//[^\n]*", "", row)
        items = cpp_strings(row)
        names = items[0][1]
        regexes = [constants[v] if k == "name" else v for k, v in items[1:]
                   if k == "str" or v in constants]
        flags = [f for f in ("kRawUtf8", "kEscapeSpaces", "kIgnoreMerges", "kNfc",
                             "kAddBosByDefault") if f in row]
        rules.append({"names": names.split(), "regexes": regexes, "flags": flags})
    return rules


# Hand-picked inputs: the documented behaviours and the corners of each alternative.
FIXED = [
    "", " ", "   Hello", "Hello world", "Hello  world", "1234567", "DON'T", "don't", "I'm",
    "they're", "we've", "you'll", "he'd", "it's", "IT'S", "'S'T'RE'VE'M'LL'D", "'Ll'lL'rE",
    "'x'", "'", "''s", "a's", "\u017f", "'\u017f", "don\u2019t", "\r\n\n  x", "a\r\n\r\nb",
    "  \n  ", "\n", "\t\tx", "a \t b", "a\u3000b", "x\u00a0\u00a0y", "x  ", "x \n ",
    "hello!!\n\nworld", "!?\r\n", " !x", "  !x", "a/b//\n/c", "path/to/file\n/", "12345678901",
    "a1b22c333d4444", "x\u00bd\u00b2\u2160\u2161", "HelloWorld", "HELLOworld", "helloWORLD",
    "\u01c5ungla", "\u01c5\u01c5", "\u02b0ello", "ABC\u0301def", "e\u0301\u0301", "\u0301abc",
    " \u0301", "\u0301\u0301", "a\u0301 b\u0327", "Stra\u00dfe", "\u00c9COLE \u00e9cole",
    "\u4e2d\u6587\u5b57\u7b26", "\u65e5\u672c\u8a9e\u306e\u30c6\u30ad\u30b9\u30c8",
    "한국어 텍스트", "नमस्ते दुनिया",
    "สวัสดีครับ", "مرحبا بالعالم",
    "Привет, мир!", "Γειά σου",
    "emoji \U0001f600\U0001f600 x", "\U0001f44d\U0001f3fd ok", "a\u200db", "tab\there",
    "\x0b\x0c\x85x", "\u2028\u2029", "x\r", "\r", "1 2  3   4", " 1", "  1", "$100.00",
    "<|endoftext|>", "def f(x):\n    return x**2\n", "if (a && b) {\n\treturn;\n}\n",
    "https://example.com/a/b?c=d", "\ufffd\ufffd", "...", "\u00a0x", "A'B", "CAN'T'VE",
]


# Inputs for the newer rule sets: CJK and kana runs, Korean, full-width and CJK punctuation,
# symbols, digit runs of every length, line structure, Chameleon's sentinels and image tokens.
FIXED += [
    "\u4e2d\u6587abc\u65e5\u672c\u8a9e\u306e\u30c6\u30ad\u30b9\u30c8123",
    "\ud55c\uad6d\uc5b4 \ud14d\uc2a4\ud2b8\u3131\u314f", "\uff01\uff1f\u3002\u3001\uff0c\uff1a\uff1b\u2026\u201c\u201d",
    "1", "12", "123", "1234", "12345", "123456", "1234567890123", "a1234b", "1,234,567.89",
    "x = 1000000;", "$5+3<=>^~|`@#", "\u00a9\u00ae\u2122 \u20ac100 \u00a33", "\u2192\u2190\u221e",
    "line one\nline two\n\n\nend", "\r\n\r\n", "   \n", "\t\n \tx", "a  \n  b",
    "<sentinel:0> <sentinel:123>x", "IMGIMGABZ IMGIMGIIIIZ", "x    y  z\tw",
    "Hello, world! How are you?", "(a|b) [c] {d}", "\u0928\u092e\u0938\u094d\u0924\u0947 \u0964 \u06d4 \u060c",
    "\u0130stanbul'da ya\u015f\u0131yorum", "Ankara'dan geldim", "\u4e2d\u6587\u3002\u82f1\u6587",
    "\u0e2a\u0e27\u0e31\u0e2a\u0e14\u0e35 \u0e84\u0e23\u0e31\u0e1a", "\u1780\u17d2\u1798\u17c2\u179a",
    "\u00b5\u2126\u212a\u1fbe test", "def f():\n    return 1\n", "\u2581\u2581x", "a_b__c",
]

# The corpus strings on which llama.cpp and vkllm differ on purpose (tests/test_tokenizer_llamacpp.cpp,
# kKnownDifferences): Python's split of each is the arbiter.
FIXED += [
    "x  =  1    # comment with   many    spaces",
    "\u6211\u60f3\u5728\u82f9\u679c\u516c\u53f8\u5de5\u4f5c1314151\u5929",
    "\u6771\u4eac\u306f\u65e5\u672c\u306e\u9996\u90fd\u3067\u3059\u3002\u4eba\u53e3\u306f\u7d041400\u4e07\u4eba\u3002",
    "\u0928\u092e\u0938\u094d\u0924\u0947, \u0906\u092a \u0915\u0948\u0938\u0947 \u0939\u0948\u0902? \u092e\u0948\u0902 \u0920\u0940\u0915 \u0939\u0942\u0901\u0964",
    "0b1111_0000 0o755 0xDEAD_BEEF 1_000_000",
    "x1234 4321y",
    "x12345 54321y",
    "x1234567 7654321y",
    "x12345678 87654321y",
    "x1234567890 0987654321y",
    "x12345678901 10987654321y",
]

# Pools for random inputs, by what the patterns tell apart.
POOLS = {
    "ascii_lower": "abcdefghijklmnopqrstuvwxyz",
    "ascii_upper": "ABCDEFGHIJKLMNOPQRSTUVWXYZ",
    "contraction": "sStTrReEvVmMlLdD\u017f",
    "digits": "0123456789\u0660\u0967\uff11\u00bd\u00b2\u2160",
    "spaces": "     \t",
    "newlines": "\r\n",
    "other_space": "\x0b\x0c\x85\u00a0\u1680\u2003\u2028\u2029\u202f\u205f\u3000",
    "punct": "'''!?.,;:-_/()[]{}\"#$%&*+<=>@\\^`|~\u2019\u201c\u00bf\u00a7",
    "latin": "\u00e9\u00c9\u00df\u00f1\u00d1\u0101\u0100\u01c5\u01c8\u02b0\u02c6",
    "marks": "\u0301\u0300\u0327\u0323\u0308\u20dd\u093f",
    "cjk": "\u4e2d\u6587\u5b57\u65e5\u672c\u306e\u30c6\u30fc\u3005\ud55c\uad6d\u1100\u1161",
    "devanagari": "\u0928\u092e\u0938\u094d\u0924\u0947\u0926\u0941\u093f\u092f\u093e\u0902",
    "thai": "\u0e2a\u0e27\u0e31\u0e14\u0e35\u0e04\u0e23\u0e1a\u0e48\u0e49",
    "arabic": "\u0645\u0631\u062d\u0628\u0627\u0644\u0639\u064e\u0650\u0651",
    "cyrillic_greek": "\u041f\u0440\u0438\u0432\u0435\u0442\u0416\u0436\u0393\u03b5\u03ac\u1f88",
    "emoji": "\U0001f600\U0001f44d\U0001f3fd\u200d\u2764\ufe0f\U0001f1fa\U0001f1f8",
    "symbols": "\u00a9\u20ac\u2192\u221e\u2603\ufffd\u0000\u001f",
}


CATEGORIES = ["Lu", "Ll", "Lt", "Lm", "Lo", "Mn", "Mc", "Me", "Nd", "Nl", "No", "Pc", "Pd", "Ps",
              "Pe", "Pi", "Pf", "Po", "Sm", "Sc", "Sk", "So"]
WHITE_SPACE = set("\t\n\x0b\x0c\r \x85\xa0\u1680\u2028\u2029\u202f\u205f\u3000"
                  + "".join(chr(c) for c in range(0x2000, 0x200B)))


def check_unicode_agrees(chars):
    """The `regex` module carries its own, newer Unicode data; use only characters on which it
    agrees with Unicode 14.0."""
    for ch in sorted(set(chars)):
        got = [c for c in CATEGORIES if regex.match(r"\p{%s}" % c, ch)]
        want = [c for c in CATEGORIES if unicodedata.category(ch) == c]
        assert got == want, (hex(ord(ch)), got, want)
        assert bool(regex.match(r"\s", ch)) == (ch in WHITE_SPACE), hex(ord(ch))


def random_input(rng):
    names = sorted(POOLS)
    parts = []
    for _ in range(rng.randint(1, 12)):
        pool = POOLS[rng.choice(names)]
        parts.append("".join(rng.choice(pool) for _ in range(rng.randint(1, 6))))
    return "".join(parts)


def python_syntax(pattern):
    """`regex` spells \\x{H...} as the character itself (all of ours are above ASCII)."""
    def char(m):
        cp = int(m.group(1), 16)
        assert cp >= 0x80, m.group(0)
        return chr(cp)
    return re.sub(r"\\x\{([0-9A-Fa-f]+)\}", char, pattern)


def compile_rules(rules):
    for r in rules:
        # && (class intersection) is V1 syntax; the other patterns are V0 (the default).
        r["compiled"] = [regex.compile(python_syntax(p), regex.V1 if "&&" in p else 0)
                         for p in r["regexes"]]


def split(rule, text):
    """Piece lengths, in code points."""
    pieces = [text] if text else []
    for pattern in rule["compiled"]:
        out = []
        for piece in pieces:
            at = 0
            for m in pattern.finditer(piece):
                if m.start() > at:
                    out.append(piece[at:m.start()])
                if m.end() > m.start():
                    out.append(m.group(0))
                at = max(at, m.end())
            if at < len(piece):
                out.append(piece[at:])
        pieces = out
    return pieces


def main():
    out_path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        ROOT, "tests", "data", "pretokenize_golden.json")
    rules = read_rules()
    compile_rules(rules)
    rng = random.Random(20240601)
    inputs = FIXED + [random_input(rng) for _ in range(250)]
    check_unicode_agrees("".join(inputs))
    out = {"generated_by": "python3 tools/gen_pretokenize_golden.py (regex " +
                           regex.__version__ + ")",
           "inputs": inputs, "rules": []}
    for r in rules:
        splits = []
        for text in inputs:
            pieces = split(r, text)
            assert "".join(pieces) == text and all(pieces), (r["names"], text)
            splits.append([len(p) for p in pieces])
        out["rules"].append({"names": r["names"], "regexes": r["regexes"], "flags": r["flags"],
                             "splits": splits})
    with open(out_path, "w", encoding="utf-8", newline="\n") as f:
        json.dump(out, f, ensure_ascii=False, separators=(",", ":"))
        f.write("\n")


if __name__ == "__main__":
    main()
