"""`Expect: 100-continue` over a raw socket: the server authenticates the headers before asking for the body."""

from __future__ import annotations

import hashlib
import random
import socket

from depot_harness import md5_etag, parse_error, quote_key


class RawResponse:
    def __init__(self, status: int, reason: str, headers: dict[str, str], body: bytes):
        self.status_code, self.reason, self.headers, self.content = status, reason, headers, body


class Connection:
    """Just enough HTTP/1.1 to see interim responses, which http.client and requests hide."""

    def __init__(self, port: int, timeout: float = 15):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self.buffer = b""

    def close(self):
        self.sock.close()

    def send(self, data: bytes):
        self.sock.sendall(data)

    def _fill(self) -> bool:
        chunk = self.sock.recv(65536)
        self.buffer += chunk
        return bool(chunk)

    def read_head(self) -> tuple[int, str, dict[str, str]]:
        while b"\r\n\r\n" not in self.buffer:
            if not self._fill():
                raise ConnectionError(f"connection closed before a response head; got {self.buffer!r}")
        head, self.buffer = self.buffer.split(b"\r\n\r\n", 1)
        lines = head.decode("latin-1").split("\r\n")
        version, status, *reason = lines[0].split(" ", 2)
        assert version == "HTTP/1.1", lines[0]
        headers = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        return int(status), (reason[0] if reason else ""), headers

    def read_response(self, method: str = "PUT") -> RawResponse:
        status, reason, headers = self.read_head()
        length = 0 if method == "HEAD" or status in (204, 304) else int(headers.get("content-length", "0"))
        if headers.get("transfer-encoding", "").lower() == "chunked":
            body = self._read_chunked()
        else:
            while len(self.buffer) < length:
                if not self._fill():
                    raise ConnectionError("connection closed in the middle of a response body")
            body, self.buffer = self.buffer[:length], self.buffer[length:]
        return RawResponse(status, reason, headers, body)

    def _read_chunked(self) -> bytes:
        body = b""
        while True:
            while b"\r\n" not in self.buffer:
                self._fill()
            size_line, self.buffer = self.buffer.split(b"\r\n", 1)
            size = int(size_line.split(b";")[0], 16)
            while len(self.buffer) < size + 2:
                self._fill()
            body += self.buffer[:size]
            self.buffer = self.buffer[size + 2:]
            if size == 0:
                return body


def request_head(depot, bucket: str, key: str, body: bytes, **sign_args) -> bytes:
    path = f"/{bucket}/{quote_key(key)}"
    headers = {"Content-Length": str(len(body)), "Content-Type": "application/octet-stream"}
    signed = depot.sign("PUT", depot.endpoint + path, body=body, headers=headers, **sign_args)
    signed["Expect"] = "100-continue"  # never signed (botocore leaves it out too)
    lines = [f"PUT {path} HTTP/1.1", f"Host: 127.0.0.1:{depot.port}"]
    lines += [f"{name}: {value}" for name, value in signed.items() if name.lower() != "host"]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def test_authorized_put_gets_100_continue_before_the_body(depot, s3, bucket):
    body = random.Random(100).randbytes(256 * 1024)
    conn = Connection(depot.port)
    try:
        conn.send(request_head(depot, bucket, "continued.bin", body))
        status, reason, _ = conn.read_head()
        assert status == 100, f"expected 100 Continue before sending the body, got {status} {reason}"
        conn.send(body)
        response = conn.read_response()
        assert response.status_code == 200, response.content
        assert response.headers.get("etag") == md5_etag(body)
    finally:
        conn.close()
    got = s3.get_object(Bucket=bucket, Key="continued.bin")["Body"].read()
    assert hashlib.sha256(got).digest() == hashlib.sha256(body).digest()


def test_wrong_signature_gets_403_without_100_continue(depot, s3, bucket):
    body = random.Random(101).randbytes(256 * 1024)
    before = depot.snapshot(bucket)
    conn = Connection(depot.port)
    try:
        conn.send(request_head(depot, bucket, "rejected.bin", body, secret="not-the-secret-" * 3))
        response = conn.read_response()
        assert response.status_code == 403, (
            f"expected 403 before the body was sent, got {response.status_code} {response.reason}")
        assert parse_error(response)["Code"] == "SignatureDoesNotMatch"
        assert response.headers.get("x-amz-request-id")
    finally:
        conn.close()
    depot.assert_unchanged(before)


def test_missing_bucket_gets_404_without_100_continue(depot):
    body = b"x" * 1024
    before = depot.snapshot()
    conn = Connection(depot.port)
    try:
        conn.send(request_head(depot, "no-such-bucket-for-expect", "k", body))
        response = conn.read_response()
        assert response.status_code == 404, f"got {response.status_code} {response.reason}"
        assert parse_error(response)["Code"] == "NoSuchBucket"
    finally:
        conn.close()
    depot.assert_unchanged(before)


def test_connection_is_reusable_after_a_continued_put(depot, s3, bucket):
    """Keep-alive: a second request on the same connection after a 100-continue upload."""
    body = b"first body"
    conn = Connection(depot.port)
    try:
        conn.send(request_head(depot, bucket, "first", body))
        assert conn.read_head()[0] == 100
        conn.send(body)
        assert conn.read_response().status_code == 200
        path = f"/{bucket}/first"
        signed = depot.sign("GET", depot.endpoint + path)
        lines = [f"GET {path} HTTP/1.1", f"Host: 127.0.0.1:{depot.port}"]
        lines += [f"{k}: {v}" for k, v in signed.items() if k.lower() != "host"]
        conn.send(("\r\n".join(lines) + "\r\n\r\n").encode())
        response = conn.read_response("GET")
        assert (response.status_code, response.content) == (200, body)
    finally:
        conn.close()


def test_boto3_put_of_an_empty_body_leaves_the_connection_usable(depot, bucket):
    """botocore sends "Expect: 100-continue" with an empty PutObject too. Answered without "100 Continue",
    it reused that answer's status line for the next request on the connection and then waited for the end
    of a body that never came (depotd's idle timeout, 60 s): every upload after an empty file stalled. With
    a 10 s read timeout the stall is an error here."""
    s3 = depot.client("alice", read_timeout=10)
    for i, body in enumerate([b"", b"ab", b"", b"abc", b"{}"]):
        s3.put_object(Bucket=bucket, Key=f"empty-then-{i}", Body=body)
    for i, body in enumerate([b"", b"ab", b"", b"abc", b"{}"]):
        assert s3.get_object(Bucket=bucket, Key=f"empty-then-{i}")["Body"].read() == body
