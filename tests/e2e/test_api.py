"""The REST API (/api/v1): authentication (API tokens and SigV4), problem+json errors, upload avoidance
(content lookup and create-by-digest), per-bucket deduplication mode and usage figures, and agreement with
openapi/openapi.yaml (every served route documented, every documented route served, responses valid
against the documented schemas, and the document lint-clean with @redocly/cli).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import subprocess
import time

import pytest
import requests

from depot_harness import expect_error, run, unique_bucket_name
from rest import REDOCLY, SPEC, SPEC_PATH, assert_problem, call, sha, token_for, validate


@pytest.fixture(scope="module")
def tokens(depot):
    return {user: token_for(depot, user)["token"] for user in ("alice", "bob")}


# ---- the document

def test_every_served_route_is_documented_and_every_documented_route_is_served(depot):
    served = set(run([str(depot.bin_dir / "depotd"), "--print-api-routes"]).stdout.split("\n")) - {""}
    documented = {f"{method.upper()} {path}" for path, item in SPEC["paths"].items()
                  for method in item if method in ("get", "put", "post", "patch", "delete", "head")}
    assert served, "depotd printed no routes"
    assert served == documented, (f"served but undocumented: {sorted(served - documented)}; "
                                  f"documented but not served: {sorted(documented - served)}")


def test_the_openapi_document_passes_redocly_lint():
    if not REDOCLY.exists():
        pytest.fail(f"{REDOCLY} is missing: run scripts/js-deps (npm ci in tests/e2e/js)")
    proc = subprocess.run([str(REDOCLY), "lint", "--format", "stylish", str(SPEC_PATH)], capture_output=True,
                          text=True, timeout=300, env={**os.environ, "REDOCLY_TELEMETRY": "off",
                                                       "REDOCLY_SUPPRESS_UPDATE_NOTICE": "true"})
    assert proc.returncode == 0, proc.stdout + proc.stderr


# ---- authentication

def test_a_token_authenticates_and_whoami_names_the_caller(depot, tokens):
    r = call(depot, "GET", "/api/v1/whoami", token=tokens["alice"])
    body = validate(r, "GET", "/api/v1/whoami")
    assert body["user_id"] == "alice" and body["credential"].startswith("token:")


def test_a_sigv4_signed_request_authenticates(depot):
    url = depot.endpoint + "/api/v1/whoami"
    r = requests.get(url, headers=depot.sign("GET", url, user="bob"), timeout=30)
    body = validate(r, "GET", "/api/v1/whoami")
    assert body == {"user_id": "bob", "display_name": "Bob Builder", "credential": depot.user("bob").access_key}


def test_a_presigned_url_is_refused_by_the_rest_api(depot):
    """The attacker's request (fourth attack): alice presigned POST /api/v1/tokens; whoever held the URL sent
    it with bodies of their choosing, each a new token of alice's with any scope and lifetime. A presigned
    URL (a signature in the query, SigV4 or SigV2) authenticates nothing here: 403 before any lookup, and no
    token is made; the same credential signing the header works."""
    from botocore.auth import S3SigV4QueryAuth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials

    u = depot.user("alice")
    tokens = depot.db.scalar("SELECT count(*) FROM api_tokens")
    for method, path, body in (("POST", "/api/v1/tokens", b"{}"), ("GET", "/api/v1/whoami", b"")):
        req = AWSRequest(method=method, url=depot.endpoint + path)
        S3SigV4QueryAuth(Credentials(u.access_key, u.secret), "s3", depot.region, expires=300).add_auth(req)
        r = requests.request(method, req.url, data=body, headers={"Content-Type": "application/json"}, timeout=30)
        assert_problem(r, 403, "access-denied")
        assert "presigned" in r.json()["detail"]
    r = requests.get(depot.endpoint + f"/api/v1/whoami?AWSAccessKeyId={u.access_key}&Expires=9999999999"
                     "&Signature=x", timeout=30)
    assert_problem(r, 403, "access-denied")
    assert depot.db.scalar("SELECT count(*) FROM api_tokens") == tokens


def test_a_signed_change_signs_its_body(depot):
    """The attacker's request (fifth attack): POST /api/v1/tokens signed with UNSIGNED-PAYLOAD (or SigV2, which
    signs no body) was accepted with any body, so whoever saw the headers could resend them with a body of
    their own within the signature's 15 minutes. A signed change must name its body's SHA-256: 403, no
    token; the same request with the hash signed is 201."""
    url = depot.endpoint + "/api/v1/tokens"
    tokens = depot.db.scalar("SELECT count(*) FROM api_tokens")
    body = b'{"name":"first"}'
    headers = depot.sign("POST", url, body=body, headers={"Content-Type": "application/json"},
                         payload_hash="UNSIGNED-PAYLOAD")
    r = requests.post(url, data=b'{"name":"attacker-chosen"}', headers=headers, timeout=30)
    assert_problem(r, 403, "access-denied")
    assert depot.db.scalar("SELECT count(*) FROM api_tokens") == tokens
    headers = depot.sign("POST", url, body=body, headers={"Content-Type": "application/json"})
    r = requests.post(url, data=body, headers=headers, timeout=30)
    assert r.status_code == 201, r.text


def test_a_credential_made_with_an_expiring_one_expires_with_it(depot):
    """The attacker's request (fourth attack): with a token that expires in 60 s, carol made a token and an
    access key that never expire. What a credential makes expires with it at the latest; a shorter
    lifetime asked for stays."""
    short = call(depot, "POST", "/api/v1/tokens", token=token_for(depot, "bob")["token"], body={"expires_in": 60})
    assert short.status_code == 201, short.text
    def when(text):
        return dt.datetime.fromisoformat(text.replace("Z", "+00:00"))

    limit = when(short.json()["expires_at"])
    for path in ("/api/v1/tokens", "/api/v1/keys"):
        made = call(depot, "POST", path, token=short.json()["token"], body={})
        assert made.status_code == 201, made.text
        assert made.json()["expires_at"] is not None, (path, made.json())
        assert abs((when(made.json()["expires_at"]) - limit).total_seconds()) < 1, (path, made.json())
        again = call(depot, "POST", path, token=short.json()["token"], body={"expires_in": 10})
        assert again.status_code == 201 and when(again.json()["expires_at"]) < limit - dt.timedelta(seconds=30), \
            again.text


def test_a_signed_json_body_must_match_its_signed_hash(depot, bucket):
    url = depot.endpoint + "/api/v1/content/lookup"
    body = json.dumps({"sha256": []}).encode()
    headers = depot.sign("POST", url, body=body, headers={"Content-Type": "application/json"})
    r = requests.post(url, data=body, headers=headers, timeout=30)
    assert validate(r, "POST", "/api/v1/content/lookup") == {"found": [], "missing": []}
    tampered = json.dumps({"sha256": ["0" * 64]}).encode()
    r = requests.post(url, data=tampered, headers={**headers, "Content-Length": str(len(tampered))}, timeout=30)
    assert r.status_code == 400 and r.headers["Content-Type"] == "application/problem+json"


@pytest.mark.parametrize("authorization", [None, "Bearer dpt_nope", "Bearer dpt_aaaaaaaaaaaa_" + "b" * 32,
                                           "Basic YWxpY2U6c2VjcmV0"])
def test_missing_or_bad_credentials_are_401_problems(depot, authorization):
    headers = {"Authorization": authorization} if authorization else {}
    r = requests.get(depot.endpoint + "/api/v1/whoami", headers=headers, timeout=30)
    if authorization and authorization.startswith("Basic"):
        # Not a bearer token and not a signature S3 understands: the SigV4 parser refuses it.
        assert r.status_code in (400, 401, 403), r.text
        assert r.headers["Content-Type"] == "application/problem+json"
        return
    assert_problem(r, 401, "unauthenticated")
    assert r.headers["WWW-Authenticate"].startswith("Bearer")


def test_revoked_and_expired_tokens_are_refused(depot):
    revoked = token_for(depot, "bob")
    assert call(depot, "GET", "/api/v1/whoami", token=revoked["token"]).status_code == 200
    depot.depotctl("token", "revoke", revoked["id"])
    assert_problem(call(depot, "GET", "/api/v1/whoami", token=revoked["token"]), 401, "unauthenticated")

    expiring = token_for(depot, "bob", "--expires-in", "1")
    time.sleep(1.5)
    assert_problem(call(depot, "GET", "/api/v1/whoami", token=expiring["token"]), 401, "unauthenticated")
    listed = json.loads(depot.depotctl("token", "list", "bob", "--json").stdout)
    states = {t["id"]: t["state"] for t in listed}
    assert states[revoked["id"]] == "revoked" and states[expiring["id"]] == "expired"


def test_a_token_with_a_wrong_secret_is_refused(depot, tokens):
    token = tokens["alice"]
    wrong = token[:-1] + ("a" if token[-1] != "a" else "b")
    assert_problem(call(depot, "GET", "/api/v1/whoami", token=wrong), 401, "unauthenticated")


def test_tokens_and_secrets_never_reach_the_log(depot, tokens):
    call(depot, "GET", "/api/v1/whoami", token=tokens["alice"])
    log = depot.log_text()
    secret_part = tokens["alice"].split("_")[2]
    assert secret_part not in log


def test_unknown_routes_are_404_and_wrong_methods_405(depot, tokens):
    assert_problem(call(depot, "GET", "/api/v1/nothing-here", token=tokens["alice"]), 404, "not-found")
    assert_problem(call(depot, "DELETE", "/api/v1/whoami", token=tokens["alice"]), 405, "method-not-allowed")
    # Routing needs no credentials; running a route does.
    assert_problem(call(depot, "GET", "/api/v1/usage"), 401, "unauthenticated")


def test_no_bucket_may_be_named_api(s3):
    expect_error("InvalidBucketName", 400, s3.create_bucket, Bucket="api")


# ---- upload avoidance

def test_lookup_reports_only_content_the_caller_can_read(depot, s3, s3_bob, bucket_factory, tokens):
    mine = bucket_factory("alice")
    theirs = bucket_factory("bob")
    a, b, shared = os.urandom(5000), os.urandom(7000), os.urandom(3000)
    s3.put_object(Bucket=mine, Key="a.bin", Body=a)
    s3.put_object(Bucket=mine, Key="shared.bin", Body=shared)
    s3_bob.put_object(Bucket=theirs, Key="b.bin", Body=b)
    s3_bob.put_object(Bucket=theirs, Key="shared.bin", Body=shared)
    never = sha(b"never stored")

    r = call(depot, "POST", "/api/v1/content/lookup", token=tokens["alice"],
             body={"sha256": [sha(a), sha(b).upper(), sha(shared), never]})
    body = validate(r, "POST", "/api/v1/content/lookup")
    assert sorted((f["sha256"], f["size"]) for f in body["found"]) == sorted([(sha(a), 5000), (sha(shared), 3000)])
    # Bob's content is as unknown to alice as content nobody stored.
    assert sorted(body["missing"]) == sorted([sha(b), never])

    r = call(depot, "POST", "/api/v1/content/lookup", token=tokens["bob"], body={"sha256": [sha(a), sha(b)]})
    body = validate(r, "POST", "/api/v1/content/lookup")
    assert [f["sha256"] for f in body["found"]] == [sha(b)] and body["missing"] == [sha(a)]


@pytest.mark.parametrize("payload,fragment", [
    ({"sha256": ["abc"]}, "64 hex digits"),
    ({"sha256": ["g" * 64]}, "64 hex digits"),
    ({"sha256": "0" * 64}, "array"),
    ({"sha256": [1]}, "strings"),
    ({}, "array"),
    ({"sha256": [], "extra": 1}, "Unknown field 'extra'"),
    ({"sha256": ["0" * 64] * 1001}, "At most 1000"),
])
def test_lookup_rejects_malformed_requests_precisely(depot, tokens, payload, fragment):
    r = call(depot, "POST", "/api/v1/content/lookup", token=tokens["alice"], body=payload)
    problem = assert_problem(r, 400, "invalid-argument")
    assert fragment in problem["detail"]
    validate(r, "POST", "/api/v1/content/lookup")


@pytest.mark.parametrize("raw", [b"", b"{", b"[1, 2]", b"\xff\xfe"])
def test_lookup_rejects_bodies_that_are_not_json_objects(depot, tokens, raw):
    r = call(depot, "POST", "/api/v1/content/lookup", token=tokens["alice"], raw=raw,
             headers={"Content-Type": "application/json"})
    assert_problem(r, 400, "invalid-argument")


def test_create_from_digest_references_stored_content_without_new_bytes(depot, s3, bucket_factory, tokens):
    source, target = bucket_factory("alice"), bucket_factory("alice")
    data = os.urandom(2 * 1024 * 1024 + 3)
    s3.put_object(Bucket=source, Key="weights/model.safetensors", Body=data, ContentType="application/x-weights",
                  Metadata={"run": "42"})
    blobs_before = depot.blob_files()

    r = call(depot, "POST", f"/api/v1/buckets/{target}/objects", token=tokens["alice"],
             body={"key": "release/model.safetensors", "sha256": sha(data), "size": len(data)})
    created = validate(r, "POST", "/api/v1/buckets/{bucket}/objects")
    assert r.status_code == 201
    assert created["key"] == "release/model.safetensors" and created["size"] == len(data)
    assert created["etag"] == '"' + hashlib.md5(data).hexdigest() + '"'
    assert depot.blob_files() == blobs_before, "create-by-digest stored bytes"
    got = s3.get_object(Bucket=target, Key="release/model.safetensors")
    assert got["Body"].read() == data
    assert got["ContentType"] == "application/x-weights" and got["Metadata"] == {"run": "42"}

    # Headers and metadata given in the call replace the source's.
    r = call(depot, "POST", f"/api/v1/buckets/{target}/objects", token=tokens["alice"],
             body={"key": "copy2", "sha256": sha(data), "size": len(data), "content_type": "application/octet-stream",
                   "metadata": {"Stage": "prod"}})
    assert r.status_code == 201, r.text
    head = s3.head_object(Bucket=target, Key="copy2")
    assert head["ContentType"] == "application/octet-stream" and head["Metadata"] == {"stage": "prod"}

    # The copies outlive the source.
    s3.delete_object(Bucket=source, Key="weights/model.safetensors")
    assert s3.get_object(Bucket=target, Key="release/model.safetensors")["Body"].read() == data


def test_a_digest_alone_never_grants_another_owners_content(depot, s3, bucket_factory, tokens):
    alices = bucket_factory("alice")
    bobs = bucket_factory("bob")
    secret = os.urandom(100_000)
    s3.put_object(Bucket=alices, Key="secret.bin", Body=secret)
    before = depot.snapshot(alices, (bobs, "bob"))
    r = call(depot, "POST", f"/api/v1/buckets/{bobs}/objects", token=tokens["bob"],
             body={"key": "stolen.bin", "sha256": sha(secret), "size": len(secret)})
    problem = assert_problem(r, 404, "not-found")
    validate(r, "POST", "/api/v1/buckets/{bucket}/objects")
    assert "upload the bytes" in problem["detail"]
    # Nor can bob write into alice's bucket, or learn it exists.
    r = call(depot, "POST", f"/api/v1/buckets/{alices}/objects", token=tokens["bob"],
             body={"key": "x", "sha256": sha(secret), "size": len(secret)})
    assert_problem(r, 404, "no-such-bucket")
    depot.assert_unchanged(before)


@pytest.mark.parametrize("payload,status,kind", [
    ({"key": "k", "sha256": "SIZE", "size": 1}, 404, "not-found"),        # right digest, wrong size
    ({"key": "k", "sha256": "0" * 64, "size": 10}, 404, "not-found"),     # unknown content
    ({"sha256": "DIGEST", "size": "SIZE"}, 400, "invalid-argument"),     # no key
    ({"key": "k", "sha256": "DIGEST", "size": -1}, 400, "invalid-argument"),
    ({"key": "k", "sha256": "DIGEST", "size": "12"}, 400, "invalid-argument"),
    ({"key": "k", "sha256": "xyz", "size": "SIZE"}, 400, "invalid-argument"),
    ({"key": "k" * 1025, "sha256": "DIGEST", "size": "SIZE"}, 400, "key-too-long"),
    ({"key": "k", "sha256": "DIGEST", "size": "SIZE", "metadata": {"a": 1}}, 400, "invalid-argument"),
    ({"key": "k", "sha256": "DIGEST", "size": "SIZE", "acl": "public"}, 400, "invalid-argument"),
])
def test_create_from_digest_bad_requests_change_nothing(depot, s3, bucket, tokens, payload, status, kind):
    data = os.urandom(4096)
    s3.put_object(Bucket=bucket, Key="source", Body=data)
    before = depot.snapshot(bucket)
    # "DIGEST" and "SIZE" stand for the source's digest and size (a sha256 of "SIZE": the right digest).
    body = {k: (sha(data) if v == "DIGEST" or (k == "sha256" and v == "SIZE")
                else len(data) if v == "SIZE" else v) for k, v in payload.items()}
    r = call(depot, "POST", f"/api/v1/buckets/{bucket}/objects", token=tokens["alice"], body=body)
    assert_problem(r, status, kind)
    depot.assert_unchanged(before)


# ---- deduplication mode and usage

def test_bucket_settings_and_dedup_off_keeps_copies_private(depot, s3, bucket_factory, tokens):
    scratch, normal = bucket_factory("alice"), bucket_factory("alice")
    r = call(depot, "GET", f"/api/v1/buckets/{scratch}", token=tokens["alice"])
    assert validate(r, "GET", "/api/v1/buckets/{bucket}")["dedup"] is True
    r = call(depot, "PATCH", f"/api/v1/buckets/{scratch}", token=tokens["alice"], body={"dedup": False})
    body = validate(r, "PATCH", "/api/v1/buckets/{bucket}")
    assert body["dedup"] is False and body["name"] == scratch and body["versioning"] == "unversioned"

    data = os.urandom(300_000)
    before = len(depot.blob_files())
    s3.put_object(Bucket=normal, Key="a", Body=data)
    s3.put_object(Bucket=normal, Key="b", Body=data)
    assert len(depot.blob_files()) == before + 1, "a dedup bucket stored identical content twice"
    s3.put_object(Bucket=scratch, Key="a", Body=data)
    s3.put_object(Bucket=scratch, Key="b", Body=data)
    assert len(depot.blob_files()) == before + 3, "a bucket with dedup off shared or skipped its copies"
    for b in (normal, scratch):
        for k in ("a", "b"):
            assert s3.get_object(Bucket=b, Key=k)["Body"].read() == data
    # A later write to the dedup bucket still finds the shared blob, never a private one.
    s3.put_object(Bucket=normal, Key="c", Body=data)
    assert len(depot.blob_files()) == before + 3

    usage = validate(call(depot, "GET", f"/api/v1/buckets/{normal}/usage", token=tokens["alice"]),
                     "GET", "/api/v1/buckets/{bucket}/usage")
    assert usage == {"bucket": normal, "buckets": 1, "objects": 3, "versions": 3,
                     "logical_bytes": 3 * len(data), "physical_bytes": len(data)}
    usage = validate(call(depot, "GET", f"/api/v1/buckets/{scratch}/usage", token=tokens["alice"]),
                     "GET", "/api/v1/buckets/{bucket}/usage")
    assert usage["logical_bytes"] == 2 * len(data) and usage["physical_bytes"] == 2 * len(data)

    # Deleting frees the private copies; the shared one lives while referenced.
    for k in ("a", "b"):
        s3.delete_object(Bucket=scratch, Key=k)
    s3.delete_object(Bucket=normal, Key="a")
    deadline = time.monotonic() + 10
    while len(depot.blob_files()) != before + 1 and time.monotonic() < deadline:
        time.sleep(0.1)
    assert len(depot.blob_files()) == before + 1


@pytest.mark.parametrize("payload", [{"dedup": "no"}, {"dedup": None}, {"versioning": "Enabled"}, []])
def test_bucket_update_rejects_bad_fields(depot, bucket, tokens, payload):
    r = call(depot, "PATCH", f"/api/v1/buckets/{bucket}", token=tokens["alice"], body=payload)
    assert_problem(r, 400, "invalid-argument")
    assert call(depot, "GET", f"/api/v1/buckets/{bucket}", token=tokens["alice"]).json()["dedup"] is True


def test_buckets_of_others_are_indistinguishable_from_missing_ones(depot, bucket, tokens):
    for path in (f"/api/v1/buckets/{bucket}", f"/api/v1/buckets/{bucket}/usage"):
        other = call(depot, "GET", path, token=tokens["bob"])
        missing = call(depot, "GET", path.replace(bucket, unique_bucket_name("none")), token=tokens["bob"])
        assert_problem(other, 404, "no-such-bucket")
        assert_problem(missing, 404, "no-such-bucket")
        assert other.json()["detail"] == missing.json()["detail"]
    r = call(depot, "PATCH", f"/api/v1/buckets/{bucket}", token=tokens["bob"], body={"dedup": False})
    assert_problem(r, 404, "no-such-bucket")
    assert call(depot, "GET", f"/api/v1/buckets/{bucket}", token=tokens["alice"]).json()["dedup"] is True


BUCKET_ROUTES = [(method.upper(), path) for path, item in SPEC["paths"].items() if path.startswith("/api/v1/buckets/{bucket}")
                 for method in item if method in ("get", "put", "post", "patch", "delete")]


def test_every_bucket_route_decides_its_bucket_before_its_handler_reads_the_request(depot, bucket, tokens):
    """Every {bucket} route of the REST API has its bucket loaded and decided by the authorization step, as
    S3's routes do; no handler does it. So another owner's bucket is the same 404 as a missing one on every
    such route, whatever the body (a malformed one is never read), with a denied audit row, and nothing
    changes."""
    assert len(BUCKET_ROUTES) >= 9, BUCKET_ROUTES
    missing = unique_bucket_name("none")
    before = depot.db.scalar("SELECT count(*) FROM snapshots")
    for method, template in BUCKET_ROUTES:
        def path(name):
            return template.replace("{bucket}", name).replace("{snapshot}", "s1")
        denied = depot.db.scalar("SELECT count(*) FROM audit_log WHERE outcome = 'denied'")
        other = call(depot, method, path(bucket), token=tokens["bob"], raw=b'{"not json',
                     headers={"Content-Type": "application/json"})
        absent = call(depot, method, path(missing), token=tokens["bob"], raw=b'{"not json',
                      headers={"Content-Type": "application/json"})
        assert_problem(other, 404, "no-such-bucket")
        assert_problem(absent, 404, "no-such-bucket")
        assert other.json()["detail"] == absent.json()["detail"], (method, template)
        assert depot.db.scalar("SELECT count(*) FROM audit_log WHERE outcome = 'denied'") == denied + 1, \
            (method, template)  # the other owner's bucket is a refusal; the missing one is not
    assert depot.db.scalar("SELECT count(*) FROM snapshots") == before


def test_owner_usage_counts_shared_blobs_once(depot, s3_bob, bucket_factory):
    carol = depot.add_user("carol-usage", "Carol Usage")
    token = token_for(depot, "carol-usage")["token"]
    client = depot.client("carol-usage")
    one, two = bucket_factory("carol-usage"), bucket_factory("carol-usage")
    data, other = os.urandom(123_456), os.urandom(1000)
    client.put_object(Bucket=one, Key="x", Body=data)
    client.put_object(Bucket=two, Key="y", Body=data)
    client.put_object(Bucket=two, Key="z", Body=other)
    usage = validate(call(depot, "GET", "/api/v1/usage", token=token), "GET", "/api/v1/usage")
    assert usage == {"owner": carol.id, "buckets": 2, "objects": 3, "versions": 3,
                     "logical_bytes": 2 * len(data) + len(other), "physical_bytes": len(data) + len(other)}
