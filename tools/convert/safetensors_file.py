"""A checked reader of .safetensors files: the header is validated before any tensor is read,
so a truncated or hostile file gives a ConvertError, never an out-of-bounds read."""

import json
import os

import numpy as np

from convert_error import ConvertError

DTYPES = {"F32": np.float32, "F16": np.float16}
MAX_HEADER = 100 * 1024 * 1024  # safetensors' own limit


def read_safetensors(path):
    """Returns {name: numpy array (read-only view of a memory map)} in the header's order."""
    try:
        size = os.path.getsize(path)
        with open(path, "rb") as f:
            head = f.read(8)
            if len(head) != 8:
                raise ConvertError(f"{path}: shorter than a safetensors header")
            n = int.from_bytes(head, "little")
            if n > MAX_HEADER or 8 + n > size:
                raise ConvertError(f"{path}: header length {n} exceeds the file ({size} bytes)")
            header = json.loads(f.read(n).decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as e:
        raise ConvertError(f"{path}: header is not JSON ({e})") from None
    except OSError as e:
        raise ConvertError(f"cannot read {path}: {e.strerror or e}") from None
    if not isinstance(header, dict):
        raise ConvertError(f"{path}: header is not a JSON object")
    data = np.memmap(path, dtype=np.uint8, mode="r", offset=8 + n) if size > 8 + n else None
    tensors = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        if not isinstance(info, dict):
            raise ConvertError(f"{path}: tensor {name!r} has no description")
        dtype, shape, offsets = info.get("dtype"), info.get("shape"), info.get("data_offsets")
        if not (isinstance(shape, list) and all(type(d) is int and d >= 0 for d in shape)):
            raise ConvertError(f"{path}: tensor {name!r} has a bad shape {shape!r}")
        if not (isinstance(offsets, list) and len(offsets) == 2
                and all(type(o) is int for o in offsets) and 0 <= offsets[0] <= offsets[1]):
            raise ConvertError(f"{path}: tensor {name!r} has bad data_offsets {offsets!r}")
        if dtype not in DTYPES:
            # position_ids (I64) and the like are never converted: skip them unread.
            tensors[name] = None
            continue
        count = 1
        for d in shape:
            count *= d
        nbytes = count * np.dtype(DTYPES[dtype]).itemsize
        if offsets[1] - offsets[0] != nbytes or 8 + n + offsets[1] > size:
            raise ConvertError(f"{path}: tensor {name!r} ({dtype} {shape}) does not fit its "
                               f"data_offsets {offsets} in a {size}-byte file")
        raw = data[offsets[0]:offsets[1]] if nbytes else np.zeros(0, np.uint8)
        tensors[name] = raw.view(DTYPES[dtype]).reshape(shape)
    return tensors
