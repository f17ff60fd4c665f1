"""Bucket operations and the errors around them, through boto3 and raw signed requests."""

from __future__ import annotations

import datetime as dt

import pytest

from depot_harness import assert_error_response, content_md5, expect_error, unique_bucket_name


def test_create_head_list_delete(depot, s3):
    name = unique_bucket_name("lifecycle")
    created = s3.create_bucket(Bucket=name)
    assert created["ResponseMetadata"]["HTTPStatusCode"] == 200
    assert created["Location"] == f"/{name}"

    head = s3.head_bucket(Bucket=name)
    assert head["ResponseMetadata"]["HTTPStatusCode"] == 200
    assert head["ResponseMetadata"]["HTTPHeaders"].get("x-amz-bucket-region") == "us-east-1"

    listed = s3.list_buckets()
    assert listed["Owner"]["DisplayName"] == "Alice Admin"
    assert listed["Owner"]["ID"]
    mine = [b for b in listed["Buckets"] if b["Name"] == name]
    assert len(mine) == 1
    assert abs((dt.datetime.now(dt.timezone.utc) - mine[0]["CreationDate"]).total_seconds()) < 120
    names = [b["Name"] for b in listed["Buckets"]]
    assert names == sorted(names)

    assert s3.delete_bucket(Bucket=name)["ResponseMetadata"]["HTTPStatusCode"] == 204
    expect_error("404", 404, s3.head_bucket, Bucket=name)
    assert name not in [b["Name"] for b in s3.list_buckets()["Buckets"]]


def test_get_bucket_location_is_empty_for_us_east_1(s3, bucket):
    assert s3.get_bucket_location(Bucket=bucket)["LocationConstraint"] is None


def test_recreating_an_owned_bucket_is_bucket_already_owned_by_you(depot, s3, bucket):
    s3.put_object(Bucket=bucket, Key="survives", Body=b"still here")
    before = depot.snapshot(bucket)
    expect_error("BucketAlreadyOwnedByYou", 409, s3.create_bucket, Bucket=bucket)
    depot.assert_unchanged(before)


def test_another_users_bucket_name_is_bucket_already_exists(depot, s3_bob, bucket):
    before = depot.snapshot(bucket)
    expect_error("BucketAlreadyExists", 409, s3_bob.create_bucket, Bucket=bucket)
    depot.assert_unchanged(before)


def test_deleting_a_non_empty_bucket_is_bucket_not_empty(depot, s3, bucket):
    s3.put_object(Bucket=bucket, Key="blocker", Body=b"i keep the bucket alive")
    before = depot.snapshot(bucket)
    expect_error("BucketNotEmpty", 409, s3.delete_bucket, Bucket=bucket)
    depot.assert_unchanged(before)
    assert s3.get_object(Bucket=bucket, Key="blocker")["Body"].read() == b"i keep the bucket alive"


@pytest.mark.parametrize("name", [
    "ab",                     # shorter than 3
    "a" * 64,                 # longer than 63
    "UpperCase",              # capitals
    "under_score",
    "-leading-hyphen",
    "trailing-hyphen-",
    ".leading-dot",
    "trailing-dot.",
    "double..dot",
    "192.168.1.1",            # formatted like an IPv4 address
    "api",                    # Depot's REST API (/api/v1/...)
    "healthz", "readyz", "metrics",  # Depot's operational endpoints
])
def test_invalid_bucket_names_are_rejected(depot, s3, name):
    before = depot.snapshot()
    response = expect_error("InvalidBucketName", 400, s3.create_bucket, Bucket=name)
    assert response["Error"].get("BucketName") == name
    depot.assert_unchanged(before)


def test_missing_bucket_is_no_such_bucket_everywhere(depot, s3):
    name = unique_bucket_name("missing")
    before = depot.snapshot()
    for call, kwargs in [
        (s3.get_object, {"Key": "k"}),
        (s3.put_object, {"Key": "k", "Body": b"nowhere to go"}),
        (s3.list_objects_v2, {}),
        (s3.list_objects, {}),
        (s3.delete_object, {"Key": "k"}),
        (s3.delete_bucket, {}),
        (s3.get_bucket_location, {}),
        (s3.delete_objects, {"Delete": {"Objects": [{"Key": "k"}]}}),
    ]:
        response = expect_error("NoSuchBucket", 404, call, Bucket=name, **kwargs)
        assert response["Error"].get("BucketName") == name, (call.__name__, response)
    expect_error("404", 404, s3.head_bucket, Bucket=name)
    expect_error("404", 404, s3.head_object, Bucket=name, Key="k")
    depot.assert_unchanged(before)


def test_missing_key_is_no_such_key_with_the_key(s3, bucket):
    response = expect_error("NoSuchKey", 404, s3.get_object, Bucket=bucket, Key="dir/missing.txt")
    assert response["Error"].get("Key") == "dir/missing.txt"
    meta = response["ResponseMetadata"]
    assert meta.get("RequestId") and meta["HTTPHeaders"].get("x-amz-request-id") == meta["RequestId"]


# ---- malformed XML (raw requests signed with botocore)


@pytest.mark.parametrize("body", [
    b"<CreateBucketConfiguration><LocationConstraint>",
    b"not xml at all",
    b"<CreateBucketConfiguration xmlns='http://s3.amazonaws.com/doc/2006-03-01/'><LocationConstraint>us-east-1"
    b"</Location></CreateBucketConfiguration>",
], ids=["unclosed", "text", "mismatched-tags"])
def test_create_bucket_with_malformed_xml_is_malformed_xml(depot, body):
    name = unique_bucket_name("malformed")
    before = depot.snapshot()
    response = depot.request("PUT", f"/{name}", body=body)
    assert_error_response(response, "MalformedXML", 400)
    depot.assert_unchanged(before)
    assert depot.request("HEAD", f"/{name}").status_code == 404


@pytest.mark.parametrize("body", [
    b"<Delete><Object><Key>a</Key></Object>",
    b"<Delete><Object></Object></Delete>",
    b"<NotDelete><Object><Key>a</Key></Object></NotDelete>",
    b"",
    b"<Delete>" + b"".join(b"<Object><Key>k%d</Key></Object>" % i for i in range(1001)) + b"</Delete>",
], ids=["unclosed", "object-without-key", "wrong-root", "empty", "1001-keys"])
def test_delete_objects_with_malformed_xml_is_malformed_xml(depot, s3, bucket, body):
    for key in ("a", "k1"):
        s3.put_object(Bucket=bucket, Key=key, Body=key.encode())
    before = depot.snapshot(bucket)
    response = depot.request("POST", f"/{bucket}?delete", body=body, headers={"Content-MD5": content_md5(body)})
    assert_error_response(response, "MalformedXML", 400)
    depot.assert_unchanged(before)


@pytest.mark.parametrize("reference", ["&#0;", "&#x0;", "&#00;", "&#x000;", "&#4294967296;", "&#x100000000;"])
def test_delete_objects_with_a_nul_reference_in_a_key_deletes_nothing(depot, s3, bucket, reference):
    """The attacker's request (second attack, N4): `<Key>important.db&#0;.tmp</Key>` was read as
    `important.db` (the value ended at the NUL), so asking to delete a temporary file deleted the database.
    A NUL, raw or by reference, is MalformedXML and nothing is deleted."""
    s3.put_object(Bucket=bucket, Key="important.db", Body=b"db")
    before = depot.snapshot(bucket)
    body = f"<Delete><Object><Key>important.db{reference}.tmp</Key></Object></Delete>".encode()
    response = depot.request("POST", f"/{bucket}?delete", body=body, headers={"Content-MD5": content_md5(body)})
    assert_error_response(response, "MalformedXML", 400)
    depot.assert_unchanged(before)
    assert s3.get_object(Bucket=bucket, Key="important.db")["Body"].read() == b"db"


def test_tagging_with_a_nul_reference_in_a_value_changes_nothing(depot, s3, bucket):
    s3.put_object(Bucket=bucket, Key="tagged", Body=b"t", Tagging="class=public")
    body = b"<Tagging><TagSet><Tag><Key>class</Key><Value>secret&#0;x</Value></Tag></TagSet></Tagging>"
    response = depot.request("PUT", f"/{bucket}/tagged?tagging", body=body,
                             headers={"Content-MD5": content_md5(body)})
    assert_error_response(response, "MalformedXML", 400)
    assert s3.get_object_tagging(Bucket=bucket, Key="tagged")["TagSet"] == [{"Key": "class", "Value": "public"}]
