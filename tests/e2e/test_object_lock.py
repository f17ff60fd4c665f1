"""S3 Object Lock (issue 27): WORM for regulated model releases. Buckets created with Object Lock (versioning
Enabled for good) or given it later (versioning Enabled first), default retention, per-version retention
(GOVERNANCE, COMPLIANCE) and legal hold through boto3 and the aws cli; locked versions survive every delete
(a delete without a version id only adds a delete marker), GOVERNANCE gives way only to
x-amz-bypass-governance-retention from a caller allowed to bypass (the bucket's owner or an installation
admin, with a credential reaching the whole bucket), COMPLIANCE to nobody, not even an installation admin.
S3's exact errors; every refusal changes nothing. The lifecycle side is in test_lifecycle.py."""

from __future__ import annotations

import base64
import hashlib
import json
from datetime import datetime, timedelta, timezone

import pytest

from depot_harness import assert_error_response, expect_error, unique_bucket_name
from rest import call, token_for


def md5_of(body: bytes) -> str:
    return base64.b64encode(hashlib.md5(body).digest()).decode()


def later(days: int = 1, seconds: int = 0) -> datetime:
    return (datetime.now(timezone.utc) + timedelta(days=days, seconds=seconds)).replace(microsecond=0)


def iso(t: datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def lock_bucket(s3, hint: str) -> str:
    name = unique_bucket_name(hint)
    s3.create_bucket(Bucket=name, ObjectLockEnabledForBucket=True)
    return name


def put(s3, bucket, key, body=b"weights", **kw):
    return s3.put_object(Bucket=bucket, Key=key, Body=body, ContentMD5=md5_of(body), **kw)["VersionId"]


def lock_state(depot, bucket):
    """Every version and the bucket's lock settings, as stored: what a refused request must leave as it was."""
    return depot.db.query(
        "SELECT o.key, o.version_id, o.is_delete_marker, coalesce(o.lock_mode, ''), "
        "coalesce(o.lock_until::text, ''), coalesce(o.legal_hold::text, ''), b.versioning, b.object_lock::text, "
        "coalesce(b.lock_default_mode, ''), coalesce(b.lock_default_days, 0), coalesce(b.lock_default_years, 0) "
        f"FROM buckets b LEFT JOIN object_versions o ON o.bucket_id = b.id WHERE b.name = '{bucket}' "
        "ORDER BY o.id")


def version_ids(s3, bucket, key):
    r = s3.list_object_versions(Bucket=bucket, Prefix=key)
    return ([v["VersionId"] for v in r.get("Versions", []) if v["Key"] == key],
            [m["VersionId"] for m in r.get("DeleteMarkers", []) if m["Key"] == key])


def test_bucket_configuration_and_versioning_stays_enabled(depot, s3, bucket):
    expect_error("ObjectLockConfigurationNotFoundError", 404, s3.get_object_lock_configuration, Bucket=bucket)
    # Enabling on an existing bucket needs versioning Enabled (as AWS allows since 2023).
    config = {"ObjectLockEnabled": "Enabled"}
    before = lock_state(depot, bucket)
    expect_error("InvalidBucketState", 409, s3.put_object_lock_configuration, Bucket=bucket,
                 ObjectLockConfiguration=config)
    s3.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": "Suspended"})
    expect_error("InvalidBucketState", 409, s3.put_object_lock_configuration, Bucket=bucket,
                 ObjectLockConfiguration=config)
    s3.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": "Enabled"})
    s3.put_object_lock_configuration(Bucket=bucket, ObjectLockConfiguration=config)
    assert s3.get_object_lock_configuration(Bucket=bucket)["ObjectLockConfiguration"] == config
    rule = {"DefaultRetention": {"Mode": "GOVERNANCE", "Days": 3}}
    s3.put_object_lock_configuration(Bucket=bucket, ObjectLockConfiguration={**config, "Rule": rule})
    assert s3.get_object_lock_configuration(Bucket=bucket)["ObjectLockConfiguration"] == {**config, "Rule": rule}
    # Versioning can no longer be suspended; Enabled again is no change and no error.
    before = lock_state(depot, bucket)
    expect_error("InvalidBucketState", 409, s3.put_bucket_versioning, Bucket=bucket,
                 VersioningConfiguration={"Status": "Suspended"})
    s3.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": "Enabled"})
    assert lock_state(depot, bucket) == before
    # A configuration without a rule clears the default retention; Object Lock stays on.
    s3.put_object_lock_configuration(Bucket=bucket, ObjectLockConfiguration=config)
    assert s3.get_object_lock_configuration(Bucket=bucket)["ObjectLockConfiguration"] == config


def test_create_bucket_with_object_lock_enables_versioning(depot, s3):
    name = lock_bucket(s3, "lock-create")
    assert s3.get_bucket_versioning(Bucket=name)["Status"] == "Enabled"
    assert s3.get_object_lock_configuration(Bucket=name)["ObjectLockConfiguration"] == {"ObjectLockEnabled": "Enabled"}
    r = depot.request("PUT", f"/{unique_bucket_name('lock-bad')}",
                      headers={"x-amz-bucket-object-lock-enabled": "maybe"})
    assert_error_response(r, "InvalidArgument", 400)


@pytest.mark.parametrize("body,code,status", [
    (b"<ObjectLockConfiguration><ObjectLockEnabled>Disabled</ObjectLockEnabled></ObjectLockConfiguration>",
     "MalformedXML", 400),
    (b"<ObjectLockConfiguration><Rule><DefaultRetention><Mode>GOVERNANCE</Mode><Days>1</Days>"
     b"</DefaultRetention></Rule></ObjectLockConfiguration>", "MalformedXML", 400),
    (b"<ObjectLockConfiguration><ObjectLockEnabled>Enabled</ObjectLockEnabled><Rule><DefaultRetention>"
     b"<Mode>GOVERNANCE</Mode><Days>1</Days><Years>1</Years></DefaultRetention></Rule></ObjectLockConfiguration>",
     "MalformedXML", 400),
    (b"<ObjectLockConfiguration><ObjectLockEnabled>Enabled</ObjectLockEnabled><Rule><DefaultRetention>"
     b"<Mode>GOVERNANCE</Mode></DefaultRetention></Rule></ObjectLockConfiguration>", "MalformedXML", 400),
    (b"<ObjectLockConfiguration><ObjectLockEnabled>Enabled</ObjectLockEnabled><Rule><DefaultRetention>"
     b"<Mode>FOREVER</Mode><Days>1</Days></DefaultRetention></Rule></ObjectLockConfiguration>", "MalformedXML", 400),
    (b"<ObjectLockConfiguration><ObjectLockEnabled>Enabled</ObjectLockEnabled><Rule><DefaultRetention>"
     b"<Mode>COMPLIANCE</Mode><Days>0</Days></DefaultRetention></Rule></ObjectLockConfiguration>",
     "InvalidArgument", 400),
    (b"<ObjectLockConfiguration><ObjectLockEnabled>Enabled</ObjectLockEnabled><Rule><DefaultRetention>"
     b"<Mode>COMPLIANCE</Mode><Years>-1</Years></DefaultRetention></Rule></ObjectLockConfiguration>",
     "InvalidArgument", 400),
    (b"<Nope/>", "MalformedXML", 400),
])
def test_bad_configurations_change_nothing(depot, s3, body, code, status):
    name = lock_bucket(s3, "lock-badcfg")
    before = lock_state(depot, name)
    assert_error_response(depot.request("PUT", f"/{name}?object-lock", body=body), code, status)
    assert lock_state(depot, name) == before


def test_default_retention_applies_to_new_versions(depot, s3):
    name = lock_bucket(s3, "lock-default")
    s3.put_object_lock_configuration(Bucket=name, ObjectLockConfiguration={
        "ObjectLockEnabled": "Enabled", "Rule": {"DefaultRetention": {"Mode": "GOVERNANCE", "Days": 2}}})
    v = put(s3, name, "model.bin")
    head = s3.head_object(Bucket=name, Key="model.bin")
    assert head["ObjectLockMode"] == "GOVERNANCE"
    until = head["ObjectLockRetainUntilDate"]
    assert later(2, -120) < until < later(2, 120)
    got = s3.get_object_retention(Bucket=name, Key="model.bin", VersionId=v)["Retention"]
    assert got["Mode"] == "GOVERNANCE" and got["RetainUntilDate"] == until
    # Explicit headers win over the default; multipart uploads and copies get it too.
    explicit = later(10)
    put(s3, name, "explicit", ObjectLockMode="COMPLIANCE", ObjectLockRetainUntilDate=explicit)
    got = s3.get_object_retention(Bucket=name, Key="explicit")["Retention"]
    assert got == {"Mode": "COMPLIANCE", "RetainUntilDate": explicit}
    up = s3.create_multipart_upload(Bucket=name, Key="mp", ObjectLockLegalHoldStatus="ON")
    part = s3.upload_part(Bucket=name, Key="mp", UploadId=up["UploadId"], PartNumber=1, Body=b"p")
    s3.complete_multipart_upload(Bucket=name, Key="mp", UploadId=up["UploadId"],
                                 MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": part["ETag"]}]})
    assert s3.get_object_legal_hold(Bucket=name, Key="mp")["LegalHold"] == {"Status": "ON"}
    assert s3.get_object_retention(Bucket=name, Key="mp")["Retention"]["Mode"] == "GOVERNANCE"
    s3.copy_object(Bucket=name, Key="copy", CopySource={"Bucket": name, "Key": "explicit"})
    # A copy never takes its source's lock: the bucket's default.
    assert s3.get_object_retention(Bucket=name, Key="copy")["Retention"]["Mode"] == "GOVERNANCE"
    # A delete marker is never locked, and deleting without a version id is allowed.
    marker = s3.delete_object(Bucket=name, Key="model.bin")
    assert marker["DeleteMarker"] is True
    assert version_ids(s3, name, "model.bin") == ([v], [marker["VersionId"]])
    # The marker itself can go (it is not locked); the version stays.
    s3.delete_object(Bucket=name, Key="model.bin", VersionId=marker["VersionId"])
    assert s3.get_object(Bucket=name, Key="model.bin")["Body"].read() == b"weights"


def test_governance_retention_and_who_may_bypass_it(depot, s3):
    name = lock_bucket(s3, "lock-gov")
    until = later(5)
    v = put(s3, name, "release", ObjectLockMode="GOVERNANCE", ObjectLockRetainUntilDate=until)
    before = lock_state(depot, name)
    # The locked version survives deletes by version id, one by one and in bulk.
    expect_error("AccessDenied", 403, s3.delete_object, Bucket=name, Key="release", VersionId=v)
    r = s3.delete_objects(Bucket=name, Delete={"Objects": [{"Key": "release", "VersionId": v}]})
    assert [e["Code"] for e in r["Errors"]] == ["AccessDenied"] and not r.get("Deleted")
    # Shortening or removing retention without the bypass: refused.
    expect_error("AccessDenied", 403, s3.put_object_retention, Bucket=name, Key="release", VersionId=v,
                 Retention={"Mode": "GOVERNANCE", "RetainUntilDate": later(1)})
    expect_error("AccessDenied", 403, s3.put_object_retention, Bucket=name, Key="release", VersionId=v,
                 Retention={})
    assert lock_state(depot, name) == before
    # Extending is always allowed.
    extended = later(6)
    s3.put_object_retention(Bucket=name, Key="release", VersionId=v,
                            Retention={"Mode": "GOVERNANCE", "RetainUntilDate": extended})
    assert s3.get_object_retention(Bucket=name, Key="release")["Retention"]["RetainUntilDate"] == extended

    # Scoped credentials of the owner cannot bypass: a prefix key (even on its own keys), a read-only key.
    alice = token_for(depot, "alice")["token"]
    prefix_key = call(depot, "POST", "/api/v1/keys", token=alice,
                      body={"scope": {"bucket": name, "prefix": "rel"}}).json()
    scoped = depot.client(access_key=prefix_key["access_key_id"], secret=prefix_key["secret_access_key"])
    ro_key = call(depot, "POST", "/api/v1/keys", token=alice, body={"scope": {"read_only": True}}).json()
    ro = depot.client(access_key=ro_key["access_key_id"], secret=ro_key["secret_access_key"])
    before = lock_state(depot, name)
    for client in (scoped, ro):
        expect_error("AccessDenied", 403, client.delete_object, Bucket=name, Key="release", VersionId=v,
                     BypassGovernanceRetention=True)
        expect_error("AccessDenied", 403, client.put_object_retention, Bucket=name, Key="release", VersionId=v,
                     Retention={}, BypassGovernanceRetention=True)
    expect_error("AccessDenied", 403, ro.put_object_legal_hold, Bucket=name, Key="release", VersionId=v,
                 LegalHold={"Status": "ON"})
    # Another user's key: refused, bypass or not.
    expect_error("AccessDenied", 403, depot.client("bob").delete_object, Bucket=name, Key="release", VersionId=v,
                 BypassGovernanceRetention=True)
    expect_error("AccessDenied", 403, depot.client("bob").put_object_retention, Bucket=name, Key="release",
                 VersionId=v, Retention={"Mode": "GOVERNANCE", "RetainUntilDate": later(30)})
    assert lock_state(depot, name) == before
    # A bucket-wide key of the owner may bypass: shorten, then delete.
    bucket_key = call(depot, "POST", "/api/v1/keys", token=alice, body={"scope": {"bucket": name}}).json()
    whole = depot.client(access_key=bucket_key["access_key_id"], secret=bucket_key["secret_access_key"])
    whole.put_object_retention(Bucket=name, Key="release", VersionId=v, BypassGovernanceRetention=True,
                               Retention={"Mode": "GOVERNANCE", "RetainUntilDate": later(1)})
    rows = depot.db.query("SELECT details::text FROM audit_log WHERE action = 'object.retention' "
                          f"AND resource = '{name}/release' ORDER BY id")
    assert '"bypass_governance": true' in rows[-1][0] or '"bypass_governance":true' in rows[-1][0]
    r = whole.delete_objects(Bucket=name, BypassGovernanceRetention=True,
                             Delete={"Objects": [{"Key": "release", "VersionId": v}]})
    assert [d["VersionId"] for d in r["Deleted"]] == [v] and not r.get("Errors")
    assert version_ids(s3, name, "release") == ([], [])


def _policy(*statements: dict) -> str:
    return json.dumps({"Version": "2012-10-17", "Statement": list(statements)})


def _allow(principal: str, actions, resource: str) -> dict:
    return {"Effect": "Allow", "Principal": {"AWS": principal}, "Action": actions, "Resource": resource}


def test_a_write_grant_never_bypasses_governance(depot, s3, s3_bob):
    """Issue 34 item 2: bob holds only a WRITE grant on alice's lock bucket and sends
    x-amz-bypass-governance-retention: true to delete a GOVERNANCE-locked version by id (was 204), in bulk,
    and to clear its retention. Bypassing needs the bucket's owner, an installation admin or a bucket policy
    naming s3:BypassGovernanceRetention; an ACL grant never does. Each is refused and nothing changes."""
    name = unique_bucket_name("lock-grant")
    s3.create_bucket(Bucket=name, ObjectLockEnabledForBucket=True, ObjectOwnership="ObjectWriter")
    s3.put_bucket_acl(Bucket=name, GrantFullControl='id="alice"', GrantWrite='id="bob"')
    v = put(s3, name, "release", ObjectLockMode="GOVERNANCE", ObjectLockRetainUntilDate=later(5))
    before, snap = lock_state(depot, name), depot.snapshot(name)
    expect_error("AccessDenied", 403, s3_bob.delete_object, Bucket=name, Key="release", VersionId=v,
                 BypassGovernanceRetention=True)
    expect_error("AccessDenied", 403, s3_bob.delete_objects, Bucket=name, BypassGovernanceRetention=True,
                 Delete={"Objects": [{"Key": "release", "VersionId": v}]})
    for retention in ({}, {"Mode": "GOVERNANCE", "RetainUntilDate": later(1)}):
        expect_error("AccessDenied", 403, s3_bob.put_object_retention, Bucket=name, Key="release", VersionId=v,
                     Retention=retention, BypassGovernanceRetention=True)
    assert lock_state(depot, name) == before
    depot.assert_unchanged(snap)
    assert s3.get_object_retention(Bucket=name, Key="release", VersionId=v)["Retention"]["Mode"] == "GOVERNANCE"
    # The grant itself still works: bob writes (a new version) and deletes without the header (a marker).
    put(s3_bob, name, "release", body=b"bob's")
    assert s3_bob.delete_object(Bucket=name, Key="release")["DeleteMarker"] is True
    assert s3.get_object(Bucket=name, Key="release", VersionId=v)["Body"].read() == b"weights"


def test_a_write_grant_never_locks_what_it_writes(depot, s3, s3_bob):
    """A WRITE grantee PUT a version with COMPLIANCE retention or a legal hold into alice's lock bucket (200):
    a lock nobody, alice included, could lift for years. As on AWS, a write that sets a lock also needs
    s3:PutObjectRetention / s3:PutObjectLegalHold: 403 for every kind of write, nothing stored; a policy
    naming the action lets it through."""
    name = unique_bucket_name("lock-write")
    s3.create_bucket(Bucket=name, ObjectLockEnabledForBucket=True, ObjectOwnership="ObjectWriter")
    s3.put_bucket_acl(Bucket=name, GrantFullControl='id="alice"', GrantWrite='id="bob"')
    put(s3, name, "src")
    snap = depot.snapshot(name)
    compliance = {"ObjectLockMode": "COMPLIANCE", "ObjectLockRetainUntilDate": later(3650)}
    for lock in (compliance, {"ObjectLockLegalHoldStatus": "ON"}):
        expect_error("AccessDenied", 403, put, s3_bob, name, "trap", **lock)
        expect_error("AccessDenied", 403, s3_bob.copy_object, Bucket=name, Key="trap",
                     CopySource={"Bucket": name, "Key": "src"}, **lock)
        expect_error("AccessDenied", 403, s3_bob.create_multipart_upload, Bucket=name, Key="trap", **lock)
    depot.assert_unchanged(snap)
    # Without a lock the grant writes; with a policy naming the action the lock is set too.
    put(s3_bob, name, "plain")
    s3.put_bucket_policy(Bucket=name, Policy=_policy(
        _allow("bob", ["s3:PutObjectLegalHold"], f"arn:aws:s3:::{name}/*")))
    put(s3_bob, name, "held", ObjectLockLegalHoldStatus="ON")
    assert s3.get_object_legal_hold(Bucket=name, Key="held")["LegalHold"]["Status"] == "ON"
    s3.put_object_legal_hold(Bucket=name, Key="held", LegalHold={"Status": "OFF"})


def test_only_a_policy_naming_bypass_governance_retention_lets_another_user_bypass(depot, s3, s3_bob):
    """Issue 34 item 2: a policy allowing bob s3:DeleteObject, s3:DeleteObjectVersion and
    s3:PutObjectRetention (or s3:*) does not let him clear a GOVERNANCE retention nor delete the version
    through DeleteObjects with the bypass header (was 200, cleared and deleted). A statement naming
    s3:BypassGovernanceRetention does, for the keys it names; its Deny binds the owner too."""
    name = lock_bucket(s3, "lock-pol")
    until = later(5)
    v_keep = put(s3, name, "keep/model", ObjectLockMode="GOVERNANCE", ObjectLockRetainUntilDate=until)
    v_tmp = put(s3, name, "tmp/model", ObjectLockMode="GOVERNANCE", ObjectLockRetainUntilDate=until)
    objects = {"Objects": [{"Key": "keep/model", "VersionId": v_keep}, {"Key": "tmp/model", "VersionId": v_tmp}]}
    actions = ["s3:DeleteObject", "s3:DeleteObjectVersion", "s3:PutObjectRetention", "s3:GetObjectRetention"]
    for granted in (actions, "s3:*"):
        s3.put_bucket_policy(Bucket=name, Policy=_policy(_allow("bob", granted, f"arn:aws:s3:::{name}/*")))
        before, snap = lock_state(depot, name), depot.snapshot(name)
        for key, v in (("keep/model", v_keep), ("tmp/model", v_tmp)):
            expect_error("AccessDenied", 403, s3_bob.put_object_retention, Bucket=name, Key=key, VersionId=v,
                         Retention={}, BypassGovernanceRetention=True)
            expect_error("AccessDenied", 403, s3_bob.delete_object, Bucket=name, Key=key, VersionId=v,
                         BypassGovernanceRetention=True)
        expect_error("AccessDenied", 403, s3_bob.delete_objects, Bucket=name, BypassGovernanceRetention=True,
                     Delete=objects)
        assert lock_state(depot, name) == before
        depot.assert_unchanged(snap)
        # What the policy grants without the bypass still holds: extending is not bypassing.
        s3_bob.put_object_retention(Bucket=name, Key="keep/model", VersionId=v_keep,
                                    Retention={"Mode": "GOVERNANCE", "RetainUntilDate": until})
    # Named for tmp/*: bob bypasses there, and only there.
    s3.put_bucket_policy(Bucket=name, Policy=_policy(
        _allow("bob", actions, f"arn:aws:s3:::{name}/*"),
        _allow("bob", "s3:BypassGovernanceRetention", f"arn:aws:s3:::{name}/tmp/*")))
    r = s3_bob.delete_objects(Bucket=name, BypassGovernanceRetention=True, Delete=objects)
    assert [d["VersionId"] for d in r["Deleted"]] == [v_tmp]
    assert [(e["Key"], e["Code"]) for e in r["Errors"]] == [("keep/model", "AccessDenied")]
    assert version_ids(s3, name, "keep/model") == ([v_keep], [])
    assert version_ids(s3, name, "tmp/model") == ([], [])
    # A Deny of the bypass binds the owner (an installation admin here) too; without the header nothing changes.
    s3.put_bucket_policy(Bucket=name, Policy=_policy({
        "Effect": "Deny", "Principal": "*", "Action": "s3:BypassGovernanceRetention",
        "Resource": f"arn:aws:s3:::{name}/*"}))
    before = lock_state(depot, name)
    expect_error("AccessDenied", 403, s3.delete_object, Bucket=name, Key="keep/model", VersionId=v_keep,
                 BypassGovernanceRetention=True)
    expect_error("AccessDenied", 403, s3.put_object_retention, Bucket=name, Key="keep/model", VersionId=v_keep,
                 Retention={}, BypassGovernanceRetention=True)
    assert lock_state(depot, name) == before
    s3.delete_bucket_policy(Bucket=name)
    s3.delete_object(Bucket=name, Key="keep/model", VersionId=v_keep, BypassGovernanceRetention=True)
    assert version_ids(s3, name, "keep/model") == ([], [])


def test_compliance_cannot_be_shortened_even_by_an_installation_admin(depot, s3, s3_bob):
    # bob's bucket; alice is an installation admin.
    name = lock_bucket(s3_bob, "lock-comp")
    v = put(s3_bob, name, "audit.parquet", ObjectLockMode="COMPLIANCE", ObjectLockRetainUntilDate=later(3))
    before = lock_state(depot, name)
    for client in (s3_bob, s3):
        expect_error("AccessDenied", 403, client.delete_object, Bucket=name, Key="audit.parquet", VersionId=v,
                     BypassGovernanceRetention=True)
        for retention in ({"Mode": "COMPLIANCE", "RetainUntilDate": later(2)},
                          {"Mode": "GOVERNANCE", "RetainUntilDate": later(30)}, {}):
            expect_error("AccessDenied", 403, client.put_object_retention, Bucket=name, Key="audit.parquet",
                         VersionId=v, Retention=retention, BypassGovernanceRetention=True)
    assert lock_state(depot, name) == before
    # Not even straight in the database: the guard refuses what a forgotten path would do.
    with pytest.raises(Exception, match="is locked"):
        depot.db.query("DELETE FROM object_versions o USING buckets b WHERE b.id = o.bucket_id "
                       f"AND b.name = '{name}' AND NOT o.is_delete_marker")
    with pytest.raises(Exception, match="is locked"):
        depot.db.query("UPDATE object_versions o SET lock_until = now() FROM buckets b WHERE b.id = o.bucket_id "
                       f"AND b.name = '{name}'")
    assert lock_state(depot, name) == before
    # Extending is allowed (same mode, a later date).
    s3_bob.put_object_retention(Bucket=name, Key="audit.parquet", VersionId=v,
                                Retention={"Mode": "COMPLIANCE", "RetainUntilDate": later(4)})
    # A delete without a version id only hides it behind a marker.
    assert s3_bob.delete_object(Bucket=name, Key="audit.parquet")["DeleteMarker"] is True
    assert s3_bob.get_object(Bucket=name, Key="audit.parquet", VersionId=v)["Body"].read() == b"weights"
    # The bucket is not empty, so it stays too.
    expect_error("BucketNotEmpty", 409, s3_bob.delete_bucket, Bucket=name)


def test_legal_hold_blocks_deletion_whatever_the_retention(depot, s3):
    name = lock_bucket(s3, "lock-hold")
    v = put(s3, name, "evidence", ObjectLockLegalHoldStatus="ON")
    assert s3.head_object(Bucket=name, Key="evidence")["ObjectLockLegalHoldStatus"] == "ON"
    expect_error("NoSuchObjectLockConfiguration", 404, s3.get_object_retention, Bucket=name, Key="evidence")
    before = lock_state(depot, name)
    expect_error("AccessDenied", 403, s3.delete_object, Bucket=name, Key="evidence", VersionId=v,
                 BypassGovernanceRetention=True)
    assert lock_state(depot, name) == before
    s3.put_object_legal_hold(Bucket=name, Key="evidence", VersionId=v, LegalHold={"Status": "OFF"})
    assert s3.get_object_legal_hold(Bucket=name, Key="evidence")["LegalHold"] == {"Status": "OFF"}
    s3.delete_object(Bucket=name, Key="evidence", VersionId=v)
    assert version_ids(s3, name, "evidence") == ([], [])
    # A version without a legal hold ever set.
    put(s3, name, "plain")
    expect_error("NoSuchObjectLockConfiguration", 404, s3.get_object_legal_hold, Bucket=name, Key="plain")


def test_lock_parameters_are_checked_as_s3_does(depot, s3, bucket):
    name = lock_bucket(s3, "lock-params")
    s3.put_object(Bucket=bucket, Key="k", Body=b"x")
    before_plain, before_lock = lock_state(depot, bucket), lock_state(depot, name)
    date = iso(later(1))
    body = b"x"
    md5 = {"Content-MD5": md5_of(body)}
    for path, headers, code in (
        # A bucket without Object Lock refuses lock parameters and lock requests.
        (f"/{bucket}/k", {**md5, "x-amz-object-lock-legal-hold": "ON"}, "InvalidRequest"),
        # Both mode and date, or neither.
        (f"/{name}/k", {**md5, "x-amz-object-lock-mode": "GOVERNANCE"}, "InvalidArgument"),
        (f"/{name}/k", {**md5, "x-amz-object-lock-retain-until-date": date}, "InvalidArgument"),
        (f"/{name}/k", {**md5, "x-amz-object-lock-mode": "governance", "x-amz-object-lock-retain-until-date": date},
         "InvalidArgument"),
        (f"/{name}/k", {**md5, "x-amz-object-lock-mode": "GOVERNANCE",
                        "x-amz-object-lock-retain-until-date": "2020-01-01T00:00:00Z"}, "InvalidArgument"),
        (f"/{name}/k", {**md5, "x-amz-object-lock-mode": "GOVERNANCE",
                        "x-amz-object-lock-retain-until-date": "tomorrow"}, "InvalidArgument"),
        (f"/{name}/k", {**md5, "x-amz-object-lock-legal-hold": "on"}, "InvalidArgument"),
        # An integrity check is required with lock parameters.
        (f"/{name}/k", {"x-amz-object-lock-legal-hold": "ON"}, "InvalidRequest"),
    ):
        assert_error_response(depot.request("PUT", path, body=body, headers=headers), code, 400)
    for call_ in (lambda: s3.get_object_retention(Bucket=bucket, Key="k"),
                  lambda: s3.put_object_legal_hold(Bucket=bucket, Key="k", LegalHold={"Status": "ON"}),
                  lambda: s3.put_object_retention(Bucket=bucket, Key="k",
                                                  Retention={"Mode": "GOVERNANCE", "RetainUntilDate": later(1)})):
        assert expect_error("InvalidRequest", 400, call_)["Error"]["Message"] == \
            "Bucket is missing Object Lock Configuration"
    put(s3, name, "k")
    for body in (b"<Retention><Mode>GOVERNANCE</Mode></Retention>",
                 b"<Retention><Mode>KEEP</Mode><RetainUntilDate>2099-01-01T00:00:00Z</RetainUntilDate></Retention>",
                 b"<Retention><Mode>GOVERNANCE</Mode><RetainUntilDate>soon</RetainUntilDate></Retention>"):
        assert_error_response(depot.request("PUT", f"/{name}/k?retention", body=body), "MalformedXML", 400)
    assert_error_response(depot.request("PUT", f"/{name}/k?retention", body=(
        b"<Retention><Mode>GOVERNANCE</Mode><RetainUntilDate>2020-01-01T00:00:00Z</RetainUntilDate></Retention>")),
        "InvalidArgument", 400)
    assert_error_response(depot.request("PUT", f"/{name}/k?legal-hold",
                                        body=b"<LegalHold><Status>MAYBE</Status></LegalHold>"), "MalformedXML", 400)
    expect_error("NoSuchKey", 404, s3.get_object_retention, Bucket=name, Key="missing")
    assert lock_state(depot, bucket) == before_plain
    assert [r[0] for r in before_lock] == [""]  # no version before
    assert [r[0] for r in lock_state(depot, name)] == ["k"]  # only the put of "k"


def test_aws_cli_object_lock(depot, tmp_path):
    name = unique_bucket_name("lock-cli")
    depot.aws("s3api", "create-bucket", "--bucket", name, "--object-lock-enabled-for-bucket")
    depot.aws("s3api", "put-object-lock-configuration", "--bucket", name, "--object-lock-configuration",
              json.dumps({"ObjectLockEnabled": "Enabled",
                          "Rule": {"DefaultRetention": {"Mode": "GOVERNANCE", "Years": 1}}}))
    got = depot.aws_json("s3api", "get-object-lock-configuration", "--bucket", name)
    assert got["ObjectLockConfiguration"]["Rule"]["DefaultRetention"] == {"Mode": "GOVERNANCE", "Years": 1}
    f = tmp_path / "release.bin"
    f.write_bytes(b"release")
    v = depot.aws_json("s3api", "put-object", "--bucket", name, "--key", "release.bin", "--body", str(f),
                       "--content-md5", md5_of(b"release"))["VersionId"]
    depot.aws("s3api", "put-object-legal-hold", "--bucket", name, "--key", "release.bin", "--version-id", v,
              "--legal-hold", "Status=ON")
    assert depot.aws_json("s3api", "get-object-legal-hold", "--bucket", name, "--key", "release.bin")[
        "LegalHold"] == {"Status": "ON"}
    out = depot.aws("s3api", "delete-object", "--bucket", name, "--key", "release.bin", "--version-id", v,
                    "--bypass-governance-retention", check=False)
    assert out.returncode != 0 and "AccessDenied" in out.stderr
    depot.aws("s3api", "put-object-legal-hold", "--bucket", name, "--key", "release.bin", "--version-id", v,
              "--legal-hold", "Status=OFF")
    out = depot.aws("s3api", "delete-object", "--bucket", name, "--key", "release.bin", "--version-id", v,
                    check=False)
    assert out.returncode != 0 and "AccessDenied" in out.stderr
    depot.aws("s3api", "put-object-retention", "--bucket", name, "--key", "release.bin", "--version-id", v,
              "--retention", json.dumps({"Mode": "GOVERNANCE", "RetainUntilDate": iso(later(400))}))
    got = depot.aws_json("s3api", "get-object-retention", "--bucket", name, "--key", "release.bin")
    assert got["Retention"]["Mode"] == "GOVERNANCE"
    depot.aws("s3api", "delete-object", "--bucket", name, "--key", "release.bin", "--version-id", v,
              "--bypass-governance-retention")
    versions = depot.aws_json("s3api", "list-object-versions", "--bucket", name)
    assert not versions.get("Versions")


@pytest.mark.parametrize("path,body", [
    ("k?retention", b"<Retention><Mode>GOVERNANCE</Mode><Mode>COMPLIANCE</Mode>"
                    b"<RetainUntilDate>2099-01-01T00:00:00Z</RetainUntilDate></Retention>"),
    ("k?retention", b"<Retention><Mode>GOVERNANCE</Mode><RetainUntilDate>2099-01-01T00:00:00Z</RetainUntilDate>"
                    b"<RetainUntilDate>2030-01-01T00:00:00Z</RetainUntilDate></Retention>"),
    ("k?legal-hold", b"<LegalHold><Status>ON</Status><Status>OFF</Status></LegalHold>"),
    ("?object-lock", b"<ObjectLockConfiguration><ObjectLockEnabled>Enabled</ObjectLockEnabled><Rule>"
                     b"<DefaultRetention><Mode>GOVERNANCE</Mode><Mode>COMPLIANCE</Mode><Days>1</Days>"
                     b"</DefaultRetention></Rule></ObjectLockConfiguration>"),
    ("?versioning", b"<VersioningConfiguration><Status>Suspended</Status><Status>Enabled</Status>"
                    b"</VersioningConfiguration>"),
], ids=["mode-twice", "date-twice", "status-twice", "default-mode-twice", "versioning-status-twice"])
def test_a_single_element_given_twice_is_malformed_and_changes_nothing(depot, s3, path, body):
    """The attacker's request (second attack, N7): `<Mode>` twice was accepted and the first one won, so a
    reader of the body (a proxy, a reviewer) and depotd disagreed on the lock it set. AWS refuses it."""
    name = lock_bucket(s3, "lock-twice")
    put(s3, name, "k")
    before = lock_state(depot, name)
    headers = {"Content-MD5": md5_of(body)}
    assert_error_response(depot.request("PUT", f"/{name}/{path}", body=body, headers=headers), "MalformedXML", 400)
    assert lock_state(depot, name) == before
