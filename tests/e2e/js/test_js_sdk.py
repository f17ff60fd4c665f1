"""The AWS SDK for JavaScript v3 (@aws-sdk/client-s3, @aws-sdk/lib-storage) with its default checksum settings.

Current versions send a CRC32 with every upload by default: as a header for in-memory bodies, and in an
aws-chunked body with an x-amz-checksum-crc32 trailer (STREAMING-UNSIGNED-PAYLOAD-TRAILER) for streams;
lib-storage's Upload creates a multipart upload with ChecksumAlgorithm CRC32 and completes it with the
part checksums (a COMPOSITE checksum). sdk_round_trip.mjs does the uploads and reads everything back with
ChecksumMode ENABLED (the SDK verifies the response checksums itself); this test checks the bytes and
every checksum against values computed here, and that the SDK really used the forms it is meant to test.
bucket_features.mjs drives issue 27's features through the same SDK: object and bucket tagging, lifecycle
and CORS configurations, conditional deletes, ACLs and Object Lock (test_sse.py drives SSE-C with it).

Needs node >= 20 and tests/e2e/js/node_modules (scripts/js-deps runs `npm ci`).
"""

from __future__ import annotations

import hashlib
import json
import random
import shutil
from pathlib import Path

import pytest
import requests

from depot_harness import clean_env, md5_etag, run, unique_bucket_name
from test_checksums import checksum, composite_checksum

HERE = Path(__file__).resolve().parent
MiB = 1024 * 1024
PART = 5 * MiB


def data(n: int, seed) -> bytes:
    return random.Random(str(seed)).randbytes(n)


@pytest.fixture(scope="module")
def node() -> str:
    path = shutil.which("node", path="/usr/local/bin:/usr/bin:/bin")
    assert path, "node is not installed (the JavaScript SDK tests need node >= 20)"
    assert (HERE / "node_modules" / "@aws-sdk" / "client-s3").is_dir(), (
        "tests/e2e/js/node_modules is missing: run scripts/js-deps (npm ci in tests/e2e/js)")
    return path


def parts_of(body: bytes) -> list[bytes]:
    return [body[i:i + PART] for i in range(0, len(body), PART)]


@pytest.mark.slow
def test_js_sdk_default_checksums_round_trip(depot, s3, bucket, tmp_path, node):
    files = {
        "buffer.bin": data(1 * MiB + 3, "js-buffer"),
        "stream.bin": data(3 * MiB + 5, "js-stream"),
        "generic.bin": data(2 * MiB + 7, "js-generic"),
        "multipart.bin": data(20 * MiB + 12345, "js-multipart"),  # 5 parts: 4 x 5 MiB and a short one
    }
    for name, body in files.items():
        (tmp_path / name).write_bytes(body)
    user = depot.user("alice")
    env = clean_env({
        "DEPOT_ENDPOINT": depot.endpoint,
        "DEPOT_REGION": depot.region,
        "DEPOT_BUCKET": bucket,
        "DEPOT_WORKDIR": str(tmp_path),
        "AWS_ACCESS_KEY_ID": user.access_key,
        "AWS_SECRET_ACCESS_KEY": user.secret,
        "AWS_CONFIG_FILE": "/dev/null",
        "AWS_SHARED_CREDENTIALS_FILE": "/dev/null",
        "AWS_EC2_METADATA_DISABLED": "true",
        "NODE_NO_WARNINGS": "1",
    })
    proc = run([node, str(HERE / "sdk_round_trip.mjs")], env=env, cwd=str(HERE), timeout=600)
    results = {r["name"]: r for r in json.loads(proc.stdout)["results"]}

    expectations = {
        "put-buffer": ("buffer.bin", "js/buffer.bin"),
        "put-file-stream": ("stream.bin", "js/stream.bin"),
        "put-generic-stream": ("generic.bin", "js/generic.bin"),
        "upload-multipart": ("multipart.bin", "js/multipart.bin"),
    }
    for name, (file, key) in expectations.items():
        result, body = results[name], files[file]
        multipart = name == "upload-multipart"
        expected_etag = md5_etag(body) if not multipart else (
            f'"{hashlib.md5(b"".join(hashlib.md5(p).digest() for p in parts_of(body))).hexdigest()}'
            f'-{len(parts_of(body))}"')
        expected_crc = composite_checksum("CRC32", parts_of(body)) if multipart else checksum("CRC32", body)

        # Byte for byte, through the SDK and through boto3.
        got = result["get"]
        assert got["size"] == len(body), name
        assert got["sha256"] == hashlib.sha256(body).hexdigest(), f"{name}: the downloaded bytes differ"
        assert s3.get_object(Bucket=bucket, Key=key)["Body"].read() == body, name
        assert got["etag"] == expected_etag, name
        assert got["contentEncoding"] in (None, ""), f"{name}: stored Content-Encoding {got['contentEncoding']!r}"

        # The CRC32 the SDK sent is the one stored and returned with ChecksumMode ENABLED.
        assert result["response"]["checksums"].get("ChecksumCRC32") == expected_crc, (name, result["response"])
        assert got["checksums"].get("ChecksumCRC32") == expected_crc, (name, got)
        assert got["head"]["checksums"].get("ChecksumCRC32") == expected_crc, (name, got["head"])
        assert got["checksums"].get("ChecksumType", "COMPOSITE" if multipart else "FULL_OBJECT") == (
            "COMPOSITE" if multipart else "FULL_OBJECT"), (name, got)

    # What went over the wire: the SDK's defaults are what this test is about.
    def uploads(name, command):
        return [r["headers"] for r in results[name]["requests"] if r["command"] == command]

    [buffer_put] = uploads("put-buffer", "PutObjectCommand")
    assert buffer_put.get("x-amz-checksum-crc32") == checksum("CRC32", files["buffer.bin"]) or (
        buffer_put.get("x-amz-trailer") == "x-amz-checksum-crc32"), buffer_put

    for name, file in (("put-file-stream", "stream.bin"), ("put-generic-stream", "generic.bin")):
        [put] = uploads(name, "PutObjectCommand")
        # A stream goes as aws-chunked with a CRC32 trailer.
        assert "aws-chunked" in put.get("content-encoding", ""), (name, put)
        assert put.get("x-amz-trailer") == "x-amz-checksum-crc32", (name, put)
        assert put.get("x-amz-content-sha256", "").startswith("STREAMING-"), (name, put)
        assert put.get("x-amz-decoded-content-length") == str(len(files[file])), (name, put)

    part_requests = uploads("upload-multipart", "UploadPartCommand")
    assert len(part_requests) == 5
    for headers in part_requests:
        assert headers.get("x-amz-checksum-crc32") or headers.get("x-amz-trailer") == "x-amz-checksum-crc32", headers
    [create] = uploads("upload-multipart", "CreateMultipartUploadCommand")
    assert create.get("x-amz-checksum-algorithm") == "CRC32", create
    assert s3.head_object(Bucket=bucket, Key="js/multipart.bin")["ContentType"] == "application/x-weights"
    assert s3.list_multipart_uploads(Bucket=bucket).get("Uploads", []) == []

    # Which framing each request used, for the report when something above fails.
    print(json.dumps({name: [{k: v for k, v in r["headers"].items() if k in (
        "content-encoding", "transfer-encoding", "content-length", "x-amz-content-sha256", "x-amz-trailer",
        "x-amz-decoded-content-length", "x-amz-checksum-crc32", "x-amz-sdk-checksum-algorithm")}
        for r in result["requests"]] for name, result in results.items()}, indent=1))


def test_js_sdk_tagging_lifecycle_cors_conditional_delete_acl_and_object_lock(depot, s3, bucket, node):
    user = depot.user("alice")
    lock_bucket = unique_bucket_name("js-lock")
    env = clean_env({
        "DEPOT_ENDPOINT": depot.endpoint,
        "DEPOT_REGION": depot.region,
        "DEPOT_BUCKET": bucket,
        "DEPOT_LOCK_BUCKET": lock_bucket,
        "AWS_ACCESS_KEY_ID": user.access_key,
        "AWS_SECRET_ACCESS_KEY": user.secret,
        "AWS_CONFIG_FILE": "/dev/null",
        "AWS_SHARED_CREDENTIALS_FILE": "/dev/null",
        "AWS_EC2_METADATA_DISABLED": "true",
        "NODE_NO_WARNINGS": "1",
    })
    r = json.loads(run([node, str(HERE / "bucket_features.mjs")], env=env, cwd=str(HERE), timeout=300).stdout)
    tags = [{"Key": "team", "Value": "vision"}, {"Key": "stage", "Value": "raw data"}]

    def ok(name):
        assert "ok" in r[name], (name, r[name])
        return r[name]["ok"]

    def error(name):
        assert "error" in r[name], (name, r[name])
        return r[name]["error"]["name"], r[name]["error"]["status"]

    # Object tagging, as the SDK sees it and as boto3 reads it back.
    ok("put-with-tagging")
    assert ok("get-object-tagging") == tags
    assert ok("get-object-tag-count") == 2
    ok("put-object-tagging")
    assert ok("get-object-tagging-after") == [{"Key": "k", "Value": "v"}]
    assert r["delete-object-tagging"]["status"] == 204
    assert ok("get-object-tagging-deleted") == []
    assert error("put-object-tagging-too-many") == ("InvalidTag", 400), r["put-object-tagging-too-many"]
    assert s3.get_object_tagging(Bucket=bucket, Key="t/a")["TagSet"] == []
    assert s3.get_object(Bucket=bucket, Key="t/a")["Body"].read() == b"tagged"

    # Bucket tagging.
    ok("put-bucket-tagging")
    assert ok("get-bucket-tagging") == tags
    assert r["delete-bucket-tagging"]["status"] == 204
    assert error("get-bucket-tagging-deleted") == ("NoSuchTagSet", 404)

    # Lifecycle: the rules come back as sent; a transition is refused and changes nothing.
    ok("put-lifecycle")
    rules = {rule["ID"]: rule for rule in ok("get-lifecycle")}
    assert set(rules) == {"expire-tmp", "abort-uploads", "old-versions"}
    assert rules["expire-tmp"]["Expiration"] == {"Days": 7} and rules["expire-tmp"]["Filter"] == {"Prefix": "tmp/"}
    assert rules["abort-uploads"]["AbortIncompleteMultipartUpload"] == {"DaysAfterInitiation": 2}
    assert rules["old-versions"]["Status"] == "Disabled"
    assert rules["old-versions"]["Filter"]["And"] == {"Prefix": "ckpt/", "Tags": [{"Key": "keep", "Value": "no"}]}
    assert rules["old-versions"]["NoncurrentVersionExpiration"] == {"NoncurrentDays": 30,
                                                                    "NewerNoncurrentVersions": 3}
    assert error("put-lifecycle-transition") == ("NotImplemented", 501)
    assert r["delete-lifecycle"]["status"] == 204
    assert error("get-lifecycle-deleted") == ("NoSuchLifecycleConfiguration", 404)

    # CORS.
    ok("put-cors")
    [rule] = ok("get-cors")
    assert rule["AllowedOrigins"] == ["https://app.example.com"] and rule["AllowedMethods"] == ["GET", "PUT"]
    assert rule["AllowedHeaders"] == ["*"] and rule["ExposeHeaders"] == ["ETag"] and rule["MaxAgeSeconds"] == 600
    assert r["delete-cors"]["status"] == 204
    assert error("get-cors-deleted") == ("NoSuchCORSConfiguration", 404)

    # Conditional delete: a stale ETag is 412 and the object stays; the current one deletes it.
    assert error("delete-if-match-stale") == ("PreconditionFailed", 412)
    assert r["delete-if-match"]["status"] == 204
    assert "Contents" not in s3.list_objects_v2(Bucket=bucket, Prefix="d/")

    # ACLs: what the SDK set is what boto3 and an anonymous reader see.
    all_users = "http://acs.amazonaws.com/groups/global/AllUsers"
    authenticated = "http://acs.amazonaws.com/groups/global/AuthenticatedUsers"

    def grants(listed):
        return {(g["Grantee"].get("ID") or g["Grantee"].get("URI"), g["Permission"]) for g in listed}
    ok("put-ownership-controls")
    ok("put-with-acl")
    assert grants(ok("get-object-acl")) == {("alice", "FULL_CONTROL"), (all_users, "READ")}
    ok("put-object-acl")
    assert grants(ok("get-object-acl-after")) == {("alice", "FULL_CONTROL"), (authenticated, "READ")}
    assert error("put-object-acl-unknown-user") == ("InvalidArgument", 400)
    assert grants(s3.get_object_acl(Bucket=bucket, Key="a/pub")["Grants"]) == grants(ok("get-object-acl-after"))
    assert requests.get(f"{depot.endpoint}/{bucket}/a/pub", timeout=30).status_code == 403
    assert depot.client("bob").get_object(Bucket=bucket, Key="a/pub")["Body"].read() == b"public"
    ok("put-bucket-acl")
    assert grants(ok("get-bucket-acl")) == {("alice", "FULL_CONTROL"), ("bob", "READ")}
    depot.client("bob").list_objects_v2(Bucket=bucket)

    # Object Lock.
    ok("create-lock-bucket")
    ok("put-lock-configuration")
    assert ok("get-lock-configuration") == {"ObjectLockEnabled": "Enabled",
                                            "Rule": {"DefaultRetention": {"Mode": "GOVERNANCE", "Days": 1}}}
    version = ok("put-held")
    assert ok("get-legal-hold") == {"Status": "ON"}
    assert ok("get-retention")["Mode"] == "GOVERNANCE"
    assert error("delete-held-version") == ("AccessDenied", 403)
    ok("put-legal-hold-off")
    assert error("delete-retained-version") == ("AccessDenied", 403)
    assert s3.get_object(Bucket=lock_bucket, Key="held", VersionId=version)["Body"].read() == b"worm"
    assert s3.get_object_legal_hold(Bucket=lock_bucket, Key="held")["LegalHold"]["Status"] == "OFF"

    # Bucket policies: what the SDK put comes back as sent, GetBucketPolicyStatus reads it as not public, a
    # malformed one is refused, and a deleted one is gone.
    ok("put-shared")
    assert r["put-bucket-policy"]["status"] == 204
    assert json.loads(ok("get-bucket-policy"))["Statement"][0]["Principal"] == {"AWS": "bob"}
    assert ok("get-bucket-policy-status") == {"IsPublic": False}
    assert error("put-bucket-policy-malformed") == ("MalformedPolicy", 400)
    assert r["delete-bucket-policy"]["status"] == 204
    assert error("get-bucket-policy-deleted") == ("NoSuchBucketPolicy", 404)
