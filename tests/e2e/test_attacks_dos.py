"""Adversarial tests of issue 22: denial of service before authentication (item 8), the unauthenticated
/readyz probe (item 12), and webhook secrets and bucket filters (item 11). Each test writes the attacker's
requests and checks the refusal and that nothing changed.

The shared harness turns the per-address limits off (every client of the suite is on loopback); the
depotd processes here set them.
"""

from __future__ import annotations

import base64
import http.client
import os
import secrets
import socket
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
import requests
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from depot_harness import Depot, unique_bucket_name
from rest import assert_problem, call, token_for
from test_metrics import Scrape, delta, parse_exposition, scrape
from test_webhooks import FAST, Receiver, check_signed, subscribe, verify_signature

# A second loopback address: clients that are not "the attacker" connect from here (Linux routes all of
# 127.0.0.0/8 to lo).
OTHER_ADDRESS = "127.0.0.2"


def get_from(server: Depot, source: str, path: str) -> int:
    """GET `path` over a connection made from the local address `source`; the status."""
    conn = http.client.HTTPConnection(server.host, server.port, timeout=10, source_address=(source, 0))
    try:
        conn.request("GET", path)
        return conn.getresponse().status
    finally:
        conn.close()


def scrape_from(server: Depot, source: str) -> Scrape:
    """/metrics over a connection made from the local address `source`."""
    conn = http.client.HTTPConnection(server.host, server.port, timeout=10, source_address=(source, 0))
    try:
        conn.request("GET", "/metrics")
        r = conn.getresponse()
        assert r.status == 200
        return Scrape(parse_exposition(r.read().decode()))
    finally:
        conn.close()


def served_from(server: Depot, source: str) -> bool:
    """Whether GET /healthz from `source` is answered (a connection closed at once raises)."""
    try:
        return get_from(server, source, "/healthz") == 200
    except (ConnectionError, http.client.HTTPException):
        return False


def closed_by_server(sock: socket.socket, timeout: float = 5) -> bool:
    """Whether the server closes `sock` (EOF or reset) within `timeout` without a byte sent to it."""
    sock.settimeout(timeout)
    try:
        return sock.recv(1) == b""
    except ConnectionResetError:
        return True
    except socket.timeout:
        return False


def wait_for(predicate, timeout: float = 10, what: str = "condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"no {what} within {timeout} s")


# ---------------------------------------------------------------------------------------------- item 8

def test_one_address_cannot_hold_every_connection(private_depot):
    """Issue 22 item 8: one client address opening connections up to --max-connections locked every other
    client out. With --max-connections-per-address its extra connections are closed at once, other
    addresses are still served, and the address is served again once one of its connections closes."""
    server = private_depot("--max-connections-per-address", "4", "--max-connections", "64")
    before = scrape_from(server, OTHER_ADDRESS)
    held = []
    try:
        for _ in range(4):
            s = socket.create_connection((server.host, server.port), timeout=10)
            held.append(s)
        # Accepted, counted: the connections are up (a request on one of them would be served).
        assert not closed_by_server(held[0], timeout=0.5)
        extra = [socket.create_connection((server.host, server.port), timeout=10) for _ in range(3)]
        for s in extra:
            assert closed_by_server(s), "a connection beyond the per-address limit was kept open"
            s.close()
        # Another address is served meanwhile.
        assert get_from(server, OTHER_ADDRESS, "/healthz") == 200
        after = scrape_from(server, OTHER_ADDRESS)
        assert delta(before, after, "depot_connections_refused_total", reason="per_address") == 3
        assert delta(before, after, "depot_connections_refused_total", reason="max_connections") == 0
        # One closes: the address gets a slot back.
        held.pop().close()
        assert wait_for(lambda: served_from(server, "127.0.0.1"), what="a slot freed")
    finally:
        for s in held:
            s.close()


def bad_signature(server: Depot, key: str | None = None) -> requests.Response:
    """ListBuckets signed with a wrong secret (for `key`, or alice's key)."""
    return server.request("GET", "/", access_key=key, secret="not-the-secret-" + secrets.token_hex(8))


def test_failed_authentications_start_a_cool_down_that_costs_no_lookup(private_depot):
    """Issue 22 item 8: failed authentications were not limited per client address: a client could guess
    secrets, or flood unknown access key ids that each cost a PostgreSQL query, without end. After
    --auth-failure-limit failures, every request from the address (a good one too) answers 503 SlowDown
    (REST: 429) without looking up any key, until the cool-down is over."""
    server = private_depot("--auth-failure-limit", "5", "--auth-failure-window", "60",
                           "--auth-failure-cooldown", "4")
    bucket = unique_bucket_name("cool")
    server.client("alice").create_bucket(Bucket=bucket)
    token = token_for(server, "alice")["token"]
    for _ in range(5):
        r = bad_signature(server)
        assert r.status_code == 403 and b"SignatureDoesNotMatch" in r.content, r.text
    before = scrape(server.endpoint)
    # Refused before authentication: unknown key ids are not even looked up.
    unknown = [f"DKUNKNOWN{secrets.token_hex(6).upper()}" for _ in range(3)]
    for key in unknown:
        r = bad_signature(server, key)
        assert r.status_code == 503 and b"<Code>SlowDown</Code>" in r.content, r.text
    # A correctly signed request from the address waits too, S3 and REST alike.
    r = server.request("GET", f"/{bucket}?list-type=2")
    assert r.status_code == 503 and b"<Code>SlowDown</Code>" in r.content, r.text
    r = call(server, "GET", "/api/v1/whoami", token=token)
    assert_problem(r, 429, "too-many-auth-failures")
    assert 1 <= int(r.headers["Retry-After"]) <= 4
    after = scrape(server.endpoint)
    assert delta(before, after, "depot_auth_failure_limited_requests_total") == 5
    for result in ("hit", "miss", "negative_hit"):
        assert delta(before, after, "depot_lookup_cache_lookups_total", kind="key", result=result) == 0, result
    # Other addresses are not affected.
    conn = http.client.HTTPConnection(server.host, server.port, timeout=10, source_address=(OTHER_ADDRESS, 0))
    conn.request("GET", "/api/v1/whoami", headers={"Authorization": f"Bearer {token}"})
    assert conn.getresponse().status == 200
    conn.close()
    time.sleep(4.2)
    assert server.request("GET", f"/{bucket}?list-type=2").status_code == 200
    assert call(server, "GET", "/api/v1/whoami", token=token).status_code == 200


def test_bad_api_tokens_count_as_failed_authentications(private_depot):
    """Issue 22 item 8: guessing API tokens on the REST API is limited like guessing S3 secrets."""
    server = private_depot("--auth-failure-limit", "3", "--auth-failure-cooldown", "30")
    token = token_for(server, "alice")["token"]
    for _ in range(3):
        r = call(server, "GET", "/api/v1/whoami", token="dpt_" + secrets.token_hex(16))
        assert r.status_code == 401, r.text
    r = call(server, "GET", "/api/v1/whoami", token=token)
    assert_problem(r, 429, "too-many-auth-failures")


def test_bad_hub_tokens_count_as_failed_authentications(private_depot):
    """Issue 34 item 11: the Hub endpoint was outside the auth-failure limit: 25 bad tokens, all 401, none
    counted, and during an address's cool-down Hub requests still looked tokens up. Now a bad Hub token counts
    like a bad REST token or S3 signature, and a cooling-down address is answered 429 (Hub-shaped) before its
    token is looked up, while S3 answers 503 and REST 429."""
    server = private_depot("--auth-failure-limit", "3", "--auth-failure-cooldown", "30")
    bucket = unique_bucket_name("hfcool")
    server.client("alice").create_bucket(Bucket=bucket)
    token = token_for(server, "alice")["token"]
    before = scrape(server.endpoint)
    for _ in range(3):
        r = requests.get(server.endpoint + "/api/models/team/model",
                         headers={"Authorization": "Bearer hf_dpt_" + secrets.token_hex(16)}, timeout=10)
        assert r.status_code == 401, r.text
    # The address now cools down on every surface, a good token included.
    r = requests.get(server.endpoint + "/api/models/team/model", headers={"Authorization": f"Bearer hf_{token}"},
                     timeout=10)
    assert r.status_code == 429 and 1 <= int(r.headers["Retry-After"]) <= 30, r.text
    assert "Too many failed authentications" in r.json()["error"]
    r = requests.head(server.endpoint + "/team/model/resolve/main/config.json",
                      headers={"Authorization": "Bearer hf_dpt_" + secrets.token_hex(16)}, timeout=10)
    assert r.status_code == 429
    r = server.request("GET", f"/{bucket}?list-type=2")
    assert r.status_code == 503 and b"<Code>SlowDown</Code>" in r.content, r.text
    assert_problem(call(server, "GET", "/api/v1/whoami", token=token), 429, "too-many-auth-failures")
    # Each refused before any lookup (the limiter's count).
    assert delta(before, scrape(server.endpoint), "depot_auth_failure_limited_requests_total") == 4


def test_unknown_access_keys_are_answered_from_memory_until_created(private_depot):
    """Issue 22 item 8: every request with an unknown access key id cost a PostgreSQL query. Now an unknown
    id is remembered briefly (negative_hit), and a key created later with that id by another process
    (depotctl) is usable at once: the insert's notice drops the memory."""
    server = private_depot()
    # The cache (negative entries too) is used only while its LISTEN connection is up.
    wait_for(lambda: scrape(server.endpoint).value("depot_lookup_cache_listening") == 1, what="LISTEN up")
    key = "DKCHOSEN" + secrets.token_hex(6).upper()
    secret = secrets.token_urlsafe(30)
    before = scrape(server.endpoint)
    remembered_at = time.monotonic()
    for _ in range(4):
        r = server.request("GET", "/", access_key=key, secret=secret)
        assert r.status_code == 403 and b"InvalidAccessKeyId" in r.content, r.text
    after = scrape(server.endpoint)
    assert delta(before, after, "depot_lookup_cache_lookups_total", kind="key", result="miss") == 1
    assert delta(before, after, "depot_lookup_cache_lookups_total", kind="key", result="negative_hit") == 3
    server.depotctl("key", "create", "bob", "--access-key", key, "--secret", secret)
    # Well inside the 5 seconds an unknown id is remembered: only the insert's notice can make it visible.
    wait_for(lambda: server.request("GET", "/", access_key=key, secret=secret).status_code == 200, timeout=2,
             what="the new key accepted")
    assert time.monotonic() - remembered_at < 4.5, "too slow to tell the notice from the expiry"


# ---------------------------------------------------------------------------------------------- item 12

def test_concurrent_readyz_calls_share_one_probe(private_depot):
    """Issue 22 item 12: every unauthenticated /readyz call ran a database query and a blob store call, so a
    client looping on it multiplied database work. Concurrent calls now share one probe, and a probe's
    result serves for a second."""
    server = private_depot()
    time.sleep(1.2)  # the start-up's probes (if any) are stale
    before = scrape(server.endpoint)

    def ready(_):
        return requests.get(server.endpoint + "/readyz", timeout=30).status_code

    started = time.monotonic()
    with ThreadPoolExecutor(max_workers=16) as pool:
        statuses = list(pool.map(ready, range(64)))
    elapsed = time.monotonic() - started
    assert statuses == [200] * 64
    after = scrape(server.endpoint)
    # One probe per second at most (a slow sanitizer build may take more than a second for the 64 calls).
    probes = delta(before, after, "depot_readiness_probes_total")
    assert 1 <= probes <= int(elapsed) + 1, (probes, elapsed)
    time.sleep(1.2)
    assert ready(0) == 200
    assert delta(after, scrape(server.endpoint), "depot_readiness_probes_total") == 1


# ---------------------------------------------------------------------------------------------- item 11

@pytest.fixture
def receiver():
    r = Receiver()
    yield r
    r.close()


def admin_team(server: Depot, admins: tuple[str, ...]) -> dict:
    tokens = {u: token_for(server, u)["token"] for u in admins}
    name = "dos-" + secrets.token_hex(3)
    first = admins[0]
    assert call(server, "POST", "/api/v1/teams", token=tokens[first], body={"name": name}).status_code == 201
    for user in admins:
        assert call(server, "PUT", f"/api/v1/teams/{name}/members/{user}", token=tokens[first],
                    body={"role": "admin"}).status_code == 200
    return {"name": name, "tokens": tokens}


def test_a_sealed_webhook_secret_moved_to_another_subscription_does_not_open(private_depot, receiver):
    """Issue 22 item 11: webhook secrets were sealed with one constant associated data, so someone able to
    write the database could copy a subscription's sealed secret onto another subscription and have its
    deliveries signed with it. Now each is bound to its subscription: the moved value does not open, and
    nothing goes out unsigned or signed with the other secret."""
    server = private_depot(*FAST)
    team = admin_team(server, ("alice",))
    first = subscribe(server, team, receiver.url, description="first")
    second = subscribe(server, team, receiver.url + "?second", description="second")
    server.db.execute(f"UPDATE webhook_subscriptions SET secret_sealed = (SELECT secret_sealed FROM "
                      f"webhook_subscriptions WHERE id = {first['id']}) WHERE id = {second['id']}")
    r = call(server, "POST", f"/api/v1/teams/{team['name']}/webhooks/{second['id']}/ping",
             token=team["tokens"]["alice"])
    assert r.status_code == 202, r.text
    wait_for(lambda: server.db.scalar(f"SELECT count(*) FROM webhook_attempts a JOIN webhook_deliveries d ON "
                                      f"d.id = a.delivery_id WHERE d.subscription_id = {second['id']}") not in
             (None, "0", 0), timeout=20, what="an attempt of the second subscription")
    error = server.db.scalar(f"SELECT coalesce(error, '<none>') FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = "
                             f"a.delivery_id WHERE d.subscription_id = {second['id']} ORDER BY a.number LIMIT 1")
    assert "does not open" in error, error
    assert receiver.accepted() == [], "a delivery went out with a secret that is not its subscription's"
    # The first subscription still signs with its own secret.
    r = call(server, "POST", f"/api/v1/teams/{team['name']}/webhooks/{first['id']}/ping",
             token=team["tokens"]["alice"])
    assert r.status_code == 202, r.text
    got = receiver.wait_for(lambda g: len(g) >= 1)
    assert all(req["path"] == "/hook" for req in got)
    check_signed(got, first["secret"])


def legacy_seal(key_hex: str, secret: str) -> bytes:
    """A secret sealed as before schema 0014 (common/secret_box.hpp format, constant associated data)."""
    nonce = os.urandom(12)
    sealed = AESGCM(bytes.fromhex(key_hex)).encrypt(nonce, secret.encode(), b"\x01depot-webhook-secret")
    return b"\x01" + nonce + sealed


def test_webhook_secrets_sealed_the_old_way_are_rebound_at_start_and_keep_signing(private_depot, receiver):
    """Issue 22 item 11: rows sealed before the fix keep working: depotd re-seals them bound to their
    subscription at its start, and deliveries are signed with the same secret as before."""
    server = private_depot(*FAST)
    team = admin_team(server, ("alice",))
    hook = subscribe(server, team, receiver.url)
    old_secret = "whsec_" + base64.b64encode(os.urandom(24)).decode()
    sealed = legacy_seal(server.key_file.read_text().strip(), old_secret)
    server.db.execute(f"UPDATE webhook_subscriptions SET secret_sealed = '\\x{sealed.hex()}'::bytea, "
                      f"secret_bound = false WHERE id = {hook['id']}")
    server.stop()
    server.start()
    assert server.db.scalar(f"SELECT secret_bound FROM webhook_subscriptions WHERE id = {hook['id']}") in (True, "t")
    assert bytes.fromhex(server.db.scalar(f"SELECT encode(secret_sealed, 'hex') FROM webhook_subscriptions "
                                          f"WHERE id = {hook['id']}")) != sealed
    r = call(server, "POST", f"/api/v1/teams/{team['name']}/webhooks/{hook['id']}/ping",
             token=team["tokens"]["alice"])
    assert r.status_code == 202, r.text
    got = receiver.wait_for(lambda g: len(g) >= 1)
    assert any(verify_signature(old_secret, got[0]["headers"], got[0]["body"]))


def test_patch_cannot_point_a_bucket_filter_at_someone_elses_bucket(private_depot, receiver):
    """Issue 22 item 11: a webhook's bucket filter was checked for ownership only at creation. Another admin
    of the team, who cannot read the bucket, could PATCH the subscription's url to a receiver of theirs and
    get the bucket's object events (keys, sizes, presigned links). Changing where a bucket-filtered
    subscription's events go now needs the bucket, and a new filter must name a bucket of the caller's."""
    server = private_depot(*FAST)
    server.add_user("dave", "Dave")
    server.add_user("erin", "Erin")
    # erin (a team admin, not an installation admin: those reach every bucket) owns the filtered bucket.
    team = admin_team(server, ("alice", "dave", "erin"))
    mine, bobs = unique_bucket_name("erins"), unique_bucket_name("bobs")
    server.client("erin").create_bucket(Bucket=mine)
    server.client("bob").create_bucket(Bucket=bobs)
    r = call(server, "POST", f"/api/v1/teams/{team['name']}/webhooks", token=team["tokens"]["erin"],
             body={"url": receiver.url, "bucket": mine, "event_types": ["object.created"]})
    assert r.status_code == 201, r.text
    hook = r.json()
    path = f"/api/v1/teams/{team['name']}/webhooks/{hook['id']}"
    row = f"SELECT url, bucket_id, event_types::text FROM webhook_subscriptions WHERE id = {hook['id']}"
    before = server.db.query(row)

    # dave (team admin, not the bucket's owner) redirects or widens the events: refused.
    for body in ({"url": receiver.url + "?dave"}, {"event_types": ["object.created", "object.deleted"]}):
        assert_problem(call(server, "PATCH", path, token=team["tokens"]["dave"], body=body), 403, "access-denied")
    # erin points the filter at bob's bucket: refused.
    problem = assert_problem(call(server, "PATCH", path, token=team["tokens"]["erin"], body={"bucket": bobs}),
                             400, "invalid-argument")
    assert "names no bucket of yours" in problem["detail"]
    assert server.db.query(row) == before
    # The attacker's request: dave rotated the secret (201 with the new whsec_...) and could then sign forged
    # object events of erin's bucket. The secret of a bucket-filtered subscription is the owner's.
    secrets_row = f"SELECT encode(secret_sealed, 'hex') FROM webhook_subscriptions WHERE id = {hook['id']}"
    secrets_before = server.db.scalar(secrets_row)
    r = call(server, "POST", path + "/rotate", token=team["tokens"]["dave"], body={})
    assert_problem(r, 403, "access-denied")
    assert "whsec_" not in r.text and server.db.scalar(secrets_row) == secrets_before
    r = call(server, "POST", path + "/rotate", token=team["tokens"]["erin"], body={})
    assert r.status_code == 200 and r.json()["secret"].startswith("whsec_"), r.text
    # What any admin may still do: disable it.
    r = call(server, "PATCH", path, token=team["tokens"]["dave"], body={"enabled": False})
    assert r.status_code == 200 and r.json()["enabled"] is False and r.json()["url"] == receiver.url
