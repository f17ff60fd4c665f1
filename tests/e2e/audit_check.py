"""Checks that every request the e2e suite makes leaves exactly the audit rows audit_expectations.py says.

For each database a depotd of the suite serves, `AuditWatch` keeps
  * a cursor on the log of every depotd on that database: the log line of a request ("msg":"request", with
    request_id, operation, bucket, key, status, error and caller) is written just after the response has
    been sent, so it can land after the test that made the request has ended; only complete lines are
    consumed, and the next check picks up the rest;
  * the request ids of every line read.
After each test it reads the new lines and looks their rows up by request id: a request commits its rows
before it responds, so before its log line is written. Rows whose request id no logged request has are
reported when the database is checked for the last time (after its depotds stopped and flushed their
logs), except rows with no request id written by `system` (background work) or `depotctl`.

Exempt: rows on a database one of whose depotd processes was killed with SIGKILL (test_crash.py,
test_webhooks.py): the log lines of requests in flight when it died are missing, so their rows are not
reported as unclaimed (the requests that were logged are still checked). Requests whose rows were archived
(`depotctl audit archive`) before they were read are not reported as missing their rows.

`compare` is the comparison on its own (test_audit_expectations.py tests it with synthetic lines and rows).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from audit_expectations import OPERATIONS, UNROUTED, Facts, Row, expected_rows

# Rows no request caused: background work and the admin CLI.
NON_REQUEST_ACTORS = {"system", "depotctl"}


@dataclass(frozen=True)
class AuditRow:
    action: str
    outcome: str
    resource: str
    actor: str = ""
    request_id: str = ""
    credential: str = ""

    def describe(self) -> str:
        return f"({self.action}, {self.outcome}, {self.resource})"


def compare(line: dict, rows: list[AuditRow], facts: Facts) -> str | None:
    """None when `rows` are exactly the rows the request of log line `line` must have left, else a report
    naming the request id, the operation, the expected and the actual rows."""
    op = line.get("operation", "")
    if op not in OPERATIONS and op not in UNROUTED:
        return (f"request {line.get('request_id')}: operation {op!r} has no entry in audit_expectations.py "
                f"(rows: {[r.describe() for r in rows]})")
    expected: list[Row] = expected_rows(line, facts)
    remaining = list(rows)
    problems = []
    for want in expected:
        matched = [r for r in remaining if want.matches(r.action, r.outcome, r.resource)]
        taken = matched if want.max is None else matched[:want.max]
        if len(matched) < want.min:
            problems.append(f"missing {want.describe()}: found {len(matched)}")
        elif want.max is not None and len(matched) > want.max:
            problems.append(f"too many {want.describe()}: found {len(matched)}")
        for r in taken:
            remaining.remove(r)
    problems += [f"unexpected {r.describe()}" for r in remaining]
    # Each row names the credential the request was made with (the log's caller).
    problems += [f"{r.describe()} names credential {r.credential!r}, the request was made with "
                 f"{line.get('caller', '')!r}" for r in rows if r.credential != line.get("caller", "")]
    if not problems:
        return None
    return (f"request {line.get('request_id')} {op} {line.get('method', '')} {line.get('bucket', '')}/"
            f"{line.get('key', '')} -> {line.get('status')} {line.get('error', '')} (caller "
            f"{line.get('caller') or '-'}):\n    expected {[w.describe() for w in expected]}\n"
            f"    actual   {[r.describe() for r in rows]}\n    " + "; ".join(problems))


def request_lines(data: bytes) -> list[dict]:
    """The "request" log lines among depotd's output (other lines and non-JSON output are skipped)."""
    out = []
    for raw in data.split(b"\n"):
        if not raw.startswith(b"{"):
            continue
        try:
            entry = json.loads(raw.decode("utf-8", "replace"))
        except ValueError:
            continue
        if entry.get("msg") == "request" and entry.get("request_id"):
            out.append(entry)
    return out


@dataclass
class LogCursor:
    path: Path
    offset: int = 0

    def read_new(self) -> list[dict]:
        """The request lines completed since the last call."""
        try:
            with open(self.path, "rb") as f:
                f.seek(self.offset)
                data = f.read()
        except FileNotFoundError:
            return []
        end = data.rfind(b"\n")
        if end < 0:
            return []
        self.offset += end + 1
        return request_lines(data[:end + 1])


def sql_text_array(values) -> str:
    return "ARRAY[" + ",".join("'" + v.replace("'", "''") + "'" for v in values) + "]::text[]"


@dataclass
class AuditWatch:
    """The audit check of one database (and every depotd serving it)."""
    db: object  # depot_harness.Database
    name: str
    logs: dict[str, LogCursor] = field(default_factory=dict)
    seen: set[str] = field(default_factory=set)  # request ids of every line read
    anchor: int | None = None  # audit_head.anchor_id at the last check (it moves when rows are archived)
    killed: bool = False
    dropped: bool = False

    def add_log(self, path: Path) -> None:
        key = str(path)
        if key not in self.logs:
            # A depotd restarted on the same log appends: the cursor carries on from where it stood.
            self.logs[key] = LogCursor(path, 0)
        if self.anchor is None:
            self.anchor = self._query_json("SELECT anchor_id FROM audit_head")

    def _query_json(self, sql: str):
        """One value of JSON from `sql` (through the Database's connection, or psql with the SQL on stdin:
        lists of request ids can be long)."""
        import subprocess

        import depot_harness
        from depot_harness import PSQL, clean_env
        if depot_harness.psycopg2 is not None:
            rows = self.db.query(sql)
            return json.loads(rows[0][0]) if rows else None
        cmd = [PSQL, "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-d", self.db.url, "-f", "-"]
        proc = subprocess.run(cmd, input=sql, capture_output=True, text=True, timeout=120, env=clean_env())
        assert proc.returncode == 0, f"psql failed: {proc.stderr}\n{sql[:2000]}"
        return json.loads(proc.stdout or "null")

    def _rows(self, where: str) -> list[AuditRow]:
        got = self._query_json(
            "SELECT coalesce(json_agg(json_build_array(request_id, actor, action, outcome, resource, credential) "
            f"ORDER BY id), '[]') FROM audit_log WHERE {where}")
        return [AuditRow(action, outcome, resource, actor, rid, credential)
                for rid, actor, action, outcome, resource, credential in got]

    def _facts(self) -> Facts:
        pairs = self._query_json("SELECT coalesce(json_agg(json_build_array(b.name, m.prefix)), '[]') "
                                 "FROM models m JOIN buckets b ON b.id = m.bucket_id")
        return Facts(model_prefixes=[(b, p) for b, p in pairs])

    def check(self) -> list[str]:
        """Compares the requests logged since the last check with their rows; returns the mismatches. (Rows
        are looked up by request id: a request commits its rows before it responds, hence before its log
        line; ids say nothing about commit order.)"""
        lines = []
        for cursor in self.logs.values():
            lines += cursor.read_new()
        if not lines:
            return []
        ids = [line["request_id"] for line in lines]
        self.seen.update(ids)
        by_request: dict[str, list[AuditRow]] = {}
        for r in self._rows(f"request_id = ANY({sql_text_array(ids)})"):
            by_request.setdefault(r.request_id, []).append(r)
        # Rows archived (depotctl audit archive, depotd --audit-retention) before this check are gone: a
        # request may then miss its rows.
        anchor = self._query_json("SELECT anchor_id FROM audit_head")
        archived = anchor != self.anchor
        self.anchor = anchor
        facts = self._facts() if any(line.get("operation") == "GetObject" for line in lines) else Facts()
        failures = []
        for line in lines:
            rows = by_request.get(line["request_id"], [])
            report = compare(line, rows, facts)
            if report and not (archived and not rows):
                failures.append(report)
        return failures

    def unclaimed_report(self) -> list[str]:
        """Rows no logged request claimed (call once the depotds have stopped and their logs are complete)."""
        if self.killed:
            return []
        exempt = sql_text_array(NON_REQUEST_ACTORS)
        present = self._query_json(
            "SELECT coalesce(json_agg(DISTINCT request_id), '[]') FROM audit_log "
            f"WHERE NOT (request_id = '' AND actor = ANY({exempt}))")
        unknown = sorted(set(present) - self.seen)
        if not unknown:
            return []
        return [f"audit row with no logged request: request_id {r.request_id!r} actor {r.actor!r} {r.describe()}"
                for r in self._rows(f"request_id = ANY({sql_text_array(unknown)}) "
                                    f"AND NOT (request_id = '' AND actor = ANY({exempt}))")]


class AuditChecker:
    """Every database the suite's depotd processes serve. Registered with depot_harness.Depot.observers."""

    def __init__(self):
        self.enabled = os.environ.get("DEPOT_E2E_AUDIT_CHECK", "on") != "off"
        self.watches: dict[str, AuditWatch] = {}
        self.deferred: list[str] = []

    # Depot observer interface
    def started(self, depot) -> None:
        if not self.enabled:
            return
        watch = self.watches.get(depot.db_name)
        if watch is None or watch.dropped:
            watch = self.watches[depot.db_name] = AuditWatch(depot.db, depot.db_name)
        watch.add_log(depot.log_path)

    def killed(self, depot) -> None:
        if depot.db_name in self.watches:
            self.watches[depot.db_name].killed = True

    def dropping(self, depot) -> None:
        """The database is about to be dropped: its last check, and its unclaimed rows."""
        watch = self.watches.get(depot.db_name)
        if watch is None or watch.dropped:
            return
        try:
            self.deferred += [f"[{watch.name}] {f}" for f in watch.check() + watch.unclaimed_report()]
        finally:
            watch.dropped = True

    # For the fixtures
    def check_all(self) -> list[str]:
        failures, self.deferred = self.deferred, []
        for watch in self.watches.values():
            if not watch.dropped:
                failures += watch.check()
        return failures

    def finish(self, depot) -> list[str]:
        """check_all, then the unclaimed rows of `depot`'s database (its depotds must have stopped)."""
        failures = self.check_all()
        watch = self.watches.get(depot.db_name)
        if watch is not None and not watch.dropped:
            failures += watch.unclaimed_report()
            watch.dropped = True
        return failures


def format_failures(failures: list[str]) -> str:
    shown = failures[:30]
    more = f"\n... and {len(failures) - len(shown)} more" if len(failures) > len(shown) else ""
    return "audit rows differ from audit_expectations.py:\n" + "\n".join(shown) + more
