#!/usr/bin/env python3
"""Fails on a route that can reach its handler without passing the authorization step.

The three route tables (S3 in src/server/dispatch.cpp, REST in src/server/api/api.cpp, the Hub API in
src/server/hf/hf.cpp) are enumerated from their source. The pipeline (src/server/pipeline.hpp) makes a
handler callable only with a `route_authorized`, which only `authorization_step` constructs; this check
states the rest of the rule, so that nobody can step around it:

  * a table's `struct route` holds its handler as `guarded<...> fn`, its permission as
    `auth::route_permission permission` and what it acts on as `route_resource resource`;
  * every entry of `std::array<route, N> routes` names its permission (`permission::...`) and its resource
    (`resource_kind::...`), and the table has exactly N entries;
  * a route's handler is called through `run_handler(route, proof, ...)` only: no `.fn(` / `->fn(` call,
    and no direct call of a function the table names as a handler;
  * a file that calls run_handler takes its proofs from `authorization_step::`;
  * nothing outside src/server/pipeline.{hpp,cpp} constructs a `route_authorized`, and only pipeline.cpp
    defines `authorization_step::` members;
  * only pipeline.cpp decides a route's own bucket (S3's `ctx.bucket`, REST's {bucket} path parameter);
    handlers read it (`authorized_bucket(ctx)`).

Usage: check_routes.py FILE... (the files with route tables; other files under their directories are
scanned for forged proofs). Prints each finding as path:line: what, then "N route violation(s)".
"""
import pathlib
import re
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from check_no_sql import comment_free  # noqa: E402

ROUTE_STRUCT = re.compile(r"struct\s+route\s*\{(.*?)\};", re.S)
TABLE = re.compile(r"std::array<\s*route\s*,\s*(\d+)\s*>\s+routes\s*=\s*\{\{(.*?)\}\};", re.S)
HANDLER_CALL = re.compile(r"(?:\.|->)\s*fn\s*\(")
PROOF = re.compile(r"\broute_authorized\s*[({]")
ROUTE_BUCKET = re.compile(r"\b(?:load_authorized_bucket|caller_bucket)\s*\(\s*ctx\s*,\s*"
                          r"(?:ctx\s*\.\s*bucket\b|(?:api::)?path_param\s*\(\s*params\s*,\s*\"bucket\"\s*\))")


def entries(body):
    """The top-level {...} entries of a table's initializer, with their offsets."""
    out, depth, start = [], 0, None
    for i, c in enumerate(body):
        if c == "{":
            if depth == 0:
                start = i
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                out.append((start, body[start : i + 1]))
    return out


def line_of(text, offset):
    return text.count("\n", 0, offset) + 1


def handler_names(entry):
    """The handler column of an entry: the identifiers that are neither enum values nor strings."""
    without_strings = re.sub(r'"(?:[^"\\]|\\.)*"', '""', entry)
    names = []
    for m in re.finditer(r"(?<![:\w])((?:\w+::)*\w+)\b", without_strings):
        name = m.group(1)
        if name.startswith(("http::", "permission::", "auth::", "resource_kind::", "scope::")) or name in (
            "nullptr",
            "true",
            "false",
            "route_resource",
        ):
            continue
        names.append(name)
    return names


def check_table_file(path):
    text = comment_free(path.read_text(encoding="utf-8", errors="replace"))
    found = []
    where = lambda offset: f"{path}:{line_of(text, offset)}"  # noqa: E731
    struct = ROUTE_STRUCT.search(text)
    if not struct:
        return [f"{path}:1: no `struct route` (a route table file must declare its routes)"]
    members = struct.group(1)
    for needed, what in (
        (r"\bguarded\s*<[^;]*>\s+fn\s*;", "its handler as `guarded<...> fn`"),
        (r"\bauth::route_permission\s+permission\s*;", "its permission as `auth::route_permission permission`"),
        (r"\broute_resource\s+resource\s*;", "what it acts on as `route_resource resource`"),
    ):
        if not re.search(needed, members):
            found.append(f"{where(struct.start())}: struct route does not hold {what}")
    table = TABLE.search(text)
    if not table:
        return found + [f"{path}:1: no `std::array<route, N> routes` table"]
    body_offset = table.start(2)
    items = entries(table.group(2))
    if len(items) != int(table.group(1)):
        found.append(f"{where(table.start())}: the table declares {table.group(1)} routes and lists {len(items)}")
    handlers = set()
    for offset, entry in items:
        at = where(body_offset + offset)
        code = re.sub(r'"(?:[^"\\]|\\.)*"', '""', entry)  # a string naming them does not count
        if not re.search(r"\bpermission::\w+", code):
            found.append(f"{at}: route without a permission: {' '.join(entry.split())[:100]}")
        if not re.search(r"\bresource_kind::\w+", code):
            found.append(f"{at}: route without the resource it acts on: {' '.join(entry.split())[:100]}")
        handlers.update(n for n in handler_names(entry) if "::" in n or n[0].islower())
    # Outside the table, a handler is called only through run_handler.
    outside = text[: table.start()] + " " * (table.end() - table.start()) + text[table.end() :]
    for m in HANDLER_CALL.finditer(outside):
        found.append(f"{where(m.start())}: a route's handler called directly, not through run_handler")
    for name in sorted(handlers):
        for m in re.finditer(r"(?<![\w:])" + re.escape(name) + r"\s*\(", outside):
            # The declaration or definition of the handler itself is not a call.
            before = outside[max(0, m.start() - 60) : m.start()]
            if re.search(r"(?:awaitable<[^>]*>+|response>+)\s*$", before):
                continue
            found.append(f"{where(m.start())}: {name}, a route's handler, called without run_handler")
    if "run_handler(" in outside and "authorization_step::" not in outside:
        found.append(f"{path}:1: run_handler without a proof from authorization_step")
    return found


def check_forged_proofs(paths):
    found = []
    for path in paths:
        if path.name in ("pipeline.hpp", "pipeline.cpp"):
            continue
        text = comment_free(path.read_text(encoding="utf-8", errors="replace"))
        for m in PROOF.finditer(text):
            found.append(f"{path}:{line_of(text, m.start())}: a route_authorized made outside the pipeline")
        for m in re.finditer(r"\bauthorization_step::\w+\s*\([^;{]*\)\s*(?:const\s*)?\{", text):
            found.append(f"{path}:{line_of(text, m.start())}: authorization_step defined outside pipeline.cpp")
        for m in ROUTE_BUCKET.finditer(text):
            found.append(f"{path}:{line_of(text, m.start())}: a route's bucket decided outside the pipeline")
    return found


def main(argv):
    if not argv:
        print(__doc__)
        return 2
    tables = [pathlib.Path(a) for a in argv]
    found = []
    for path in tables:
        found += check_table_file(path)
    scanned = set()
    for path in tables:
        root = path.parent
        if root.name in ("api", "hf"):
            root = root.parent
        scanned.update(p for p in root.rglob("*") if p.suffix in (".cpp", ".hpp"))
    found += check_forged_proofs(sorted(scanned | set(tables)))
    for f in found:
        print(f)
    print(f"{len(found)} route violation(s)")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
