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
