"""Virtual-hosted-style requests: Host `bucket.localhost:PORT` (depotd runs with --domain localhost)."""

from __future__ import annotations

import requests

from depot_harness import CURL, clean_env, expect_error, run, unique_bucket_name


def test_virtual_hosted_style_round_trip(depot, localhost_subdomains):
    vhost = depot.client("alice", endpoint=f"http://localhost:{depot.port}", addressing_style="virtual")
    path = depot.client("alice")
    name = unique_bucket_name("vhost")

    vhost.create_bucket(Bucket=name)
    vhost.head_bucket(Bucket=name)
    vhost.put_object(Bucket=name, Key="dir/hello world.txt", Body=b"virtually hosted", ContentType="text/plain")
    got = vhost.get_object(Bucket=name, Key="dir/hello world.txt")
    assert (got["Body"].read(), got["ContentType"]) == (b"virtually hosted", "text/plain")
    assert [o["Key"] for o in vhost.list_objects_v2(Bucket=name)["Contents"]] == ["dir/hello world.txt"]
    assert vhost.get_bucket_location(Bucket=name)["LocationConstraint"] is None

    # The same bucket through path-style requests.
    assert path.get_object(Bucket=name, Key="dir/hello world.txt")["Body"].read() == b"virtually hosted"

    vhost.delete_object(Bucket=name, Key="dir/hello world.txt")
    vhost.delete_bucket(Bucket=name)
    expect_error("404", 404, path.head_bucket, Bucket=name)


def test_virtual_hosted_errors_name_the_bucket(depot, localhost_subdomains):
    vhost = depot.client("alice", endpoint=f"http://localhost:{depot.port}", addressing_style="virtual")
    name = unique_bucket_name("vhost-missing")
    response = expect_error("NoSuchBucket", 404, vhost.list_objects_v2, Bucket=name)
    assert response["Error"].get("BucketName") == name


def test_path_style_on_the_bare_domain(depot, bucket):
    client = depot.client("alice", endpoint=f"http://localhost:{depot.port}", addressing_style="path")
    client.put_object(Bucket=bucket, Key="k", Body=b"path style on localhost")
    assert client.get_object(Bucket=bucket, Key="k")["Body"].read() == b"path style on localhost"


def test_presigned_virtual_hosted_url_with_curl(depot, s3, bucket, localhost_subdomains):
    s3.put_object(Bucket=bucket, Key="p.txt", Body=b"presigned, virtual")
    vhost = depot.client("alice", endpoint=f"http://localhost:{depot.port}", addressing_style="virtual")
    url = vhost.generate_presigned_url("get_object", Params={"Bucket": bucket, "Key": "p.txt"}, ExpiresIn=600)
    assert url.startswith(f"http://{bucket}.localhost:{depot.port}/p.txt?")
    proc = run([CURL, "-sS", "--resolve", f"{bucket}.localhost:{depot.port}:127.0.0.1", url], env=clean_env())
    assert proc.stdout == "presigned, virtual"


def test_unknown_host_is_path_style(depot, bucket, s3):
    # Any Host that is not <bucket>.<domain> (here 127.0.0.1) means path-style.
    s3.put_object(Bucket=bucket, Key="k", Body=b"x")
    response = depot.request("GET", f"/{bucket}/k")
    assert response.status_code == 200 and response.content == b"x"
    assert requests.get(f"{depot.endpoint}/healthz", timeout=10).status_code == 200


def test_a_virtual_hosted_key_under_api_is_an_object_never_a_rest_call(depot, s3, bucket, localhost_subdomains):
    """An attacker's finding: with Host <bucket>.<domain>, a path /api/... went to the REST API, which checks
    the same SigV4 signature. So a presigned PutObject URL that alice issued for the key
    api/v1/teams/<team>/members/<attacker>, sent with the body {"role":"admin"}, made the attacker a team
    admin. Host names the bucket: the request is S3's, the body is stored as that key, nothing else changes.
    Keys named metrics and healthz are objects there too."""
    from rest import call, token_for

    token = token_for(depot, "alice")["token"]
    team = "vh-" + unique_bucket_name("t")[-8:]
    assert call(depot, "POST", "/api/v1/teams", token=token, body={"name": team}).status_code == 201
    vhost = depot.client("alice", endpoint=f"http://localhost:{depot.port}", addressing_style="virtual")
    key = f"api/v1/teams/{team}/members/bob"
    url = vhost.generate_presigned_url("put_object", Params={"Bucket": bucket, "Key": key}, ExpiresIn=600)
    assert url.startswith(f"http://{bucket}.localhost:{depot.port}/api/v1/")
    r = requests.put(url, data=b'{"role":"admin"}', headers={"Content-Type": "application/json"}, timeout=30)
    assert r.status_code == 200 and "ETag" in r.headers, (r.status_code, r.text)
    assert s3.get_object(Bucket=bucket, Key=key)["Body"].read() == b'{"role":"admin"}'
    members = call(depot, "GET", f"/api/v1/teams/{team}/members", token=token).json()["items"]
    assert "bob" not in {m["user"] for m in members}, members
    # Keys the bare host reserves for its own endpoints are objects under a bucket's host.
    for name in ("metrics", "healthz"):
        s3.put_object(Bucket=bucket, Key=name, Body=name.encode())
        assert vhost.get_object(Bucket=bucket, Key=name)["Body"].read() == name.encode()
    # The bare host still serves the REST API and the probes.
    assert call(depot, "GET", "/api/v1/whoami", token=token).status_code == 200
    assert requests.get(f"{depot.endpoint}/healthz", timeout=10).status_code == 200
