"""Object operations through boto3: round trips, ranges, conditional requests, integrity checks, copies."""

from __future__ import annotations

import datetime as dt
import hashlib
import io
import random

import boto3.s3.transfer
import pytest

from depot_harness import content_md5, expect_error, md5_etag, quote_key

MiB = 1024 * 1024
BODY = bytes(range(100))  # 100 bytes, every offset has a distinct value


def now() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc)


@pytest.fixture
def obj(s3, bucket):
    """(bucket, key, etag, last_modified) of a 100-byte object."""
    put = s3.put_object(Bucket=bucket, Key="obj.bin", Body=BODY)
    head = s3.head_object(Bucket=bucket, Key="obj.bin")
    return bucket, "obj.bin", put["ETag"], head["LastModified"]


# ---- round trips


def test_put_get_head_delete_round_trip_with_headers_and_metadata(s3, bucket):
    body = b"model weights, honestly\n" * 100
    expires = dt.datetime(2031, 1, 2, 3, 4, 5, tzinfo=dt.timezone.utc)
    put = s3.put_object(
        Bucket=bucket, Key="models/m1/weights.bin", Body=body,
        ContentType="application/x-weights", CacheControl="no-cache", ContentDisposition="inline",
        ContentLanguage="de", Expires=expires, Metadata={"framework": "torch", "Mixed-Case": "Value With Spaces"})
    assert put["ETag"] == md5_etag(body)
    assert put["ResponseMetadata"]["HTTPStatusCode"] == 200

    for response in (s3.head_object(Bucket=bucket, Key="models/m1/weights.bin"),
                     s3.get_object(Bucket=bucket, Key="models/m1/weights.bin")):
        assert response["ResponseMetadata"]["HTTPStatusCode"] == 200
        assert response["ContentLength"] == len(body)
        assert response["ETag"] == md5_etag(body)
        assert response["ContentType"] == "application/x-weights"
        assert response["CacheControl"] == "no-cache"
        assert response["ContentDisposition"] == "inline"
        assert response["ContentLanguage"] == "de"
        assert response["Expires"] == expires
        # User metadata names are case-insensitive HTTP headers: S3 returns them lower-cased.
        assert response["Metadata"] == {"framework": "torch", "mixed-case": "Value With Spaces"}
        assert response["AcceptRanges"] == "bytes"
        assert abs((now() - response["LastModified"]).total_seconds()) < 120
        assert response["ResponseMetadata"]["HTTPHeaders"].get("x-amz-request-id")
        if "Body" in response:
            assert response["Body"].read() == body

    deleted = s3.delete_object(Bucket=bucket, Key="models/m1/weights.bin")
    assert deleted["ResponseMetadata"]["HTTPStatusCode"] == 204
    expect_error("NoSuchKey", 404, s3.get_object, Bucket=bucket, Key="models/m1/weights.bin")
    expect_error("404", 404, s3.head_object, Bucket=bucket, Key="models/m1/weights.bin")


def test_delete_of_a_missing_key_succeeds_with_204(s3, bucket):
    assert s3.delete_object(Bucket=bucket, Key="never-was")["ResponseMetadata"]["HTTPStatusCode"] == 204


def test_empty_object(s3, bucket):
    put = s3.put_object(Bucket=bucket, Key="empty", Body=b"")
    assert put["ETag"] == '"d41d8cd98f00b204e9800998ecf8427e"'
    got = s3.get_object(Bucket=bucket, Key="empty")
    assert got["ContentLength"] == 0 and got["Body"].read() == b""


def test_overwrite_replaces_content_and_metadata(s3, bucket):
    s3.put_object(Bucket=bucket, Key="k", Body=b"first", Metadata={"v": "1"}, ContentType="text/plain")
    s3.put_object(Bucket=bucket, Key="k", Body=b"second version", Metadata={"w": "2"})
    got = s3.get_object(Bucket=bucket, Key="k")
    assert got["Body"].read() == b"second version"
    assert got["Metadata"] == {"w": "2"}
    assert got["ContentType"] == "binary/octet-stream"
    assert [o["Key"] for o in s3.list_objects_v2(Bucket=bucket)["Contents"]] == ["k"]


def test_content_type_defaults_to_binary_octet_stream(depot, s3, bucket):
    response = depot.request("PUT", f"/{bucket}/no-type", body=b"untyped")
    assert response.status_code == 200, response.text
    assert "Content-Type" not in response.request.headers
    assert s3.head_object(Bucket=bucket, Key="no-type")["ContentType"] == "binary/octet-stream"


def test_identical_content_is_stored_once(depot, s3, bucket):
    data = random.Random(7).randbytes(64 * 1024)
    s3.put_object(Bucket=bucket, Key="one", Body=data)
    blobs = depot.blob_files()
    s3.put_object(Bucket=bucket, Key="two", Body=data)
    assert depot.blob_files() == blobs
    assert s3.get_object(Bucket=bucket, Key="two")["Body"].read() == data


@pytest.mark.slow
def test_multipart_upload_and_download_via_transfer_manager(s3, bucket):
    data = random.Random(12).randbytes(12 * MiB)
    config = boto3.s3.transfer.TransferConfig(multipart_threshold=5 * MiB, multipart_chunksize=5 * MiB,
                                              max_concurrency=4)
    s3.upload_fileobj(io.BytesIO(data), bucket, "multi.bin", Config=config)
    head = s3.head_object(Bucket=bucket, Key="multi.bin")
    parts = [data[i:i + 5 * MiB] for i in range(0, len(data), 5 * MiB)]
    digest = hashlib.md5(b"".join(hashlib.md5(p).digest() for p in parts)).hexdigest()
    assert head["ETag"] == f'"{digest}-3"'
    assert head["ContentLength"] == len(data)
    out = io.BytesIO()
    s3.download_fileobj(bucket, "multi.bin", out, Config=config)
    assert hashlib.sha256(out.getvalue()).digest() == hashlib.sha256(data).digest()


# ---- ranges


@pytest.mark.parametrize("header, start, end", [
    ("bytes=0-9", 0, 9),
    ("bytes=10-", 10, 99),
    ("bytes=-5", 95, 99),
    ("bytes=90-1000", 90, 99),  # an end past the object is clamped
    ("bytes=0-0", 0, 0),
])
def test_ranged_get(s3, obj, header, start, end):
    bucket, key, etag, _ = obj
    got = s3.get_object(Bucket=bucket, Key=key, Range=header)
    assert got["ResponseMetadata"]["HTTPStatusCode"] == 206
    assert got["ContentRange"] == f"bytes {start}-{end}/100"
    assert got["ContentLength"] == end - start + 1
    assert got["ETag"] == etag
    assert got["Body"].read() == BODY[start:end + 1]


@pytest.mark.parametrize("header", ["bytes=100-", "bytes=100-200", "bytes=1000-2000"])
def test_unsatisfiable_range_is_416_invalid_range(s3, obj, header):
    bucket, key, _, _ = obj
    expect_error("InvalidRange", 416, s3.get_object, Bucket=bucket, Key=key, Range=header)


def test_syntactically_invalid_range_is_ignored(s3, obj):
    bucket, key, _, _ = obj
    got = s3.get_object(Bucket=bucket, Key=key, Range="bytes=nonsense")
    assert got["ResponseMetadata"]["HTTPStatusCode"] == 200
    assert got["Body"].read() == BODY


# ---- conditional requests


def test_if_match(s3, obj):
    bucket, key, etag, _ = obj
    assert s3.get_object(Bucket=bucket, Key=key, IfMatch=etag)["Body"].read() == BODY
    expect_error("PreconditionFailed", 412, s3.get_object, Bucket=bucket, Key=key, IfMatch='"0123456789abcdef"')
    expect_error("412", 412, s3.head_object, Bucket=bucket, Key=key, IfMatch='"0123456789abcdef"')


def test_if_none_match(s3, obj):
    bucket, key, etag, _ = obj
    response = expect_error("304", 304, s3.get_object, Bucket=bucket, Key=key, IfNoneMatch=etag)
    assert response["ResponseMetadata"]["HTTPHeaders"].get("etag") == etag
    expect_error("304", 304, s3.head_object, Bucket=bucket, Key=key, IfNoneMatch=etag)
    assert s3.get_object(Bucket=bucket, Key=key, IfNoneMatch='"other"')["Body"].read() == BODY


def test_if_modified_since(s3, obj):
    bucket, key, _, last_modified = obj
    hour = dt.timedelta(hours=1)
    assert s3.get_object(Bucket=bucket, Key=key, IfModifiedSince=last_modified - hour)["Body"].read() == BODY
    # HTTP dates have whole seconds: Last-Modified itself counts as "not modified since".
    expect_error("304", 304, s3.get_object, Bucket=bucket, Key=key, IfModifiedSince=last_modified)
    expect_error("304", 304, s3.get_object, Bucket=bucket, Key=key, IfModifiedSince=last_modified + hour)
    expect_error("304", 304, s3.head_object, Bucket=bucket, Key=key, IfModifiedSince=last_modified + hour)


def test_if_unmodified_since(s3, obj):
    bucket, key, _, last_modified = obj
    hour = dt.timedelta(hours=1)
    assert s3.get_object(Bucket=bucket, Key=key, IfUnmodifiedSince=last_modified + hour)["Body"].read() == BODY
    assert s3.get_object(Bucket=bucket, Key=key, IfUnmodifiedSince=last_modified)["Body"].read() == BODY
    expect_error("PreconditionFailed", 412, s3.get_object, Bucket=bucket, Key=key,
                 IfUnmodifiedSince=last_modified - hour)


def test_conditional_precedence_follows_s3(s3, obj):
    bucket, key, etag, last_modified = obj
    hour = dt.timedelta(hours=1)
    # If-Match true wins over If-Unmodified-Since false: 200.
    got = s3.get_object(Bucket=bucket, Key=key, IfMatch=etag, IfUnmodifiedSince=last_modified - hour)
    assert got["Body"].read() == BODY
    # If-None-Match false with If-Modified-Since true: 304.
    expect_error("304", 304, s3.get_object, Bucket=bucket, Key=key, IfNoneMatch=etag,
                 IfModifiedSince=last_modified - hour)


def test_conditions_apply_to_ranged_gets(s3, obj):
    bucket, key, etag, _ = obj
    got = s3.get_object(Bucket=bucket, Key=key, Range="bytes=0-3", IfMatch=etag)
    assert got["Body"].read() == BODY[:4]
    expect_error("PreconditionFailed", 412, s3.get_object, Bucket=bucket, Key=key, Range="bytes=0-3",
                 IfMatch='"nope"')


# ---- integrity


def test_correct_content_md5_is_accepted(s3, bucket):
    body = b"checked by MD5"
    put = s3.put_object(Bucket=bucket, Key="md5-ok", Body=body, ContentMD5=content_md5(body))
    assert put["ETag"] == md5_etag(body)


def test_wrong_content_md5_is_bad_digest_and_stores_nothing(depot, s3, bucket):
    body = random.Random(1).randbytes(4096)
    before = depot.snapshot(bucket)
    expect_error("BadDigest", 400, s3.put_object, Bucket=bucket, Key="md5-bad", Body=body,
                 ContentMD5=content_md5(b"something else"))
    depot.assert_unchanged(before)
    expect_error("404", 404, s3.head_object, Bucket=bucket, Key="md5-bad")


def test_malformed_content_md5_is_invalid_digest(depot, s3, bucket):
    body = random.Random(2).randbytes(4096)
    before = depot.snapshot(bucket)
    expect_error("InvalidDigest", 400, s3.put_object, Bucket=bucket, Key="md5-junk", Body=body,
                 ContentMD5="not-an-md5!")
    depot.assert_unchanged(before)


def test_payload_not_matching_x_amz_content_sha256_stores_nothing(depot, bucket):
    from depot_harness import assert_error_response

    body = random.Random(3).randbytes(4096)
    before = depot.snapshot(bucket)
    response = depot.request("PUT", f"/{bucket}/sha-bad", body=body,
                             payload_hash=hashlib.sha256(b"a different body").hexdigest())
    assert_error_response(response, "XAmzContentSHA256Mismatch", 400)
    depot.assert_unchanged(before)


def test_object_overwrite_that_fails_keeps_the_old_version(depot, s3, bucket):
    s3.put_object(Bucket=bucket, Key="keep", Body=b"original")
    before = depot.snapshot(bucket)
    expect_error("BadDigest", 400, s3.put_object, Bucket=bucket, Key="keep", Body=b"replacement",
                 ContentMD5=content_md5(b"not the replacement"))
    depot.assert_unchanged(before)
    assert s3.get_object(Bucket=bucket, Key="keep")["Body"].read() == b"original"


# ---- copies


def test_copy_object_keeps_or_replaces_metadata(s3, bucket_factory):
    source, target = bucket_factory(hint="src"), bucket_factory(hint="dst")
    s3.put_object(Bucket=source, Key="a b+c.txt", Body=b"copy me", ContentType="text/plain",
                  Metadata={"origin": "source"})
    copied = s3.copy_object(Bucket=target, Key="copied.txt", CopySource={"Bucket": source, "Key": "a b+c.txt"})
    assert copied["CopyObjectResult"]["ETag"] == md5_etag(b"copy me")
    assert abs((now() - copied["CopyObjectResult"]["LastModified"]).total_seconds()) < 120
    got = s3.get_object(Bucket=target, Key="copied.txt")
    assert (got["Body"].read(), got["ContentType"], got["Metadata"]) == (b"copy me", "text/plain",
                                                                         {"origin": "source"})

    s3.copy_object(Bucket=target, Key="replaced.txt", CopySource={"Bucket": source, "Key": "a b+c.txt"},
                   MetadataDirective="REPLACE", ContentType="text/markdown", Metadata={"origin": "replaced"})
    got = s3.get_object(Bucket=target, Key="replaced.txt")
    assert (got["Body"].read(), got["ContentType"], got["Metadata"]) == (b"copy me", "text/markdown",
                                                                         {"origin": "replaced"})


def test_copy_onto_itself_with_replace_updates_metadata(s3, bucket):
    s3.put_object(Bucket=bucket, Key="self", Body=b"same bytes", Metadata={"rev": "1"})
    s3.copy_object(Bucket=bucket, Key="self", CopySource={"Bucket": bucket, "Key": "self"},
                   MetadataDirective="REPLACE", Metadata={"rev": "2"})
    got = s3.get_object(Bucket=bucket, Key="self")
    assert (got["Body"].read(), got["Metadata"]) == (b"same bytes", {"rev": "2"})


def test_copy_onto_itself_without_changes_is_invalid_request(depot, s3, bucket):
    s3.put_object(Bucket=bucket, Key="self", Body=b"same bytes")
    before = depot.snapshot(bucket)
    expect_error("InvalidRequest", 400, s3.copy_object, Bucket=bucket, Key="self",
                 CopySource={"Bucket": bucket, "Key": "self"})
    depot.assert_unchanged(before)


def test_copy_from_missing_source(depot, s3, bucket):
    before = depot.snapshot(bucket)
    expect_error("NoSuchKey", 404, s3.copy_object, Bucket=bucket, Key="dst",
                 CopySource={"Bucket": bucket, "Key": "missing"})
    expect_error("NoSuchBucket", 404, s3.copy_object, Bucket=bucket, Key="dst",
                 CopySource={"Bucket": bucket + "-missing", "Key": "missing"})
    depot.assert_unchanged(before)


def test_copy_source_conditions(depot, s3, bucket):
    put = s3.put_object(Bucket=bucket, Key="src", Body=b"conditional copy")
    s3.copy_object(Bucket=bucket, Key="ok", CopySource={"Bucket": bucket, "Key": "src"},
                   CopySourceIfMatch=put["ETag"])
    before = depot.snapshot(bucket)
    expect_error("PreconditionFailed", 412, s3.copy_object, Bucket=bucket, Key="not-ok",
                 CopySource={"Bucket": bucket, "Key": "src"}, CopySourceIfMatch='"0000"')
    depot.assert_unchanged(before)


def test_delete_objects_reports_each_key_and_quiet_reports_none(s3, bucket):
    for key in ("x1", "x2", "x3"):
        s3.put_object(Bucket=bucket, Key=key, Body=key.encode())
    out = s3.delete_objects(Bucket=bucket, Delete={"Objects": [{"Key": "x1"}, {"Key": "missing"}]})
    assert sorted(d["Key"] for d in out["Deleted"]) == ["missing", "x1"]
    assert "Errors" not in out
    out = s3.delete_objects(Bucket=bucket, Delete={"Objects": [{"Key": "x2"}], "Quiet": True})
    assert "Deleted" not in out and "Errors" not in out
    assert [o["Key"] for o in s3.list_objects_v2(Bucket=bucket)["Contents"]] == ["x3"]


def test_raw_get_of_percent_encoded_key(depot, s3, bucket):
    key = "raw/with space & plus+.txt"
    s3.put_object(Bucket=bucket, Key=key, Body=b"raw")
    response = depot.request("GET", f"/{bucket}/{quote_key(key)}")
    assert response.status_code == 200 and response.content == b"raw"
    assert response.headers["ETag"] == md5_etag(b"raw")
