#!/usr/bin/env python3
"""Fails when SQL appears in a string literal of a C++ file under the given directories.

SQL lives in the registry's repositories and services (src/registry); the HTTP layer (src/server) and the
tools only call them. A string literal counts as SQL when it holds a statement's shape in upper case (the
project writes SQL keywords in upper case): SELECT ... (a select list), INSERT INTO, UPDATE <table> SET,
DELETE FROM, ON CONFLICT, RETURNING, CREATE/ALTER/DROP TABLE, or FROM/JOIN/WHERE followed by a lower-case
identifier. Usage: check_no_sql.py [--allow FILE] DIR_OR_FILE...; prints each finding as path:line: literal.

With --allow, FILE lists files that may still hold SQL, as `path count reason` lines ('#' starts a comment;
paths relative to the repository): such a file passes when it holds exactly `count` literals with SQL. More
is a finding (new SQL goes into src/registry/repo/), and so is fewer (lower the count, or delete the line
when it reaches 0), so the list only shrinks.
"""
import pathlib
import re
import sys

SQL = re.compile(
    r"\bSELECT\s+(?:[a-z_*$(1]|DISTINCT\b|count\b)"
    r"|\bINSERT\s+INTO\b"
    r"|\bUPDATE\s+[a-z_]+\s+(?:[a-z]+\s+)?SET\b"
    r"|\bDELETE\s+FROM\b"
    r"|\bON\s+CONFLICT\b"
    r"|\bRETURNING\b"
    r"|\b(?:CREATE|ALTER|DROP)\s+(?:TABLE|INDEX|FUNCTION|TRIGGER)\b"
    r"|\b(?:FROM|JOIN|WHERE)\s+[a-z_]+(?:\s|\.|$)"
)

# A C++ string literal (no raw strings in the checked trees; a raw one would be checked as plain text).
LITERAL = re.compile(r'"((?:[^"\\\n]|\\.)*)"')


def comment_free(text):
    """The text with // and /* */ comments blanked (line numbers kept), string literals left alone."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if c == '"' or c == "'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(text[i : j + 1])
            i = j + 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("\n" * text.count("\n", i, j))
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def findings(path):
    text = comment_free(path.read_text(encoding="utf-8", errors="replace"))
    for number, line in enumerate(text.split("\n"), 1):
        for m in LITERAL.finditer(line):
            if SQL.search(m.group(1)):
                yield f"{path}:{number}: {m.group(0)}"


ROOT = pathlib.Path(__file__).resolve().parents[2]


def relative(path):
    try:
        return str(path.resolve().relative_to(ROOT))
    except ValueError:
        return str(path)


def load_allow(path):
    allowed = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        parts = line.split(None, 2)
        if len(parts) < 3 or not parts[1].isdigit():
            sys.exit(f"{path}:{number}: an entry needs a file, a count and a reason")
        allowed[parts[0]] = int(parts[1])
    return allowed


def main(args):
    allowed = {}
    if args[:1] == ["--allow"] and len(args) >= 2:
        allow_file = pathlib.Path(args[1])
        allowed = load_allow(allow_file)
        args = args[2:]
    if not args:
        print(__doc__, file=sys.stderr)
        return 2
    found = []
    seen = set()
    for arg in args:
        root = pathlib.Path(arg)
        files = [root] if root.is_file() else sorted(
            p for p in root.rglob("*") if p.suffix in (".cpp", ".hpp", ".h", ".cc"))
        for f in files:
            these = list(findings(f))
            name = relative(f)
            if name in allowed:
                seen.add(name)
                if len(these) == allowed[name]:
                    continue
                if len(these) < allowed[name]:
                    print(f"{allow_file}: {name} holds {len(these)} literal(s) with SQL, not {allowed[name]}: "
                          "lower the count (or delete the line at 0)")
                    found.append(name)
                    continue
            found.extend(these)
    for name in sorted(set(allowed) - seen):
        print(f"{allow_file}: {name} is not among the checked files: delete the line")
        found.append(name)
    for f in found:
        print(f)
    if found:
        print(f"{len(found)} string literal(s) with SQL: move the statement into a registry repository",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
