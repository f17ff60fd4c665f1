"""The audit log: every change leaves exactly its row (in the change's transaction), refusals of
authenticated callers and model downloads too; rows are hash-chained so that editing one in PostgreSQL makes
`depotctl audit verify` fail and name it; the REST API filters and pages; export writes JSON Lines; archiving
old rows into a bucket (`depotctl audit archive`, or depotd's --audit-retention) keeps what remains verifiable.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import secrets
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor

import botocore.exceptions
import pytest
import requests

from depot_harness import expect_error, unique_bucket_name
from rest import assert_problem, call, token_for, validate
from test_metrics import scrape

COLUMNS = "actor, credential, team, action, resource, outcome"


def marker(depot) -> int:
    # Ids are drawn in order from this sequence; rows appended from now on get larger ones.
    return depot.db.scalar("SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM audit_log_id")


def rows_since(depot, since: int) -> list[tuple[str, ...]]:
    return [tuple(r + [""] * (6 - len(r))) for r in
            depot.db.query(f"SELECT {COLUMNS} FROM audit_log WHERE id > {since} ORDER BY id")]


def verify(depot, check: bool = True) -> subprocess.CompletedProcess:
    return depot.depotctl("audit", "verify", check=check)


@pytest.fixture(scope="module")
def tokens(depot):
    return {u: token_for(depot, u)["token"] for u in ("alice", "bob")}


def token_id(token: str) -> str:
    return "token:" + token.split("_")[1]


def test_object_and_bucket_changes_leave_exactly_their_rows(depot, s3, s3_bob):
    alice = depot.user("alice").access_key
    bucket = unique_bucket_name("audit")
    m = marker(depot)
    s3.create_bucket(Bucket=bucket)
    s3.put_object(Bucket=bucket, Key="a/b.txt", Body=b"hello")
    s3.copy_object(Bucket=bucket, Key="c.txt", CopySource={"Bucket": bucket, "Key": "a/b.txt"})
    s3.delete_object(Bucket=bucket, Key="a/b.txt")
    s3.delete_objects(Bucket=bucket, Delete={"Objects": [{"Key": "c.txt"}]})
    s3.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": "Enabled"})
    s3.delete_bucket(Bucket=bucket)
    assert rows_since(depot, m) == [
        ("alice", alice, "", "bucket.create", bucket, "allowed"),
        ("alice", alice, "", "object.put", f"{bucket}/a/b.txt", "allowed"),
        ("alice", alice, "", "object.copy", f"{bucket}/c.txt", "allowed"),
        ("alice", alice, "", "object.delete", f"{bucket}/a/b.txt", "allowed"),
        ("alice", alice, "", "object.delete", f"{bucket}/c.txt", "allowed"),
        ("alice", alice, "", "bucket.versioning", bucket, "allowed"),
        ("alice", alice, "", "bucket.delete", bucket, "allowed"),
    ]


def test_a_multipart_upload_is_created_then_one_put_an_abort_is_recorded_and_a_failed_write_leaves_no_row(
        depot, s3, bucket):
    m = marker(depot)
    upload = s3.create_multipart_upload(Bucket=bucket, Key="big")["UploadId"]
    part = s3.upload_part(Bucket=bucket, Key="big", UploadId=upload, PartNumber=1, Body=b"x" * 1000)
    s3.complete_multipart_upload(Bucket=bucket, Key="big", UploadId=upload,
                                 MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": part["ETag"]}]})
    dropped = s3.create_multipart_upload(Bucket=bucket, Key="dropped")["UploadId"]
    s3.upload_part(Bucket=bucket, Key="dropped", UploadId=dropped, PartNumber=1, Body=b"z" * 1000)
    s3.abort_multipart_upload(Bucket=bucket, Key="dropped", UploadId=dropped)
    # A conditional write that fails rolls back with its audit row.
    expect_error("BadDigest", 400, s3.put_object, Bucket=bucket, Key="big", Body=b"y",
                 ContentMD5="AAAAAAAAAAAAAAAAAAAAAA==")
    # Aborting an upload that is already gone changes nothing and records nothing.
    expect_error("NoSuchUpload", 404, s3.abort_multipart_upload, Bucket=bucket, Key="dropped", UploadId=dropped)
    rows = rows_since(depot, m)
    assert [r[3:5] for r in rows] == [("multipart.create", f"{bucket}/big"), ("multipart.part", f"{bucket}/big"),
                                      ("object.put", f"{bucket}/big"),
                                      ("multipart.create", f"{bucket}/dropped"),
                                      ("multipart.part", f"{bucket}/dropped"),
                                      ("multipart.abort", f"{bucket}/dropped")]
    ids = [json.loads(r[0])["upload_id"] for r in depot.db.query(
        f"SELECT details FROM audit_log WHERE id > {m} AND action LIKE 'multipart.%' ORDER BY id")]
    assert ids == [upload, upload, dropped, dropped, dropped]


def details_since(depot, since: int) -> list[dict]:
    return [json.loads(r[0]) for r in depot.db.query(f"SELECT details FROM audit_log WHERE id > {since} ORDER BY id")]


def test_each_uploaded_or_copied_part_leaves_its_row_and_a_failed_part_none(depot, s3, bucket):
    alice = depot.user("alice").access_key
    s3.put_object(Bucket=bucket, Key="source", Body=b"s" * 3000)
    upload = s3.create_multipart_upload(Bucket=bucket, Key="parts")["UploadId"]
    m = marker(depot)
    one = s3.upload_part(Bucket=bucket, Key="parts", UploadId=upload, PartNumber=1, Body=b"a" * 1000)
    # Uploading a part number again replaces the part: a row for each upload.
    again = s3.upload_part(Bucket=bucket, Key="parts", UploadId=upload, PartNumber=1, Body=b"b" * 1200)
    copied = s3.upload_part_copy(Bucket=bucket, Key="parts", UploadId=upload, PartNumber=2,
                                 CopySource={"Bucket": bucket, "Key": "source"}, CopySourceRange="bytes=0-1499")
    # Refused parts change nothing and record nothing: a wrong Content-MD5, an unknown upload, a copy of a
    # missing key.
    expect_error("BadDigest", 400, s3.upload_part, Bucket=bucket, Key="parts", UploadId=upload, PartNumber=3,
                 Body=b"c" * 100, ContentMD5="AAAAAAAAAAAAAAAAAAAAAA==")
    expect_error("NoSuchUpload", 404, s3.upload_part, Bucket=bucket, Key="parts", UploadId="0" * 48, PartNumber=1,
                 Body=b"d")
    expect_error("NoSuchKey", 404, s3.upload_part_copy, Bucket=bucket, Key="parts", UploadId=upload, PartNumber=4,
                 CopySource={"Bucket": bucket, "Key": "no-such-source"})
    s3.abort_multipart_upload(Bucket=bucket, Key="parts", UploadId=upload)
    # A part of an aborted upload is refused too.
    expect_error("NoSuchUpload", 404, s3.upload_part, Bucket=bucket, Key="parts", UploadId=upload, PartNumber=5,
                 Body=b"e")
    assert rows_since(depot, m) == [
        ("alice", alice, "", "multipart.part", f"{bucket}/parts", "allowed"),
        ("alice", alice, "", "multipart.part", f"{bucket}/parts", "allowed"),
        ("alice", alice, "", "multipart.part", f"{bucket}/parts", "allowed"),
        ("alice", alice, "", "multipart.abort", f"{bucket}/parts", "allowed"),
    ]
    etag = lambda r: r.strip('"')  # noqa: E731
    source_version = s3.head_object(Bucket=bucket, Key="source").get("VersionId", "null")
    assert details_since(depot, m)[:3] == [
        {"upload_id": upload, "part_number": 1, "size": 1000, "etag": etag(one["ETag"])},
        {"upload_id": upload, "part_number": 1, "size": 1200, "etag": etag(again["ETag"])},
        {"upload_id": upload, "part_number": 2, "size": 1500, "etag": etag(copied["CopyPartResult"]["ETag"]),
         "copy_source": f"{bucket}/source", "copy_source_version_id": source_version},
    ]
    assert etag(one["ETag"]) == hashlib.md5(b"a" * 1000).hexdigest()
    assert etag(copied["CopyPartResult"]["ETag"]) == hashlib.md5(b"s" * 1500).hexdigest()
    # Every request carries its own request id into its row.
    assert len({r[0] for r in depot.db.query(f"SELECT request_id FROM audit_log WHERE id > {m}")}) == 4


def test_refusals_of_authenticated_callers_are_recorded(depot, s3, s3_bob, bucket, tokens):
    s3.put_object(Bucket=bucket, Key="secret", Body=b"s")
    m = marker(depot)
    expect_error("AccessDenied", 403, s3_bob.get_object, Bucket=bucket, Key="secret")
    r = call(depot, "POST", "/api/v1/teams", token=tokens["bob"], body={"name": "nope"})
    assert_problem(r, 403, "access-denied")
    bob = depot.user("bob").access_key
    assert rows_since(depot, m) == [
        ("bob", bob, "", "s3.GetObject", f"{bucket}/secret", "denied"),
        ("bob", token_id(tokens["bob"]), "", "api.createTeam", "/teams", "denied"),
    ]
    details = json.loads(depot.db.scalar(f"SELECT details FROM audit_log WHERE id > {m} ORDER BY id LIMIT 1"))
    assert details == {"reason": "Access Denied", "bucket": bucket}


def test_refusals_answered_404_are_recorded_with_their_team_and_bucket(depot, s3, bucket, tokens):
    """Issue 34 item 17: REST refusals answered 404 (so that an outsider does not learn the team or bucket
    exists) left no audit row, while S3's equivalents are audited, and the 403 ones carried team "", so the
    team's admins never saw attempts against their team. Now each is one denied row, with the team it was
    aimed at (and the bucket in its details); nothing changed."""
    if "erin" not in depot.users:
        depot.add_user("erin", "Erin")
    erin = token_for(depot, "erin")["token"]
    alice = tokens["alice"]
    team = "t17-" + secrets.token_hex(3)
    assert call(depot, "POST", "/api/v1/teams", token=alice, body={"name": team}).status_code == 201
    assert call(depot, "PUT", f"/api/v1/teams/{team}/members/bob", token=alice,
                body={"role": "reader"}).status_code == 200
    base = f"/api/v1/buckets/{bucket}/snapshots"
    if call(depot, "GET", f"{base}/s17", token=alice).status_code == 404:
        assert call(depot, "POST", base, token=alice, body={"name": "s17"}).status_code == 201
    before_bucket = call(depot, "GET", f"/api/v1/buckets/{bucket}", token=alice).json()
    m = marker(depot)
    # The outsider's four requests: answered as if nothing existed ...
    assert_problem(call(depot, "PATCH", f"/api/v1/buckets/{bucket}", token=erin, body={"versioning": "Enabled"}),
                   404, "no-such-bucket")
    assert_problem(call(depot, "DELETE", f"{base}/s17", token=erin), 404, "no-such-bucket")
    assert_problem(call(depot, "POST", f"{base}/s17/restore", token=erin, body={"target_prefix": "x/"}), 404,
                   "no-such-bucket")
    assert_problem(call(depot, "PUT", f"/api/v1/teams/{team}/members/erin", token=erin, body={"role": "admin"}),
                   404, "not-found")
    # ... and a member whose role is too low: 403.
    assert_problem(call(depot, "PUT", f"/api/v1/teams/{team}/members/bob", token=tokens["bob"],
                        body={"role": "admin"}), 403, "access-denied")
    # Absent things are not refusals: no row.
    assert_problem(call(depot, "PUT", f"/api/v1/teams/nope-{secrets.token_hex(3)}/members/erin", token=erin,
                        body={"role": "admin"}), 404, "not-found")
    erin_cred, bob_cred = token_id(erin), token_id(tokens["bob"])
    assert rows_since(depot, m) == [
        ("erin", erin_cred, "", "api.updateBucket", f"/buckets/{bucket}", "denied"),
        ("erin", erin_cred, "", "api.deleteSnapshot", f"/buckets/{bucket}/snapshots/s17", "denied"),
        ("erin", erin_cred, "", "api.restoreSnapshot", f"/buckets/{bucket}/snapshots/s17/restore", "denied"),
        ("erin", erin_cred, team, "api.setTeamMember", f"/teams/{team}/members/erin", "denied"),
        ("bob", bob_cred, team, "api.setTeamMember", f"/teams/{team}/members/bob", "denied"),
    ]
    details = [json.loads(d[0]) for d in
               depot.db.query(f"SELECT details FROM audit_log WHERE id > {m} ORDER BY id LIMIT 3")]
    assert all(d.get("bucket") == bucket for d in details), details
    # Nothing changed: the bucket, its snapshot, the team's members.
    assert call(depot, "GET", f"/api/v1/buckets/{bucket}", token=alice).json() == before_bucket
    assert call(depot, "GET", f"{base}/s17", token=alice).status_code == 200
    members = call(depot, "GET", f"/api/v1/teams/{team}/members", token=alice).json()
    assert {(x["user"], x["role"]) for x in members["items"]} >= {("bob", "reader")}
    assert "erin" not in {x["user"] for x in members["items"]}
    assert s3.list_objects_v2(Bucket=bucket, Prefix="x/").get("KeyCount") == 0
    # The team's admin reads the attempts against the team.
    page = validate(call(depot, "GET", f"/api/v1/audit?team={team}&limit=1000", token=alice), "GET", "/api/v1/audit")
    assert {r["action"] for r in page["items"] if r["outcome"] == "denied"} == {"api.setTeamMember"}


def test_refusals_about_another_users_credentials_are_recorded(depot, s3, bucket, tokens):
    """An attacker's finding: revoking another user's token or key (answered 404, as if absent) and making a
    credential scoped to another user's bucket or model (400) left no audit row. Each is one denied row
    (the scope's, aimed at the bucket and team it named); nothing changed. An unknown id is no refusal."""
    if "erin" not in depot.users:
        depot.add_user("erin", "Erin")
    erin = token_for(depot, "erin")["token"]
    victim = call(depot, "POST", "/api/v1/tokens", token=tokens["alice"], body={"name": "victim"}).json()
    key = call(depot, "POST", "/api/v1/keys", token=tokens["alice"], body={}).json()["access_key_id"]
    m = marker(depot)
    assert_problem(call(depot, "DELETE", f"/api/v1/tokens/{victim['id']}", token=erin), 404, "not-found")
    assert_problem(call(depot, "DELETE", f"/api/v1/keys/{key}", token=erin), 404, "not-found")
    assert_problem(call(depot, "POST", "/api/v1/tokens", token=erin, body={"scope": {"bucket": bucket}}), 400,
                   "invalid-argument")
    assert_problem(call(depot, "DELETE", "/api/v1/tokens/999999999", token=erin), 404, "not-found")
    cred = token_id(erin)
    assert rows_since(depot, m) == [
        ("erin", cred, "", "api.revokeToken", f"/tokens/{victim['id']}", "denied"),
        ("erin", cred, "", "api.revokeKey", f"/keys/{key}", "denied"),
        ("erin", cred, "", "api.createToken", "/tokens", "denied"),
    ]
    last = json.loads(depot.db.scalar(f"SELECT details FROM audit_log WHERE id > {m} ORDER BY id DESC LIMIT 1"))
    assert last.get("bucket") == bucket, last
    # Nothing changed: alice's token and key still work.
    assert call(depot, "GET", "/api/v1/whoami", token=victim["token"]).status_code == 200
    assert [k["revoked_at"] for k in call(depot, "GET", "/api/v1/keys", token=tokens["alice"]).json()["items"]
            if k["access_key_id"] == key] == [None]


def test_registry_key_and_webhook_changes_leave_their_rows(depot, s3, tokens):
    tok = tokens["alice"]
    cred = token_id(tok)
    team = "aud-" + secrets.token_hex(3)
    bucket = unique_bucket_name("audit-models")
    s3.create_bucket(Bucket=bucket)
    s3.put_object(Bucket=bucket, Key="m/w.bin", Body=b"weights")
    m = marker(depot)
    assert call(depot, "POST", "/api/v1/teams", token=tok, body={"name": team}).status_code == 201
    assert call(depot, "PUT", f"/api/v1/teams/{team}/members/bob", token=tok,
                body={"role": "reader"}).status_code == 200
    assert call(depot, "POST", f"/api/v1/teams/{team}/models", token=tok,
                body={"name": "m1", "bucket": bucket, "prefix": "m/"}).status_code == 201
    assert call(depot, "POST", f"/api/v1/teams/{team}/models/m1/versions", token=tok, body={}).status_code == 201
    assert call(depot, "PUT", f"/api/v1/teams/{team}/models/m1/aliases/serving", token=tok,
                body={"version": 1}).status_code == 200
    assert call(depot, "DELETE", f"/api/v1/teams/{team}/members/bob", token=tok).status_code == 204
    r = call(depot, "POST", f"/api/v1/teams/{team}/webhooks", token=tok, body={"url": "http://93.184.215.14/hook"})
    assert r.status_code == 201, r.text
    hook = r.json()["id"]
    r = call(depot, "POST", "/api/v1/keys", token=tok, body={"scope": {"read_only": True}})
    key = validate(r, "POST", "/api/v1/keys")["access_key_id"]
    assert call(depot, "DELETE", f"/api/v1/keys/{key}", token=tok).status_code == 204
    out = json.loads(depot.depotctl("key", "create", "bob", "--json").stdout)
    assert rows_since(depot, m) == [
        ("alice", cred, team, "team.create", team, "allowed"),
        ("alice", cred, team, "team.member.set", f"{team}/bob", "allowed"),
        ("alice", cred, team, "model.create", f"{team}/m1", "allowed"),
        ("alice", cred, team, "version.create", f"{team}/m1:1", "allowed"),
        ("alice", cred, team, "alias.set", f"{team}/m1:1", "allowed"),
        ("alice", cred, team, "alias.set", f"{team}/m1:1", "allowed"),
        ("alice", cred, team, "team.member.remove", f"{team}/bob", "allowed"),
        ("alice", cred, team, "webhook.create", f"{team}/webhooks/{hook}", "allowed"),
        ("alice", cred, "", "key.create", key, "allowed"),
        ("alice", cred, "", "key.revoke", key, "allowed"),
        ("depotctl", "", "", "key.create", out["access_key_id"], "allowed"),
    ]
    # Secrets never reach the log.
    text = depot.db.scalar(f"SELECT string_agg(details::text, ' ') FROM audit_log WHERE id > {m}")
    assert out["secret_access_key"] not in text


def test_snapshot_changes_leave_their_rows(depot, s3, bucket, tokens):
    tok = tokens["alice"]
    s3.put_object(Bucket=bucket, Key="a", Body=b"1")
    m = marker(depot)
    base = f"/api/v1/buckets/{bucket}/snapshots"
    assert call(depot, "POST", base, token=tok, body={"name": "s1"}).status_code == 201
    r = call(depot, "POST", f"{base}/s1/restore", token=tok, body={"target_prefix": "restored/"})
    assert r.status_code == 200, r.text
    assert call(depot, "DELETE", f"{base}/s1", token=tok).status_code == 204
    cred = token_id(tok)
    assert rows_since(depot, m) == [
        ("alice", cred, "", "snapshot.create", f"{bucket}/.snapshots/s1", "allowed"),
        ("alice", cred, "", "snapshot.restore", f"{bucket}/.snapshots/s1", "allowed"),
        ("alice", cred, "", "snapshot.delete", f"{bucket}/.snapshots/s1", "allowed"),
    ]


def test_model_downloads_are_recorded_through_the_view_and_the_bucket(depot, s3, tokens):
    tok = tokens["alice"]
    team = "dl-" + secrets.token_hex(3)
    bucket = unique_bucket_name("audit-dl")
    s3.create_bucket(Bucket=bucket)
    s3.put_object(Bucket=bucket, Key="m/w.bin", Body=b"weights")
    s3.put_object(Bucket=bucket, Key="other.txt", Body=b"not a model")
    assert call(depot, "POST", "/api/v1/teams", token=tok, body={"name": team}).status_code == 201
    assert call(depot, "PUT", f"/api/v1/teams/{team}/members/alice", token=tok,
                body={"role": "admin"}).status_code == 200
    assert call(depot, "POST", f"/api/v1/teams/{team}/models", token=tok,
                body={"name": "m1", "bucket": bucket, "prefix": "m/"}).status_code == 201
    assert call(depot, "POST", f"/api/v1/teams/{team}/models/m1/versions", token=tok, body={}).status_code == 201
    assert call(depot, "POST", f"/api/v1/buckets/{bucket}/snapshots", token=tok,
                body={"name": "s1"}).status_code == 201
    m = marker(depot)
    assert s3.get_object(Bucket="models", Key=f"{team}/m1/1/w.bin")["Body"].read() == b"weights"
    assert s3.get_object(Bucket=bucket, Key="m/w.bin")["Body"].read() == b"weights"
    s3.get_object(Bucket=bucket, Key="other.txt")["Body"].read()
    s3.head_object(Bucket=bucket, Key="m/w.bin")
    # The snapshot view reads the model's files as they were: a download too.
    assert s3.get_object(Bucket=bucket, Key=".snapshots/s1/m/w.bin")["Body"].read() == b"weights"
    s3.get_object(Bucket=bucket, Key=".snapshots/s1/other.txt")["Body"].read()
    alice = depot.user("alice").access_key
    assert rows_since(depot, m) == [
        ("alice", alice, team, "model.download", f"models/{team}/m1/1/w.bin", "allowed"),
        ("alice", alice, team, "model.download", f"{bucket}/m/w.bin", "allowed"),
        ("alice", alice, team, "model.download", f"{bucket}/.snapshots/s1/m/w.bin", "allowed"),
    ]


def test_refusals_of_a_models_files_by_another_path_are_the_teams_rows(depot, s3, s3_bob, tokens):
    """The attacker's request (third attack, A3): bob, an outsider, reached for a team's model file in its
    bucket by other paths than its key: the bucket's snapshot view (.snapshots/<name>/<key>) and a copy
    source (CopyObject, UploadPartCopy). The refusals were rows with team "", and a copy's named only its
    target. Each is now a row of the team whose model holds the file, and a copy's names the source it was
    refused (details.copy_source). A DeleteObjects that may not delete in the bucket at all is refused as a
    whole, before its keys are read: one row on the bucket."""
    tok = tokens["alice"]
    team = "a3-" + secrets.token_hex(3)
    bucket, own = unique_bucket_name("audit-a3"), unique_bucket_name("audit-a3-bob")
    s3.create_bucket(Bucket=bucket)
    s3_bob.create_bucket(Bucket=own)
    assert call(depot, "POST", "/api/v1/teams", token=tok, body={"name": team}).status_code == 201
    assert call(depot, "POST", f"/api/v1/teams/{team}/models", token=tok,
                body={"name": "llm", "bucket": bucket, "prefix": "m/"}).status_code == 201
    s3.put_object(Bucket=bucket, Key="m/w.bin", Body=b"weights")
    s3.put_object(Bucket=bucket, Key="other/w.bin", Body=b"other")
    assert call(depot, "POST", f"/api/v1/buckets/{bucket}/snapshots", token=tok,
                body={"name": "s1"}).status_code == 201
    m = marker(depot)
    expect_error("AccessDenied", 403, s3_bob.get_object, Bucket=bucket, Key=".snapshots/s1/m/w.bin")
    expect_error("AccessDenied", 403, s3_bob.copy_object, Bucket=own, Key="stolen",
                 CopySource={"Bucket": bucket, "Key": "m/w.bin"})
    upload = s3_bob.create_multipart_upload(Bucket=own, Key="parts")["UploadId"]
    expect_error("AccessDenied", 403, s3_bob.upload_part_copy, Bucket=own, Key="parts", UploadId=upload,
                 PartNumber=1, CopySource={"Bucket": bucket, "Key": "m/w.bin"})
    expect_error("AccessDenied", 403, s3_bob.copy_object, Bucket=own, Key="stolen-other",
                 CopySource={"Bucket": bucket, "Key": "other/w.bin"})
    expect_error("AccessDenied", 403, s3_bob.delete_objects, Bucket=bucket,
                 Delete={"Objects": [{"Key": "m/w.bin"}]})
    bob = depot.user("bob").access_key
    got = [r for r in rows_since(depot, m) if r[3] != "multipart.create"]
    assert got == [
        ("bob", bob, team, "s3.GetObject", f"{bucket}/.snapshots/s1/m/w.bin", "denied"),
        ("bob", bob, team, "s3.CopyObject", f"{own}/stolen", "denied"),
        ("bob", bob, team, "s3.UploadPartCopy", f"{own}/parts", "denied"),
        ("bob", bob, "", "s3.CopyObject", f"{own}/stolen-other", "denied"),
        ("bob", bob, "", "s3.DeleteObjects", bucket, "denied"),
    ], got
    details = [json.loads(d[0]) for d in depot.db.query(
        f"SELECT details FROM audit_log WHERE id > {m} AND outcome = 'denied' ORDER BY id")]
    assert [(d.get("bucket"), d.get("copy_source"), d.get("model")) for d in details] == [
        (bucket, None, f"{team}/llm"),
        (bucket, f"{bucket}/m/w.bin", f"{team}/llm"),
        (bucket, f"{bucket}/m/w.bin", f"{team}/llm"),
        (bucket, f"{bucket}/other/w.bin", None),
        (bucket, None, None),
    ], details
    assert s3_bob.list_objects_v2(Bucket=own).get("KeyCount") == 0
    assert s3.get_object(Bucket=bucket, Key="m/w.bin")["Body"].read() == b"weights"
    page = validate(call(depot, "GET", f"/api/v1/audit?team={team}&limit=1000", token=tok), "GET", "/api/v1/audit")
    assert len([r for r in page["items"] if r["outcome"] == "denied"]) == 3


def test_refusals_in_the_s3_models_view_are_recorded_with_their_team(depot, s3, tokens):
    """The attacker's requests: an outsider's GetObject of a team's model file through the S3 models view
    is answered NoSuchKey (the team's existence does not leak) and left no audit row; a member's scoped key
    refused another model's file left a row with team "", which the team's admins never read. Each is now
    one denied row aimed at the team; a team that does not exist leaves none."""
    tok = tokens["alice"]
    team = "view-" + secrets.token_hex(3)
    bucket = unique_bucket_name("audit-view")
    s3.create_bucket(Bucket=bucket)
    assert call(depot, "POST", "/api/v1/teams", token=tok, body={"name": team}).status_code == 201
    for user, role in (("alice", "admin"), ("bob", "reader")):
        assert call(depot, "PUT", f"/api/v1/teams/{team}/members/{user}", token=tok,
                    body={"role": role}).status_code == 200
    for name in ("m1", "m2"):
        s3.put_object(Bucket=bucket, Key=f"{name}/w.bin", Body=b"weights")
        assert call(depot, "POST", f"/api/v1/teams/{team}/models", token=tok,
                    body={"name": name, "bucket": bucket, "prefix": f"{name}/"}).status_code == 201
        assert call(depot, "POST", f"/api/v1/teams/{team}/models/{name}/versions", token=tok,
                    body={}).status_code == 201
    erin = depot.users.get("erin") or depot.add_user("erin", "Erin")
    key = validate(call(depot, "POST", "/api/v1/keys", token=tokens["bob"], body={"scope": {"model": f"{team}/m1"}}),
                   "POST", "/api/v1/keys")
    scoped = depot.client("bob", access_key=key["access_key_id"], secret=key["secret_access_key"])
    m = marker(depot)
    expect_error("NoSuchKey", 404, depot.client("erin").get_object, Bucket="models", Key=f"{team}/m1/1/w.bin")
    r = None
    try:
        scoped.get_object(Bucket="models", Key=f"{team}/m2/1/w.bin")
    except botocore.exceptions.ClientError as e:
        r = e.response["Error"]["Code"]
    assert r in ("AccessDenied", "NoSuchKey"), r
    assert scoped.get_object(Bucket="models", Key=f"{team}/m1/1/w.bin")["Body"].read() == b"weights"
    expect_error("NoSuchKey", 404, depot.client("erin").get_object, Bucket="models",
                 Key=f"nope-{secrets.token_hex(3)}/m1/1/w.bin")
    assert rows_since(depot, m) == [
        ("erin", erin.access_key, team, "s3.GetObject", f"models/{team}/m1/1/w.bin", "denied"),
        ("bob", key["access_key_id"], team, "s3.GetObject", f"models/{team}/m2/1/w.bin", "denied"),
        ("bob", key["access_key_id"], team, "model.download", f"models/{team}/m1/1/w.bin", "allowed"),
    ]
    # The team's admin reads both attempts.
    page = validate(call(depot, "GET", f"/api/v1/audit?team={team}&limit=1000", token=tok), "GET", "/api/v1/audit")
    assert sorted(r["actor"] for r in page["items"] if r["outcome"] == "denied") == ["bob", "erin"]


def test_the_log_is_append_only_for_the_database_role(depot):
    for sql in ("UPDATE audit_log SET actor = 'x'", "DELETE FROM audit_log", "TRUNCATE audit_log",
                "UPDATE audit_head SET last_id = 0"):
        with pytest.raises(AssertionError) as refused:
            depot.db.execute(sql)
        assert "append-only" in str(refused.value)


def test_editing_a_row_in_postgresql_makes_verify_fail_naming_the_row(depot, s3, bucket):
    s3.put_object(Bucket=bucket, Key="x", Body=b"1")
    s3.put_object(Bucket=bucket, Key="y", Body=b"2")
    assert "audit log verified" in verify(depot).stdout
    row = depot.db.scalar(f"SELECT id FROM audit_log WHERE resource = '{bucket}/x'")
    tamper = ("ALTER TABLE audit_log DISABLE TRIGGER audit_log_no_update; "
              "UPDATE audit_log SET actor = {actor} WHERE id = {row}; "
              "ALTER TABLE audit_log ENABLE TRIGGER audit_log_no_update")
    depot.db.execute(tamper.format(actor="'mallory'", row=row))
    try:
        proc = verify(depot, check=False)
        assert proc.returncode == 1, proc.stdout + proc.stderr
        assert f"FAILED at row {row}:" in proc.stderr and "edited" in proc.stderr
        out = json.loads(depot.depotctl("audit", "verify", "--json", check=False).stdout)
        assert out["ok"] is False and out["bad_row"] == row
    finally:
        depot.db.execute(tamper.format(actor="'alice'", row=row))
    assert verify(depot).returncode == 0
    # Removing a row breaks the link of the one after it.
    after = depot.db.scalar(f"SELECT min(id) FROM audit_log WHERE id > {row}")
    saved = depot.db.query(f"SELECT * FROM audit_log WHERE id = {row}")
    assert saved
    depot.db.execute("ALTER TABLE audit_log DISABLE TRIGGER audit_log_no_update; "
                     f"DELETE FROM audit_log WHERE id = {row}")
    try:
        proc = verify(depot, check=False)
        assert proc.returncode == 1 and f"FAILED at row {after}:" in proc.stderr, proc.stderr
    finally:
        cols = depot.db.query("SELECT string_agg(column_name, ',' ORDER BY ordinal_position) FROM "
                              "information_schema.columns WHERE table_name = 'audit_log'")[0][0]
        values = ",".join("'" + v.replace("'", "''") + "'" for v in saved[0])
        depot.db.execute(f"INSERT INTO audit_log ({cols}) VALUES ({values}); "
                         "ALTER TABLE audit_log ENABLE TRIGGER audit_log_no_update")
    assert verify(depot).returncode == 0


def test_rest_filters_and_cursor_pagination(depot, s3, tokens):
    bucket = unique_bucket_name("audit-rest")
    s3.create_bucket(Bucket=bucket)
    for i in range(5):
        s3.put_object(Bucket=bucket, Key=f"k{i}", Body=b"x")
    seen, cursor = [], None
    while True:
        q = f"?action=object.put&resource={bucket}/&actor=alice&limit=2" + (f"&cursor={cursor}" if cursor else "")
        page = validate(call(depot, "GET", "/api/v1/audit" + q, token=tokens["alice"]), "GET", "/api/v1/audit")
        assert len(page["items"]) <= 2
        seen += [row["resource"] for row in page["items"]]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert seen == [f"{bucket}/k{i}" for i in range(5)]
    # A row gets its hash once depotd's sealer has linked it (about --audit-seal-interval after commit).
    deadline = time.monotonic() + 10
    while True:
        page = validate(call(depot, "GET", f"/api/v1/audit?action=bucket.&resource={bucket}",
                             token=tokens["alice"]), "GET", "/api/v1/audit")
        assert [r["action"] for r in page["items"]] == ["bucket.create"]
        row = page["items"][0]
        if row["hash"] is not None or time.monotonic() > deadline:
            break
        assert row["prev_hash"] is None
        time.sleep(0.05)
    assert row["outcome"] == "allowed" and len(row["hash"]) == 64 and row["request_id"]
    future = validate(call(depot, "GET", "/api/v1/audit?since=2999-01-01T00:00:00Z", token=tokens["alice"]),
                      "GET", "/api/v1/audit")
    assert future["items"] == [] and future["next_cursor"] is None
    # Bad filters are precise problems; readers who administer no team are refused.
    for q, arg in (("?since=not-a-time", "since"), ("?until=13:99", "until"), ("?limit=0", "limit"),
                   ("?cursor=zzz", "cursor"), ("?colour=red", "colour")):
        problem = assert_problem(call(depot, "GET", "/api/v1/audit" + q, token=tokens["alice"]), 400,
                                 "invalid-argument")
        assert problem.get("argument") == arg, problem
    assert_problem(call(depot, "GET", "/api/v1/audit", token=tokens["bob"]), 403, "access-denied")


def test_team_admins_read_only_their_teams_rows(depot, tokens):
    if "tara" not in depot.users:
        depot.add_user("tara", "Tara Teamadmin")
    tara = token_for(depot, "tara")["token"]
    mine, other = "ta-" + secrets.token_hex(3), "tb-" + secrets.token_hex(3)
    for team in (mine, other):
        assert call(depot, "POST", "/api/v1/teams", token=tokens["alice"], body={"name": team}).status_code == 201
    assert call(depot, "PUT", f"/api/v1/teams/{mine}/members/tara", token=tokens["alice"],
                body={"role": "admin"}).status_code == 200
    page = validate(call(depot, "GET", "/api/v1/audit?limit=1000", token=tara), "GET", "/api/v1/audit")
    teams = {r["team"] for r in page["items"]}
    assert teams == {mine}
    page = validate(call(depot, "GET", f"/api/v1/audit?team={other}", token=tara), "GET", "/api/v1/audit")
    assert page["items"] == []


def test_export_writes_json_lines(depot, s3, bucket, tmp_path):
    s3.put_object(Bucket=bucket, Key="e1", Body=b"1")
    s3.delete_object(Bucket=bucket, Key="e1")
    out = depot.depotctl("audit", "export", "--resource", f"{bucket}/").stdout
    rows = [json.loads(line) for line in out.splitlines()]
    assert [(r["action"], r["resource"]) for r in rows] == [("object.put", f"{bucket}/e1"),
                                                          ("object.delete", f"{bucket}/e1")]
    assert all(set(r) >= {"id", "at", "actor", "credential", "hash", "prev_hash", "details"} for r in rows)
    target = tmp_path / "audit.jsonl"
    depot.depotctl("audit", "export", "--action", "object.", "--resource", f"{bucket}/", "--output", str(target))
    assert target.read_text() == out


@pytest.mark.storage
def test_archive_moves_old_rows_into_a_bucket_and_what_remains_verifies(depot, s3):
    archive = unique_bucket_name("audit-archive")
    s3.create_bucket(Bucket=archive)
    before = depot.db.scalar("SELECT to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"')")
    total = depot.db.scalar(f"SELECT count(*) FROM audit_log WHERE at < '{before}'")
    last = depot.db.scalar(f"SELECT max(id) FROM audit_log WHERE at < '{before}'")
    out = json.loads(depot.depotctl("audit", "archive", "--before", before, "--bucket", archive, "--json",
                                    *depot.storage_args()).stdout)
    assert out["archived"] == total and out["last_row"] == last
    assert depot.db.scalar(f"SELECT count(*) FROM audit_log WHERE id <= {last}") == 0
    body = s3.get_object(Bucket=archive, Key=out["key"])["Body"].read().decode()
    lines = [json.loads(line) for line in body.splitlines()]
    assert len(lines) == total and lines[-1]["id"] == last
    # The archived rows still chain: each links to the one before it.
    assert all(b["prev_hash"] == a["hash"] for a, b in zip(lines, lines[1:]))
    # The run itself is on record, after the rows it removed.
    (row,) = [r for r in depot.db.query(f"SELECT {COLUMNS}, details FROM audit_log WHERE action = 'audit.archive' "
                                         f"AND resource = '{archive}/{out['key']}'")]
    assert tuple(row[:6]) == ("depotctl", "", "", "audit.archive", f"{archive}/{out['key']}", "allowed")
    assert json.loads(row[6]) == {"before": before, "first_row": lines[0]["id"], "last_row": last, "rows": total}
    s3.put_object(Bucket=archive, Key="after", Body=b"x")
    proc = verify(depot)
    assert f"chained to archived row {last}" in proc.stdout
    # Nothing older than the cut is left: a second run has nothing to do.
    again = json.loads(depot.depotctl("audit", "archive", "--before", before, "--bucket", archive, "--json",
                                      *depot.storage_args()).stdout)
    assert again["archived"] == 0
    # Bad arguments change nothing.
    proc = depot.depotctl("audit", "archive", "--before", before, "--bucket", "no-such-archive-bucket",
                          *depot.storage_args(), check=False)
    assert proc.returncode == 2 and "no bucket no-such-archive-bucket" in proc.stderr, proc.stderr
    proc = depot.depotctl("audit", "archive", "--before", "not-a-time", "--bucket", archive, *depot.storage_args(),
                          check=False)
    assert proc.returncode == 2 and "--before" in proc.stderr, proc.stderr


def test_concurrent_writers_are_all_sealed_into_one_chain_by_depotd(depot, s3, bucket):
    """Appenders do not queue on the chain head: rows go in unsealed and depotd's sealer links them after
    commit, in id order, leaving no gap and nothing unsealed behind."""
    m = marker(depot)
    with ThreadPoolExecutor(16) as pool:
        list(pool.map(lambda i: s3.put_object(Bucket=bucket, Key=f"k{i}", Body=b"x"), range(64)))
    deadline = time.monotonic() + 20
    while depot.db.scalar(f"SELECT count(*) FROM audit_log WHERE id > {m} AND hash IS NULL") != 0:
        assert time.monotonic() < deadline, "depotd did not seal the new rows"
        time.sleep(0.05)
    rows = depot.db.query(f"SELECT action, resource FROM audit_log WHERE id > {m} AND resource LIKE '{bucket}/%'")
    assert sorted(rows) == sorted(["object.put", f"{bucket}/k{i}"] for i in range(64))
    # Linked in id order: each row's prev_hash is the hash of the row before it.
    broken = depot.db.scalar(
        f"SELECT count(*) FROM (SELECT prev_hash, lag(hash) OVER (ORDER BY id) AS before FROM audit_log "
        f"WHERE id > {m}) x WHERE before IS NOT NULL AND prev_hash <> before")
    assert broken == 0
    out = json.loads(depot.depotctl("audit", "verify", "--json").stdout)
    assert out["ok"] is True and out["unsealed"] == 0
    metrics = requests.get(depot.endpoint + "/metrics", timeout=30).text
    sealed = [float(line.split()[-1]) for line in metrics.splitlines()
              if line.startswith("depot_audit_sealed_rows_total ")]
    assert sealed and sealed[0] >= 64


def test_sealing_cannot_be_undone_or_used_to_edit_a_row(depot, s3, bucket):
    s3.put_object(Bucket=bucket, Key="z", Body=b"1")
    verify(depot)
    row = depot.db.scalar(f"SELECT id FROM audit_log WHERE resource = '{bucket}/z'")
    # The sealer's one permitted UPDATE needs its maintenance flag, and never changes content.
    for sql in (f"UPDATE audit_log SET hash = NULL, prev_hash = NULL WHERE id = {row}",
                f"BEGIN; SELECT set_config('depot.audit_maintenance', 'on', true); "
                f"UPDATE audit_log SET actor = 'mallory' WHERE id = {row}; COMMIT"):
        with pytest.raises(AssertionError) as refused:
            depot.db.execute(sql)
        assert "append-only" in str(refused.value)
    # Stripping a sealed row of its hashes (triggers off) is caught, and the row named.
    strip = ("ALTER TABLE audit_log DISABLE TRIGGER audit_log_no_update; "
             "UPDATE audit_log SET prev_hash = {v}, hash = {v} WHERE id = {row}; "
             "ALTER TABLE audit_log ENABLE TRIGGER audit_log_no_update")
    saved = depot.db.query(f"SELECT encode(prev_hash, 'hex'), encode(hash, 'hex') FROM audit_log WHERE id = {row}")[0]
    depot.db.execute(strip.format(v="NULL", row=row))
    try:
        proc = verify(depot, check=False)
        assert proc.returncode == 1 and f"FAILED at row {row}:" in proc.stderr, proc.stderr
        assert "sealed chain" in proc.stderr
    finally:
        depot.db.execute("ALTER TABLE audit_log DISABLE TRIGGER audit_log_no_update; "
                         f"UPDATE audit_log SET prev_hash = decode('{saved[0]}', 'hex'), "
                         f"hash = decode('{saved[1]}', 'hex') WHERE id = {row}; "
                         "ALTER TABLE audit_log ENABLE TRIGGER audit_log_no_update")
    assert verify(depot).returncode == 0


def test_webhook_ping_and_redelivery_leave_their_rows(private_depot):
    from test_webhooks import FAST, Receiver, make_team, subscribe, team_call
    server = private_depot(*FAST)
    receiver = Receiver()
    try:
        team = make_team(server)
        hook = subscribe(server, team, receiver.url)
        m = marker(server)
        r = team_call(server, team, "POST", f"/webhooks/{hook['id']}/ping")
        assert r.status_code == 202, r.text
        event = r.json()["event_id"]
        receiver.wait_for(lambda got: any(g["json"]["id"] == event for g in got))
        delivery = None
        deadline = time.monotonic() + 30
        while delivery is None or delivery["state"] != "delivered":
            assert time.monotonic() < deadline, delivery
            items = team_call(server, team, "GET", f"/webhooks/{hook['id']}/deliveries").json()["items"]
            delivery = next(d for d in items if d["event_id"] == event)
            time.sleep(0.05)
        path = f"/webhooks/{hook['id']}/deliveries/{delivery['id']}/redeliver"
        assert team_call(server, team, "POST", path).status_code == 202
        # Refusals of a team admin's own calls (no such delivery / webhook) change nothing and record nothing.
        assert team_call(server, team, "POST", f"/webhooks/{hook['id']}/deliveries/999999/redeliver").status_code \
            == 404
        assert team_call(server, team, "POST", "/webhooks/999999/ping").status_code == 404
        cred = token_id(team["tokens"]["alice"])
        resource = f"{team['name']}/webhooks/{hook['id']}"
        assert rows_since(server, m) == [
            ("alice", cred, team["name"], "webhook.ping", resource, "allowed"),
            ("alice", cred, team["name"], "webhook.redeliver", resource, "allowed"),
        ]
        assert details_since(server, m) == [{"event_id": event},
                                             {"delivery_id": delivery["id"], "previous_state": "delivered"}]
    finally:
        receiver.close()


def utc(text: str) -> dt.datetime:
    return dt.datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ")


def archive_lines(s3, bucket: str) -> dict[str, list[dict]]:
    keys = [o["Key"] for o in s3.list_objects_v2(Bucket=bucket, Prefix="audit/").get("Contents", [])]
    return {k: [json.loads(line) for line in s3.get_object(Bucket=bucket, Key=k)["Body"].read().decode().splitlines()]
            for k in keys}


def test_retention_setting_archives_old_rows_only_into_an_existing_bucket(private_depot):
    """--audit-retention R with --audit-archive-bucket B: each cleanup pass moves the rows older than R into
    B. While B does not exist the passes fail, say so in the log and leave every row in place."""
    retention = 6
    archive = unique_bucket_name("retention")
    server = private_depot("--audit-retention", str(retention), "--audit-archive-bucket", archive,
                           "--cleanup-interval", "1")
    s3 = server.client("alice")
    data = unique_bucket_name("retained")
    s3.create_bucket(Bucket=data)
    for i in range(3):
        s3.put_object(Bucket=data, Key=f"old{i}", Body=b"x")
    old_last = marker(server)
    # The bucket is missing: passes fail and nothing moves, even once the rows are older than the retention.
    time.sleep(retention + 2)
    assert "audit archive failed" in server.log_text() and f"no bucket {archive}" in server.log_text()
    assert server.db.scalar("SELECT anchor_id FROM audit_head") == 0
    table = {json.loads(line)["id"]: json.loads(line) for line in server.depotctl("audit", "export").stdout.splitlines()}
    assert min(table) == 1 and max(table) >= old_last
    assert "audit log verified" in verify(server).stdout
    failed = scrape(server.endpoint).value("depot_audit_archive_passes_total", result="error")
    assert failed >= 1

    # With the bucket, the next pass archives what is older than the retention; newer rows stay.
    s3.create_bucket(Bucket=archive)
    s3.put_object(Bucket=data, Key="fresh", Body=b"y")
    fresh = server.db.scalar(f"SELECT id FROM audit_log WHERE resource = '{data}/fresh'")
    deadline = time.monotonic() + 30
    while server.db.scalar("SELECT anchor_id FROM audit_head") < old_last:
        assert time.monotonic() < deadline, server.log_text()[-2000:]
        time.sleep(0.1)
    first = server.db.query("SELECT actor, credential, team, action, resource, outcome, details FROM audit_log "
                            "WHERE action = 'audit.archive' ORDER BY id LIMIT 1")[0]
    details = json.loads(first[6])
    last = details["last_row"]
    key = f"audit/audit-1-{last}.jsonl"
    assert tuple(first[:6]) == ("system", "", "", "audit.archive", f"{archive}/{key}", "allowed")
    assert details["first_row"] == 1 and details["rows"] == last and old_last <= last < fresh
    # The object holds exactly the rows that were in the table, in chain order.
    objects = archive_lines(s3, archive)
    lines = objects[key]
    assert [r["id"] for r in lines] == list(range(1, last + 1))
    assert lines == [table[i] for i in range(1, last + 1)]
    assert all(utc(r["at"]) < utc(details["before"]) for r in lines)
    # The rows at or after the cut stayed and what remains verifies against the anchor.
    assert server.db.scalar(f"SELECT count(*) FROM audit_log WHERE id > {last} AND id <= {fresh}") == fresh - last
    proc = verify(server)
    assert "audit log verified" in proc.stdout and "chained to archived row" in proc.stdout
    after = scrape(server.endpoint)
    assert after.value("depot_audit_archived_rows_total") >= last
    assert after.value("depot_audit_archive_passes_total", result="ok") >= 1


def test_creating_a_user_leaves_its_row_and_a_refused_duplicate_none(depot):
    m = marker(depot)
    name = "audited-" + secrets.token_hex(4)
    depot.depotctl("user", "create", name, "--admin")
    assert rows_since(depot, m) == [("depotctl", "", "", "user.create", name, "allowed")]
    assert depot.db.scalar(f"SELECT details->>'admin' FROM audit_log WHERE resource = '{name}'") == "true"
    m = marker(depot)
    again = depot.depotctl("user", "create", name, check=False)
    assert again.returncode != 0 and "already exists" in again.stderr
    assert rows_since(depot, m) == []


def test_keys_refused_inside_delete_objects_are_each_a_denied_row(depot, s3):
    """The attacker's request (second attack, N6): DeleteObjects with a key under a policy Deny and a locked
    version answered both refusals in its body and left no audit row, where DeleteObject leaves one. Each
    refused key is now a denied row; the deleted key is its object.delete row; the refused ones remain."""
    bucket = unique_bucket_name("audit-multidelete")
    s3.create_bucket(Bucket=bucket, ObjectLockEnabledForBucket=True)
    s3.put_bucket_policy(Bucket=bucket, Policy=json.dumps({"Version": "2012-10-17", "Statement": [
        {"Effect": "Deny", "Principal": "*", "Action": "s3:DeleteObject", "Resource": f"arn:aws:s3:::{bucket}/keep/*"}]}))
    s3.put_object(Bucket=bucket, Key="keep/a", Body=b"a")
    s3.put_object(Bucket=bucket, Key="free/b", Body=b"b")
    until = dt.datetime.now(dt.timezone.utc) + dt.timedelta(days=1)
    locked = s3.put_object(Bucket=bucket, Key="locked", Body=b"l", ObjectLockMode="COMPLIANCE",
                           ObjectLockRetainUntilDate=until)["VersionId"]
    m = marker(depot)
    out = s3.delete_objects(Bucket=bucket, Delete={"Objects": [
        {"Key": "keep/a"}, {"Key": "free/b"}, {"Key": "locked", "VersionId": locked}]})
    assert sorted(e["Key"] for e in out.get("Errors", [])) == ["keep/a", "locked"]
    assert all(e["Code"] == "AccessDenied" for e in out["Errors"])
    alice = depot.user("alice").access_key
    rows = rows_since(depot, m)
    assert sorted(rows) == sorted([
        ("alice", alice, "", "s3.DeleteObjects", f"{bucket}/keep/a", "denied"),
        ("alice", alice, "", "object.delete", f"{bucket}/free/b", "allowed"),
        ("alice", alice, "", "s3.DeleteObjects", f"{bucket}/locked", "denied"),
    ]), rows
    assert s3.get_object(Bucket=bucket, Key="keep/a")["Body"].read() == b"a"
    assert s3.get_object(Bucket=bucket, Key="locked", VersionId=locked)["Body"].read() == b"l"


def test_refusals_of_a_models_files_in_its_bucket_are_the_teams_rows(depot, s3, s3_bob, tokens):
    """The attacker's request (first attack, F5): bob, who may not read the bucket, asks for a team's model
    file at its bucket key; the refusal was a row with team "", so the team's admins, who read such attempts
    through the models view, never saw it. The row now names the team and the model (the longest prefix
    that holds the key); a key outside every model stays team ""."""
    tok = tokens["alice"]
    team = "f5-" + secrets.token_hex(3)
    bucket = unique_bucket_name("audit-f5")
    s3.create_bucket(Bucket=bucket)
    assert call(depot, "POST", "/api/v1/teams", token=tok, body={"name": team}).status_code == 201
    for name, prefix in (("outer", "m/"), ("inner", "m/inner/")):
        assert call(depot, "POST", f"/api/v1/teams/{team}/models", token=tok,
                    body={"name": name, "bucket": bucket, "prefix": prefix}).status_code == 201
    for key in ("m/w.bin", "m/inner/w.bin", "other/w.bin"):
        s3.put_object(Bucket=bucket, Key=key, Body=b"weights")
    m = marker(depot)
    for key in ("m/w.bin", "m/inner/w.bin", "other/w.bin"):
        expect_error("AccessDenied", 403, s3_bob.get_object, Bucket=bucket, Key=key)
    bob = depot.user("bob").access_key
    assert rows_since(depot, m) == [
        ("bob", bob, team, "s3.GetObject", f"{bucket}/m/w.bin", "denied"),
        ("bob", bob, team, "s3.GetObject", f"{bucket}/m/inner/w.bin", "denied"),
        ("bob", bob, "", "s3.GetObject", f"{bucket}/other/w.bin", "denied"),
    ]
    details = [json.loads(d[0]) for d in
               depot.db.query(f"SELECT details FROM audit_log WHERE id > {m} ORDER BY id")]
    assert [d.get("model") for d in details] == [f"{team}/outer", f"{team}/inner", None]
    page = validate(call(depot, "GET", f"/api/v1/audit?team={team}&limit=1000", token=tok), "GET", "/api/v1/audit")
    assert sorted(r["resource"] for r in page["items"] if r["outcome"] == "denied") == \
        [f"{bucket}/m/inner/w.bin", f"{bucket}/m/w.bin"]


def test_refused_listings_and_digest_writes_under_a_models_prefix_are_the_teams_rows(depot, s3, s3_bob,
                                                                                     tokens):
    """The attacker's request (second attack on bf60ad2, #14): bob listed a team's model prefix in a bucket he
    may not read, and alice's digest copy into the model's prefix was refused by her bucket's policy; both
    rows had team "", so the team's admins never read them. A listing's row is the team's whose model holds
    its prefix, a refused REST key's the team's whose model holds the key; outside every model, team ""."""
    tok = tokens["alice"]
    team = "i14-" + secrets.token_hex(3)
    bucket = unique_bucket_name("audit-i14")
    s3.create_bucket(Bucket=bucket)
    assert call(depot, "POST", "/api/v1/teams", token=tok, body={"name": team}).status_code == 201
    assert call(depot, "POST", f"/api/v1/teams/{team}/models", token=tok,
                body={"name": "llm", "bucket": bucket, "prefix": "m/"}).status_code == 201
    s3.put_object(Bucket=bucket, Key="m/w.bin", Body=b"weights")
    s3.put_bucket_policy(Bucket=bucket, Policy=json.dumps({"Version": "2012-10-17", "Statement": [{
        "Effect": "Deny", "Principal": "*", "Action": "s3:PutObject", "Resource": f"arn:aws:s3:::{bucket}/m/*"}]}))
    m = marker(depot)
    expect_error("AccessDenied", 403, s3_bob.list_objects_v2, Bucket=bucket, Prefix="m/")
    expect_error("AccessDenied", 403, s3_bob.list_objects_v2, Bucket=bucket, Prefix="other/")
    digest = hashlib.sha256(b"weights").hexdigest()
    r = call(depot, "POST", f"/api/v1/buckets/{bucket}/objects", token=tok,
             body={"key": "m/copy.bin", "sha256": digest, "size": 7})
    assert_problem(r, 403, "access-denied")
    got = [(r[0], r[2], r[3], r[5]) for r in rows_since(depot, m)]
    assert got == [
        ("bob", team, "s3.ListObjectsV2", "denied"),
        ("bob", "", "s3.ListObjectsV2", "denied"),
        ("alice", team, "api.createObjectFromDigest", "denied"),
    ], got
    s3.delete_bucket_policy(Bucket=bucket)
