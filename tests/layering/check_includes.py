#!/usr/bin/env python3
"""Fails when a C++ file under the given directories includes a header under a forbidden prefix.

The registry's SQL is in src/registry/repo/; depotd's HTTP layer (src/server, src/depotd, src/config) and
the tools call the services of src/registry/service/ and never a repository directly. The compiler enforces
that (each repo/ header is an #error without DEPOT_REGISTRY_INTERNAL, which only the registry gets); this
check says it in words and also covers files no build compiles. Every include of a "registry/repo/..."
header there is a finding, unless an allow-list (optional) names that exact (file, header) pair with a
reason; an allow-list entry that no longer matches an include is a finding too (so a list only shrinks).

Usage: check_includes.py --forbid registry/repo/ [--allow FILE] DIR_OR_FILE...
Allow-list lines: `path/relative/to/repo header-path  reason` ('#' starts a comment).
"""
import argparse
import pathlib
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+[<"]([^">]+)[">]')
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
        if len(parts) < 3:
            sys.exit(f"{path}:{number}: an entry needs a file, a header and a reason")
        allowed[(parts[0], parts[1])] = parts[2]
    return allowed


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--forbid", action="append", required=True)
    parser.add_argument("--allow", type=pathlib.Path)
    parser.add_argument("paths", nargs="+", type=pathlib.Path)
    args = parser.parse_args()
    allowed = load_allow(args.allow) if args.allow else {}
    used = set()
    found = []
    for root in args.paths:
        files = [root] if root.is_file() else sorted(
            p for p in root.rglob("*") if p.suffix in (".cpp", ".hpp", ".h", ".cc"))
        for f in files:
            for number, line in enumerate(f.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
                m = INCLUDE.match(line)
                if not m or not any(m.group(1).startswith(p) for p in args.forbid):
                    continue
                key = (relative(f), m.group(1))
                if key in allowed:
                    used.add(key)
                    continue
                found.append(f"{relative(f)}:{number}: includes {m.group(1)}")
    for key in sorted(set(allowed) - used):
        found.append(f"{args.allow}: stale entry {key[0]} {key[1]} (no such include any more: delete the line)")
    for f in found:
        print(f)
    if found:
        print(f"{len(found)} layering violation(s): {', '.join(args.forbid)} is internal to the registry; "
              "call a service (src/registry/service/) instead", file=sys.stderr)
        return 1
    print(f"ok: no include of {', '.join(args.forbid)} ({len(used)} allow-listed)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
