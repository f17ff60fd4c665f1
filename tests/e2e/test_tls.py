"""depotd over TLS (--tls-cert / --tls-key), and the upload forms current clients use, over HTTP and HTTPS.

A throw-away CA (openssl CLI) issues a certificate for 127.0.0.1 and localhost; a second depotd on the
suite's database and blob store serves HTTPS with it, so the same buckets are reachable over both
listeners. The `server` fixture runs a test once over plain HTTP (the suite's depotd) and once over HTTPS:

  - aws cli `s3 cp` up and down of a multi-MiB file (multipart) with --ca-bundle;
  - boto3 put/get with ChecksumAlgorithm (over HTTP botocore sends the checksum as a header; over HTTPS
    an aws-chunked body with a trailer and `Transfer-Encoding: chunked`, no Content-Length);
  - a raw `Transfer-Encoding: chunked` request (no Content-Length) carrying an aws-chunked
    STREAMING-UNSIGNED-PAYLOAD-TRAILER body with an x-amz-checksum-crc32 trailer;
  - a plain body with an x-amz-checksum-crc32 header, right (stored) and wrong (BadDigest, nothing stored);
  - the AWS SDK for JavaScript v3 over HTTPS (NODE_EXTRA_CA_CERTS; tests/e2e/js covers it over HTTP).

TLS itself: the certificate is verified by clients (an untrusting client fails), TLS 1.2 and 1.3 work and
older versions are refused, ALPN picks http/1.1, plain HTTP to the TLS port gets a readable 400 and the
server carries on, SIGHUP reloads the certificate for new connections while an open keep-alive connection
keeps working, a failed reload keeps the previous certificate, bad files stop depotd at start with a clear
message, and SIGTERM shuts a TLS server down gracefully (an in-flight upload completes).
"""

from __future__ import annotations

import hashlib
import http.client
import json
import random
import shutil
import signal
import socket
import ssl
import subprocess
import time
import warnings
from pathlib import Path

import boto3
import botocore.config
import botocore.exceptions
import pytest
import requests

from depot_harness import CertAuthority, Depot, clean_env, expect_error, md5_etag, quote_key, run, sanitizer_reports
from test_checksums import assert_s3_error, checksum, object_path
from test_chunked import UNSIGNED_TRAILER, prepare

KiB = 1024
MiB = 1024 * KiB
JS_DIR = Path(__file__).resolve().parent / "js"
FIRST_SERIAL, SECOND_SERIAL = 0x1001, 0x1002


def data(n: int, seed) -> bytes:
    return random.Random(str(seed)).randbytes(n)


# ---- servers


def start_sibling(depot: Depot, workdir: Path, *, ca: CertAuthority | None = None, serial: int = FIRST_SERIAL,
                  extra_args: tuple[str, ...] = ()) -> Depot:
    """A second depotd on the suite's database and store; with `ca`, serving HTTPS with a new certificate."""
    server = depot.sibling(workdir)
    if ca is not None:
        cert, key = ca.issue(serial, workdir / "server.pem", workdir / "server.key")
        server.use_tls(cert, key, ca.cert)
    server.extra_args = list(extra_args)
    server.start()
    return server


def stop_and_check(server: Depot) -> None:
    status = server.stop()
    log = server.log_text()
    reports = sanitizer_reports(log)
    assert not reports, "depotd reported sanitizer errors:\n" + "\n".join(reports) + "\n" + log[-20000:]
    assert status == 0, f"depotd exited with status {status} after SIGTERM:\n{log[-8000:]}"


@pytest.fixture(scope="module")
def ca(tmp_path_factory) -> CertAuthority:
    return CertAuthority(tmp_path_factory.mktemp("ca"))


@pytest.fixture(scope="module")
def tls_depot(depot, ca, tmp_path_factory):
    server = start_sibling(depot, tmp_path_factory.mktemp("depot-tls"), ca=ca)
    try:
        yield server
        stop_and_check(server)
    finally:
        if server.proc is not None and server.proc.poll() is None:
            server.stop()


@pytest.fixture(params=["http", "https"])
def server(request, depot) -> Depot:
    """The suite's depotd over HTTP, or its TLS sibling over HTTPS (same database, buckets and users)."""
    if request.param == "http":
        return depot
    return request.getfixturevalue("tls_depot")


@pytest.fixture
def own_tls_depot(depot, ca, tmp_path):
    """A TLS depotd of the test's own, for tests that reload its certificate or stop it."""
    server = start_sibling(depot, tmp_path / "depot", ca=ca)
    try:
        yield server
        if server.proc.poll() is None:
            stop_and_check(server)
    finally:
        if server.proc is not None and server.proc.poll() is None:
            server.stop()


def client_context(ca: CertAuthority | Path | None, **kwargs) -> ssl.SSLContext:
    ctx = ssl.create_default_context(cafile=str(ca.cert if isinstance(ca, CertAuthority) else ca))
    for name, value in kwargs.items():
        setattr(ctx, name, value)
    return ctx


def connect(server: Depot, ctx: ssl.SSLContext | None = None, timeout: float = 30):
    """An http.client connection to `server` (HTTPS with `ctx`, or the server's CA, when it speaks TLS)."""
    if server.tls_cert is None:
        return http.client.HTTPConnection(server.host, server.port, timeout=timeout)
    ctx = ctx or client_context(server.ca_bundle)
    return http.client.HTTPSConnection(server.host, server.port, timeout=timeout, context=ctx)


def peer_serial(conn: http.client.HTTPConnection) -> int:
    return int(conn.sock.getpeercert()["serialNumber"], 16)


def healthz(conn: http.client.HTTPConnection) -> int:
    conn.request("GET", "/healthz")
    response = conn.getresponse()
    response.read()
    return response.status


# ---- clients over HTTP and HTTPS


@pytest.mark.slow
def test_aws_cli_cp_round_trip(server, bucket, tmp_path):
    source = tmp_path / "model.bin"
    source.write_bytes(data(12 * MiB + 321, "cli-" + server.endpoint))  # above the CLI's 8 MiB multipart threshold
    server.aws("s3", "cp", str(source), f"s3://{bucket}/models/model.bin")
    target = tmp_path / "back.bin"
    server.aws("s3", "cp", f"s3://{bucket}/models/model.bin", str(target))
    assert hashlib.sha256(target.read_bytes()).hexdigest() == hashlib.sha256(source.read_bytes()).hexdigest()
    assert server.client().head_object(Bucket=bucket, Key="models/model.bin")["ContentLength"] == 12 * MiB + 321


@pytest.mark.parametrize("algorithm", ["CRC32", "CRC32C", "SHA256"])
def test_boto3_put_and_get_with_checksum_algorithm(server, bucket, algorithm):
    s3 = server.client()
    sent = []
    s3.meta.events.register("before-send.s3.PutObject",
                            lambda request, **_: sent.append({k.lower(): v.decode() if isinstance(v, bytes) else v
                                                              for k, v in request.headers.items()}))
    body = data(3 * MiB + 11, (algorithm, server.endpoint))
    put = s3.put_object(Bucket=bucket, Key="k", Body=body, ChecksumAlgorithm=algorithm)
    assert put["ETag"] == md5_etag(body)
    assert put[f"Checksum{algorithm}"] == checksum(algorithm, body)

    [headers] = sent
    if server.tls_cert:
        # botocore's HTTPS form: aws-chunked with the checksum in a trailer, HTTP-chunked, no Content-Length.
        assert headers.get("transfer-encoding") == "chunked", headers
        assert "content-length" not in headers, headers
        assert "aws-chunked" in headers.get("content-encoding", ""), headers
        assert headers.get("x-amz-trailer") == f"x-amz-checksum-{algorithm.lower()}", headers
    else:
        assert headers.get(f"x-amz-checksum-{algorithm.lower()}") == checksum(algorithm, body), headers

    got = s3.get_object(Bucket=bucket, Key="k", ChecksumMode="ENABLED")
    assert got["Body"].read() == body
    assert got[f"Checksum{algorithm}"] == checksum(algorithm, body)
    assert got.get("ContentEncoding") in (None, "")


def send_http_chunked(server: Depot, method: str, url: str, headers: dict[str, str], body: bytes,
                      piece: int) -> tuple[int, bytes]:
    """Sends `body` with `Transfer-Encoding: chunked` in HTTP chunks of `piece` bytes, never a Content-Length."""
    conn = connect(server)
    try:
        conn.putrequest(method, url[len(server.endpoint):], skip_accept_encoding=True)
        for name, value in headers.items():
            assert name.lower() not in ("content-length", "transfer-encoding"), name
            if name.lower() != "host":  # putrequest sends the same Host
                conn.putheader(name, value)
        conn.putheader("Transfer-Encoding", "chunked")
        conn.endheaders()
        for i in range(0, len(body), piece):
            chunk = body[i:i + piece]
            conn.send(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
        conn.send(b"0\r\n\r\n")
        response = conn.getresponse()
        return response.status, response.read()
    finally:
        conn.close()


@pytest.mark.parametrize("size,piece", [(1 * MiB + 17, 7001), (200 * KiB, 64 * KiB), (0, 100)],
                         ids=["1MiB-odd-pieces", "200KiB-aligned", "empty"])
def test_http_chunked_aws_chunked_body_with_crc32_trailer(server, bucket, size, piece):
    payload = data(size, ("te-chunked", size, server.endpoint))
    prepared = prepare(server, bucket, "te/obj", payload, UNSIGNED_TRAILER, chunk_size=64 * KiB,
                       trailer_algorithm="CRC32", transfer="chunked")
    assert "Content-Length" not in prepared.headers
    status, answer = send_http_chunked(server, "PUT", prepared.url, prepared.headers, prepared.body, piece)
    assert status == 200, answer
    s3 = server.client()
    got = s3.get_object(Bucket=bucket, Key="te/obj", ChecksumMode="ENABLED")
    assert got["Body"].read() == payload, "the stored bytes are not exactly the decoded payload"
    assert got["ContentLength"] == size
    assert got["ETag"] == md5_etag(payload)
    assert got["ChecksumCRC32"] == checksum("CRC32", payload)
    assert got.get("ContentEncoding") in (None, "")


def test_http_chunked_aws_chunked_body_with_a_wrong_trailer_stores_nothing(server, bucket):
    payload = data(300 * KiB, ("te-wrong", server.endpoint))
    prepared = prepare(server, bucket, "te/wrong", payload, UNSIGNED_TRAILER, trailer_algorithm="CRC32",
                       trailer_value=checksum("CRC32", payload + b"x"), transfer="chunked")
    before = server.snapshot(bucket)
    status, answer = send_http_chunked(server, "PUT", prepared.url, prepared.headers, prepared.body, 9000)
    assert status == 400 and b"<Code>BadDigest</Code>" in answer, answer
    server.assert_unchanged(before)


def test_plain_body_with_crc32_header(server, bucket):
    body = data(256 * KiB + 5, ("crc-header", server.endpoint))
    good = server.request("PUT", object_path(bucket, "plain"), body=body,
                          headers={"x-amz-checksum-crc32": checksum("CRC32", body),
                                   "x-amz-sdk-checksum-algorithm": "CRC32"})
    assert good.status_code == 200, good.text
    assert good.headers["x-amz-checksum-crc32"] == checksum("CRC32", body)
    got = server.client().get_object(Bucket=bucket, Key="plain", ChecksumMode="ENABLED")
    assert got["Body"].read() == body
    assert got["ChecksumCRC32"] == checksum("CRC32", body)

    before = server.snapshot(bucket)
    for key in ("plain", "other"):
        wrong = server.request("PUT", object_path(bucket, key), body=body + b"?",
                               headers={"x-amz-checksum-crc32": checksum("CRC32", body)})
        assert_s3_error(wrong, "BadDigest", 400)
    server.assert_unchanged(before)
    assert server.client().get_object(Bucket=bucket, Key="plain")["Body"].read() == body


@pytest.mark.slow
def test_js_sdk_over_https(tls_depot, bucket, tmp_path):
    node = shutil.which("node", path="/usr/local/bin:/usr/bin:/bin")
    assert node, "node is not installed (the JavaScript SDK tests need node >= 20)"
    assert (JS_DIR / "node_modules" / "@aws-sdk" / "client-s3").is_dir(), (
        "tests/e2e/js/node_modules is missing: run scripts/js-deps (npm ci in tests/e2e/js)")
    files = {"buffer.bin": data(1 * MiB + 3, "tls-js-buffer"), "stream.bin": data(3 * MiB + 5, "tls-js-stream"),
             "generic.bin": data(2 * MiB + 7, "tls-js-generic"), "multipart.bin": data(11 * MiB + 1, "tls-js-mp")}
    for name, body in files.items():
        (tmp_path / name).write_bytes(body)
    user = tls_depot.user("alice")
    env = clean_env({
        "DEPOT_ENDPOINT": tls_depot.endpoint,
        "DEPOT_REGION": tls_depot.region,
        "DEPOT_BUCKET": bucket,
        "DEPOT_WORKDIR": str(tmp_path),
        "AWS_ACCESS_KEY_ID": user.access_key,
        "AWS_SECRET_ACCESS_KEY": user.secret,
        "AWS_CONFIG_FILE": "/dev/null",
        "AWS_SHARED_CREDENTIALS_FILE": "/dev/null",
        "AWS_EC2_METADATA_DISABLED": "true",
        "NODE_NO_WARNINGS": "1",
        "NODE_EXTRA_CA_CERTS": str(tls_depot.ca_bundle),
    })
    proc = run([node, str(JS_DIR / "sdk_round_trip.mjs")], env=env, cwd=str(JS_DIR), timeout=600)
    results = {r["name"]: r for r in json.loads(proc.stdout)["results"]}
    s3 = tls_depot.client()
    for name, file, key in (("put-buffer", "buffer.bin", "js/buffer.bin"),
                            ("put-file-stream", "stream.bin", "js/stream.bin"),
                            ("put-generic-stream", "generic.bin", "js/generic.bin"),
                            ("upload-multipart", "multipart.bin", "js/multipart.bin")):
        body = files[file]
        assert results[name]["get"]["sha256"] == hashlib.sha256(body).hexdigest(), name
        assert s3.get_object(Bucket=bucket, Key=key)["Body"].read() == body, name
        if name != "upload-multipart":
            assert results[name]["get"]["checksums"].get("ChecksumCRC32") == checksum("CRC32", body), name
    for name in ("put-file-stream", "put-generic-stream"):
        [put] = [r["headers"] for r in results[name]["requests"] if r["command"] == "PutObjectCommand"]
        assert "aws-chunked" in put.get("content-encoding", "") and put.get("x-amz-trailer"), (name, put)


# ---- TLS itself


def test_clients_verify_the_certificate(tls_depot, ca, tmp_path):
    untrusting = boto3.session.Session().client(
        "s3", endpoint_url=tls_depot.endpoint, region_name=tls_depot.region,
        aws_access_key_id=tls_depot.user("alice").access_key,
        aws_secret_access_key=tls_depot.user("alice").secret,
        config=botocore.config.Config(retries={"total_max_attempts": 1}))
    with pytest.raises(botocore.exceptions.SSLError):
        untrusting.list_buckets()
    other_ca = CertAuthority(tmp_path / "other-ca", name="Someone else")
    with pytest.raises(requests.exceptions.SSLError):
        requests.get(tls_depot.endpoint + "/healthz", verify=str(other_ca.cert), timeout=10)
    proc = tls_depot.aws("s3api", "list-buckets", check=False)
    assert proc.returncode == 0, proc.stderr
    assert requests.get(tls_depot.endpoint + "/healthz", verify=str(ca.cert), timeout=10).status_code == 200


def test_protocol_versions_ciphers_and_alpn(tls_depot, ca):
    conn = connect(tls_depot, client_context(ca))
    assert healthz(conn) == 200
    assert conn.sock.version() == "TLSv1.3"
    conn.close()

    ctx = client_context(ca, maximum_version=ssl.TLSVersion.TLSv1_2)
    ctx.set_alpn_protocols(["h2", "http/1.1"])
    conn = connect(tls_depot, ctx)
    assert healthz(conn) == 200
    assert conn.sock.version() == "TLSv1.2"
    name, _, _ = conn.sock.cipher()
    assert name.startswith("ECDHE-") and ("GCM" in name or "CHACHA20" in name), name
    assert conn.sock.selected_alpn_protocol() == "http/1.1"
    conn.close()

    # A client that offers only TLS 1.1 (allowed to by SECLEVEL=0) is refused by the server.
    old = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    old.load_verify_locations(str(ca.cert))
    old.set_ciphers("DEFAULT:@SECLEVEL=0")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # TLS 1.1 is deprecated: that is the point
        old.minimum_version = ssl.TLSVersion.TLSv1_1
        old.maximum_version = ssl.TLSVersion.TLSv1_1
    with socket.create_connection((tls_depot.host, tls_depot.port), timeout=10) as raw:
        with pytest.raises(ssl.SSLError) as refused:
            old.wrap_socket(raw, server_hostname="localhost")
    assert "NO_PROTOCOLS_AVAILABLE" not in str(refused.value), "the client did not even offer TLS 1.1"
    assert healthz(connect(tls_depot)) == 200


def test_plain_http_to_the_tls_port_gets_a_readable_error(tls_depot):
    plain = requests.get(f"http://{tls_depot.host}:{tls_depot.port}/healthz", timeout=10)
    assert plain.status_code == 400
    assert "<Code>InvalidRequest</Code>" in plain.text and "https" in plain.text, plain.text
    assert plain.headers.get("Connection", "").lower() == "close"

    # Garbage that is neither TLS nor HTTP, and a client that connects and leaves: closed, no crash.
    with socket.create_connection((tls_depot.host, tls_depot.port), timeout=10) as raw:
        raw.sendall(b"\x00\x01\x02 not a handshake\r\n\r\n")
        raw.shutdown(socket.SHUT_WR)
        while raw.recv(65536):
            pass
    socket.create_connection((tls_depot.host, tls_depot.port), timeout=10).close()
    # A TLS client that gives up in the middle of its handshake.
    with socket.create_connection((tls_depot.host, tls_depot.port), timeout=10) as raw:
        raw.sendall(b"\x16\x03\x01\x00\xc8\x01\x00\x00\xc4\x03\x03")
    assert healthz(connect(tls_depot)) == 200
    assert tls_depot.proc.poll() is None


def test_sighup_reloads_the_certificate_for_new_connections(own_tls_depot, ca):
    server = own_tls_depot
    old = connect(server)
    assert healthz(old) == 200
    assert peer_serial(old) == FIRST_SERIAL
    old_socket = old.sock

    ca.issue(SECOND_SERIAL, server.tls_cert, server.tls_key)
    log_start = server.log_size()
    server.proc.send_signal(signal.SIGHUP)
    deadline = time.monotonic() + 10
    while True:
        fresh = connect(server)
        assert healthz(fresh) == 200
        if peer_serial(fresh) == SECOND_SERIAL:
            break
        fresh.close()
        assert time.monotonic() < deadline, f"no reload within 10 s:\n{server.log_since(log_start)}"
        time.sleep(0.1)
    fresh.close()
    assert "TLS certificate reloaded" in server.log_since(log_start)

    # The keep-alive connection opened before the reload carries on, on the same TLS session.
    assert healthz(old) == 200
    assert old.sock is old_socket and peer_serial(old) == FIRST_SERIAL
    old.close()

    # A reload that fails (a broken certificate file) keeps serving the certificate loaded last.
    good_cert = server.tls_cert.read_bytes()
    server.tls_cert.write_text("-----BEGIN CERTIFICATE-----\nnot base64 at all\n-----END CERTIFICATE-----\n")
    log_start = server.log_size()
    server.proc.send_signal(signal.SIGHUP)
    deadline = time.monotonic() + 10
    while "TLS reload failed" not in server.log_since(log_start):
        assert time.monotonic() < deadline, f"no reload failure logged:\n{server.log_since(log_start)}"
        time.sleep(0.1)
    after = connect(server)
    assert healthz(after) == 200 and peer_serial(after) == SECOND_SERIAL
    after.close()
    server.tls_cert.write_bytes(good_cert)
    assert server.proc.poll() is None


def test_sighup_without_tls_does_not_stop_the_server(depot, tmp_path):
    server = start_sibling(depot, tmp_path / "plain")
    try:
        server.proc.send_signal(signal.SIGHUP)
        deadline = time.monotonic() + 10
        while "nothing to reload" not in server.log_text():
            assert time.monotonic() < deadline, server.log_text()[-4000:]
            time.sleep(0.1)
        assert requests.get(server.endpoint + "/healthz", timeout=10).status_code == 200
        stop_and_check(server)
    finally:
        if server.proc.poll() is None:
            server.stop()


def run_depotd(depot: Depot, *args: str) -> subprocess.CompletedProcess:
    return run([str(depot.bin_dir / "depotd"), "--database-url", depot.db.url, "--listen", "127.0.0.1:0",
                "--server-key-file", str(depot.key_file), *args], check=False, env=depot.server_env(), timeout=60)


def test_bad_tls_files_stop_depotd_at_start_with_a_clear_message(depot, ca, tmp_path):
    cert, key = ca.issue(0x2001, tmp_path / "a.pem", tmp_path / "a.key")
    _, other_key = ca.issue(0x2002, tmp_path / "b.pem", tmp_path / "b.key")
    garbage = tmp_path / "garbage.pem"
    garbage.write_text("this is not PEM\n")
    cases = [
        (["--tls-cert", str(tmp_path / "missing.pem"), "--tls-key", str(key)], ["--tls-cert", "missing.pem"]),
        (["--tls-cert", str(cert), "--tls-key", str(tmp_path / "missing.key")], ["--tls-key", "missing.key"]),
        (["--tls-cert", str(garbage), "--tls-key", str(key)], ["--tls-cert", "garbage.pem", "certificate"]),
        (["--tls-cert", str(cert), "--tls-key", str(garbage)], ["--tls-key", "garbage.pem", "private key"]),
        (["--tls-cert", str(cert), "--tls-key", str(other_key)], ["does not match"]),
    ]
    for args, words in cases:
        proc = run_depotd(depot, *args)
        output = proc.stdout + proc.stderr
        assert proc.returncode == 1, (args, proc.returncode, output)
        assert "cannot start" in output and all(w in output for w in words), (args, output)
        assert not sanitizer_reports(output), output
    only_cert = run_depotd(depot, "--tls-cert", str(cert))
    assert only_cert.returncode == 2 and "--tls-key" in only_cert.stderr, only_cert.stderr


def test_sigterm_shuts_a_tls_server_down_gracefully(own_tls_depot, s3, bucket):
    server = own_tls_depot
    idle = connect(server)
    assert healthz(idle) == 200

    # An upload in flight when SIGTERM arrives completes; the idle connection is closed right away.
    body = data(2 * MiB, "in-flight")
    url = server.endpoint + f"/{bucket}/{quote_key('in-flight')}"
    headers = server.sign("PUT", url, body=body)
    busy = connect(server)
    busy.putrequest("PUT", url[len(server.endpoint):], skip_accept_encoding=True)
    for name, value in headers.items():
        if name.lower() != "host":
            busy.putheader(name, value)
    busy.putheader("Content-Length", str(len(body)))
    busy.endheaders()
    busy.send(body[:MiB])
    time.sleep(0.3)
    started = time.monotonic()
    server.proc.send_signal(signal.SIGTERM)
    time.sleep(0.3)
    busy.send(body[MiB:])
    response = busy.getresponse()
    assert response.status == 200, response.read()
    assert response.getheader("Connection", "").lower() == "close"
    response.read()
    busy.close()
    assert server.proc.wait(timeout=30) == 0
    assert time.monotonic() - started < 15, "shutdown waited for the idle connection"
    with pytest.raises((ConnectionError, http.client.HTTPException, ssl.SSLError, OSError)):
        healthz(idle)
    stop_and_check(server)
    # Stored completely: read back through the suite's depotd (same database and store).
    assert s3.get_object(Bucket=bucket, Key="in-flight")["Body"].read() == body


def test_uploaded_over_https_reads_back_over_http(tls_depot, depot, bucket):
    body = data(700 * KiB, "cross")
    tls_depot.client().put_object(Bucket=bucket, Key="cross", Body=body, ChecksumAlgorithm="CRC32")
    got = depot.client().get_object(Bucket=bucket, Key="cross", ChecksumMode="ENABLED")
    assert got["Body"].read() == body and got["ChecksumCRC32"] == checksum("CRC32", body)
    expect_error("NoSuchKey", 404, tls_depot.client().get_object, Bucket=bucket, Key="absent")


def test_console_session_cookie_is_secure_over_https(tls_depot):
    """The web console's session cookie carries Secure when depotd serves TLS, and a cookie-authenticated
    change from the server's own https origin passes the Origin check (only the CSRF header is missing)."""
    u = tls_depot.user("bob")
    made = requests.post(tls_depot.console_endpoint + "/api/v1/sessions", timeout=30, verify=tls_depot.verify,
                         json={"access_key_id": u.access_key, "secret_access_key": u.secret})
    assert made.status_code == 201, made.text
    attributes = [a.strip() for a in made.headers["Set-Cookie"].split(";")]
    assert "Secure" in attributes and "HttpOnly" in attributes and "SameSite=Strict" in attributes
    cookie = {"depot_session": made.cookies["depot_session"]}
    own = tls_depot.console_endpoint  # https://127.0.0.1:<console port>
    ended = requests.delete(own + "/api/v1/sessions/current", cookies=cookie, timeout=30,
                            verify=tls_depot.verify,
                            headers={"Origin": own, "X-Depot-CSRF": made.json()["csrf_token"]})
    assert ended.status_code == 204, ended.text
