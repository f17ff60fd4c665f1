"""Signature Version 2 (issue 27 §1): boto3's default presigned URLs against a custom endpoint in us-east-1
(Debian's boto3 in process, and another installed boto3 when there is one), s3cmd with signature_v2 = True,
and raw `Authorization: AWS key:signature` requests; the attacks (tampered, expired, too long-lived, unknown
key, x-amz-* header added, scoped key out of its scope) answer as SigV4's do and count as failed
authentications.
"""

from __future__ import annotations

import base64
import email.utils
import hashlib
import hmac
import secrets
import shutil
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import boto3
import botocore.config
import pytest

from depot_harness import CURL, clean_env, expect_error, parse_error, run, unique_bucket_name
from rest import call, token_for, validate

# Another boto3 than Debian's (1.43 on the development machines); the tests using it skip without it.
OTHER_PYTHONS = [p for p in ("/root/.pyenv/versions/3.11.7/bin/python3",) if Path(p).exists()]


def default_client(depot, user: str = "alice", *, access_key: str | None = None, secret: str | None = None):
    """A boto3 client with boto3's defaults (no signature_version): presigned URLs are SigV2 then."""
    u = depot.user(user)
    return boto3.session.Session().client(
        "s3", endpoint_url=depot.endpoint, region_name="us-east-1",
        aws_access_key_id=access_key or u.access_key, aws_secret_access_key=secret or u.secret,
        config=botocore.config.Config(retries={"total_max_attempts": 1}))


def fetch(url: str, method: str = "GET", data: bytes | None = None, headers: dict | None = None):
    """(status, body) of one urllib request; errors are answers too."""
    req = urllib.request.Request(url, data=data, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def error_code(body: bytes) -> str:
    text = body.decode()
    return text.split("<Code>", 1)[1].split("</Code>", 1)[0] if "<Code>" in text else text


def v2_headers(depot, method: str, path: str, *, user: str = "alice", headers: dict | None = None,
               secret: str | None = None, access_key: str | None = None, date: str | None = None) -> dict:
    """Signs `path` (percent-encoded, with its query) by AWS's documented SigV2 rules, independently of
    depotd's code: Content-MD5, Content-Type, Date (empty with x-amz-date), x-amz-* lines, resource."""
    u = depot.user(user)
    hdrs = dict(headers or {})
    if method == "PUT" and "content-type" not in {k.lower() for k in hdrs}:
        hdrs["Content-Type"] = "application/octet-stream"  # else urllib sends (unsigned) a form type
    if "x-amz-date" not in {k.lower() for k in hdrs}:
        hdrs["Date"] = date or email.utils.formatdate(usegmt=True)
    lower = {k.lower(): v.strip() for k, v in hdrs.items()}
    amz = "".join(f"{k}:{lower[k]}\n" for k in sorted(lower) if k.startswith("x-amz-"))
    resource, _, query = path.partition("?")
    subs = sorted(p for p in query.split("&") if p and p.split("=")[0] in
                  ("acl", "uploads", "uploadId", "partNumber", "versionId", "versioning", "versions", "delete",
                   "tagging", "location"))
    if subs:
        resource += "?" + "&".join(urllib.parse.unquote(s) for s in subs)
    date_line = "" if "x-amz-date" in lower else lower["date"]
    sts = f"{method}\n{lower.get('content-md5', '')}\n{lower.get('content-type', '')}\n{date_line}\n{amz}{resource}"
    sig = base64.b64encode(hmac.new((secret or u.secret).encode(), sts.encode(), hashlib.sha1).digest()).decode()
    hdrs["Authorization"] = f"AWS {access_key or u.access_key}:{sig}"
    return hdrs


def raw(depot, method: str, path: str, *, body: bytes = b"", headers: dict | None = None):
    return fetch(depot.endpoint + path, method, body if method in ("PUT", "POST") else None, headers)


@pytest.fixture(scope="module")
def v2bucket(depot):
    name = unique_bucket_name("sigv2")
    s3 = depot.client("alice")
    s3.create_bucket(Bucket=name)
    s3.put_object(Bucket=name, Key="dir/a b+c.txt", Body=b"hello v2")
    return name


def test_boto3_default_presigned_get_and_put(depot, v2bucket):
    c = default_client(depot)
    url = c.generate_presigned_url("get_object", Params={"Bucket": v2bucket, "Key": "dir/a b+c.txt"}, ExpiresIn=300)
    assert "AWSAccessKeyId=" in url and "Signature=" in url and "X-Amz-" not in url
    assert fetch(url) == (200, b"hello v2")
    # With a response override (a sub-resource: signed).
    url = c.generate_presigned_url("get_object", Params={"Bucket": v2bucket, "Key": "dir/a b+c.txt",
                                                         "ResponseContentType": "application/x-v2"})
    req = urllib.request.Request(url)
    with urllib.request.urlopen(req, timeout=30) as r:
        assert r.headers["Content-Type"] == "application/x-v2"
    # PUT, with a Content-Type boto3 moves into the query string.
    url = c.generate_presigned_url("put_object", Params={"Bucket": v2bucket, "Key": "up/put.txt",
                                                         "ContentType": "text/plain"}, ExpiresIn=300)
    assert fetch(url, "PUT", b"uploaded via v2", {"Content-Type": "text/plain"})[0] == 200
    got = depot.client("alice").get_object(Bucket=v2bucket, Key="up/put.txt")
    assert got["Body"].read() == b"uploaded via v2" and got["ContentType"] == "text/plain"
    # The URL is for GET: not for DELETE, nor for another key.
    url = c.generate_presigned_url("get_object", Params={"Bucket": v2bucket, "Key": "up/put.txt"})
    status, body = fetch(url, "DELETE")
    assert (status, error_code(body)) == (403, "SignatureDoesNotMatch")
    status, body = fetch(url.replace("/up/put.txt", "/dir/a%20b%2Bc.txt"))
    assert (status, error_code(body)) == (403, "SignatureDoesNotMatch")


@pytest.mark.skipif(not OTHER_PYTHONS, reason="no other boto3 installed")
def test_other_boto3_default_presigned_urls_download_with_curl(depot, v2bucket, tmp_path):
    u = depot.user("alice")
    script = (
        "import boto3, sys\n"
        f"c = boto3.client('s3', endpoint_url={depot.endpoint!r}, region_name='us-east-1', "
        f"aws_access_key_id={u.access_key!r}, aws_secret_access_key={u.secret!r})\n"
        f"print(c.generate_presigned_url('get_object', Params={{'Bucket': {v2bucket!r}, 'Key': 'dir/a b+c.txt'}}))\n"
        f"print(c.generate_presigned_url('put_object', Params={{'Bucket': {v2bucket!r}, 'Key': 'up/other.bin'}}))\n"
        "print(boto3.__version__)\n")
    out = subprocess.run([OTHER_PYTHONS[0], "-c", script], capture_output=True, text=True, timeout=60,
                         env=clean_env({}), check=True).stdout.split()
    get_url, put_url, version = out
    assert "AWSAccessKeyId=" in get_url, (version, get_url)
    got = run([CURL, "-sS", "-f", get_url]).stdout
    assert got == "hello v2"
    src = tmp_path / "body.bin"
    src.write_bytes(b"\x00\x01 from curl")
    # No Content-Type (curl would send a form type): SigV2 signs Content-Type, and the URL was made without one.
    run([CURL, "-sS", "-f", "-X", "PUT", "-H", "Content-Type:", "--data-binary", f"@{src}", put_url])
    assert depot.client("alice").get_object(Bucket=v2bucket, Key="up/other.bin")["Body"].read() == b"\x00\x01 from curl"


def test_s3cmd_with_signature_v2(depot, tmp_path):
    cfg = tmp_path / "s3cfg-v2"
    cfg.write_text((depot.workdir / "s3cfg-alice").read_text().replace("signature_v2 = False", "signature_v2 = True"))
    s3cmd = shutil.which("s3cmd") or "/usr/bin/s3cmd"

    def s3c(*args):
        return run([s3cmd, "-c", str(cfg), "--no-progress", "--debug", *args],
                   env=clean_env({"HOME": str(tmp_path)}), timeout=120)

    name = unique_bucket_name("s3cmdv2")
    out = s3c("mb", f"s3://{name}")
    assert "Authorization: AWS " in out.stderr or "AWS " in out.stderr  # SigV2 was used, not AWS4-HMAC-SHA256
    assert "AWS4-HMAC-SHA256" not in out.stderr
    src = tmp_path / "f.txt"
    src.write_bytes(b"s3cmd signature v2\n")
    s3c("put", str(src), f"s3://{name}/x/f.txt")
    assert f"s3://{name}/x/f.txt" in s3c("ls", "--recursive", f"s3://{name}").stdout
    dst = tmp_path / "g.txt"
    s3c("get", str(f"s3://{name}/x/f.txt"), str(dst))
    assert dst.read_bytes() == b"s3cmd signature v2\n"
    s3c("del", f"s3://{name}/x/f.txt")
    s3c("rb", f"s3://{name}")


def test_raw_sigv2_header_requests(depot, v2bucket):
    body = b"raw v2 body"
    md5 = base64.b64encode(hashlib.md5(body).digest()).decode()
    path = f"/{v2bucket}/raw/k.txt"
    hdrs = v2_headers(depot, "PUT", path, headers={"Content-Type": "text/x-raw", "Content-MD5": md5,
                                                   "x-amz-meta-color": "blue", "x-amz-acl": "private"})
    assert raw(depot, "PUT", path, body=body, headers=hdrs)[0] == 200
    head = depot.client("alice").head_object(Bucket=v2bucket, Key="raw/k.txt")
    assert head["Metadata"] == {"color": "blue"} and head["ContentType"] == "text/x-raw"
    # x-amz-date instead of Date (s3cmd's form), in s3cmd's "+0000" format.
    stamp = time.strftime("%a, %d %b %Y %H:%M:%S +0000", time.gmtime())
    assert raw(depot, "GET", path, headers=v2_headers(depot, "GET", path, headers={"x-amz-date": stamp})) == (200, body)
    # A sub-resource: ListObjectVersions on the bucket.
    status, listing = raw(depot, "GET", f"/{v2bucket}?versions", headers=v2_headers(depot, "GET", f"/{v2bucket}?versions"))
    assert status == 200 and b"raw/k.txt" in listing
    # Content-MD5 is signed: the body must match it.
    hdrs = v2_headers(depot, "PUT", path, headers={"Content-MD5": md5})
    status, resp = raw(depot, "PUT", path, body=b"other bytes", headers=hdrs)
    assert (status, error_code(resp)) == (400, "BadDigest")


def test_sigv2_attacks(depot, v2bucket):
    path = f"/{v2bucket}/dir/a%20b%2Bc.txt"
    good = v2_headers(depot, "GET", path)
    assert raw(depot, "GET", path, headers=good) == (200, b"hello v2")

    def refused(headers, status, code, p=path, method="GET"):
        got_status, resp = raw(depot, method, p, headers=headers)
        assert (got_status, error_code(resp)) == (status, code), resp

    # Tampered signature, wrong secret, unknown key.
    sig = good["Authorization"].split(":", 1)[1]
    flipped = ("A" if sig[0] != "A" else "B") + sig[1:]
    refused({**good, "Authorization": good["Authorization"].split(":")[0] + ":" + flipped}, 403, "SignatureDoesNotMatch")
    refused(v2_headers(depot, "GET", path, secret="not-the-secret"), 403, "SignatureDoesNotMatch")
    refused(v2_headers(depot, "GET", path, access_key="AKUNKNOWN" + secrets.token_hex(6).upper()), 403,
            "InvalidAccessKeyId")
    # An x-amz-* header added after signing is not covered: refused, not ignored.
    refused({**good, "x-amz-acl": "public-read"}, 403, "SignatureDoesNotMatch")
    # A request signed an hour ago.
    old = email.utils.formatdate(time.time() - 3600, usegmt=True)
    refused(v2_headers(depot, "GET", path, date=old), 403, "RequestTimeTooSkewed")
    # Malformed: no colon, bad base64, no date, both mechanisms.
    refused({"Authorization": "AWS " + depot.user("alice").access_key, "Date": good["Date"]}, 400, "InvalidArgument")
    refused({**good, "Authorization": good["Authorization"].split(":")[0] + ":%%%notbase64"}, 400, "InvalidArgument")
    no_date = dict(good)
    del no_date["Date"]
    refused(no_date, 403, "AccessDenied")

    c = default_client(depot)
    url = c.generate_presigned_url("get_object", Params={"Bucket": v2bucket, "Key": "dir/a b+c.txt"}, ExpiresIn=60)
    base, _, query = url.partition("?")
    params = dict(urllib.parse.parse_qsl(query))

    def presigned(**changes):
        p = {**params, **changes}
        status, resp = fetch(base + "?" + urllib.parse.urlencode(p))
        return status, error_code(resp)

    assert presigned() == (200, "hello v2")
    # Expires changed (even to later): the signature covers it.
    assert presigned(Expires=str(int(params["Expires"]) + 10)) == (403, "SignatureDoesNotMatch")
    # Expired, as S3 says it.
    url = c.generate_presigned_url("get_object", Params={"Bucket": v2bucket, "Key": "dir/a b+c.txt"}, ExpiresIn=-10)
    status, resp = fetch(url)
    assert (status, error_code(resp)) == (403, "AccessDenied") and b"Request has expired" in resp
    # Longer than SigV4's limit (seven days): refused even with a valid signature.
    url = c.generate_presigned_url("get_object", Params={"Bucket": v2bucket, "Key": "dir/a b+c.txt"},
                                   ExpiresIn=8 * 24 * 3600)
    status, resp = fetch(url)
    assert (status, error_code(resp)) == (400, "AuthorizationQueryParametersError")
    assert presigned(Expires="tomorrow")[0] == 403
    status, resp = fetch(base + "?" + urllib.parse.urlencode({k: v for k, v in params.items() if k != "Expires"}))
    assert (status, error_code(resp)) == (403, "AccessDenied")
    assert presigned(Signature="c2ln") == (400, "AuthorizationQueryParametersError")
    # Both mechanisms at once.
    status, resp = fetch(url, headers={"Authorization": good["Authorization"], "Date": good["Date"]})
    assert (status, error_code(resp)) == (400, "InvalidArgument")
    # Another user's key cannot reach alice's bucket through SigV2 either.
    status, resp = raw(depot, "GET", path, headers=v2_headers(depot, "GET", path, user="bob"))
    assert (status, error_code(resp)) == (403, "AccessDenied")


def test_presigned_listing_parameters_cannot_be_edited(depot, v2bucket):
    """Issue 34 item 10: SigV2 signs only sub-resources, so a presigned listing of prefix=public/ edited to
    prefix=secret/ still verified and listed the secret keys. A presigned SigV2 request carrying a parameter
    its signature does not cover is refused (SigV4 signs every parameter and refuses the edit by itself)."""
    s3 = depot.client("alice")
    s3.put_object(Bucket=v2bucket, Key="public/a.txt", Body=b"a")
    s3.put_object(Bucket=v2bucket, Key="secret/payroll.csv", Body=b"b")
    c = default_client(depot)
    url = c.generate_presigned_url("list_objects", Params={"Bucket": v2bucket, "Prefix": "public/"}, ExpiresIn=60)
    assert "Signature=" in url and "prefix=public" in url
    for edited in (url.replace("prefix=public", "prefix=secret"), url, url + "&delimiter=/",
                   url.replace("prefix=public%2F", "") + "&list-type=2"):
        status, body = fetch(edited)
        assert (status, error_code(body)) == (400, "AuthorizationQueryParametersError"), body
        assert b"payroll" not in body and b"<Contents>" not in body
    # boto3's presigned listing of the whole bucket carries only encoding-type=url (unsigned, and harmless:
    # it changes how keys are spelled, not which are listed), and works.
    whole = c.generate_presigned_url("list_objects", Params={"Bucket": v2bucket}, ExpiresIn=60)
    assert "encoding-type=url" in whole
    status, body = fetch(whole)
    assert status == 200 and b"public/a.txt" in body, body
    status, body = fetch(whole.replace("encoding-type=url", "encoding-type=url&prefix=secret/"))
    assert (status, error_code(body)) == (400, "AuthorizationQueryParametersError") and b"payroll" not in body
    # A URL without such parameters still works; SigV4 refuses the same edit with its own signature.
    url = c.generate_presigned_url("get_object", Params={"Bucket": v2bucket, "Key": "public/a.txt"}, ExpiresIn=60)
    assert fetch(url) == (200, b"a")
    assert fetch(url + "&prefix=secret/")[0] == 400
    v4 = depot.client("alice").generate_presigned_url("list_objects", Params={"Bucket": v2bucket, "Prefix": "public/"})
    status, body = fetch(v4.replace("prefix=public", "prefix=secret"))
    assert (status, error_code(body)) == (403, "SignatureDoesNotMatch") and b"payroll" not in body
    # Header-signed SigV2 lists with a prefix as s3cmd does (its query is unsigned, like its body: SECURITY.md).
    path = f"/{v2bucket}?prefix=public/"
    status, body = raw(depot, "GET", path, headers=v2_headers(depot, "GET", path))
    assert status == 200 and b"public/a.txt" in body and b"payroll" not in body


def test_scoped_key_is_limited_the_same_through_sigv2(depot, v2bucket):
    """A key scoped read-only to one bucket prefix: what SigV4 allows and refuses, SigV2 does too."""
    depot.client("alice").put_object(Bucket=v2bucket, Key="ro/in.txt", Body=b"in scope")
    tok = token_for(depot, "alice")["token"]
    r = call(depot, "POST", "/api/v1/keys", token=tok,
             body={"scope": {"bucket": v2bucket, "prefix": "ro/", "read_only": True}})
    key = validate(r, "POST", "/api/v1/keys")
    ak, sk = key["access_key_id"], key["secret_access_key"]
    v4 = depot.client(access_key=ak, secret=sk)
    c = default_client(depot, access_key=ak, secret=sk)
    # Allowed: a read inside the scope.
    url = c.generate_presigned_url("get_object", Params={"Bucket": v2bucket, "Key": "ro/in.txt"})
    assert fetch(url) == (200, b"in scope")
    assert v4.get_object(Bucket=v2bucket, Key="ro/in.txt")["Body"].read() == b"in scope"
    # Refused: a read outside the prefix, a write inside it — with the same answer as SigV4.
    for params, method, data in (({"Bucket": v2bucket, "Key": "dir/a b+c.txt"}, "get_object", None),
                                 ({"Bucket": v2bucket, "Key": "ro/new.txt"}, "put_object", b"x")):
        url = c.generate_presigned_url(method, Params={**params, **({"ContentType": "text/plain"} if data else {})})
        status, resp = fetch(url, "PUT" if data else "GET", data, {"Content-Type": "text/plain"} if data else None)
        assert (status, error_code(resp)) == (403, "AccessDenied"), resp
        with pytest.raises(Exception) as err:
            getattr(v4, method)(**params, **({"Body": data} if data else {}))
        assert "AccessDenied" in str(err.value)
    # The raw header form too.
    status, resp = raw(depot, "PUT", f"/{v2bucket}/ro/new.txt", body=b"x",
                       headers=v2_headers(depot, "PUT", f"/{v2bucket}/ro/new.txt", access_key=ak, secret=sk))
    assert (status, error_code(resp)) == (403, "AccessDenied")


def test_sigv2_failures_count_toward_the_auth_failure_limit(private_depot):
    server = private_depot("--auth-failure-limit", "3", "--auth-failure-cooldown", "30")
    bucket = unique_bucket_name("v2cool")
    server.client("alice").create_bucket(Bucket=bucket)
    path = f"/{bucket}/k"
    for headers in (v2_headers(server, "GET", path, secret="wrong"),
                    v2_headers(server, "GET", path, access_key="AKUNKNOWN" + secrets.token_hex(6).upper()),
                    {"Authorization": "AWS nocolon", "Date": email.utils.formatdate(usegmt=True)}):
        assert raw(server, "GET", path, headers=headers)[0] in (400, 403)
    r = server.request("GET", f"/{bucket}?list-type=2")
    assert r.status_code == 503 and parse_error(r)["Code"] == "SlowDown", r.text


def test_boto3_signing_with_sigv2_lists_a_bucket(depot, v2bucket):
    """Issue 42: boto3 with signature_version="s3" (SigV2) could put and get objects but not list a bucket:
    botocore signs ListObjectsV2's resource as its model's URI, `/bucket?list-type=2`, which depotd did not
    accept (SignatureDoesNotMatch). It lists now, and a wrong secret still does not."""
    u = depot.user("alice")

    def v2_client(secret):
        return boto3.client("s3", endpoint_url=depot.endpoint, region_name=depot.region,
                            aws_access_key_id=u.access_key, aws_secret_access_key=secret,
                            config=botocore.config.Config(signature_version="s3", s3={"addressing_style": "path"},
                                                          retries={"max_attempts": 1}))
    c = v2_client(u.secret)
    c.put_object(Bucket=v2bucket, Key="listed/a", Body=b"x")
    assert [o["Key"] for o in c.list_objects_v2(Bucket=v2bucket, Prefix="listed/")["Contents"]] == ["listed/a"]
    assert [o["Key"] for o in c.list_objects(Bucket=v2bucket, Prefix="listed/")["Contents"]] == ["listed/a"]
    c.head_bucket(Bucket=v2bucket)
    expect_error("SignatureDoesNotMatch", 403, v2_client("wrong" + u.secret[5:]).list_objects_v2, Bucket=v2bucket)
