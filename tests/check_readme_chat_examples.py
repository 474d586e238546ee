#!/usr/bin/env python3
"""The chat examples the READMEs show are the files the binding tests run, byte for byte.

Each example is a file its binding's tests run on SmolLM2-135M-Instruct (Python
test_conversation.py, Rust tests/conversation.rs, Go conversation_test.go); each README below
must hold that file's whole text as one fenced code block. The check fails naming the README
and the file when it does not (the README was edited without the file, or the other way).

Usage: check_readme_chat_examples.py [REPO_ROOT]   (default: the checkout this file is in)
"""
import os
import re
import sys

EXAMPLES = [
    ("README.md", "bindings/python/examples/chat.py"),
    ("bindings/python/README.md", "bindings/python/examples/chat.py"),
    ("bindings/rust/README.md", "bindings/rust/vkllm/examples/chat.rs"),
    ("bindings/go/README.md", "bindings/go/examples/chat/main.go"),
]


def code_blocks(markdown):
    return [m.group(1) for m in re.finditer(r"^```[\w-]*\n(.*?)^```\s*$", markdown, re.M | re.S)]


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.dirname(
        os.path.abspath(__file__)))
    failures = 0
    for readme, example in EXAMPLES:
        with open(os.path.join(root, readme), encoding="utf-8") as f:
            blocks = code_blocks(f.read())
        with open(os.path.join(root, example), encoding="utf-8") as f:
            text = f.read()
        if text not in blocks:
            print(f"{readme}: no code block is {example} as it is (copy the file into it)")
            failures += 1
        else:
            print(f"{readme}: shows {example}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
