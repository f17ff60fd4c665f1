"""Ceph unavailable: with the OSD stopped (SIGSTOP: the process is frozen, as a hung or partitioned OSD
looks to its clients), requests that need the blob store answer 503 SlowDown within a bounded time and log
why; once the OSD runs again, the same depotd serves normally, and whatever the failed writes left behind
is reclaimed. RADOS store only.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest

from depot_harness import expect_error, unique_bucket_name

pytestmark = pytest.mark.skipif(os.environ.get("DEPOT_E2E_STORAGE", "localfs") != "rados",
                                reason="needs the RADOS store (DEPOT_E2E_STORAGE=rados)")

OP_TIMEOUT = 3


def osd_pid() -> int:
    """The pid of the OSD of the cluster scripts/ceph-dev started (its pid file is <dir>/out/osd.0.pid)."""
    pid = int((Path(os.environ["DEPOT_TEST_CEPH_CONF"]).parent / "out" / "osd.0.pid").read_text())
    cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    assert b"ceph-osd" in cmdline, cmdline
    return pid


@pytest.fixture
def outage_depot(private_depot):
    return private_depot("--rados-op-timeout", str(OP_TIMEOUT), "--cleanup-interval", "1", "--blob-grace", "2")


def test_osd_outage_answers_503_in_bounded_time_and_recovers_without_restart(outage_depot):
    server = outage_depot
    client = server.client("alice")
    bucket = unique_bucket_name("outage")
    client.create_bucket(Bucket=bucket)
    stored = os.urandom(6 << 20)
    client.put_object(Bucket=bucket, Key="weights.bin", Body=stored)
    rows_before = server.db.table_counts()
    log_start = server.log_size()

    pid = osd_pid()
    os.kill(pid, signal.SIGSTOP)
    try:
        started = time.monotonic()
        expect_error("SlowDown", 503, client.put_object, Bucket=bucket, Key="new.bin", Body=os.urandom(1 << 20))
        put_elapsed = time.monotonic() - started
        # A GET reads its first bytes before it sends headers, so the outage is a 503 too, not a 200 whose
        # body stops short.
        started = time.monotonic()
        expect_error("SlowDown", 503, client.get_object, Bucket=bucket, Key="weights.bin")
        get_elapsed = time.monotonic() - started
        # HEAD needs only the registry and still answers.
        assert client.head_object(Bucket=bucket, Key="weights.bin")["ContentLength"] == len(stored)
    finally:
        os.kill(pid, signal.SIGCONT)

    # Bounded by the operation timeout (a write may take two operations: the head, then the abort).
    assert put_elapsed < 4 * OP_TIMEOUT + 5, put_elapsed
    assert get_elapsed < 2 * OP_TIMEOUT + 5, get_elapsed
    log = server.log_since(log_start)
    assert "backend unavailable; answering 503 SlowDown" in log
    assert "rados" in log
    # The failed write changed no metadata.
    assert server.db.table_counts() == rows_before
    assert server.proc.poll() is None

    # The same process serves again once the OSD is back (the first requests may still find it catching up).
    deadline = time.monotonic() + 60
    while True:
        try:
            client.put_object(Bucket=bucket, Key="new.bin", Body=b"after the outage")
            break
        except client.exceptions.ClientError as e:
            if e.response["Error"]["Code"] != "SlowDown" or time.monotonic() > deadline:
                raise
            time.sleep(1)
    assert client.get_object(Bucket=bucket, Key="weights.bin")["Body"].read() == stored
    assert client.get_object(Bucket=bucket, Key="new.bin")["Body"].read() == b"after the outage"

    # Pieces of the write that failed mid-outage are reclaimed: only the two blobs' heads and stripes remain.
    def only_live_blobs():
        heads = server.blob_files()
        return len(heads) == 2 and all(name.split(".")[0] in heads for name in server.store_entries())

    deadline = time.monotonic() + 60
    while not only_live_blobs():
        assert time.monotonic() < deadline, sorted(server.store_entries())
        time.sleep(0.5)
