"""Server-side encryption (issue 27): SSE-S3 (x-amz-server-side-encryption: AES256, bucket default
encryption) and SSE-C (customer keys), through boto3 and the aws cli, on the store the suite runs on
(DEPOT_E2E_STORAGE=localfs or rados).

The suite's depotd has no SSE master key and serves plain HTTP: it shows the refusals. A sibling depotd on
the same database and store, with a master key (--sse-master-key-file) and TLS (SSE-C is refused over plain
HTTP), serves the rest. Every test reads the raw store to check what is at rest."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import secrets
import shutil
from pathlib import Path

import botocore.exceptions
import pytest
import requests

from depot_harness import (CertAuthority, clean_env, expect_error, md5_etag, run, sanitizer_reports,
                            unique_bucket_name)
from rest import call, token_for

SEG = 64 << 10  # plaintext bytes per sealed segment (storage/sealed/sealed_format.hpp)
KEY = secrets.token_bytes(32)
OTHER_KEY = secrets.token_bytes(32)


def sse_c(key: bytes = KEY) -> dict:
    return {"SSECustomerAlgorithm": "AES256", "SSECustomerKey": key}


@pytest.fixture(scope="module")
def sse(depot, tmp_path_factory):
    """A depotd with an SSE master key, serving HTTPS, on the suite's database, store and users."""
    work = tmp_path_factory.mktemp("depot-sse")
    ca = CertAuthority(work / "ca")
    key_file = work / "sse.key"
    key_file.write_text(secrets.token_hex(32) + "\n")
    key_file.chmod(0o600)
    server = depot.sibling(work / "depot")
    cert, tls_key = ca.issue(1, work / "server.pem", work / "server.key")
    server.use_tls(cert, tls_key, ca.cert)
    server.extra_args = ["--sse-master-key-file", str(key_file)]
    server.start()
    try:
        yield server
        status = server.stop()
        log = server.log_text()
        assert not sanitizer_reports(log), log[-20000:]
        assert status == 0, log[-8000:]
    finally:
        if server.proc is not None and server.proc.poll() is None:
            server.stop()


@pytest.fixture
def s3e(sse):
    return sse.client("alice")


def blobs_of(depot, bucket: str, key: str) -> list[tuple[str, str, str, str]]:
    """(store_id, sealed, shared, size) of the blobs of the key's current version, in order."""
    return [tuple(r) for r in depot.db.query(
        "SELECT b.store_id, coalesce(b.sealed, ''), b.shared::text, b.size::text FROM object_versions o "
        "JOIN buckets k ON k.id = o.bucket_id JOIN object_segments s ON s.version_row = o.id "
        f"JOIN blobs b ON b.id = s.blob_id WHERE k.name = '{bucket}' AND o.key = '{key}' "
        "AND o.superseded_seq IS NULL ORDER BY s.ordinal")]


def rados(*args: str, **kwargs):
    return run(["rados", "-c", os.environ["DEPOT_TEST_CEPH_CONF"], "--keyring", os.environ["DEPOT_TEST_CEPH_KEYRING"],
                "-p", os.environ.get("DEPOT_TEST_CEPH_POOL", "depot"), *args], env=clean_env({}), timeout=120,
               **kwargs)


def raw_blob(depot, store_id: str, tmp_path: Path) -> tuple[bytes, callable]:
    """The stored bytes of a blob, and a function that replaces them (for tampering)."""
    if depot.storage == "rados":
        names = sorted(n for n in depot.rados_objects() if n == store_id or n.startswith(store_id + "."))
        data, where = b"", None
        out = tmp_path / "raw"
        for name in names:  # the inline head, or the first stripe
            rados("-N", depot.rados_namespace, "get", name, str(out))
            if out.stat().st_size:
                data, where = out.read_bytes(), name
                break

        def replace(new: bytes) -> None:
            out.write_bytes(new)
            rados("-N", depot.rados_namespace, "put", where, str(out))
        return data, replace
    [rel] = [p for p in depot.blob_files() if p.endswith(store_id)]
    path = depot.blob_dir / rel

    def replace(new: bytes) -> None:
        path.chmod(0o600)
        path.write_bytes(new)
    return path.read_bytes(), replace


def body(s3, bucket, key, **kwargs) -> bytes:
    return s3.get_object(Bucket=bucket, Key=key, **kwargs)["Body"].read()


# ---- SSE-S3


def test_sse_s3_round_trip_ranges_and_nothing_plain_at_rest(sse, s3e, bucket, tmp_path):
    data = os.urandom(3 * SEG + 777)
    put = s3e.put_object(Bucket=bucket, Key="k", Body=data, ServerSideEncryption="AES256")
    assert put["ServerSideEncryption"] == "AES256"
    assert put["ETag"] == md5_etag(data)  # S3's SSE-S3 ETag: the MD5 of the plaintext
    head = s3e.head_object(Bucket=bucket, Key="k")
    assert head["ServerSideEncryption"] == "AES256" and head["ContentLength"] == len(data)
    got = s3e.get_object(Bucket=bucket, Key="k")
    assert got["ServerSideEncryption"] == "AES256" and got["Body"].read() == data
    for first, last in [(0, 0), (SEG - 1, SEG), (SEG, 2 * SEG - 1), (SEG - 5, 2 * SEG + 5),
                        (3 * SEG, 3 * SEG + 776), (len(data) - 1, len(data) - 1)]:
        assert body(s3e, bucket, "k", Range=f"bytes={first}-{last}") == data[first:last + 1], (first, last)
    assert body(s3e, bucket, "k", Range="bytes=-100") == data[-100:]
    [(store_id, sealed, shared, size)] = blobs_of(sse, bucket, "k")
    assert (sealed, shared, int(size)) == ("master", "false", len(data))
    raw, _ = raw_blob(sse, store_id, tmp_path)
    assert len(raw) > len(data) and data[:32] not in raw and data[SEG:SEG + 32] not in raw


def test_aws_cli_sse_and_bucket_default_encryption(sse, s3e, bucket, tmp_path):
    src = tmp_path / "f.bin"
    src.write_bytes(os.urandom(100_000))
    sse.aws("s3", "cp", str(src), f"s3://{bucket}/cli", "--sse", "AES256")
    assert s3e.head_object(Bucket=bucket, Key="cli")["ServerSideEncryption"] == "AES256"
    sse.aws("s3", "cp", f"s3://{bucket}/cli", str(tmp_path / "back"))
    assert (tmp_path / "back").read_bytes() == src.read_bytes()

    out = sse.aws("s3api", "get-bucket-encryption", "--bucket", bucket, check=False)
    assert out.returncode != 0 and "ServerSideEncryptionConfigurationNotFoundError" in out.stderr
    config = '{"Rules":[{"ApplyServerSideEncryptionByDefault":{"SSEAlgorithm":"AES256"}}]}'
    sse.aws("s3api", "put-bucket-encryption", "--bucket", bucket, "--server-side-encryption-configuration", config)
    got = sse.aws_json("s3api", "get-bucket-encryption", "--bucket", bucket)
    rule = got["ServerSideEncryptionConfiguration"]["Rules"][0]
    assert rule["ApplyServerSideEncryptionByDefault"]["SSEAlgorithm"] == "AES256"
    # A write without the header is encrypted by the bucket's default.
    put = s3e.put_object(Bucket=bucket, Key="default", Body=b"by default")
    assert put["ServerSideEncryption"] == "AES256"
    assert blobs_of(sse, bucket, "default")[0][1] == "master"
    assert body(s3e, bucket, "default") == b"by default"

    expect_error("NotImplemented", 501, s3e.put_bucket_encryption, Bucket=bucket,
                 ServerSideEncryptionConfiguration={"Rules": [{"ApplyServerSideEncryptionByDefault": {
                     "SSEAlgorithm": "aws:kms"}}]})
    expect_error("NotImplemented", 501, s3e.put_object, Bucket=bucket, Key="kms", Body=b"x",
                 ServerSideEncryption="aws:kms")
    sse.aws("s3api", "delete-bucket-encryption", "--bucket", bucket)
    expect_error("ServerSideEncryptionConfigurationNotFoundError", 404, s3e.get_bucket_encryption, Bucket=bucket)
    assert "ServerSideEncryption" not in s3e.put_object(Bucket=bucket, Key="plain", Body=b"p")
    assert blobs_of(sse, bucket, "plain")[0][1] == ""
    # What was encrypted stays encrypted and readable.
    assert body(s3e, bucket, "default") == b"by default"


def test_multipart_sse_s3(sse, s3e, bucket):
    parts = [os.urandom(5 << 20), os.urandom(SEG + 3)]
    up = s3e.create_multipart_upload(Bucket=bucket, Key="mp", ServerSideEncryption="AES256")
    assert up["ServerSideEncryption"] == "AES256"
    etags = []
    for n, p in enumerate(parts, 1):
        r = s3e.upload_part(Bucket=bucket, Key="mp", UploadId=up["UploadId"], PartNumber=n, Body=p)
        assert r["ServerSideEncryption"] == "AES256" and r["ETag"] == md5_etag(p)
        etags.append(r["ETag"])
    done = s3e.complete_multipart_upload(Bucket=bucket, Key="mp", UploadId=up["UploadId"], MultipartUpload={
        "Parts": [{"PartNumber": n, "ETag": e} for n, e in enumerate(etags, 1)]})
    assert done["ServerSideEncryption"] == "AES256"
    whole = b"".join(parts)
    assert body(s3e, bucket, "mp") == whole
    edge = len(parts[0])
    assert body(s3e, bucket, "mp", Range=f"bytes={edge - 10}-{edge + 10}") == whole[edge - 10:edge + 11]
    assert body(s3e, bucket, "mp", PartNumber=2) == parts[1]
    assert {b[1] for b in blobs_of(sse, bucket, "mp")} == {"master"}


def test_copy_between_encrypted_and_plain(sse, s3e, bucket):
    data = os.urandom(SEG * 2 + 1)
    s3e.put_object(Bucket=bucket, Key="plain", Body=data)
    # plain -> SSE-S3: re-encrypted, the copy's bytes are sealed.
    r = s3e.copy_object(Bucket=bucket, Key="enc", CopySource={"Bucket": bucket, "Key": "plain"},
                        ServerSideEncryption="AES256")
    assert r["ServerSideEncryption"] == "AES256" and r["CopyObjectResult"]["ETag"] == md5_etag(data)
    assert blobs_of(sse, bucket, "enc")[0][1] == "master" and body(s3e, bucket, "enc") == data
    # SSE-S3 -> SSE-S3: references the same sealed blob.
    s3e.copy_object(Bucket=bucket, Key="enc2", CopySource={"Bucket": bucket, "Key": "enc"},
                    ServerSideEncryption="AES256")
    assert blobs_of(sse, bucket, "enc2") == blobs_of(sse, bucket, "enc")
    # SSE-S3 -> plain (no header, no bucket default): decrypted into a plain blob.
    r = s3e.copy_object(Bucket=bucket, Key="back", CopySource={"Bucket": bucket, "Key": "enc"})
    assert "ServerSideEncryption" not in r
    assert blobs_of(sse, bucket, "back")[0][1] == "" and body(s3e, bucket, "back") == data
    # Encrypting a key in place (copy onto itself with a new encryption) is allowed, as in S3.
    s3e.copy_object(Bucket=bucket, Key="plain", CopySource={"Bucket": bucket, "Key": "plain"},
                    ServerSideEncryption="AES256")
    assert s3e.head_object(Bucket=bucket, Key="plain")["ServerSideEncryption"] == "AES256"


def test_dedup_never_crosses_encryption(sse, s3e, bucket):
    data = os.urandom(20_000)
    s3e.put_object(Bucket=bucket, Key="enc1", Body=data, ServerSideEncryption="AES256")
    s3e.put_object(Bucket=bucket, Key="plain1", Body=data)
    s3e.put_object(Bucket=bucket, Key="enc2", Body=data, ServerSideEncryption="AES256")
    s3e.put_object(Bucket=bucket, Key="plain2", Body=data)
    [e1], [e2] = blobs_of(sse, bucket, "enc1"), blobs_of(sse, bucket, "enc2")
    [p1], [p2] = blobs_of(sse, bucket, "plain1"), blobs_of(sse, bucket, "plain2")
    assert e1[0] != e2[0] and e1[1:3] == e2[1:3] == ("master", "false")  # each encrypted write its own blob
    assert p1 == p2 and p1[1:3] == ("", "true")  # plaintext deduplicates among plaintext only
    assert p1[0] not in (e1[0], e2[0])


def test_presigned_url_and_snapshot_read_encrypted_objects(depot, sse, s3e, bucket):
    data = os.urandom(SEG + 10)
    s3e.put_object(Bucket=bucket, Key="p/obj", Body=data, ServerSideEncryption="AES256")
    url = s3e.generate_presigned_url("get_object", Params={"Bucket": bucket, "Key": "p/obj"}, ExpiresIn=300)
    r = requests.get(url, verify=sse.verify, timeout=60)
    assert r.status_code == 200 and r.content == data
    assert r.headers["x-amz-server-side-encryption"] == "AES256"
    token = token_for(depot, "alice")["token"]
    assert call(depot, "POST", f"/api/v1/buckets/{bucket}/snapshots", token=token,
                body={"name": "s1"}).status_code == 201
    assert body(s3e, bucket, ".snapshots/s1/p/obj") == data


def test_another_owners_key_is_still_denied(sse, s3e, bucket, bucket_factory):
    s3e.put_object(Bucket=bucket, Key="secret", Body=b"s", ServerSideEncryption="AES256")
    bob = sse.client("bob")
    own = bucket_factory("bob")
    expect_error("AccessDenied", 403, bob.get_object, Bucket=bucket, Key="secret")
    expect_error("AccessDenied", 403, bob.copy_object, Bucket=own, Key="stolen",
                 CopySource={"Bucket": bucket, "Key": "secret"})
    expect_error("AccessDenied", 403, bob.copy_object, Bucket=own, Key="stolen",
                 CopySource={"Bucket": bucket, "Key": "secret"}, ServerSideEncryption="AES256")


def test_tampered_ciphertext_is_an_error_not_garbage(sse, s3e, bucket, tmp_path):
    data = os.urandom(2 * SEG + 5)
    s3e.put_object(Bucket=bucket, Key="t", Body=data, ServerSideEncryption="AES256")
    [(store_id, *_)] = blobs_of(sse, bucket, "t")
    raw, replace = raw_blob(sse, store_id, tmp_path)
    flipped = bytearray(raw)
    flipped[len(raw) - 10] ^= 0x01  # in the last segment (5 bytes and its tag)
    replace(bytes(flipped))
    assert body(s3e, bucket, "t", Range="bytes=0-99") == data[:100]  # untouched segments still read
    expect_error("InternalError", 500, s3e.get_object, Bucket=bucket, Key="t", Range=f"bytes={2 * SEG}-{2 * SEG + 4}")
    # A whole read fails too (here before the headers: depotd reads the first 256 KiB before answering).
    try:
        s3e.get_object(Bucket=bucket, Key="t")["Body"].read()
    except Exception as e:  # noqa: BLE001 - a 500, or a body cut short
        failed = e
    else:
        failed = None
    assert failed is not None, "a tampered object was served"
    s3e.delete_object(Bucket=bucket, Key="t")


def test_a_reencrypting_copy_keeps_its_acl_lock_and_write_conditions(sse, s3e):
    """Issue 34 items 7 and 13: a CopyObject that has to re-encrypt (here plain -> SSE-S3) is the same copy as
    one that references the source: If-None-Match / If-Match on the target were ignored (200, overwritten),
    and its ACL and lock headers were dropped. Now: 412 and nothing changes; the copy has its ACL and lock,
    in one audit row."""
    from datetime import datetime, timedelta, timezone

    bucket = unique_bucket_name("sse-copy")
    s3e.create_bucket(Bucket=bucket, ObjectLockEnabledForBucket=True, ObjectOwnership="ObjectWriter")
    s3e.put_object(Bucket=bucket, Key="src", Body=b"source")
    target = s3e.put_object(Bucket=bucket, Key="dst", Body=b"target")["ETag"]
    source = {"x-amz-copy-source": f"/{bucket}/src", "x-amz-server-side-encryption": "AES256"}
    before = sse.snapshot(bucket)
    for condition in ({"If-None-Match": "*"}, {"If-Match": md5_etag(b"stale")}):
        r = sse.request("PUT", f"/{bucket}/dst", headers={**source, **condition})
        assert r.status_code == 412 and "<Code>PreconditionFailed</Code>" in r.text, r.text
    sse.assert_unchanged(before)
    assert body(s3e, bucket, "dst") == b"target"
    r = sse.request("PUT", f"/{bucket}/dst", headers={**source, "If-Match": target})
    assert r.status_code == 200, r.text
    assert body(s3e, bucket, "dst") == b"source" and blobs_of(sse, bucket, "dst")[0][1] == "master"

    until = (datetime.now(timezone.utc) + timedelta(days=1)).replace(microsecond=0)
    s3e.copy_object(Bucket=bucket, Key="copy", CopySource={"Bucket": bucket, "Key": "src"},
                    ServerSideEncryption="AES256", GrantRead='id="bob"', ObjectLockMode="GOVERNANCE",
                    ObjectLockRetainUntilDate=until, ObjectLockLegalHoldStatus="ON")
    assert blobs_of(sse, bucket, "copy")[0][1] == "master"
    grants = {(g["Grantee"].get("ID"), g["Permission"]) for g in s3e.get_object_acl(Bucket=bucket, Key="copy")["Grants"]}
    assert grants == {("bob", "READ")}  # grant headers are the whole ACL, as on AWS
    assert s3e.get_object_retention(Bucket=bucket, Key="copy")["Retention"] == {"Mode": "GOVERNANCE",
                                                                             "RetainUntilDate": until}
    assert s3e.get_object_legal_hold(Bucket=bucket, Key="copy")["LegalHold"] == {"Status": "ON"}
    rows = sse.db.query("SELECT action, details::text FROM audit_log WHERE action LIKE 'object.%' "
                        f"AND resource = '{bucket}/copy' ORDER BY id")
    assert [r[0] for r in rows] == ["object.copy"] and '"acl"' in rows[0][1], rows


# ---- refusals without a master key, and SSE-C over plain HTTP


def test_without_master_key_sse_s3_is_not_implemented_and_stores_nothing(depot, s3, bucket):
    before = depot.snapshot(bucket)
    expect_error("NotImplemented", 501, s3.put_object, Bucket=bucket, Key="k", Body=b"x",
                 ServerSideEncryption="AES256")
    expect_error("NotImplemented", 501, s3.create_multipart_upload, Bucket=bucket, Key="k",
                 ServerSideEncryption="AES256")
    expect_error("NotImplemented", 501, s3.put_bucket_encryption, Bucket=bucket,
                 ServerSideEncryptionConfiguration={"Rules": [{"ApplyServerSideEncryptionByDefault": {
                     "SSEAlgorithm": "AES256"}}]})
    # SSE-C sends keys in headers: refused over plain HTTP, as on AWS.
    expect_error("InvalidRequest", 400, s3.put_object, Bucket=bucket, Key="k", Body=b"x", **sse_c())
    depot.assert_unchanged(before, bucket)


# ---- SSE-C


def test_sse_c_round_trip_and_key_checks(sse, s3e, bucket, tmp_path):
    data = os.urandom(SEG + 4096)
    key_md5 = base64.b64encode(hashlib.md5(KEY).digest()).decode()
    put = s3e.put_object(Bucket=bucket, Key="c", Body=data, **sse_c())
    assert put["SSECustomerAlgorithm"] == "AES256" and put["SSECustomerKeyMD5"] == key_md5
    assert put["ETag"] != md5_etag(data)  # as on AWS, an SSE-C ETag is not the plaintext's MD5
    got = s3e.get_object(Bucket=bucket, Key="c", **sse_c())
    assert got["Body"].read() == data and got["SSECustomerKeyMD5"] == key_md5
    assert body(s3e, bucket, "c", Range=f"bytes={SEG - 2}-{SEG + 2}", **sse_c()) == data[SEG - 2:SEG + 3]
    assert s3e.head_object(Bucket=bucket, Key="c", **sse_c())["ContentLength"] == len(data)
    # Without the key: 400; another key: 403 (GET and HEAD), as on AWS.
    expect_error("InvalidRequest", 400, s3e.get_object, Bucket=bucket, Key="c")
    expect_error("AccessDenied", 403, s3e.get_object, Bucket=bucket, Key="c", **sse_c(OTHER_KEY))
    expect_error("400", 400, s3e.head_object, Bucket=bucket, Key="c")
    expect_error("403", 403, s3e.head_object, Bucket=bucket, Key="c", **sse_c(OTHER_KEY))
    # SSE-C headers on an object that is not SSE-C.
    s3e.put_object(Bucket=bucket, Key="plain", Body=b"p")
    expect_error("InvalidRequest", 400, s3e.get_object, Bucket=bucket, Key="plain", **sse_c())
    # The key is never stored: only a salted HMAC of it.
    [(store_id, sealed, shared, _)] = blobs_of(sse, bucket, "c")
    assert (sealed, shared) == ("customer", "false")
    check = sse.db.scalar(f"SELECT encode(o.sse_key_check, 'hex') FROM object_versions o JOIN buckets k ON "
                          f"k.id = o.bucket_id WHERE k.name = '{bucket}' AND o.key = 'c'")
    assert KEY.hex() not in check and len(check) == 96
    raw, _ = raw_blob(sse, store_id, tmp_path)
    assert data[:32] not in raw and KEY not in raw


def test_sse_c_copy_and_multipart(sse, s3e, bucket):
    data = os.urandom(5 << 20)
    s3e.put_object(Bucket=bucket, Key="c", Body=data, **sse_c())
    # The source's key in x-amz-copy-source-server-side-encryption-customer-algorithm, -customer-key and
    # x-amz-copy-source-server-side-encryption-customer-key-md5 (botocore computes it), the copy under SSE-S3.
    expect_error("InvalidRequest", 400, s3e.copy_object, Bucket=bucket, Key="copy",
                 CopySource={"Bucket": bucket, "Key": "c"}, ServerSideEncryption="AES256")
    s3e.copy_object(Bucket=bucket, Key="copy", CopySource={"Bucket": bucket, "Key": "c"},
                    CopySourceSSECustomerAlgorithm="AES256", CopySourceSSECustomerKey=KEY,
                    ServerSideEncryption="AES256")
    assert body(s3e, bucket, "copy") == data
    # ... and under another customer key.
    s3e.copy_object(Bucket=bucket, Key="copy2", CopySource={"Bucket": bucket, "Key": "c"},
                    CopySourceSSECustomerAlgorithm="AES256", CopySourceSSECustomerKey=KEY, **sse_c(OTHER_KEY))
    assert body(s3e, bucket, "copy2", **sse_c(OTHER_KEY)) == data
    expect_error("AccessDenied", 403, s3e.get_object, Bucket=bucket, Key="copy2", **sse_c())

    up = s3e.create_multipart_upload(Bucket=bucket, Key="mp", **sse_c())["UploadId"]
    expect_error("InvalidRequest", 400, s3e.upload_part, Bucket=bucket, Key="mp", UploadId=up, PartNumber=1,
                 Body=b"no key")
    expect_error("AccessDenied", 403, s3e.upload_part, Bucket=bucket, Key="mp", UploadId=up, PartNumber=1,
                 Body=b"other key", **sse_c(OTHER_KEY))
    e1 = s3e.upload_part(Bucket=bucket, Key="mp", UploadId=up, PartNumber=1, Body=data, **sse_c())["ETag"]
    e2 = s3e.upload_part(Bucket=bucket, Key="mp", UploadId=up, PartNumber=2, Body=b"tail", **sse_c())["ETag"]
    s3e.complete_multipart_upload(Bucket=bucket, Key="mp", UploadId=up, MultipartUpload={
        "Parts": [{"PartNumber": 1, "ETag": e1}, {"PartNumber": 2, "ETag": e2}]})
    assert body(s3e, bucket, "mp", **sse_c()) == data + b"tail"
    expect_error("InvalidRequest", 400, s3e.get_object, Bucket=bucket, Key="mp")


def test_aws_cli_sse_c(sse, bucket, tmp_path):
    key_file = tmp_path / "key.bin"
    key_file.write_bytes(KEY)
    src = tmp_path / "f.bin"
    src.write_bytes(os.urandom(70_000))
    sse.aws("s3", "cp", str(src), f"s3://{bucket}/cli", "--sse-c", "AES256", "--sse-c-key", f"fileb://{key_file}")
    sse.aws("s3", "cp", f"s3://{bucket}/cli", str(tmp_path / "back"), "--sse-c", "AES256",
            "--sse-c-key", f"fileb://{key_file}")
    assert (tmp_path / "back").read_bytes() == src.read_bytes()
    out = sse.aws("s3", "cp", f"s3://{bucket}/cli", str(tmp_path / "nokey"), check=False)
    assert out.returncode != 0


def test_upload_part_copy_across_encryptions(sse, s3e, bucket):
    """UploadPartCopy from plain, SSE-S3 and SSE-C sources into plain, SSE-S3 and SSE-C uploads: each part is
    stored as its upload encrypts, the bytes are the source's."""
    data = os.urandom(5 << 20)
    s3e.put_object(Bucket=bucket, Key="plain", Body=data)
    s3e.put_object(Bucket=bucket, Key="s3", Body=data, ServerSideEncryption="AES256")
    s3e.put_object(Bucket=bucket, Key="c", Body=data, **sse_c())
    source_key = {"CopySourceSSECustomerAlgorithm": "AES256", "CopySourceSSECustomerKey": KEY}
    sources = [("plain", {}), ("s3", {}), ("c", source_key)]
    uploads = {"into-plain": ({}, {}, ""), "into-s3": ({"ServerSideEncryption": "AES256"}, {}, "master"),
               "into-c": (sse_c(OTHER_KEY), sse_c(OTHER_KEY), "customer")}
    for target, (create, part_key, sealed) in uploads.items():
        up = s3e.create_multipart_upload(Bucket=bucket, Key=target, **create)["UploadId"]
        parts = []
        for n, (src, src_key) in enumerate(sources, 1):
            r = s3e.upload_part_copy(Bucket=bucket, Key=target, UploadId=up, PartNumber=n,
                                     CopySource={"Bucket": bucket, "Key": src}, **src_key, **part_key)
            if sealed == "master":
                assert r["ServerSideEncryption"] == "AES256"
            if sealed == "customer":
                assert r["SSECustomerKeyMD5"] == base64.b64encode(hashlib.md5(OTHER_KEY).digest()).decode()
            parts.append({"PartNumber": n, "ETag": r["CopyPartResult"]["ETag"]})
        # A range of an SSE-C source, as the last part.
        r = s3e.upload_part_copy(Bucket=bucket, Key=target, UploadId=up, PartNumber=4,
                                 CopySource={"Bucket": bucket, "Key": "c"}, CopySourceRange="bytes=10-19",
                                 **source_key, **part_key)
        parts.append({"PartNumber": 4, "ETag": r["CopyPartResult"]["ETag"]})
        s3e.complete_multipart_upload(Bucket=bucket, Key=target, UploadId=up, MultipartUpload={"Parts": parts})
        assert body(s3e, bucket, target, **part_key) == data * 3 + data[10:20], target
        assert {b[1] for b in blobs_of(sse, bucket, target)} == {sealed}, target


def test_upload_part_copy_encryption_refusals_change_nothing(sse, s3e, bucket):
    s3e.put_object(Bucket=bucket, Key="c", Body=b"customer data", **sse_c())
    s3e.put_object(Bucket=bucket, Key="plain", Body=b"plain data")
    into_c = s3e.create_multipart_upload(Bucket=bucket, Key="into-c", **sse_c())["UploadId"]
    into_plain = s3e.create_multipart_upload(Bucket=bucket, Key="into-plain")["UploadId"]
    before = sse.snapshot(bucket)
    copy = {"Bucket": bucket, "PartNumber": 1}
    # The SSE-C source without its key (400), with another key (403).
    expect_error("InvalidRequest", 400, s3e.upload_part_copy, Key="into-plain", UploadId=into_plain,
                 CopySource={"Bucket": bucket, "Key": "c"}, **copy)
    expect_error("AccessDenied", 403, s3e.upload_part_copy, Key="into-plain", UploadId=into_plain,
                 CopySource={"Bucket": bucket, "Key": "c"}, CopySourceSSECustomerAlgorithm="AES256",
                 CopySourceSSECustomerKey=OTHER_KEY, **copy)
    # A source key for a source that is not SSE-C.
    expect_error("InvalidRequest", 400, s3e.upload_part_copy, Key="into-plain", UploadId=into_plain,
                 CopySource={"Bucket": bucket, "Key": "plain"}, CopySourceSSECustomerAlgorithm="AES256",
                 CopySourceSSECustomerKey=KEY, **copy)
    # Into an SSE-C upload: the upload's key must come (400) and be the upload's (403).
    expect_error("InvalidRequest", 400, s3e.upload_part_copy, Key="into-c", UploadId=into_c,
                 CopySource={"Bucket": bucket, "Key": "plain"}, **copy)
    expect_error("AccessDenied", 403, s3e.upload_part_copy, Key="into-c", UploadId=into_c,
                 CopySource={"Bucket": bucket, "Key": "plain"}, **sse_c(OTHER_KEY), **copy)
    sse.assert_unchanged(before)
    assert s3e.list_parts(Bucket=bucket, Key="into-c", UploadId=into_c).get("Parts", []) == []


def test_get_object_attributes_of_an_sse_c_object_needs_its_key(sse, s3e, bucket):
    s3e.put_object(Bucket=bucket, Key="c", Body=b"attributes", **sse_c())
    attrs = ["ObjectSize", "ETag"]

    def encoded(key: bytes) -> dict:
        # botocore encodes the key (and adds its MD5) for GetObject, not for GetObjectAttributes: sent as S3
        # wants them on the wire, which every botocore passes through once the MD5 is given.
        return {"SSECustomerAlgorithm": "AES256", "SSECustomerKey": base64.b64encode(key).decode(),
                "SSECustomerKeyMD5": base64.b64encode(hashlib.md5(key).digest()).decode()}
    expect_error("InvalidRequest", 400, s3e.get_object_attributes, Bucket=bucket, Key="c", ObjectAttributes=attrs)
    expect_error("AccessDenied", 403, s3e.get_object_attributes, Bucket=bucket, Key="c", ObjectAttributes=attrs,
                 **encoded(OTHER_KEY))
    got = s3e.get_object_attributes(Bucket=bucket, Key="c", ObjectAttributes=attrs, **encoded(KEY))
    assert got["ObjectSize"] == len(b"attributes")
    # The aws cli (s3api): --sse-customer-algorithm, --sse-customer-key, --sse-customer-key-md5.
    key = encoded(KEY)
    out = sse.aws_json("s3api", "get-object-attributes", "--bucket", bucket, "--key", "c",
                       "--object-attributes", "ObjectSize", "--sse-customer-algorithm", "AES256",
                       "--sse-customer-key", key["SSECustomerKey"], "--sse-customer-key-md5", key["SSECustomerKeyMD5"])
    assert out["ObjectSize"] == len(b"attributes")
    assert sse.aws("s3api", "get-object-attributes", "--bucket", bucket, "--key", "c", "--object-attributes",
                   "ObjectSize", check=False).returncode != 0
    # A plain object's attributes with SSE-C headers: 400, as GetObject.
    s3e.put_object(Bucket=bucket, Key="plain", Body=b"p")
    expect_error("InvalidRequest", 400, s3e.get_object_attributes, Bucket=bucket, Key="plain",
                 ObjectAttributes=attrs, **encoded(KEY))


def test_post_object_sse_c_and_sse_s3_fields(sse, s3e, bucket):
    key_b64 = base64.b64encode(KEY).decode()
    key_md5 = base64.b64encode(hashlib.md5(KEY).digest()).decode()
    fields = {"x-amz-server-side-encryption-customer-algorithm": "AES256",
              "x-amz-server-side-encryption-customer-key": key_b64,
              "x-amz-server-side-encryption-customer-key-MD5": key_md5}
    info = s3e.generate_presigned_post(Bucket=bucket, Key="form-c", Fields=fields,
                                       Conditions=[{k: v} for k, v in fields.items()], ExpiresIn=300)
    r = requests.post(info["url"], data=info["fields"], files={"file": ("f.bin", b"form secret")},
                      verify=sse.verify, timeout=60)
    assert r.status_code == 204, r.text
    assert r.headers["x-amz-server-side-encryption-customer-key-MD5"] == key_md5
    assert body(s3e, bucket, "form-c", **sse_c()) == b"form secret"
    expect_error("InvalidRequest", 400, s3e.get_object, Bucket=bucket, Key="form-c")
    assert {b[1] for b in blobs_of(sse, bucket, "form-c")} == {"customer"}
    # SSE-S3.
    info = s3e.generate_presigned_post(Bucket=bucket, Key="form-s3",
                                       Fields={"x-amz-server-side-encryption": "AES256"},
                                       Conditions=[{"x-amz-server-side-encryption": "AES256"}], ExpiresIn=300)
    r = requests.post(info["url"], data=info["fields"], files={"file": ("f.bin", b"form s3")}, verify=sse.verify,
                      timeout=60)
    assert r.status_code == 204 and r.headers["x-amz-server-side-encryption"] == "AES256", r.text
    assert {b[1] for b in blobs_of(sse, bucket, "form-s3")} == {"master"}
    # Refused, changing nothing: a wrong key MD5, a key the policy does not cover.
    before = sse.snapshot(bucket)
    wrong = {**fields, "x-amz-server-side-encryption-customer-key-MD5": base64.b64encode(b"0" * 16).decode()}
    info = s3e.generate_presigned_post(Bucket=bucket, Key="bad", Fields=wrong,
                                       Conditions=[{k: v} for k, v in wrong.items()], ExpiresIn=300)
    r = requests.post(info["url"], data=info["fields"], files={"file": ("f.bin", b"x")}, verify=sse.verify,
                      timeout=60)
    assert r.status_code == 400 and "<Code>InvalidArgument</Code>" in r.text, r.text
    info = s3e.generate_presigned_post(Bucket=bucket, Key="uncovered", ExpiresIn=300)
    r = requests.post(info["url"], data={**info["fields"], **fields}, files={"file": ("f.bin", b"x")},
                      verify=sse.verify, timeout=60)
    assert r.status_code == 403 and "Extra input fields" in r.text, r.text
    sse.assert_unchanged(before)


ASCII_KEY, OTHER_ASCII_KEY = b"js-sdk-sse-c-key-of-32-bytes-abc", b"another-js-sse-c-key-32-bytes-xy"


def test_js_sdk_sse_c(sse, s3e, bucket):
    """The AWS SDK for JavaScript v3 (js/sse_c.mjs) with SSE-C: what it writes boto3 reads with the same key."""
    node = shutil.which("node", path="/usr/local/bin:/usr/bin:/bin")
    js = Path(__file__).resolve().parent / "js"
    assert node and (js / "node_modules" / "@aws-sdk" / "client-s3").is_dir(), "run scripts/js-deps"
    user = sse.user("alice")
    env = clean_env({
        "DEPOT_ENDPOINT": sse.endpoint, "DEPOT_REGION": sse.region, "DEPOT_BUCKET": bucket,
        "DEPOT_SSE_KEY": ASCII_KEY.decode(), "DEPOT_OTHER_SSE_KEY": OTHER_ASCII_KEY.decode(),
        "AWS_ACCESS_KEY_ID": user.access_key, "AWS_SECRET_ACCESS_KEY": user.secret,
        "AWS_CONFIG_FILE": "/dev/null", "AWS_SHARED_CREDENTIALS_FILE": "/dev/null",
        "AWS_EC2_METADATA_DISABLED": "true", "NODE_NO_WARNINGS": "1", "NODE_EXTRA_CA_CERTS": str(sse.ca_bundle)})
    r = json.loads(run([node, str(js / "sse_c.mjs")], env=env, cwd=str(js), timeout=300).stdout)
    md5_of = lambda k: base64.b64encode(hashlib.md5(k).digest()).decode()  # noqa: E731
    assert r["put"]["ok"] == {"algorithm": "AES256", "keyMD5": md5_of(ASCII_KEY)}, r["put"]
    assert r["get"]["ok"] == {"algorithm": "AES256", "keyMD5": md5_of(ASCII_KEY), "body": "js secret"}, r["get"]
    assert r["get-without-key"]["error"]["status"] == 400, r["get-without-key"]
    assert r["head-other-key"]["error"]["status"] == 403, r["head-other-key"]
    assert r["copy-to-other-key"]["ok"]["keyMD5"] == md5_of(OTHER_ASCII_KEY), r["copy-to-other-key"]
    assert r["get-copy"]["ok"]["body"] == "js secret", r["get-copy"]
    assert body(s3e, bucket, "js/c", **sse_c(ASCII_KEY)) == b"js secret"
    expect_error("AccessDenied", 403, s3e.get_object, Bucket=bucket, Key="js/c2", **sse_c(ASCII_KEY))
    assert {b[1] for b in blobs_of(sse, bucket, "js/c")} == {"customer"}
    assert r["put-sse-s3"]["ok"] == "AES256" and r["head-sse-s3"]["ok"] == "AES256", r
    assert {b[1] for b in blobs_of(sse, bucket, "js/s3")} == {"master"}


def test_rclone_sse_c_and_sse_s3(sse, s3e, bucket, tmp_path):
    """rclone's --s3-sse-customer-* flags: what it uploads is SSE-C under its key, and it reads it back; its
    --s3-server-side-encryption AES256 uploads SSE-S3."""
    from test_rclone import rclone
    src = tmp_path / "f.bin"
    src.write_bytes(os.urandom(70_000))
    flags = ["--ca-cert", str(sse.ca_bundle), "--s3-sse-customer-algorithm", "AES256",
             "--s3-sse-customer-key", ASCII_KEY.decode(),
             "--s3-sse-customer-key-md5", base64.b64encode(hashlib.md5(ASCII_KEY).digest()).decode()]
    rclone(sse, *flags, "copyto", str(src), f"depot:{bucket}/rclone/f.bin")
    assert body(s3e, bucket, "rclone/f.bin", **sse_c(ASCII_KEY)) == src.read_bytes()
    expect_error("InvalidRequest", 400, s3e.get_object, Bucket=bucket, Key="rclone/f.bin")
    rclone(sse, *flags, "copyto", f"depot:{bucket}/rclone/f.bin", str(tmp_path / "back.bin"))
    assert (tmp_path / "back.bin").read_bytes() == src.read_bytes()
    # Without the key rclone gets no plaintext (rclone 1.60 may even exit 0: its HEAD's 400 reads to it as
    # "nothing to copy"); what Depot answers a keyless read is asserted above.
    rclone(sse, "--ca-cert", str(sse.ca_bundle), "copyto", f"depot:{bucket}/rclone/f.bin",
           str(tmp_path / "nokey.bin"), check=False)
    nokey = tmp_path / "nokey.bin"
    assert not nokey.exists() or nokey.read_bytes() != src.read_bytes()
    rclone(sse, "--ca-cert", str(sse.ca_bundle), "--s3-server-side-encryption", "AES256", "copyto", str(src),
           f"depot:{bucket}/rclone/s3.bin")
    assert s3e.head_object(Bucket=bucket, Key="rclone/s3.bin")["ServerSideEncryption"] == "AES256"
    assert {b[1] for b in blobs_of(sse, bucket, "rclone/s3.bin")} == {"master"}


def test_encrypted_content_takes_no_part_in_digest_lookups_or_sources(depot, sse, s3e, bucket):
    """Issue 34 item 19: the plaintext SHA-256 of an SSE-C object answered POST /content/lookup (`found`, a
    guessed plaintext confirmed without the key), and POST /buckets/{b}/objects {key, sha256, size} cloned
    the object without the key, which CopyObject refuses. Encrypted content (SSE-C and SSE-S3) is no digest
    source and no lookup match."""
    token = token_for(depot, "alice")["token"]
    secret = b"the guessed plaintext: salary=100000\n"
    managed = b"sse-s3 content " + os.urandom(16)
    s3e.put_object(Bucket=bucket, Key="c/secret", Body=secret, **sse_c())
    s3e.put_object(Bucket=bucket, Key="s/managed", Body=managed, ServerSideEncryption="AES256")
    # CopyObject of the SSE-C object without its key is refused.
    expect_error("InvalidRequest", 400, s3e.copy_object, Bucket=bucket, Key="copied",
                 CopySource={"Bucket": bucket, "Key": "c/secret"})
    before = depot.snapshot(bucket)
    digests = [hashlib.sha256(secret).hexdigest(), hashlib.sha256(managed).hexdigest()]
    r = call(depot, "POST", "/api/v1/content/lookup", token=token, body={"sha256": digests})
    assert r.status_code == 200 and r.json() == {"found": [], "missing": digests}, r.text
    for key, data in (("clone-c", secret), ("clone-s", managed)):
        r = call(depot, "POST", f"/api/v1/buckets/{bucket}/objects", token=token,
                 body={"key": key, "sha256": hashlib.sha256(data).hexdigest(), "size": len(data)})
        assert r.status_code == 404 and r.json()["type"] == "urn:depot:problem:not-found", r.text
    depot.assert_unchanged(before)
    expect_error("404", 404, s3e.head_object, Bucket=bucket, Key="clone-c")  # HEAD: no body
    # Plaintext content still answers (the same bytes stored plain are found and referenced).
    s3e.put_object(Bucket=bucket, Key="p/plain", Body=secret)
    r = call(depot, "POST", "/api/v1/content/lookup", token=token, body={"sha256": digests[:1]})
    assert [f["sha256"] for f in r.json()["found"]] == digests[:1]
    r = call(depot, "POST", f"/api/v1/buckets/{bucket}/objects", token=token,
             body={"key": "clone-p", "sha256": digests[0], "size": len(secret)})
    assert r.status_code == 201, r.text
    assert s3e.get_object(Bucket=bucket, Key="clone-p")["Body"].read() == secret


def test_a_digest_copy_into_a_bucket_that_encrypts_is_encrypted(depot, sse, s3e, bucket, bucket_factory):
    """An attacker's finding: POST /buckets/{b}/objects {key, sha256, size} into a bucket whose default
    encryption is AES256 referenced the source's plaintext segments, so `depotctl push` (which copies by
    digest) landed plaintext in an "encrypted" bucket. The copy is now a put of the source's bytes, sealed
    (and checked against the digest); without a master key it is 501 and stores nothing. A plain bucket
    still references the source's bytes."""
    token = token_for(depot, "alice")["token"]
    enc = bucket_factory()
    s3e.put_bucket_encryption(Bucket=enc, ServerSideEncryptionConfiguration={
        "Rules": [{"ApplyServerSideEncryptionByDefault": {"SSEAlgorithm": "AES256"}}]})
    data = b"plain source " + os.urandom(32)
    s3e.put_object(Bucket=bucket, Key="src/plain", Body=data)
    digest = hashlib.sha256(data).hexdigest()

    def create(server, target, key):
        return requests.post(f"{server.endpoint}/api/v1/buckets/{target}/objects",
                             json={"key": key, "sha256": digest, "size": len(data)},
                             headers={"Authorization": f"Bearer {token}"}, verify=server.verify, timeout=60)

    # Without a master key (the suite's own depotd): refused, nothing stored.
    before = depot.snapshot(enc)
    r = create(depot, enc, "refused")
    assert r.status_code == 501, r.text
    depot.assert_unchanged(before)
    r = create(sse, enc, "from-digest")
    assert r.status_code == 201, r.text
    assert s3e.head_object(Bucket=enc, Key="from-digest")["ServerSideEncryption"] == "AES256"
    sealed = blobs_of(sse, enc, "from-digest")
    assert [b[1] for b in sealed] == ["master"] and sealed != blobs_of(sse, bucket, "src/plain")
    assert body(s3e, enc, "from-digest") == data
    row = sse.db.query("SELECT action, details::text FROM audit_log WHERE resource = "
                       f"'{enc}/from-digest' ORDER BY id DESC LIMIT 1")[0]
    assert row[0] == "object.copy" and f"{bucket}/src/plain" in row[1], row
    # Into a plain bucket: a reference to the same bytes, as before.
    plain = bucket_factory()
    assert create(sse, plain, "ref").status_code == 201
    assert blobs_of(sse, plain, "ref") == blobs_of(sse, bucket, "src/plain")


def test_a_snapshot_restore_never_lands_plaintext_in_a_bucket_that_encrypts(depot, sse, s3e, bucket, bucket_factory):
    """The attacker's request (second attack, N1): a snapshot of plaintext objects restored into a bucket whose
    default encryption is AES256 (200) referenced the plaintext bytes, so the "encrypted" bucket served
    unencrypted objects. A restore cannot encrypt what it references: it is 409 naming the object, and
    nothing is restored. Encrypted sources restore there; plaintext ones restore into a plain bucket."""
    token = token_for(depot, "alice")["token"]
    s3e.put_object(Bucket=bucket, Key="plain/a", Body=b"plaintext")
    s3e.put_object(Bucket=bucket, Key="sealed/b", Body=b"sealed", ServerSideEncryption="AES256")
    base = f"/api/v1/buckets/{bucket}/snapshots"
    assert call(depot, "POST", base, token=token, body={"name": "s1"}).status_code == 201
    enc = bucket_factory()
    s3e.put_bucket_encryption(Bucket=enc, ServerSideEncryptionConfiguration={
        "Rules": [{"ApplyServerSideEncryptionByDefault": {"SSEAlgorithm": "AES256"}}]})
    for target, prefix in ((enc, None), (bucket, None)):
        if target == bucket:  # in place, once the bucket itself encrypts
            s3e.put_bucket_encryption(Bucket=bucket, ServerSideEncryptionConfiguration={
                "Rules": [{"ApplyServerSideEncryptionByDefault": {"SSEAlgorithm": "AES256"}}]})
        before = depot.snapshot(target)
        audit = depot.db.scalar("SELECT count(*) FROM audit_log")
        r = call(depot, "POST", f"{base}/s1/restore", token=token,
                 body={"target_bucket": target, "target_prefix": "restored/"})
        assert r.status_code == 409, r.text
        assert "plain/a" in r.json()["detail"], r.text
        depot.assert_unchanged(before)
        assert depot.db.scalar("SELECT count(*) FROM audit_log") == audit
    # Only the encrypted source: restored, still encrypted.
    r = call(depot, "POST", f"{base}/s1/restore", token=token,
             body={"target_bucket": enc, "prefix": "sealed/", "target_prefix": "restored/"})
    assert r.status_code == 200, r.text
    assert s3e.head_object(Bucket=enc, Key="restored/b")["ServerSideEncryption"] == "AES256"
    assert body(s3e, enc, "restored/b") == b"sealed"
    # Into a plain bucket, as before.
    plain = bucket_factory()
    r = call(depot, "POST", f"{base}/s1/restore", token=token, body={"target_bucket": plain})
    assert r.status_code == 200, r.text
    assert body(s3e, plain, "plain/a") == b"plaintext"
