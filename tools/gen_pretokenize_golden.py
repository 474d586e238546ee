#!/usr/bin/env python3
"""Writes tests/data/pretokenize_golden.json: inputs and their splits by each pre-tokenizer
regex, as the Python `regex` module (pip install regex) finds them. Deterministic for a given
`regex` version; the characters used have the same categories in its Unicode data as in
Unicode 14.0 (checked), so the file holds for the C++ tables too.

    python3 tools/gen_pretokenize_golden.py [output.json]
"""

import json
import os
import random
import sys
import unicodedata

import regex

C = r"'s|'t|'re|'ve|'m|'ll|'d"
PATTERNS = {
    "Gpt2": C + r"| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+",
    "Llama3": r"(?i:" + C + r")|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
              r"|\s*[\r\n]+|\s+(?!\S)|\s+",
    "Qwen2": r"(?i:" + C + r")|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"
             r"|\s*[\r\n]+|\s+(?!\S)|\s+",
    "O200k": r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+"
             r"(?i:" + C + r")?"
             r"|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*"
             r"(?i:" + C + r")?"
             r"|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+",
}
COMPILED = {kind: regex.compile(p) for kind, p in PATTERNS.items()}

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

CATEGORIES = ["Lu", "Ll", "Lt", "Lm", "Lo", "Mn", "Mc", "Me", "Nd", "Nl", "No"]
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


def split(kind, text):
    return [m.group(0) for m in COMPILED[kind].finditer(text)]


def main():
    out_path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data",
        "pretokenize_golden.json")
    rng = random.Random(20240601)
    inputs = FIXED + [random_input(rng) for _ in range(400)]
    check_unicode_agrees("".join(inputs))
    cases = []
    for text in inputs:
        case = {"text": text}
        for kind in PATTERNS:
            pieces = split(kind, text)
            # Every pattern matches at every position, so the pieces cover the text.
            assert "".join(pieces) == text and all(pieces), (kind, text)
            case[kind] = pieces
        cases.append(case)
    with open(out_path, "w", encoding="utf-8", newline="\n") as f:
        f.write("[\n")
        f.write(",\n".join(json.dumps(c, ensure_ascii=False) for c in cases))
        f.write("\n]\n")


if __name__ == "__main__":
    main()
