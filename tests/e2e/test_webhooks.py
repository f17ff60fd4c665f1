"""Events and signed webhooks end to end: a real HTTP receiver started here verifies every Standard Webhooks
signature and sees each event once, in commit order per model (also under concurrent alias moves); a
receiver answering 500 gets the event again until it accepts it; a depotd killed (SIGKILL) between commit and
delivery delivers after its restart; two depotd processes on one database never send the same attempt twice;
version events carry the manifest with presigned URLs that read the files; object events for opted-in
buckets; secret rotation (two signatures); redelivery, ping, automatic disabling; bad subscriptions get a
precise problem and change nothing; other teams cannot see or manage a team's subscriptions. Responses are
checked against openapi/openapi.yaml.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import requests

from depot_harness import Depot, run, unique_bucket_name
from rest import assert_problem, call, token_for, validate
from test_metrics import delta, scrape

FAST = ["--webhook-allow-private", "true", "--webhook-retry-base", "1", "--webhook-retry-max", "2",
        "--webhook-poll-interval", "200", "--webhook-timeout", "3"]


# ---------------------------------------------------------------------------------------------- receiver

def verify_signature(secret: str, headers, body: bytes) -> list[bool]:
    """Which of the header's v1 signatures match `secret` (Standard Webhooks)."""
    key = base64.b64decode(secret.removeprefix("whsec_"))
    signed = f"{headers['webhook-id']}.{headers['webhook-timestamp']}.".encode() + body
    expected = base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()
    out = []
    for part in headers["webhook-signature"].split(" "):
        version, _, sig = part.partition(",")
        out.append(version == "v1" and hmac.compare_digest(sig, expected))
    return out


class Receiver:
    """An HTTP server recording every POST. `fail_next` answers that many requests with 500; `hold` makes
    requests wait on an event before answering (a slow receiver); `ok_body` is the body of a 2xx answer."""

    def __init__(self):
        self.requests: list[dict] = []
        self.lock = threading.Lock()
        self.fail_next = 0
        self.ok_body = b"ok"
        self.hold: threading.Event | None = None
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                with receiver.lock:
                    failing = receiver.fail_next > 0
                    if failing:
                        receiver.fail_next -= 1
                    hold = receiver.hold
                    receiver.requests.append({"headers": {k.lower(): v for k, v in self.headers.items()},
                                              "body": body, "path": self.path, "failed": failing,
                                              "at": time.monotonic()})
                if hold is not None:
                    hold.wait(30)
                status = 500 if failing else 200
                reply = b"boom" if failing else receiver.ok_body
                self.send_response(status)
                self.send_header("Content-Length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/hook"

    def close(self):
        self.server.shutdown()
        self.server.server_close()

    def accepted(self) -> list[dict]:
        """Requests answered 2xx, parsed, in arrival order."""
        with self.lock:
            reqs = [r for r in self.requests if not r["failed"]]
        return [{**r, "json": json.loads(r["body"])} for r in reqs]

    def wait_for(self, predicate, timeout=30.0, what="events"):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            got = self.accepted()
            if predicate(got):
                return got
            time.sleep(0.05)
        raise AssertionError(f"receiver: no {what} within {timeout} s; got "
                             f"{[(r['json']['type'], r['json']['data']) for r in self.accepted()]}")


@pytest.fixture
def receiver():
    r = Receiver()
    yield r
    r.close()


# ---------------------------------------------------------------------------------------------- setup

@pytest.fixture(scope="module")
def hooks_depot(depot, tmp_path_factory):
    """A depotd that allows loopback targets and retries fast, with its own database."""
    server = Depot(bin_dir=depot.bin_dir, base_url=depot.admin_db.url, workdir=tmp_path_factory.mktemp("hooks"))
    server.extra_args = list(FAST)
    server.setup()
    server.start()
    yield server
    if server.proc is not None and server.proc.poll() is None:
        server.stop()
    server.drop_database()


def make_team(server, admins=("alice",), extra=()) -> dict:
    """A team where alice is admin and bob maintainer; returns names and tokens."""
    tokens = {u: token_for(server, u)["token"] for u in ("alice", "bob", *extra)}
    name = "hooks-" + secrets.token_hex(3)
    assert call(server, "POST", "/api/v1/teams", token=tokens["alice"], body={"name": name}).status_code == 201
    assert call(server, "PUT", f"/api/v1/teams/{name}/members/alice", token=tokens["alice"],
                body={"role": "admin"}).status_code == 200
    assert call(server, "PUT", f"/api/v1/teams/{name}/members/bob", token=tokens["alice"],
                body={"role": "maintainer"}).status_code == 200
    return {"name": name, "tokens": tokens}


def team_call(server, team, method, path, user="alice", **kw):
    return call(server, method, f"/api/v1/teams/{team['name']}{path}", token=team["tokens"][user], **kw)


def subscribe(server, team, url, **fields) -> dict:
    r = team_call(server, team, "POST", "/webhooks", body={"url": url, **fields})
    body = validate(r, "POST", "/api/v1/teams/{team}/webhooks")
    assert r.status_code == 201 and body["secret"].startswith("whsec_"), r.text
    return body


def make_model(server, team, files: dict[str, bytes], name="llm") -> tuple[str, str]:
    bucket = unique_bucket_name("hooks")
    s3 = server.client("alice")
    s3.create_bucket(Bucket=bucket)
    for path, data in files.items():
        s3.put_object(Bucket=bucket, Key=f"{name}/{path}", Body=data)
    r = team_call(server, team, "POST", "/models", body={"name": name, "bucket": bucket, "prefix": f"{name}/"})
    assert r.status_code == 201, r.text
    return bucket, name


def events_of(reqs, model=None) -> list[dict]:
    out = [r["json"] for r in reqs]
    return [e for e in out if model is None or e["data"].get("model") == model]


def check_signed(reqs, secret):
    for r in reqs:
        assert r["headers"]["webhook-id"] == r["json"]["id"]
        assert r["headers"]["content-type"] == "application/json"
        assert abs(int(r["headers"]["webhook-timestamp"]) - time.time()) < 120
        assert any(verify_signature(secret, r["headers"], r["body"])), r["headers"]


# ---------------------------------------------------------------------------------------------- tests

def test_registry_events_are_signed_delivered_once_in_commit_order(hooks_depot, receiver):
    server = hooks_depot
    team = make_team(server)
    hook = subscribe(server, team, receiver.url)
    files = {"config.json": b'{"layers": 2}', "weights/shard-0.bin": secrets.token_bytes(200_000)}
    bucket, model = make_model(server, team, files)
    base = f"/models/{model}"
    assert team_call(server, team, "POST", f"{base}/versions", body={"label": "v1"}).status_code == 201
    assert team_call(server, team, "POST", f"{base}/versions/1/submit", body={}).status_code == 200
    assert team_call(server, team, "POST", f"{base}/versions/1/approve", user="bob",
                     body={"comment": "ship it"}).status_code == 200
    assert team_call(server, team, "PUT", f"{base}/aliases/production", body={"version": 1}).status_code == 200
    assert team_call(server, team, "POST", f"{base}/versions", body={}).status_code == 201
    assert team_call(server, team, "POST", f"{base}/versions/2/submit", body={}).status_code == 200
    assert team_call(server, team, "POST", f"{base}/versions/2/reject", user="bob", body={}).status_code == 200
    expected = [("model.created", None), ("version.created", 1), ("alias.updated", ("latest", None, 1)),
                ("version.submitted", 1), ("version.approved", 1), ("alias.updated", ("production", None, 1)),
                ("version.created", 2), ("alias.updated", ("latest", 1, 2)), ("version.submitted", 2),
                ("version.rejected", 2)]
    got = receiver.wait_for(lambda g: len(events_of(g, model)) >= len(expected))
    time.sleep(0.5)  # nothing more may come
    got = receiver.accepted()
    check_signed(got, hook["secret"])
    events = events_of(got, model)
    summary = []
    for e in events:
        d = e["data"]
        if e["type"] == "alias.updated":
            summary.append((e["type"], (d["alias"], d["from"], d["to"])))
        elif e["type"].startswith("version."):
            summary.append((e["type"], d["version"]["number"]))
        else:
            summary.append((e["type"], None))
    assert summary == expected
    assert len({e["id"] for e in events}) == len(events), "an event was delivered twice"
    # The ids are the outbox's, in commit order.
    ids = [int(e["id"].removeprefix("evt_")) for e in events]
    seqs = [int(server.db.scalar(f"SELECT seq FROM events WHERE id = {i}")) for i in ids]
    assert seqs == sorted(seqs)

    approved = next(e for e in events if e["type"] == "version.approved")
    d = approved["data"]
    assert (d["team"], d["model"], d["actor"], d["comment"]) == (team["name"], model, "bob", "ship it")
    assert d["version"] == {"number": 1, "label": "v1", "state": "approved"}
    assert d["s3_prefix"] == f"s3://models/{team['name']}/{model}/1/"
    assert not d["files_truncated"]
    by_path = {f["path"]: f for f in d["files"]}
    assert sorted(by_path) == sorted(files)
    for path, data in files.items():
        f = by_path[path]
        assert f["size"] == len(data) and f["sha256"] == hashlib.sha256(data).hexdigest()
        # The presigned URL reads the file with no other credentials.
        r = requests.get(f["url"], timeout=30)
        assert r.status_code == 200 and r.content == data, (r.status_code, r.text[:300])
    # A URL whose signature is altered does not.
    url = by_path["config.json"]["url"]
    bad = url[:-1] + ("0" if url[-1] != "0" else "1")
    assert requests.get(bad, timeout=30).status_code == 403

    # Every attempt is on record.
    r = team_call(server, team, "GET", f"/webhooks/{hook['id']}/deliveries?state=delivered")
    listed = validate(r, "GET", "/api/v1/teams/{team}/webhooks/{webhook}/deliveries")
    assert len(listed["items"]) == len(events)
    one = listed["items"][0]
    r = team_call(server, team, "GET", f"/webhooks/{hook['id']}/deliveries/{one['id']}")
    detail = validate(r, "GET", "/api/v1/teams/{team}/webhooks/{webhook}/deliveries/{delivery}")
    assert detail["state"] == "delivered" and [a["status"] for a in detail["attempt_log"]] == [200]
    assert detail["attempt_log"][0]["response_excerpt"] == "ok"


def test_concurrent_alias_moves_arrive_in_commit_order(hooks_depot, receiver):
    server = hooks_depot
    team = make_team(server)
    subscribe(server, team, receiver.url, event_types=["alias.updated"])
    _, model = make_model(server, team, {"a.bin": b"a"}, name="orderly")
    for _ in range(2):
        assert team_call(server, team, "POST", f"/models/{model}/versions", body={}).status_code == 201

    def move(i):
        r = team_call(server, team, "PUT", f"/models/{model}/aliases/staging", body={"version": 1 + i % 2})
        assert r.status_code == 200, r.text

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(move, range(40)))
    moves = lambda g: [e for e in events_of(g, model) if e["data"]["alias"] == "staging"]
    got = receiver.wait_for(lambda g: len(moves(g)) >= 40)
    staging = moves(got)
    assert len(staging) == 40
    # In commit order each move starts where the previous one left the alias.
    assert staging[0]["data"]["from"] is None
    for before, after in zip(staging, staging[1:]):
        assert after["data"]["from"] == before["data"]["to"], (before["data"], after["data"])
    final = team_call(server, team, "GET", f"/models/{model}/aliases/staging").json()["version"]
    assert staging[-1]["data"]["to"] == final


def test_receiver_failing_then_recovering_gets_the_event(hooks_depot, receiver):
    server = hooks_depot
    team = make_team(server)
    hook = subscribe(server, team, receiver.url)
    receiver.fail_next = 2
    before = scrape(server.endpoint)
    r = team_call(server, team, "POST", f"/webhooks/{hook['id']}/ping")
    ping = validate(r, "POST", "/api/v1/teams/{team}/webhooks/{webhook}/ping")
    got = receiver.wait_for(lambda g: any(e["id"] == ping["event_id"] for e in events_of(g)))
    # /metrics counts the two refused attempts and the delivery (the counter moves once the attempt's
    # record is written, a moment after the receiver answered).
    deadline = time.monotonic() + 10
    while True:
        after = scrape(server.endpoint)
        if delta(before, after, "depot_webhook_attempts_total", result="delivered") >= 1 or \
                time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert delta(before, after, "depot_webhook_attempts_total", result="receiver_error") == 2
    assert delta(before, after, "depot_webhook_attempts_total", result="delivered") >= 1
    assert delta(before, after, "depot_webhook_attempt_duration_seconds_count") >= 3
    assert after.value("depot_webhook_queue_depth") >= 0
    check_signed(got, hook["secret"])
    with receiver.lock:
        attempts = [r for r in receiver.requests if json.loads(r["body"])["id"] == ping["event_id"]]
    assert [a["failed"] for a in attempts] == [True, True, False]
    # Retries back off: the gaps grow (base 1 s, +-50 % jitter).
    assert attempts[1]["at"] - attempts[0]["at"] >= 0.4
    items = team_call(server, team, "GET", f"/webhooks/{hook['id']}/deliveries").json()["items"]
    delivery = next(d for d in items if d["event_id"] == ping["event_id"])
    detail = team_call(server, team, "GET", f"/webhooks/{hook['id']}/deliveries/{delivery['id']}").json()
    assert [a["status"] for a in detail["attempt_log"]] == [500, 500, 200]
    assert detail["attempt_log"][0]["response_excerpt"] == "boom"
    assert detail["attempt_log"][0]["error"] == "the receiver answered HTTP 500"
    # The subscription's failure count went back to 0 with the success.
    r = team_call(server, team, "GET", f"/webhooks/{hook['id']}")
    assert validate(r, "GET", "/api/v1/teams/{team}/webhooks/{webhook}")["consecutive_failures"] == 0

    # Manual redelivery: the same event (same webhook-id) once more.
    before = len(receiver.accepted())
    r = team_call(server, team, "POST", f"/webhooks/{hook['id']}/deliveries/{delivery['id']}/redeliver")
    assert validate(r, "POST", "/api/v1/teams/{team}/webhooks/{webhook}/deliveries/{delivery}/redeliver")[
        "state"] in ("pending", "delivering", "delivered")
    got = receiver.wait_for(lambda g: len(g) > before)
    assert got[-1]["json"]["id"] == ping["event_id"]


def test_2xx_with_a_long_body_is_one_delivery(hooks_depot, receiver):
    """A receiver answering 200 with a body over 64 KiB (Content-Length set) has accepted the event: one
    attempt, delivered, no retry (no duplicate delivery), no failure counted; the excerpt is its first
    1 KiB."""
    server = hooks_depot
    team = make_team(server)
    hook = subscribe(server, team, receiver.url)
    receiver.ok_body = b"x" * (200 * 1024)
    r = team_call(server, team, "POST", f"/webhooks/{hook['id']}/ping")
    ping = validate(r, "POST", "/api/v1/teams/{team}/webhooks/{webhook}/ping")
    receiver.wait_for(lambda g: any(e["id"] == ping["event_id"] for e in events_of(g)))
    deadline = time.monotonic() + 10
    while True:
        items = team_call(server, team, "GET", f"/webhooks/{hook['id']}/deliveries").json()["items"]
        delivery = next(d for d in items if d["event_id"] == ping["event_id"])
        if delivery["state"] != "delivering" and delivery["state"] != "pending" or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    time.sleep(2.5)  # a failed attempt would be retried within the retry base (1 s) plus jitter
    with receiver.lock:
        attempts = [q for q in receiver.requests if json.loads(q["body"])["id"] == ping["event_id"]]
    assert len(attempts) == 1, "the event was delivered more than once"
    detail = team_call(server, team, "GET", f"/webhooks/{hook['id']}/deliveries/{delivery['id']}").json()
    assert detail["state"] == "delivered", detail
    assert [a["status"] for a in detail["attempt_log"]] == [200]
    assert detail["attempt_log"][0]["error"] is None, detail["attempt_log"]
    assert detail["attempt_log"][0]["response_excerpt"] == "x" * 1024
    r = team_call(server, team, "GET", f"/webhooks/{hook['id']}")
    assert validate(r, "GET", "/api/v1/teams/{team}/webhooks/{webhook}")["consecutive_failures"] == 0


def test_failing_receiver_disables_subscription_and_tells_team(depot, private_depot, receiver):
    server = private_depot(*FAST, "--webhook-failure-limit", "3")
    team = make_team(server)
    watcher = Receiver()
    try:
        subscribe(server, team, watcher.url, event_types=["webhook.disabled"])
        hook = subscribe(server, team, receiver.url)
        receiver.fail_next = 100
        assert team_call(server, team, "POST", f"/webhooks/{hook['id']}/ping").status_code == 202
        got = watcher.wait_for(lambda g: len(g) >= 1)
        note = got[0]["json"]
        assert note["type"] == "webhook.disabled"
        assert (note["data"]["webhook"], note["data"]["consecutive_failures"]) == (hook["id"], 3)
        r = team_call(server, team, "GET", f"/webhooks/{hook['id']}")
        state = validate(r, "GET", "/api/v1/teams/{team}/webhooks/{webhook}")
        assert not state["enabled"] and "3 delivery attempts failed" in state["disabled_reason"]
        # A disabled subscription cannot be pinged; re-enabled, the waiting delivery goes out.
        assert_problem(team_call(server, team, "POST", f"/webhooks/{hook['id']}/ping"), 409, "conflict")
        receiver.fail_next = 0
        r = team_call(server, team, "PATCH", f"/webhooks/{hook['id']}", body={"enabled": True})
        assert validate(r, "PATCH", "/api/v1/teams/{team}/webhooks/{webhook}")["enabled"]
        receiver.wait_for(lambda g: any(e["type"] == "webhook.ping" for e in events_of(g)))
    finally:
        watcher.close()


def test_secret_rotation_signs_with_both_secrets(hooks_depot, receiver):
    server = hooks_depot
    team = make_team(server)
    hook = subscribe(server, team, receiver.url)
    r = team_call(server, team, "POST", f"/webhooks/{hook['id']}/rotate", body={"overlap_seconds": 600})
    rotated = validate(r, "POST", "/api/v1/teams/{team}/webhooks/{webhook}/rotate")
    assert rotated["secret"] != hook["secret"] and rotated["previous_secret_expires_at"] is not None
    assert team_call(server, team, "POST", f"/webhooks/{hook['id']}/ping").status_code == 202
    got = receiver.wait_for(lambda g: len(g) >= 1)
    assert verify_signature(rotated["secret"], got[0]["headers"], got[0]["body"]) == [True, False]
    assert verify_signature(hook["secret"], got[0]["headers"], got[0]["body"]) == [False, True]
    # Without overlap the old secret stops signing at once.
    r = team_call(server, team, "POST", f"/webhooks/{hook['id']}/rotate", body={"overlap_seconds": 0})
    newest = validate(r, "POST", "/api/v1/teams/{team}/webhooks/{webhook}/rotate")
    assert newest["previous_secret_expires_at"] is None
    assert team_call(server, team, "POST", f"/webhooks/{hook['id']}/ping").status_code == 202
    got = receiver.wait_for(lambda g: len(g) >= 2)
    assert verify_signature(newest["secret"], got[1]["headers"], got[1]["body"]) == [True]


def test_object_events_only_for_opted_in_buckets(hooks_depot, receiver):
    server = hooks_depot
    team = make_team(server)
    s3 = server.client("alice")
    quiet, loud = unique_bucket_name("quiet"), unique_bucket_name("loud")
    for b in (quiet, loud):
        s3.create_bucket(Bucket=b)
    subscribe(server, team, receiver.url, bucket=loud, event_types=["object.created", "object.deleted"])
    subscribe(server, team, receiver.url, bucket=quiet, event_types=["object.created", "object.deleted"])
    r = call(server, "PATCH", f"/api/v1/buckets/{loud}", token=team["tokens"]["alice"],
             body={"object_events": True})
    assert validate(r, "PATCH", "/api/v1/buckets/{bucket}")["object_events"] is True
    s3.put_object(Bucket=quiet, Key="k", Body=b"q")
    s3.put_object(Bucket=loud, Key="k", Body=b"x" * 10)
    s3.put_object(Bucket=loud, Key="k", Body=b"y" * 20)
    s3.delete_object(Bucket=loud, Key="k")
    got = receiver.wait_for(lambda g: len(g) >= 3)
    time.sleep(0.5)
    events = events_of(receiver.accepted())
    assert [(e["type"], e["data"]["bucket"], e["data"]["key"], e["data"].get("size")) for e in events] == [
        ("object.created", loud, "k", 10), ("object.created", loud, "k", 20), ("object.deleted", loud, "k", None)]
    # A bad flag value changes nothing.
    r = call(server, "PATCH", f"/api/v1/buckets/{loud}", token=team["tokens"]["alice"],
             body={"dedup": False, "object_events": "yes"})
    assert_problem(r, 400, "invalid-argument")
    r = call(server, "GET", f"/api/v1/buckets/{loud}", token=team["tokens"]["alice"])
    assert (r.json()["dedup"], r.json()["object_events"]) == (True, True)


def test_bad_subscriptions_get_precise_problems_and_change_nothing(depot):
    """On an installation that does not allow private targets (the shared depot)."""
    team = make_team(depot)
    other_bucket = unique_bucket_name("bobs")
    depot.client("bob").create_bucket(Bucket=other_bucket)
    before = int(depot.db.scalar("SELECT count(*) FROM webhook_subscriptions"))
    cases = [
        ({"url": "ftp://example.com/x"}, "http or https"),
        ({"url": "not a url"}, "not an absolute URL"),
        ({"url": "http://user:pw@example.com/"}, "credentials"),
        ({"url": "http://127.0.0.1:9/hook"}, "loopback, private"),
        ({"url": "http://10.1.2.3/hook"}, "loopback, private"),
        ({"url": "http://[::1]:8080/hook"}, "loopback, private"),
        ({"url": "http://169.254.169.254/latest/meta-data"}, "loopback, private"),
        ({}, "'url' is required"),
        ({"url": "https://example.com/", "event_types": ["version.approved", "nope"]}, "unknown event type 'nope'"),
        ({"url": "https://example.com/", "event_types": ["model.created", "model.created"]}, "twice"),
        ({"url": "https://example.com/", "event_types": "model.created"}, "must be an array"),
        ({"url": "https://example.com/", "event_types": ["object.created"]}, "set 'bucket'"),
        ({"url": "https://example.com/", "model": "no-such-model"}, "names no model"),
        # (alice is an installation admin and may filter on bob's bucket: a bucket nobody has is refused)
        ({"url": "https://example.com/", "bucket": other_bucket + "-absent"}, "names no bucket of yours"),
        ({"url": "https://example.com/", "colour": "red"}, "Unknown field 'colour'"),
    ]
    for body, detail in cases:
        r = team_call(depot, team, "POST", "/webhooks", body=body)
        problem = assert_problem(r, 400, "invalid-argument")
        assert detail in problem["detail"], (body, problem)
    r = team_call(depot, team, "POST", "/webhooks", raw=b"{not json", headers={"Content-Type": "application/json"})
    assert_problem(r, 400, "invalid-argument")
    assert int(depot.db.scalar("SELECT count(*) FROM webhook_subscriptions")) == before
    r = team_call(depot, team, "GET", "/webhooks")
    assert validate(r, "GET", "/api/v1/teams/{team}/webhooks")["items"] == []
    # Unknown ids and malformed ids are 404.
    assert_problem(team_call(depot, team, "GET", "/webhooks/999999"), 404, "not-found")
    assert_problem(team_call(depot, team, "GET", "/webhooks/abc"), 404, "not-found")


def test_allow_cidr_admits_its_networks_only(depot, private_depot, receiver):
    """--webhook-allow-cidr opens the listed networks (a cluster's) and nothing else: the installation's other
    private and loopback addresses stay refused, when saving and when delivering."""
    server = private_depot("--webhook-allow-cidr", " 10.42.0.0/16, 127.0.0.0/8 ,fd00:42::/48",
                           *FAST[2:])
    team = make_team(server)
    hook = subscribe(server, team, receiver.url)  # 127.0.0.1: inside 127.0.0.0/8
    r = team_call(server, team, "POST", f"/webhooks/{hook['id']}/ping")
    ping = validate(r, "POST", "/api/v1/teams/{team}/webhooks/{webhook}/ping")
    receiver.wait_for(lambda g: any(e["id"] == ping["event_id"] for e in events_of(g)), what="the ping")
    before = int(server.db.scalar("SELECT count(*) FROM webhook_subscriptions"))
    for url in ("http://10.43.0.1/hook", "http://192.168.1.1/hook", "http://[::1]:8080/hook",
                "http://[fd00:43::1]/hook", "http://169.254.169.254/latest/meta-data"):
        problem = assert_problem(team_call(server, team, "POST", "/webhooks", body={"url": url}), 400,
                                 "invalid-argument")
        assert "loopback, private" in problem["detail"], (url, problem)
    assert int(server.db.scalar("SELECT count(*) FROM webhook_subscriptions")) == before
    for url in ("http://10.42.255.254/hook", "http://[fd00:42:0:1::5]/hook"):
        r = team_call(server, team, "POST", "/webhooks", body={"url": url})
        assert r.status_code == 201, (url, r.text)


@pytest.mark.parametrize("value", ["10.0.0.0", "10.0.0.1/8", "10.0.0.0/33", "fd00::/129", "nonsense/8",
                                   "10.0.0.0/8,", "10.0.0.0/x"])
def test_bad_allow_cidr_stops_depotd_with_the_flag_named(depot, value, tmp_path):
    proc = run([str(depot.bin_dir / "depotd"), "--webhook-allow-cidr", value],
               env=depot.server_env(), check=False, timeout=60)
    assert proc.returncode == 2, (value, proc.stderr)
    assert "--webhook-allow-cidr" in proc.stderr, proc.stderr


def test_other_teams_cannot_see_or_manage_subscriptions(hooks_depot, receiver):
    server = hooks_depot
    for user in ("carol", "erin"):
        if user not in server.users:
            server.add_user(user, user.title())
    team = make_team(server, extra=("carol", "erin"))
    # carol: a reader of the team; erin: admin of another team; bob: maintainer (not admin).
    assert team_call(server, team, "PUT", "/members/carol", body={"role": "reader"}).status_code == 200
    other = "other-" + secrets.token_hex(3)
    assert call(server, "POST", "/api/v1/teams", token=team["tokens"]["alice"], body={"name": other}).status_code == 201
    assert call(server, "PUT", f"/api/v1/teams/{other}/members/erin", token=team["tokens"]["alice"],
                body={"role": "admin"}).status_code == 200
    hook = subscribe(server, team, receiver.url, description="mine")
    paths = [("GET", "/webhooks", None), ("POST", "/webhooks", {"url": receiver.url}),
             ("GET", f"/webhooks/{hook['id']}", None), ("PATCH", f"/webhooks/{hook['id']}", {"enabled": False}),
             ("DELETE", f"/webhooks/{hook['id']}", None), ("POST", f"/webhooks/{hook['id']}/rotate", None),
             ("POST", f"/webhooks/{hook['id']}/ping", None), ("GET", f"/webhooks/{hook['id']}/deliveries", None)]
    for method, path, body in paths:
        assert_problem(team_call(server, team, method, path, user="erin", body=body), 404, "not-found")
        assert_problem(team_call(server, team, method, path, user="carol", body=body), 403, "access-denied")
        assert_problem(team_call(server, team, method, path, user="bob", body=body), 403, "access-denied")
    # Nothing changed: still enabled, same secret signs, one subscription.
    r = team_call(server, team, "GET", "/webhooks")
    items = validate(r, "GET", "/api/v1/teams/{team}/webhooks")["items"]
    assert [(w["id"], w["enabled"], w["description"]) for w in items] == [(hook["id"], True, "mine")]
    assert team_call(server, team, "POST", f"/webhooks/{hook['id']}/ping").status_code == 202
    got = receiver.wait_for(lambda g: len(g) >= 1)
    check_signed(got, hook["secret"])
    # erin's own team sees none of it.
    r = call(server, "GET", f"/api/v1/teams/{other}/webhooks", token=team["tokens"]["erin"])
    assert validate(r, "GET", "/api/v1/teams/{team}/webhooks")["items"] == []
    assert_problem(call(server, "GET", f"/api/v1/teams/{other}/webhooks/{hook['id']}",
                        token=team["tokens"]["erin"]), 404, "not-found")


def test_depotctl_webhook_commands(hooks_depot, receiver):
    server = hooks_depot
    team = make_team(server)
    env = {"DEPOT_ENDPOINT": server.endpoint, "DEPOT_TOKEN": team["tokens"]["alice"]}
    from depot_harness import clean_env, run
    ctl = lambda *a, check=True: run([str(server.bin_dir / "depotctl"), *a], env=clean_env(env), check=check)
    created = json.loads(ctl("webhook", "create", team["name"], receiver.url, "--events",
                             "webhook.ping,model.created", "--json").stdout)
    assert created["event_types"] == ["webhook.ping", "model.created"] and created["secret"].startswith("whsec_")
    wid = str(created["id"])
    listed = json.loads(ctl("webhook", "list", team["name"], "--json").stdout)
    assert [w["id"] for w in listed] == [created["id"]]
    assert "queued webhook.ping" in ctl("webhook", "ping", team["name"], wid).stdout
    receiver.wait_for(lambda g: len(g) >= 1)
    deliveries = json.loads(ctl("webhook", "deliveries", team["name"], wid, "--json").stdout)
    assert deliveries[0]["event_type"] == "webhook.ping"
    shown = ctl("webhook", "deliveries", team["name"], wid, str(deliveries[0]["id"])).stdout
    assert "attempt 1" in shown
    assert "queued delivery" in ctl("webhook", "redeliver", team["name"], wid, str(deliveries[0]["id"])).stdout
    rotated = json.loads(ctl("webhook", "rotate", team["name"], wid, "--overlap", "0", "--json").stdout)
    assert rotated["secret"] != created["secret"]
    assert "DISABLED" in ctl("webhook", "disable", team["name"], wid).stdout
    bad = ctl("webhook", "create", team["name"], "gopher://x", check=False)
    assert bad.returncode != 0 and "http or https" in bad.stderr
    ctl("webhook", "delete", team["name"], wid)
    assert json.loads(ctl("webhook", "list", team["name"], "--json").stdout) == []


def test_depotd_killed_between_commit_and_delivery_delivers_after_restart(depot, private_depot, receiver):
    server = private_depot(*FAST)
    team = make_team(server)
    hook = subscribe(server, team, receiver.url)
    # The receiver holds the first request: depotd is mid-attempt when it dies.
    receiver.hold = threading.Event()
    assert team_call(server, team, "POST", f"/webhooks/{hook['id']}/ping").status_code == 202
    deadline = time.monotonic() + 20
    while not receiver.requests and time.monotonic() < deadline:
        time.sleep(0.05)
    assert receiver.requests, "the first attempt never came"
    # A second event commits while the first is in flight (it waits behind nothing: pings are unordered, but
    # a model event of the same model would wait for the one before it).
    bucket, model = make_model(server, team, {"f": b"1"}, name="crashy")
    time.sleep(0.3)
    server.kill()
    receiver.hold.set()
    receiver.hold = None
    with receiver.lock:
        receiver.requests.clear()
    pending = int(server.db.scalar("SELECT count(*) FROM webhook_deliveries WHERE state <> 'delivered'"))
    assert pending >= 1
    server.start()
    got = receiver.wait_for(lambda g: {"webhook.ping", "model.created"} <= {e["type"] for e in events_of(g)},
                            timeout=40)
    check_signed(got, hook["secret"])
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and int(server.db.scalar(
            "SELECT count(*) FROM webhook_deliveries WHERE state <> 'delivered'")) != 0:
        time.sleep(0.1)
    assert int(server.db.scalar("SELECT count(*) FROM webhook_deliveries WHERE state <> 'delivered'")) == 0


def test_two_depotd_processes_never_double_deliver_an_attempt(depot, private_depot, receiver, tmp_path):
    first = private_depot(*FAST, "--webhook-concurrency", "4")
    second = first.sibling(tmp_path / "second")
    second.extra_args = list(FAST) + ["--webhook-concurrency", "4"]
    second.start()
    try:
        team = make_team(first)
        hook = subscribe(first, team, receiver.url)
        n = 60

        def ping(i):
            server = first if i % 2 else second
            r = call(server, "POST", f"/api/v1/teams/{team['name']}/webhooks/{hook['id']}/ping",
                     token=team["tokens"]["alice"])
            assert r.status_code == 202, r.text
            return r.json()["event_id"]

        with ThreadPoolExecutor(8) as pool:
            ids = set(pool.map(ping, range(n)))
        got = receiver.wait_for(lambda g: len(g) >= n, timeout=60)
        time.sleep(1.0)  # a double delivery would show up now
        got = receiver.accepted()
        seen = [r["json"]["id"] for r in got]
        assert sorted(seen) == sorted(ids), "an event was delivered more than once or not at all"
        rows = first.db.query("SELECT d.attempts, count(a.*), min(a.number), max(a.number) FROM "
                              "webhook_deliveries d JOIN webhook_attempts a ON a.delivery_id = d.id "
                              "GROUP BY d.id, d.attempts")
        assert len(rows) == n and all(r == ["1", "1", "1", "1"] for r in rows), rows
        instances = first.db.query("SELECT DISTINCT instance FROM webhook_attempts")
        assert len(instances) == 2, instances  # both dispatchers took part
    finally:
        second.stop()


def test_nobody_takes_the_id_of_a_teams_event_link_signer(depot):
    """An attacker's finding: the signer of a team's event links was looked up by its id,
    depot-events.<team>, and adopted whoever had it; an installation admin who created such an account
    (for anyone) made its owner a reader of that team's models at the team's first download link. The ids
    are depotd's own now: REST and depotctl (with and without a database) refuse them, nothing is made."""
    team = "evt-" + secrets.token_hex(3)
    admin = token_for(depot, "alice")["token"]
    users = depot.db.scalar("SELECT count(*) FROM users")
    problem = assert_problem(call(depot, "POST", "/api/v1/users", token=admin, body={"id": f"depot-events.{team}"}),
                             400, "invalid-argument")
    assert "depot-events." in problem["detail"], problem
    direct = depot.depotctl("user", "create", f"depot-events.{team}x", check=False, leak_check=False)
    assert direct.returncode != 0 and "depot-events." in direct.stderr, direct.stderr
    assert depot.db.scalar("SELECT count(*) FROM users") == users
    # An id that only contains the words is an ordinary one.
    r = call(depot, "POST", "/api/v1/users", token=admin, body={"id": f"not-depot-events.{team}"})
    assert r.status_code == 201, r.text


def test_no_team_takes_in_another_teams_event_link_signer(hooks_depot, receiver):
    """An attacker's finding: a team admin added depot-events.<other team> (the account whose key signs the
    other team's download links) to their own team as an admin. The signer then belonged to two teams and
    its links read both teams' models. Only depotd puts a signer into a team, and only its own: the
    membership PUT refuses the ids, for any team and any role, and changes nothing."""
    server = hooks_depot
    victim = make_team(server)
    subscribe(server, victim, receiver.url)
    make_model(server, victim, {"config.json": b"{}"}, name="signed")
    assert team_call(server, victim, "POST", "/models/signed/versions", body={}).status_code == 201
    receiver.wait_for(lambda g: any(e["type"] == "version.created" and e["data"]["files"] for e in events_of(g)))
    signer = f"depot-events.{victim['name']}"
    memberships = server.db.query(f"SELECT team_id, role FROM team_members WHERE user_id = '{signer}'")
    assert len(memberships) == 1, memberships  # the victim's reader, made by depotd

    attacker = make_team(server)
    for role in ("admin", "reader"):
        for team in (attacker, victim):
            problem = assert_problem(team_call(server, team, "PUT", f"/members/{signer}", body={"role": role}),
                                     400, "invalid-argument")
            assert "depot-events." in problem["detail"], problem
    # The fifth attack: the victim's own admin removed it (204), and nothing could add it back, so the team's
    # links failed for good. It stays.
    assert_problem(team_call(server, victim, "DELETE", f"/members/{signer}"), 400, "invalid-argument")
    assert server.db.query(f"SELECT team_id, role FROM team_members WHERE user_id = '{signer}'") == memberships


def team_with_three_admins(server) -> dict:
    """make_team's team with frank and gina as admins beside alice."""
    for user in ("frank", "gina"):
        if user not in server.users:
            server.add_user(user, user.title())
    team = make_team(server, extra=("frank", "gina"))
    for user in ("frank", "gina"):
        assert team_call(server, team, "PUT", f"/members/{user}", body={"role": "admin"}).status_code == 200
    return team


def test_only_the_buckets_owner_turns_a_stopped_bucket_subscription_back_on(hooks_depot, receiver):
    """The attacker's request (fourth attack): frank subscribed the team to his bucket's object events and left
    the team, which stopped the subscription; gina, another admin of the team, enabled it again (200) and the
    team's receiver went on getting the events of frank's bucket. Enabling a bucket-filtered subscription
    is, like pointing it elsewhere, for those who may see the bucket: 403 for gina, nothing changes."""
    server = hooks_depot
    team = team_with_three_admins(server)
    bucket = unique_bucket_name("franks")
    server.client("frank").create_bucket(Bucket=bucket)
    assert call(server, "PATCH", f"/api/v1/buckets/{bucket}", token=team["tokens"]["frank"],
                body={"object_events": True}).status_code == 200
    hook = team_call(server, team, "POST", "/webhooks", user="frank",
                     body={"url": receiver.url, "bucket": bucket, "event_types": ["object.created"]}).json()["id"]
    assert team_call(server, team, "DELETE", "/members/frank").status_code == 204
    r = team_call(server, team, "PATCH", f"/webhooks/{hook}", user="gina", body={"enabled": True})
    assert_problem(r, 403, "access-denied")
    r = team_call(server, team, "GET", f"/webhooks/{hook}", user="gina")
    assert r.status_code == 200 and r.json()["enabled"] is False, r.text
    # Disabling and describing stay any admin's.
    r = team_call(server, team, "PATCH", f"/webhooks/{hook}", user="gina", body={"enabled": False, "description": "x"})
    assert r.status_code == 200, r.text
    with receiver.lock:
        receiver.requests.clear()
    server.client("frank").put_object(Bucket=bucket, Key="after", Body=b"x")
    time.sleep(1.0)
    assert [e for e in events_of(receiver.accepted()) if e["data"].get("bucket") == bucket] == []


def test_a_team_admin_who_leaves_or_is_demoted_stops_their_subscriptions(hooks_depot, receiver):
    """An attacker's finding: a team admin subscribed their own receiver to version.created, was removed from
    the team, and kept receiving every new version's presigned download links (no credentials needed).
    What a team admin set up stops when they stop being its admin: demoted or removed, their subscriptions
    are disabled (with the reason, in the membership change's audit row); an installation admin's and the
    remaining admins' stay; another admin may enable them again."""
    server = hooks_depot
    team = team_with_three_admins(server)
    franks = [team_call(server, team, "POST", "/webhooks", user="frank",
                        body={"url": receiver.url, "description": f"frank {i}"}).json()["id"] for i in (1, 2)]
    ginas = team_call(server, team, "POST", "/webhooks", user="gina", body={"url": receiver.url}).json()["id"]
    alices = subscribe(server, team, receiver.url)["id"]

    def states():
        items = validate(team_call(server, team, "GET", "/webhooks"), "GET", "/api/v1/teams/{team}/webhooks")["items"]
        return {w["id"]: (w["enabled"], w["disabled_reason"]) for w in items}

    # Demoted to maintainer: frank's two stop; nobody else's.
    assert team_call(server, team, "PUT", "/members/frank", body={"role": "maintainer"}).status_code == 200
    reason = "its creator is no longer an admin of the team"
    assert states() == {franks[0]: (False, reason), franks[1]: (False, reason), ginas: (True, None),
                        alices: (True, None)}
    row = server.db.query("SELECT details::text FROM audit_log WHERE action = 'team.member.set' AND resource = "
                          f"'{team['name']}/frank' ORDER BY id DESC LIMIT 1")[0][0]
    assert json.loads(row) == {"role": "maintainer", "webhooks_disabled": franks}, row
    # Removed: gina's stops. The installation admin's never does (they manage every team's).
    assert team_call(server, team, "DELETE", "/members/gina").status_code == 204
    assert states()[ginas] == (False, reason)
    assert team_call(server, team, "DELETE", "/members/alice").status_code == 204
    assert states()[alices] == (True, None)
    # An admin may enable one again, knowingly.
    r = team_call(server, team, "PATCH", f"/webhooks/{franks[0]}", body={"enabled": True})
    assert r.status_code == 200 and r.json()["enabled"] is True, r.text
    # The second attacker's way around: an admin re-points someone else's subscription to their own
    # receiver, then leaves. Whoever chose where the events go answers for the subscription.
    assert team_call(server, team, "PUT", "/members/frank", body={"role": "admin"}).status_code == 200
    r = team_call(server, team, "PATCH", f"/webhooks/{alices}", user="frank", body={"url": receiver.url + "/mine"})
    assert r.status_code == 200 and r.json()["created_by"] == "frank", r.text
    assert team_call(server, team, "DELETE", "/members/frank").status_code == 204
    assert states()[alices] == (False, reason)


def test_a_bucket_filter_obeys_the_buckets_notification_policy(hooks_depot, receiver):
    """The attacker's request (second attack on bf60ad2, #13): alice's bucket policy denies everyone
    s3:PutBucketNotification, so S3 cannot change where its events go; a team webhook naming the bucket as
    its filter was created (201) all the same, and redirected that bucket's events. A bucket filter is the
    bucket's notification configuration: 403, no subscription; without the Deny it is created."""
    server = hooks_depot
    team = make_team(server)
    bucket = unique_bucket_name("hooks-pol")
    s3 = server.client("alice")
    s3.create_bucket(Bucket=bucket)
    s3.put_bucket_policy(Bucket=bucket, Policy=json.dumps({"Version": "2012-10-17", "Statement": [{
        "Effect": "Deny", "Principal": "*", "Action": ["s3:PutBucketNotification", "s3:GetBucketNotification"],
        "Resource": f"arn:aws:s3:::{bucket}"}]}))
    before = int(server.db.query("SELECT count(*) FROM webhook_subscriptions")[0][0])
    r = team_call(server, team, "POST", "/webhooks",
                  body={"url": receiver.url, "bucket": bucket, "event_types": ["object.created"]})
    assert_problem(r, 403, "access-denied")
    hook = subscribe(server, team, receiver.url, event_types=["version.created"])
    r = team_call(server, team, "PATCH", f"/webhooks/{hook['id']}", body={"bucket": bucket})
    assert_problem(r, 403, "access-denied")
    assert int(server.db.query("SELECT count(*) FROM webhook_subscriptions")[0][0]) == before + 1
    assert server.db.query(f"SELECT count(*) FROM webhook_subscriptions WHERE id = {int(hook['id'])} "
                           "AND bucket_id IS NULL")[0][0] in (1, "1")
    s3.delete_bucket_policy(Bucket=bucket)
    r = team_call(server, team, "POST", "/webhooks",
                  body={"url": receiver.url, "bucket": bucket, "event_types": ["object.created"]})
    assert r.status_code == 201, r.text
