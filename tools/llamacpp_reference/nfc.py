#!/usr/bin/env python3
"""Reads a JSON list of strings on stdin; writes {"unicode_version", "changed": [[index, nfc]]}
for the strings that Unicode NFC normalization (Python's unicodedata) changes. tokenize.mjs
uses it: vkllm NFC-normalizes the input for the Qwen2-family pre-tokenizers, as Qwen's Hugging
Face tokenizer does, so llama.cpp's ids for the normalized text are its reference there.
"""

import json
import sys
import unicodedata

strings = json.load(sys.stdin)
changed = [[i, unicodedata.normalize("NFC", s)] for i, s in enumerate(strings)
           if unicodedata.normalize("NFC", s) != s]
json.dump({"unicode_version": unicodedata.unidata_version, "changed": changed}, sys.stdout,
          ensure_ascii=False)
