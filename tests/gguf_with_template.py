#!/usr/bin/env python3
"""Copies a GGUF file with its tokenizer.chat_template replaced, through gguf-py's reader and
writer (as gguf-py's gguf_new_metadata does, without its progress bar's dependency).

    gguf_with_template.py IN.gguf OUT.gguf TEMPLATE
"""
import sys

import gguf

src, dst, template = sys.argv[1:4]
reader = gguf.GGUFReader(src)
arch = reader.fields[gguf.Keys.General.ARCHITECTURE].contents()
writer = gguf.GGUFWriter(dst, arch=arch, endianess=reader.endianess)
for field in reader.fields.values():
    if (field.name == gguf.Keys.General.ARCHITECTURE or field.name.startswith("GGUF.") or
            field.name.startswith(gguf.Keys.Tokenizer.CHAT_TEMPLATE)):
        continue
    kind = field.types[0]
    sub = field.types[-1] if kind == gguf.GGUFValueType.ARRAY else None
    writer.add_key_value(field.name, field.contents(), kind, sub_type=sub)
writer.add_chat_template(template)
for t in reader.tensors:
    writer.add_tensor_info(t.name, t.data.shape, t.data.dtype, t.data.nbytes, t.tensor_type)
writer.write_header_to_file()
writer.write_kv_data_to_file()
writer.write_ti_data_to_file()
for t in reader.tensors:
    writer.write_tensor_data(t.data, tensor_endianess=reader.endianess)
writer.close()
