"""Checks that every request the e2e suite makes leaves exactly the audit rows audit_expectations.py says.

For each database a depotd of the suite serves, `AuditWatch` keeps
  * a cursor on the log of every depotd on that database: the log line of a request ("msg":"request", with
    request_id, operation, bucket, key, status, error and caller) is written just after the response has
    been sent, so it can land after the test that made the request has ended; only complete lines are
    consumed, and the next check picks up the rest;
  * a cursor on audit_log ids (ids are assigned in commit order under the chain head's lock, so no row can
    appear below the cursor later), and the rows read but not yet claimed by a logged request.
Reading the logs first and the rows second means every logged request's rows are already there (a request
commits its rows before it responds). Rows no logged request claims are reported when the depotd's database
is checked for the last time (after the depotd stopped and flushed its log), except rows with no request id
written by `system` (background work) or `depotctl`.

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

from audit_expectations import Facts, Row, expected_rows, OPERATIONS, PENDING, UNROUTED

# Rows no request caused: background work and the admin CLI.
NON_REQUEST_ACTORS = {"system", "depotctl"}


@dataclass(frozen=True)
class AuditRow:
    action: str
    outcome: str
    resource: str
    actor: str = ""
    request_id: str = ""

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
    if op in PENDING and not rows:
        expected = []  # TODO(audit-rest): see audit_expectations.PENDING
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


@dataclass
class AuditWatch:
    """The audit check of one database (and every depotd serving it)."""
    db: object  # depot_harness.Database
    name: str
    logs: dict[str, LogCursor] = field(default_factory=dict)
    last_id: int = 0
    unclaimed: dict[str, list[AuditRow]] = field(default_factory=dict)
    killed: bool = False
    dropped: bool = False

    def add_log(self, path: Path) -> None:
        key = str(path)
        if key not in self.logs:
            # A depotd restarted on the same log appends: the cursor carries on from where it stood.
            self.logs[key] = LogCursor(path, 0)

    def _query_json(self, sql: str):
        from depot_harness import PSQL, run
        proc = run([PSQL, "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-d", self.db.url, "-c", sql],
                   timeout=60)
        return json.loads(proc.stdout or "null")

    def _facts(self) -> Facts:
        pairs = self._query_json("SELECT coalesce(json_agg(json_build_array(b.name, m.prefix)), '[]') "
                                 "FROM models m JOIN buckets b ON b.id = m.bucket_id")
        return Facts(model_prefixes=[(b, p) for b, p in pairs])

    def check(self) -> list[str]:
        """Compares the requests logged since the last check with their rows; returns the mismatches."""
        lines = []
        for cursor in self.logs.values():
            lines += cursor.read_new()
        before = self.last_id
        got = self._query_json(
            "SELECT json_build_object('anchor', (SELECT anchor_id FROM audit_head), 'rows', coalesce(("
            "SELECT json_agg(json_build_array(id, request_id, actor, action, outcome, resource) ORDER BY id) "
            f"FROM audit_log WHERE id > {int(before)}), '[]'))")
        for row_id, request_id, actor, action, outcome, resource in got["rows"]:
            self.last_id = max(self.last_id, row_id)
            if not request_id and actor in NON_REQUEST_ACTORS:
                continue
            row = AuditRow(action, outcome, resource, actor, request_id)
            self.unclaimed.setdefault(request_id, []).append(row)
        # Rows archived before this check read them are gone: a request may then miss its rows.
        archived_unread = got["anchor"] > before
        facts = None
        failures = []
        for line in lines:
            rows = self.unclaimed.pop(line["request_id"], [])
            if facts is None and line.get("operation") == "GetObject":
                facts = self._facts()
            report = compare(line, rows, facts or Facts())
            if report and not (archived_unread and not rows):
                failures.append(report)
        return failures

    def unclaimed_report(self) -> list[str]:
        """Rows no logged request claimed (call once the depotds have stopped and their logs are complete)."""
        if self.killed:
            return []
        return [f"audit row with no logged request: request_id {rid!r} actor {r.actor!r} {r.describe()}"
                for rid, rows in self.unclaimed.items() for r in rows]


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
