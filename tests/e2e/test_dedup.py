"""Deduplication under attack and under load (both stores; the 64 MiB space test on RADOS only):
content identity is SHA-256 + size, never MD5 (a published MD5 collision pair stays two contents);
parallel uploads of identical bytes race to one blob; identical large content under many keys, buckets
and users is stored once, whether it came in single PUTs or aws cli multipart uploads (single PUTs are
stored in 8 MiB segments, the aws cli's part size), and its space comes back after the last reference
goes and gc runs."""

from __future__ import annotations

import concurrent.futures
import hashlib
import json
import os
import re

import pytest

from depot_harness import clean_env, run, unique_bucket_name

# The two 128-byte messages of Wang, Feng, Lai and Yu (2004), as published by Peter Selinger
# ("MD5 collision demo"): they differ in six bytes and have the same MD5.
COLLISION_A = bytes.fromhex(
    "d131dd02c5e6eec4693d9a0698aff95c2fcab58712467eab4004583eb8fb7f89"
    "55ad340609f4b30283e488832571415a085125e8f7cdc99fd91dbdf280373c5b"
    "d8823e3156348f5bae6dacd436c919c6dd53e2b487da03fd02396306d248cda0"
    "e99f33420f577ee8ce54b67080a80d1ec69821bcb6a8839396f9652b6ff72a70")
COLLISION_B = bytes.fromhex(
    "d131dd02c5e6eec4693d9a0698aff95c2fcab50712467eab4004583eb8fb7f89"
    "55ad340609f4b30283e4888325f1415a085125e8f7cdc99fd91dbd7280373c5b"
    "d8823e3156348f5bae6dacd436c919c6dd53e23487da03fd02396306d248cda0"
    "e99f33420f577ee8ce54b67080280d1ec69821bcb6a8839396f965ab6ff72a70")


@pytest.fixture
def server(private_depot):
    return private_depot()


def fsck_clean(server) -> dict:
    proc = server.depotctl("fsck", *server.storage_args(), "--json", check=False)
    report = json.loads(proc.stdout)
    assert proc.returncode == 0 and report["clean"], report
    return report


def test_the_test_data_is_an_md5_collision():
    assert COLLISION_A != COLLISION_B and len(COLLISION_A) == len(COLLISION_B) == 128
    assert hashlib.md5(COLLISION_A).digest() == hashlib.md5(COLLISION_B).digest()
    assert hashlib.sha256(COLLISION_A).digest() != hashlib.sha256(COLLISION_B).digest()


def test_an_md5_collision_pair_is_stored_as_two_contents(server):
    alice, bob = server.client("alice"), server.client("bob")
    mine, theirs = unique_bucket_name("md5-alice"), unique_bucket_name("md5-bob")
    alice.create_bucket(Bucket=mine)
    bob.create_bucket(Bucket=theirs)
    # Alice stores A; Bob (another owner) then stores B, which has A's MD5: it must not become A.
    alice.put_object(Bucket=mine, Key="weights.bin", Body=COLLISION_A)
    etag_b = bob.put_object(Bucket=theirs, Key="weights.bin", Body=COLLISION_B)["ETag"]
    alice.put_object(Bucket=mine, Key="b-copy.bin", Body=COLLISION_B)
    bob.put_object(Bucket=theirs, Key="a-copy.bin", Body=COLLISION_A)
    assert etag_b == '"' + hashlib.md5(COLLISION_A).hexdigest() + '"'  # the S3 ETag is the MD5: equal

    for client, bucket, key, data in ((alice, mine, "weights.bin", COLLISION_A),
                                      (bob, theirs, "weights.bin", COLLISION_B),
                                      (alice, mine, "b-copy.bin", COLLISION_B),
                                      (bob, theirs, "a-copy.bin", COLLISION_A)):
        assert client.get_object(Bucket=bucket, Key=key)["Body"].read() == data
    rows = server.db.query("SELECT encode(sha256, 'hex'), refcount FROM blobs WHERE size = 128 ORDER BY 1")
    assert sorted(rows) == sorted([[hashlib.sha256(COLLISION_A).hexdigest(), "2"],
                                   [hashlib.sha256(COLLISION_B).hexdigest(), "2"]])
    assert len(server.blob_files()) == 2
    fsck_clean(server)


def test_parallel_uploads_of_identical_content_race_to_exactly_one_blob(server):
    bucket = unique_bucket_name("race")
    server.client("alice").create_bucket(Bucket=bucket)
    data = os.urandom(3 << 20)
    writers = 16

    def upload(i: int) -> str:
        client = server.client("alice")  # one client (connection pool) per writer
        # Some writers share a key, so replacing versions race too.
        return client.put_object(Bucket=bucket, Key=f"copy-{i % 12}", Body=data)["ETag"]

    with concurrent.futures.ThreadPoolExecutor(max_workers=writers) as pool:
        etags = list(pool.map(upload, range(writers)))
    assert set(etags) == {'"' + hashlib.md5(data).hexdigest() + '"'}
    assert len(server.blob_files()) == 1
    assert server.db.query("SELECT refcount FROM blobs") == [["12"]]
    client = server.client("alice")
    for i in range(12):
        assert client.get_object(Bucket=bucket, Key=f"copy-{i}")["Body"].read() == data
    fsck_clean(server)
    server.depotctl("gc", "--grace", "0", *server.storage_args())
    assert len(server.blob_files()) == 1


def rados(*args: str) -> str:
    return run(["rados", "-c", os.environ["DEPOT_TEST_CEPH_CONF"], "--keyring", os.environ["DEPOT_TEST_CEPH_KEYRING"],
                "-p", os.environ.get("DEPOT_TEST_CEPH_POOL", "depot"), *args],
               env=clean_env({}), timeout=300).stdout


def namespace_usage(server) -> tuple[int, int]:
    """(RADOS objects, bytes) in the server's namespace, from `rados ls` and `rados stat`."""
    names = server.rados_objects()
    total = 0
    for name in names:
        stat = rados("-N", server.rados_namespace, "stat", name)
        total += int(re.search(r"size (\d+)", stat).group(1))
    return len(names), total


def test_64_mib_under_many_keys_buckets_and_users_is_stored_once_and_comes_back(server, tmp_path):
    if server.storage != "rados":
        pytest.skip("space accounting with rados df / rados ls is a RADOS test")
    size = 64 << 20
    data = os.urandom(size)
    path = tmp_path / "model.safetensors"
    path.write_bytes(data)
    buckets = {"alice": unique_bucket_name("space-alice"), "bob": unique_bucket_name("space-bob")}
    for user, bucket in buckets.items():
        server.client(user).create_bucket(Bucket=bucket)
    print("\nrados df before:\n" + rados("df"))
    empty = namespace_usage(server)
    assert empty == (0, 0), empty

    # Single PUTs (boto3 put_object and the aws cli with multipart off) under several keys, both users.
    for user, bucket in buckets.items():
        server.client(user).put_object(Bucket=bucket, Key="single/a", Body=data)
        server.aws("s3", "cp", str(path), f"s3://{bucket}/single/b", user=f"{user}-single-put")
    single = namespace_usage(server)
    print(f"after 4 single PUTs of 64 MiB: {single[0]} RADOS objects, {single[1]} bytes")
    assert len(server.blob_files()) == size // (8 << 20)  # one 8 MiB segment blob each
    assert single[1] == size, single

    # aws cli multipart uploads (8 MiB parts) under several keys, both users: every part is one of the
    # segments the single PUTs stored, so nothing new stays.
    for user, bucket in buckets.items():
        for key in ("multi/a", "multi/b"):
            server.aws("s3", "cp", str(path), f"s3://{bucket}/{key}", user=user)
    both = namespace_usage(server)
    print(f"after 4 more multipart uploads: {both[0]} RADOS objects, {both[1]} bytes "
          f"(logical {8 * size} bytes)")
    print("rados df after uploads:\n" + rados("df"))
    assert len(server.blob_files()) == size // (8 << 20)
    assert both[1] == size, both  # 8 copies, in both forms, stored once
    for user, bucket in buckets.items():
        client = server.client(user)
        for key in ("single/a", "single/b", "multi/a", "multi/b"):
            got = client.get_object(Bucket=bucket, Key=key)["Body"].read()
            assert hashlib.sha256(got).digest() == hashlib.sha256(data).digest(), (user, key)
    fsck_clean(server)

    # Every reference goes; the collector gives the space back.
    for user, bucket in buckets.items():
        client = server.client(user)
        for key in ("single/a", "single/b", "multi/a", "multi/b"):
            client.delete_object(Bucket=bucket, Key=key)
    server.depotctl("gc", "--grace", "0", *server.storage_args())
    after = namespace_usage(server)
    print(f"after deleting every key and gc: {after[0]} RADOS objects, {after[1]} bytes")
    print("rados df after gc:\n" + rados("df"))
    assert after == (0, 0), after
    fsck_clean(server)
