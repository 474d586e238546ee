#!/usr/bin/env python3
"""vkllm-serve uses the library as any application does (docs/SERVER.md): the files of
tools/serve include the public header vkllm.h, their own directory's headers, the generated
page_html.h, and system or package headers (<...>), nothing from src/ or elsewhere in the tree.

    check_serve_includes.py ROOT       checks ROOT/tools/serve
    check_serve_includes.py self-test  plants '#include "engine/session.h"' and
                                       '#include "../../src/api/x.h"' in a scratch copy and
                                       fails unless both are reported

Prints every violation with the file and line, and exits 1 when there is one.
"""

import os
import re
import shutil
import sys
import tempfile

INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')
# <...> headers that are the library's internals reached through an include path.
INTERNAL_ANGLE = re.compile(r"^(api|engine|grammar|models|tokenizer|chat|gpu|format|common|"
                            r"platform)/")


def violations(serve_dir):
    own = {f for f in os.listdir(serve_dir) if f.endswith(".h")}
    allowed = own | {"vkllm.h", "page_html.h"}
    found = []
    for name in sorted(os.listdir(serve_dir)):
        if not name.endswith((".h", ".cpp")):
            continue
        path = os.path.join(serve_dir, name)
        with open(path, encoding="utf-8") as f:
            for number, line in enumerate(f, 1):
                m = INCLUDE.match(line)
                if not m:
                    continue
                kind, header = m.groups()
                bad = (kind == '"' and header not in allowed) or (
                    kind == "<" and (INTERNAL_ANGLE.match(header) or header.startswith("src/")))
                if bad:
                    found.append(f"{path}:{number}: includes {kind}{header}: tools/serve may "
                                 f"include only vkllm.h, its own headers and system headers")
    return found


def self_test(root):
    with tempfile.TemporaryDirectory() as scratch:
        copy = os.path.join(scratch, "serve")
        shutil.copytree(os.path.join(root, "tools", "serve"), copy)
        with open(os.path.join(copy, "planted.cpp"), "w", encoding="utf-8") as f:
            f.write('#include "vkllm.h"\n#include "engine/session.h"\n'
                    '#include "../../src/api/x.h"\n#include <common/error.h>\n')
        found = [v for v in violations(copy) if "planted.cpp" in v]
        if len(found) != 3:
            print("self-test: the planted includes were not all reported:", found)
            return 1
    print("self-test: the planted includes were reported")
    return 0


def main():
    if sys.argv[1] == "self-test":
        return self_test(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    found = violations(os.path.join(sys.argv[1], "tools", "serve"))
    for v in found:
        print(v)
    print(f"tools/serve: {len(found)} includes from outside the public header")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
