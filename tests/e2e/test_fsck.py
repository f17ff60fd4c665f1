"""`depotctl fsck` and `depotctl gc` against a real depotd's registry and blob store (both stores):
a healthy installation is consistent; a lost blob, an orphan and a wrong reference count are each
reported (exit status 1), `--repair` fixes reference counts, and `gc` (after a dry run that changes
nothing) reclaims the orphan."""

from __future__ import annotations

import json
import os

import pytest

from depot_harness import Depot, run, unique_bucket_name


@pytest.fixture
def server(private_depot):
    return private_depot()


def depotctl_json(server: Depot, *args: str, check: bool = True) -> tuple[int, dict]:
    proc = server.depotctl(*args, *server.storage_args(), "--json", check=check)
    return proc.returncode, json.loads(proc.stdout)


def remove_from_store(server: Depot, store_id: str) -> None:
    if server.storage == "rados":
        run(["rados", "-c", os.environ["DEPOT_TEST_CEPH_CONF"], "--keyring", os.environ["DEPOT_TEST_CEPH_KEYRING"],
             "-p", os.environ.get("DEPOT_TEST_CEPH_POOL", "depot"), "-N", server.rados_namespace, "rm", store_id])
        return
    matches = [p for p in server.blob_files() if os.path.basename(p) == store_id]
    assert len(matches) == 1, (store_id, sorted(server.blob_files()))
    os.unlink(server.blob_dir / matches[0])


def test_fsck_reports_each_kind_of_damage_and_repair_and_gc_fix_what_they_can(server):
    client = server.client("alice")
    bucket = unique_bucket_name("fsck")
    client.create_bucket(Bucket=bucket)
    for key, size in (("a", 1000), ("b", 200_000), ("c", 3000), ("dup", 1000)):
        client.put_object(Bucket=bucket, Key=key, Body=(b"x" * size if key in ("a", "dup") else os.urandom(size)))

    status, report = depotctl_json(server, "fsck")
    assert status == 0 and report["clean"], report
    assert report["store_blobs"] == report["registry_blobs"] == 3  # "a" and "dup" share one blob

    db = server.db
    lost = str(db.scalar("SELECT store_id FROM blobs WHERE size = 200000"))
    orphan = str(db.scalar("SELECT store_id FROM blobs WHERE size = 3000"))
    remove_from_store(server, lost)
    # Orphan "c"'s blob: its rows vanish, the bytes stay (as after a crash between commit and publish).
    db.execute("BEGIN; DELETE FROM object_segments WHERE version_row IN "
               "(SELECT id FROM object_versions WHERE key = 'c'); DELETE FROM object_versions WHERE key = 'c'; "
               f"DELETE FROM blobs WHERE store_id = '{orphan}'; COMMIT;")
    db.execute("UPDATE blobs SET refcount = 7 WHERE size = 1000")

    status, report = depotctl_json(server, "fsck", check=False)
    assert status == 1 and not report["clean"]
    assert report["missing"] == [lost]
    assert report["orphans"] == [{"blob": orphan, "size": 3000}]
    assert [(r["recorded"], r["actual"]) for r in report["refcount_mismatches"]] == [(7, 2)]

    status, report = depotctl_json(server, "fsck", "--repair", check=False)
    assert status == 1 and report["refcounts_repaired"] == 1 and report["refcount_mismatches"] == []
    assert int(db.scalar("SELECT refcount FROM blobs WHERE size = 1000")) == 2

    status, dry = depotctl_json(server, "gc", "--dry-run", "--grace", "0")
    assert dry["unreferenced_blobs"] == 1 and dry["unreferenced_bytes"] == 3000
    assert orphan in {os.path.basename(p) for p in server.blob_files()}
    status, done = depotctl_json(server, "gc", "--grace", "0")
    assert done["unreferenced_blobs"] == 1
    assert orphan not in {os.path.basename(p) for p in server.blob_files()}

    status, report = depotctl_json(server, "fsck", check=False)
    assert report["orphans"] == [] and report["missing"] == [lost]
    # What still has its bytes reads back; the object whose blob was lost fails loudly, not silently.
    assert client.get_object(Bucket=bucket, Key="a")["Body"].read() == b"x" * 1000


def test_fsck_refuses_bad_storage_settings(server):
    proc = server.depotctl("fsck", "--storage", "floppy", check=False)
    assert proc.returncode == 2 and "storage" in proc.stderr
