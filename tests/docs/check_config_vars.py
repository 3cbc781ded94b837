# SPDX-License-Identifier: MIT
# Keeps the MAILROOM_* environment variables consistent: config.hpp's two tables, the names the
# C++ sources use and README.md's configuration table (tests/docs/CMakeLists.txt: doc.config_vars).
"""Usage: check_config_vars.py ROOT (the project's root). The variables are the rows of
MAILROOM_CONFIG_TABLE and MAILROOM_CONFIG_TEXT_TABLE in include/mailroom/config.hpp. Fails
(exit 1, one line per problem) when
  - a string literal of the C++ sources in src/, include/ or apps/ names a MAILROOM_* variable
    that neither table holds (the bare prefix "MAILROOM_", which the unknown-name check uses,
    names none),
  - README.md's configuration table lists a MAILROOM_* variable that neither table holds, or
    lists one twice,
  - a variable of the tables is missing from README.md's configuration table.
Why: a variable read with getenv but missing from the tables is rejected as a typo by the
unknown-name check (config.cpp) whenever it is set, and left out of the printed configuration;
one missing from README is undocumented.
"""
import os
import re
import sys

CONFIG = os.path.join("include", "mailroom", "config.hpp")
TABLES = ("MAILROOM_CONFIG_TABLE", "MAILROOM_CONFIG_TEXT_TABLE")
SOURCE_DIRS = ("src", "include", "apps")
SOURCE_EXTS = (".cpp", ".hpp", ".h", ".cc", ".hh", ".cxx", ".hxx", ".ipp", ".inl")
# A name in a literal: the prefix and at least one more character ("MAILROOM_" alone is the
# prefix the unknown-name check matches, "MAILROOM_*" in a message is every variable).
NAME = re.compile(r"\bMAILROOM_[A-Z0-9_]*[A-Z0-9]")


def macro_body(text, name):
    """The body of `#define name(...)`, its continuation lines joined; None if absent."""
    m = re.search(r"^[ \t]*#[ \t]*define[ \t]+" + name + r"\(", text, re.M)
    if not m:
        return None
    lines = []
    for line in text[m.end():].split("\n"):
        lines.append(line.rstrip("\\").rstrip() if line.rstrip().endswith("\\") else line)
        if not line.rstrip().endswith("\\"):
            break
    return "\n".join(lines)


def table_variables(root, problems):
    """{name: table} of the rows of both tables: each row's first string literal."""
    path = os.path.join(root, CONFIG)
    with open(path, encoding="utf-8") as f:
        text = f.read()
    names = {}
    for table in TABLES:
        body = macro_body(text, table)
        if body is None:
            problems.append(f"{CONFIG}: no #define {table}(X)")
            continue
        # X(field, "ENV", ...) in the table of numbers, X("ENV", ...) in the table of text.
        rows = re.findall(r"\bX\(\s*(?:[A-Za-z_]\w*\s*,\s*)?\"(MAILROOM_[A-Z0-9_]+)\"", body)
        if not rows:
            problems.append(f"{CONFIG}: {table} has no row X(..., \"MAILROOM_...\", ...)")
        for env in rows:
            if env in names:
                problems.append(f"{CONFIG}: {env} is a row of {names[env]} and of {table}")
            names.setdefault(env, table)
    return names


def string_literals(text):
    """(line number, contents) of each string literal of C++ source `text`, comments and
    character literals skipped (raw strings included)."""
    i, n, line = 0, len(text), 1
    while i < n:
        c = text[i]
        if c == "\n":
            line += 1
            i += 1
        elif text.startswith("//", i):
            end = text.find("\n", i)
            i = n if end < 0 else end
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            line += text.count("\n", i, end)
            i = end
        elif c == "R" and text.startswith('R"', i) and (i == 0 or not_ident(text[i - 1])):
            m = re.match(r'R"([^()\\\s]{0,16})\(', text[i:])
            if not m:
                i += 1
                continue
            close = ")" + m.group(1) + '"'
            start = i + m.end()
            end = text.find(close, start)
            end = n if end < 0 else end
            yield line, text[start:end]
            line += text.count("\n", i, end)
            i = end + len(close)
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"' and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            yield line, text[i + 1:j]
            i = j + 1
        elif c == "'" and char_literal_starts(text, i):
            j = i + 1
            while j < n and text[j] != "'" and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            i = j + 1
        else:
            i += 1


def not_ident(c):
    return not (c.isalnum() or c == "_")


def char_literal_starts(text, i):
    """Whether the ' at i opens a character literal (not a digit separator: 1'000)."""
    if i == 0 or not_ident(text[i - 1]):
        return True
    m = re.search(r"(\w+)$", text[max(0, i - 3):i])
    return m is not None and m.group(1) in ("L", "u", "U", "u8")


def source_problems(root, names):
    problems = []
    for top in SOURCE_DIRS:
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, top)):
            dirnames.sort()
            for fn in sorted(filenames):
                if not fn.endswith(SOURCE_EXTS):
                    continue
                path = os.path.join(dirpath, fn)
                rel = os.path.relpath(path, root)
                with open(path, encoding="utf-8", errors="replace") as f:
                    text = f.read()
                for line, literal in string_literals(text):
                    for env in NAME.findall(literal):
                        if env not in names:
                            problems.append(f"{rel}:{line}: \"{literal}\" names {env}, which "
                                            f"neither {TABLES[0]} nor {TABLES[1]} of {CONFIG} "
                                            f"declares")
    return problems


def readme_variables(root, problems):
    """The MAILROOM_* names in the first column of README.md's configuration table."""
    path = os.path.join(root, "README.md")
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    start = next((k for k, l in enumerate(lines) if re.match(r"^##\s+Configuration\s*$", l)),
                 None)
    if start is None:
        problems.append("README.md: no section '## Configuration'")
        return {}
    listed = {}
    in_table = False
    for k in range(start + 1, len(lines)):
        l = lines[k]
        if l.startswith("#"):
            break
        if not l.startswith("|"):
            if in_table:
                break
            continue
        in_table = True
        first = l.strip().strip("|").split("|")[0].strip()
        m = re.fullmatch(r"`?(MAILROOM_[A-Z0-9_]+)`?", first)
        if not m:
            continue  # the header and its rule
        env = m.group(1)
        if env in listed:
            problems.append(f"README.md:{k + 1}: {env} is listed twice in the configuration "
                            f"table (also line {listed[env]})")
        listed.setdefault(env, k + 1)
    if not listed:
        problems.append("README.md: the section '## Configuration' has no table of MAILROOM_* "
                        "variables")
    return listed


def main(argv):
    if len(argv) != 2 or not os.path.isdir(argv[1]):
        print(__doc__, file=sys.stderr)
        return 2
    root = argv[1]
    problems = []
    names = table_variables(root, problems)
    problems += source_problems(root, names)
    listed = readme_variables(root, problems)
    for env, line in sorted(listed.items()):
        if names and env not in names:
            problems.append(f"README.md:{line}: the configuration table lists {env}, which "
                            f"neither {TABLES[0]} nor {TABLES[1]} of {CONFIG} declares")
    for env in sorted(names):
        if listed and env not in listed:
            problems.append(f"README.md: the configuration table lacks {env} ({names[env]} of "
                            f"{CONFIG})")
    for p in problems:
        print(p)
    if problems:
        return 1
    print(f"{len(names)} MAILROOM_* variables, declared in {CONFIG}, used in the sources and "
          f"listed in README.md alike")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
