"""Bucket CORS: PutBucketCors, GetBucketCors and DeleteBucketCors through boto3 and the aws cli, S3's
validation (changing nothing when it refuses), browsers' preflights (OPTIONS, unauthenticated) and the
headers of actual requests from an allowed origin, on a presigned URL as a browser app would use it — also
in Debian's Chromium (playwright-core, js/cors.mjs), from a page of another origin."""

from __future__ import annotations

import functools
import http.server
import json
import shutil
import threading
from pathlib import Path

import pytest
import requests

from depot_harness import assert_error_response, browser_tmpdir, clean_env, expect_error, run
from rest import call, token_for

HERE = Path(__file__).resolve().parent

APP = "https://app.example.com"
RULES = [
    {"ID": "app", "AllowedOrigins": [APP, "https://*.preview.example.com"], "AllowedMethods": ["GET", "PUT"],
     "AllowedHeaders": ["Content-*", "x-amz-*"], "ExposeHeaders": ["ETag"], "MaxAgeSeconds": 600},
    {"AllowedOrigins": ["*"], "AllowedMethods": ["HEAD"]},
]


def put_rules(s3, bucket, rules=RULES):
    s3.put_bucket_cors(Bucket=bucket, CORSConfiguration={"CORSRules": rules})


def preflight(depot, path, origin=APP, method="PUT", headers=None):
    h = {"Origin": origin, "Access-Control-Request-Method": method}
    if headers:
        h["Access-Control-Request-Headers"] = headers
    return requests.options(depot.endpoint + path, headers=h)


def test_configuration_round_trip_and_removal(depot, s3, bucket):
    expect_error("NoSuchCORSConfiguration", 404, s3.get_bucket_cors, Bucket=bucket)
    put_rules(s3, bucket)
    got = s3.get_bucket_cors(Bucket=bucket)["CORSRules"]
    assert got[0]["ID"] == "app"
    assert got[0]["AllowedOrigins"] == RULES[0]["AllowedOrigins"]
    assert got[0]["AllowedMethods"] == ["GET", "PUT"]
    assert got[0]["AllowedHeaders"] == ["Content-*", "x-amz-*"]
    assert got[0]["ExposeHeaders"] == ["ETag"] and got[0]["MaxAgeSeconds"] == 600
    assert got[1]["AllowedOrigins"] == ["*"] and got[1]["AllowedMethods"] == ["HEAD"]
    assert s3.delete_bucket_cors(Bucket=bucket)["ResponseMetadata"]["HTTPStatusCode"] == 204
    expect_error("NoSuchCORSConfiguration", 404, s3.get_bucket_cors, Bucket=bucket)
    # Deleting what is not there is no error, as in S3.
    assert s3.delete_bucket_cors(Bucket=bucket)["ResponseMetadata"]["HTTPStatusCode"] == 204


def test_aws_cli_sets_and_reads_a_configuration(depot, bucket):
    config = {"CORSRules": [{"AllowedOrigins": [APP], "AllowedMethods": ["GET"], "MaxAgeSeconds": 30}]}
    depot.aws("s3api", "put-bucket-cors", "--bucket", bucket, "--cors-configuration", json.dumps(config))
    got = depot.aws_json("s3api", "get-bucket-cors", "--bucket", bucket)
    assert got["CORSRules"] == config["CORSRules"]
    depot.aws("s3api", "delete-bucket-cors", "--bucket", bucket)
    out = depot.aws("s3api", "get-bucket-cors", "--bucket", bucket, check=False)
    assert out.returncode != 0 and "NoSuchCORSConfiguration" in out.stderr


@pytest.mark.parametrize("rules,code", [
    ([{"AllowedOrigins": [APP], "AllowedMethods": ["PATCH"]}], "InvalidRequest"),
    ([{"AllowedOrigins": ["https://*.*.example"], "AllowedMethods": ["GET"]}], "InvalidRequest"),
    ([{"AllowedOrigins": [APP], "AllowedMethods": ["GET"], "AllowedHeaders": ["x-*-*"]}], "InvalidRequest"),
    # Header splitting: an origin a preflight would echo with a line break in it.
    ([{"AllowedOrigins": [APP + "\r\nSet-Cookie: session=stolen"], "AllowedMethods": ["GET"]}], "InvalidRequest"),
    ([{"AllowedOrigins": [APP], "AllowedMethods": ["GET"]}] * 101, "MalformedXML"),
])
def test_configurations_s3_refuses_change_nothing(depot, s3, bucket, rules, code):
    put_rules(s3, bucket)
    before = s3.get_bucket_cors(Bucket=bucket)["CORSRules"]
    expect_error(code, 400, s3.put_bucket_cors, Bucket=bucket, CORSConfiguration={"CORSRules": rules})
    assert s3.get_bucket_cors(Bucket=bucket)["CORSRules"] == before


@pytest.mark.parametrize("body", [
    b"<CORSConfiguration></CORSConfiguration>",
    b"<CORSConfiguration><CORSRule><AllowedMethod>GET</AllowedMethod></CORSRule></CORSConfiguration>",
    b"<CORSConfiguration><CORSRule><AllowedOrigin>*</AllowedOrigin></CORSRule></CORSConfiguration>",
    b"<CORSConfiguration><CORSRule><AllowedOrigin>*</AllowedOrigin><AllowedMethod>GET",
])
def test_malformed_bodies(depot, bucket, body):
    r = depot.request("PUT", f"/{bucket}?cors", body=body)
    assert_error_response(r, "MalformedXML", 400)


def test_another_owner_can_neither_read_nor_change_the_configuration(depot, s3, s3_bob, bucket):
    put_rules(s3, bucket)
    expect_error("AccessDenied", 403, s3_bob.get_bucket_cors, Bucket=bucket)
    expect_error("AccessDenied", 403, s3_bob.delete_bucket_cors, Bucket=bucket)
    expect_error("AccessDenied", 403, s3_bob.put_bucket_cors, Bucket=bucket,
                 CORSConfiguration={"CORSRules": [{"AllowedOrigins": ["https://evil.example"],
                                                   "AllowedMethods": ["GET", "PUT", "DELETE"]}]})
    assert s3.get_bucket_cors(Bucket=bucket)["CORSRules"][0]["ID"] == "app"


def test_preflights_follow_the_rules(depot, s3, bucket):
    path = f"/{bucket}/dir/model.bin"
    r = preflight(depot, path)
    assert_error_response(r, "AccessForbidden", 403)
    assert "CORS is not enabled" in r.text
    put_rules(s3, bucket)

    r = preflight(depot, path, headers="Content-Type, X-Amz-Date")
    assert r.status_code == 200, r.text
    assert r.headers["Access-Control-Allow-Origin"] == APP
    assert r.headers["Access-Control-Allow-Methods"] == "GET, PUT"
    assert r.headers["Access-Control-Allow-Headers"] == "content-type, x-amz-date"
    assert r.headers["Access-Control-Allow-Credentials"] == "true"
    assert r.headers["Access-Control-Expose-Headers"] == "ETag"
    assert r.headers["Access-Control-Max-Age"] == "600"
    assert "Origin" in r.headers["Vary"]

    r = preflight(depot, path, origin="https://pr-7.preview.example.com", method="GET")
    assert r.status_code == 200 and r.headers["Access-Control-Allow-Origin"] == "https://pr-7.preview.example.com"
    r = preflight(depot, path, origin="https://anyone.example", method="HEAD")
    assert r.status_code == 200 and r.headers["Access-Control-Allow-Origin"] == "*"
    assert "Access-Control-Allow-Credentials" not in r.headers

    for origin, method, headers in [("https://evil.example", "GET", None), (APP, "DELETE", None),
                                    (APP, "PUT", "authorization")]:
        r = preflight(depot, path, origin=origin, method=method, headers=headers)
        assert_error_response(r, "AccessForbidden", 403)
        assert "Access-Control-Allow-Origin" not in r.headers

    assert_error_response(requests.options(depot.endpoint + path), "BadRequest", 400)
    assert_error_response(requests.options(depot.endpoint + path, headers={"Origin": APP}), "BadRequest", 400)


def test_actual_requests_from_an_allowed_origin_get_the_headers(depot, s3, bucket):
    s3.put_object(Bucket=bucket, Key="w.bin", Body=b"weights")
    url = s3.generate_presigned_url("get_object", Params={"Bucket": bucket, "Key": "w.bin"}, ExpiresIn=300)
    missing = s3.generate_presigned_url("get_object", Params={"Bucket": bucket, "Key": "none"}, ExpiresIn=300)
    r = requests.get(url, headers={"Origin": APP})
    assert r.status_code == 200 and "Access-Control-Allow-Origin" not in r.headers  # no configuration yet

    put_rules(s3, bucket)
    r = requests.get(url, headers={"Origin": APP})
    assert r.content == b"weights"
    assert r.headers["Access-Control-Allow-Origin"] == APP
    assert r.headers["Access-Control-Expose-Headers"] == "ETag"
    # An error too: the browser app can read why.
    r = requests.get(missing, headers={"Origin": APP})
    assert_error_response(r, "NoSuchKey", 404)
    assert r.headers["Access-Control-Allow-Origin"] == APP
    # Another origin, or a method the rules do not allow for it, gets none; without Origin, none either.
    assert "Access-Control-Allow-Origin" not in requests.get(url, headers={"Origin": "https://evil.example"}).headers
    assert "Access-Control-Allow-Origin" not in requests.get(url).headers
    # The configuration is the whole story: removing it removes the headers at once (lookup cache included).
    s3.delete_bucket_cors(Bucket=bucket)
    assert "Access-Control-Allow-Origin" not in requests.get(url, headers={"Origin": APP}).headers


def test_a_prefix_scoped_key_cannot_change_bucket_cors(depot, s3, bucket):
    tok = token_for(depot, "alice")["token"]
    r = call(depot, "POST", "/api/v1/keys", token=tok, body={"scope": {"bucket": bucket, "prefix": "team/"}})
    assert r.status_code == 201, r.text
    key = r.json()
    scoped = depot.client(access_key=key["access_key_id"], secret=key["secret_access_key"])
    expect_error("AccessDenied", 403, scoped.put_bucket_cors, Bucket=bucket,
                 CORSConfiguration={"CORSRules": RULES})
    expect_error("NoSuchCORSConfiguration", 404, s3.get_bucket_cors, Bucket=bucket)


@pytest.fixture
def app_origin(tmp_path):
    """A browser app's page served from another origin (another port of 127.0.0.1)."""
    (tmp_path / "index.html").write_text("<!doctype html><title>app</title><p>app</p>")
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(tmp_path))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def in_browser(depot, tmp_path, app: str, s3, bucket: str) -> dict:
    node = shutil.which("node", path="/usr/local/bin:/usr/bin:/bin")
    assert node and (HERE / "js" / "node_modules" / "playwright-core").is_dir(), "run scripts/js-deps"
    assert Path("/usr/bin/chromium").exists(), "scripts/deps installs Debian's chromium"
    get_url = s3.generate_presigned_url("get_object", Params={"Bucket": bucket, "Key": "w.bin"}, ExpiresIn=300)
    put_url = s3.generate_presigned_url("put_object", Params={"Bucket": bucket, "Key": "from-browser.txt",
                                                              "ContentType": "text/plain"}, ExpiresIn=300)
    with browser_tmpdir() as profile:
        env = clean_env({"CORS_INPUT": json.dumps({"app": app + "/index.html", "get_url": get_url,
                                                   "put_url": put_url, "put_body": "written by a browser",
                                                   "content_type": "text/plain"}),
                         "NODE_NO_WARNINGS": "1", "TMPDIR": profile})
        out = json.loads(run([node, str(HERE / "js" / "cors.mjs")], env=env, cwd=str(HERE / "js"),
                             timeout=120).stdout)
    assert "error" not in out, out["error"]
    return out


def test_a_browser_app_uses_presigned_urls_once_cors_allows_its_origin(depot, s3, bucket, tmp_path, app_origin):
    s3.put_object(Bucket=bucket, Key="w.bin", Body=b"weights")
    # Without a configuration the browser refuses to hand the app the response, and the PUT's preflight fails:
    # nothing is written.
    out = in_browser(depot, tmp_path, app_origin, s3, bucket)
    assert "error" in out["get"] and "error" in out["put"], out
    expect_error("NoSuchKey", 404, s3.get_object, Bucket=bucket, Key="from-browser.txt")

    put_rules(s3, bucket, [{"AllowedOrigins": [app_origin], "AllowedMethods": ["GET", "PUT"],
                            "AllowedHeaders": ["*"], "ExposeHeaders": ["ETag"]}])
    out = in_browser(depot, tmp_path, app_origin, s3, bucket)
    assert out["get"] == {"status": 200, "text": "weights"}, out
    assert out["put"]["status"] == 200, out
    stored = s3.get_object(Bucket=bucket, Key="from-browser.txt")
    assert stored["Body"].read() == b"written by a browser" and stored["ContentType"] == "text/plain"
    assert out["put"]["etag"] == stored["ETag"]  # readable by the app because ExposeHeaders names it
