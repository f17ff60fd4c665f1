"""Attacks on durability (issue 22): acknowledged writes that lose their bytes, and copies that race a delete.

Item 1: with deduplication on, a body longer than 8 MiB is stored as 8 MiB blobs, each committed as soon as
it is full, while the rows naming them are written at the publish, when the body has ended. A client that
sends slowly (or pauses) for longer than --blob-grace used to lose the early pieces to the cleanup, and the
upload was still answered 200, every GET then failing. Each test runs its own depotd with a one-second
grace and cleanup interval, sends the first pieces, waits through several cleanup passes, sends the rest,
and reads the object back.

Item 10: UploadPartCopy did not lock its source version as CopyObject does: a DeleteObject of the source
racing it made it fail with 500 (or copy from a version already deleted).
"""

from __future__ import annotations

import concurrent.futures
import http.client
import os
import time
import urllib.parse

import pytest
from botocore.exceptions import ClientError

from depot_harness import unique_bucket_name
from test_metrics import scrape

MIB = 1 << 20
SEGMENT = 8 * MIB


@pytest.fixture
def eager_cleanup(private_depot):
    """A depotd whose cleanup runs every second and takes unnamed blobs older than a second."""
    return private_depot("--cleanup-interval", "1", "--blob-grace", "1")


def cleanup_passes(server) -> float:
    return scrape(server.endpoint).value("depot_gc_passes_total", result="ok")


def send_slowly(server, url: str, body: bytes, pause_after: int) -> tuple[int, bytes]:
    """PUTs `body` to a presigned `url`: `pause_after` bytes at once, then nothing until at least three
    cleanup passes ran (each taking what is older than the one-second grace), then the rest. The tests pause
    at a piece boundary: the committed pieces are what the intents protect. A piece still being written
    that stalls for longer than the grace is taken as a crash's leftover, and the write then fails (500,
    nothing acknowledged); with the default grace of an hour that is a client silent for an hour."""
    u = urllib.parse.urlsplit(url)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=120)
    try:
        conn.putrequest("PUT", f"{u.path}?{u.query}", skip_accept_encoding=True)
        conn.putheader("Content-Length", str(len(body)))
        conn.endheaders()
        conn.send(body[:pause_after])
        time.sleep(1.5)  # the first pieces are older than the grace by now
        before = cleanup_passes(server)
        deadline = time.monotonic() + 30
        while cleanup_passes(server) < before + 3:
            assert time.monotonic() < deadline, "the cleanup did not run"
            time.sleep(0.2)
        conn.send(body[pause_after:])
        response = conn.getresponse()
        return response.status, response.read()
    finally:
        conn.close()


def test_a_slow_put_keeps_its_early_pieces(eager_cleanup):
    """issue 22 item 1: a PUT slower than --blob-grace is answered 200 and then reads back, byte for byte."""
    server = eager_cleanup
    client = server.client("alice")
    bucket = unique_bucket_name("slow-put")
    client.create_bucket(Bucket=bucket)
    body = os.urandom(2 * SEGMENT + MIB + 17)
    url = client.generate_presigned_url("put_object", Params={"Bucket": bucket, "Key": "ckpt.bin"},
                                        ExpiresIn=600)
    status, answer = send_slowly(server, url, body, SEGMENT)
    assert status == 200, answer
    assert client.get_object(Bucket=bucket, Key="ckpt.bin")["Body"].read() == body
    # The pieces are named by their blob rows now; the intents are gone, and later passes leave them be.
    assert int(server.db.scalar("SELECT count(*) FROM blob_intents")) == 0
    before = cleanup_passes(server)
    while cleanup_passes(server) < before + 2:
        time.sleep(0.2)
    assert client.get_object(Bucket=bucket, Key="ckpt.bin")["Body"].read() == body


def test_a_slow_part_keeps_its_early_pieces(eager_cleanup):
    """issue 22 item 1: an UploadPart slower than --blob-grace is kept whole, and so is the completed object."""
    server = eager_cleanup
    client = server.client("alice")
    bucket = unique_bucket_name("slow-part")
    client.create_bucket(Bucket=bucket)
    upload = client.create_multipart_upload(Bucket=bucket, Key="shard.bin")["UploadId"]
    part = os.urandom(SEGMENT + 3 * MIB)
    url = client.generate_presigned_url(
        "upload_part", Params={"Bucket": bucket, "Key": "shard.bin", "UploadId": upload, "PartNumber": 1},
        ExpiresIn=600)
    status, answer = send_slowly(server, url, part, SEGMENT)
    assert status == 200, answer
    parts = client.list_parts(Bucket=bucket, Key="shard.bin", UploadId=upload)["Parts"]
    client.complete_multipart_upload(
        Bucket=bucket, Key="shard.bin", UploadId=upload,
        MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": parts[0]["ETag"]}]})
    assert client.get_object(Bucket=bucket, Key="shard.bin")["Body"].read() == part
    assert int(server.db.scalar("SELECT count(*) FROM blob_intents")) == 0


def test_upload_part_copy_racing_a_delete_of_its_source_is_never_a_500(depot):
    """issue 22 item 10: UploadPartCopy locks its source version as CopyObject does: a concurrent DeleteObject
    of the source makes it answer 200 (the part holds the bytes) or 404 NoSuchKey, never 500, and a part it
    stored reads back whole."""
    client = depot.client("alice")
    bucket = unique_bucket_name("copy-race")
    client.create_bucket(Bucket=bucket)
    outcomes: dict[str, int] = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        for round_ in range(12):
            source = os.urandom(3 * MIB + round_)  # unique content: deleting it removes its blob
            key = f"source-{round_}"
            client.put_object(Bucket=bucket, Key=key, Body=source)
            upload = client.create_multipart_upload(Bucket=bucket, Key=f"target-{round_}")["UploadId"]

            def copy():
                try:
                    return client.upload_part_copy(Bucket=bucket, Key=f"target-{round_}", UploadId=upload,
                                                   PartNumber=1, CopySource={"Bucket": bucket, "Key": key})
                except ClientError as e:
                    return e.response

            copying = pool.submit(copy)
            time.sleep(0.002 * (round_ % 6))
            client.delete_object(Bucket=bucket, Key=key)
            answer = copying.result()
            status = answer["ResponseMetadata"]["HTTPStatusCode"]
            if status == 200:
                outcomes["copied"] = outcomes.get("copied", 0) + 1
                client.complete_multipart_upload(
                    Bucket=bucket, Key=f"target-{round_}", UploadId=upload,
                    MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": answer["CopyPartResult"]["ETag"]}]})
                assert client.get_object(Bucket=bucket, Key=f"target-{round_}")["Body"].read() == source
            else:
                assert (status, answer["Error"]["Code"]) == (404, "NoSuchKey"), answer
                outcomes["refused"] = outcomes.get("refused", 0) + 1
                assert client.list_parts(Bucket=bucket, Key=f"target-{round_}",
                                         UploadId=upload).get("Parts", []) == []
                client.abort_multipart_upload(Bucket=bucket, Key=f"target-{round_}", UploadId=upload)
    assert sum(outcomes.values()) == 12
