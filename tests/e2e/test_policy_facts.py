"""The facts a bucket policy is asked with (issue 34, second attack on bf60ad2): the version a request is
about when its query does not name it (a key of DeleteObjects, a copy's source), what a REST route states
rather than what its query and headers say, every key a snapshot deletion purges or a restore lists and
copies (with its tags), a snapshot view's key, and what GET and HEAD show of a version's Object Lock state.
Each test is the attacker's request, refused now and answered before."""

from __future__ import annotations

from depot_harness import expect_error
from rest import assert_problem, call, sha, token_for
from test_bucket_policy import allow, deny, new_bucket, policy


def versioned_bucket(depot, s3, hint="facts"):
    bucket = new_bucket(depot, hint=hint)
    s3.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": "Enabled"})
    return bucket


def test_delete_objects_asks_about_each_keys_version(depot, s3):
    """#1: a Deny of s3:DeleteObjectVersion conditioned on s3:VersionId held for DeleteObject?versionId= but
    not for DeleteObjects, whose body names the version: the protected version was deleted for good."""
    bucket = versioned_bucket(depot, s3)
    kept = s3.put_object(Bucket=bucket, Key="ckpt", Body=b"release")["VersionId"]
    other = s3.put_object(Bucket=bucket, Key="ckpt", Body=b"scratch")["VersionId"]
    s3.put_bucket_policy(Bucket=bucket, Policy=policy(
        deny("*", "s3:DeleteObjectVersion", f"arn:aws:s3:::{bucket}/*",
             Condition={"StringEquals": {"s3:VersionId": kept}})))
    expect_error("AccessDenied", 403, s3.delete_object, Bucket=bucket, Key="ckpt", VersionId=kept)
    before = depot.snapshot(bucket)
    r = s3.delete_objects(Bucket=bucket, Delete={"Objects": [{"Key": "ckpt", "VersionId": kept}]})
    assert [e["Code"] for e in r.get("Errors", [])] == ["AccessDenied"], r
    assert r.get("Deleted", []) == []
    depot.assert_unchanged(before, bucket)
    # Another version of the key is not the protected one.
    r = s3.delete_objects(Bucket=bucket, Delete={"Objects": [{"Key": "ckpt", "VersionId": other}]})
    assert [d["VersionId"] for d in r["Deleted"]] == [other], r
    assert s3.get_object(Bucket=bucket, Key="ckpt", VersionId=kept)["Body"].read() == b"release"
    s3.delete_bucket_policy(Bucket=bucket)


def test_a_copy_source_is_asked_about_with_its_version(depot, s3, s3_bob):
    """#2: bob may read alice's ckpt except one version (a Deny of s3:GetObjectVersion where s3:VersionId is
    it); GetObject?versionId= was 403 but a CopyObject whose x-amz-copy-source names that version copied it
    into bob's bucket."""
    src = versioned_bucket(depot, s3)
    secret = s3.put_object(Bucket=src, Key="ckpt", Body=b"embargoed weights")["VersionId"]
    public = s3.put_object(Bucket=src, Key="ckpt", Body=b"public weights")["VersionId"]
    s3.put_bucket_policy(Bucket=src, Policy=policy(
        allow({"AWS": "bob"}, ["s3:GetObject", "s3:GetObjectVersion"], f"arn:aws:s3:::{src}/*"),
        deny({"AWS": "bob"}, "s3:GetObjectVersion", f"arn:aws:s3:::{src}/*",
             Condition={"StringEquals": {"s3:VersionId": secret}})))
    expect_error("AccessDenied", 403, s3_bob.get_object, Bucket=src, Key="ckpt", VersionId=secret)
    bobs = new_bucket(depot, owner="bob", hint="facts-bob")
    before = depot.snapshot(bobs)
    for copy in (lambda: s3_bob.copy_object(Bucket=bobs, Key="stolen",
                                            CopySource={"Bucket": src, "Key": "ckpt", "VersionId": secret}),
                 lambda: s3_bob.upload_part_copy(
                     Bucket=bobs, Key="stolen", PartNumber=1,
                     UploadId=s3_bob.create_multipart_upload(Bucket=bobs, Key="stolen")["UploadId"],
                     CopySource={"Bucket": src, "Key": "ckpt", "VersionId": secret})):
        expect_error("AccessDenied", 403, copy)
    for u in s3_bob.list_multipart_uploads(Bucket=bobs).get("Uploads", []):
        s3_bob.abort_multipart_upload(Bucket=bobs, Key=u["Key"], UploadId=u["UploadId"])
    depot.assert_unchanged(before, bobs)
    s3_bob.copy_object(Bucket=bobs, Key="copied", CopySource={"Bucket": src, "Key": "ckpt", "VersionId": public})
    assert s3_bob.get_object(Bucket=bobs, Key="copied")["Body"].read() == b"public weights"
    s3.delete_bucket_policy(Bucket=src)


def test_rest_writes_are_asked_about_what_they_store_not_their_headers(depot, s3):
    """#3: under a Deny of unencrypted writes (Null s3:x-amz-server-side-encryption), a digest copy or a
    restore sent with x-amz-server-side-encryption: AES256 passed, and stored the object unencrypted. A REST
    write stores no encryption whatever its headers say: it is refused."""
    tok = token_for(depot, "alice")["token"]
    bucket = new_bucket(depot)
    s3.put_object(Bucket=bucket, Key="a", Body=b"plain bytes")
    assert call(depot, "POST", f"/api/v1/buckets/{bucket}/snapshots", token=tok,
                body={"name": "s1"}).status_code == 201
    s3.put_bucket_policy(Bucket=bucket, Policy=policy(
        deny("*", "s3:PutObject", f"arn:aws:s3:::{bucket}/*",
             Condition={"Null": {"s3:x-amz-server-side-encryption": "true"}})))
    expect_error("AccessDenied", 403, s3.put_object, Bucket=bucket, Key="b", Body=b"x")
    before = depot.snapshot(bucket)
    sse = {"x-amz-server-side-encryption": "AES256"}
    r = call(depot, "POST", f"/api/v1/buckets/{bucket}/objects", token=tok, headers=sse,
             body={"key": "clone", "sha256": sha(b"plain bytes"), "size": 11})
    assert_problem(r, 403, "access-denied")
    r = call(depot, "POST", f"/api/v1/buckets/{bucket}/snapshots/s1/restore", token=tok, headers=sse,
             body={"target_prefix": "restored/"})
    assert_problem(r, 403, "access-denied")
    depot.assert_unchanged(before, bucket)
    # Without the Deny the same requests write.
    s3.delete_bucket_policy(Bucket=bucket)
    r = call(depot, "POST", f"/api/v1/buckets/{bucket}/objects", token=tok, headers=sse,
             body={"key": "clone", "sha256": sha(b"plain bytes"), "size": 11})
    assert r.status_code == 201, r.text


def test_rest_routes_list_what_they_state_not_their_query(depot, s3):
    """#4: a Deny of listing anything but public/ (s3:prefix StringNotLike public/*) was passed by the REST
    bucket routes with ?prefix=public/x, and a restore never asked for s3:ListBucket at all, so it copied
    the names of secret/ keys into a readable prefix."""
    tok = token_for(depot, "alice")["token"]
    bucket = new_bucket(depot)
    s3.put_object(Bucket=bucket, Key="public/a", Body=b"a")
    s3.put_object(Bucket=bucket, Key="secret/plan-acquire-acme", Body=b"s")
    assert call(depot, "POST", f"/api/v1/buckets/{bucket}/snapshots", token=tok,
                body={"name": "s1"}).status_code == 201
    s3.put_bucket_policy(Bucket=bucket, Policy=policy(
        deny("*", "s3:ListBucket", f"arn:aws:s3:::{bucket}",
             Condition={"StringNotLike": {"s3:prefix": ["public/*"]}})))
    expect_error("AccessDenied", 403, s3.list_objects_v2, Bucket=bucket, Prefix="secret/")
    assert [o["Key"] for o in s3.list_objects_v2(Bucket=bucket, Prefix="public/")["Contents"]] == ["public/a"]
    for path in (f"/api/v1/buckets/{bucket}/usage?prefix=public/x", f"/api/v1/buckets/{bucket}?prefix=public/x",
                 f"/api/v1/buckets/{bucket}/snapshots?prefix=public/x"):
        assert_problem(call(depot, "GET", path, token=tok), 403, "access-denied")
    before = depot.snapshot(bucket)
    r = call(depot, "POST", f"/api/v1/buckets/{bucket}/snapshots/s1/restore", token=tok,
             body={"prefix": "secret/", "target_prefix": "public/leak/"})
    assert_problem(r, 403, "access-denied")
    depot.assert_unchanged(before, bucket)
    # What the policy lets it list is restored.
    r = call(depot, "POST", f"/api/v1/buckets/{bucket}/snapshots/s1/restore", token=tok,
             body={"prefix": "public/", "target_prefix": "public/again/"})
    assert r.status_code == 200 and r.json()["objects"] == 1, r.text
    s3.delete_bucket_policy(Bucket=bucket)


def test_deleting_a_snapshot_asks_about_each_key_it_purges(depot, s3):
    """#5: deleting a snapshot asked s3:DeleteObjectVersion about the snapshot's prefix only, so under a Deny
    of deleting secret/* versions it deleted for good the only copy of secret/b's old bytes."""
    tok = token_for(depot, "alice")["token"]
    bucket = new_bucket(depot)
    s3.put_object(Bucket=bucket, Key="public/a", Body=b"a")
    s3.put_object(Bucket=bucket, Key="secret/b", Body=b"the only copy")
    assert call(depot, "POST", f"/api/v1/buckets/{bucket}/snapshots", token=tok,
                body={"name": "s1"}).status_code == 201
    s3.put_object(Bucket=bucket, Key="secret/b", Body=b"overwritten")  # the old bytes live in s1 alone
    s3.put_bucket_policy(Bucket=bucket, Policy=policy(
        deny("*", "s3:DeleteObjectVersion", f"arn:aws:s3:::{bucket}/secret/*")))
    before = depot.snapshot(bucket)
    r = call(depot, "DELETE", f"/api/v1/buckets/{bucket}/snapshots/s1", token=tok)
    assert_problem(r, 403, "access-denied")
    depot.assert_unchanged(before, bucket)
    got = s3.get_object(Bucket=bucket, Key=".snapshots/s1/secret/b")["Body"].read()
    assert got == b"the only copy"
    # A snapshot that purges nothing under secret/ goes.
    assert call(depot, "POST", f"/api/v1/buckets/{bucket}/snapshots", token=tok,
                body={"name": "s2", "prefix": "public/"}).status_code == 201
    s3.put_object(Bucket=bucket, Key="public/a", Body=b"a2")
    assert call(depot, "DELETE", f"/api/v1/buckets/{bucket}/snapshots/s2", token=tok).status_code == 204
    s3.delete_bucket_policy(Bucket=bucket)
    assert call(depot, "DELETE", f"/api/v1/buckets/{bucket}/snapshots/s1", token=tok).status_code == 204


def test_tags_read_through_a_snapshot_or_a_restore_obey_a_tag_deny(depot, s3):
    """#8: under a Deny of reading tags, a CopyObject from the snapshot view (.snapshots/s1/doc) carried the
    denied tags (the policy was asked about the view's literal key), and so did a restore."""
    tok = token_for(depot, "alice")["token"]
    bucket = new_bucket(depot)
    s3.put_object(Bucket=bucket, Key="doc", Body=b"d", Tagging="classification=secret")
    s3.put_object(Bucket=bucket, Key="plain", Body=b"p")
    assert call(depot, "POST", f"/api/v1/buckets/{bucket}/snapshots", token=tok,
                body={"name": "s1"}).status_code == 201
    s3.put_bucket_policy(Bucket=bucket, Policy=policy(
        deny("*", ["s3:GetObjectTagging", "s3:GetObjectVersionTagging"], f"arn:aws:s3:::{bucket}/*")))
    expect_error("AccessDenied", 403, s3.get_object_tagging, Bucket=bucket, Key="doc")
    before = depot.snapshot(bucket)
    expect_error("AccessDenied", 403, s3.copy_object, Bucket=bucket, Key="copied",
                 CopySource={"Bucket": bucket, "Key": ".snapshots/s1/doc"})
    r = call(depot, "POST", f"/api/v1/buckets/{bucket}/snapshots/s1/restore", token=tok,
             body={"target_prefix": "restored/"})
    assert_problem(r, 403, "access-denied")
    depot.assert_unchanged(before, bucket)
    # Untagged keys carry nothing to read.
    r = call(depot, "POST", f"/api/v1/buckets/{bucket}/snapshots/s1/restore", token=tok,
             body={"prefix": "plain", "target_prefix": "restored/"})
    assert r.status_code == 200 and r.json()["objects"] == 1, r.text
    s3.delete_bucket_policy(Bucket=bucket)


def test_object_lock_headers_are_shown_only_to_who_may_read_them(depot, s3, s3_bob):
    """#15: bob may read the object but is denied s3:GetObjectRetention and s3:GetObjectLegalHold; HEAD and
    GET still showed him the retention mode, its date and the legal hold."""
    bucket = new_bucket(depot, hint="facts-lock")
    s3.delete_bucket(Bucket=bucket)
    s3.create_bucket(Bucket=bucket, ObjectLockEnabledForBucket=True)
    s3.put_object(Bucket=bucket, Key="k", Body=b"x", ObjectLockMode="GOVERNANCE",
                  ObjectLockRetainUntilDate="2099-01-01T00:00:00Z", ObjectLockLegalHoldStatus="ON")
    s3.put_bucket_policy(Bucket=bucket, Policy=policy(
        allow({"AWS": "bob"}, ["s3:GetObject", "s3:GetObjectVersion"], f"arn:aws:s3:::{bucket}/*"),
        deny({"AWS": "bob"}, ["s3:GetObjectRetention", "s3:GetObjectLegalHold"], f"arn:aws:s3:::{bucket}/*")))
    expect_error("AccessDenied", 403, s3_bob.get_object_retention, Bucket=bucket, Key="k")
    lock = ("x-amz-object-lock-mode", "x-amz-object-lock-retain-until-date", "x-amz-object-lock-legal-hold")
    for read in (s3_bob.head_object, s3_bob.get_object):
        headers = read(Bucket=bucket, Key="k")["ResponseMetadata"]["HTTPHeaders"]
        assert [h for h in lock if h in headers] == [], headers
    headers = s3.head_object(Bucket=bucket, Key="k")["ResponseMetadata"]["HTTPHeaders"]
    assert [h for h in lock if h in headers] == list(lock)
    s3.delete_bucket_policy(Bucket=bucket)
