"""Object and bucket tagging (issue 27): Put/Get/DeleteObjectTagging (versioned: tagging a version creates
no version), x-amz-tagging on PutObject, CreateMultipartUpload and CopyObject (x-amz-tagging-directive),
x-amz-tagging-count on GetObject/HeadObject, Put/Get/DeleteBucketTagging, S3's limits and error codes (a
refusal changes nothing), and the canned ACL headers a write may carry until ACLs exist."""

from __future__ import annotations

import hashlib
import json

import pytest
import requests

from depot_harness import assert_error_response, expect_error
from rest import call, token_for

TAGS = [{"Key": "team", "Value": "vision"}, {"Key": "stage", "Value": "raw data"}]


def tag_set(s3, bucket, key, **kw):
    return s3.get_object_tagging(Bucket=bucket, Key=key, **kw)["TagSet"]


def put_tags(s3, bucket, key, tags, **kw):
    return s3.put_object_tagging(Bucket=bucket, Key=key, Tagging={"TagSet": tags}, **kw)


def tag_state(depot, bucket):
    """Every version's tags and the bucket's, as stored: what a refused request must leave as it was."""
    return depot.db.query(
        "SELECT o.key, o.version_id, o.tags::text, coalesce(b.tags::text, '') FROM buckets b "
        f"LEFT JOIN object_versions o ON o.bucket_id = b.id WHERE b.name = '{bucket}' ORDER BY o.id")


def test_object_tagging_round_trip_without_a_new_version(depot, s3, bucket):
    s3.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": "Enabled"})
    v1 = s3.put_object(Bucket=bucket, Key="k", Body=b"one")["VersionId"]
    v2 = s3.put_object(Bucket=bucket, Key="k", Body=b"two")["VersionId"]
    assert tag_set(s3, bucket, "k") == []
    r = put_tags(s3, bucket, "k", TAGS)
    assert r["VersionId"] == v2
    r = put_tags(s3, bucket, "k", [{"Key": "old", "Value": ""}], VersionId=v1)
    assert r["VersionId"] == v1
    got = s3.get_object_tagging(Bucket=bucket, Key="k")
    assert got["TagSet"] == TAGS and got["VersionId"] == v2
    assert tag_set(s3, bucket, "k", VersionId=v1) == [{"Key": "old", "Value": ""}]
    # No version was created, the content and ETags are what they were.
    versions = s3.list_object_versions(Bucket=bucket, Prefix="k")["Versions"]
    assert [v["VersionId"] for v in versions] == [v2, v1]
    head = s3.head_object(Bucket=bucket, Key="k")
    assert head["VersionId"] == v2 and head["ResponseMetadata"]["HTTPHeaders"]["x-amz-tagging-count"] == "2"
    got = s3.get_object(Bucket=bucket, Key="k", VersionId=v1)
    assert got["TagCount"] == 1 and got["Body"].read() == b"one"

    r = s3.delete_object_tagging(Bucket=bucket, Key="k")
    assert r["ResponseMetadata"]["HTTPStatusCode"] == 204 and r["VersionId"] == v2
    assert tag_set(s3, bucket, "k") == []
    assert "x-amz-tagging-count" not in s3.head_object(Bucket=bucket, Key="k")["ResponseMetadata"]["HTTPHeaders"]
    assert tag_set(s3, bucket, "k", VersionId=v1) == [{"Key": "old", "Value": ""}]

    # Deleting a version deletes its tags with it: no row is left behind.
    s3.delete_object(Bucket=bucket, Key="k", VersionId=v1)
    assert depot.db.scalar(
        "SELECT count(*) FROM object_versions o JOIN buckets b ON b.id = o.bucket_id "
        f"WHERE b.name = '{bucket}' AND o.tags <> '[]'") == 0


def test_delete_markers_and_missing_objects_answer_as_s3(depot, s3, bucket):
    s3.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": "Enabled"})
    s3.put_object(Bucket=bucket, Key="gone", Body=b"x")
    elsewhere = s3.put_object(Bucket=bucket, Key="other", Body=b"y")["VersionId"]
    marker = s3.delete_object(Bucket=bucket, Key="gone")["VersionId"]
    before = tag_state(depot, bucket)
    expect_error("NoSuchKey", 404, s3.get_object_tagging, Bucket=bucket, Key="gone")
    expect_error("NoSuchKey", 404, put_tags, s3, bucket, "gone", TAGS)
    for call in (lambda: s3.get_object_tagging(Bucket=bucket, Key="gone", VersionId=marker),
                 lambda: put_tags(s3, bucket, "gone", TAGS, VersionId=marker),
                 lambda: s3.delete_object_tagging(Bucket=bucket, Key="gone", VersionId=marker)):
        expect_error("MethodNotAllowed", 405, call)
    expect_error("NoSuchKey", 404, s3.get_object_tagging, Bucket=bucket, Key="never")
    expect_error("NoSuchVersion", 404, s3.get_object_tagging, Bucket=bucket, Key="gone", VersionId=elsewhere)
    expect_error("NoSuchVersion", 404, put_tags, s3, bucket, "gone", TAGS, VersionId=elsewhere)
    expect_error("InvalidArgument", 400, s3.get_object_tagging, Bucket=bucket, Key="gone", VersionId="bogus")
    assert tag_state(depot, bucket) == before


@pytest.mark.parametrize("tags,code,message", [
    ([{"Key": f"k{i}", "Value": "v"} for i in range(11)], "InvalidTag", "Object tags cannot be greater than 10"),
    ([{"Key": "k" * 129, "Value": "v"}], "InvalidTag", "The TagKey you have provided is invalid"),
    ([{"Key": "k", "Value": "v" * 257}], "InvalidTag", "The TagValue you have provided is invalid"),
    ([{"Key": "aws:createdBy", "Value": "me"}], "InvalidTag", "Your TagKey cannot be prefixed with aws:"),
    ([{"Key": "k", "Value": "1"}, {"Key": "k", "Value": "2"}], "InvalidTag",
     "Cannot provide multiple Tags with the same key"),
])
def test_tag_sets_s3_refuses_change_nothing(depot, s3, bucket, tags, code, message):
    s3.put_object(Bucket=bucket, Key="k", Body=b"x", Tagging="keep=me")
    before = tag_state(depot, bucket)
    assert expect_error(code, 400, put_tags, s3, bucket, "k", tags)["Error"]["Message"] == message
    assert tag_state(depot, bucket) == before
    assert tag_set(s3, bucket, "k") == [{"Key": "keep", "Value": "me"}]


def test_limits_count_unicode_characters_and_malformed_xml_is_refused(depot, s3, bucket):
    s3.put_object(Bucket=bucket, Key="k", Body=b"x")
    wide = [{"Key": "é" * 128, "Value": "ü" * 256}] + [{"Key": f"k{i}", "Value": ""} for i in range(9)]
    put_tags(s3, bucket, "k", wide)
    assert tag_set(s3, bucket, "k") == wide
    before = tag_state(depot, bucket)
    for body in (b"<Tagging><TagSet><Tag><Key>a</Key></Tag></TagSet></Tagging>", b"<Tagging>", b"<Nope/>"):
        r = depot.request("PUT", f"/{bucket}/k?tagging", body=body)
        assert_error_response(r, "MalformedXML", 400)
    # An empty key (boto3 refuses to send one).
    r = depot.request("PUT", f"/{bucket}/k?tagging",
                      body=b"<Tagging><TagSet><Tag><Key></Key><Value>v</Value></Tag></TagSet></Tagging>")
    assert assert_error_response(r, "InvalidTag", 400)["Message"] == "The TagKey you have provided is invalid"
    assert tag_state(depot, bucket) == before


def test_x_amz_tagging_on_put_multipart_and_copy(depot, s3, bucket):
    s3.put_object(Bucket=bucket, Key="src", Body=b"data", Tagging="a=1&b=two%20words&c=")
    assert tag_set(s3, bucket, "src") == [{"Key": "a", "Value": "1"}, {"Key": "b", "Value": "two words"},
                                          {"Key": "c", "Value": ""}]
    up = s3.create_multipart_upload(Bucket=bucket, Key="mp", Tagging="model=resnet")
    part = s3.upload_part(Bucket=bucket, Key="mp", UploadId=up["UploadId"], PartNumber=1, Body=b"p")
    # Tags wait for the completion: the upload is not an object yet.
    expect_error("NoSuchKey", 404, s3.get_object_tagging, Bucket=bucket, Key="mp")
    s3.complete_multipart_upload(Bucket=bucket, Key="mp", UploadId=up["UploadId"],
                                 MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": part["ETag"]}]})
    assert tag_set(s3, bucket, "mp") == [{"Key": "model", "Value": "resnet"}]

    src = {"Bucket": bucket, "Key": "src"}
    # COPY is the default: the source's tags, whatever x-amz-tagging says.
    s3.copy_object(Bucket=bucket, Key="copied", CopySource=src, Tagging="ignored=yes")
    assert tag_set(s3, bucket, "copied") == tag_set(s3, bucket, "src")
    s3.copy_object(Bucket=bucket, Key="replaced", CopySource=src, TaggingDirective="REPLACE", Tagging="x=y")
    assert tag_set(s3, bucket, "replaced") == [{"Key": "x", "Value": "y"}]
    s3.copy_object(Bucket=bucket, Key="cleared", CopySource=src, TaggingDirective="REPLACE")
    assert tag_set(s3, bucket, "cleared") == []
    # A copy onto itself with new metadata keeps the tags (COPY).
    s3.copy_object(Bucket=bucket, Key="src", CopySource=src, MetadataDirective="REPLACE", Metadata={"m": "1"})
    assert len(tag_set(s3, bucket, "src")) == 3

    before = depot.snapshot(bucket)
    for call, code in (
        (lambda: s3.put_object(Bucket=bucket, Key="bad", Body=b"x", Tagging="aws:x=1"), "InvalidTag"),
        (lambda: s3.put_object(Bucket=bucket, Key="bad", Body=b"x", Tagging="a=1&a=2"), "InvalidArgument"),
        (lambda: s3.put_object(Bucket=bucket, Key="bad", Body=b"x", Tagging="a=%zz"), "InvalidArgument"),
        (lambda: s3.put_object(Bucket=bucket, Key="bad", Body=b"x",
                               Tagging="&".join(f"k{i}=v" for i in range(11))), "InvalidTag"),
        (lambda: s3.create_multipart_upload(Bucket=bucket, Key="bad", Tagging="k=" + "v" * 257), "InvalidTag"),
        (lambda: s3.copy_object(Bucket=bucket, Key="bad", CopySource=src, TaggingDirective="REPLACE",
                                Tagging="aws:k=v"), "InvalidTag"),
        (lambda: s3.copy_object(Bucket=bucket, Key="bad", CopySource=src, TaggingDirective="MERGE"),
         "InvalidArgument"),
    ):
        expect_error(code, 400, call)
    depot.assert_unchanged(before)


def test_aws_cli_tagging(depot, bucket, tmp_path):
    f = tmp_path / "f.bin"
    f.write_bytes(b"cli")
    depot.aws("s3api", "put-object", "--bucket", bucket, "--key", "cli", "--body", str(f),
              "--tagging", "project=depot&owner=ml%20team")
    got = depot.aws_json("s3api", "get-object-tagging", "--bucket", bucket, "--key", "cli")
    assert got["TagSet"] == [{"Key": "project", "Value": "depot"}, {"Key": "owner", "Value": "ml team"}]
    depot.aws("s3api", "put-object-tagging", "--bucket", bucket, "--key", "cli",
              "--tagging", json.dumps({"TagSet": [{"Key": "state", "Value": "done"}]}))
    got = depot.aws_json("s3api", "get-object-tagging", "--bucket", bucket, "--key", "cli")
    assert got["TagSet"] == [{"Key": "state", "Value": "done"}]
    depot.aws("s3api", "copy-object", "--bucket", bucket, "--key", "cli-copy", "--copy-source", f"{bucket}/cli",
              "--tagging-directive", "REPLACE", "--tagging", "copied=yes")
    got = depot.aws_json("s3api", "get-object-tagging", "--bucket", bucket, "--key", "cli-copy")
    assert got["TagSet"] == [{"Key": "copied", "Value": "yes"}]
    head = depot.aws_json("s3api", "head-object", "--bucket", bucket, "--key", "cli-copy")
    assert head.get("TagCount", 1) == 1  # the cli shows TagCount only on get-object; the header is there
    out = depot.aws("s3api", "put-object-tagging", "--bucket", bucket, "--key", "cli", "--tagging",
                    json.dumps({"TagSet": [{"Key": "aws:x", "Value": "v"}]}), check=False)
    assert out.returncode != 0 and "InvalidTag" in out.stderr


def test_bucket_tagging(depot, s3, bucket):
    expect_error("NoSuchTagSet", 404, s3.get_bucket_tagging, Bucket=bucket)
    tags = [{"Key": f"k{i}", "Value": str(i)} for i in range(50)]
    s3.put_bucket_tagging(Bucket=bucket, Tagging={"TagSet": tags})
    assert s3.get_bucket_tagging(Bucket=bucket)["TagSet"] == tags
    before = tag_state(depot, bucket)
    for bad, message in (
        (tags + [{"Key": "k50", "Value": ""}], "Bucket tag count cannot be greater than 50"),
        ([{"Key": "aws:cost", "Value": "1"}], "Your TagKey cannot be prefixed with aws:"),
        ([{"Key": "a", "Value": "1"}, {"Key": "a", "Value": "2"}], "Cannot provide multiple Tags with the same key"),
    ):
        error = expect_error("InvalidTag", 400, s3.put_bucket_tagging, Bucket=bucket, Tagging={"TagSet": bad})
        assert error["Error"]["Message"] == message
    assert_error_response(depot.request("PUT", f"/{bucket}?tagging", body=b"<Tagging/>"), "MalformedXML", 400)
    assert tag_state(depot, bucket) == before
    # Bucket tags are not object tags.
    s3.put_object(Bucket=bucket, Key="o", Body=b"x")
    assert tag_set(s3, bucket, "o") == []
    assert s3.delete_bucket_tagging(Bucket=bucket)["ResponseMetadata"]["HTTPStatusCode"] == 204
    expect_error("NoSuchTagSet", 404, s3.get_bucket_tagging, Bucket=bucket)
    assert s3.delete_bucket_tagging(Bucket=bucket)["ResponseMetadata"]["HTTPStatusCode"] == 204


def test_other_users_cannot_read_or_change_tags(depot, s3, s3_bob, bucket):
    s3.put_object(Bucket=bucket, Key="k", Body=b"x", Tagging="secret=1")
    s3.put_bucket_tagging(Bucket=bucket, Tagging={"TagSet": [{"Key": "cost", "Value": "1"}]})
    before = tag_state(depot, bucket)
    expect_error("AccessDenied", 403, s3_bob.get_object_tagging, Bucket=bucket, Key="k")
    expect_error("AccessDenied", 403, put_tags, s3_bob, bucket, "k", TAGS)
    expect_error("AccessDenied", 403, s3_bob.delete_object_tagging, Bucket=bucket, Key="k")
    expect_error("AccessDenied", 403, s3_bob.get_bucket_tagging, Bucket=bucket)
    expect_error("AccessDenied", 403, s3_bob.put_bucket_tagging, Bucket=bucket, Tagging={"TagSet": TAGS})
    expect_error("AccessDenied", 403, s3_bob.delete_bucket_tagging, Bucket=bucket)
    assert tag_state(depot, bucket) == before


@pytest.mark.parametrize("acl", ["private", "bucket-owner-full-control", "bucket-owner-read"])
def test_canned_acls_that_hold_anyway_are_accepted(depot, s3, bucket, acl):
    s3.put_object(Bucket=bucket, Key="k", Body=b"x", ACL=acl)
    s3.copy_object(Bucket=bucket, Key="c", CopySource={"Bucket": bucket, "Key": "k"}, ACL=acl)
    s3.abort_multipart_upload(Bucket=bucket, Key="m", UploadId=s3.create_multipart_upload(
        Bucket=bucket, Key="m", ACL=acl)["UploadId"])


NOT_SUPPORTED = ("AccessControlListNotSupported", 400)  # the bucket enforces ownership


@pytest.mark.parametrize("headers,write", [
    ({"x-amz-acl": "public-read"}, NOT_SUPPORTED),
    ({"x-amz-acl": "public-read-write"}, NOT_SUPPORTED),
    ({"x-amz-acl": "authenticated-read"}, NOT_SUPPORTED),
    ({"x-amz-grant-read": 'uri="http://acs.amazonaws.com/groups/global/AllUsers"'}, NOT_SUPPORTED),
    ({"x-amz-grant-full-control": "id=bob"}, NOT_SUPPORTED),
    ({"x-amz-acl": "everyone-please"}, ("InvalidArgument", 400)),
])
def test_acls_depot_cannot_honour_are_refused_not_ignored(depot, s3, bucket, headers, write):
    """A public-read upload that silently stayed private (or a grant silently dropped) would surprise its
    sender either way: refused, and nothing is written. (test_acl.py: where ACLs are enabled.)"""
    s3.put_object(Bucket=bucket, Key="src", Body=b"x")
    before = depot.snapshot(bucket)
    for method, path, extra, (code, status) in (
            ("PUT", f"/{bucket}/k", {}, write),
            ("PUT", f"/{bucket}/c", {"x-amz-copy-source": f"/{bucket}/src"}, write),
            ("POST", f"/{bucket}/m?uploads", {}, write)):
        r = depot.request(method, path, body=b"", headers={**headers, **extra})
        assert_error_response(r, code, status)
    depot.assert_unchanged(before)
    expect_error("AccessControlListNotSupported", 400, s3.put_object, Bucket=bucket, Key="k", Body=b"x",
                 ACL="public-read")
    # Anonymous reads stay refused.
    assert requests.get(f"{depot.endpoint}/{bucket}/src", timeout=30).status_code == 403


def test_an_object_made_from_a_digest_gets_no_tags_of_the_object_found(depot, s3, s3_bob, bucket_factory):
    """Dedup never grants access: creating an object from content (POST /api/v1/buckets/{b}/objects) finds
    some readable object with that digest, but that object's tags describe it, not the content."""
    theirs, mine = bucket_factory("bob"), bucket_factory("alice")
    data = b"weights shared by the tagging test"
    s3_bob.put_object(Bucket=theirs, Key="w", Body=data, Tagging="customer=acme")
    s3.put_object(Bucket=mine, Key="w", Body=data, Tagging="mine=yes")
    token = token_for(depot, "alice")["token"]
    r = call(depot, "POST", f"/api/v1/buckets/{mine}/objects", token=token,
             body={"key": "from-digest", "sha256": hashlib.sha256(data).hexdigest(), "size": len(data)})
    assert r.status_code == 201, r.text
    assert tag_set(s3, mine, "from-digest") == []
