"""Observability: /metrics (Prometheus text format), the JSON access log, /readyz and the log level at run time.

Counters are compared before and after a known sequence of requests (the suite runs one test at a time, so
nothing else talks S3 to depotd meanwhile). /readyz going unready is driven by a second depotd that reaches
PostgreSQL through a TCP proxy the test can cut.
"""

from __future__ import annotations

import json
import math
import re
import secrets
import signal
import socket
import subprocess
import threading
import time
import urllib.parse
from pathlib import Path

import pytest
import requests

from depot_harness import REPO_ROOT, Database, sanitizer_reports

METRICS_TXT = REPO_ROOT / "tests" / "helm" / "metrics.txt"


# --------------------------------------------------------------------------------------------------
# A parser for the text exposition format 0.0.4, strict enough to catch malformed output.

_NAME = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
_SAMPLE = re.compile(rf"^({_NAME})(\{{(.*)\}})? (\S+)$")
_LABEL = re.compile(r'\s*([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"\s*(,|$)')


def _unescape(value: str) -> str:
    out, i = [], 0
    while i < len(value):
        c = value[i]
        if c == "\\":
            nxt = value[i + 1]
            assert nxt in '\\"n', f"bad escape \\{nxt} in {value!r}"
            out.append("\n" if nxt == "n" else nxt)
            i += 2
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _parse_labels(text: str) -> dict[str, str]:
    labels, pos = {}, 0
    while pos < len(text):
        m = _LABEL.match(text, pos)
        assert m, f"malformed labels {text!r} at {pos}"
        assert m.group(1) not in labels, f"label {m.group(1)} twice in {text!r}"
        labels[m.group(1)] = _unescape(m.group(2))
        pos = m.end()
    return labels


def _parse_value(text: str) -> float:
    if text in ("+Inf", "-Inf", "NaN"):
        return float(text.replace("Inf", "inf").replace("NaN", "nan"))
    return float(text)


class Family:
    def __init__(self, name: str):
        self.name, self.type, self.help = name, None, None
        self.samples: list[tuple[str, dict[str, str], float]] = []


def parse_exposition(text: str) -> dict[str, Family]:
    """Families by name. Asserts the format: HELP and TYPE once each, before the family's samples; every
    sample belongs to the family declared last (histograms: _bucket, _sum, _count); no series twice."""
    assert text.endswith("\n"), "the exposition must end with a newline"
    families: dict[str, Family] = {}
    current: Family | None = None
    seen = set()
    for line in text.splitlines():
        assert line.strip() == line and line, f"blank or padded line {line!r}"
        if line.startswith("#"):
            parts = line.split(" ", 3)
            assert parts[1] in ("HELP", "TYPE"), f"unknown comment {line!r}"
            name = parts[2]
            assert re.fullmatch(_NAME, name), line
            fam = families.setdefault(name, Family(name))
            assert fam.samples == [], f"{parts[1]} after samples of {name}"
            if parts[1] == "TYPE":
                assert fam.type is None, f"two TYPE lines for {name}"
                fam.type = parts[3]
                assert fam.type in ("counter", "gauge", "histogram", "summary", "untyped"), line
            else:
                assert fam.help is None, f"two HELP lines for {name}"
                fam.help = parts[3] if len(parts) > 3 else ""
            current = fam
            continue
        m = _SAMPLE.match(line)
        assert m, f"malformed sample line {line!r}"
        name, labels, value = m.group(1), _parse_labels(m.group(3) or ""), _parse_value(m.group(4))
        assert current is not None and current.type is not None, f"sample before TYPE: {line!r}"
        allowed = {current.name}
        if current.type == "histogram":
            allowed = {current.name + s for s in ("_bucket", "_sum", "_count")}
        assert name in allowed, f"sample {name} inside family {current.name}"
        key = (name, tuple(sorted(labels.items())))
        assert key not in seen, f"series twice: {line!r}"
        seen.add(key)
        current.samples.append((name, labels, value))
    return families


class Scrape:
    def __init__(self, families: dict[str, Family]):
        self.families = families

    def value(self, name: str, default: float | None = 0.0, **labels) -> float:
        """The sample `name` whose labels include `labels` (exactly one must match, or none: default)."""
        family = name
        for suffix in ("_bucket", "_sum", "_count"):
            if name.endswith(suffix) and name[: -len(suffix)] in self.families:
                family = name[: -len(suffix)]
        matches = [v for n, l, v in self.families.get(family, Family(family)).samples
                   if n == name and all(l.get(k) == v for k, v in labels.items())]
        assert len(matches) <= 1, f"{name}{labels} matches {len(matches)} series"
        if not matches:
            assert default is not None, f"no sample {name}{labels}"
            return default
        return matches[0]


def scrape(endpoint: str) -> Scrape:
    r = requests.get(endpoint + "/metrics", timeout=30)
    assert r.status_code == 200, r.text
    assert r.headers["Content-Type"] == "text/plain; version=0.0.4; charset=utf-8"
    return Scrape(parse_exposition(r.text))


def delta(before: Scrape, after: Scrape, name: str, **labels) -> float:
    return after.value(name, **labels) - before.value(name, **labels)


def scrape_after(endpoint: str, before: Scrape, requests_sent: int, timeout: float = 10) -> Scrape:
    """A scrape that counts `requests_sent` more requests than `before`. A request is recorded once its
    response has been written, which can be a moment after the client has read the last byte."""
    total = lambda s: sum(v for _, _, v in s.families["depot_s3_requests_total"].samples)  # noqa: E731
    deadline = time.monotonic() + timeout
    while True:
        after = scrape(endpoint)
        if total(after) - total(before) >= requests_sent or time.monotonic() > deadline:
            return after
        time.sleep(0.05)


def access_log(depot, since: int) -> list[dict]:
    """The access-log lines ("msg": "request") written since the log offset `since`."""
    lines = []
    for line in depot.log_since(since).splitlines():
        if not line.startswith("{"):
            continue
        entry = json.loads(line)  # every JSON log line must parse
        if entry.get("msg") == "request":
            lines.append(entry)
    return lines


def wait_for_log(depot, since: int, request_id: str, timeout: float = 15) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        found = [e for e in access_log(depot, since) if e["request_id"] == request_id]
        if found:
            assert len(found) == 1, found
            return found[0]
        assert time.monotonic() < deadline, f"no access-log line for request {request_id}"
        time.sleep(0.05)


# --------------------------------------------------------------------------------------------------
# /metrics


def test_metrics_are_unauthenticated_well_formed_and_export_exactly_the_documented_families(depot):
    s = scrape(depot.endpoint)
    documented = {line.strip() for line in METRICS_TXT.read_text().splitlines()
                  if line.strip() and not line.startswith("#")}
    exported = set(s.families)
    # The dedup gauges appear once their (cached) query has run, which the first scrape does.
    assert exported == documented, (f"undocumented: {sorted(exported - documented)}, "
                                    f"missing: {sorted(documented - exported)}")
    for fam in s.families.values():
        assert fam.help, f"{fam.name} has no help text"
        assert fam.type in ("counter", "gauge", "histogram"), fam.name
        if fam.type == "counter":
            assert fam.name.endswith("_total") or fam.name.endswith("_seconds_total"), fam.name
            assert all(v >= 0 for _, _, v in fam.samples), fam.name
        if fam.type != "histogram":
            continue
        series: dict[tuple, list[tuple[float, float]]] = {}
        totals: dict[tuple, float] = {}
        for name, labels, value in fam.samples:
            key = tuple(sorted((k, v) for k, v in labels.items() if k != "le"))
            if name.endswith("_bucket"):
                series.setdefault(key, []).append((_parse_value(labels["le"]), value))
            elif name.endswith("_count"):
                totals[key] = value
        assert series, f"{fam.name} has no buckets"
        for key, buckets in series.items():
            bounds = [b for b, _ in buckets]
            counts = [c for _, c in buckets]
            assert bounds == sorted(bounds) and len(set(bounds)) == len(bounds), f"{fam.name}{key}: le order"
            assert math.isinf(bounds[-1]), f"{fam.name}{key}: no +Inf bucket"
            assert all(a <= b for a, b in zip(counts, counts[1:])), f"{fam.name}{key}: not cumulative {counts}"
            assert counts[-1] == totals[key], f"{fam.name}{key}: +Inf bucket != _count"

    # Process and pool gauges are plausible.
    assert s.value("process_resident_memory_bytes") > 1 << 20
    assert s.value("process_open_fds") > 3
    assert abs(s.value("process_start_time_seconds") - time.time()) < 24 * 3600
    assert s.value("depot_db_pool_max_connections") >= 1
    assert (s.value("depot_db_pool_connections", state="in_use") + s.value("depot_db_pool_connections", state="idle")
            <= s.value("depot_db_pool_max_connections"))
    assert s.value("depot_build_info", storage=depot.storage) == 1
    # A scrape is not an S3 request.
    assert s.value("depot_s3_requests_in_flight") == 0


def test_a_metrics_token_keeps_the_storage_gauges_from_whoever_reaches_the_s3_port(private_depot, tmp_path):
    """The attacker's requests: anyone reaching the S3 port read depot_stored_physical_bytes, so uploading a
    guessed file and watching the gauge not grow told them another owner had stored it (deduplication is
    across owners). With --metrics-token-file only the bearer of the token reads /metrics; a signed request
    for /metrics is still S3 (a bucket named "metrics"), and /healthz and /readyz stay open."""
    token = secrets.token_urlsafe(24)
    path = tmp_path / "metrics-token"
    path.write_text(token + "\n")
    server = private_depot("--metrics-token-file", str(path))
    for headers in ({}, {"Authorization": "Bearer wrong-" + token}, {"Authorization": "Bearer"},
                    {"Authorization": "Basic " + token}):
        r = requests.get(server.endpoint + "/metrics", headers=headers, timeout=30)
        if headers.get("Authorization", "").startswith("Basic") or headers.get("Authorization") == "Bearer":
            # No bearer token: an S3 request with a malformed signature, never the metrics.
            assert r.status_code in (400, 403) and "depot_stored_physical_bytes" not in r.text, r.text
            continue
        assert r.status_code == 401, (headers, r.status_code, r.text)
        assert r.headers["WWW-Authenticate"].startswith("Bearer")
        assert "depot_" not in r.text
    r = requests.get(server.endpoint + "/metrics", headers={"Authorization": f"Bearer {token}"}, timeout=30)
    assert r.status_code == 200 and r.headers["Content-Type"].startswith("text/plain; version=0.0.4")
    assert "depot_stored_physical_bytes" in r.text or "depot_build_info" in r.text
    for probe in ("/healthz", "/readyz"):
        assert requests.get(server.endpoint + probe, timeout=30).status_code == 200
    # A signed S3 request for /metrics is S3's: the bucket "metrics" does not exist.
    r = server.request("GET", "/metrics")
    assert r.status_code == 404 and "NoSuchBucket" in r.text, r.text


def test_wrong_metrics_tokens_count_toward_the_auth_failure_limit(private_depot, tmp_path):
    """An attacker's finding: 30 wrong /metrics tokens in a row were all answered 401, none counted, so the
    token could be guessed without end; and an address cooling down still had its token compared. A wrong
    token is now a failed authentication of the address like a bad signature or API token; once the limit is
    reached the address waits (429 with Retry-After, a right token too), and so does its S3 traffic."""
    token = secrets.token_urlsafe(24)
    path = tmp_path / "metrics-token"
    path.write_text(token + "\n")
    server = private_depot("--metrics-token-file", str(path), "--auth-failure-limit", "3",
                           "--auth-failure-window", "60", "--auth-failure-cooldown", "30")
    right = {"Authorization": f"Bearer {token}"}
    assert requests.get(server.endpoint + "/metrics", headers=right, timeout=30).status_code == 200
    for _ in range(3):
        r = requests.get(server.endpoint + "/metrics", headers={"Authorization": "Bearer guess-" + token},
                         timeout=30)
        assert r.status_code == 401, r.text
    r = requests.get(server.endpoint + "/metrics", headers=right, timeout=30)
    assert r.status_code == 429 and 1 <= int(r.headers["Retry-After"]) <= 30, (r.status_code, r.text)
    assert "depot_" not in r.text
    r = server.request("GET", "/")
    assert r.status_code == 503 and b"<Code>SlowDown</Code>" in r.content, r.text
    # Probes never authenticate, and are never refused.
    assert requests.get(server.endpoint + "/healthz", timeout=30).status_code == 200


def test_depotd_refuses_a_metrics_token_too_short_to_keep_anyone_out(depot, tmp_path):
    path = tmp_path / "short"
    path.write_text("short\n")
    proc = subprocess.run([str(Path(depot.bin_dir) / "depotd"), "--metrics-token-file", str(path),
                           "--database-url", depot.db.url, "--listen", "127.0.0.1:0"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode != 0
    out = proc.stdout + proc.stderr
    assert "--metrics-token-file" in out and "16 printable" in out, out


@pytest.mark.storage
def test_request_counters_bytes_and_latency_move_by_exactly_the_traffic_sent(depot, bucket):
    small, large = secrets.token_bytes(1000), secrets.token_bytes(3 * 1024 * 1024 + 17)
    before = scrape(depot.endpoint)

    for key, body in (("a", small), ("b", large), ("c", small)):
        r = depot.request("PUT", f"/{bucket}/{key}", body=body)
        assert r.status_code == 200, r.text
    for _ in range(2):
        r = depot.request("GET", f"/{bucket}/b")
        assert r.status_code == 200 and r.content == large
    r = depot.request("HEAD", f"/{bucket}/a")
    assert r.status_code == 200
    r = depot.request("GET", f"/{bucket}/missing")
    assert r.status_code == 404
    missing_body = len(r.content)
    r = depot.request("GET", f"/{bucket}/a", signed=False)  # anonymous: 403
    assert r.status_code == 403
    denied_body = len(r.content)

    after = scrape_after(depot.endpoint, before, 8)
    d = lambda name, **labels: delta(before, after, name, **labels)  # noqa: E731
    assert d("depot_s3_requests_total", operation="PutObject", status_class="2xx") == 3
    assert d("depot_s3_requests_total", operation="GetObject", status_class="2xx") == 2
    assert d("depot_s3_requests_total", operation="GetObject", status_class="4xx") == 2
    assert d("depot_s3_requests_total", operation="HeadObject", status_class="2xx") == 1
    assert d("depot_s3_requests_total", operation="GetObject", status_class="5xx") == 0
    assert d("depot_s3_requests_total", operation="DeleteObject", status_class="2xx") == 0
    assert d("depot_s3_received_bytes_total", operation="PutObject") == 2 * len(small) + len(large)
    assert d("depot_s3_sent_bytes_total", operation="GetObject") == 2 * len(large) + missing_body + denied_body
    assert d("depot_s3_sent_bytes_total", operation="HeadObject") == 0
    assert d("depot_s3_request_duration_seconds_count", operation="PutObject") == 3
    assert d("depot_s3_request_duration_seconds_count", operation="GetObject") == 4
    assert d("depot_s3_request_duration_seconds_bucket", operation="GetObject", le="+Inf") == 4
    assert d("depot_s3_request_duration_seconds_sum", operation="PutObject") > 0
    assert after.value("depot_s3_requests_in_flight") == 0

    # Storage: the new content was written once each (random bytes: no dedup), the large one read twice.
    store = depot.storage
    assert d("depot_blob_written_bytes_total", store=store) == len(small) + len(large) + len(small) or \
        d("depot_blob_written_bytes_total", store=store) == len(small) + len(large)  # identical small PUTs may dedup
    assert d("depot_blob_read_bytes_total", store=store) >= 2 * len(large)
    assert d("depot_blob_operation_duration_seconds_count", store=store, operation="commit") >= 2
    assert d("depot_blob_operation_errors_total", store=store, operation="commit") == 0
    # The database did the metadata work.
    assert d("depot_db_query_duration_seconds_count") >= 8
    assert d("depot_db_pool_acquire_duration_seconds_count") >= 8


def test_rest_calls_are_counted_and_logged_by_route(depot):
    from rest import call, token_for

    token = token_for(depot, "alice")["token"]
    since = depot.log_size()
    before = scrape(depot.endpoint)
    for _ in range(2):
        assert call(depot, "GET", "/api/v1/whoami", token=token).status_code == 200
    assert call(depot, "GET", "/api/v1/teams/no-such-team", token=token).status_code == 404
    assert call(depot, "GET", "/api/v1/no/such/route", token=token).status_code == 404
    # the web console's files (on its own listener) are requests like the others: counted and logged as
    # operation "Console"
    assert requests.get(depot.console_endpoint + "/ui/", timeout=30).status_code == 200
    assert requests.get(depot.console_endpoint + "/ui/no-such-file.js", timeout=30).status_code == 404
    after = scrape_after(depot.endpoint, before, 6)
    d = lambda name, **labels: delta(before, after, name, **labels)  # noqa: E731
    assert d("depot_s3_requests_total", operation="whoami", status_class="2xx") == 2
    assert d("depot_s3_requests_total", operation="getTeam", status_class="4xx") == 1
    assert d("depot_s3_requests_total", operation="RestApi", status_class="4xx") == 1
    assert d("depot_s3_request_duration_seconds_count", operation="whoami") == 2
    assert d("depot_s3_sent_bytes_total", operation="whoami") > 0
    assert d("depot_s3_requests_total", operation="Console", status_class="2xx") == 1
    assert d("depot_s3_requests_total", operation="Console", status_class="4xx") == 1
    assert d("depot_s3_sent_bytes_total", operation="Console") > 0
    deadline = time.monotonic() + 10
    while True:  # the access-log line is written once the response has gone out
        operations = [e["operation"] for e in access_log(depot, since)]
        console = [(e["method"], e["status"]) for e in access_log(depot, since) if e["operation"] == "Console"]
        if (operations.count("whoami") == 2 and "getTeam" in operations and "RestApi" in operations
                and sorted(console) == [("GET", 200), ("GET", 404)]):
            break
        assert time.monotonic() < deadline, operations
        time.sleep(0.05)


def test_in_flight_counts_a_request_whose_body_is_still_arriving(depot, bucket):
    body = secrets.token_bytes(200_000)
    path = f"/{bucket}/slow"
    headers = {"Content-Length": str(len(body))}
    signed = depot.sign("PUT", depot.endpoint + path, body=body, headers=headers, payload_hash="UNSIGNED-PAYLOAD")
    with socket.create_connection(("127.0.0.1", depot.port), timeout=30) as sock:
        head = f"PUT {path} HTTP/1.1\r\nHost: 127.0.0.1:{depot.port}\r\n"
        head += "".join(f"{k}: {v}\r\n" for k, v in signed.items() if k.lower() != "host")
        sock.sendall(head.encode() + b"\r\n" + body[:1000])
        deadline = time.monotonic() + 10
        while scrape(depot.endpoint).value("depot_s3_requests_in_flight") != 1:
            assert time.monotonic() < deadline, "the half-sent upload never counted as in flight"
            time.sleep(0.05)
        sock.sendall(body[1000:])
        reply = b""
        while b"\r\n\r\n" not in reply:
            chunk = sock.recv(65536)
            assert chunk, reply
            reply += chunk
        assert reply.startswith(b"HTTP/1.1 200"), reply[:200]
    deadline = time.monotonic() + 10
    while scrape(depot.endpoint).value("depot_s3_requests_in_flight") != 0:
        assert time.monotonic() < deadline
        time.sleep(0.05)


# --------------------------------------------------------------------------------------------------
# The access log


def test_access_log_has_one_json_line_per_request_with_its_fields_and_never_a_secret(depot, bucket, s3):
    alice = depot.user("alice")
    since = depot.log_size()
    body = secrets.token_bytes(2 * 1024 * 1024 + 3)  # more than one 1 MiB send window
    put = depot.request("PUT", f"/{bucket}/dir/k%C3%A9y", body=body)
    assert put.status_code == 200
    get = depot.request("GET", f"/{bucket}/dir/k%C3%A9y")
    assert get.status_code == 200 and get.content == body
    missing = depot.request("GET", f"/{bucket}/nope")
    assert missing.status_code == 404
    url = s3.generate_presigned_url("get_object", Params={"Bucket": bucket, "Key": "dir/k\u00e9y"}, ExpiresIn=300)
    presigned = requests.get(url, timeout=30)
    assert presigned.status_code == 200 and presigned.content == body
    signature = urllib.parse.parse_qs(urllib.parse.urlsplit(url).query)["X-Amz-Signature"][0]
    header_signature = put.request.headers["Authorization"].rsplit("Signature=", 1)[1]

    p = wait_for_log(depot, since, put.headers["x-amz-request-id"])
    g = wait_for_log(depot, since, get.headers["x-amz-request-id"])
    m = wait_for_log(depot, since, missing.headers["x-amz-request-id"])
    ps = wait_for_log(depot, since, presigned.headers["x-amz-request-id"])
    for entry in (p, g, m, ps):
        for field in ("ts", "level", "request_id", "remote", "operation", "method", "bucket", "key", "status",
                      "error", "caller", "bytes_in", "bytes_out", "duration_us", "complete"):
            assert field in entry, (field, entry)
        assert entry["bucket"] == bucket and entry["caller"] == alice.access_key
        assert entry["remote"] == "127.0.0.1" and entry["duration_us"] >= 0
    assert (p["operation"], p["method"], p["key"], p["status"], p["error"]) == ("PutObject", "PUT", "dir/k\u00e9y", 200, "")
    assert (p["bytes_in"], p["bytes_out"], p["complete"]) == (len(body), 0, True)
    # Written after the body was streamed: bytes_out is the whole object.
    assert (g["operation"], g["status"], g["bytes_in"], g["bytes_out"], g["complete"]) == \
        ("GetObject", 200, 0, len(body), True)
    assert (m["status"], m["error"], m["key"]) == (404, "no_such_key", "nope")
    assert m["bytes_out"] == len(missing.content)
    assert (ps["operation"], ps["status"], ps["bytes_out"]) == ("GetObject", 200, len(body))

    log = depot.log_since(since)
    for secret in (alice.secret, signature, header_signature, "Signature=", "X-Amz-Signature", "Credential="):
        assert secret not in log, f"the log contains {secret!r}"


def test_access_log_marks_a_download_the_client_abandoned_as_incomplete(depot, bucket):
    size = 48 * 1024 * 1024  # well beyond what socket buffers absorb
    r = depot.request("PUT", f"/{bucket}/big", body=secrets.token_bytes(1024) * (size // 1024))
    assert r.status_code == 200
    since = depot.log_size()
    signed = depot.sign("GET", depot.endpoint + f"/{bucket}/big")
    with socket.create_connection(("127.0.0.1", depot.port), timeout=30) as sock:
        head = f"GET /{bucket}/big HTTP/1.1\r\nHost: 127.0.0.1:{depot.port}\r\n"
        head += "".join(f"{k}: {v}\r\n" for k, v in signed.items() if k.lower() != "host")
        sock.sendall(head.encode() + b"\r\n")
        reply = b""
        while b"\r\n\r\n" not in reply:
            reply += sock.recv(65536)
        request_id = re.search(rb"x-amz-request-id: (\w+)", reply, re.I).group(1).decode()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")  # RST on close
    entry = wait_for_log(depot, since, request_id, timeout=60)
    assert entry["status"] == 200 and entry["operation"] == "GetObject"
    assert entry["complete"] is False
    assert entry["bytes_out"] < size


# --------------------------------------------------------------------------------------------------
# /readyz, and a second depotd whose PostgreSQL connection the test controls


@pytest.mark.storage
def test_readyz_reports_every_check_ready(depot):
    r = requests.get(depot.endpoint + "/readyz", timeout=10)
    assert r.status_code == 200, r.text
    assert r.json() == {"status": "ready",
                        "checks": {"database": "ok", "migrations": "ok", "blob_store": "ok"}}
    assert requests.get(depot.endpoint + "/healthz", timeout=10).status_code == 200


class TcpProxy:
    """Forwards 127.0.0.1:port to a target; `cut()` drops every connection and refuses new ones (PostgreSQL
    gone), `restore()` forwards again."""

    def __init__(self, target: tuple[str, int]):
        self.target = target
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.up = True
        self.conns: list[socket.socket] = []
        self.lock = threading.Lock()
        self.closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while not self.closed:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            if not self.up:
                client.close()
                continue
            try:
                server = socket.create_connection(self.target, timeout=10)
            except OSError:
                client.close()
                continue
            with self.lock:
                self.conns += [client, server]
            for a, b in ((client, server), (server, client)):
                threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    @staticmethod
    def _pump(src: socket.socket, dst: socket.socket):
        try:
            while chunk := src.recv(65536):
                dst.sendall(chunk)
        except OSError:
            pass
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def cut(self):
        self.up = False
        with self.lock:
            for c in self.conns:
                try:
                    c.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                c.close()
            self.conns = []

    def restore(self):
        self.up = True

    def close(self):
        self.closed = True
        self.cut()
        self.listener.close()


def _wait_ready(endpoint: str, want: int, timeout: float = 30) -> dict:
    deadline, last = time.monotonic() + timeout, None
    while time.monotonic() < deadline:
        try:
            r = requests.get(endpoint + "/readyz", timeout=10)
            last = (r.status_code, r.text)
            if r.status_code == want:
                return r.json()
        except requests.RequestException as e:
            last = e
        time.sleep(0.2)
    raise AssertionError(f"/readyz did not answer {want} within {timeout} s; last: {last}")


def test_readyz_turns_unready_while_postgresql_is_unreachable_and_ready_when_it_returns(depot, tmp_path,
                                                                                          monkeypatch):
    url = urllib.parse.urlsplit(depot.db.url)
    proxy = TcpProxy((url.hostname, url.port))
    replica = depot.sibling(tmp_path / "replica")
    replica.db = Database(urllib.parse.urlunsplit(url._replace(netloc=f"{url.username}@127.0.0.1:{proxy.port}")))
    replica.extra_args = ["--migrate", "false"]
    monkeypatch.setenv("DEPOT_METRICS_STORAGE_INTERVAL", "0")  # no caching: compare with the database below
    try:
        replica.start()
        endpoint = replica.endpoint
        _wait_ready(endpoint, 200)

        proxy.cut()
        body = _wait_ready(endpoint, 503)
        assert body["status"] == "unready"
        assert body["checks"]["database"] == "unreachable"
        assert body["checks"]["blob_store"] == "ok"
        # Liveness is not readiness: the process is fine.
        assert requests.get(endpoint + "/healthz", timeout=10).status_code == 200
        # /metrics still answers without the database (the storage totals are left out or stale).
        assert "depot_s3_requests_total" in scrape(endpoint).families

        proxy.restore()
        assert _wait_ready(endpoint, 200)["checks"] == {"database": "ok", "migrations": "ok", "blob_store": "ok"}

        # With the storage query uncached, the dedup gauges match the database exactly.
        s = scrape(endpoint)
        logical = depot.db.scalar("SELECT coalesce(sum(size), 0) FROM object_versions "
                                  "WHERE superseded_seq IS NULL AND NOT is_delete_marker")
        physical = depot.db.scalar("SELECT coalesce(sum(size), 0) FROM blobs")
        assert s.value("depot_stored_logical_bytes", default=None) == logical
        assert s.value("depot_stored_physical_bytes", default=None) == physical
        if physical:
            assert math.isclose(s.value("depot_dedup_ratio", default=None), logical / physical)

        # The log level changes at run time: SIGUSR1 -> debug, SIGUSR2 -> back to the configured level.
        replica.proc.send_signal(signal.SIGUSR1)
        _wait_for_line(replica.log_path, '"msg":"log level changed"', '"log_level":"debug"')
        replica.proc.send_signal(signal.SIGUSR2)
        _wait_for_line(replica.log_path, '"msg":"log level changed"', '"log_level":"info"')
        text = replica.log_text()
        assert '"msg":"not ready"' in text and '"msg":"ready"' in text
    finally:
        status = replica.stop() if replica.proc is not None else 0
        proxy.close()
    text = replica.log_text()
    assert not sanitizer_reports(text), text[-8000:]
    assert status == 0, text[-8000:]


def _wait_for_line(path: Path, *needles: str, timeout: float = 10) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if any(all(n in line for n in needles) for line in path.read_text().splitlines()):
            return
        time.sleep(0.05)
    raise AssertionError(f"no log line with {needles} in {path}")
