#!/usr/bin/env python3
"""Writes vocab-only GGUF files that differ from a source GGUF only in tokenizer.ggml.pre, one per
pre-tokenizer name, so that llama.cpp can be asked how it splits text under each name with the
same (real) BPE vocabulary. tokenize.mjs runs it into a temporary directory.

Every metadata key of the source is copied byte for byte (general.*, the architecture's
hyper-parameters llama.cpp reads even for a vocab-only load, tokenizer.*); the tensors are left
out (tensor count 0), as in llama.cpp's own ggml-vocab-*.gguf files. Reading uses gguf-py
(pip install gguf==0.19.0).

    python3 tools/llamacpp_reference/vocab_variant.py OUT_DIR NAMES_FILE LABEL=SOURCE.gguf...
writes OUT_DIR/LABEL/NAME.gguf for every name (one per line) of NAMES_FILE.
"""

import os
import struct
import sys

from gguf import GGUFReader

PRE_KEY = "tokenizer.ggml.pre"
GGUF_STRING = 8


def gguf_string(text):
    data = text.encode("utf-8")
    return struct.pack("<Q", len(data)) + data


def kv_sections(source):
    """The raw bytes of every key/value pair before and after tokenizer.ggml.pre (which is
    dropped), and the GGUF version."""
    reader = GGUFReader(source)
    raw = reader.data
    before, after, seen_pre = [], [], False
    for name, field in reader.fields.items():
        if name.startswith("GGUF."):  # header values gguf-py lists as fields
            continue
        size = sum(part.nbytes for part in field.parts)
        chunk = bytes(raw[field.offset:field.offset + size])
        if name == PRE_KEY:
            seen_pre = True
        else:
            (after if seen_pre else before).append(chunk)
    version = int(reader.fields["GGUF.version"].parts[0][0])
    return version, b"".join(before), b"".join(after), len(before) + len(after)


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    out_dir, names_file, sources = sys.argv[1], sys.argv[2], sys.argv[3:]
    names = [n.strip() for n in open(names_file, encoding="utf-8") if n.strip()]
    for spec in sources:
        label, source = spec.split("=", 1)
        version, before, after, n_kv = kv_sections(source)
        os.makedirs(os.path.join(out_dir, label), exist_ok=True)
        for name in names:
            pre = gguf_string(PRE_KEY) + struct.pack("<I", GGUF_STRING) + gguf_string(name)
            header = b"GGUF" + struct.pack("<IQQ", version, 0, n_kv + 1)
            with open(os.path.join(out_dir, label, name + ".gguf"), "wb") as f:
                f.write(header + before + pre + after)
        print(f"{label}: {len(names)} variants of {source} ({n_kv + 1} keys)", file=sys.stderr)


if __name__ == "__main__":
    main()
