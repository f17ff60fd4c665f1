"""aws-chunked request bodies, sent raw: headers signed with botocore, chunks framed and signed here.

The three forms S3 clients use:
  STREAMING-AWS4-HMAC-SHA256-PAYLOAD           every chunk signed (chained from the request's signature)
  STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER   signed chunks, then a checksum trailer with its own signature
  STREAMING-UNSIGNED-PAYLOAD-TRAILER           plain chunks and a checksum trailer (what SDKs send by default)
each with a Content-Length, and with HTTP `Transfer-Encoding: chunked` and no Content-Length (the
aws-chunked framing inside the HTTP chunks). The stored object must be exactly the decoded payload,
never the framing, and its Content-Encoding must not include aws-chunked. Every malformed or forged body
is rejected with nothing stored (Depot.snapshot / assert_unchanged).
"""

from __future__ import annotations

import hashlib
import hmac
import random
import re
import socket
import time
from dataclasses import dataclass, field

import pytest
import requests

from depot_harness import md5_etag, quote_key
from test_checksums import checksum, header_name

KiB = 1024
MiB = 1024 * KiB
EMPTY_SHA256 = hashlib.sha256(b"").hexdigest()

SIGNED = "STREAMING-AWS4-HMAC-SHA256-PAYLOAD"
SIGNED_TRAILER = "STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER"
UNSIGNED_TRAILER = "STREAMING-UNSIGNED-PAYLOAD-TRAILER"
MODES = [SIGNED, SIGNED_TRAILER, UNSIGNED_TRAILER]
MODE_IDS = {SIGNED: "signed", SIGNED_TRAILER: "signed-trailer", UNSIGNED_TRAILER: "unsigned-trailer"}


def data(n: int, seed) -> bytes:
    return random.Random(str(seed)).randbytes(n)


def _hmac(key: bytes, msg: str) -> bytes:
    return hmac.new(key, msg.encode(), hashlib.sha256).digest()


class ChunkSigner:
    """The SigV4 chain of an aws-chunked body: each chunk's signature covers the previous one."""

    def __init__(self, secret: str, amz_date: str, region: str, seed_signature: str):
        date = amz_date[:8]
        key = _hmac(("AWS4" + secret).encode(), date)
        for part in (region, "s3", "aws4_request"):
            key = _hmac(key, part)
        self.key = key
        self.amz_date = amz_date
        self.scope = f"{date}/{region}/s3/aws4_request"
        self.previous = seed_signature

    def _sign(self, string_to_sign: str) -> str:
        self.previous = hmac.new(self.key, string_to_sign.encode(), hashlib.sha256).hexdigest()
        return self.previous

    def chunk(self, payload: bytes) -> str:
        return self._sign("\n".join(["AWS4-HMAC-SHA256-PAYLOAD", self.amz_date, self.scope, self.previous,
                                     EMPTY_SHA256, hashlib.sha256(payload).hexdigest()]))

    def trailer(self, trailers: list[tuple[str, str]]) -> str:
        canonical = "".join(f"{name.lower()}:{value.strip()}\n" for name, value in trailers)
        return self._sign("\n".join(["AWS4-HMAC-SHA256-TRAILER", self.amz_date, self.scope, self.previous,
                                     hashlib.sha256(canonical.encode()).hexdigest()]))


class FakeSigner:
    """Signatures of the right length, to measure an encoded body before the real ones exist."""

    def chunk(self, payload: bytes) -> str:
        return "0" * 64

    def trailer(self, trailers) -> str:
        return "0" * 64


@dataclass
class Tamper:
    """Ways to break a body (all off by default)."""
    bad_chunk_signature: int | None = None  # index of the chunk whose signature is forged
    bad_trailer_signature: bool = False
    drop_final_chunk: bool = False          # the body ends after the last data chunk
    omit_trailers: bool = False             # x-amz-trailer announced, none sent
    chunk_size_delta: int = 0               # the first chunk's header claims this many more bytes
    extra: dict = field(default_factory=dict)


def encode(payload: bytes, mode: str, chunk_size: int, signer, trailers: list[tuple[str, str]],
           tamper: Tamper = Tamper()) -> bytes:
    pieces = [payload[i:i + chunk_size] for i in range(0, len(payload), chunk_size)]
    out = bytearray()
    for index, piece in enumerate(pieces):
        size = len(piece) + (tamper.chunk_size_delta if index == 0 else 0)
        if mode == UNSIGNED_TRAILER:
            out += f"{size:x}\r\n".encode()
        else:
            signature = signer.chunk(piece)
            if tamper.bad_chunk_signature == index:
                signature = ("0" if signature[0] != "0" else "1") + signature[1:]
            out += f"{size:x};chunk-signature={signature}\r\n".encode()
        out += piece + b"\r\n"
    if tamper.drop_final_chunk:
        return bytes(out)
    if mode == UNSIGNED_TRAILER:
        out += b"0\r\n"
    else:
        out += f"0;chunk-signature={signer.chunk(b'')}\r\n".encode()
    if mode == SIGNED:
        return bytes(out + b"\r\n")
    if not tamper.omit_trailers:
        for name, value in trailers:
            out += f"{name}:{value}\r\n".encode()
        if mode == SIGNED_TRAILER:
            signature = signer.trailer(trailers)
            if tamper.bad_trailer_signature:
                signature = ("0" if signature[0] != "0" else "1") + signature[1:]
            out += f"x-amz-trailer-signature:{signature}\r\n".encode()
    return bytes(out + b"\r\n")


@dataclass
class Prepared:
    url: str
    headers: dict[str, str]
    body: bytes


def prepare(depot, bucket: str, key: str, payload: bytes, mode: str, *, chunk_size: int = 64 * KiB,
            trailer_algorithm: str | None = "CRC32", trailer_value: str | None = None, transfer: str = "length",
            decoded_length: int | None = None, headers: dict | None = None, tamper: Tamper = Tamper(),
            query: str = "") -> Prepared:
    """A signed aws-chunked PUT of `payload` (transfer: "length" = Content-Length, "chunked" = HTTP chunked)."""
    url = f"{depot.endpoint}/{bucket}/{quote_key(key)}" + (f"?{query}" if query else "")
    trailers = []
    hdrs = {"Content-Encoding": "aws-chunked",
            "x-amz-decoded-content-length": str(len(payload) if decoded_length is None else decoded_length)}
    if mode != SIGNED and trailer_algorithm:
        value = trailer_value if trailer_value is not None else checksum(trailer_algorithm, payload)
        trailers = [(header_name(trailer_algorithm), value)]
        hdrs["x-amz-trailer"] = header_name(trailer_algorithm)
        hdrs["x-amz-sdk-checksum-algorithm"] = trailer_algorithm
    hdrs.update(headers or {})
    hdrs = {k: v for k, v in hdrs.items() if v is not None}  # None: leave the header out
    if transfer == "length":
        hdrs["Content-Length"] = str(len(encode(payload, mode, chunk_size, FakeSigner(), trailers, tamper)))
    signed = depot.sign("PUT", url, headers=hdrs, payload_hash=mode)
    seed = re.search(r"Signature=([0-9a-f]{64})", signed["Authorization"]).group(1)
    user = depot.user("alice")
    signer = ChunkSigner(user.secret, signed["X-Amz-Date"], depot.region, seed)
    body = encode(payload, mode, chunk_size, signer, trailers, tamper)
    if transfer == "length":
        assert int(hdrs["Content-Length"]) == len(body)
    return Prepared(url, signed, body)


def send(prepared: Prepared, transfer: str = "length", piece: int = 7001) -> requests.Response:
    if transfer == "length":
        return requests.put(prepared.url, data=prepared.body, headers=prepared.headers, timeout=60)

    # HTTP/1.1 chunked transfer coding: requests sends a generator that way, with no Content-Length.
    def pieces():
        for i in range(0, len(prepared.body), piece):
            yield prepared.body[i:i + piece]

    headers = {k: v for k, v in prepared.headers.items() if k.lower() != "content-length"}
    return requests.put(prepared.url, data=pieces(), headers=headers, timeout=60)


def chunked_put(depot, bucket, key, payload, mode, *, transfer="length", **kwargs) -> requests.Response:
    return send(prepare(depot, bucket, key, payload, mode, transfer=transfer, **kwargs), transfer)


def assert_rejected(response: requests.Response, statuses=(400, 403), codes: set[str] | None = None):
    assert response.status_code in statuses, f"expected {statuses}, got {response.status_code}: {response.text!r}"
    if codes is not None:
        code = re.search(r"<Code>([^<]*)</Code>", response.text)
        assert code and code.group(1) in codes, f"expected one of {codes}: {response.text!r}"


def assert_nothing_stored(depot, before, bucket, key, s3):
    # A body the server stopped reading may still be draining: give it a moment.
    deadline = time.monotonic() + 5
    while True:
        try:
            depot.assert_unchanged(before)
            break
        except AssertionError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)
    keys = [o["Key"] for o in s3.list_objects_v2(Bucket=bucket).get("Contents", [])]
    assert key not in keys


# ---- the encoder itself, against AWS's published examples (sigv4-streaming, sigv4-streaming-trailers)

AWS_EXAMPLE_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"


def test_chunk_signer_matches_the_aws_examples():
    signer = ChunkSigner(AWS_EXAMPLE_SECRET, "20130524T000000Z", "us-east-1",
                         "4f232c4386841ef735655705268965c44a0e4690baa4adea153f7db9fa80a0a9")
    assert [signer.chunk(b"a" * 65536), signer.chunk(b"a" * 1024), signer.chunk(b"")] == [
        "ad80c730a21e5b8d04586a2213dd63b9a0e99e0e2307b0ade35a65485a288648",
        "0055627c9e194cb4542bae2aa5492e3c1575bbb81b612b7d234b86a503ef5497",
        "b6c6ea8a5354eaf15b3cb7646744f4275b71ea724fed81ceb9323e279d449df9"]

    signer = ChunkSigner(AWS_EXAMPLE_SECRET, "20130524T000000Z", "us-east-1",
                         "106e2a8a18243abcf37539882f36619c00e2dfc72633413f02d3b74544bfeb8e")
    assert [signer.chunk(b"a" * 65536), signer.chunk(b"a" * 1024), signer.chunk(b"")] == [
        "b474d8862b1487a5145d686f57f013e54db672cee1c953b3010fb58501ef5aa2",
        "1c1344b170168f8e65b41376b44b20fe354e373826ccbbe2c1d40a8cae51e5c7",
        "2ca2aba2005185cf7159c6277faf83795951dd77a3a99e6e65d5c9f85863f992"]
    assert checksum("CRC32C", b"a" * 66560) == "sOO8/Q=="
    assert signer.trailer([("x-amz-checksum-crc32c", "sOO8/Q==")]) == (
        "d81f82fc3505edab99d459891051a732e8730629a2e4a59689829ca17fe2e435")


# ---- what is stored is the decoded payload


@pytest.mark.parametrize("transfer", ["length", "chunked"], ids=["content-length", "transfer-encoding-chunked"])
@pytest.mark.parametrize("mode", MODES, ids=[MODE_IDS[m] for m in MODES])
def test_stored_object_is_the_decoded_payload(depot, s3, bucket, mode, transfer):
    payload = data(200 * KiB + 123, (mode, transfer))  # 3 full 64 KiB chunks and a short one
    response = chunked_put(depot, bucket, "obj", payload, mode, transfer=transfer)
    assert response.status_code == 200, response.text
    assert response.headers.get("ETag") == md5_etag(payload)

    got = s3.get_object(Bucket=bucket, Key="obj", ChecksumMode="ENABLED")
    body = got["Body"].read()
    assert len(body) == len(payload) and body == payload, "the stored object is not the decoded payload"
    assert got["ContentLength"] == len(payload)
    assert got["ETag"] == md5_etag(payload)
    assert "aws-chunked" not in (got.get("ContentEncoding") or "")
    if mode != SIGNED:
        # The trailer's checksum is stored and returned.
        assert got["ResponseMetadata"]["HTTPHeaders"].get("x-amz-checksum-crc32") == checksum("CRC32", payload)
        assert response.headers.get("x-amz-checksum-crc32") == checksum("CRC32", payload)


@pytest.mark.parametrize("algorithm", ["CRC32C", "CRC64NVME", "SHA1", "SHA256"])
@pytest.mark.parametrize("mode", [SIGNED_TRAILER, UNSIGNED_TRAILER], ids=["signed-trailer", "unsigned-trailer"])
def test_every_checksum_algorithm_in_the_trailer(depot, s3, bucket, mode, algorithm):
    payload = data(100 * KiB, (mode, algorithm))
    response = chunked_put(depot, bucket, "obj", payload, mode, trailer_algorithm=algorithm, chunk_size=32 * KiB)
    assert response.status_code == 200, response.text
    got = s3.get_object(Bucket=bucket, Key="obj", ChecksumMode="ENABLED")
    assert got["ResponseMetadata"]["HTTPHeaders"].get(header_name(algorithm)) == checksum(algorithm, payload)
    assert got["Body"].read() == payload


@pytest.mark.parametrize("size,chunk_size", [(0, 64 * KiB), (1, 64 * KiB), (100, 1), (64 * KiB, 64 * KiB),
                                             (3 * MiB + 5, 1 * MiB)],
                         ids=["empty", "one-byte", "one-byte-chunks", "exactly-one-chunk", "1-mib-chunks"])
@pytest.mark.parametrize("mode", MODES, ids=[MODE_IDS[m] for m in MODES])
def test_sizes_and_chunk_boundaries(depot, s3, bucket, mode, size, chunk_size):
    payload = data(size, (mode, size, chunk_size))
    response = chunked_put(depot, bucket, "obj", payload, mode, chunk_size=chunk_size)
    assert response.status_code == 200, response.text
    assert s3.get_object(Bucket=bucket, Key="obj")["Body"].read() == payload


@pytest.mark.parametrize("encoding,stored", [("aws-chunked,gzip", "gzip"), ("gzip,aws-chunked", "gzip"),
                                             ("aws-chunked, br", "br"),
                                             # The rest of the list is kept as sent, spacing included (issue 27).
                                             ("aws-chunked,gzip,deflate", "gzip,deflate"),
                                             ("aws-chunked, deflate, gzip", "deflate, gzip"),
                                             ("deflate, aws-chunked, gzip", "deflate, gzip")])
def test_content_encoding_is_stored_without_aws_chunked(depot, s3, bucket, encoding, stored):
    payload = data(5000, encoding)
    response = chunked_put(depot, bucket, "obj", payload, UNSIGNED_TRAILER, headers={"Content-Encoding": encoding})
    assert response.status_code == 200, response.text
    head = s3.head_object(Bucket=bucket, Key="obj")
    assert head["ContentEncoding"] == stored
    assert s3.get_object(Bucket=bucket, Key="obj")["Body"].read() == payload


def test_content_encoding_lists_are_stored_as_sent(depot, s3, bucket):
    for encoding in ("deflate, gzip", "gzip,deflate", "br"):
        s3.put_object(Bucket=bucket, Key="enc", Body=b"x", ContentEncoding=encoding)
        assert s3.head_object(Bucket=bucket, Key="enc")["ContentEncoding"] == encoding


def test_metadata_and_content_type_survive_the_chunked_encoding(depot, s3, bucket):
    payload = data(1000, "meta")
    response = chunked_put(depot, bucket, "obj", payload, SIGNED_TRAILER,
                           headers={"Content-Type": "application/x-weights", "x-amz-meta-framework": "jax"})
    assert response.status_code == 200, response.text
    head = s3.head_object(Bucket=bucket, Key="obj")
    assert head["ContentType"] == "application/x-weights"
    assert head["Metadata"] == {"framework": "jax"}
    assert head["ContentLength"] == len(payload)


def test_signed_chunks_with_a_checksum_header(depot, s3, bucket):
    # A checksum may come as a header instead of a trailer.
    payload = data(70 * KiB, "header-checksum")
    response = chunked_put(depot, bucket, "obj", payload, SIGNED,
                           headers={"x-amz-checksum-sha256": checksum("SHA256", payload)})
    assert response.status_code == 200, response.text
    got = s3.get_object(Bucket=bucket, Key="obj", ChecksumMode="ENABLED")
    assert got["ChecksumSHA256"] == checksum("SHA256", payload)
    assert got["Body"].read() == payload


def test_upload_part_with_an_aws_chunked_body(depot, s3, bucket):
    parts = [data(5 * MiB, "part1"), data(1000, "part2")]
    upload_id = s3.create_multipart_upload(Bucket=bucket, Key="mp")["UploadId"]
    done = []
    for number, (part, mode) in enumerate(zip(parts, [SIGNED_TRAILER, UNSIGNED_TRAILER]), start=1):
        response = chunked_put(depot, bucket, "mp", part, mode, transfer="chunked",
                               query=f"partNumber={number}&uploadId={upload_id}")
        assert response.status_code == 200, response.text
        assert response.headers.get("ETag") == md5_etag(part)
        done.append({"PartNumber": number, "ETag": md5_etag(part)})
    listed = s3.list_parts(Bucket=bucket, Key="mp", UploadId=upload_id)["Parts"]
    assert [p["Size"] for p in listed] == [len(p) for p in parts]
    s3.complete_multipart_upload(Bucket=bucket, Key="mp", UploadId=upload_id, MultipartUpload={"Parts": done})
    assert s3.get_object(Bucket=bucket, Key="mp")["Body"].read() == b"".join(parts)


# ---- rejected bodies store nothing


FAILURES = {
    # name: (mode, prepare() arguments, accepted statuses, accepted codes or None)
    "bad-chunk-signature-first": (SIGNED, {"tamper": Tamper(bad_chunk_signature=0)}, (403,), {"SignatureDoesNotMatch"}),
    "bad-chunk-signature-later": (SIGNED, {"tamper": Tamper(bad_chunk_signature=2)}, (403,), {"SignatureDoesNotMatch"}),
    "bad-chunk-signature-trailer-form": (SIGNED_TRAILER, {"tamper": Tamper(bad_chunk_signature=1)}, (403,),
                                         {"SignatureDoesNotMatch"}),
    "bad-trailer-signature": (SIGNED_TRAILER, {"tamper": Tamper(bad_trailer_signature=True)}, (403,),
                              {"SignatureDoesNotMatch"}),
    "bad-trailer-checksum-signed": (SIGNED_TRAILER, {"trailer_value": checksum("CRC32", b"other bytes")}, (400,),
                                    {"BadDigest"}),
    "bad-trailer-checksum-unsigned": (UNSIGNED_TRAILER, {"trailer_value": checksum("CRC32", b"other bytes")}, (400,),
                                      {"BadDigest"}),
    "bad-trailer-sha256-unsigned": (UNSIGNED_TRAILER, {"trailer_algorithm": "SHA256",
                                                       "trailer_value": checksum("SHA256", b"other")}, (400,),
                                    {"BadDigest"}),
    "bad-checksum-header-signed": (SIGNED, {"headers": {"x-amz-checksum-crc32": checksum("CRC32", b"other")}},
                                   (400,), {"BadDigest"}),
    "malformed-trailer-value": (UNSIGNED_TRAILER, {"trailer_value": "not base64!"}, (400,),
                                {"InvalidRequest", "InvalidArgument", "BadDigest"}),
    "trailer-missing": (UNSIGNED_TRAILER, {"tamper": Tamper(omit_trailers=True)}, (400,), None),
    "truncated-no-final-chunk-signed": (SIGNED, {"tamper": Tamper(drop_final_chunk=True)}, (400,), None),
    "truncated-no-final-chunk-unsigned": (UNSIGNED_TRAILER, {"tamper": Tamper(drop_final_chunk=True)}, (400,), None),
    "decoded-length-larger": (SIGNED, {"decoded_length_delta": 1}, (400,), None),
    "decoded-length-smaller": (UNSIGNED_TRAILER, {"decoded_length_delta": -1}, (400,), None),
    "decoded-length-missing": (SIGNED_TRAILER, {"headers": {"x-amz-decoded-content-length": None}}, (400, 411), None),
    "chunk-size-claims-more": (UNSIGNED_TRAILER, {"tamper": Tamper(chunk_size_delta=1)}, (400,), None),
    "chunk-size-claims-less": (SIGNED, {"tamper": Tamper(chunk_size_delta=-1)}, (400, 403), None),
}


@pytest.mark.parametrize("transfer", ["length", "chunked"], ids=["content-length", "transfer-encoding-chunked"])
@pytest.mark.parametrize("case", list(FAILURES))
def test_rejected_bodies_store_nothing(depot, s3, bucket, case, transfer):
    mode, kwargs, statuses, codes = FAILURES[case]
    kwargs = dict(kwargs)
    payload = data(150 * KiB + 9, case)
    s3.put_object(Bucket=bucket, Key="existing", Body=b"the object before")
    if delta := kwargs.pop("decoded_length_delta", 0):
        kwargs["decoded_length"] = len(payload) + delta
    before = depot.snapshot(bucket)
    for key in ("new-key", "existing"):
        response = send(prepare(depot, bucket, key, payload, mode, transfer=transfer, **kwargs), transfer)
        assert_rejected(response, statuses, codes)
    assert_nothing_stored(depot, before, bucket, "new-key", s3)
    assert s3.get_object(Bucket=bucket, Key="existing")["Body"].read() == b"the object before"


def _raw_send_truncated(prepared: Prepared, *, transfer: str, keep: int) -> bytes:
    """Sends the request's head and the first `keep` bytes of its body, then closes the sending side."""
    url = requests.utils.urlparse(prepared.url)
    target = url.path + (f"?{url.query}" if url.query else "")
    lines = [f"PUT {target} HTTP/1.1", f"Host: {url.netloc}"]
    lines += [f"{k}: {v}" for k, v in prepared.headers.items() if k.lower() not in ("host", "content-length")]
    if transfer == "length":
        lines.append(f"Content-Length: {len(prepared.body)}")
        body = prepared.body[:keep]
    else:
        lines.append("Transfer-Encoding: chunked")
        part = prepared.body[:keep]
        body = f"{len(part):x}\r\n".encode() + part + b"\r\n"  # no terminating 0-size HTTP chunk
    with socket.create_connection((url.hostname, url.port), timeout=30) as sock:
        sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode() + body)
        sock.shutdown(socket.SHUT_WR)
        received = b""
        try:
            while chunk := sock.recv(65536):
                received += chunk
        except (ConnectionResetError, socket.timeout):
            pass
    return received


@pytest.mark.parametrize("transfer", ["length", "chunked"], ids=["content-length", "transfer-encoding-chunked"])
@pytest.mark.parametrize("mode", MODES, ids=[MODE_IDS[m] for m in MODES])
def test_connection_closed_mid_body_stores_nothing(depot, s3, bucket, mode, transfer):
    payload = data(300 * KiB, ("cut", mode, transfer))
    before = depot.snapshot(bucket)
    prepared = prepare(depot, bucket, "cut", payload, mode, transfer="length")
    received = _raw_send_truncated(prepared, transfer=transfer, keep=len(prepared.body) // 2)
    # Either an error response or a closed connection; never a success.
    status_line = received.split(b"\r\n", 1)[0]
    assert not status_line.startswith(b"HTTP/1.1 2"), received[:500]
    assert_nothing_stored(depot, before, bucket, "cut", s3)
    # The server is fine afterwards.
    assert chunked_put(depot, bucket, "after", b"still serving", mode).status_code == 200
