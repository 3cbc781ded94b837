#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The documentation's C++ code, checked by the tests (tests/docs/CMakeLists.txt).

extract OUT DOC...   writes every ```cpp block of the documents to OUT: a block whose first line
                     is an #include is a whole program (OUT/<doc>_<n>.cpp for the n-th block,
                     compiled and run); one after a line `<!-- from: FILE -->` is a fragment of
                     FILE, a program the tests compile (OUT/<doc>_<n>.fragment); any other block
                     is an error. Writes OUT/snippets.cmake, which defines a test for each.
check FRAGMENT FILE  fails unless every line of FRAGMENT appears in FILE, in order (their code:
                     spaces around it and // comments aside; blank lines, comments and `...`
                     skipped).
"""
import os
import re
import sys


def blocks(path):
    """(first line number, marker or None, lines) of each ```cpp block."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    i = 0
    while i < len(lines):
        fence = re.match(r"^(\s*)```cpp\s*$", lines[i])
        if not fence:
            i += 1
            continue
        indent = len(fence.group(1))
        marker = None
        j = i - 1
        while j >= 0 and lines[j].strip() == "":
            j -= 1
        if j >= 0:
            m = re.match(r"^\s*<!--\s*from:\s*(\S+)\s*-->\s*$", lines[j])
            if m:
                marker = m.group(1)
        start = i + 1
        body = []
        i += 1
        while i < len(lines) and not re.match(r"^\s*```\s*$", lines[i]):
            body.append(lines[i][indent:] if lines[i][:indent].strip() == "" else lines[i])
            i += 1
        yield start, marker, body
        i += 1


def cmake_quote(s):
    return '"' + s.replace("\\", "/").replace('"', '\\"') + '"'


def extract(out, root, docs):
    os.makedirs(out, exist_ok=True)
    cmake = []
    for doc in docs:
        name = re.sub(r"[^A-Za-z0-9]+", "_", os.path.splitext(doc)[0]).strip("_").lower()
        for n, (line, marker, body) in enumerate(blocks(os.path.join(root, doc)), start=1):
            where = f"{doc}:{line}"
            stem = f"{name}_{n}"
            first = next((l for l in body if l.strip()), "")
            if marker:
                path = os.path.join(out, stem + ".fragment")
                with open(path, "w", encoding="utf-8") as f:
                    f.write("\n".join(body) + "\n")
                cmake.append(f"mailroom_doc_fragment({stem} {cmake_quote(where)} "
                             f"{cmake_quote(path)} {cmake_quote(marker)})")
            elif first.startswith("#include"):
                path = os.path.join(out, stem + ".cpp")
                with open(path, "w", encoding="utf-8") as f:
                    f.write(f"// {where} (extracted by tests/docs/snippets.py)\n")
                    f.write("\n".join(body) + "\n")
                cmake.append(f"mailroom_doc_program({stem} {cmake_quote(where)} "
                             f"{cmake_quote(path)})")
            else:
                cmake.append(f"mailroom_doc_unchecked({stem} {cmake_quote(where)})")
    with open(os.path.join(out, "snippets.cmake"), "w", encoding="utf-8") as f:
        f.write("\n".join(cmake) + "\n")


def code(line):
    """The line without its trailing // comment (outside string literals), stripped."""
    quoted = False
    for i, c in enumerate(line):
        if c == '"' and (i == 0 or line[i - 1] != "\\"):
            quoted = not quoted
        elif not quoted and line.startswith("//", i):
            return line[:i].strip()
    return line.strip()


def check(fragment, source):
    with open(source, encoding="utf-8") as f:
        have = [code(l) for l in f.read().split("\n")]
    with open(fragment, encoding="utf-8") as f:
        want = [code(l) for l in f.read().split("\n")]
    at = 0
    for w in want:
        if w == "" or w == "...":
            continue
        while at < len(have) and have[at] != w:
            at += 1
        if at == len(have):
            print(f"not in {source} (in this order): {w}")
            return 1
        at += 1
    print(f"every line is in {source}")
    return 0


def main(argv):
    if len(argv) >= 4 and argv[1] == "extract":
        extract(argv[2], os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(argv[0])))),
                argv[3:])
        return 0
    if len(argv) == 4 and argv[1] == "check":
        return check(argv[2], argv[3])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
