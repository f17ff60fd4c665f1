"""Attacks through request headers and strings (issue 22, items 2, 5 and 9).

Item 2: headers that change what an operation does (x-amz-copy-source, x-amz-meta-*, ...) added to a presigned
URL or to a header-signed request without being signed. Item 5: CR/LF and other bytes that are not allowed in an
HTTP field value, stored through the REST API or echoed from response-* overrides, splitting later responses.
Item 9: invalid UTF-8 (and NUL) in credentials, keys, query parameters and JSON strings reaching PostgreSQL and
answering 500 with an error log line.
"""

from __future__ import annotations

import os
import socket

import pytest
import requests

from depot_harness import assert_error_response, parse_error
from rest import assert_problem, call, sha, token_for

UNSIGNED_MESSAGE = "There were headers present in the request which were not signed"


@pytest.fixture(scope="module")
def tokens(depot):
    return {user: token_for(depot, user)["token"] for user in ("alice", "bob")}


def error_lines(depot, since: int) -> list[str]:
    return [line for line in depot.log_since(since).splitlines() if '"level":"error"' in line]


def raw_request(depot, request: bytes) -> tuple[int, bytes]:
    """Sends bytes as they are (no client-side validation) and returns (status, whole response)."""
    host, port = depot.endpoint.split("//", 1)[1].rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=30) as s:
        s.sendall(request)
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    status = int(data.split(b" ", 2)[1])
    return status, data


# ---- item 2: unsigned headers that change the operation

def test_presigned_put_plus_copy_source_does_not_copy_the_signers_secret(depot, s3, bucket_factory):
    """Issue 22 item 2: a presigned PUT URL plus an unsigned x-amz-copy-source header became a CopyObject of
    any object the signer can read into the upload key."""
    secrets_bucket, uploads = bucket_factory(), bucket_factory()
    s3.put_object(Bucket=secrets_bucket, Key="secret", Body=b"the signer's secret")
    url = s3.generate_presigned_url("put_object", Params={"Bucket": uploads, "Key": "upload.bin"}, ExpiresIn=300)
    before = depot.snapshot(secrets_bucket, uploads)

    r = requests.put(url, data=b"", headers={"x-amz-copy-source": f"{secrets_bucket}/secret"}, timeout=30)
    error = assert_error_response(r, "AccessDenied", 403)
    assert error["Message"] == UNSIGNED_MESSAGE
    assert "x-amz-copy-source" in error.get("HeadersNotSigned", "")
    depot.assert_unchanged(before)

    # The URL still does what it was signed for.
    assert requests.put(url, data=b"upload", timeout=30).status_code == 200
    assert s3.get_object(Bucket=uploads, Key="upload.bin")["Body"].read() == b"upload"


def test_presigned_upload_part_plus_copy_source_does_not_copy(depot, s3, bucket_factory):
    """Issue 22 item 2: a presigned UploadPart URL plus x-amz-copy-source became UploadPartCopy."""
    secrets_bucket, uploads = bucket_factory(), bucket_factory()
    s3.put_object(Bucket=secrets_bucket, Key="secret", Body=b"the signer's secret")
    upload_id = s3.create_multipart_upload(Bucket=uploads, Key="big")["UploadId"]
    url = s3.generate_presigned_url("upload_part", Params={"Bucket": uploads, "Key": "big", "UploadId": upload_id,
                                                           "PartNumber": 1}, ExpiresIn=300)
    r = requests.put(url, data=b"", headers={"x-amz-copy-source": f"{secrets_bucket}/secret"}, timeout=30)
    assert assert_error_response(r, "AccessDenied", 403)["Message"] == UNSIGNED_MESSAGE
    assert s3.list_parts(Bucket=uploads, Key="big", UploadId=upload_id).get("Parts", []) == []
    s3.abort_multipart_upload(Bucket=uploads, Key="big", UploadId=upload_id)


@pytest.mark.parametrize("extra", [
    {"x-amz-meta-owner": "mallory"},
    {"x-amz-tagging": "stolen=yes"},
    {"X-Amz-Metadata-Directive": "REPLACE"},
])
def test_presigned_put_refuses_other_unsigned_amz_headers(depot, s3, bucket, extra):
    """Issue 22 item 2: every x-amz-* header on a presigned request must be among the signed headers."""
    url = s3.generate_presigned_url("put_object", Params={"Bucket": bucket, "Key": "k"}, ExpiresIn=300)
    before = depot.snapshot(bucket)
    r = requests.put(url, data=b"data", headers=extra, timeout=30)
    assert assert_error_response(r, "AccessDenied", 403)["Message"] == UNSIGNED_MESSAGE
    depot.assert_unchanged(before)


@pytest.mark.parametrize("extra", [
    "copy-source",
    {"x-amz-meta-owner": "mallory"},
    {"x-amz-tagging": "stolen=yes"},
    {"x-amz-checksum-crc32": "AAAAAA=="},
])
def test_header_signed_request_refuses_unsigned_amz_headers(depot, s3, bucket_factory, extra):
    """Issue 22 item 2: the same for header authentication: x-amz-* headers added after signing are refused
    before they can change the operation."""
    secrets_bucket, target = bucket_factory(), bucket_factory()
    s3.put_object(Bucket=secrets_bucket, Key="secret", Body=b"the signer's secret")
    if extra == "copy-source":
        extra = {"x-amz-copy-source": f"{secrets_bucket}/secret"}
    url = f"{depot.endpoint}/{target}/k"
    headers = depot.sign("PUT", url, body=b"")
    before = depot.snapshot(secrets_bucket, target)
    r = requests.put(url, data=b"", headers={**headers, **extra}, timeout=30)
    assert assert_error_response(r, "AccessDenied", 403)["Message"] == UNSIGNED_MESSAGE
    depot.assert_unchanged(before)


def test_signed_amz_headers_and_the_exempt_ones_are_accepted(depot, s3, bucket):
    """Issue 22 item 2 (no false refusals): signed x-amz-* headers work, and so do the headers AWS exempts:
    x-amz-content-sha256 and x-amz-date on a presigned URL (not used for it), the entity headers (Content-Type,
    Cache-Control, ...) of a presigned PUT."""
    url = f"{depot.endpoint}/{bucket}/signed"
    headers = depot.sign("PUT", url, body=b"x", headers={"x-amz-meta-owner": "alice"})
    assert requests.put(url, data=b"x", headers=headers, timeout=30).status_code == 200
    assert s3.head_object(Bucket=bucket, Key="signed")["Metadata"] == {"owner": "alice"}

    url = s3.generate_presigned_url("put_object", Params={"Bucket": bucket, "Key": "presigned"}, ExpiresIn=300)
    r = requests.put(url, data=b"y", timeout=30, headers={
        "x-amz-content-sha256": "UNSIGNED-PAYLOAD", "x-amz-date": "20200101T000000Z",
        "Content-Type": "text/plain", "Cache-Control": "no-cache"})
    assert r.status_code == 200, r.text
    head = s3.head_object(Bucket=bucket, Key="presigned")
    assert head["ContentType"] == "text/plain" and head["CacheControl"] == "no-cache"


# ---- item 5: response header injection

INJECTION = "text/plain\r\nSet-Cookie: pwned=1"


@pytest.mark.parametrize("fields", [
    {"content_type": INJECTION},
    {"content_type": "text/plain\x00"},
    {"content_type": "text/plain\x7f"},
    {"metadata": {"note": "a\r\nSet-Cookie: pwned=1"}},
    {"metadata": {"note": "a\nb"}},
    {"metadata": {"bad name": "v"}},
    {"metadata": {"x:y": "v"}},
    {"metadata": {"a\r\nSet-Cookie": "v"}},
])
def test_rest_create_object_refuses_values_that_would_split_responses(depot, s3, bucket, tokens, fields):
    """Issue 22 item 5: content_type and metadata from the REST API's JSON were stored unchecked; CR/LF in them
    split the response of every later GetObject (a Set-Cookie header arrived)."""
    data = os.urandom(1000)
    s3.put_object(Bucket=bucket, Key="source", Body=data)
    before = depot.snapshot(bucket)
    r = call(depot, "POST", f"/api/v1/buckets/{bucket}/objects", token=tokens["alice"],
             body={"key": "injected", "sha256": sha(data), "size": len(data), **fields})
    assert_problem(r, 400, "invalid-argument")
    depot.assert_unchanged(before)
    got = depot.request("GET", f"/{bucket}/source")
    assert "Set-Cookie" not in got.headers


@pytest.mark.parametrize("param", ["response-content-type", "response-content-disposition", "response-expires",
                                   "response-cache-control", "response-content-language",
                                   "response-content-encoding"])
def test_response_overrides_with_line_breaks_are_refused(depot, s3, bucket, param):
    """Issue 22 item 5: response-* query overrides were copied into response headers as given."""
    s3.put_object(Bucket=bucket, Key="k", Body=b"body")
    r = depot.request("GET", f"/{bucket}/k?{param}=text%2Fplain%0D%0ASet-Cookie%3A%20pwned%3D1")
    assert "Set-Cookie" not in r.headers
    error = assert_error_response(r, "InvalidArgument", 400)
    assert param in error["Message"]


def test_s3_headers_that_are_not_utf8_are_refused_before_they_are_stored(depot, s3, bucket):
    """Issue 22 items 5 and 9: a Content-Type of bytes that are not UTF-8 (allowed by HTTP as obs-text) reached
    PostgreSQL and answered 500."""
    url = f"{depot.endpoint}/{bucket}/k"
    before = depot.snapshot(bucket)
    offset = depot.log_size()
    headers = depot.sign("PUT", url, body=b"x")
    r = requests.put(url, data=b"x", headers={**headers, "Content-Type": b"text/\xff\xfe"}, timeout=30)
    error = assert_error_response(r, "InvalidArgument", 400)
    assert "Content-Type" in error["Message"] or "content-type" in error["Message"]
    assert error_lines(depot, offset) == []
    depot.assert_unchanged(before)


# ---- item 9: invalid UTF-8 before any query

def test_credential_that_is_not_utf8_is_a_400(depot):
    """Issue 22 item 9: Credential= with invalid UTF-8 reached PostgreSQL unauthenticated: 500 plus an error log
    line per request."""
    offset = depot.log_size()
    request = (b"GET / HTTP/1.1\r\nHost: localhost\r\nx-amz-date: 20260101T000000Z\r\n"
               b"x-amz-content-sha256: UNSIGNED-PAYLOAD\r\n"
               b"Authorization: AWS4-HMAC-SHA256 Credential=\xff\xfe\xc0/20260101/us-east-1/s3/aws4_request, "
               b"SignedHeaders=host;x-amz-date, Signature=" + b"0" * 64 + b"\r\nConnection: close\r\n\r\n")
    status, data = raw_request(depot, request)
    assert status == 400, data
    assert b"AuthorizationHeaderMalformed" in data
    assert error_lines(depot, offset) == []


def test_presigned_credential_that_is_not_utf8_is_a_400(depot):
    """Issue 22 item 9: the same through X-Amz-Credential in a presigned query."""
    offset = depot.log_size()
    r = requests.get(f"{depot.endpoint}/b/k?X-Amz-Algorithm=AWS4-HMAC-SHA256"
                     "&X-Amz-Credential=%FF%FE%2F20260101%2Fus-east-1%2Fs3%2Faws4_request"
                     "&X-Amz-Date=20260101T000000Z&X-Amz-Expires=60&X-Amz-SignedHeaders=host"
                     "&X-Amz-Signature=" + "0" * 64, timeout=30)
    assert r.status_code == 400, r.text
    assert error_lines(depot, offset) == []


@pytest.mark.parametrize("target", [
    "/BUCKET/%FF%FE",
    "/BUCKET/a%00b",
    "/BUCKET?list-type=2&prefix=%FF",
    "/BUCKET?list-type=2&delimiter=%C0%AF",
    "/BUCKET?list-type=2&start-after=%ED%A0%80",
    "/BUCKET?list-type=2&continuation-token=%FF",
    "/BUCKET?prefix=a%00",
    "/BUCKET?marker=%FF",
    "/BUCKET?uploads&key-marker=%FF",
    "/BUCKET?uploads&upload-id-marker=%FF",
    "/BUCKET?versions&key-marker=%FF",
])
def test_keys_and_listing_parameters_that_are_not_utf8_are_a_400(depot, s3, bucket, target):
    """Issue 22 item 9: object keys and listing parameters with invalid UTF-8 (or NUL) reached PostgreSQL."""
    s3.put_object(Bucket=bucket, Key="k", Body=b"x")
    offset = depot.log_size()
    for signed in (True, False):
        r = depot.request("GET", target.replace("BUCKET", bucket), signed=signed)
        assert r.status_code == 400, (signed, r.status_code, r.text)
        assert parse_error(r)["Code"] == "InvalidArgument"
    assert error_lines(depot, offset) == []


def test_copy_source_that_is_not_utf8_is_a_400(depot, s3, bucket):
    """Issue 22 item 9: x-amz-copy-source with invalid UTF-8."""
    before = depot.snapshot(bucket)
    offset = depot.log_size()
    for source in (f"{bucket}/%FF%FE", f"{bucket}/a%00b", "%FF/k"):
        r = depot.request("PUT", f"/{bucket}/copy", headers={"x-amz-copy-source": source})
        assert_error_response(r, "InvalidArgument", 400)
    assert error_lines(depot, offset) == []
    depot.assert_unchanged(before)


@pytest.mark.parametrize("path", [
    "/api/v1/buckets/%FF%FE",
    "/api/v1/buckets/a%00b/usage",
    "/api/v1/teams/%FF/models",
])
def test_rest_path_parameters_that_are_not_utf8_are_a_400(depot, tokens, path):
    """Issue 22 item 9: REST path parameters with invalid UTF-8 or NUL."""
    offset = depot.log_size()
    assert_problem(call(depot, "GET", path, token=tokens["alice"]), 400, "invalid-argument")
    assert error_lines(depot, offset) == []


def test_rest_json_strings_with_nul_are_a_400(depot, s3, bucket, tokens):
    """Issue 22 item 9: JSON strings may carry \\u0000, which PostgreSQL's text cannot hold."""
    data = os.urandom(1000)
    s3.put_object(Bucket=bucket, Key="source", Body=data)
    before = depot.snapshot(bucket)
    offset = depot.log_size()
    for body in ({"key": "a\u0000b", "sha256": sha(data), "size": len(data)},
                 {"key": "k", "sha256": sha(data), "size": len(data), "metadata": {"m": "a\u0000"}}):
        r = call(depot, "POST", f"/api/v1/buckets/{bucket}/objects", token=tokens["alice"], body=body)
        assert_problem(r, 400, "invalid-argument")
    r = call(depot, "POST", f"/api/v1/buckets/{bucket}/objects", token=tokens["alice"],
             raw=b'{"key": "a\xff", "sha256": "' + sha(data).encode() + b'", "size": 1000}',
             headers={"Content-Type": "application/json"})
    assert_problem(r, 400, "invalid-argument")
    assert error_lines(depot, offset) == []
    depot.assert_unchanged(before)


def test_a_request_with_two_host_headers_is_refused(depot, s3, bucket, localhost_subdomains):
    """The second attacker's finding: two Host headers were accepted and the first one routed (RFC 9112
    requires a 400): a proxy that reads the other one would send the request to another bucket than the
    one depotd serves. 400 InvalidRequest, and nothing is stored."""
    before = depot.snapshot(bucket)
    status, body = raw_request(depot, (
        f"PUT /k HTTP/1.1\r\nHost: {bucket}.localhost:{depot.port}\r\nHost: 127.0.0.1:{depot.port}\r\n"
        "Content-Length: 5\r\nConnection: close\r\n\r\nhello").encode())
    assert status == 400 and b"<Code>InvalidRequest</Code>" in body and b"one Host" in body, body
    depot.assert_unchanged(before)
    status, _ = raw_request(depot, "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".encode())
    assert status == 200
