"""Bucket lifecycle (issue 27): Put/Get/DeleteBucketLifecycleConfiguration through boto3 and the aws cli with
S3's validation (a refused configuration changes nothing), and its execution by the cleanup task on a depotd
whose lifecycle day lasts one second (--lifecycle-day-seconds 1) and whose cleanup runs every second:
current versions expire (deleted, or hidden behind a delete marker in a versioned bucket), noncurrent
versions beyond the newest kept ones, expired delete markers and incomplete multipart uploads; prefix, size
and tag filters (the version's own tags, as they are when the rule runs); a Disabled rule does nothing; a
frozen model version and a snapshot keep their bytes."""

from __future__ import annotations

import json
import time

import pytest

from depot_harness import Depot, assert_error_response, expect_error, unique_bucket_name
from rest import call
from test_metrics import scrape
from test_webhooks import make_team, team_call

DAYS_1 = {"Days": 1}


# ---- configuration (the session's depotd: its cleanup does not run during the suite)


def test_configuration_round_trip_and_removal(depot, s3, bucket):
    expect_error("NoSuchLifecycleConfiguration", 404, s3.get_bucket_lifecycle_configuration, Bucket=bucket)
    rules = [
        {"ID": "checkpoints", "Status": "Enabled",
         "Filter": {"And": {"Prefix": "ckpt/", "ObjectSizeGreaterThan": 10, "ObjectSizeLessThan": 1 << 30}},
         "Expiration": {"Days": 30},
         "NoncurrentVersionExpiration": {"NoncurrentDays": 7, "NewerNoncurrentVersions": 3},
         "AbortIncompleteMultipartUpload": {"DaysAfterInitiation": 2}},
        {"ID": "logs", "Status": "Disabled", "Filter": {"Prefix": "logs/"},
         "Expiration": {"ExpiredObjectDeleteMarker": True}},
        {"ID": "legacy", "Status": "Enabled", "Prefix": "tmp/", "Expiration": DAYS_1},
        {"ID": "tagged", "Status": "Enabled", "Filter": {"Tag": {"Key": "tier", "Value": "scratch"}},
         "Expiration": {"Days": 2}, "NoncurrentVersionExpiration": {"NoncurrentDays": 1}},
        {"ID": "both", "Status": "Enabled",
         "Filter": {"And": {"Prefix": "runs/", "Tags": [{"Key": "a", "Value": "1"}, {"Key": "b", "Value": ""}],
                            "ObjectSizeLessThan": 100}},
         "Expiration": DAYS_1},
    ]
    s3.put_bucket_lifecycle_configuration(Bucket=bucket, LifecycleConfiguration={"Rules": rules})
    got = s3.get_bucket_lifecycle_configuration(Bucket=bucket)["Rules"]
    assert got == rules
    assert s3.delete_bucket_lifecycle(Bucket=bucket)["ResponseMetadata"]["HTTPStatusCode"] == 204
    expect_error("NoSuchLifecycleConfiguration", 404, s3.get_bucket_lifecycle_configuration, Bucket=bucket)
    # Deleting what is not there is no error, as in S3.
    assert s3.delete_bucket_lifecycle(Bucket=bucket)["ResponseMetadata"]["HTTPStatusCode"] == 204


def test_a_rule_without_id_gets_one_and_a_date_is_kept_at_midnight(depot, s3, bucket):
    s3.put_bucket_lifecycle_configuration(Bucket=bucket, LifecycleConfiguration={"Rules": [
        {"Status": "Enabled", "Filter": {}, "Expiration": {"Date": "2031-02-03T00:00:00Z"}}]})
    (rule,) = s3.get_bucket_lifecycle_configuration(Bucket=bucket)["Rules"]
    assert len(rule["ID"]) == 32
    assert rule["Expiration"]["Date"].isoformat() == "2031-02-03T00:00:00+00:00"


def test_aws_cli_sets_reads_and_deletes_a_configuration(depot, bucket):
    config = {"Rules": [{"ID": "tmp", "Status": "Enabled", "Filter": {"Prefix": "tmp/"},
                         "Expiration": {"Days": 3}}]}
    depot.aws("s3api", "put-bucket-lifecycle-configuration", "--bucket", bucket,
              "--lifecycle-configuration", json.dumps(config))
    got = depot.aws_json("s3api", "get-bucket-lifecycle-configuration", "--bucket", bucket)
    assert got["Rules"] == config["Rules"]
    depot.aws("s3api", "delete-bucket-lifecycle", "--bucket", bucket)
    out = depot.aws("s3api", "get-bucket-lifecycle-configuration", "--bucket", bucket, check=False)
    assert out.returncode != 0 and "NoSuchLifecycleConfiguration" in out.stderr


def rule(**fields) -> dict:
    return {"ID": "r", "Status": "Enabled", "Filter": {}, **fields}


TAG = {"Key": "k", "Value": "v"}


@pytest.mark.parametrize("rules,code,status,message", [
    ([rule(Expiration={"Days": 0})], "InvalidArgument", 400,
     "'Days' for Expiration action must be a positive integer"),
    ([rule(Expiration={"Date": "2030-01-01T12:00:00Z"})], "InvalidArgument", 400,
     "'Date' must be at midnight GMT"),
    ([rule(NoncurrentVersionExpiration={"NoncurrentDays": 0})], "InvalidArgument", 400,
     "'NoncurrentDays' for NoncurrentVersionExpiration action must be a positive integer"),
    ([rule(AbortIncompleteMultipartUpload={"DaysAfterInitiation": 0})], "InvalidArgument", 400,
     "'DaysAfterInitiation' for AbortIncompleteMultipartUpload action must be a positive integer"),
    ([rule(ID="x" * 256, Expiration=DAYS_1)], "InvalidArgument", 400,
     "ID length should not exceed allowed limit of 255"),
    ([rule(Expiration=DAYS_1), rule(Expiration={"Days": 2})], "InvalidArgument", 400,
     "Rule ID must be unique. Found same ID for more than one rule"),
    ([rule(Filter={"And": {"ObjectSizeGreaterThan": 100, "ObjectSizeLessThan": 50}}, Expiration=DAYS_1)],
     "InvalidArgument", 400, "ObjectSizeGreaterThan must be less than ObjectSizeLessThan"),
    ([rule()], "InvalidRequest", 400, "At least one action needs to be specified in a rule"),
    ([rule(Filter={"Tag": TAG}, AbortIncompleteMultipartUpload={"DaysAfterInitiation": 1})], "InvalidRequest",
     400, "AbortIncompleteMultipartUpload cannot be specified with Tags."),
    ([rule(Filter={"And": {"Prefix": "a/", "Tags": [TAG]}}, Expiration={"ExpiredObjectDeleteMarker": True})],
     "InvalidRequest", 400, "ExpiredObjectDeleteMarker cannot be specified with Tags."),
    ([rule(Filter={"And": {"Tags": [TAG, {"Key": "k", "Value": "w"}]}}, Expiration=DAYS_1)], "InvalidRequest",
     400, "Duplicate Tag Keys are not allowed."),
    ([rule(Filter={"Tag": {"Key": "k" * 129, "Value": "v"}}, Expiration=DAYS_1)], "InvalidTag", 400,
     "The TagKey you have provided is invalid"),
    ([rule(Filter={"Tag": {"Key": "k", "Value": "v" * 257}}, Expiration=DAYS_1)], "InvalidTag", 400,
     "The TagValue you have provided is invalid"),
    ([rule(Status="enabled", Expiration=DAYS_1)], "MalformedXML", 400, None),
    ([rule(ID=f"r{i}", Expiration=DAYS_1) for i in range(1001)], "MalformedXML", 400, None),
    ([rule(Transitions=[{"Days": 30, "StorageClass": "GLACIER"}])], "NotImplemented", 501, None),
    ([rule(NoncurrentVersionTransitions=[{"NoncurrentDays": 30, "StorageClass": "GLACIER"}])],
     "NotImplemented", 501, None),
], ids=["days", "date", "noncurrent-days", "abort-days", "long-id", "same-id", "sizes", "no-action",
        "tag-abort", "tag-marker", "tag-key-twice", "tag-key-long", "tag-value-long", "status", "1001-rules",
        "transition", "noncurrent-transition"])
def test_configurations_s3_refuses_change_nothing(depot, s3, bucket, rules, code, status, message):
    before = {"Rules": [rule(ID="kept", Expiration={"Days": 9})]}
    s3.put_bucket_lifecycle_configuration(Bucket=bucket, LifecycleConfiguration=before)
    err = expect_error(code, status, s3.put_bucket_lifecycle_configuration, Bucket=bucket,
                       LifecycleConfiguration={"Rules": rules})
    if message:
        assert message in err["Error"]["Message"]
    assert s3.get_bucket_lifecycle_configuration(Bucket=bucket)["Rules"] == before["Rules"]


@pytest.mark.parametrize("body", [
    b"<LifecycleConfiguration></LifecycleConfiguration>",
    # Both the legacy Prefix and a Filter, then neither.
    b"<LifecycleConfiguration><Rule><Prefix>a</Prefix><Filter></Filter><Status>Enabled</Status>"
    b"<Expiration><Days>1</Days></Expiration></Rule></LifecycleConfiguration>",
    b"<LifecycleConfiguration><Rule><Status>Enabled</Status><Expiration><Days>1</Days></Expiration></Rule>"
    b"</LifecycleConfiguration>",
    # Two predicates outside And; Days with ExpiredObjectDeleteMarker.
    b"<LifecycleConfiguration><Rule><Filter><Prefix>a</Prefix><ObjectSizeLessThan>9</ObjectSizeLessThan>"
    b"</Filter><Status>Enabled</Status><Expiration><Days>1</Days></Expiration></Rule></LifecycleConfiguration>",
    b"<LifecycleConfiguration><Rule><Filter/><Status>Enabled</Status><Expiration><Days>1</Days>"
    b"<ExpiredObjectDeleteMarker>true</ExpiredObjectDeleteMarker></Expiration></Rule></LifecycleConfiguration>",
    b"<LifecycleConfiguration><Rule><Filter/><Status>Enabled</Status><Expiration><Days>1",
])
def test_malformed_bodies(depot, s3, bucket, body):
    r = depot.request("PUT", f"/{bucket}?lifecycle", body=body)
    assert_error_response(r, "MalformedXML", 400)
    expect_error("NoSuchLifecycleConfiguration", 404, s3.get_bucket_lifecycle_configuration, Bucket=bucket)


def test_another_owner_can_neither_read_nor_change_the_configuration(depot, s3, s3_bob, bucket):
    config = {"Rules": [rule(ID="mine", Expiration={"Days": 5})]}
    s3.put_bucket_lifecycle_configuration(Bucket=bucket, LifecycleConfiguration=config)
    expect_error("AccessDenied", 403, s3_bob.get_bucket_lifecycle_configuration, Bucket=bucket)
    expect_error("AccessDenied", 403, s3_bob.delete_bucket_lifecycle, Bucket=bucket)
    # The attack: expiring everything in someone else's bucket.
    expect_error("AccessDenied", 403, s3_bob.put_bucket_lifecycle_configuration, Bucket=bucket,
                 LifecycleConfiguration={"Rules": [rule(ID="wipe", Expiration=DAYS_1)]})
    assert s3.get_bucket_lifecycle_configuration(Bucket=bucket)["Rules"] == config["Rules"]


# ---- execution: a depotd whose lifecycle day is a second and whose cleanup runs every second


@pytest.fixture(scope="module")
def lc(depot, tmp_path_factory):
    server = Depot(bin_dir=depot.bin_dir, base_url=depot.admin_db.url,
                   workdir=tmp_path_factory.mktemp("lifecycle"))
    server.extra_args = ["--cleanup-interval", "1", "--lifecycle-day-seconds", "1", "--blob-grace", "1"]
    server.setup()
    server.start()
    yield server
    if server.proc is not None and server.proc.poll() is None:
        server.stop()
    server.drop_database()


def passes(server) -> float:
    return scrape(server.endpoint).value("depot_gc_passes_total", result="ok")


def actions(server, action: str) -> float:
    return scrape(server.endpoint).value("depot_lifecycle_actions_total", action=action)


def wait_until(server, predicate, what: str, timeout: float = 30.0):
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"lifecycle did not: {what}"
        time.sleep(0.2)


def wait_passes(server, n: int = 2):
    """Until `n` whole cleanup passes ran from now on."""
    start = passes(server)
    wait_until(server, lambda: passes(server) >= start + n + 1, f"run {n} cleanup passes")


def configure(s3, bucket, *rules):
    s3.put_bucket_lifecycle_configuration(Bucket=bucket, LifecycleConfiguration={"Rules": list(rules)})


def keys(s3, bucket) -> set[str]:
    return {o["Key"] for o in s3.list_objects_v2(Bucket=bucket).get("Contents", [])}


def versions(s3, bucket, prefix) -> list[tuple[str, str, bool]]:
    """(key, version id, is delete marker), by key then newest first."""
    r = s3.list_object_versions(Bucket=bucket, Prefix=prefix)
    out = [(v["Key"], v["VersionId"], False, v["LastModified"]) for v in r.get("Versions", [])]
    out += [(m["Key"], m["VersionId"], True, m["LastModified"]) for m in r.get("DeleteMarkers", [])]
    out.sort(key=lambda v: (v[0], -v[3].timestamp()))
    return [v[:3] for v in out]


def test_current_versions_expire_by_age_and_date_within_their_filters(lc):
    s3 = lc.client("alice")
    bucket = unique_bucket_name("lc-expire")
    s3.create_bucket(Bucket=bucket)
    big, small = b"x" * 100, b"y" * 5
    for key, body in (("tmp/big", big), ("tmp/small", small), ("keep/big", big), ("dated/a", small),
                      ("off/big", big)):
        s3.put_object(Bucket=bucket, Key=key, Body=body)
    before = actions(lc, "expire_current")
    configure(s3, bucket,
              {"ID": "tmp", "Status": "Enabled", "Expiration": DAYS_1,
               "Filter": {"And": {"Prefix": "tmp/", "ObjectSizeGreaterThan": 10}}},
              {"ID": "dated", "Status": "Enabled", "Filter": {"Prefix": "dated/"},
               "Expiration": {"Date": "2020-01-01T00:00:00Z"}},
              {"ID": "off", "Status": "Disabled", "Filter": {"Prefix": "off/"}, "Expiration": DAYS_1})
    wait_until(lc, lambda: keys(s3, bucket) == {"tmp/small", "keep/big", "off/big"}, "expire tmp/big, dated/a")
    wait_passes(lc)
    # The size filter, the prefix and the Disabled rule kept these.
    assert keys(s3, bucket) == {"tmp/small", "keep/big", "off/big"}
    assert actions(lc, "expire_current") - before == 2
    # Unversioned: gone for good, no delete marker.
    assert versions(s3, bucket, "tmp/big") == [] and versions(s3, bucket, "dated/") == []
    # Audited as background work of the lifecycle.
    rows = lc.db.query("SELECT actor, credential, request_id FROM audit_log WHERE action = 'object.delete' "
                       f"AND resource IN ('{bucket}/tmp/big', '{bucket}/dated/a')")
    assert sorted(map(tuple, rows)) == [("system", "lifecycle", "")] * 2


def test_tag_filters_expire_only_objects_whose_current_tags_match(lc):
    s3 = lc.client("alice")
    bucket = unique_bucket_name("lc-tags")
    s3.create_bucket(Bucket=bucket)
    for key, tagging in (("t/match", "k=v&other=1"), ("t/value", "k=w"), ("t/none", ""), ("t/retagged", "k=v"),
                         ("p/both", "a=1&b=2"), ("p/one", "a=1"), ("q/both", "a=1&b=2"), ("off/x", "gone=yes")):
        s3.put_object(Bucket=bucket, Key=key, Body=b"x", Tagging=tagging)
    # The rule sees the tags as they are now, not as they were written.
    s3.put_object_tagging(Bucket=bucket, Key="t/retagged", Tagging={"TagSet": [{"Key": "k", "Value": "kept"}]})
    before = actions(lc, "expire_current")
    configure(s3, bucket,
              {"ID": "tag", "Status": "Enabled", "Filter": {"Tag": {"Key": "k", "Value": "v"}},
               "Expiration": DAYS_1},
              {"ID": "and", "Status": "Enabled", "Expiration": DAYS_1,
               "Filter": {"And": {"Prefix": "p/",
                                  "Tags": [{"Key": "a", "Value": "1"}, {"Key": "b", "Value": "2"}]}}},
              {"ID": "off", "Status": "Disabled", "Filter": {"Tag": {"Key": "gone", "Value": "yes"}},
               "Expiration": DAYS_1})
    kept = {"t/value", "t/none", "t/retagged", "p/one", "q/both", "off/x"}
    wait_until(lc, lambda: keys(s3, bucket) == kept, "expire t/match and p/both")
    wait_passes(lc)
    assert keys(s3, bucket) == kept
    assert actions(lc, "expire_current") - before == 2


def test_tag_filters_select_noncurrent_versions_by_their_own_tags(lc):
    s3 = lc.client("alice")
    bucket = unique_bucket_name("lc-tags-nc")
    s3.create_bucket(Bucket=bucket)
    s3.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": "Enabled"})
    ids = [s3.put_object(Bucket=bucket, Key="k", Body=f"v{i}".encode(), Tagging=tagging)["VersionId"]
           for i, tagging in enumerate(("tier=scratch", "tier=keep", "tier=scratch"))]
    configure(s3, bucket, {"ID": "scratch", "Status": "Enabled",
                           "Filter": {"Tag": {"Key": "tier", "Value": "scratch"}},
                           "NoncurrentVersionExpiration": {"NoncurrentDays": 1}})
    # The oldest version goes; the noncurrent one tagged otherwise and the current one stay.
    want = [("k", ids[2], False), ("k", ids[1], False)]
    wait_until(lc, lambda: versions(s3, bucket, "k") == want, "expire the scratch noncurrent version")
    wait_passes(lc)
    assert versions(s3, bucket, "k") == want


def test_object_lock_keeps_retained_and_held_versions_from_every_rule(lc):
    """Object Lock (test_object_lock.py): a noncurrent version under retention or legal hold outlives a rule
    that expires it; the unlocked one beside it goes. Expiring the current version only adds a marker."""
    import base64
    import hashlib
    from datetime import datetime, timedelta, timezone

    s3 = lc.client("alice")
    bucket = unique_bucket_name("lc-lock")
    s3.create_bucket(Bucket=bucket, ObjectLockEnabledForBucket=True)
    md5 = base64.b64encode(hashlib.md5(b"old").digest()).decode()
    until = datetime.now(timezone.utc) + timedelta(days=1)
    retained = s3.put_object(Bucket=bucket, Key="r/k", Body=b"old", ContentMD5=md5, ObjectLockMode="COMPLIANCE",
                             ObjectLockRetainUntilDate=until)["VersionId"]
    held = s3.put_object(Bucket=bucket, Key="h/k", Body=b"old", ContentMD5=md5,
                         ObjectLockLegalHoldStatus="ON")["VersionId"]
    free = s3.put_object(Bucket=bucket, Key="f/k", Body=b"old")["VersionId"]
    newer = {key: s3.put_object(Bucket=bucket, Key=key, Body=b"new")["VersionId"] for key in ("r/k", "h/k", "f/k")}
    configure(s3, bucket, {"ID": "nc", "Status": "Enabled", "Filter": {},
                           "NoncurrentVersionExpiration": {"NoncurrentDays": 1}})
    wait_until(lc, lambda: versions(s3, bucket, "f/") == [("f/k", newer["f/k"], False)], "expire f/k's old version")
    wait_passes(lc)
    assert versions(s3, bucket, "r/") == [("r/k", newer["r/k"], False), ("r/k", retained, False)]
    assert versions(s3, bucket, "h/") == [("h/k", newer["h/k"], False), ("h/k", held, False)]
    assert free not in {v[1] for v in versions(s3, bucket, "")}


def test_versioned_expiry_places_a_delete_marker_once(lc):
    s3 = lc.client("alice")
    bucket = unique_bucket_name("lc-versioned")
    s3.create_bucket(Bucket=bucket)
    s3.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": "Enabled"})
    v = s3.put_object(Bucket=bucket, Key="cur/a", Body=b"a")["VersionId"]
    configure(s3, bucket, {"ID": "cur", "Status": "Enabled", "Filter": {"Prefix": "cur/"}, "Expiration": DAYS_1})
    wait_until(lc, lambda: [x[2] for x in versions(s3, bucket, "cur/")] == [True, False], "place a delete marker")
    wait_passes(lc)
    got = versions(s3, bucket, "cur/")
    assert [x[2] for x in got] == [True, False] and got[1][1] == v
    assert s3.get_object(Bucket=bucket, Key="cur/a", VersionId=v)["Body"].read() == b"a"


def test_noncurrent_versions_expire_beyond_the_newest_kept(lc):
    s3 = lc.client("alice")
    bucket = unique_bucket_name("lc-noncurrent")
    s3.create_bucket(Bucket=bucket)
    s3.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": "Enabled"})
    ids = [s3.put_object(Bucket=bucket, Key="nc/k", Body=f"v{i}".encode())["VersionId"] for i in range(5)]
    other = [s3.put_object(Bucket=bucket, Key="other/k", Body=f"v{i}".encode())["VersionId"] for i in range(2)]
    before = actions(lc, "expire_noncurrent")
    configure(s3, bucket, {"ID": "nc", "Status": "Enabled", "Filter": {"Prefix": "nc/"},
                           "NoncurrentVersionExpiration": {"NoncurrentDays": 1, "NewerNoncurrentVersions": 2}})
    want = [("nc/k", i, False) for i in reversed(ids[2:])]
    wait_until(lc, lambda: versions(s3, bucket, "nc/") == want, "expire the two oldest versions")
    wait_passes(lc)
    assert versions(s3, bucket, "nc/") == want
    assert versions(s3, bucket, "other/") == [("other/k", i, False) for i in reversed(other)]
    assert actions(lc, "expire_noncurrent") - before == 2


def test_expired_delete_markers_are_removed_only_when_alone(lc):
    s3 = lc.client("alice")
    bucket = unique_bucket_name("lc-markers")
    s3.create_bucket(Bucket=bucket)
    s3.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": "Enabled"})
    lone = s3.put_object(Bucket=bucket, Key="dm/lone", Body=b"1")["VersionId"]
    s3.delete_object(Bucket=bucket, Key="dm/lone")
    s3.delete_object(Bucket=bucket, Key="dm/lone", VersionId=lone)  # only the marker is left
    s3.put_object(Bucket=bucket, Key="dm/kept", Body=b"2")
    s3.delete_object(Bucket=bucket, Key="dm/kept")  # a marker over a version
    configure(s3, bucket, {"ID": "dm", "Status": "Enabled", "Filter": {"Prefix": "dm/"},
                           "Expiration": {"ExpiredObjectDeleteMarker": True}})
    wait_until(lc, lambda: [v[0] for v in versions(s3, bucket, "dm/")] == ["dm/kept", "dm/kept"],
               "remove the lone delete marker")
    wait_passes(lc)
    assert [(v[0], v[2]) for v in versions(s3, bucket, "dm/")] == [("dm/kept", True), ("dm/kept", False)]


def test_incomplete_multipart_uploads_are_aborted_within_the_prefix(lc):
    s3 = lc.client("alice")
    bucket = unique_bucket_name("lc-uploads")
    s3.create_bucket(Bucket=bucket)
    up = s3.create_multipart_upload(Bucket=bucket, Key="up/a")["UploadId"]
    s3.upload_part(Bucket=bucket, Key="up/a", UploadId=up, PartNumber=1, Body=b"part")
    s3.create_multipart_upload(Bucket=bucket, Key="other/b")
    before = actions(lc, "abort_upload")
    configure(s3, bucket, {"ID": "up", "Status": "Enabled", "Filter": {"Prefix": "up/"},
                           "AbortIncompleteMultipartUpload": {"DaysAfterInitiation": 1}})

    def uploads():
        return {u["Key"] for u in s3.list_multipart_uploads(Bucket=bucket).get("Uploads", [])}

    wait_until(lc, lambda: uploads() == {"other/b"}, "abort up/a")
    wait_passes(lc)
    assert uploads() == {"other/b"}
    assert actions(lc, "abort_upload") - before == 1
    expect_error("NoSuchUpload", 404, s3.list_parts, Bucket=bucket, Key="up/a", UploadId=up)


def test_expiring_objects_frozen_in_a_model_version_or_snapshot_leaves_them_readable(lc):
    s3 = lc.client("alice")
    bucket = unique_bucket_name("lc-frozen")
    s3.create_bucket(Bucket=bucket)
    weights = b"w" * 50_000
    s3.put_object(Bucket=bucket, Key="m/config.json", Body=b'{"layers": 2}')
    s3.put_object(Bucket=bucket, Key="m/weights.bin", Body=weights)
    team = make_team(lc)
    r = team_call(lc, team, "POST", "/models", body={"name": "frozen", "bucket": bucket, "prefix": "m/"})
    assert r.status_code == 201, r.text
    r = team_call(lc, team, "POST", "/models/frozen/versions", body={"label": "v1"})
    assert r.status_code == 201, r.text
    r = call(lc, "POST", f"/api/v1/buckets/{bucket}/snapshots", token=team["tokens"]["alice"],
             body={"name": "before"})
    assert r.status_code == 201, r.text
    configure(s3, bucket, {"ID": "all", "Status": "Enabled", "Filter": {"Prefix": "m/"}, "Expiration": DAYS_1})
    wait_until(lc, lambda: keys(s3, bucket) == set(), "expire the model's working files")
    wait_passes(lc, 3)  # the blob collector (grace 1 s) ran after the expiry
    view = s3.get_object(Bucket="models", Key=f"{team['name']}/frozen/1/weights.bin")["Body"].read()
    assert view == weights
    assert s3.get_object(Bucket=bucket, Key=".snapshots/before/m/weights.bin")["Body"].read() == weights
