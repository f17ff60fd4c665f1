"""Per-credential request-rate limiting (--rate-limit / --rate-burst): a credential over its rate gets
503 SlowDown for S3 and REST calls alike, other credentials are unaffected, and it is admitted again
once its bucket refills."""

from __future__ import annotations

import json
import time

import pytest
import requests

from depot_harness import unique_bucket_name


@pytest.fixture
def limited(private_depot):
    return private_depot("--rate-limit", "2", "--rate-burst", "4")


def test_a_credential_over_its_rate_gets_slow_down_and_others_do_not(limited):
    alice, bob = limited.client("alice"), limited.client("bob")
    bucket = unique_bucket_name("rl")
    alice.create_bucket(Bucket=bucket)  # 1 of alice's 4
    outcomes = []
    for _ in range(10):
        try:
            alice.head_bucket(Bucket=bucket)
            outcomes.append(200)
        except alice.exceptions.ClientError as e:
            outcomes.append(int(e.response["ResponseMetadata"]["HTTPStatusCode"]))
    assert 503 in outcomes and outcomes.count(200) <= 4, outcomes
    # A limited request answers before anything runs; the error says SlowDown.
    try:
        alice.put_object(Bucket=bucket, Key="k", Body=b"x")
        raise AssertionError("not limited")
    except alice.exceptions.ClientError as e:
        assert e.response["Error"]["Code"] == "SlowDown"
    # bob has a bucket of his own.
    assert bob.list_buckets()["ResponseMetadata"]["HTTPStatusCode"] == 200

    # An API token is a credential with a budget of its own, limited the same way on the REST API.
    token = json.loads(limited.depotctl("token", "create", "alice", "--json").stdout)["token"]
    statuses = [requests.get(limited.endpoint + "/api/v1/whoami", headers={"Authorization": f"Bearer {token}"},
                             timeout=30).status_code for _ in range(10)]
    assert 503 in statuses, statuses

    time.sleep(2.5)  # refills at 2 per second
    assert alice.head_bucket(Bucket=bucket)["ResponseMetadata"]["HTTPStatusCode"] == 200
    # Being limited is not an outage: nothing is logged as one.
    assert "backend unavailable" not in limited.log_text()
