"""Request limits: header section size, XML body size, keys per DeleteObjects, open connections.

  - A header section above --max-header-bytes (default 16 KiB; one huge field or many small ones) answers
    400 RequestHeaderSectionTooLarge (an S3 XML error with a request id) and closes the connection; the
    server goes on serving, over HTTP and over HTTPS.
  - An XML request body above --max-xml-body-bytes answers 400 MaxMessageLengthExceeded whether its
    length is declared or it arrives HTTP-chunked, and changes nothing.
  - DeleteObjects takes at most 1000 keys: 1001 answer MalformedXML and delete nothing.
  - Connections beyond --max-connections are accepted and closed at once, and served again once an
    open connection ends.
"""

from __future__ import annotations

import socket
import ssl
import time
from xml.sax.saxutils import escape

import pytest
import requests

from depot_harness import content_md5
from test_checksums import assert_s3_error, object_path
# The TLS fixtures (ca, tls_depot, and `server`: HTTP or HTTPS) are shared with test_tls.
from test_tls import ca, connect, healthz, send_http_chunked, server, start_sibling, stop_and_check, tls_depot  # noqa: F401,E501

KiB = 1024
XML_LIMIT = 4096
MAX_CONNECTIONS = 4


@pytest.fixture(scope="module")
def limited(depot, tmp_path_factory):
    """A depotd on the suite's database with small limits: 4 connections, 4 KiB XML bodies."""
    limited_depot = start_sibling(depot, tmp_path_factory.mktemp("depot-limited"),
                                  extra_args=("--max-connections", str(MAX_CONNECTIONS),
                                              "--max-xml-body-bytes", str(XML_LIMIT)))
    try:
        yield limited_depot
        stop_and_check(limited_depot)
    finally:
        if limited_depot.proc is not None and limited_depot.proc.poll() is None:
            limited_depot.stop()


def raw_socket(server, timeout: float = 10) -> socket.socket:
    sock = socket.create_connection((server.host, server.port), timeout=timeout)
    if server.tls_cert is None:
        return sock
    ctx = ssl.create_default_context(cafile=str(server.ca_bundle))
    return ctx.wrap_socket(sock, server_hostname="localhost")


def read_response(sock: socket.socket) -> tuple[int, dict[str, str], bytes]:
    """Reads one response (its Content-Length bytes of body, or up to the end of the connection)."""
    data = b""
    length = None
    try:
        while True:
            if length is None and b"\r\n\r\n" in data:
                head = data.partition(b"\r\n\r\n")[0].decode("latin-1").lower()
                for line in head.split("\r\n")[1:]:
                    if line.startswith("content-length:"):
                        length = int(line.split(":", 1)[1])
            if length is not None and len(data.partition(b"\r\n\r\n")[2]) >= length:
                break
            chunk = sock.recv(65536)
            if not chunk:
                break
            data += chunk
    except (ConnectionResetError, ssl.SSLError):
        pass
    head, _, body = data.partition(b"\r\n\r\n")
    assert head, "the connection closed without an answer"
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split(" ")[1])
    headers = {k.strip().lower(): v.strip() for k, v in (line.split(":", 1) for line in lines[1:])}
    return status, headers, body


def exchange(server, request: bytes) -> tuple[int, dict[str, str], bytes]:
    with raw_socket(server) as sock:
        sock.sendall(request)
        return read_response(sock)


def assert_header_section_too_large(status, headers, body):
    assert status == 400, (status, body)
    assert b"<Code>RequestHeaderSectionTooLarge</Code>" in body, body
    assert headers.get("connection", "").lower() == "close", headers
    request_id = headers.get("x-amz-request-id")
    assert request_id and f"<RequestId>{request_id}</RequestId>".encode() in body, (headers, body)


# ---- header section


def test_one_oversized_header_field_is_refused_and_the_server_carries_on(server):
    request = (f"GET /healthz HTTP/1.1\r\nHost: {server.host}:{server.port}\r\n"
               f"X-Padding: {'a' * 20 * KiB}\r\n\r\n").encode()
    assert_header_section_too_large(*exchange(server, request))
    assert healthz(connect(server)) == 200


def test_many_small_header_fields_are_refused_and_the_server_carries_on(server):
    fields = "".join(f"X-Field-{i}: value-{i}\r\n" for i in range(1200))
    request = f"GET /healthz HTTP/1.1\r\nHost: {server.host}:{server.port}\r\n{fields}\r\n".encode()
    assert len(request) > 16 * KiB
    assert_header_section_too_large(*exchange(server, request))
    assert healthz(connect(server)) == 200


def test_a_header_section_just_below_the_limit_is_served(server):
    request = (f"GET /healthz HTTP/1.1\r\nHost: {server.host}:{server.port}\r\nConnection: close\r\n"
               f"X-Padding: {'a' * 15 * KiB}\r\n\r\n").encode()
    status, _, _ = exchange(server, request)
    assert status == 200


def test_a_signed_request_with_a_long_url_still_works(server, bucket):
    key = "k/" + "x" * 1000  # S3's longest key: 1024 bytes
    s3 = server.client()
    s3.put_object(Bucket=bucket, Key=key, Body=b"long")
    assert s3.get_object(Bucket=bucket, Key=key)["Body"].read() == b"long"


# ---- XML bodies


def delete_body(keys: list[str]) -> bytes:
    objects = "".join(f"<Object><Key>{escape(k)}</Key></Object>" for k in keys)
    return f'<Delete xmlns="http://s3.amazonaws.com/doc/2006-03-01/">{objects}</Delete>'.encode()


def test_delete_objects_body_over_the_xml_limit_is_max_message_length_exceeded(limited, s3, bucket):
    s3.put_object(Bucket=bucket, Key="keep", Body=b"kept")
    body = delete_body(["keep"] + [f"padding-{i:05d}" for i in range(200)])
    assert len(body) > XML_LIMIT
    before = limited.snapshot(bucket)
    response = limited.request("POST", f"/{bucket}?delete", body=body, headers={"Content-MD5": content_md5(body)})
    assert_s3_error(response, "MaxMessageLengthExceeded", 400)
    # The same body HTTP-chunked (no Content-Length): found out while reading.
    url = f"{limited.endpoint}/{bucket}?delete"
    headers = limited.sign("POST", url, body=body, headers={"Content-MD5": content_md5(body)})
    status, answer = send_http_chunked(limited, "POST", url, headers, body, 1000)
    assert status == 400 and b"<Code>MaxMessageLengthExceeded</Code>" in answer, answer
    limited.assert_unchanged(before)

    # Below the limit the same server deletes.
    small = delete_body(["keep"])
    ok = limited.request("POST", f"/{bucket}?delete", body=small, headers={"Content-MD5": content_md5(small)})
    assert ok.status_code == 200, ok.text
    assert "Contents" not in s3.list_objects_v2(Bucket=bucket)


def test_complete_multipart_body_over_the_xml_limit_leaves_the_upload(limited, s3, bucket):
    upload = s3.create_multipart_upload(Bucket=bucket, Key="mp")["UploadId"]
    etag = s3.upload_part(Bucket=bucket, Key="mp", UploadId=upload, PartNumber=1, Body=b"part")["ETag"]
    parts = "".join(f"<Part><PartNumber>1</PartNumber><ETag>{escape(etag)}</ETag></Part>" for _ in range(100))
    body = f"<CompleteMultipartUpload>{parts}</CompleteMultipartUpload>".encode()
    assert len(body) > XML_LIMIT
    before = limited.snapshot(bucket)
    response = limited.request("POST", object_path(bucket, "mp", f"uploadId={upload}"), body=body)
    assert_s3_error(response, "MaxMessageLengthExceeded", 400)
    limited.assert_unchanged(before)
    assert [p["PartNumber"] for p in s3.list_parts(Bucket=bucket, Key="mp", UploadId=upload)["Parts"]] == [1]
    s3.abort_multipart_upload(Bucket=bucket, Key="mp", UploadId=upload)


def test_delete_objects_takes_at_most_1000_keys(depot, s3, bucket):
    for key in ("a", "b", "c"):
        s3.put_object(Bucket=bucket, Key=key, Body=key.encode())
    too_many = ["a", "b", "c"] + [f"absent-{i}" for i in range(998)]
    body = delete_body(too_many)
    before = depot.snapshot(bucket)
    response = depot.request("POST", f"/{bucket}?delete", body=body, headers={"Content-MD5": content_md5(body)})
    assert_s3_error(response, "MalformedXML", 400)
    depot.assert_unchanged(before)

    deleted = s3.delete_objects(Bucket=bucket, Delete={"Objects": [{"Key": k} for k in too_many[:1000]]})
    assert len(deleted["Deleted"]) == 1000 and not deleted.get("Errors")
    assert "Contents" not in s3.list_objects_v2(Bucket=bucket)


# ---- connections


def test_connections_beyond_the_limit_are_closed_and_served_again_later(limited):
    request = f"GET /healthz HTTP/1.1\r\nHost: {limited.host}:{limited.port}\r\n\r\n".encode()
    held = []
    try:
        for _ in range(MAX_CONNECTIONS):
            sock = socket.create_connection((limited.host, limited.port), timeout=10)
            sock.sendall(request)
            answer = sock.recv(65536)  # served, and kept alive: it counts until it closes
            assert answer.startswith(b"HTTP/1.1 200"), answer
            held.append(sock)

        log_start = limited.log_size()
        with socket.create_connection((limited.host, limited.port), timeout=10) as extra:
            try:
                extra.sendall(request)
                answer = extra.recv(65536)
            except (ConnectionResetError, BrokenPipeError):
                answer = b""
            assert answer == b"", f"a connection beyond the limit was served: {answer!r}"
        with pytest.raises(requests.ConnectionError):
            requests.get(limited.endpoint + "/healthz", timeout=10)
        deadline = time.monotonic() + 5
        while "connection limit reached" not in limited.log_since(log_start):
            assert time.monotonic() < deadline, limited.log_since(log_start)
            time.sleep(0.05)

        # The held connections still work.
        held[0].sendall(request)
        assert held[0].recv(65536).startswith(b"HTTP/1.1 200")

        # One closes: a new connection is served again.
        held.pop().close()
        deadline = time.monotonic() + 5
        while True:
            try:
                if requests.get(limited.endpoint + "/healthz", timeout=10).status_code == 200:
                    break
            except requests.ConnectionError:
                pass
            assert time.monotonic() < deadline, "no connection was served after one closed"
            time.sleep(0.05)
    finally:
        for sock in held:
            sock.close()
    assert limited.proc.poll() is None
