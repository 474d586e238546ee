#!/usr/bin/env python3
"""Checks README.md's command-line section against the tool's own help, so neither drifts.

    python3 tests/check_cli_readme.py path/to/vkllm README.md

`vkllm --help` names the commands and the options of the device commands; each `vkllm CMD
--help` lists its options, one line each ("  -n, --n-predict N   ..."), and the values of
placeholders such as NAME or TYPE on lines like "NAME: a b c". In README's first code block
under "## Command-line tool", a line `build/vkllm CMD ...` and the indented lines after it
describe CMD. The check fails when
  - a command has no help (exit status 0, "usage: vkllm CMD") or no README lines;
  - an option of CMD (one spelling of it is enough) or a placeholder value is not in CMD's
    README lines (-h/--help and the device options excepted);
  - CMD's README lines name a flag CMD does not take;
  - a device option of `vkllm --help` is nowhere in the block.
"""
import re
import subprocess
import sys

FLAG = re.compile(r"(?<![\w-])(--?[A-Za-z][\w-]*)")


def run_help(cli, *args):
    p = subprocess.run([cli, *args], capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"{' '.join(args)}: exit status {p.returncode}")
    return p.stdout


def option_groups(help_text):
    """Each option line's spellings, and its placeholders: ("-n", "--n-predict"), {"N"}."""
    groups, placeholders = [], set()
    for line in help_text.splitlines():
        m = re.match(r"^  (-[\w-]+(?:, -[\w-]+)*)(?: ([A-Z][\w.|]*))?(?:  |$)", line)
        if m:
            groups.append(tuple(m.group(1).split(", ")))
            if m.group(2):
                placeholders.add(m.group(2))
    usage = help_text.splitlines()[0]
    placeholders.update(re.findall(r"\b[A-Z]{3,}\b", usage))
    return groups, placeholders


def placeholder_values(help_text, placeholders):
    values = {}
    for line in help_text.splitlines():
        m = re.match(r"^([A-Z]+): (.*)$", line)
        if m and m.group(1) in placeholders:
            values[m.group(1)] = m.group(2).split()
    return values


def readme_sections(path):
    text = open(path, encoding="utf-8").read()
    section = text.split("\n## Command-line tool\n", 1)[1].split("\n## ", 1)[0]
    block = section.split("```", 2)[1].split("\n", 1)[1]
    sections, current = {}, None
    for line in block.splitlines():
        m = re.match(r"^\S*vkllm ([a-z-]+)", line)
        if m:
            current = m.group(1)
            sections.setdefault(current, [])
        elif not line[:1].isspace():
            current = None
        if current:
            sections[current].append(line)
    return block, {k: "\n".join(v) for k, v in sections.items()}


def main():
    cli, readme = sys.argv[1], sys.argv[2]
    top = run_help(cli, "--help")
    commands = re.findall(r"^  ([a-z][a-z-]+)  ", top.split("\ncommands:\n", 1)[1].split("\n\n")[0],
                          re.M)
    device_flags = {g[0] for g in option_groups(top.split("\n\n")[-1])[0]}
    block, sections = readme_sections(readme)
    errors = []
    for flag in sorted(device_flags):
        if not re.search(r"(?<![\w-])" + re.escape(flag) + r"(?![\w-])", block):
            errors.append(f"README: the device option {flag} is not in the command-line block")
    for extra in sorted(set(sections) - set(commands)):
        errors.append(f"README: vkllm {extra} is not a command of vkllm --help")
    for cmd in commands:
        text = run_help(cli, cmd, "--help")
        if not text.startswith(f"usage: vkllm {cmd}"):
            errors.append(f"vkllm {cmd} --help does not start with 'usage: vkllm {cmd}'")
        if cmd not in sections:
            errors.append(f"README: no line for vkllm {cmd}")
            continue
        lines = sections[cmd]
        groups, placeholders = option_groups(text)
        known = {flag for g in groups for flag in g} | set(FLAG.findall(text.splitlines()[0]))
        mentioned = set(FLAG.findall(lines))
        for g in groups:
            # Help, and the device options listed once for all, need not be on CMD's lines.
            exempt = g == ("-h", "--help") or set(g) <= device_flags
            if not exempt and not mentioned & set(g):
                errors.append(f"README: vkllm {cmd}: {', '.join(g)} is missing")
        for flag in sorted(mentioned - known):
            errors.append(f"README: vkllm {cmd}: {flag} is not an option of vkllm {cmd} --help")
        for name, values in placeholder_values(text, placeholders).items():
            for v in values:
                if not re.search(r"(?<![\w.-])" + re.escape(v) + r"(?![\w.-])", lines):
                    errors.append(f"README: vkllm {cmd}: {name} {v} is missing")
    for e in errors:
        print(e)
    print(f"{len(commands)} commands checked, {len(errors)} differences")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
