"""Attacks on credential scopes and team isolation (issue 22, items 3, 4, 6, 7, 13): each test sends the
attacker's request and asserts the refusal and that nothing changed (no object, no row, no blob), next to the
allowed request that shows the test can tell the difference.

The attacker is an ordinary (not installation-admin) user holding a credential they narrowed themselves, the
README's "for yourself" pattern: what the scope promises must hold against its own owner's other resources.
"""

from __future__ import annotations

import secrets

import botocore.exceptions
import pytest

from depot_harness import expect_error, unique_bucket_name
from rest import assert_problem, call, sha, token_for


@pytest.fixture(scope="module")
def owner(depot):
    """A user with two buckets: `scoped` (the credential's) and `other` (outside it), each holding an object
    with content of its own, and a snapshot of `scoped`."""
    name = "scope-atk-" + secrets.token_hex(3)
    depot.add_user(name, name)
    tok = token_for(depot, name)["token"]
    s3 = depot.client(name)
    scoped, other = unique_bucket_name("atk-scoped"), unique_bucket_name("atk-other")
    for b in (scoped, other):
        s3.create_bucket(Bucket=b)
    s3.put_object(Bucket=scoped, Key="p/in.bin", Body=b"inside the scope")
    s3.put_object(Bucket=scoped, Key="q/beside.bin", Body=b"beside the prefix")
    s3.put_object(Bucket=other, Key="secret.bin", Body=b"outside the scope")
    r = call(depot, "POST", f"/api/v1/buckets/{scoped}/snapshots", token=tok, body={"name": "s1"})
    assert r.status_code == 201, r.text
    return {"user": name, "token": tok, "s3": s3, "scoped": scoped, "other": other}


def scoped_credentials(depot, tok: str, scope: dict) -> tuple[dict, str]:
    """(access key, API token) narrowed to `scope`, made by their owner."""
    key = call(depot, "POST", "/api/v1/keys", token=tok, body={"scope": scope})
    assert key.status_code == 201, key.text
    token = call(depot, "POST", "/api/v1/tokens", token=tok, body={"scope": scope})
    assert token.status_code == 201, token.text
    return key.json(), token.json()["token"]


def client_of(depot, key: dict):
    return depot.client(access_key=key["access_key_id"], secret=key["secret_access_key"])


def problem_shape(r) -> dict:
    """What a client can compare between two problems: all but the per-request members."""
    body = r.json()
    return {"status": r.status_code, **{k: v for k, v in body.items() if k not in ("instance", "request_id")}}


def test_a_bucket_key_cannot_create_objects_from_content_in_the_owners_other_buckets(depot, owner):
    """Issue 22 item 3: POST /buckets/{scoped}/objects with the digest of an object in another bucket of the
    owner answered 201 and the bytes read back through the scoped bucket. The source search stays inside the
    scope, and a digest outside it answers exactly like a digest nobody stores."""
    scoped, other, user = owner["scoped"], owner["other"], owner["user"]
    _, token = scoped_credentials(depot, owner["token"], {"bucket": scoped})
    before = depot.snapshot((scoped, user), (other, user))
    outside = b"outside the scope"
    stolen = call(depot, "POST", f"/api/v1/buckets/{scoped}/objects", token=token,
                  body={"key": "p/stolen.bin", "sha256": sha(outside), "size": len(outside)})
    nobody = b"content nobody stores " + secrets.token_bytes(8)
    absent = call(depot, "POST", f"/api/v1/buckets/{scoped}/objects", token=token,
                  body={"key": "p/stolen.bin", "sha256": sha(nobody), "size": len(nobody)})
    assert_problem(stolen, 404, "not-found")
    assert problem_shape(stolen) == problem_shape(absent)
    depot.assert_unchanged(before)
    expect_error("NoSuchKey", 404, owner["s3"].get_object, Bucket=scoped, Key="p/stolen.bin")
    # Content inside the scope is still found: the refusal above is the scope's, not a broken lookup.
    inside = b"inside the scope"
    r = call(depot, "POST", f"/api/v1/buckets/{scoped}/objects", token=token,
             body={"key": "p/again.bin", "sha256": sha(inside), "size": len(inside)})
    assert r.status_code == 201, r.text
    assert owner["s3"].get_object(Bucket=scoped, Key="p/again.bin")["Body"].read() == inside
    owner["s3"].delete_object(Bucket=scoped, Key="p/again.bin")


def test_a_bucket_token_cannot_restore_a_snapshot_into_another_bucket(depot, owner):
    """Issue 22 item 4: POST /buckets/{scoped}/snapshots/s1/restore with target_bucket elsewhere answered 200
    and wrote the snapshot's objects into a bucket outside the scope. The target must be inside the scope."""
    scoped, other, user = owner["scoped"], owner["other"], owner["user"]
    _, token = scoped_credentials(depot, owner["token"], {"bucket": scoped})
    before = depot.snapshot((scoped, user), (other, user))
    path = f"/api/v1/buckets/{scoped}/snapshots/s1/restore"
    for body in ({"target_bucket": other}, {"target_bucket": other, "target_prefix": "x/"},
                 {"target_bucket": other, "prefix": "p/"}):
        assert_problem(call(depot, "POST", path, token=token, body=body), 403, "access-denied")
    # A bucket that does not exist answers the same: the refusal tells nothing about bucket names.
    r = call(depot, "POST", path, token=token, body={"target_bucket": unique_bucket_name("atk-absent")})
    assert_problem(r, 403, "access-denied")
    depot.assert_unchanged(before)
    # Restoring inside the scope still works.
    r = call(depot, "POST", path, token=token, body={"prefix": "p/", "target_prefix": "restored/"})
    assert r.status_code == 200 and r.json()["objects"] == 1, r.text
    assert owner["s3"].get_object(Bucket=scoped, Key="restored/in.bin")["Body"].read() == b"inside the scope"
    owner["s3"].delete_object(Bucket=scoped, Key="restored/in.bin")


def test_a_prefix_token_can_neither_create_from_digest_nor_restore_beside_its_prefix(depot, owner):
    """Issue 22 items 3 and 4, prefix scopes (a guard: main already refused these, as a prefix scope's REST
    writes are refused outright): content beside the prefix is not found, nothing is restored there."""
    scoped, other, user = owner["scoped"], owner["other"], owner["user"]
    _, token = scoped_credentials(depot, owner["token"], {"bucket": scoped, "prefix": "p/"})
    before = depot.snapshot((scoped, user), (other, user))
    beside = b"beside the prefix"
    r = call(depot, "POST", f"/api/v1/buckets/{scoped}/objects", token=token,
             body={"key": "p/beside.bin", "sha256": sha(beside), "size": len(beside)})
    assert_problem(r, 403, "access-denied")
    r = call(depot, "POST", f"/api/v1/buckets/{scoped}/snapshots/s1/restore", token=token,
             body={"prefix": "q/", "target_prefix": "p/"})
    assert_problem(r, 403, "access-denied")
    depot.assert_unchanged(before)


def test_a_prefix_token_reads_none_of_the_buckets_settings_usage_or_snapshots(depot, owner):
    """An attacker's finding on the merged tree: a token limited to p/ read the whole bucket's settings and
    its snapshots' names and prefixes (which name what lies beside p/). These are the whole bucket's, as its
    usage already was; the bucket-scoped token shows the same requests are answered to a bucket scope."""
    scoped = owner["scoped"]
    _, prefix_token = scoped_credentials(depot, owner["token"], {"bucket": scoped, "prefix": "p/"})
    _, bucket_token = scoped_credentials(depot, owner["token"], {"bucket": scoped})
    paths = [f"/api/v1/buckets/{scoped}", f"/api/v1/buckets/{scoped}/usage",
             f"/api/v1/buckets/{scoped}/snapshots", f"/api/v1/buckets/{scoped}/snapshots/s1"]
    for path in paths:
        assert_problem(call(depot, "GET", path, token=prefix_token), 403, "access-denied")
        r = call(depot, "GET", path, token=bucket_token)
        assert r.status_code == 200, (path, r.text)
    # Inside its prefix the token still reads (the scope is narrowed, not emptied).
    key, _ = scoped_credentials(depot, owner["token"], {"bucket": scoped, "prefix": "p/"})
    assert client_of(depot, key).get_object(Bucket=scoped, Key="p/in.bin")["Body"].read() == b"inside the scope"


def team_admin_with_bucket(depot, hint: str) -> tuple[str, str, str, object, str]:
    """(user, token, team, S3 client, bucket): a new user, admin of a new team, owning a new bucket."""
    name = f"{hint}-" + secrets.token_hex(3)
    depot.add_user(name, name)
    tok = token_for(depot, name)["token"]
    admin = token_for(depot, "alice")["token"]
    team = f"atk-{hint}-" + secrets.token_hex(3)
    assert call(depot, "POST", "/api/v1/teams", token=admin, body={"name": team}).status_code == 201
    assert call(depot, "PUT", f"/api/v1/teams/{team}/members/{name}", token=admin,
                body={"role": "admin"}).status_code == 200
    s3 = depot.client(name)
    bucket = unique_bucket_name(f"atk-{hint}")
    s3.create_bucket(Bucket=bucket)
    return name, tok, team, s3, bucket


def team_model_with_a_version(depot, hint: str, weights: bytes) -> tuple[str, str, str, object, str]:
    """team_admin_with_bucket, with model m on prefix m/ holding m/w.bin (`weights`) and its version 1."""
    name, tok, team, s3, bucket = team_admin_with_bucket(depot, hint)
    s3.put_object(Bucket=bucket, Key="m/w.bin", Body=weights)
    assert call(depot, "POST", f"/api/v1/teams/{team}/models", token=tok,
                body={"name": "m", "bucket": bucket, "prefix": "m/"}).status_code == 201
    assert call(depot, "POST", f"/api/v1/teams/{team}/models/m/versions", token=tok, body={}).status_code == 201
    return name, tok, team, s3, bucket


def test_a_model_key_over_a_whole_bucket_reaches_its_files_not_the_buckets_settings(depot):
    """The attacker's finding: a key scoped to a model bound to a whole bucket (prefix "") deleted the
    bucket's policy (its Deny of secret/*), and could rewrite its ACL, versioning and lifecycle, delete in
    bulk and read its snapshots. A model's scope reaches the model's files, as it does for a model on a
    prefix; the bucket's settings stay its owner's."""
    name, tok, team, s3, bucket = team_admin_with_bucket(depot, "whole")
    s3.put_object(Bucket=bucket, Key="w.bin", Body=b"weights")
    policy = ('{"Version":"2012-10-17","Statement":[{"Effect":"Deny","Principal":"*","Action":"s3:GetObject",'
              f'"Resource":"arn:aws:s3:::{bucket}/secret/*"}}]}}')
    s3.put_bucket_policy(Bucket=bucket, Policy=policy)
    assert call(depot, "POST", f"/api/v1/buckets/{bucket}/snapshots", token=tok,
                body={"name": "s1"}).status_code == 201
    assert call(depot, "POST", f"/api/v1/teams/{team}/models", token=tok,
                body={"name": "m", "bucket": bucket, "prefix": ""}).status_code == 201
    key, _ = scoped_credentials(depot, tok, {"model": f"{team}/m"})
    scoped = client_of(depot, key)
    before = depot.snapshot()
    expect_error("AccessDenied", 403, scoped.delete_bucket_policy, Bucket=bucket)
    expect_error("AccessDenied", 403, scoped.put_bucket_policy, Bucket=bucket, Policy=policy)
    expect_error("AccessDenied", 403, scoped.put_bucket_acl, Bucket=bucket, ACL="public-read")
    expect_error("AccessDenied", 403, scoped.put_bucket_versioning, Bucket=bucket,
                 VersioningConfiguration={"Status": "Enabled"})
    expect_error("AccessDenied", 403, scoped.delete_objects, Bucket=bucket,
                 Delete={"Objects": [{"Key": "w.bin"}]})
    expect_error("AccessDenied", 403, scoped.list_objects_v2, Bucket=bucket, Prefix=".snapshots/")
    expect_error("AccessDenied", 403, scoped.get_object, Bucket=bucket, Key=".snapshots/s1/w.bin")
    depot.assert_unchanged(before)
    assert s3.get_bucket_policy(Bucket=bucket)["Policy"] == policy
    # The model's files are the key's to read and write.
    assert scoped.get_object(Bucket=bucket, Key="w.bin")["Body"].read() == b"weights"
    scoped.put_object(Bucket=bucket, Key="config.json", Body=b"{}")
    assert {o["Key"] for o in scoped.list_objects_v2(Bucket=bucket)["Contents"]} == {"w.bin", "config.json"}


def test_a_model_key_reaches_no_snapshot_by_a_copy_or_a_version(depot):
    """The attacker's requests (fourth attack): a key scoped to a model over a whole bucket, refused a read of
    .snapshots/s1/gone.txt (a file deleted since the snapshot), copied it out with CopyObject and
    UploadPartCopy from that path; and a model's token made a version from the snapshot, whose files the
    models view then served. A model's scope never reaches the bucket's snapshots: both are 403 and change
    nothing; the bucket's owner, unscoped, still makes the version."""
    name, tok, team, s3, bucket = team_admin_with_bucket(depot, "snapcopy")
    s3.put_object(Bucket=bucket, Key="gone.txt", Body=b"in the snapshot only")
    assert call(depot, "POST", f"/api/v1/buckets/{bucket}/snapshots", token=tok,
                body={"name": "s1"}).status_code == 201
    s3.delete_object(Bucket=bucket, Key="gone.txt")
    s3.put_object(Bucket=bucket, Key="w.bin", Body=b"weights")
    assert call(depot, "POST", f"/api/v1/teams/{team}/models", token=tok,
                body={"name": "m", "bucket": bucket, "prefix": ""}).status_code == 201
    key, token = scoped_credentials(depot, tok, {"model": f"{team}/m"})
    scoped = client_of(depot, key)
    upload = s3.create_multipart_upload(Bucket=bucket, Key="parts")["UploadId"]
    before = depot.snapshot()
    versions = depot.db.scalar("SELECT count(*) FROM model_versions")
    source = {"Bucket": bucket, "Key": ".snapshots/s1/gone.txt"}
    expect_error("AccessDenied", 403, scoped.copy_object, Bucket=bucket, Key="stolen.txt", CopySource=source)
    expect_error("AccessDenied", 403, scoped.upload_part_copy, Bucket=bucket, Key="parts", UploadId=upload,
                 PartNumber=1, CopySource=source)
    assert_problem(call(depot, "POST", f"/api/v1/teams/{team}/models/m/versions", token=token,
                        body={"snapshot": "s1"}), 403, "access-denied")
    depot.assert_unchanged(before)
    assert depot.db.scalar("SELECT count(*) FROM model_versions") == versions
    s3.abort_multipart_upload(Bucket=bucket, Key="parts", UploadId=upload)
    r = call(depot, "POST", f"/api/v1/teams/{team}/models/m/versions", token=tok, body={"snapshot": "s1"})
    assert r.status_code == 201, r.text


def test_a_model_stops_reading_its_bucket_when_the_owner_who_bound_it_leaves(depot):
    """The attacker's finding (third attack, A4): a user bound their own bucket into a team's model and was
    removed from the team; the team went on freezing the bucket's new content into versions. The team reads
    the bucket because whoever bound it could: once the bucket's owner is not a member, a new version is 409
    naming them and nothing is made; the versions made stay readable, and adding the owner back resumes."""
    name, tok, team, s3, bucket = team_model_with_a_version(depot, "orphan", b"v1")
    admin = token_for(depot, "alice")["token"]
    assert call(depot, "DELETE", f"/api/v1/teams/{team}/members/{name}", token=admin).status_code == 204
    s3.put_object(Bucket=bucket, Key="m/w.bin", Body=b"written after leaving")
    versions = depot.db.scalar("SELECT count(*) FROM model_versions")
    problem = assert_problem(call(depot, "POST", f"/api/v1/teams/{team}/models/m/versions", token=admin, body={}),
                             409, "conflict")
    assert name in problem["detail"], problem
    assert depot.db.scalar("SELECT count(*) FROM model_versions") == versions
    assert depot.client("alice").get_object(Bucket="models", Key=f"{team}/m/1/w.bin")["Body"].read() == b"v1"
    assert call(depot, "PUT", f"/api/v1/teams/{team}/members/{name}", token=admin,
                body={"role": "writer"}).status_code == 200
    assert call(depot, "POST", f"/api/v1/teams/{team}/models/m/versions", token=admin, body={}).status_code == 201


def listed_buckets(client) -> list[str]:
    return sorted(b["Name"] for b in client.list_buckets()["Buckets"])


def test_list_buckets_under_a_scoped_key_lists_only_what_the_scope_reaches(depot, owner):
    """Issue 22 item 6: ListBuckets under a bucket-scoped key listed every bucket of the owner. A bucket or
    prefix scope lists its bucket, a model or alias scope its model's bucket, read_only everything."""
    scoped, other = owner["scoped"], owner["other"]
    team = "atk-" + secrets.token_hex(3)
    admin = token_for(depot, "alice")["token"]
    assert call(depot, "POST", "/api/v1/teams", token=admin, body={"name": team}).status_code == 201
    assert call(depot, "PUT", f"/api/v1/teams/{team}/members/{owner['user']}", token=admin,
                body={"role": "admin"}).status_code == 200
    owner["s3"].put_object(Bucket=other, Key="m/w.bin", Body=b"model file")
    assert call(depot, "POST", f"/api/v1/teams/{team}/models", token=owner["token"],
                body={"name": "m", "bucket": other, "prefix": "m/"}).status_code == 201
    assert call(depot, "POST", f"/api/v1/teams/{team}/models/m/versions", token=owner["token"],
                body={}).status_code == 201
    assert call(depot, "PUT", f"/api/v1/teams/{team}/models/m/aliases/stable", token=owner["token"],
                body={"version": 1}).status_code == 200
    everything = listed_buckets(owner["s3"])
    assert {scoped, other} <= set(everything)
    for scope, want in (({"bucket": scoped}, [scoped]), ({"bucket": scoped, "prefix": "p/"}, [scoped]),
                        ({"model": f"{team}/m"}, [other]), ({"model": f"{team}/m", "alias": "stable"}, [other]),
                        ({"read_only": True}, everything)):
        key, _ = scoped_credentials(depot, owner["token"], scope)
        assert listed_buckets(client_of(depot, key)) == want, scope


@pytest.fixture(scope="module")
def released(depot):
    """A bucket owner's model with version 1 released under alias `stable` (production is protected: it needs an approved version), and the working copy moved
    on since: m/w.bin overwritten (the bucket is versioned, so the older bytes are a version too) and
    m/new.bin added."""
    name = "alias-atk-" + secrets.token_hex(3)
    depot.add_user(name, name)
    tok = token_for(depot, name)["token"]
    admin = token_for(depot, "alice")["token"]
    team = "atk-rel-" + secrets.token_hex(3)
    assert call(depot, "POST", "/api/v1/teams", token=admin, body={"name": team}).status_code == 201
    assert call(depot, "PUT", f"/api/v1/teams/{team}/members/{name}", token=admin,
                body={"role": "admin"}).status_code == 200
    s3 = depot.client(name)
    bucket = unique_bucket_name("atk-released")
    s3.create_bucket(Bucket=bucket)
    s3.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": "Enabled"})
    first = s3.put_object(Bucket=bucket, Key="m/w.bin", Body=b"released weights")
    assert call(depot, "POST", f"/api/v1/teams/{team}/models", token=tok,
                body={"name": "m", "bucket": bucket, "prefix": "m/"}).status_code == 201
    assert call(depot, "POST", f"/api/v1/teams/{team}/models/m/versions", token=tok, body={}).status_code == 201
    assert call(depot, "PUT", f"/api/v1/teams/{team}/models/m/aliases/stable", token=tok,
                body={"version": 1}).status_code == 200
    live = s3.put_object(Bucket=bucket, Key="m/w.bin", Body=b"work in progress, not released")
    s3.put_object(Bucket=bucket, Key="m/new.bin", Body=b"not in any version")
    key, _ = scoped_credentials(depot, tok, {"model": f"{team}/m", "alias": "stable"})
    return {"user": name, "team": team, "bucket": bucket, "key": key, "s3": s3,
            "first_version": first["VersionId"], "live_version": live["VersionId"]}


def test_an_alias_key_reads_the_frozen_file_not_the_live_object(depot, released):
    """Issue 22 item 7: an alias-scoped key read the working copy overwritten after the release: the scope
    check asked only whether the path is a file of the aliased version, then GetObject served the live
    object. At the bucket path it now serves exactly the frozen bytes the models view serves."""
    bucket, team = released["bucket"], released["team"]
    client = client_of(depot, released["key"])
    assert client.get_object(Bucket=bucket, Key="m/w.bin")["Body"].read() == b"released weights"
    head = client.head_object(Bucket=bucket, Key="m/w.bin")
    view = client.head_object(Bucket="models", Key=f"{team}/m/stable/w.bin")
    assert head["ContentLength"] == len(b"released weights")
    assert head["ETag"] == view["ETag"]
    assert client.get_object(Bucket=bucket, Key="m/w.bin", Range="bytes=0-7")["Body"].read() == b"released"
    # The owner's own key still reads the working copy: nothing was changed to make the above true.
    assert released["s3"].get_object(Bucket=bucket, Key="m/w.bin")["Body"].read() == \
        b"work in progress, not released"


def test_an_alias_key_reads_no_object_version_listing_or_metadata_of_live_objects(depot, released):
    """Issue 22 item 7: versionId was honoured (any older or newer version of a released path could be read),
    and other reads of live objects must not leak either: versions, listings, attributes, ACLs, uploads."""
    bucket = released["bucket"]
    client = client_of(depot, released["key"])
    before = depot.snapshot((bucket, released["user"]))
    for version in (released["first_version"], released["live_version"]):
        expect_error("AccessDenied", 403, client.get_object, Bucket=bucket, Key="m/w.bin", VersionId=version)
        with pytest.raises(botocore.exceptions.ClientError) as e:
            client.head_object(Bucket=bucket, Key="m/w.bin", VersionId=version)
        assert e.value.response["ResponseMetadata"]["HTTPStatusCode"] == 403
    expect_error("AccessDenied", 403, client.get_object_attributes, Bucket=bucket, Key="m/w.bin",
                 ObjectAttributes=["ETag", "ObjectSize"])
    expect_error("AccessDenied", 403, client.get_object_acl, Bucket=bucket, Key="m/w.bin")
    expect_error("AccessDenied", 403, client.get_object, Bucket=bucket, Key="m/new.bin")
    for listing in (lambda: client.list_objects_v2(Bucket=bucket, Prefix="m/"),
                    lambda: client.list_objects(Bucket=bucket, Prefix="m/"),
                    lambda: client.list_object_versions(Bucket=bucket, Prefix="m/"),
                    lambda: client.list_multipart_uploads(Bucket=bucket, Prefix="m/")):
        expect_error("AccessDenied", 403, listing)
    # The snapshot view of the bucket holds live objects too.
    expect_error("AccessDenied", 403, client.get_object, Bucket=bucket, Key=".snapshots/any/m/w.bin")
    depot.assert_unchanged(before)


@pytest.fixture(scope="module")
def foreign_team(depot):
    """A team alice (the installation admin) does not belong to, with a released model."""
    name, tok, team, s3, bucket = team_model_with_a_version(depot, "view", b"weights")
    admin = token_for(depot, "alice")["token"]
    members = call(depot, "GET", f"/api/v1/teams/{team}/members", token=admin).json()["items"]
    assert "alice" not in {m["user"] for m in members}
    return team


def view_keys(client, prefix: str = "") -> list[str]:
    out = []
    for page in client.get_paginator("list_objects_v2").paginate(Bucket="models", Prefix=prefix):
        out += [o["Key"] for o in page.get("Contents", [])]
    return out


def test_an_installation_admin_sees_every_team_in_the_models_view(depot, foreign_team):
    """Issue 22 item 13: the models view reads ctx.who.is_admin, which authentication never set, so an
    installation admin saw only the teams they belong to. Now every team; a non-member still sees none."""
    alice = depot.client("alice")
    assert view_keys(alice, f"{foreign_team}/") == [f"{foreign_team}/m/1/w.bin", f"{foreign_team}/m/latest/w.bin"]
    assert f"{foreign_team}/" in {p["Prefix"] for p in alice.list_objects_v2(
        Bucket="models", Delimiter="/").get("CommonPrefixes", [])}
    assert alice.get_object(Bucket="models", Key=f"{foreign_team}/m/1/w.bin")["Body"].read() == b"weights"
    # bob is no installation admin and no member: the team's keys do not exist for him.
    bob = depot.client("bob")
    assert view_keys(bob, f"{foreign_team}/") == []
    assert all(not k.startswith(f"{foreign_team}/") for k in view_keys(bob))
    expect_error("NoSuchKey", 404, bob.get_object, Bucket="models", Key=f"{foreign_team}/m/1/w.bin")


def test_the_models_view_lists_in_pages_read_page_by_page(depot):
    """Issue 22 item 12 (a guard for the fix, which main passes too): the view listing loaded every model of
    a team and up to 100,000 versions per model on every request; it now reads each level from the database
    in pages of the listing's own size. Paging with a small max-keys must still give exactly the full listing
    in byte order, where refs sort by their key segment ("prod-old/" before "prod/", "10/" before "2/")."""
    name = "view-pages-" + secrets.token_hex(3)
    depot.add_user(name, name)
    tok = token_for(depot, name)["token"]
    admin = token_for(depot, "alice")["token"]
    team = "atk-pages-" + secrets.token_hex(3)
    assert call(depot, "POST", "/api/v1/teams", token=admin, body={"name": team}).status_code == 201
    assert call(depot, "PUT", f"/api/v1/teams/{team}/members/{name}", token=admin,
                body={"role": "admin"}).status_code == 200
    s3 = depot.client(name)
    bucket = unique_bucket_name("atk-pages")
    s3.create_bucket(Bucket=bucket)
    for model in ("m", "m-x"):
        s3.put_object(Bucket=bucket, Key=f"{model}/a.bin", Body=b"a")
        s3.put_object(Bucket=bucket, Key=f"{model}/b.bin", Body=b"b")
        assert call(depot, "POST", f"/api/v1/teams/{team}/models", token=tok,
                    body={"name": model, "bucket": bucket, "prefix": f"{model}/"}).status_code == 201
    refs = {"m": [], "m-x": []}
    for n in range(1, 12):
        body = {"label": "v1.0"} if n == 10 else {}
        assert call(depot, "POST", f"/api/v1/teams/{team}/models/m/versions", token=tok,
                    body=body).status_code == 201
        refs["m"].append(str(n))
    refs["m"].append("v1.0")
    for alias, version in (("prod", 11), ("prod-old", 3)):
        assert call(depot, "PUT", f"/api/v1/teams/{team}/models/m/aliases/{alias}", token=tok,
                    body={"version": version}).status_code == 200
        refs["m"].append(alias)
    assert call(depot, "POST", f"/api/v1/teams/{team}/models/m-x/versions", token=tok, body={}).status_code == 201
    refs["m-x"].append("1")
    # Every new version moves the unprotected alias `latest` too.
    refs["m"].append("latest")
    refs["m-x"].append("latest")
    want = sorted((f"{team}/{model}/{ref}/{f}" for model, names in refs.items() for ref in names
                   for f in ("a.bin", "b.bin")), key=lambda k: k.encode())
    for max_keys in (1, 3, 1000):
        keys, token = [], None
        while True:
            extra = {"ContinuationToken": token} if token else {}
            page = s3.list_objects_v2(Bucket="models", Prefix=f"{team}/", MaxKeys=max_keys, **extra)
            keys += [o["Key"] for o in page.get("Contents", [])]
            if not page["IsTruncated"]:
                break
            token = page["NextContinuationToken"]
        assert keys == want, max_keys
    # Refs as common prefixes, a few at a time, in segment order.
    prefixes, token = [], None
    while True:
        extra = {"ContinuationToken": token} if token else {}
        page = s3.list_objects_v2(Bucket="models", Prefix=f"{team}/m/", Delimiter="/", MaxKeys=4, **extra)
        prefixes += [p["Prefix"] for p in page.get("CommonPrefixes", [])]
        if not page["IsTruncated"]:
            break
        token = page["NextContinuationToken"]
    assert prefixes == sorted((f"{team}/m/{r}/" for r in refs["m"]), key=lambda k: k.encode())
    # Models as common prefixes: "m-x/" sorts before "m/".
    page = s3.list_objects_v2(Bucket="models", Prefix=f"{team}/", Delimiter="/")
    assert [p["Prefix"] for p in page["CommonPrefixes"]] == [f"{team}/m-x/", f"{team}/m/"]
    # A marker inside a ref, and a start-after between models.
    page = s3.list_objects_v2(Bucket="models", Prefix=f"{team}/", StartAfter=f"{team}/m/10/a.bin", MaxKeys=2)
    assert [o["Key"] for o in page["Contents"]] == want[want.index(f"{team}/m/10/a.bin") + 1:][:2]
