"""Crash safety: `kill -9` of depotd in the middle of multi-GiB uploads, on both blob stores.

Each test runs its own depotd (own database, own blob directory or RADOS namespace), kills it while an
upload streams, restarts it and checks that
- the key still reads as its old version, byte for byte: no partial object is ever visible;
- the crash left unfinished pieces in the store (RADOS stripes / temporary files), which the restarted
  server's cleanup removes, so the store holds exactly what it held before the upload began;
- for a multipart upload, the upload survives the crash as an ordinary unfinished upload that an abort or
  the age-based cleanup reclaims completely.

DEPOT_E2E_SKIP_LARGE=1 skips these tests.
"""

from __future__ import annotations

import http.client
import os
import subprocess
import threading
import time

import pytest

from depot_harness import AWS, Depot, md5_etag, quote_key, unique_bucket_name
from test_metrics import scrape

pytestmark = pytest.mark.skipif(os.environ.get("DEPOT_E2E_SKIP_LARGE") == "1",
                                reason="DEPOT_E2E_SKIP_LARGE=1")

GIB = 1 << 30
MIB = 1 << 20
# How much of the upload must have reached depotd before it is killed.
KILL_AFTER = 384 * MIB


@pytest.fixture
def crashable(private_depot):
    """A depotd of its own, so killing it cannot disturb the other tests."""
    return private_depot()


def wait_for(predicate, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.2)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


def restart_with_fast_cleanup(server: Depot, *extra: str) -> None:
    server.extra_args = ["--cleanup-interval", "1", "--blob-grace", "1", *extra]
    server.start()


def assert_old_version(server: Depot, bucket: str, key: str, data: bytes) -> None:
    client = server.client("alice")
    head = client.head_object(Bucket=bucket, Key=key)
    assert head["ContentLength"] == len(data)
    assert head["ETag"] == md5_etag(data)
    assert client.get_object(Bucket=bucket, Key=key)["Body"].read() == data
    listed = client.list_objects_v2(Bucket=bucket)["Contents"]
    assert [(o["Key"], o["Size"]) for o in listed] == [(key, len(data))]


def test_kill_during_a_single_put_leaves_the_old_version_and_cleanup_reclaims_the_pieces(crashable):
    server = crashable
    client = server.client("alice")
    bucket = unique_bucket_name("crash")
    client.create_bucket(Bucket=bucket)
    key = "checkpoints/step-1000.safetensors"
    old = os.urandom(3 * MIB + 17)
    client.put_object(Bucket=bucket, Key=key, Body=old)
    before = server.store_entries()
    rows_before = server.db.table_counts()

    size = 3 * GIB
    sent = 0
    block = os.urandom(MIB)

    path = f"/{bucket}/{quote_key(key)}"
    headers = server.sign("PUT", server.endpoint + path, headers={"Content-Length": str(size)},
                          payload_hash="UNSIGNED-PAYLOAD")
    outcome: dict = {}

    def upload():
        # http.client streams a body of declared length (requests would add Transfer-Encoding: chunked).
        conn = http.client.HTTPConnection(server.host, server.port, timeout=600)
        nonlocal sent
        try:
            conn.putrequest("PUT", path, skip_accept_encoding=True)
            for name, value in headers.items():
                conn.putheader(name, value)
            conn.endheaders()
            while sent < size:
                n = min(len(block), size - sent)
                conn.send(block[:n])
                sent += n
            outcome["response"] = conn.getresponse().status
        except OSError as e:
            outcome["error"] = e
        finally:
            conn.close()

    uploader = threading.Thread(target=upload, daemon=True)
    uploader.start()
    wait_for(lambda: sent >= KILL_AFTER or not uploader.is_alive(), 300, f"{KILL_AFTER} bytes sent")
    assert uploader.is_alive(), f"the upload ended early: {outcome}"
    # The store holds pieces of the unfinished write by now (stripes or a temporary file).
    wait_for(lambda: server.store_entries() - before, 60, "pieces of the unfinished write in the store")
    server.kill()
    uploader.join(60)
    assert "response" not in outcome, f"the upload finished before the kill: {outcome}"
    left_behind = server.store_entries() - before
    assert left_behind, "the crash left nothing behind: the test did not interrupt a write"

    restart_with_fast_cleanup(server)
    assert_old_version(server, bucket, key, old)
    wait_for(lambda: server.store_entries() == before, 120, "the cleanup to remove the unfinished write")
    # The write's intent rows go when their lease (60 s, never renewed by the killed process) runs out. That
    # can be after the store is clean: on RADOS a piece that had not filled its first stripe left no object,
    # so removing the incomplete writes empties the store while the intent is still leased.
    wait_for(lambda: server.db.table_counts() == rows_before, 120, "the lapsed intents to be deleted")
    assert server.db.table_counts() == rows_before
    assert '"incomplete_blobs"' in server.log_text()
    # The restarted process's GC metrics show the pass that did it.
    m = scrape(server.endpoint)
    # What the kill left is a write in progress (incomplete) and, when the body was being split into pieces,
    # pieces already committed that nothing references yet (unreferenced); on RADOS a piece that had not
    # filled its first stripe has written nothing at all. Either way the pass collected something.
    assert (m.value("depot_gc_collected_blobs_total", kind="incomplete")
            + m.value("depot_gc_collected_blobs_total", kind="unreferenced")) >= 1
    assert m.value("depot_gc_passes_total", result="ok") >= 1
    assert m.value("depot_gc_passes_total", result="error") == 0
    assert time.time() - 300 < m.value("depot_gc_last_success_timestamp_seconds") <= time.time() + 1
    assert m.value("depot_gc_pass_duration_seconds_count") == m.value("depot_gc_passes_total", result="ok")
    assert_old_version(server, bucket, key, old)


def test_kill_during_a_multipart_upload_keeps_the_old_version_and_the_upload_is_reclaimed(crashable, tmp_path):
    server = crashable
    client = server.client("alice")
    bucket = unique_bucket_name("crash-mpu")
    client.create_bucket(Bucket=bucket)
    key = "models/llm/model-00001-of-00002.safetensors"
    old = os.urandom(2 * MIB + 5)
    client.put_object(Bucket=bucket, Key=key, Body=old)
    before = server.store_entries()
    rows_before = server.db.table_counts()

    # 2 GiB of distinct 8 MiB parts (each part differs in its first bytes, so nothing deduplicates).
    path = tmp_path / "shard.bin"
    block = bytearray(os.urandom(8 * MIB))
    with open(path, "wb") as f:
        for i in range(256):
            block[:8] = i.to_bytes(8, "little")
            f.write(block)
    cmd = [AWS, "--endpoint-url", server.endpoint, "--profile", "alice", "s3", "cp", str(path),
           f"s3://{bucket}/{key}"]
    uploader = subprocess.Popen(cmd, env=server.aws_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for(lambda: int(server.db.scalar("SELECT count(*) FROM multipart_parts")) >= 8
                 or uploader.poll() is not None, 300, "eight parts uploaded")
        assert uploader.poll() is None, "the upload finished before the kill"
        server.kill()
    finally:
        uploader.kill()
        uploader.wait()

    restart_with_fast_cleanup(server)
    client = server.client("alice")  # the restarted server listens on another port
    assert_old_version(server, bucket, key, old)
    # The parts that completed before the crash belong to an unfinished upload, which S3 keeps until it is
    # aborted (or the age-based cleanup aborts it). Pieces of parts in flight are reclaimed now.
    uploads = client.list_multipart_uploads(Bucket=bucket)["Uploads"]
    assert [u["Key"] for u in uploads] == [key]
    parts = client.list_parts(Bucket=bucket, Key=key, UploadId=uploads[0]["UploadId"])["Parts"]
    assert len(parts) >= 8 and all(p["Size"] == 8 * MIB for p in parts)
    wait_for(lambda: len(server.store_entries() - before) == len(parts) * server_entries_per_part(server),
             120, "the cleanup to remove the pieces of the parts in flight")

    client.abort_multipart_upload(Bucket=bucket, Key=key, UploadId=uploads[0]["UploadId"])
    assert server.store_entries() == before
    assert server.db.table_counts() == rows_before
    assert_old_version(server, bucket, key, old)


def test_abandoned_upload_of_a_crashed_server_is_aborted_by_the_age_based_cleanup(crashable):
    server = crashable
    client = server.client("alice")
    bucket = unique_bucket_name("crash-age")
    client.create_bucket(Bucket=bucket)
    before = server.store_entries()
    rows_before = server.db.table_counts()
    upload = client.create_multipart_upload(Bucket=bucket, Key="ckpt.bin")["UploadId"]
    for n in (1, 2):
        client.upload_part(Bucket=bucket, Key="ckpt.bin", UploadId=upload, PartNumber=n,
                           Body=os.urandom(5 * MIB))
    server.kill()

    restart_with_fast_cleanup(server, "--multipart-max-age", "1")
    client = server.client("alice")
    wait_for(lambda: not client.list_multipart_uploads(Bucket=bucket).get("Uploads"), 60,
             "the cleanup to abort the abandoned upload")
    wait_for(lambda: server.store_entries() == before, 60, "the parts' blobs to be removed")
    assert server.db.table_counts() == rows_before
    # The pass logs once it has also scanned the store for unreachable blobs, after the removal above.
    wait_for(lambda: '"aborted_uploads":1' in server.log_text(), 60, "the cleanup pass to log the abort")
    assert scrape(server.endpoint).value("depot_gc_aborted_uploads_total") == 1


def server_entries_per_part(server: Depot) -> int:
    """Store entries one committed 8 MiB part occupies: one file, or a RADOS head plus its 4 MiB stripes."""
    return 1 if server.storage != "rados" else 1 + 2
