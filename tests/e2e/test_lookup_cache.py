"""The in-memory cache of access keys and buckets (registry/service/lookup_cache.hpp): S3 requests are answered from it,
and no change is missed — whether made through this depotd (seen by the very next request), through a second
depotd on the same database, or with psql behind every depotd's back — and a lost LISTEN connection empties
it.
"""

from __future__ import annotations

import time

import pytest

from depot_harness import expect_error, unique_bucket_name
from rest import call, token_for
from test_metrics import delta, scrape


def eventually(check, timeout: float = 10.0):
    """Polls `check` until it returns a true value (a notice normally arrives within milliseconds)."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(0.05)


def error_code(fn, **kwargs) -> str | None:
    try:
        fn(**kwargs)
    except Exception as e:  # botocore.exceptions.ClientError
        return e.response["Error"]["Code"]
    return None


def test_repeated_requests_are_answered_from_memory(depot, s3, bucket):
    s3.head_bucket(Bucket=bucket)
    before = scrape(depot.endpoint)
    for _ in range(5):
        s3.head_bucket(Bucket=bucket)
    after = scrape(depot.endpoint)
    assert after.value("depot_lookup_cache_listening", default=None) == 1
    assert delta(before, after, "depot_lookup_cache_lookups_total", kind="key", result="hit") >= 5
    assert delta(before, after, "depot_lookup_cache_lookups_total", kind="bucket", result="hit") >= 5


def test_a_revocation_is_refused_at_once_here_and_within_moments_on_another_depotd(depot, tmp_path):
    replica = depot.sibling(tmp_path / "replica")
    replica.start()
    try:
        key = depot.create_key("bob")
        here = depot.client("bob", access_key=key["access_key_id"], secret=key["secret_access_key"])
        there = replica.client("bob", access_key=key["access_key_id"], secret=key["secret_access_key"])
        for _ in range(2):  # cached on both
            here.list_buckets()
            there.list_buckets()
        tok = token_for(depot, "bob")["token"]
        assert call(depot, "DELETE", f"/api/v1/keys/{key['access_key_id']}", token=tok).status_code == 204
        # The depotd that revoked it refuses the very next request, without waiting for any notice.
        expect_error("InvalidAccessKeyId", 403, here.list_buckets)
        assert eventually(lambda: error_code(there.list_buckets) == "InvalidAccessKeyId"), \
            "the other depotd still accepts the revoked key"
    finally:
        replica.stop()


def test_bucket_changes_through_one_depotd_reach_the_other(depot, s3, tmp_path):
    replica = depot.sibling(tmp_path / "replica")
    replica.start()
    name = unique_bucket_name("cache")
    try:
        s3.create_bucket(Bucket=name)
        s3.put_object(Bucket=name, Key="k", Body=b"v")
        other = replica.client("alice")
        for _ in range(2):
            assert other.get_bucket_versioning(Bucket=name).get("Status") is None
        s3.put_bucket_versioning(Bucket=name, VersioningConfiguration={"Status": "Enabled"})
        assert s3.get_bucket_versioning(Bucket=name)["Status"] == "Enabled"
        assert eventually(lambda: other.get_bucket_versioning(Bucket=name).get("Status") == "Enabled"), \
            "the other depotd still shows the bucket unversioned"
        # A new version written through the replica is versioned (the writer reads the mode it locks anyway).
        vid = other.put_object(Bucket=name, Key="k", Body=b"v2")["VersionId"]
        assert vid != "null"
        for v in s3.list_object_versions(Bucket=name).get("Versions", []):
            s3.delete_object(Bucket=name, Key=v["Key"], VersionId=v["VersionId"])
        s3.delete_bucket(Bucket=name)
        expect_error("NoSuchBucket", 404, s3.get_object, Bucket=name, Key="k")
        assert eventually(lambda: error_code(other.list_objects_v2, Bucket=name) == "NoSuchBucket"), \
            "the other depotd still lists a deleted bucket"
    finally:
        replica.stop()


def test_changes_made_with_psql_reach_depotd(depot, s3, s3_bob, bucket):
    # alice is an installation admin and reaches every bucket: the owner change is watched through bob.
    s3.head_bucket(Bucket=bucket)
    s3.head_bucket(Bucket=bucket)  # the bucket row is cached
    assert error_code(s3_bob.list_objects_v2, Bucket=bucket) == "AccessDenied"
    depot.db.execute(f"UPDATE buckets SET owner_id = 'bob' WHERE name = '{bucket}'")
    try:
        assert eventually(lambda: error_code(s3_bob.list_objects_v2, Bucket=bucket) is None), \
            "the new owner has no access after the owner changed"
    finally:
        depot.db.execute(f"UPDATE buckets SET owner_id = 'alice' WHERE name = '{bucket}'")
    assert eventually(lambda: error_code(s3_bob.list_objects_v2, Bucket=bucket) == "AccessDenied"), \
        "the old owner keeps access after the owner changed back"


def test_a_cached_key_stops_working_when_it_expires(depot):
    key = depot.create_key("bob")
    client = depot.client("bob", access_key=key["access_key_id"], secret=key["secret_access_key"])
    depot.db.execute("UPDATE access_keys SET expires_at = now() + interval '2 seconds' "
                     f"WHERE access_key_id = '{key['access_key_id']}'")
    expires = time.monotonic() + 2
    # Cached with its expiry once the update's notice has emptied its entry.
    assert eventually(lambda: error_code(client.list_buckets) is None)
    client.list_buckets()
    time.sleep(max(0.0, expires - time.monotonic()) + 0.3)
    expect_error("InvalidAccessKeyId", 403, client.list_buckets)


def test_a_lost_listen_connection_empties_the_cache(depot, private_depot):
    server = private_depot()
    s3 = server.client("alice")
    s3.list_buckets()
    s3.list_buckets()  # cached
    since = server.log_size()
    depot.admin_db.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                           f"WHERE application_name = 'depotd-cache' AND datname = '{server.db_name}'")
    assert eventually(lambda: "LISTEN connection lost" in server.log_since(since)), server.log_since(since)
    assert eventually(lambda: scrape(server.endpoint).value("depot_lookup_cache_listening", default=None) == 1)
    before = scrape(server.endpoint)
    s3.list_buckets()
    after = scrape(server.endpoint)
    # Whatever it held before the loss is gone (a notice may have been missed): the key came from PostgreSQL.
    assert delta(before, after, "depot_lookup_cache_lookups_total", kind="key", result="hit") == 0
    assert delta(before, after, "depot_lookup_cache_lookups_total", kind="key", result="miss") == 1
    s3.list_buckets()
    assert delta(after, scrape(server.endpoint), "depot_lookup_cache_lookups_total", kind="key", result="hit") == 1


def test_without_a_ttl_nothing_is_cached(private_depot):
    server = private_depot("--lookup-cache-ttl", "0")
    s3 = server.client("alice")
    s3.list_buckets()
    before = scrape(server.endpoint)
    s3.list_buckets()
    s3.list_buckets()
    after = scrape(server.endpoint)
    assert after.value("depot_lookup_cache_listening", default=None) == 0
    assert delta(before, after, "depot_lookup_cache_lookups_total", kind="key", result="hit") == 0
    assert "depotd-cache" not in " ".join(
        r[0] for r in server.admin_db.query("SELECT application_name FROM pg_stat_activity "
                                            f"WHERE datname = '{server.db_name}'"))
