"""Flexible checksums (x-amz-checksum-crc32/-crc32c/-crc64nvme/-sha1/-sha256) end to end.

Single PUTs with boto3's ChecksumAlgorithm, values read back with x-amz-checksum-mode: ENABLED, wrong and
malformed values rejected with nothing stored, multipart uploads with COMPOSITE ("<checksum of the part
checksums>-N") and FULL_OBJECT checksums, and GetObjectAttributes.

Every expected value is computed here, independently of the server: CRC32 with zlib, CRC32C and
CRC64NVME with the small table-driven implementations below, SHA-1/SHA-256 with hashlib.

Debian's boto3 (1.26) predates CRC64NVME, x-amz-checksum-type and conditional headers: those are added
to boto3's requests with a before-sign hook (`with_headers`), or the request is sent raw and signed with
botocore (Depot.request), and such fields are read from the raw response.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import random
import xml.etree.ElementTree as ET
import zlib
from xml.sax.saxutils import escape

import pytest

from depot_harness import expect_error, md5_etag, quote_key

MiB = 1024 * 1024
PART = 5 * MiB
ALGORITHMS = ["CRC32", "CRC32C", "CRC64NVME", "SHA1", "SHA256"]
BOTO_ALGORITHMS = {"CRC32", "CRC32C", "SHA1", "SHA256"}  # what Debian's botocore computes itself


# ---- checksums, computed independently of the server


def _reflected_table(poly: int) -> list[int]:
    table = []
    for byte in range(256):
        crc = byte
        for _ in range(8):
            crc = (crc >> 1) ^ poly if crc & 1 else crc >> 1
        table.append(crc)
    return table


_CRC32C_TABLE = _reflected_table(0x82F63B78)  # Castagnoli, reflected
_CRC64NVME_TABLE = _reflected_table(0x9A6C9329AC4BC9B5)  # CRC-64/NVME, reflected


def crc32c(data: bytes) -> int:
    crc, table = 0xFFFFFFFF, _CRC32C_TABLE
    for b in data:
        crc = table[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def crc64nvme(data: bytes) -> int:
    crc, table = 0xFFFFFFFFFFFFFFFF, _CRC64NVME_TABLE
    for b in data:
        crc = table[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFFFFFFFFFF


_DIGESTS = {
    "CRC32": lambda d: zlib.crc32(d).to_bytes(4, "big"),
    "CRC32C": lambda d: crc32c(d).to_bytes(4, "big"),
    "CRC64NVME": lambda d: crc64nvme(d).to_bytes(8, "big"),
    "SHA1": lambda d: hashlib.sha1(d).digest(),
    "SHA256": lambda d: hashlib.sha256(d).digest(),
}


@functools.lru_cache(maxsize=128)
def digest(algorithm: str, data: bytes) -> bytes:
    """The raw checksum (CRCs big-endian, as S3 encodes them) of `data`."""
    return _DIGESTS[algorithm](data)


def checksum(algorithm: str, data: bytes) -> str:
    """The base64 value S3 sends in x-amz-checksum-<algorithm>."""
    return base64.b64encode(digest(algorithm, data)).decode()


def composite_checksum(algorithm: str, parts: list[bytes]) -> str:
    """A COMPOSITE multipart checksum: the checksum of the concatenated raw part checksums, then -N."""
    combined = _DIGESTS[algorithm](b"".join(digest(algorithm, p) for p in parts))
    return f"{base64.b64encode(combined).decode()}-{len(parts)}"


def header_name(algorithm: str) -> str:
    return f"x-amz-checksum-{algorithm.lower()}"


def field(algorithm: str) -> str:
    return f"Checksum{algorithm}"


def data(n: int, seed) -> bytes:
    return random.Random(str(seed)).randbytes(n)


# ---- requests beyond Debian's boto3


def with_headers(client, operation: str, headers: dict[str, str]):
    """Makes `client` send these headers (replacing any of the same name) with every `operation` request."""

    def add(request, **_):
        for name, value in headers.items():
            if name in request.headers:
                del request.headers[name]
            request.headers[name] = value

    client.meta.events.register(f"before-sign.s3.{operation}", add)
    with_headers.last = add
    return client


def strip_ns(element: ET.Element) -> ET.Element:
    for e in element.iter():
        if "}" in e.tag:
            e.tag = e.tag.split("}", 1)[1]
    return element


def xml_of(response) -> ET.Element:
    assert response.content, f"empty body, status {response.status_code}"
    return strip_ns(ET.fromstring(response.content))


def text(element: ET.Element, path: str) -> str | None:
    found = element.find(path)
    return None if found is None else (found.text or "")


def object_path(bucket: str, key: str, query: str = "") -> str:
    return f"/{bucket}/{quote_key(key)}" + (f"?{query}" if query else "")


def raw_complete(depot, bucket: str, key: str, upload_id: str, parts: list[dict], headers: dict | None = None):
    """CompleteMultipartUpload with any part fields (e.g. ChecksumCRC64NVME), sent raw."""
    body = "<CompleteMultipartUpload xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
    for part in parts:
        body += "<Part>" + "".join(f"<{k}>{escape(str(v))}</{k}>" for k, v in part.items()) + "</Part>"
    body += "</CompleteMultipartUpload>"
    return depot.request("POST", object_path(bucket, key, f"uploadId={upload_id}"), body=body.encode(),
                         headers={"Content-Type": "application/xml", **(headers or {})})


def assert_s3_error(response, codes: set[str] | str, status: int) -> str:
    codes = {codes} if isinstance(codes, str) else codes
    assert response.status_code == status, f"expected {status} {codes}, got {response.status_code}: {response.text!r}"
    code = text(xml_of(response), "Code")
    assert code in codes, f"expected one of {codes}, got {code}: {response.text!r}"
    return code


def checksum_headers(headers) -> dict[str, str]:
    return {k.lower(): v for k, v in headers.items() if k.lower().startswith("x-amz-checksum-")
            and k.lower() not in ("x-amz-checksum-mode",)}


# ---- the helpers themselves


def test_checksum_implementations_match_known_vectors():
    check = b"123456789"  # the standard CRC check input
    assert zlib.crc32(check) == 0xCBF43926
    assert crc32c(check) == 0xE3069283
    assert crc64nvme(check) == 0xAE8B14860A799888
    assert checksum("CRC32", b"") == "AAAAAA=="
    assert checksum("SHA256", b"") == "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="
    # botocore's own CRC32C (awscrt) agrees with the table implementation.
    from botocore.httpchecksum import CrtCrc32cChecksum

    c = CrtCrc32cChecksum()
    c.update(b"hello depot")
    assert c.b64digest() == checksum("CRC32C", b"hello depot")


# ---- single PUT


def put_with_algorithm(s3, bucket: str, key: str, body: bytes, algorithm: str):
    """PutObject as boto3 sends it with ChecksumAlgorithm (CRC64NVME: the same headers, added by hand)."""
    if algorithm in BOTO_ALGORITHMS:
        return s3.put_object(Bucket=bucket, Key=key, Body=body, ChecksumAlgorithm=algorithm)
    with_headers(s3, "PutObject", {header_name(algorithm): checksum(algorithm, body),
                                   "x-amz-sdk-checksum-algorithm": algorithm})
    try:
        return s3.put_object(Bucket=bucket, Key=key, Body=body)
    finally:
        # The headers belong to this body only: later puts must not carry them.
        s3.meta.events.unregister("before-sign.s3.PutObject", with_headers.last)


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_put_with_checksum_algorithm_then_get_and_head_return_it(depot, s3, bucket, algorithm):
    body = data(300 * 1024 + 7, ("put", algorithm))
    expected = checksum(algorithm, body)
    sent = {}
    s3.meta.events.register("before-send.s3.PutObject", lambda request, **_: sent.update(request.headers))
    put = put_with_algorithm(s3, bucket, "obj", body, algorithm)
    # boto3 sent the checksum in a header (plain HTTP: no trailer).
    assert sent.get(header_name(algorithm)) == expected.encode() or sent.get(header_name(algorithm)) == expected
    assert put["ETag"] == md5_etag(body)
    assert put["ResponseMetadata"]["HTTPHeaders"].get(header_name(algorithm)) == expected, (
        "PutObject's response repeats the checksum")

    for response in (s3.get_object(Bucket=bucket, Key="obj", ChecksumMode="ENABLED"),
                     s3.head_object(Bucket=bucket, Key="obj", ChecksumMode="ENABLED")):
        headers = response["ResponseMetadata"]["HTTPHeaders"]
        assert headers.get(header_name(algorithm)) == expected
        # The algorithm the object was stored with, and the whole-object SHA-256 Depot always keeps.
        assert set(checksum_headers(headers)) <= {header_name(algorithm), "x-amz-checksum-sha256",
                                                  "x-amz-checksum-type"}
        assert headers.get("x-amz-checksum-sha256") == checksum("SHA256", body)
        assert headers.get("x-amz-checksum-type", "FULL_OBJECT") == "FULL_OBJECT"
        if "Body" in response:
            assert response["Body"].read() == body  # botocore also verifies the checksum here

    # Without checksum mode, no checksum headers.
    for response in (s3.get_object(Bucket=bucket, Key="obj"), s3.head_object(Bucket=bucket, Key="obj")):
        assert checksum_headers(response["ResponseMetadata"]["HTTPHeaders"]) == {}

    # An overwrite without a checksum drops the old one.
    s3.put_object(Bucket=bucket, Key="obj", Body=b"no checksum asserted")
    headers = s3.head_object(Bucket=bucket, Key="obj", ChecksumMode="ENABLED")["ResponseMetadata"]["HTTPHeaders"]
    assert headers.get(header_name(algorithm)) in (None, checksum(algorithm, b"no checksum asserted"))


@pytest.mark.parametrize("algorithm", ["CRC32C", "SHA256"])
def test_put_with_a_checksum_value_given_by_the_caller(s3, bucket, algorithm):
    body = data(4096, ("given", algorithm))
    s3.put_object(Bucket=bucket, Key="k", Body=body, **{field(algorithm): checksum(algorithm, body)})
    head = s3.head_object(Bucket=bucket, Key="k", ChecksumMode="ENABLED")
    assert head[field(algorithm)] == checksum(algorithm, body)


def test_empty_object_checksums(s3, bucket):
    for algorithm in sorted(BOTO_ALGORITHMS):
        s3.put_object(Bucket=bucket, Key=f"empty-{algorithm}", Body=b"", ChecksumAlgorithm=algorithm)
        head = s3.head_object(Bucket=bucket, Key=f"empty-{algorithm}", ChecksumMode="ENABLED")
        assert head[field(algorithm)] == checksum(algorithm, b"")


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_wrong_checksum_is_bad_digest_and_stores_nothing(depot, s3, bucket, algorithm):
    s3.put_object(Bucket=bucket, Key="existing", Body=b"the object before")
    body = data(64 * 1024, ("wrong", algorithm))
    wrong = checksum(algorithm, body + b"!")  # well-formed, but of other bytes
    before = depot.snapshot(bucket)
    for key in ("new-key", "existing"):
        response = depot.request("PUT", object_path(bucket, key), body=body,
                                 headers={header_name(algorithm): wrong, "x-amz-sdk-checksum-algorithm": algorithm})
        assert_s3_error(response, "BadDigest", 400)
    depot.assert_unchanged(before)
    assert s3.get_object(Bucket=bucket, Key="existing")["Body"].read() == b"the object before"


def test_wrong_crc32_from_boto3_is_bad_digest(depot, s3, bucket):
    body = b"boto3 asserts a checksum of other bytes"
    with_headers(s3, "PutObject", {"x-amz-checksum-crc32": checksum("CRC32", b"other bytes")})
    before = depot.snapshot(bucket)
    expect_error("BadDigest", 400, s3.put_object, Bucket=bucket, Key="k", Body=body)
    depot.assert_unchanged(before)


@pytest.mark.parametrize("algorithm,value", [
    ("CRC32", "not base64!"),
    ("CRC32", base64.b64encode(b"\x01\x02\x03").decode()),          # 3 bytes, not 4
    ("CRC32C", base64.b64encode(b"\x00" * 8).decode()),             # 8 bytes, not 4
    ("CRC64NVME", base64.b64encode(b"\x00" * 4).decode()),          # 4 bytes, not 8
    ("SHA256", checksum("SHA1", b"x")),                              # a SHA-1 where a SHA-256 belongs
    ("SHA1", ""),
], ids=["not-base64", "crc32-short", "crc32c-long", "crc64-short", "sha256-as-sha1", "sha1-empty"])
def test_malformed_checksum_value_is_rejected(depot, bucket, algorithm, value):
    before = depot.snapshot(bucket)
    response = depot.request("PUT", object_path(bucket, "k"), body=b"some bytes", headers={header_name(algorithm): value})
    assert_s3_error(response, {"InvalidRequest", "InvalidArgument"}, 400)
    depot.assert_unchanged(before)


def test_two_checksum_headers_are_rejected(depot, bucket):
    body = b"two checksums"
    before = depot.snapshot(bucket)
    response = depot.request("PUT", object_path(bucket, "k"), body=body, headers={
        "x-amz-checksum-crc32": checksum("CRC32", body), "x-amz-checksum-sha256": checksum("SHA256", body)})
    assert_s3_error(response, {"InvalidRequest", "InvalidArgument"}, 400)
    depot.assert_unchanged(before)


def test_sdk_checksum_algorithm_without_a_checksum_is_rejected(depot, bucket):
    # S3: with x-amz-sdk-checksum-algorithm there must be a matching x-amz-checksum-* header or trailer.
    before = depot.snapshot(bucket)
    response = depot.request("PUT", object_path(bucket, "k"), body=b"no checksum",
                             headers={"x-amz-sdk-checksum-algorithm": "CRC32"})
    assert_s3_error(response, {"InvalidRequest", "InvalidArgument"}, 400)
    depot.assert_unchanged(before)


def test_unknown_checksum_algorithm_is_rejected(depot, bucket):
    before = depot.snapshot(bucket)
    response = depot.request("PUT", object_path(bucket, "k"), body=b"x",
                             headers={"x-amz-sdk-checksum-algorithm": "MD4", "x-amz-checksum-md4": "AAAA"})
    assert_s3_error(response, {"InvalidRequest", "InvalidArgument"}, 400)
    depot.assert_unchanged(before)


# ---- multipart


def create_upload(s3, bucket: str, key: str, algorithm: str, checksum_type: str | None):
    """CreateMultipartUpload with a checksum algorithm (and type); returns (upload id, response headers)."""
    extra = {}
    if checksum_type:
        extra["x-amz-checksum-type"] = checksum_type
    if algorithm not in BOTO_ALGORITHMS:
        extra["x-amz-checksum-algorithm"] = algorithm
    if extra:
        with_headers(s3, "CreateMultipartUpload", extra)
    kwargs = {"ChecksumAlgorithm": algorithm} if algorithm in BOTO_ALGORITHMS else {}
    response = s3.create_multipart_upload(Bucket=bucket, Key=key, **kwargs)
    return response["UploadId"], response["ResponseMetadata"]["HTTPHeaders"]


def upload_part(s3, bucket: str, key: str, upload_id: str, number: int, body: bytes, algorithm: str):
    """UploadPart with a checksum as boto3 sends it; returns the response headers."""
    if algorithm in BOTO_ALGORITHMS:
        response = s3.upload_part(Bucket=bucket, Key=key, UploadId=upload_id, PartNumber=number, Body=body,
                                  ChecksumAlgorithm=algorithm)
    else:
        client = with_headers(s3, "UploadPart", {header_name(algorithm): checksum(algorithm, body),
                                                 "x-amz-sdk-checksum-algorithm": algorithm})
        response = client.upload_part(Bucket=bucket, Key=key, UploadId=upload_id, PartNumber=number, Body=body)
        client.meta.events.unregister("before-sign.s3.UploadPart")
    return response["ResponseMetadata"]["HTTPHeaders"]


MULTIPART_CASES = [
    ("CRC32", None, "COMPOSITE"),  # no type given: COMPOSITE is the default for CRC32
    ("CRC32C", "COMPOSITE", "COMPOSITE"),
    ("SHA1", "COMPOSITE", "COMPOSITE"),
    ("SHA256", None, "COMPOSITE"),
    ("CRC64NVME", None, "FULL_OBJECT"),  # CRC64NVME supports FULL_OBJECT only, and defaults to it
    ("CRC32", "FULL_OBJECT", "FULL_OBJECT"),
    ("CRC32C", "FULL_OBJECT", "FULL_OBJECT"),
]


@pytest.mark.parametrize("algorithm,requested_type,checksum_type", MULTIPART_CASES,
                         ids=[f"{a}-{t}" for a, _, t in MULTIPART_CASES])
def test_multipart_checksums(depot, s3, bucket, algorithm, requested_type, checksum_type):
    parts = [data(PART, ("mp1", algorithm)), data(100 * 1024 + 7, ("mp2", algorithm))]
    whole = b"".join(parts)
    key = f"mp-{algorithm}"
    upload_id, created = create_upload(s3, bucket, key, algorithm, requested_type)
    assert created.get("x-amz-checksum-algorithm") == algorithm
    assert created.get("x-amz-checksum-type") == checksum_type

    completed_parts = []
    for number, body in enumerate(parts, start=1):
        headers = upload_part(s3, bucket, key, upload_id, number, body, algorithm)
        assert headers.get(header_name(algorithm)) == checksum(algorithm, body), f"UploadPart {number}"
        completed_parts.append({"PartNumber": number, "ETag": md5_etag(body), field(algorithm): checksum(algorithm, body)})

    listed = xml_of(depot.request("GET", object_path(bucket, key, f"uploadId={upload_id}")))
    assert text(listed, "ChecksumAlgorithm") == algorithm
    assert [text(p, field(algorithm)) for p in listed.findall("Part")] == [checksum(algorithm, p) for p in parts]

    if checksum_type == "COMPOSITE":
        expected = composite_checksum(algorithm, parts)
    else:
        expected = checksum(algorithm, whole)
    response = raw_complete(depot, bucket, key, upload_id, completed_parts)
    assert response.status_code == 200, response.text
    result = xml_of(response)
    assert text(result, "ETag") == multipart_etag(parts)
    assert text(result, field(algorithm)) == expected
    assert text(result, "ChecksumType") == checksum_type

    for got in (s3.head_object(Bucket=bucket, Key=key, ChecksumMode="ENABLED"),
                s3.get_object(Bucket=bucket, Key=key, ChecksumMode="ENABLED")):
        headers = got["ResponseMetadata"]["HTTPHeaders"]
        assert headers.get(header_name(algorithm)) == expected
        assert headers.get("x-amz-checksum-type") == checksum_type
        if "Body" in got:
            assert hashlib.sha256(got["Body"].read()).digest() == hashlib.sha256(whole).digest()

    if checksum_type == "COMPOSITE":
        # A part's own checksum comes back with partNumber.
        got = s3.head_object(Bucket=bucket, Key=key, PartNumber=2, ChecksumMode="ENABLED")
        assert got["ResponseMetadata"]["HTTPHeaders"].get(header_name(algorithm)) == checksum(algorithm, parts[1])


def multipart_etag(parts: list[bytes]) -> str:
    return f'"{hashlib.md5(b"".join(hashlib.md5(p).digest() for p in parts)).hexdigest()}-{len(parts)}"'


def test_multipart_full_object_checksum_sent_with_complete_is_verified(depot, s3, bucket):
    parts = [data(PART, "fo1"), data(1000, "fo2")]
    upload_id, _ = create_upload(s3, bucket, "k", "CRC64NVME", "FULL_OBJECT")
    done = []
    for number, body in enumerate(parts, start=1):
        upload_part(s3, bucket, "k", upload_id, number, body, "CRC64NVME")
        done.append({"PartNumber": number, "ETag": md5_etag(body)})

    before = depot.snapshot(bucket)
    wrong = raw_complete(depot, bucket, "k", upload_id, done,
                         headers={"x-amz-checksum-crc64nvme": checksum("CRC64NVME", parts[0])})
    assert_s3_error(wrong, {"BadDigest", "InvalidRequest"}, 400)
    depot.assert_unchanged(before)

    right = raw_complete(depot, bucket, "k", upload_id, done,
                         headers={"x-amz-checksum-crc64nvme": checksum("CRC64NVME", b"".join(parts))})
    assert right.status_code == 200, right.text
    assert text(xml_of(right), "ChecksumCRC64NVME") == checksum("CRC64NVME", b"".join(parts))


@pytest.mark.parametrize("algorithm", ["CRC32", "SHA256", "CRC64NVME"])
def test_upload_part_with_a_wrong_checksum_stores_no_part(depot, s3, bucket, algorithm):
    upload_id, _ = create_upload(s3, bucket, "k", algorithm, None)
    body = data(1000, ("bad-part", algorithm))
    before = depot.snapshot(bucket)
    response = depot.request("PUT", object_path(bucket, "k", f"partNumber=1&uploadId={upload_id}"), body=body,
                             headers={header_name(algorithm): checksum(algorithm, b"other"),
                                      "x-amz-sdk-checksum-algorithm": algorithm})
    assert_s3_error(response, "BadDigest", 400)
    depot.assert_unchanged(before)
    assert s3.list_parts(Bucket=bucket, Key="k", UploadId=upload_id).get("Parts", []) == []


def test_complete_with_a_wrong_part_checksum_fails(depot, s3, bucket):
    parts = [data(PART, "wp1"), data(10, "wp2")]
    upload_id, _ = create_upload(s3, bucket, "k", "SHA256", None)
    done = []
    for number, body in enumerate(parts, start=1):
        upload_part(s3, bucket, "k", upload_id, number, body, "SHA256")
        done.append({"PartNumber": number, "ETag": md5_etag(body), "ChecksumSHA256": checksum("SHA256", body)})
    done[1]["ChecksumSHA256"] = checksum("SHA256", b"not part 2")
    before = depot.snapshot(bucket)
    response = raw_complete(depot, bucket, "k", upload_id, done)
    assert_s3_error(response, {"InvalidPart", "BadDigest"}, 400)
    depot.assert_unchanged(before)


@pytest.mark.parametrize("algorithm,checksum_type", [("SHA256", "FULL_OBJECT"), ("SHA1", "FULL_OBJECT"),
                                                     ("CRC64NVME", "COMPOSITE")])
def test_unsupported_algorithm_and_type_combinations_are_rejected(depot, s3, bucket, algorithm, checksum_type):
    before = depot.snapshot(bucket)
    response = depot.request("POST", object_path(bucket, "k", "uploads"),
                             headers={"x-amz-checksum-algorithm": algorithm, "x-amz-checksum-type": checksum_type})
    assert_s3_error(response, {"InvalidRequest", "InvalidArgument"}, 400)
    depot.assert_unchanged(before)


def test_upload_part_with_another_algorithm_than_the_upload_is_rejected(depot, s3, bucket):
    upload_id, _ = create_upload(s3, bucket, "k", "CRC32", None)
    body = data(100, "other-algorithm")
    before = depot.snapshot(bucket)
    response = depot.request("PUT", object_path(bucket, "k", f"partNumber=1&uploadId={upload_id}"), body=body,
                             headers={"x-amz-checksum-sha256": checksum("SHA256", body),
                                      "x-amz-sdk-checksum-algorithm": "SHA256"})
    assert_s3_error(response, {"InvalidRequest", "InvalidArgument", "BadDigest"}, 400)
    depot.assert_unchanged(before)


# ---- GetObjectAttributes


ALL_ATTRIBUTES = ["ETag", "Checksum", "ObjectParts", "StorageClass", "ObjectSize"]


def test_get_object_attributes_of_a_multipart_object(depot, s3, bucket):
    parts = [data(PART, "ga1"), data(PART, "ga2"), data(333, "ga3")]
    upload_id, _ = create_upload(s3, bucket, "attrs", "SHA256", None)
    done = []
    for number, body in enumerate(parts, start=1):
        upload_part(s3, bucket, "attrs", upload_id, number, body, "SHA256")
        done.append({"PartNumber": number, "ETag": md5_etag(body), "ChecksumSHA256": checksum("SHA256", body)})
    s3.complete_multipart_upload(Bucket=bucket, Key="attrs", UploadId=upload_id, MultipartUpload={"Parts": done})

    got = s3.get_object_attributes(Bucket=bucket, Key="attrs", ObjectAttributes=ALL_ATTRIBUTES)
    assert got["ETag"].strip('"') == multipart_etag(parts).strip('"')
    assert got["ObjectSize"] == sum(map(len, parts))
    assert got["StorageClass"] == "STANDARD"
    assert got["LastModified"]
    composite = composite_checksum("SHA256", parts)
    value = got["Checksum"]["ChecksumSHA256"]
    # With its "-3" part-count suffix, as S3 gives it (issue 27), and its type.
    assert value == composite and composite.endswith("-3"), (value, composite)
    if "ChecksumType" in s3.meta.service_model.shape_for("Checksum").members:
        assert got["Checksum"]["ChecksumType"] == "COMPOSITE"

    object_parts = got["ObjectParts"]
    assert object_parts["TotalPartsCount"] == 3
    assert [(p["PartNumber"], p["Size"], p["ChecksumSHA256"]) for p in object_parts["Parts"]] == [
        (n, len(body), checksum("SHA256", body)) for n, body in enumerate(parts, start=1)]

    page = s3.get_object_attributes(Bucket=bucket, Key="attrs", ObjectAttributes=["ObjectParts"], MaxParts=2)
    assert page["ObjectParts"]["IsTruncated"] is True
    assert page["ObjectParts"]["MaxParts"] == 2
    assert page["ObjectParts"]["NextPartNumberMarker"] == 2
    assert [p["PartNumber"] for p in page["ObjectParts"]["Parts"]] == [1, 2]
    page = s3.get_object_attributes(Bucket=bucket, Key="attrs", ObjectAttributes=["ObjectParts"], MaxParts=2,
                                    PartNumberMarker=2)
    assert page["ObjectParts"]["IsTruncated"] is False
    assert [p["PartNumber"] for p in page["ObjectParts"]["Parts"]] == [3]

    # Only what was asked for.
    only = s3.get_object_attributes(Bucket=bucket, Key="attrs", ObjectAttributes=["ObjectSize"])
    assert only["ObjectSize"] == sum(map(len, parts))
    assert "ETag" not in only and "Checksum" not in only and "ObjectParts" not in only


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_get_object_attributes_of_a_single_put(depot, s3, bucket, algorithm):
    body = data(2048, ("attrs-single", algorithm))
    put_with_algorithm(s3, bucket, "single", body, algorithm)
    response = depot.request("GET", object_path(bucket, "single", "attributes"),
                             headers={"x-amz-object-attributes": ",".join(ALL_ATTRIBUTES)})
    assert response.status_code == 200, response.text
    root = xml_of(response)
    assert root.tag == "GetObjectAttributesResponse"
    assert (text(root, "ETag") or "").strip('"') == hashlib.md5(body).hexdigest()
    assert text(root, "ObjectSize") == str(len(body))
    assert text(root, "StorageClass") == "STANDARD"
    assert text(root, f"Checksum/{field(algorithm)}") == checksum(algorithm, body)
    assert text(root, "Checksum/ChecksumSHA256") == checksum("SHA256", body)  # always known for a single PUT
    assert text(root, "Checksum/ChecksumType") in (None, "FULL_OBJECT")
    assert root.find("ObjectParts") is None  # not a multipart object
    assert response.headers.get("Last-Modified")


def test_a_put_without_checksum_still_reports_its_sha256(s3, bucket):
    """The whole-object SHA-256 (Depot's content identity) comes with checksum mode on every full read of
    a single-PUT object, next to the CRC64NVME S3 computes by default; a ranged read gets neither."""
    body = data(9 * 1024 * 1024 + 5, "sha-default")  # two segments: the digest is the body's, not a segment's
    s3.put_object(Bucket=bucket, Key="plain", Body=body)
    for response in (s3.get_object(Bucket=bucket, Key="plain", ChecksumMode="ENABLED"),
                     s3.head_object(Bucket=bucket, Key="plain", ChecksumMode="ENABLED")):
        headers = response["ResponseMetadata"]["HTTPHeaders"]
        assert headers.get("x-amz-checksum-sha256") == checksum("SHA256", body)
        assert headers.get("x-amz-checksum-crc64nvme") == checksum("CRC64NVME", body)
        if "Body" in response:
            assert response["Body"].read() == body
    ranged = s3.get_object(Bucket=bucket, Key="plain", Range="bytes=0-99", ChecksumMode="ENABLED")
    assert "x-amz-checksum-sha256" not in ranged["ResponseMetadata"]["HTTPHeaders"]
    got = s3.get_object_attributes(Bucket=bucket, Key="plain", ObjectAttributes=["Checksum"])
    assert got["Checksum"]["ChecksumSHA256"] == checksum("SHA256", body)


def test_get_object_attributes_errors(depot, s3, bucket):
    s3.put_object(Bucket=bucket, Key="k", Body=b"x")
    expect_error("NoSuchKey", 404, s3.get_object_attributes, Bucket=bucket, Key="missing",
                 ObjectAttributes=["ObjectSize"])
    response = depot.request("GET", object_path(bucket, "k", "attributes"),
                             headers={"x-amz-object-attributes": "ObjectSize,NoSuchAttribute"})
    assert_s3_error(response, {"InvalidArgument", "InvalidRequest"}, 400)
    response = depot.request("GET", object_path(bucket, "k", "attributes"))  # the header is required
    assert_s3_error(response, {"InvalidArgument", "InvalidRequest"}, 400)
