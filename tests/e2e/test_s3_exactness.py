"""S3 exactness (issue 27 §3): conditional deletes (If-Match, x-amz-if-match-size,
x-amz-if-match-last-modified-time; DeleteObjects' ETag/Size/LastModifiedTime), decided atomically with the
delete; anonymous requests answered as S3 does; the canned ACL headers clients send by default; If-None-Match
with an ETag on PutObject answered as radosgw does (issue 42), and If-Range.

Debian's boto3 (1.26) has no IfMatch on DeleteObject: the conditional requests are sent raw, signed with
botocore (Depot.request); Debian's aws cli has no --if-match on delete-object either.
"""

from __future__ import annotations

import base64
import datetime
import email.utils
import hashlib
from concurrent.futures import ThreadPoolExecutor

import pytest
import requests

from depot_harness import assert_error_response, md5_etag, quote_key, unique_bucket_name


def delete(depot, bucket: str, key: str, query: str = "", **headers) -> requests.Response:
    return depot.request("DELETE", f"/{bucket}/{quote_key(key)}{query}",
                         headers={k.replace("_", "-"): v for k, v in headers.items()})


def http_date(dt) -> str:
    return email.utils.format_datetime(dt.astimezone(datetime.timezone.utc), usegmt=True)


def test_conditional_delete_object(depot, s3, bucket):
    body = b"keep me unless unchanged"
    etag = s3.put_object(Bucket=bucket, Key="c", Body=body)["ETag"]
    head = s3.head_object(Bucket=bucket, Key="c")
    # A condition that does not hold: 412, nothing deleted.
    for headers in ({"If-Match": '"0123456789abcdef0123456789abcdef"'},
                    {"x-amz-if-match-size": str(len(body) + 1)},
                    {"x-amz-if-match-last-modified-time": "Mon, 01 Jan 2001 00:00:00 GMT"},
                    {"If-Match": etag, "x-amz-if-match-size": "1"}):
        assert_error_response(delete(depot, bucket, "c", **headers), "PreconditionFailed", 412)
        assert s3.get_object(Bucket=bucket, Key="c")["Body"].read() == body
    # Malformed values are 400, nothing deleted.
    assert_error_response(delete(depot, bucket, "c", **{"x-amz-if-match-size": "big"}), "InvalidArgument", 400)
    assert_error_response(delete(depot, bucket, "c", **{"x-amz-if-match-last-modified-time": "soon"}),
                          "InvalidArgument", 400)
    # If-None-Match has no meaning on DELETE: 501, not a silent success.
    assert_error_response(delete(depot, bucket, "c", **{"If-None-Match": "*"}), "NotImplemented", 501)
    assert s3.head_object(Bucket=bucket, Key="c")["ETag"] == etag
    # All three holding: deleted.
    r = delete(depot, bucket, "c", **{"If-Match": etag, "x-amz-if-match-size": str(len(body)),
                                      "x-amz-if-match-last-modified-time": http_date(head["LastModified"])})
    assert r.status_code == 204, r.text
    # Gone: a condition on an absent key is 404 NoSuchKey (an unconditional delete stays a 204).
    assert_error_response(delete(depot, bucket, "c", **{"If-Match": "*"}), "NoSuchKey", 404)
    assert delete(depot, bucket, "c").status_code == 204
    # "*" matches any existing object.
    s3.put_object(Bucket=bucket, Key="c", Body=b"again")
    assert delete(depot, bucket, "c", **{"If-Match": "*"}).status_code == 204


def test_conditional_delete_in_a_versioned_bucket_is_atomic(depot, s3, bucket):
    s3.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": "Enabled"})
    v1 = s3.put_object(Bucket=bucket, Key="v", Body=b"one")
    v2 = s3.put_object(Bucket=bucket, Key="v", Body=b"two")
    # A version named by id is checked itself.
    assert_error_response(delete(depot, bucket, "v", f"?versionId={v1['VersionId']}", **{"If-Match": v2["ETag"]}),
                          "PreconditionFailed", 412)
    # Concurrent deletes of the current version under the same If-Match: exactly one creates a delete
    # marker; the others find it and answer 404 NoSuchKey.
    with ThreadPoolExecutor(6) as pool:
        responses = list(pool.map(lambda _: delete(depot, bucket, "v", **{"If-Match": v2["ETag"]}), range(6)))
    statuses = sorted(r.status_code for r in responses)
    assert statuses == [204] + [404] * 5, [(r.status_code, r.text) for r in responses]
    versions = s3.list_object_versions(Bucket=bucket, Prefix="v")
    assert len(versions.get("DeleteMarkers", [])) == 1
    assert [v["VersionId"] for v in versions["Versions"]] == [v2["VersionId"], v1["VersionId"]]
    # The old version, deleted by id under a holding condition.
    r = delete(depot, bucket, "v", f"?versionId={v1['VersionId']}", **{"If-Match": v1["ETag"], "x-amz-if-match-size": "3"})
    assert r.status_code == 204, r.text


def test_conditional_delete_objects(depot, s3, bucket):
    etags = {k: s3.put_object(Bucket=bucket, Key=k, Body=k.encode())["ETag"] for k in ("a", "b", "c", "d")}
    head_d = s3.head_object(Bucket=bucket, Key="d")
    xml = ("<Delete>"
           f"<Object><Key>a</Key><ETag>{etags['a']}</ETag></Object>"
           "<Object><Key>b</Key><ETag>\"00000000000000000000000000000000\"</ETag></Object>"
           "<Object><Key>c</Key><Size>99</Size></Object>"
           f"<Object><Key>d</Key><Size>1</Size><LastModifiedTime>"
           f"{head_d['LastModified'].strftime('%Y-%m-%dT%H:%M:%S.000Z')}</LastModifiedTime></Object>"
           "<Object><Key>missing</Key><ETag>*</ETag></Object>"
           "</Delete>").encode()
    md5 = base64.b64encode(hashlib.md5(xml).digest()).decode()
    r = depot.request("POST", f"/{bucket}?delete", body=xml, headers={"Content-MD5": md5})
    assert r.status_code == 200, r.text
    assert "<Deleted><Key>a</Key>" in r.text and "<Deleted><Key>d</Key>" in r.text
    for key, code in (("b", "PreconditionFailed"), ("c", "PreconditionFailed"), ("missing", "NoSuchKey")):
        assert f"<Error><Key>{key}</Key><Code>{code}</Code>" in r.text, r.text
    left = sorted(o["Key"] for o in s3.list_objects_v2(Bucket=bucket)["Contents"])
    assert left == ["b", "c"]


def test_if_none_match_with_an_etag_on_put_object_refuses_only_the_current_one(depot, s3, bucket):
    """Issue 42: PutObject with If-None-Match: "<etag>" answered 501. radosgw and MinIO (what installations
    migrate from) take it as "unless the current object is this one": 412 when it names the current ETag
    (nothing written), the write otherwise. AWS honours only "*" and answers 501 for an ETag."""
    etag = s3.put_object(Bucket=bucket, Key="inm", Body=b"v1")["ETag"]
    for value in (etag, f'"ffff", {etag}', f"W/{etag}"):
        r = depot.request("PUT", f"/{bucket}/inm", body=b"v2", headers={"If-None-Match": value})
        assert_error_response(r, "PreconditionFailed", 412)
    assert s3.get_object(Bucket=bucket, Key="inm")["Body"].read() == b"v1"
    r = depot.request("PUT", f"/{bucket}/inm", body=b"v2", headers={"If-None-Match": '"ffff"'})
    assert r.status_code == 200, r.text
    assert s3.get_object(Bucket=bucket, Key="inm")["Body"].read() == b"v2"
    # On a key with no object, any ETag list holds.
    r = depot.request("PUT", f"/{bucket}/inm-new", body=b"n", headers={"If-None-Match": etag})
    assert r.status_code == 200, r.text
    # With If-Match beside it: still 501, as S3.
    r = depot.request("PUT", f"/{bucket}/inm", body=b"v3", headers={"If-None-Match": '"ffff"', "If-Match": etag})
    assert_error_response(r, "NotImplemented", 501)


def test_if_range_serves_the_range_only_while_its_validator_holds(depot, s3, bucket):
    """Issue 42: a Range with a non-matching If-Range still answered 206, so a client resuming a download
    after the object changed spliced bytes of two versions. RFC 9110 section 13.1.5: 206 while the strong
    ETag or the exact Last-Modified date names the object, the whole object (200) otherwise."""
    s3.put_object(Bucket=bucket, Key="ir", Body=b"0123456789")
    head = s3.head_object(Bucket=bucket, Key="ir")["ResponseMetadata"]["HTTPHeaders"]
    for validator in (head["etag"], head["last-modified"]):
        r = depot.request("GET", f"/{bucket}/ir", headers={"Range": "bytes=2-4", "If-Range": validator})
        assert r.status_code == 206 and r.content == b"234", (validator, r.status_code, r.content)
    for validator in ('"0000"', "W/" + head["etag"], "Sun, 06 Nov 1994 08:49:37 GMT"):
        r = depot.request("GET", f"/{bucket}/ir", headers={"Range": "bytes=2-4", "If-Range": validator})
        assert r.status_code == 200 and r.content == b"0123456789", (validator, r.status_code, r.content)
        assert "content-range" not in {k.lower() for k in r.headers}


def test_anonymous_requests_answer_as_s3(depot, s3, bucket):
    s3.put_object(Bucket=bucket, Key="there", Body=b"x")
    missing = unique_bucket_name("nobody")
    # A bucket that does not exist: 404 NoSuchBucket, as S3 answers anyone.
    for method in ("GET", "DELETE"):
        r = requests.request(method, f"{depot.endpoint}/{missing}/key", timeout=30)
        assert_error_response(r, "NoSuchBucket", 404)
    assert_error_response(requests.get(f"{depot.endpoint}/{missing}", timeout=30), "NoSuchBucket", 404)
    r = requests.head(f"{depot.endpoint}/{missing}/key", timeout=30)
    assert r.status_code == 404 and r.content == b""
    # An existing bucket tells nothing about its keys: 403 for a present and an absent key alike (S3 answers
    # callers that may not list the bucket the same way); creating a bucket anonymously is 403 too.
    for key in ("there", "absent"):
        assert_error_response(requests.get(f"{depot.endpoint}/{bucket}/{key}", timeout=30), "AccessDenied", 403)
    assert_error_response(requests.put(f"{depot.endpoint}/{missing}", timeout=30), "AccessDenied", 403)
    assert_error_response(requests.get(f"{depot.endpoint}/models/x", timeout=30), "AccessDenied", 403)


@pytest.mark.parametrize("acl", ["private", "bucket-owner-full-control"])
def test_default_canned_acl_headers_are_accepted_on_every_write(depot, s3, bucket, acl, tmp_path):
    """What tools send by default: the canned ACL changes nothing (objects are private to their owner)."""
    s3.put_object(Bucket=bucket, Key="acl", Body=b"x", ACL=acl)
    s3.copy_object(Bucket=bucket, Key="acl-copy", CopySource={"Bucket": bucket, "Key": "acl"}, ACL=acl)
    up = s3.create_multipart_upload(Bucket=bucket, Key="acl-mp", ACL=acl)
    part = s3.upload_part(Bucket=bucket, Key="acl-mp", UploadId=up["UploadId"], PartNumber=1, Body=b"p")
    s3.complete_multipart_upload(Bucket=bucket, Key="acl-mp", UploadId=up["UploadId"],
                                 MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": part["ETag"]}]})
    name = unique_bucket_name("acl")
    s3.create_bucket(Bucket=name, ACL="private")
    s3.delete_bucket(Bucket=name)
    assert md5_etag(b"x") == s3.head_object(Bucket=bucket, Key="acl-copy")["ETag"]
    # Still private: anonymous reads are refused.
    assert requests.get(f"{depot.endpoint}/{bucket}/acl", timeout=30).status_code == 403
    src = tmp_path / "f.txt"
    src.write_bytes(b"cli")
    depot.aws("s3", "cp", "--acl", acl, str(src), f"s3://{bucket}/acl-cli")
    assert s3.get_object(Bucket=bucket, Key="acl-cli")["Body"].read() == b"cli"


def test_list_multipart_uploads_reports_the_checksum_algorithm_and_type(depot, s3, bucket):
    composite = s3.create_multipart_upload(Bucket=bucket, Key="ck-c", ChecksumAlgorithm="SHA256")["UploadId"]
    plain = s3.create_multipart_upload(Bucket=bucket, Key="ck-p")["UploadId"]
    r = depot.request("GET", f"/{bucket}?uploads")
    assert r.status_code == 200, r.text
    assert (f"<UploadId>{composite}</UploadId>" in r.text and
            "<ChecksumAlgorithm>SHA256</ChecksumAlgorithm><ChecksumType>COMPOSITE</ChecksumType>" in r.text), r.text
    entry = r.text.split(f"<UploadId>{plain}</UploadId>", 1)[1].split("</Upload>", 1)[0]
    assert "Checksum" not in entry
    for key, upload in (("ck-c", composite), ("ck-p", plain)):
        s3.abort_multipart_upload(Bucket=bucket, Key=key, UploadId=upload)


def test_a_wrong_checksum_sha256_on_put_object_is_bad_digest(depot, s3, bucket):
    wrong = base64.b64encode(hashlib.sha256(b"other bytes").digest()).decode()
    r = depot.request("PUT", f"/{bucket}/bd", body=b"the bytes", headers={"x-amz-checksum-sha256": wrong})
    assert_error_response(r, "BadDigest", 400)
    with pytest.raises(Exception) as err:
        s3.put_object(Bucket=bucket, Key="bd", Body=b"the bytes", ChecksumSHA256=wrong)
    assert "BadDigest" in str(err.value)
    assert "Contents" not in s3.list_objects_v2(Bucket=bucket, Prefix="bd")


def test_completing_a_completed_upload_again_succeeds_as_on_s3(depot, s3, bucket):
    """A client whose CompleteMultipartUpload response was lost retries it: S3 answers the same success."""
    up = s3.create_multipart_upload(Bucket=bucket, Key="again", ChecksumAlgorithm="SHA256")["UploadId"]
    small = s3.upload_part(Bucket=bucket, Key="again", UploadId=up, PartNumber=1, Body=b"a" * 10,
                           ChecksumAlgorithm="SHA256")
    last = s3.upload_part(Bucket=bucket, Key="again", UploadId=up, PartNumber=2, Body=b"b" * 10,
                          ChecksumAlgorithm="SHA256")
    parts = lambda first: [{"PartNumber": 1, "ETag": first["ETag"], "ChecksumSHA256": first["ChecksumSHA256"]},
                           {"PartNumber": 2, "ETag": last["ETag"], "ChecksumSHA256": last["ChecksumSHA256"]}]
    with pytest.raises(Exception) as err:
        s3.complete_multipart_upload(Bucket=bucket, Key="again", UploadId=up, MultipartUpload={"Parts": parts(small)})
    assert "EntityTooSmall" in str(err.value)
    # The part re-uploaded (now big enough), then completed, then completed again.
    big = s3.upload_part(Bucket=bucket, Key="again", UploadId=up, PartNumber=1, Body=b"a" * (5 * 1024 * 1024),
                         ChecksumAlgorithm="SHA256")
    first = s3.complete_multipart_upload(Bucket=bucket, Key="again", UploadId=up, MultipartUpload={"Parts": parts(big)})
    again = s3.complete_multipart_upload(Bucket=bucket, Key="again", UploadId=up, MultipartUpload={"Parts": parts(big)})
    for field in ("ETag", "ChecksumSHA256", "Key", "Bucket"):
        assert again[field] == first[field], field
    assert s3.get_object(Bucket=bucket, Key="again")["ContentLength"] == 5 * 1024 * 1024 + 10
    # Another part list, another key, or the object deleted meanwhile: NoSuchUpload.
    for key, listed in (("again", parts(small)), ("other", parts(big))):
        with pytest.raises(Exception) as err:
            s3.complete_multipart_upload(Bucket=bucket, Key=key, UploadId=up, MultipartUpload={"Parts": listed})
        assert "NoSuchUpload" in str(err.value)
    with pytest.raises(Exception) as err:  # parts cannot be added to a completed upload
        s3.upload_part(Bucket=bucket, Key="again", UploadId=up, PartNumber=3, Body=b"c")
    assert "NoSuchUpload" in str(err.value)
    s3.delete_object(Bucket=bucket, Key="again")
    with pytest.raises(Exception) as err:
        s3.complete_multipart_upload(Bucket=bucket, Key="again", UploadId=up, MultipartUpload={"Parts": parts(big)})
    assert "NoSuchUpload" in str(err.value)
