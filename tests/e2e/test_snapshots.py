"""Snapshots (both stores): a named point in a bucket's history, taken with one constant-size statement,
read read-only over S3 under `.snapshots/<name>/` by unchanged clients (aws cli, rclone, boto3) exactly as
the bucket was, whatever happened to the bucket since (overwrites, deletes, permanent version deletes, in
unversioned and versioned buckets); writes there refused; deleting a snapshot releases what only it kept
(gc reclaims it, fsck stays clean); restore copies references, no bytes; bad input changes nothing."""

from __future__ import annotations

import hashlib
import json
import os
import re
import time

import pytest
import requests

from depot_harness import expect_error, unique_bucket_name
from rest import assert_problem, call, token_for, validate
from test_rclone import rclone, read_tree

SNAPS = "/api/v1/buckets/{bucket}/snapshots"
SNAP = "/api/v1/buckets/{bucket}/snapshots/{snapshot}"
RESTORE = "/api/v1/buckets/{bucket}/snapshots/{snapshot}/restore"

OLD = {
    "a.txt": b"version one of a\n",
    "dir/b.txt": b"b before\n",
    "dir/sub/c.bin": os.urandom(300_000),
    "gone.txt": b"deleted after the snapshot\n",
    "with space/\u00fcn\u00efc\u00f6d\u00e9.txt": "unicode \u2713\n".encode(),
}


@pytest.fixture(scope="module")
def tokens(depot):
    return {user: token_for(depot, user)["token"] for user in ("alice", "bob")}


def create(depot, token, bucket, name, prefix=None, status=201):
    body = {"name": name} if prefix is None else {"name": name, "prefix": prefix}
    r = call(depot, "POST", f"/api/v1/buckets/{bucket}/snapshots", token=token, body=body)
    assert r.status_code == status, r.text
    if status == 201:
        return validate(r, "POST", SNAPS)
    return r


def listed(s3, bucket, prefix, **kwargs) -> dict[str, str]:
    """Every key (with its ETag) under `prefix`, paging with a small MaxKeys to exercise continuation."""
    out = {}
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix,
                                                            PaginationConfig={"PageSize": 2}, **kwargs):
        for o in page.get("Contents", []):
            out[o["Key"]] = o["ETag"]
    return out


def md5(data: bytes) -> str:
    return '"' + hashlib.md5(data).hexdigest() + '"'


@pytest.mark.parametrize("versioning", ["unversioned", "Enabled", "Suspended"])
def test_a_snapshot_reads_exactly_the_old_state_with_boto3_aws_cli_and_rclone(depot, s3, bucket, tokens,
                                                                             tmp_path, versioning):
    if versioning != "unversioned":
        s3.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": versioning})
    for key, data in OLD.items():
        s3.put_object(Bucket=bucket, Key=key, Body=data)
    snap = create(depot, tokens["alice"], bucket, "snap1")
    assert snap["name"] == "snap1" and snap["prefix"] == "" and snap["s3_prefix"] == ".snapshots/snap1/"

    # The bucket moves on: overwrite, delete, add, and a permanent delete of a version.
    s3.put_object(Bucket=bucket, Key="a.txt", Body=b"version two of a\n")
    s3.delete_object(Bucket=bucket, Key="gone.txt")
    s3.put_object(Bucket=bucket, Key="new.txt", Body=b"added after\n")
    head = s3.head_object(Bucket=bucket, Key="dir/b.txt")
    s3.delete_object(Bucket=bucket, Key="dir/b.txt", VersionId=head.get("VersionId", "null"))
    s3.put_object(Bucket=bucket, Key="dir/b.txt", Body=b"b after\n")

    live = listed(s3, bucket, "")
    assert sorted(live) == sorted(["a.txt", "dir/b.txt", "dir/sub/c.bin", "new.txt",
                                   "with space/\u00fcn\u00efc\u00f6d\u00e9.txt"])
    assert s3.get_object(Bucket=bucket, Key="a.txt")["Body"].read() == b"version two of a\n"
    # Regular listings never show the snapshot view, nor versions kept only for it.
    top = s3.list_objects_v2(Bucket=bucket, Delimiter="/")
    assert [p["Prefix"] for p in top.get("CommonPrefixes", [])] == ["dir/", "with space/"]
    versions = s3.list_object_versions(Bucket=bucket)
    kept = [(v["Key"], v["ETag"]) for v in versions.get("Versions", [])]
    if versioning == "unversioned":
        assert sorted(k for k, _ in kept) == sorted(live)
    assert ("dir/b.txt", md5(OLD["dir/b.txt"])) not in kept  # permanently deleted: gone from history

    # boto3: listing (paged) and reads of the snapshot.
    root = ".snapshots/snap1/"
    assert listed(s3, bucket, root) == {root + k: md5(v) for k, v in OLD.items()}
    for key, data in OLD.items():
        assert s3.get_object(Bucket=bucket, Key=root + key)["Body"].read() == data
    c = OLD["dir/sub/c.bin"]
    got = s3.get_object(Bucket=bucket, Key=root + "dir/sub/c.bin", Range="bytes=1000-1999")
    assert got["ResponseMetadata"]["HTTPStatusCode"] == 206 and got["Body"].read() == c[1000:2000]
    assert s3.head_object(Bucket=bucket, Key=root + "a.txt")["ContentLength"] == len(OLD["a.txt"])
    expect_error("NoSuchKey", 404, s3.get_object, Bucket=bucket, Key=root + "new.txt")
    expect_error("NoSuchKey", 404, s3.get_object, Bucket=bucket, Key=".snapshots/nosuch/a.txt")
    expect_error("InvalidArgument", 400, s3.get_object, Bucket=bucket, Key=root + "a.txt", VersionId="null")
    names = s3.list_objects_v2(Bucket=bucket, Prefix=".snapshots/", Delimiter="/")
    assert [p["Prefix"] for p in names.get("CommonPrefixes", [])] == [root]
    sub = s3.list_objects_v2(Bucket=bucket, Prefix=root, Delimiter="/")
    assert [o["Key"] for o in sub.get("Contents", [])] == [root + "a.txt", root + "gone.txt"]
    assert [p["Prefix"] for p in sub.get("CommonPrefixes", [])] == [root + "dir/", root + "with space/"]
    v1 = s3.list_objects(Bucket=bucket, Prefix=root + "dir/")
    assert [o["Key"] for o in v1["Contents"]] == [root + "dir/b.txt", root + "dir/sub/c.bin"]

    # aws cli: ls and a recursive download.
    out = depot.aws("s3", "ls", "--recursive", f"s3://{bucket}/{root}").stdout
    assert sorted(line.split(maxsplit=3)[3] for line in out.splitlines()) == sorted(root + k for k in OLD)
    assert "PRE snap1/" in depot.aws("s3", "ls", f"s3://{bucket}/.snapshots/").stdout
    depot.aws("s3", "cp", "--recursive", f"s3://{bucket}/{root}", str(tmp_path / "cli"))
    assert read_tree(tmp_path / "cli") == OLD

    # rclone: list and copy.
    files = rclone(depot, "lsf", "-R", "--files-only", f"depot:{bucket}/.snapshots/snap1").stdout.splitlines()
    assert sorted(files) == sorted(OLD)
    rclone(depot, "copy", f"depot:{bucket}/.snapshots/snap1", str(tmp_path / "rclone"))
    assert read_tree(tmp_path / "rclone") == OLD

    # Copying out of the snapshot brings one object back (CopyObject: references, no bytes).
    depot.aws("s3", "cp", f"s3://{bucket}/{root}gone.txt", f"s3://{bucket}/gone.txt")
    assert s3.get_object(Bucket=bucket, Key="gone.txt")["Body"].read() == OLD["gone.txt"]
    expect_error("InvalidArgument", 400, s3.copy_object, Bucket=bucket, Key="x",
                 CopySource={"Bucket": bucket, "Key": root + "a.txt", "VersionId": "null"})
    expect_error("NoSuchKey", 404, s3.copy_object, Bucket=bucket, Key="x",
                 CopySource={"Bucket": bucket, "Key": root + "new.txt"})


def test_writes_under_snapshots_are_refused_and_create_nothing(depot, s3, bucket, tokens, tmp_path):
    s3.put_object(Bucket=bucket, Key="k", Body=b"kept")
    create(depot, tokens["alice"], bucket, "ro")
    before = depot.snapshot(bucket)
    for key in (".snapshots/ro/k", ".snapshots/ro/new", ".snapshots/x", ".snapshots"):
        expect_error("AccessDenied", 403, s3.put_object, Bucket=bucket, Key=key, Body=b"no")
        expect_error("AccessDenied", 403, s3.delete_object, Bucket=bucket, Key=key)
        expect_error("AccessDenied", 403, s3.create_multipart_upload, Bucket=bucket, Key=key)
        expect_error("AccessDenied", 403, s3.copy_object, Bucket=bucket, Key=key,
                     CopySource={"Bucket": bucket, "Key": "k"})
    deleted = s3.delete_objects(Bucket=bucket, Delete={"Objects": [{"Key": ".snapshots/ro/k"}]})
    assert [e["Code"] for e in deleted["Errors"]] == ["AccessDenied"]
    f = tmp_path / "f"
    f.write_bytes(b"upload")
    assert depot.aws("s3", "cp", str(f), f"s3://{bucket}/.snapshots/ro/f", check=False).returncode != 0
    r = call(depot, "POST", f"/api/v1/buckets/{bucket}/objects", token=tokens["alice"],
             body={"key": ".snapshots/ro/z", "sha256": hashlib.sha256(b"kept").hexdigest(), "size": 4})
    assert_problem(r, 400, "invalid-argument")
    depot.assert_unchanged(before)
    assert s3.get_object(Bucket=bucket, Key=".snapshots/ro/k")["Body"].read() == b"kept"


def test_the_snapshot_view_is_the_owners_and_under_the_policy_of_the_key_it_serves(depot, s3, s3_bob, tokens):
    """Issue 34 item 3: with READ on the bucket only, bob read .snapshots/s1/private/payroll.csv (200) while
    private/payroll.csv was 403, and a policy's Deny of secret/* did not reach .snapshots/s1/secret/...: the
    view keys have no ACL of their own and were matched as literal keys. A snapshot is its owner's (README),
    and what it serves is decided as the key it resolves to."""
    bucket = unique_bucket_name("snap-acl")
    s3.create_bucket(Bucket=bucket, ObjectOwnership="ObjectWriter")
    s3.put_bucket_acl(Bucket=bucket, GrantFullControl='id="alice"', GrantRead='id="bob"')
    s3.put_object(Bucket=bucket, Key="private/payroll.csv", Body=b"salaries")
    s3.put_object(Bucket=bucket, Key="secret/plans", Body=b"plans")
    s3.put_object(Bucket=bucket, Key="open.txt", Body=b"open", GrantRead='id="bob"', GrantFullControl='id="alice"')
    create(depot, tokens["alice"], bucket, "s1")
    # The live bucket: bob lists (bucket READ) and reads what is granted to him, not the private object.
    assert s3_bob.get_object(Bucket=bucket, Key="open.txt")["Body"].read() == b"open"
    expect_error("AccessDenied", 403, s3_bob.get_object, Bucket=bucket, Key="private/payroll.csv")
    assert len(s3_bob.list_objects_v2(Bucket=bucket)["Contents"]) == 3
    before = depot.snapshot(bucket)
    # The view: none of it is bob's, whatever his grants (even the object granted to him).
    for key in (".snapshots/s1/private/payroll.csv", ".snapshots/s1/open.txt", ".snapshots/s1/missing"):
        expect_error("AccessDenied", 403, s3_bob.get_object, Bucket=bucket, Key=key)
        assert client_status(s3_bob.head_object, Bucket=bucket, Key=key) == 403
    for prefix in (".snapshots/", ".snapshots/s1/", ".snapshots/s1/private/"):
        expect_error("AccessDenied", 403, s3_bob.list_objects_v2, Bucket=bucket, Prefix=prefix)
    # Nor a copy from it into a bucket of his own.
    mine = unique_bucket_name("snap-bob")
    s3_bob.create_bucket(Bucket=mine)
    expect_error("AccessDenied", 403, s3_bob.copy_object, Bucket=mine, Key="stolen",
                 CopySource={"Bucket": bucket, "Key": ".snapshots/s1/private/payroll.csv"})
    assert "Contents" not in s3_bob.list_objects_v2(Bucket=mine)
    # The owner reads her snapshot.
    assert s3.get_object(Bucket=bucket, Key=".snapshots/s1/private/payroll.csv")["Body"].read() == b"salaries"

    # A Deny of secret/* holds on the view of secret/*, for the owner (an installation admin) too, and for a copy.
    s3.put_bucket_policy(Bucket=bucket, Policy=json.dumps({"Version": "2012-10-17", "Statement": [
        {"Effect": "Deny", "Principal": "*", "Action": "s3:GetObject", "Resource": f"arn:aws:s3:::{bucket}/secret/*"},
        {"Effect": "Deny", "Principal": "*", "Action": "s3:ListBucket", "Resource": f"arn:aws:s3:::{bucket}",
         "Condition": {"StringLike": {"s3:prefix": "secret/*"}}}]}))
    before = depot.snapshot(bucket)
    expect_error("AccessDenied", 403, s3.get_object, Bucket=bucket, Key="secret/plans")
    e = expect_error("AccessDenied", 403, s3.get_object, Bucket=bucket, Key=".snapshots/s1/secret/plans")
    assert "bucket policy" in e["Error"]["Message"]
    assert client_status(s3.head_object, Bucket=bucket, Key=".snapshots/s1/secret/plans") == 403
    expect_error("AccessDenied", 403, s3.list_objects_v2, Bucket=bucket, Prefix="secret/")
    expect_error("AccessDenied", 403, s3.list_objects_v2, Bucket=bucket, Prefix=".snapshots/s1/secret/")
    expect_error("AccessDenied", 403, s3.copy_object, Bucket=bucket, Key="copied",
                 CopySource={"Bucket": bucket, "Key": ".snapshots/s1/secret/plans"})
    depot.assert_unchanged(before)
    # What the Deny does not name stays readable through the view.
    assert s3.get_object(Bucket=bucket, Key=".snapshots/s1/private/payroll.csv")["Body"].read() == b"salaries"
    s3.delete_bucket_policy(Bucket=bucket)


def test_the_snapshot_view_of_a_public_bucket_is_not_public(depot, s3, tokens):
    bucket = unique_bucket_name("snap-pub")
    s3.create_bucket(Bucket=bucket, ObjectOwnership="ObjectWriter")
    s3.put_bucket_acl(Bucket=bucket, ACL="public-read")
    s3.put_object(Bucket=bucket, Key="pub.txt", Body=b"public", ACL="public-read")
    create(depot, tokens["alice"], bucket, "s1")
    assert requests.get(f"{depot.endpoint}/{bucket}/pub.txt", timeout=30).status_code == 200
    assert requests.get(f"{depot.endpoint}/{bucket}?list-type=2", timeout=30).status_code == 200
    for path in (f"/{bucket}/.snapshots/s1/pub.txt", f"/{bucket}?list-type=2&prefix=.snapshots/",
                 f"/{bucket}?list-type=2&prefix=.snapshots/s1/"):
        r = requests.get(depot.endpoint + path, timeout=30)
        assert r.status_code == 403 and b"<Code>AccessDenied</Code>" in r.content, (path, r.text)


def client_status(fn, **kwargs) -> int:
    from botocore.exceptions import ClientError
    try:
        fn(**kwargs)
    except ClientError as e:
        return e.response["ResponseMetadata"]["HTTPStatusCode"]
    return 200


def test_a_prefix_snapshot_holds_only_its_prefix(depot, s3, bucket, tokens):
    for key in ("data/1", "data/2", "other/3", "data-x"):
        s3.put_object(Bucket=bucket, Key=key, Body=key.encode())
    snap = create(depot, tokens["alice"], bucket, "data-only", prefix="data/")
    assert snap["prefix"] == "data/"
    for key in ("data/1", "other/3"):
        s3.delete_object(Bucket=bucket, Key=key)
    assert listed(s3, bucket, ".snapshots/data-only/") == {
        ".snapshots/data-only/data/1": md5(b"data/1"), ".snapshots/data-only/data/2": md5(b"data/2")}
    expect_error("NoSuchKey", 404, s3.get_object, Bucket=bucket, Key=".snapshots/data-only/other/3")
    assert s3.get_object(Bucket=bucket, Key=".snapshots/data-only/data/1")["Body"].read() == b"data/1"
    # "data-only/" sorts before "data.z/" only by bytes: the names listing follows key byte order.
    create(depot, tokens["alice"], bucket, "data.z")
    create(depot, tokens["alice"], bucket, "data")
    names = s3.list_objects_v2(Bucket=bucket, Prefix=".snapshots/", Delimiter="/", MaxKeys=2)
    assert [p["Prefix"] for p in names["CommonPrefixes"]] == [".snapshots/data-only/", ".snapshots/data.z/"]
    assert names["IsTruncated"]
    rest = s3.list_objects_v2(Bucket=bucket, Prefix=".snapshots/", Delimiter="/",
                              ContinuationToken=names["NextContinuationToken"])
    assert [p["Prefix"] for p in rest["CommonPrefixes"]] == [".snapshots/data/"]


def test_rest_crud_pagination_and_bad_input_changes_nothing(depot, s3, bucket, tokens):
    alice, bob = tokens["alice"], tokens["bob"]
    s3.put_object(Bucket=bucket, Key="x", Body=b"x")
    for name in ("s1", "s2", "s3"):
        create(depot, alice, bucket, name)
    r = call(depot, "GET", f"/api/v1/buckets/{bucket}/snapshots?limit=2", token=alice)
    page = validate(r, "GET", SNAPS)
    assert [s["name"] for s in page["items"]] == ["s1", "s2"] and page["next_cursor"]
    r = call(depot, "GET", f"/api/v1/buckets/{bucket}/snapshots?limit=2&cursor={page['next_cursor']}",
             token=alice)
    page = validate(r, "GET", SNAPS)
    assert [s["name"] for s in page["items"]] == ["s3"] and page["next_cursor"] is None
    got = validate(call(depot, "GET", f"/api/v1/buckets/{bucket}/snapshots/s2", token=alice), "GET", SNAP)
    assert got["name"] == "s2" and got["bucket"] == bucket

    before = depot.snapshot(bucket)
    for bad in ("", "-lead", "has/slash", "has space", "x" * 64, ".dot", "\u00fc"):
        assert_problem(call(depot, "POST", f"/api/v1/buckets/{bucket}/snapshots", token=alice,
                            body={"name": bad}), 400, "invalid-argument")
    for body in ({}, {"name": 7}, {"name": "ok", "extra": 1}, {"name": "ok", "prefix": 3},
                 {"name": "ok", "prefix": ".snapshots/x"}):
        assert_problem(call(depot, "POST", f"/api/v1/buckets/{bucket}/snapshots", token=alice, body=body),
                       400, "invalid-argument")
    dup = call(depot, "POST", f"/api/v1/buckets/{bucket}/snapshots", token=alice, body={"name": "s1"})
    assert_problem(dup, 409, "already-exists")
    validate(dup, "POST", SNAPS)
    assert_problem(call(depot, "GET", f"/api/v1/buckets/{bucket}/snapshots/nosuch", token=alice), 404,
                   "not-found")
    assert_problem(call(depot, "DELETE", f"/api/v1/buckets/{bucket}/snapshots/nosuch", token=alice), 404,
                   "not-found")
    assert_problem(call(depot, "POST", f"/api/v1/buckets/{bucket}/snapshots/nosuch/restore", token=alice,
                        body={}), 404, "not-found")
    assert_problem(call(depot, "POST", f"/api/v1/buckets/{bucket}/snapshots/s1/restore", token=alice,
                        body={"target_bucket": unique_bucket_name("missing")}), 404, "no-such-bucket")
    assert_problem(call(depot, "POST", f"/api/v1/buckets/{bucket}/snapshots/s1/restore", token=alice,
                        body={"target_prefix": ".snapshots/s1/"}), 400, "invalid-argument")
    assert_problem(call(depot, "POST", f"/api/v1/buckets/{bucket}/snapshots/s1/restore", token=alice,
                        body={"target_prefix": "x" * 1024}), 400, "key-too-long")
    # Another owner's bucket is indistinguishable from a missing one.
    for method, path, body in (("GET", f"/api/v1/buckets/{bucket}/snapshots", None),
                               ("POST", f"/api/v1/buckets/{bucket}/snapshots", {"name": "bobs"}),
                               ("GET", f"/api/v1/buckets/{bucket}/snapshots/s1", None),
                               ("DELETE", f"/api/v1/buckets/{bucket}/snapshots/s1", None),
                               ("POST", f"/api/v1/buckets/{bucket}/snapshots/s1/restore", {})):
        assert_problem(call(depot, method, path, token=bob, body=body), 404, "no-such-bucket")
    depot.assert_unchanged(before)

    r = call(depot, "DELETE", f"/api/v1/buckets/{bucket}/snapshots/s2", token=alice)
    assert r.status_code == 204
    assert_problem(call(depot, "GET", f"/api/v1/buckets/{bucket}/snapshots/s2", token=alice), 404, "not-found")


@pytest.fixture
def server(private_depot):
    # No audit sealing rounds (a background task's statements) in the middle of statement counts.
    return private_depot("--audit-seal-interval", "3600000")


def gc_and_fsck(server) -> dict:
    args = server.storage_args()
    server.depotctl("gc", "--grace", "0", *args)
    proc = server.depotctl("fsck", *args, "--json", check=False)
    report = json.loads(proc.stdout)
    assert proc.returncode == 0 and report["clean"], report
    return report


def test_deleting_a_snapshot_releases_only_what_it_alone_kept(server):
    s3 = server.client("alice")
    token = token_for(server, "alice")["token"]
    plain = unique_bucket_name("snap-plain")
    s3.create_bucket(Bucket=plain)
    s3.put_object(Bucket=plain, Key="x", Body=b"old x " * 1000)
    s3.put_object(Bucket=plain, Key="y", Body=b"old y " * 1000)
    create(server, token, plain, "keep")
    s3.put_object(Bucket=plain, Key="x", Body=b"new x " * 1000)
    s3.delete_object(Bucket=plain, Key="y")
    assert len(server.blob_files()) == 3  # old x and old y live on for the snapshot
    gc_and_fsck(server)
    assert len(server.blob_files()) == 3
    assert s3.get_object(Bucket=plain, Key=".snapshots/keep/y")["Body"].read() == b"old y " * 1000

    # Versioned: v1, snapshot s0, v2, snapshot s1, then v2 deleted permanently: v1 is current again, s0
    # still reads v1 and s1 still reads v2.
    versioned = unique_bucket_name("snap-versioned")
    s3.create_bucket(Bucket=versioned)
    s3.put_bucket_versioning(Bucket=versioned, VersioningConfiguration={"Status": "Enabled"})
    s3.put_object(Bucket=versioned, Key="m", Body=b"model v1 " * 1000)
    create(server, token, versioned, "s0")
    v2 = s3.put_object(Bucket=versioned, Key="m", Body=b"model v2 " * 1000)["VersionId"]
    create(server, token, versioned, "s1")
    s3.delete_object(Bucket=versioned, Key="m", VersionId=v2)
    assert s3.get_object(Bucket=versioned, Key="m")["Body"].read() == b"model v1 " * 1000
    history = s3.list_object_versions(Bucket=versioned)["Versions"]
    assert [(v["IsLatest"], v["ETag"]) for v in history] == [(True, md5(b"model v1 " * 1000))]
    latest = history[0]["VersionId"]
    assert s3.get_object(Bucket=versioned, Key="m", VersionId=latest)["Body"].read() == b"model v1 " * 1000
    assert s3.get_object(Bucket=versioned, Key=".snapshots/s0/m")["Body"].read() == b"model v1 " * 1000
    assert s3.get_object(Bucket=versioned, Key=".snapshots/s1/m")["Body"].read() == b"model v2 " * 1000
    expect_error("NoSuchVersion", 404, s3.get_object, Bucket=versioned, Key="m", VersionId=v2)
    assert len(server.blob_files()) == 5
    gc_and_fsck(server)

    # Deleting the snapshots gives back exactly what only they held.
    for bucket, name in ((plain, "keep"), (versioned, "s0"), (versioned, "s1")):
        assert call(server, "DELETE", f"/api/v1/buckets/{bucket}/snapshots/{name}", token=token).status_code == 204
    gc_and_fsck(server)
    assert len(server.blob_files()) == 2  # new x and model v1
    assert int(server.db.scalar("SELECT count(*) FROM object_versions WHERE purged")) == 0
    assert s3.get_object(Bucket=versioned, Key="m")["Body"].read() == b"model v1 " * 1000
    # A bucket whose rows were kept only for snapshots is empty once they are gone.
    s3.delete_object(Bucket=plain, Key="x")
    s3.delete_bucket(Bucket=plain)


def test_a_bucket_with_snapshots_cannot_be_deleted(depot, s3, bucket, tokens):
    s3.put_object(Bucket=bucket, Key="x", Body=b"x")
    create(depot, tokens["alice"], bucket, "pin")
    s3.delete_object(Bucket=bucket, Key="x")
    expect_error("OperationAborted", 409, s3.delete_bucket, Bucket=bucket)
    assert s3.get_object(Bucket=bucket, Key=".snapshots/pin/x")["Body"].read() == b"x"
    call(depot, "DELETE", f"/api/v1/buckets/{bucket}/snapshots/pin", token=tokens["alice"])
    s3.delete_bucket(Bucket=bucket)


def test_restore_copies_references_not_bytes(server):
    s3 = server.client("alice")
    token = token_for(server, "alice")["token"]
    src, dst = unique_bucket_name("snap-src"), unique_bucket_name("snap-dst")
    s3.create_bucket(Bucket=src)
    s3.create_bucket(Bucket=dst)
    s3.put_bucket_versioning(Bucket=dst, VersioningConfiguration={"Status": "Enabled"})
    files = {"w/a": os.urandom(50_000), "w/b": os.urandom(70_000), "z": b"zz"}
    for key, data in files.items():
        s3.put_object(Bucket=src, Key=key, Body=data)
    create(server, token, src, "before")
    s3.put_object(Bucket=src, Key="w/a", Body=b"broken")
    s3.delete_object(Bucket=src, Key="w/b")
    s3.put_object(Bucket=src, Key="w/c", Body=b"untouched by restore")

    def usage():
        return validate(call(server, "GET", "/api/v1/usage", token=token), "GET", "/api/v1/usage")

    def bucket_usage(name):
        return validate(call(server, "GET", f"/api/v1/buckets/{name}/usage", token=token), "GET",
                        "/api/v1/buckets/{bucket}/usage")

    blobs, src_physical = server.blob_files(), bucket_usage(src)["physical_bytes"]
    # In place: the snapshot's objects become current again; keys it does not hold stay.
    r = call(server, "POST", f"/api/v1/buckets/{src}/snapshots/before/restore", token=token, body={})
    done = validate(r, "POST", RESTORE)
    assert done == {"snapshot": "before", "target_bucket": src, "objects": 3,
                    "logical_bytes": sum(map(len, files.values()))}
    for key, data in files.items():
        assert s3.get_object(Bucket=src, Key=key)["Body"].read() == data
    assert s3.get_object(Bucket=src, Key="w/c")["Body"].read() == b"untouched by restore"
    # No new blob; only "broken", which the restore replaced and no snapshot saw, is gone.
    assert server.blob_files() < blobs and len(blobs - server.blob_files()) == 1
    assert bucket_usage(src)["physical_bytes"] == src_physical - len(b"broken")
    blobs, physical, src_physical = server.blob_files(), usage()["physical_bytes"], bucket_usage(src)["physical_bytes"]
    # Part of it into another bucket under another prefix.
    r = call(server, "POST", f"/api/v1/buckets/{src}/snapshots/before/restore", token=token,
             body={"target_bucket": dst, "prefix": "w/", "target_prefix": "restored/"})
    assert validate(r, "POST", RESTORE)["objects"] == 2
    assert sorted(o["Key"] for o in s3.list_objects_v2(Bucket=dst)["Contents"]) == ["restored/a", "restored/b"]
    assert s3.get_object(Bucket=dst, Key="restored/b")["Body"].read() == files["w/b"]
    assert server.blob_files() == blobs
    after = usage()
    assert after["physical_bytes"] == physical
    assert bucket_usage(src)["physical_bytes"] == src_physical
    dst_usage = bucket_usage(dst)
    assert dst_usage["logical_bytes"] == dst_usage["physical_bytes"] == len(files["w/a"]) + len(files["w/b"])
    gc_and_fsck(server)
    assert server.blob_files() == blobs


def test_a_restore_is_seen_whole_or_not_at_all(server):
    """All of a restore's copies commit together: a client listing the target while it runs sees none of
    the restored keys or all of them, never a part."""
    import concurrent.futures
    import threading

    s3 = server.client("alice")
    token = token_for(server, "alice")["token"]
    src, dst = unique_bucket_name("snap-atomic"), unique_bucket_name("snap-atomic-dst")
    s3.create_bucket(Bucket=src)
    s3.create_bucket(Bucket=dst)
    count = 300
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda i: s3.put_object(Bucket=src, Key=f"k/{i:04d}", Body=b"x%d" % i), range(count)))
    create(server, token, src, "all")

    seen, stop = [], threading.Event()

    def watch():
        reader = server.client("alice")
        while not stop.is_set():
            seen.append(reader.list_objects_v2(Bucket=dst, Prefix="r/", MaxKeys=1000).get("KeyCount", 0))

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        time.sleep(0.2)
        r = call(server, "POST", f"/api/v1/buckets/{src}/snapshots/all/restore", token=token,
                 body={"target_bucket": dst, "prefix": "k/", "target_prefix": "r/"})
        assert validate(r, "POST", RESTORE)["objects"] == count
        time.sleep(0.2)
    finally:
        stop.set()
        watcher.join()
    print(f"\nlistings during the restore: {len(seen)}, distinct key counts seen: {sorted(set(seen))}")
    assert set(seen) <= {0, count}, sorted(set(seen))
    assert seen[-1] == count
    assert s3.get_object(Bucket=dst, Key="r/0123")["Body"].read() == b"x123"


def metric(server, name: str) -> float:
    text = requests.get(server.endpoint + "/metrics", timeout=30).text
    return sum(float(line.split()[-1]) for line in text.splitlines() if line.startswith(name + " ")
               or line.startswith(name + "{"))


def statements_for_create(server, token, bucket, name) -> tuple[int, float]:
    """Statements the server ran for one snapshot creation (the fewest of three tries, so that a background
    task's query in between does not count), and the call's duration. What a commit sets off (a NOTIFY
    that wakes a worker) is given time to finish inside the window, so that it counts in every try or in
    none rather than in whichever try it happens to fall."""
    best, took = None, None
    for attempt in range(3):
        before = metric(server, "depot_db_query_duration_seconds_count")
        started = time.perf_counter()
        create(server, token, bucket, f"{name}-{attempt}")
        elapsed = time.perf_counter() - started
        time.sleep(0.3)
        count = int(metric(server, "depot_db_query_duration_seconds_count") - before)
        if best is None or count < best:
            best, took = count, elapsed
    return best, took


@pytest.fixture
def quiet_server(private_depot, monkeypatch):
    """A depotd whose background tasks stay asleep while statements are counted: no audit sealing, cleanup,
    webhook or warm-up polls (each of those runs queries of its own), and the storage gauges of /metrics
    read once, not whenever a scrape finds them older than a minute."""
    monkeypatch.setenv("DEPOT_METRICS_STORAGE_INTERVAL", "3600")
    return private_depot("--audit-seal-interval", "3600000", "--cleanup-interval", "3600",
                         "--webhook-poll-interval", "3600000", "--warmup-poll-interval", "3600000")


def test_snapshot_creation_is_one_constant_size_statement_for_10_and_100000_objects(quiet_server):
    server = quiet_server
    s3 = server.client("alice")
    token = token_for(server, "alice")["token"]
    small, big = unique_bucket_name("snap-10"), unique_bucket_name("snap-100k")
    s3.create_bucket(Bucket=small)
    s3.create_bucket(Bucket=big)
    for i in range(10):
        s3.put_object(Bucket=small, Key=f"k/{i:06d}", Body=b"")
    # 100,000 empty objects, written straight into the registry (an empty object has no segments).
    big_id = server.db.scalar(f"SELECT id FROM buckets WHERE name = '{big}'")
    server.db.execute(
        "INSERT INTO object_versions (bucket_id, key, version_id, created_seq, size, etag, owner_id) "
        f"SELECT {big_id}, 'k/' || lpad(i::text, 6, '0'), 'null', nextval('commit_seq'), 0, "
        "'d41d8cd98f00b204e9800998ecf8427e', 'alice' FROM generate_series(0, 99999) AS i")
    server.db.execute("ANALYZE object_versions")

    def rows():
        return (int(server.db.scalar("SELECT count(*) FROM object_versions")),
                int(server.db.scalar("SELECT coalesce(max(id), 0) FROM object_versions")))

    rows_before = rows()
    metric(server, "depot_db_query_duration_seconds_count")  # the one read of the storage gauges
    few, few_time = statements_for_create(server, token, small, "ten")
    many, many_time = statements_for_create(server, token, big, "many")
    print(f"\nsnapshot creation: 10 objects {few_time * 1000:.1f} ms, 100000 objects {many_time * 1000:.1f} ms "
          f"({few} and {many} statements per call, authentication included)")
    assert few == many, (few, many)
    # The call is a handful of statements (authenticate, look the bucket up, BEGIN, lock, INSERT, COMMIT).
    assert many <= 10, many
    # Nothing was written to object_versions; the snapshot is one row holding one sequence number.
    assert rows() == rows_before
    assert int(server.db.scalar(f"SELECT count(*) FROM snapshots WHERE bucket_id = {big_id}")) == 3
    # The statement's shape: a single-row INSERT of constants and nextval (no scan of object_versions).
    plan = "\n".join(r[0] for r in server.db.query(
        "EXPLAIN INSERT INTO snapshots (bucket_id, name, prefix, seq, created_by) "
        f"VALUES ({big_id}, 'explain', '', nextval('commit_seq'), 'alice') "
        "ON CONFLICT (bucket_id, name) DO NOTHING RETURNING id"))
    assert "object_versions" not in plan and re.search(r"Result\s+\(cost", plan), plan
    page = s3.list_objects_v2(Bucket=big, Prefix=".snapshots/many-0/k/09999", MaxKeys=5)
    assert [o["Key"] for o in page["Contents"]] == [f".snapshots/many-0/k/{i:06d}" for i in range(99990, 99995)]
