"""Every request header and query parameter of the S3 API is honoured or refused, never silently ignored
(issue 27: "audit every request header and query parameter of the S3 API reference against the code").

The enumeration is botocore's S3 service model — Debian's, and a newer botocore's when the machine has one
(see OTHER_PYTHONS): each header and query parameter an operation's input takes must be classified below as
honoured (with the test module that exercises it, which must name it), refused (501 NotImplemented, checked
here with nothing changed) or taken only by operations Depot does not implement (each of which answers 501,
checked here too). A botocore that adds a header fails the first test until the header is classified.
"""

from __future__ import annotations

import datetime as dt
import functools
import json
import re
import subprocess
import urllib.parse
import uuid
from pathlib import Path

import botocore.session
import pytest

from depot_harness import assert_error_response, clean_env, content_md5, expect_error, quote_key

HERE = Path(__file__).parent

# Another botocore than Debian's (1.43 on the development machines): its model has newer headers.
OTHER_PYTHONS = [p for p in ("/root/.pyenv/versions/3.11.7/bin/python3",) if Path(p).exists()]

_MODEL_NAMES = r"""
import botocore.session, json
m = botocore.session.get_session().get_service_model("s3")
out = {}
ops = {}
for op in m.operation_names:
    o = m.operation_model(op)
    ops[op] = [o.http["method"], o.http["requestUri"]]
    if not o.input_shape:
        continue
    for name, mem in o.input_shape.members.items():
        loc = mem.serialization.get("location")
        if loc in ("header", "headers", "querystring"):
            wire = mem.serialization.get("name", name)
            key = ("query " + wire) if loc == "querystring" else ("header " + wire.lower())
            entry = out.setdefault(key, {"members": [], "operations": []})
            entry["members"].append(name)
            entry["operations"].append(op)
print(json.dumps({"names": out, "operations": ops}))
"""

# ---- honoured: the test module that exercises each (it must name the header, or botocore's member name)

HONOURED = {
    "header cache-control": "test_objects.py",
    "header content-disposition": "test_objects.py",
    "header content-encoding": "test_chunked.py",
    "header content-language": "test_objects.py",
    "header content-length": "test_limits.py",
    # The owner never loses the right to manage a policy here: accepted as a boolean (test_bucket_policy.py).
    "header x-amz-confirm-remove-self-bucket-access": "test_bucket_policy.py",
    "header content-md5": "test_objects.py",
    "header content-type": "test_objects.py",
    "header expires": "test_attacks_headers.py",
    "header if-match": "test_conditional_writes.py",
    "header if-modified-since": "test_objects.py",
    "header if-none-match": "test_conditional_writes.py",
    "header if-unmodified-since": "test_objects.py",
    "header range": "test_objects.py",
    "header x-amz-acl": "test_acl.py",
    "header x-amz-grant-full-control": "test_acl.py",
    "header x-amz-grant-read": "test_acl.py",
    "header x-amz-grant-read-acp": "test_acl.py",
    "header x-amz-grant-write": "test_acl.py",
    "header x-amz-grant-write-acp": "test_acl.py",
    "header x-amz-checksum-algorithm": "test_checksums.py",
    "header x-amz-checksum-crc32": "test_checksums.py",
    "header x-amz-checksum-crc32c": "test_chunked.py",
    "header x-amz-checksum-crc64nvme": "test_checksums.py",
    "header x-amz-checksum-mode": "test_checksums.py",
    "header x-amz-checksum-sha1": "test_request_headers.py",
    "header x-amz-checksum-sha256": "test_checksums.py",
    "header x-amz-checksum-type": "test_checksums.py",
    "header x-amz-copy-source": "test_objects.py",
    "header x-amz-copy-source-if-match": "test_objects.py",
    "header x-amz-copy-source-if-modified-since": "test_request_headers.py",
    "header x-amz-copy-source-if-none-match": "test_request_headers.py",
    "header x-amz-copy-source-if-unmodified-since": "test_request_headers.py",
    "header x-amz-copy-source-range": "test_multipart.py",
    "header x-amz-expected-bucket-owner": "test_request_headers.py",
    "header x-amz-if-match-last-modified-time": "test_s3_exactness.py",
    "header x-amz-if-match-size": "test_s3_exactness.py",
    "header x-amz-max-parts": "test_checksums.py",
    "header x-amz-meta-": "test_objects.py",
    "header x-amz-metadata-directive": "test_objects.py",
    "header x-amz-object-attributes": "test_checksums.py",
    "header x-amz-part-number-marker": "test_checksums.py",
    "header x-amz-sdk-checksum-algorithm": "test_checksums.py",
    "header x-amz-source-expected-bucket-owner": "test_request_headers.py",
    "header x-amz-mp-object-size": "test_request_headers.py",
    "header x-amz-tagging": "test_tagging.py",
    "header x-amz-tagging-directive": "test_tagging.py",
    # Honoured by what Depot is: one storage class, nothing archived, nothing billed. Each value Depot cannot honour is refused (tests below).
    "header x-amz-server-side-encryption": "test_sse.py",
    "header x-amz-server-side-encryption-customer-algorithm": "test_sse.py",
    "header x-amz-server-side-encryption-customer-key": "test_sse.py",
    "header x-amz-server-side-encryption-customer-key-md5": "test_sse.py",
    "header x-amz-copy-source-server-side-encryption-customer-algorithm": "test_sse.py",
    "header x-amz-copy-source-server-side-encryption-customer-key": "test_sse.py",
    "header x-amz-copy-source-server-side-encryption-customer-key-md5": "test_sse.py",
    "header x-amz-storage-class": "test_request_headers.py",
    "header x-amz-optional-object-attributes": "test_request_headers.py",
    "header x-amz-request-payer": "test_request_headers.py",
    "header x-amz-bypass-governance-retention": "test_object_lock.py",
    "header x-amz-object-lock-mode": "test_object_lock.py",
    "header x-amz-object-lock-retain-until-date": "test_object_lock.py",
    "header x-amz-object-lock-legal-hold": "test_object_lock.py",
    "header x-amz-object-ownership": "test_acl.py",
    "header x-amz-bucket-object-lock-enabled": "test_object_lock.py",
    "header x-amz-transition-default-minimum-object-size": "test_request_headers.py",
    "query bucket-region": "test_request_headers.py",
    "query continuation-token": "test_listing.py",
    "query delimiter": "test_listing.py",
    "query encoding-type": "test_listing.py",
    "query fetch-owner": "test_listing.py",
    "query key-marker": "test_versioning.py",
    "query marker": "test_listing.py",
    "query max-buckets": "test_request_headers.py",
    "query max-keys": "test_listing.py",
    "query max-parts": "test_multipart.py",
    "query max-uploads": "test_multipart.py",
    "query part-number-marker": "test_multipart.py",
    "query partNumber": "test_checksums.py",
    "query prefix": "test_listing.py",
    "query response-cache-control": "test_attacks_headers.py",
    "query response-content-disposition": "test_attacks_headers.py",
    "query response-content-encoding": "test_attacks_headers.py",
    "query response-content-language": "test_attacks_headers.py",
    "query response-content-type": "test_attacks_headers.py",
    "query response-expires": "test_attacks_headers.py",
    "query start-after": "test_listing.py",
    "query upload-id-marker": "test_multipart.py",
    "query uploadId": "test_multipart.py",
    "query version-id-marker": "test_versioning.py",
    "query versionId": "test_versioning.py",
}

# ---- refused with 501 NotImplemented: (the operation to send it with, a value)

REFUSED = {
    "header x-amz-server-side-encryption-aws-kms-key-id": ("PutObject", "key-1"),
    "header x-amz-server-side-encryption-bucket-key-enabled": ("PutObject", "true"),
    "header x-amz-server-side-encryption-context": ("PutObject", "e30="),
    "header x-amz-website-redirect-location": ("PutObject", "/other"),
    "header x-amz-write-offset-bytes": ("PutObject", "0"),
    "header x-amz-mfa": ("DeleteObject", "SERIAL 123456"),
    "header x-amz-checksum-md5": ("PutObject", "1B2M2Y8AsgTpgAmY7PhCfg=="),
    "header x-amz-checksum-sha512": ("PutObject", "AAAA"),
    "header x-amz-checksum-xxhash3": ("PutObject", "AAAA"),
    "header x-amz-checksum-xxhash64": ("PutObject", "AAAA"),
    "header x-amz-checksum-xxhash128": ("PutObject", "AAAA"),
    "header x-amz-if-match-initiated-time": ("AbortMultipartUpload", "Wed, 01 Jan 2025 00:00:00 GMT"),
    "header x-amz-bucket-namespace": ("CreateBucket", "account-regional"),
    "header x-amz-bucket-object-lock-token": ("PutObjectLockConfiguration", "token"),
}

# ---- taken only by operations Depot does not implement (each answers 501), or by other endpoints

NOT_S3_ENDPOINTS = {
    # S3 Object Lambda's endpoint answers WriteGetObjectResponse; S3 Express's zonal endpoints answer the
    # directory-bucket operations. Neither is an endpoint Depot is.
    "WriteGetObjectResponse": "S3 Object Lambda",
    "CreateSession": "S3 Express One Zone",
    "ListDirectoryBuckets": "S3 Express One Zone",
    "RenameObject": "S3 Express One Zone",
}
OF_UNIMPLEMENTED_OPERATIONS = {
    "header x-amz-skip-destination-validation",
    "header x-amz-request-route",
    "header x-amz-request-token",
    "header x-amz-client-token",
    "header x-amz-create-session-mode",
    "header x-amz-rename-source",
    "header x-amz-rename-source-if-match",
    "header x-amz-rename-source-if-modified-since",
    "header x-amz-rename-source-if-none-match",
    "header x-amz-rename-source-if-unmodified-since",
    "query id",
    "query max-directory-buckets",
}


def _is_forwarded(name: str) -> bool:
    return name.startswith("header x-amz-fwd-")  # WriteGetObjectResponse's


@functools.cache
def models() -> dict[str, dict]:
    """Every botocore model available: its version -> {"names": {name: {members, operations}},
    "operations": {operation: [method, request URI]}}."""
    found = {}
    debian = subprocess.run(["/usr/bin/python3", "-c", _MODEL_NAMES], check=True, capture_output=True, text=True,
                            env=clean_env({}), timeout=120)
    found[f"Debian botocore {botocore.__version__}"] = json.loads(debian.stdout)
    for python in OTHER_PYTHONS:
        other = subprocess.run([python, "-c", _MODEL_NAMES], capture_output=True, text=True, timeout=120)
        if other.returncode == 0:
            found[python] = json.loads(other.stdout)
    return found


def test_every_header_and_query_parameter_of_the_model_is_classified():
    classified = [set(HONOURED), set(REFUSED), OF_UNIMPLEMENTED_OPERATIONS]
    for a in range(len(classified)):
        for b in range(a + 1, len(classified)):
            assert not classified[a] & classified[b], "classified twice"
    texts = {}
    for model, found in models().items():
        names = found["names"]
        unclassified = sorted(n for n in names if not _is_forwarded(n) and not any(n in c for c in classified))
        assert not unclassified, f"{model}: classify these (honoured with a test, refused, or not routed)"
        for name, entry in names.items():
            if name in HONOURED:
                module = HONOURED[name]
                text = texts.setdefault(module, (HERE / module).read_text())
                wire = name.split(" ", 1)[1]
                assert wire.lower() in text.lower() or any(
                    re.search(rf"\b{m}\b", text) for m in entry["members"]), f"{module} does not exercise {name}"
            if name in OF_UNIMPLEMENTED_OPERATIONS or _is_forwarded(name):
                for op in entry["operations"]:
                    assert op in NOT_S3_ENDPOINTS or op not in IMPLEMENTED_OPERATIONS, (model, name, op)


# Everything else in the models answers 501 NotImplemented (test_every_other_operation_answers_501).
# GetBucketLifecycle and PutBucketLifecycle are the deprecated names of the same requests.
IMPLEMENTED_OPERATIONS = {
    "AbortMultipartUpload", "CompleteMultipartUpload", "CopyObject", "CreateBucket", "CreateMultipartUpload",
    "DeleteBucket", "DeleteBucketCors", "DeleteBucketEncryption", "DeleteBucketLifecycle",
    "DeleteBucketOwnershipControls", "DeleteBucketTagging", "DeleteObject", "DeleteObjectTagging", "DeleteObjects",
    "DeleteBucketPolicy", "DeletePublicAccessBlock", "GetBucketAcl", "GetBucketCors", "GetBucketEncryption", "GetBucketLifecycle",
    "GetBucketLifecycleConfiguration", "GetBucketLocation", "GetBucketOwnershipControls", "GetBucketPolicy",
    "GetBucketPolicyStatus", "GetBucketTagging",
    "GetBucketVersioning", "GetObject", "GetObjectAcl", "GetObjectAttributes", "GetObjectLegalHold",
    "GetObjectLockConfiguration", "GetObjectRetention", "GetObjectTagging", "GetPublicAccessBlock", "HeadBucket",
    "HeadObject", "ListBuckets", "ListMultipartUploads", "ListObjectVersions", "ListObjects", "ListObjectsV2",
    "ListParts", "PutBucketAcl", "PutBucketCors", "PutBucketEncryption", "PutBucketLifecycle",
    "PutBucketLifecycleConfiguration", "PutBucketOwnershipControls", "PutBucketPolicy", "PutBucketTagging", "PutBucketVersioning",
    "PutObject", "PutObjectAcl", "PutObjectLegalHold", "PutObjectLockConfiguration", "PutObjectRetention",
    "PutObjectTagging", "PutPublicAccessBlock", "UploadPart", "UploadPartCopy",
}


def _operation_uris() -> dict[str, tuple[str, str]]:
    """Every operation of every model available: name -> (method, request URI template)."""
    ops = {}
    for found in models().values():
        ops.update({op: tuple(v) for op, v in found["operations"].items()})
    return ops


def _path(template: str, bucket: str, key: str = "k") -> str:
    path = template.replace("{Bucket}", bucket).replace("{Key+}", quote_key(key))
    # Query templates name required parameters ("?select&select-type=2", "?uploadId={UploadId}" is routed).
    return re.sub(r"\{[A-Za-z]+\}", "x", path)


def _send(depot, op: str, bucket: str, headers: dict, key: str = "k", body: bytes = b""):
    method, template = _operation_uris()[op]
    path = _path(template, bucket, key)
    extra = {"id": "x"} if op.endswith("Configuration") and "{Id}" not in template else {}
    if extra:
        path += ("&" if "?" in path else "?") + "&".join(f"{k}={v}" for k, v in extra.items())
    return depot.request(method, path, headers=headers, body=body)


def test_every_other_operation_answers_501(depot, bucket):
    implemented = set(IMPLEMENTED_OPERATIONS)
    missing = implemented - set(_operation_uris())
    assert not missing, missing
    before = depot.snapshot(bucket)
    wrong = {}
    for op in sorted(set(_operation_uris()) - implemented - set(NOT_S3_ENDPOINTS)):
        r = _send(depot, op, bucket, {"content-md5": content_md5(b"<x/>")}, body=b"<x/>")
        if r.status_code != 501 or "<Code>NotImplemented</Code>" not in r.text:
            wrong[op] = (r.status_code, r.text[:160])
    assert not wrong, "\n".join(f"{op}: {v}" for op, v in sorted(wrong.items()))
    depot.assert_unchanged(before)


def _request_for(depot, s3, op: str, bucket: str, header: str, value: str):
    """Sends `op` with one extra header; the request would succeed without it."""
    headers = {header: value}
    if op == "PutObject":
        return depot.request("PUT", f"/{bucket}/refused", headers=headers, body=b"data")
    if op == "CopyObject":  # the source exists
        headers["x-amz-copy-source"] = f"/{bucket}/src"
        return depot.request("PUT", f"/{bucket}/copied", headers=headers)
    if op == "DeleteObject":  # the key exists
        return depot.request("DELETE", f"/{bucket}/kept", headers=headers)
    if op == "CreateBucket":
        return depot.request("PUT", f"/{bucket}-new", headers=headers)
    if op == "PutObjectLockConfiguration":
        body = b"<ObjectLockConfiguration><ObjectLockEnabled>Enabled</ObjectLockEnabled></ObjectLockConfiguration>"
        headers["content-md5"] = content_md5(body)
        return depot.request("PUT", f"/{bucket}?object-lock", headers=headers, body=body)
    if op == "AbortMultipartUpload":
        upload = s3.create_multipart_upload(Bucket=bucket, Key="mpu")["UploadId"]
        return depot.request("DELETE", f"/{bucket}/mpu?uploadId={upload}", headers=headers)
    if op == "CompleteMultipartUpload":
        upload = s3.create_multipart_upload(Bucket=bucket, Key="mpu")["UploadId"]
        etag = s3.upload_part(Bucket=bucket, Key="mpu", UploadId=upload, PartNumber=1, Body=b"data")["ETag"]
        body = (f"<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>{etag}</ETag></Part>"
                "</CompleteMultipartUpload>").encode()
        return depot.request("POST", f"/{bucket}/mpu?uploadId={upload}", headers=headers, body=body)
    raise AssertionError(op)


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_a_refused_header_answers_501_and_changes_nothing(depot, s3, bucket, name):
    op, value = REFUSED[name]
    header = name.split(" ", 1)[1]
    # What the request needs besides the header (a source, an upload) exists before the snapshot.
    if op == "CopyObject":
        s3.put_object(Bucket=bucket, Key="src", Body=b"src")
    if op == "DeleteObject":
        s3.put_object(Bucket=bucket, Key="kept", Body=b"kept")
    before = depot.snapshot(bucket)
    uploads = s3.list_multipart_uploads(Bucket=bucket).get("Uploads", [])
    if op in ("AbortMultipartUpload", "CompleteMultipartUpload"):
        r = _request_for(depot, s3, op, bucket, header, value)
        assert_error_response(r, "NotImplemented", 501)
        # The upload is still there, complete and not aborted.
        after = s3.list_multipart_uploads(Bucket=bucket).get("Uploads", [])
        assert len(after) == len(uploads) + 1
        return
    r = _request_for(depot, s3, op, bucket, header, value)
    error = assert_error_response(r, "NotImplemented", 501)
    assert header in error["Message"]
    depot.assert_unchanged(before)


def test_storage_class_standard_is_honoured_others_refused(depot, s3, bucket):
    s3.put_object(Bucket=bucket, Key="std", Body=b"x", StorageClass="STANDARD")
    assert s3.head_object(Bucket=bucket, Key="std")["ContentLength"] == 1
    before = depot.snapshot(bucket)
    expect_error("NotImplemented", 501, s3.put_object, Bucket=bucket, Key="cold", Body=b"x", StorageClass="GLACIER")
    expect_error("NotImplemented", 501, s3.create_multipart_upload, Bucket=bucket, Key="cold",
                 StorageClass="STANDARD_IA")
    r = depot.request("PUT", f"/{bucket}/cold", headers={"x-amz-storage-class": "COLDEST"}, body=b"x")
    assert_error_response(r, "InvalidStorageClass", 400)
    depot.assert_unchanged(before)


def test_expected_bucket_owner_is_checked(depot, s3, bucket):
    owner = s3.list_buckets()["Owner"]["ID"]
    s3.put_object(Bucket=bucket, Key="k", Body=b"mine", ExpectedBucketOwner=owner)
    assert s3.get_object(Bucket=bucket, Key="k", ExpectedBucketOwner=owner)["Body"].read() == b"mine"
    s3.list_objects_v2(Bucket=bucket, ExpectedBucketOwner=owner)
    before = depot.snapshot(bucket)
    other = depot.users["bob"].id
    expect_error("AccessDenied", 403, s3.put_object, Bucket=bucket, Key="k2", Body=b"x", ExpectedBucketOwner=other)
    expect_error("AccessDenied", 403, s3.get_object, Bucket=bucket, Key="k", ExpectedBucketOwner=other)
    expect_error("AccessDenied", 403, s3.delete_object, Bucket=bucket, Key="k", ExpectedBucketOwner=other)
    expect_error("AccessDenied", 403, s3.list_objects_v2, Bucket=bucket, ExpectedBucketOwner=other)
    expect_error("AccessDenied", 403, s3.copy_object, Bucket=bucket, Key="k3",
                 CopySource={"Bucket": bucket, "Key": "k"}, ExpectedSourceBucketOwner=other)
    depot.assert_unchanged(before)
    s3.copy_object(Bucket=bucket, Key="k3", CopySource={"Bucket": bucket, "Key": "k"},
                   ExpectedSourceBucketOwner=owner, ExpectedBucketOwner=owner)
    assert s3.get_object(Bucket=bucket, Key="k3")["Body"].read() == b"mine"


def test_multipart_object_size_is_checked_on_completion(depot, s3, bucket):
    upload = s3.create_multipart_upload(Bucket=bucket, Key="mpu")["UploadId"]
    etag = s3.upload_part(Bucket=bucket, Key="mpu", UploadId=upload, PartNumber=1, Body=b"four")["ETag"]
    body = (f"<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>{etag}</ETag></Part>"
            "</CompleteMultipartUpload>").encode()
    before = depot.snapshot(bucket)
    for wrong, code in (("5", "InvalidRequest"), ("3", "InvalidRequest"), ("four", "InvalidArgument")):
        r = depot.request("POST", f"/{bucket}/mpu?uploadId={upload}", headers={"x-amz-mp-object-size": wrong},
                          body=body)
        assert_error_response(r, code, 400)
    depot.assert_unchanged(before)
    assert [u["UploadId"] for u in s3.list_multipart_uploads(Bucket=bucket)["Uploads"]] == [upload]
    r = depot.request("POST", f"/{bucket}/mpu?uploadId={upload}", headers={"x-amz-mp-object-size": "4"}, body=body)
    assert r.status_code == 200, r.text
    assert s3.get_object(Bucket=bucket, Key="mpu")["Body"].read() == b"four"


def test_copy_source_conditions(depot, s3, bucket):
    etag = s3.put_object(Bucket=bucket, Key="src", Body=b"source")["ETag"]
    past = dt.datetime(2001, 1, 1, tzinfo=dt.timezone.utc)
    future = dt.datetime.now(dt.timezone.utc) + dt.timedelta(days=1)
    before = depot.snapshot(bucket)
    src = {"Bucket": bucket, "Key": "src"}
    expect_error("PreconditionFailed", 412, s3.copy_object, Bucket=bucket, Key="c", CopySource=src,
                 CopySourceIfNoneMatch=etag)
    expect_error("PreconditionFailed", 412, s3.copy_object, Bucket=bucket, Key="c", CopySource=src,
                 CopySourceIfModifiedSince=future)
    expect_error("PreconditionFailed", 412, s3.copy_object, Bucket=bucket, Key="c", CopySource=src,
                 CopySourceIfUnmodifiedSince=past)
    depot.assert_unchanged(before)
    s3.copy_object(Bucket=bucket, Key="c", CopySource=src, CopySourceIfNoneMatch='"other"',
                   CopySourceIfModifiedSince=past, CopySourceIfUnmodifiedSince=future)
    assert s3.get_object(Bucket=bucket, Key="c")["Body"].read() == b"source"


def test_sha1_checksum_is_verified_and_returned(depot, s3, bucket):
    s3.put_object(Bucket=bucket, Key="k", Body=b"hello", ChecksumAlgorithm="SHA1")
    got = s3.head_object(Bucket=bucket, Key="k", ChecksumMode="ENABLED")
    assert got["ChecksumSHA1"] == "qvTGHdzF6KLavt4PO0gs2a6pQ00="
    before = depot.snapshot(bucket)
    r = depot.request("PUT", f"/{bucket}/bad", headers={"x-amz-checksum-sha1": "qvTGHdzF6KLavt4PO0gs2a6pQ00="},
                      body=b"other")
    assert_error_response(r, "BadDigest", 400)
    depot.assert_unchanged(before)


def test_what_depot_is_passes_what_it_is_not_is_refused(depot, s3, bucket):
    # Nothing is billed: the requester pays nothing, and says so.
    s3.put_object(Bucket=bucket, Key="k", Body=b"x", RequestPayer="requester")
    assert s3.get_object(Bucket=bucket, Key="k", RequestPayer="requester")["Body"].read() == b"x"
    s3.delete_object(Bucket=bucket, Key="k")
    # Nothing is archived: RestoreStatus is never listed.
    r = depot.request("GET", f"/{bucket}?list-type=2", headers={"x-amz-optional-object-attributes": "RestoreStatus"})
    assert r.status_code == 200 and "RestoreStatus" not in r.text
    r = depot.request("GET", f"/{bucket}?list-type=2", headers={"x-amz-optional-object-attributes": "Owner"})
    assert_error_response(r, "InvalidArgument", 400)
    before = depot.snapshot(bucket)
    # Transitions are refused, so their minimum size is a setting without effect; a bad value is still bad.
    rules = (b"<LifecycleConfiguration><Rule><ID>r</ID><Filter/><Status>Enabled</Status>"
             b"<Expiration><Days>1</Days></Expiration></Rule></LifecycleConfiguration>")
    r = depot.request("PUT", f"/{bucket}?lifecycle", body=rules,
                      headers={"x-amz-transition-default-minimum-object-size": "tiny",
                               "content-md5": content_md5(rules)})
    assert_error_response(r, "InvalidArgument", 400)
    depot.assert_unchanged(before)
    r = depot.request("PUT", f"/{bucket}?lifecycle", body=rules,
                      headers={"x-amz-transition-default-minimum-object-size": "all_storage_classes_128K",
                               "content-md5": content_md5(rules)})
    assert r.status_code == 200, r.text
    s3.delete_bucket_lifecycle(Bucket=bucket)


def test_list_buckets_pages(depot, s3):
    prefix = "lbp-" + uuid.uuid4().hex[:8]
    names = [f"{prefix}-{i}" for i in range(5)]
    for n in names:
        s3.create_bucket(Bucket=n)
    try:
        seen, token = [], None
        while True:
            q = f"/?max-buckets=2&prefix={prefix}" + (f"&continuation-token={token}" if token else "")
            r = depot.request("GET", q)
            assert r.status_code == 200, r.text
            page = re.findall(r"<Name>([^<]+)</Name>", r.text)
            assert len(page) <= 2 and f"<Prefix>{prefix}</Prefix>" in r.text
            seen += page
            m = re.search(r"<ContinuationToken>([^<]+)</ContinuationToken>", r.text)
            if not m:
                break
            token = requests_quote(m.group(1))
        assert seen == names
        r = depot.request("GET", f"/?prefix={prefix}&bucket-region={depot.region}")
        assert re.findall(r"<Name>([^<]+)</Name>", r.text) == names
        r = depot.request("GET", f"/?prefix={prefix}&bucket-region=nowhere-1")
        assert re.findall(r"<Name>([^<]+)</Name>", r.text) == []
        for bad in ("0", "10001", "x", ""):
            assert_error_response(depot.request("GET", f"/?max-buckets={bad}"), "InvalidArgument", 400)
        assert_error_response(depot.request("GET", "/?continuation-token=forged"), "InvalidArgument", 400)
    finally:
        for n in names:
            s3.delete_bucket(Bucket=n)


def requests_quote(value: str) -> str:
    return urllib.parse.quote(value, safe="")
