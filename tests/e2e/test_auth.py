"""Authentication and authorization: SigV4 headers and presigned URLs, anonymous requests, other users."""

from __future__ import annotations

import datetime as dt
import hashlib
import random
import time
import urllib.parse

import pytest
import requests

from depot_harness import (CURL, assert_error_response, clean_env, expect_error, md5_etag, parse_error, quote_key,
                           run)


def curl(*args: str) -> tuple[int, bytes]:
    """Runs curl; returns (HTTP status, body)."""
    proc = run([CURL, "-sS", "-o", "-", "-w", "\n%{http_code}", *args], env=clean_env(), text=False)
    body, _, status = proc.stdout.rpartition(b"\n")
    return int(status), body


# ---- header signatures


def test_wrong_secret_is_signature_does_not_match(depot, bucket):
    bad = depot.client("alice", secret="x" * 40)
    before = depot.snapshot(bucket)
    expect_error("SignatureDoesNotMatch", 403, bad.list_buckets)
    expect_error("SignatureDoesNotMatch", 403, bad.put_object, Bucket=bucket, Key="k", Body=b"nope")
    expect_error("SignatureDoesNotMatch", 403, bad.get_object, Bucket=bucket, Key="k")
    depot.assert_unchanged(before)


def test_unknown_access_key_is_invalid_access_key_id(depot, bucket):
    bad = depot.client("alice", access_key="AKIDOESNOTEXIST12345")
    before = depot.snapshot(bucket)
    expect_error("InvalidAccessKeyId", 403, bad.list_buckets)
    expect_error("InvalidAccessKeyId", 403, bad.put_object, Bucket=bucket, Key="k", Body=b"nope")
    depot.assert_unchanged(before)


def test_revoked_key_is_rejected(depot, bucket):
    key = depot.create_key("bob")
    client = depot.client("bob", access_key=key["access_key_id"], secret=key["secret_access_key"])
    client.list_buckets()
    depot.depotctl("key", "revoke", key["access_key_id"])
    # Keys may be cached briefly; a revocation must win within a few seconds.
    deadline = time.monotonic() + 10
    while True:
        response = client_error_or_none(client.list_buckets)
        if response is not None or time.monotonic() > deadline:
            break
        time.sleep(0.25)
    assert response is not None, "the revoked key still works after 10 s"
    assert response["Error"]["Code"] == "InvalidAccessKeyId"
    assert response["ResponseMetadata"]["HTTPStatusCode"] == 403


def client_error_or_none(call, **kwargs):
    from botocore.exceptions import ClientError

    try:
        call(**kwargs)
    except ClientError as e:
        return e.response
    return None


@pytest.mark.parametrize("skew", [dt.timedelta(minutes=-20), dt.timedelta(minutes=20)], ids=["past", "future"])
def test_request_time_too_skewed(depot, bucket, skew):
    when = dt.datetime.now(dt.timezone.utc).replace(tzinfo=None) + skew
    before = depot.snapshot(bucket)
    response = depot.request("PUT", f"/{bucket}/skewed", body=b"late", when=when)
    assert_error_response(response, "RequestTimeTooSkewed", 403)
    depot.assert_unchanged(before)


def test_tampered_header_after_signing_is_signature_does_not_match(depot, bucket):
    url = f"{depot.endpoint}/{bucket}/tampered"
    headers = depot.sign("PUT", url, body=b"data", headers={"Content-Type": "text/plain"})
    headers["Content-Type"] = "text/html"
    before = depot.snapshot(bucket)
    response = requests.put(url, data=b"data", headers=headers, timeout=30)
    error = assert_error_response(response, "SignatureDoesNotMatch", 403)
    assert error.get("AWSAccessKeyId") in (None, depot.user("alice").access_key)
    depot.assert_unchanged(before)


# ---- anonymous and other users


def test_anonymous_requests_are_access_denied_with_an_xml_error(depot, s3, bucket):
    s3.put_object(Bucket=bucket, Key="private.txt", Body=b"secret")
    before = depot.snapshot(bucket)
    for method, path, body in [
        ("GET", f"/{bucket}/private.txt", b""),
        ("GET", f"/{bucket}", b""),
        ("GET", "/", b""),
        ("PUT", f"/{bucket}/anonymous-upload", random.Random(5).randbytes(1000)),
        ("DELETE", f"/{bucket}/private.txt", b""),
        ("PUT", f"/{bucket}-anonymous", b""),
    ]:
        response = requests.request(method, depot.endpoint + path, data=body, timeout=30)
        assert_error_response(response, "AccessDenied", 403)
    response = requests.head(f"{depot.endpoint}/{bucket}/private.txt", timeout=30)
    assert response.status_code == 403 and response.content == b""
    assert response.headers.get("x-amz-request-id")
    depot.assert_unchanged(before)


def test_request_ids_are_unique(depot, bucket):
    ids = {requests.get(f"{depot.endpoint}/{bucket}/x", timeout=30).headers.get("x-amz-request-id")
           for _ in range(5)}
    assert None not in ids and len(ids) == 5


def test_other_users_cannot_touch_a_private_bucket(depot, s3, s3_bob, bucket):
    s3.put_object(Bucket=bucket, Key="alice.txt", Body=b"alice's")
    before = depot.snapshot(bucket)
    expect_error("AccessDenied", 403, s3_bob.get_object, Bucket=bucket, Key="alice.txt")
    expect_error("AccessDenied", 403, s3_bob.list_objects_v2, Bucket=bucket)
    expect_error("AccessDenied", 403, s3_bob.put_object, Bucket=bucket, Key="bob.txt", Body=b"bob's")
    expect_error("AccessDenied", 403, s3_bob.delete_object, Bucket=bucket, Key="alice.txt")
    expect_error("AccessDenied", 403, s3_bob.copy_object, Bucket=bucket, Key="copy.txt",
                 CopySource={"Bucket": bucket, "Key": "alice.txt"})
    expect_error("AccessDenied", 403, s3_bob.delete_bucket, Bucket=bucket)
    depot.assert_unchanged(before)
    assert bucket not in [b["Name"] for b in s3_bob.list_buckets()["Buckets"]]


def test_copy_from_a_bucket_the_user_cannot_read_is_access_denied(depot, s3, s3_bob, bucket, bucket_factory):
    s3.put_object(Bucket=bucket, Key="alice.txt", Body=b"alice's")
    bobs = bucket_factory(owner="bob", hint="bobs")
    before = depot.snapshot(bucket, (bobs, "bob"))
    expect_error("AccessDenied", 403, s3_bob.copy_object, Bucket=bobs, Key="stolen.txt",
                 CopySource={"Bucket": bucket, "Key": "alice.txt"})
    depot.assert_unchanged(before)


def test_each_user_lists_only_own_buckets_and_owns_own_objects(depot, s3_bob, bucket, bucket_factory):
    bobs = bucket_factory(owner="bob", hint="bobs")
    s3_bob.put_object(Bucket=bobs, Key="mine", Body=b"bob's")
    listed = s3_bob.list_buckets()
    assert [b["Name"] for b in listed["Buckets"]] == sorted(b["Name"] for b in listed["Buckets"])
    assert bobs in [b["Name"] for b in listed["Buckets"]] and bucket not in [b["Name"] for b in listed["Buckets"]]
    assert listed["Owner"]["DisplayName"] == "Bob Builder"
    entry = s3_bob.list_objects_v2(Bucket=bobs, FetchOwner=True)["Contents"][0]
    assert entry["Owner"] == {"ID": listed["Owner"]["ID"], "DisplayName": "Bob Builder"}


# ---- presigned URLs


def test_presigned_get_with_curl(s3, bucket):
    data = random.Random(11).randbytes(300_000)
    s3.put_object(Bucket=bucket, Key="dir/presigned get.bin", Body=data)
    url = s3.generate_presigned_url("get_object", Params={"Bucket": bucket, "Key": "dir/presigned get.bin"},
                                    ExpiresIn=600)
    status, body = curl(url)
    assert status == 200
    assert hashlib.sha256(body).digest() == hashlib.sha256(data).digest()
    status, body = curl("-r", "0-9", url)
    assert (status, body) == (206, data[:10])


def test_presigned_put_with_curl(depot, s3, bucket, tmp_path):
    data = random.Random(12).randbytes(2 * 1024 * 1024)  # curl sends Expect: 100-continue for this size
    src = tmp_path / "up.bin"
    src.write_bytes(data)
    url = s3.generate_presigned_url("put_object", Params={"Bucket": bucket, "Key": "presigned put.bin"},
                                    ExpiresIn=600)
    status, _ = curl("-T", str(src), url)
    assert status == 200
    head = s3.head_object(Bucket=bucket, Key="presigned put.bin")
    assert head["ETag"] == md5_etag(data)
    assert s3.get_object(Bucket=bucket, Key="presigned put.bin")["Body"].read() == data


def test_expired_presigned_urls_are_access_denied(depot, s3, bucket, tmp_path):
    s3.put_object(Bucket=bucket, Key="soon-gone", Body=b"x")
    get_url = s3.generate_presigned_url("get_object", Params={"Bucket": bucket, "Key": "soon-gone"}, ExpiresIn=1)
    put_url = s3.generate_presigned_url("put_object", Params={"Bucket": bucket, "Key": "late-upload"},
                                        ExpiresIn=1)
    time.sleep(2.5)
    before = depot.snapshot(bucket)
    status, body = curl(get_url)
    assert status == 403
    response = _as_response(status, body)
    error = parse_error(response)
    assert error["Code"] == "AccessDenied" and error["Message"] == "Request has expired", error
    src = tmp_path / "late.bin"
    src.write_bytes(b"too late")
    status, body = curl("-T", str(src), put_url)
    assert status == 403 and parse_error(_as_response(status, body))["Message"] == "Request has expired"
    depot.assert_unchanged(before)


def _as_response(status: int, body: bytes) -> requests.Response:
    response = requests.Response()
    response.status_code = status
    response._content = body
    return response


@pytest.mark.parametrize("tamper", ["nothing", "expires", "key", "extra-parameter", "signature"])
def test_tampered_presigned_url_is_signature_does_not_match(depot, s3, bucket, tamper):
    s3.put_object(Bucket=bucket, Key="signed", Body=b"s")
    s3.put_object(Bucket=bucket, Key="other", Body=b"o")
    url = s3.generate_presigned_url("get_object", Params={"Bucket": bucket, "Key": "signed"}, ExpiresIn=600)
    parts = urllib.parse.urlsplit(url)
    query = urllib.parse.parse_qsl(parts.query, keep_blank_values=True)
    path = parts.path
    if tamper == "expires":
        query = [(k, "601" if k == "X-Amz-Expires" else v) for k, v in query]
    elif tamper == "key":
        path = path.rsplit("/", 1)[0] + "/other"
    elif tamper == "extra-parameter":
        query.append(("response-content-type", "text/html"))
    elif tamper == "signature":
        query = [(k, ("0" * 64) if k == "X-Amz-Signature" else v) for k, v in query]
    tampered = urllib.parse.urlunsplit(parts._replace(path=path, query=urllib.parse.urlencode(query)))
    response = requests.get(tampered, timeout=30)
    if tamper == "nothing":  # the URL survives being taken apart and put together again
        assert (response.status_code, response.content) == (200, b"s")
    else:
        assert_error_response(response, "SignatureDoesNotMatch", 403)


def test_presigned_url_for_unknown_key_is_invalid_access_key_id(depot, bucket):
    bad = depot.client("alice", access_key="AKIDOESNOTEXIST12345")
    url = bad.generate_presigned_url("get_object", Params={"Bucket": bucket, "Key": "x"}, ExpiresIn=600)
    assert_error_response(requests.get(url, timeout=30), "InvalidAccessKeyId", 403)


def test_presigned_url_with_excessive_expiry_is_rejected(depot, s3, bucket):
    # SigV4 presigned URLs live at most 7 days (604800 s).
    url = s3.generate_presigned_url("get_object", Params={"Bucket": bucket, "Key": "x"}, ExpiresIn=604801)
    response = requests.get(url, timeout=30)
    assert_error_response(response, "AuthorizationQueryParametersError", 400)


def test_raw_signed_request_with_a_quoted_key(depot, s3, bucket):
    key = "signed/\u00fc + 100%.txt"
    response = depot.request("PUT", f"/{bucket}/{quote_key(key)}", body=b"raw body")
    assert response.status_code == 200, response.text
    assert s3.get_object(Bucket=bucket, Key=key)["Body"].read() == b"raw body"
