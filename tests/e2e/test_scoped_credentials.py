"""Scoped credentials: an inference key scoped to one model alias reads exactly the files of the version the
alias points to (through the read-only view and through the model's prefix) with the aws cli, and is refused
writes, other files and other models; moving the alias moves what it reads; a revoked key is refused on the
next request; scoped API tokens; bad scopes are precise problems.
"""

from __future__ import annotations

import json
import secrets
from urllib.parse import quote

import pytest
import requests

from depot_harness import AWS, clean_env, expect_error, run, unique_bucket_name
from rest import assert_problem, call, token_for, validate


@pytest.fixture(scope="module")
def setup(depot, tmp_path_factory):
    tok = token_for(depot, "alice")["token"]
    team = "inf-" + secrets.token_hex(3)
    bucket = unique_bucket_name("scoped")
    s3 = depot.client("alice")
    s3.create_bucket(Bucket=bucket)
    s3.put_object(Bucket=bucket, Key="resnet/weights.bin", Body=b"v1 weights")
    s3.put_object(Bucket=bucket, Key="resnet/config.json", Body=b"{}")
    s3.put_object(Bucket=bucket, Key="bert/weights.bin", Body=b"bert")
    assert call(depot, "POST", "/api/v1/teams", token=tok, body={"name": team}).status_code == 201
    # The S3 model view shows the teams one belongs to.
    assert call(depot, "PUT", f"/api/v1/teams/{team}/members/alice", token=tok,
                body={"role": "admin"}).status_code == 200
    for name in ("resnet", "bert"):
        r = call(depot, "POST", f"/api/v1/teams/{team}/models", token=tok,
                 body={"name": name, "bucket": bucket, "prefix": f"{name}/"})
        assert r.status_code == 201, r.text
        assert call(depot, "POST", f"/api/v1/teams/{team}/models/{name}/versions", token=tok,
                    body={}).status_code == 201
    assert call(depot, "PUT", f"/api/v1/teams/{team}/models/resnet/aliases/serving", token=tok,
                body={"version": 1}).status_code == 200
    # A file added after version 1: not part of what the alias serves.
    s3.put_object(Bucket=bucket, Key="resnet/new.bin", Body=b"v2 only")
    return {"token": tok, "team": team, "bucket": bucket, "dir": tmp_path_factory.mktemp("scoped")}


def scoped_key(depot, tok, scope) -> dict:
    r = call(depot, "POST", "/api/v1/keys", token=tok, body={"scope": scope})
    key = validate(r, "POST", "/api/v1/keys")
    got = dict(key["scope"])
    if "alias" in scope:
        # Bound to the alias it names (its identity), assigned by depotd.
        assert isinstance(got.pop("alias_id"), int)
    assert got == {**scope, **({"read_only": True} if "alias" in scope else {})}
    assert key["secret_access_key"]
    return key


def aws_as(depot, key, *args, check=True):
    env = clean_env({"AWS_ACCESS_KEY_ID": key["access_key_id"], "AWS_SECRET_ACCESS_KEY": key["secret_access_key"],
                     "AWS_DEFAULT_REGION": depot.region, "AWS_CONFIG_FILE": "/dev/null",
                     "AWS_SHARED_CREDENTIALS_FILE": "/dev/null", "AWS_EC2_METADATA_DISABLED": "true",
                     "AWS_MAX_ATTEMPTS": "1", "AWS_PAGER": ""})
    return run([AWS, "--endpoint-url", depot.endpoint, *args], env=env, check=check, timeout=120)


def test_an_alias_key_reads_its_alias_with_the_aws_cli_and_nothing_else(depot, setup):
    team, bucket = setup["team"], setup["bucket"]
    key = scoped_key(depot, setup["token"], {"model": f"{team}/resnet", "alias": "serving"})
    view = f"s3://models/{team}/resnet/serving"
    out = setup["dir"] / "weights.bin"
    aws_as(depot, key, "s3", "cp", "--no-progress", f"{view}/weights.bin", str(out))
    assert out.read_bytes() == b"v1 weights"
    listed = aws_as(depot, key, "s3", "ls", f"{view}/").stdout
    assert "weights.bin" in listed and "config.json" in listed and "new.bin" not in listed
    # The same files through the model's prefix in its bucket; not the file the version does not hold.
    assert aws_as(depot, key, "s3", "cp", f"s3://{bucket}/resnet/config.json", "-").stdout == "{}"
    for refused in (f"s3://{bucket}/resnet/new.bin", f"s3://{bucket}/bert/weights.bin",
                    f"s3://models/{team}/bert/1/weights.bin", f"s3://models/{team}/resnet/1/weights.bin"):
        proc = aws_as(depot, key, "s3", "cp", refused, "-", check=False)
        assert proc.returncode != 0 and "403" in proc.stderr, (refused, proc.stderr)
    # Writes of any kind are refused, even to the files it reads.
    src = setup["dir"] / "upload.bin"
    src.write_bytes(b"overwrite")
    for target in (f"s3://{bucket}/resnet/weights.bin", f"s3://{bucket}/elsewhere"):
        proc = aws_as(depot, key, "s3", "cp", "--no-progress", str(src), target, check=False)
        assert proc.returncode != 0 and "AccessDenied" in proc.stderr, proc.stderr
    proc = aws_as(depot, key, "s3", "rm", f"s3://{bucket}/resnet/weights.bin", check=False)
    assert proc.returncode != 0 and "AccessDenied" in proc.stderr
    proc = aws_as(depot, key, "s3", "ls", f"s3://{bucket}/", check=False)
    assert proc.returncode != 0 and "AccessDenied" in proc.stderr
    assert depot.client("alice").get_object(Bucket=bucket, Key="resnet/weights.bin")["Body"].read() == b"v1 weights"


def test_moving_the_alias_moves_what_the_key_reads(depot, setup):
    team, bucket, tok = setup["team"], setup["bucket"], setup["token"]
    key = scoped_key(depot, tok, {"model": f"{team}/resnet", "alias": "serving"})
    client = depot.client(access_key=key["access_key_id"], secret=key["secret_access_key"])
    expect_error("AccessDenied", 403, client.get_object, Bucket=bucket, Key="resnet/new.bin")
    assert call(depot, "POST", f"/api/v1/teams/{team}/models/resnet/versions", token=tok, body={}).status_code == 201
    assert call(depot, "PUT", f"/api/v1/teams/{team}/models/resnet/aliases/serving", token=tok,
                body={"version": 2}).status_code == 200
    assert client.get_object(Bucket=bucket, Key="resnet/new.bin")["Body"].read() == b"v2 only"
    assert call(depot, "PUT", f"/api/v1/teams/{team}/models/resnet/aliases/serving", token=tok,
                body={"version": 1}).status_code == 200
    expect_error("AccessDenied", 403, client.get_object, Bucket=bucket, Key="resnet/new.bin")


def test_a_deleted_alias_leaves_its_credentials_reading_nothing(depot, setup):
    """Issue 34 item 8: `prod` points at v1; a key and a token are scoped to {model, alias: prod}; prod is
    deleted and a writer freezes a draft labelled `prod`. The credentials resolved "prod" by name (labels
    before aliases) and read the unreviewed draft through the Hub API, the models view and REST (200). A
    scope is bound to the alias itself: deleted, it reads nothing, whatever later takes its name."""
    team, bucket, tok = setup["team"], setup["bucket"], setup["token"]
    s3 = depot.client("alice")
    model = "m8-" + secrets.token_hex(3)
    base = f"/api/v1/teams/{team}/models/{model}"
    s3.put_object(Bucket=bucket, Key=f"{model}/w.bin", Body=b"approved weights")
    assert call(depot, "POST", f"/api/v1/teams/{team}/models", token=tok,
                body={"name": model, "bucket": bucket, "prefix": f"{model}/"}).status_code == 201
    assert call(depot, "POST", f"{base}/versions", token=tok, body={}).status_code == 201
    assert call(depot, "PUT", f"{base}/aliases/prod", token=tok, body={"version": 1}).status_code == 200
    scope = {"model": f"{team}/{model}", "alias": "prod"}
    key = scoped_key(depot, tok, scope)
    r = call(depot, "POST", "/api/v1/tokens", token=tok, body={"scope": scope})
    assert r.status_code == 201, r.text
    scoped = r.json()["token"]
    client = depot.client(access_key=key["access_key_id"], secret=key["secret_access_key"])

    def hub(revision):
        return requests.get(f"{depot.endpoint}/{team}/{model}/resolve/{quote(revision, safe='')}/w.bin",
                            headers={"authorization": f"Bearer {scoped}"}, timeout=60)

    # While prod exists, the credentials read its files everywhere.
    assert hub("main").content == b"approved weights"
    assert client.get_object(Bucket="models", Key=f"{team}/{model}/prod/w.bin")["Body"].read() == \
        b"approved weights"
    assert call(depot, "GET", f"{base}/versions/prod", token=scoped).json()["number"] == 1

    assert call(depot, "DELETE", f"{base}/aliases/prod", token=tok).status_code == 204
    s3.put_object(Bucket=bucket, Key=f"{model}/w.bin", Body=b"unreviewed draft")
    r = call(depot, "POST", f"{base}/versions", token=tok, body={"label": "prod"})
    assert r.status_code == 201 and r.json()["state"] == "draft", r.text

    for revision in ("main", "prod", "2"):
        r = hub(revision)
        assert r.status_code in (403, 404) and b"draft" not in r.content, (revision, r.status_code)
    expect_error("NoSuchKey", 404, client.get_object, Bucket="models", Key=f"{team}/{model}/prod/w.bin")
    listed = client.list_objects_v2(Bucket="models", Prefix=f"{team}/{model}/prod/")
    assert listed.get("KeyCount", 0) == 0, listed.get("Contents")
    expect_error("AccessDenied", 403, client.get_object, Bucket=bucket, Key=f"{model}/w.bin")
    assert call(depot, "GET", f"{base}/versions/prod", token=scoped).status_code == 404
    assert call(depot, "GET", f"{base}/versions/prod/files", token=scoped).status_code == 404
    assert call(depot, "GET", f"{base}/aliases/prod", token=scoped).status_code == 404
    # Nothing was changed to make the above true: the draft is there for the owner.
    assert s3.get_object(Bucket="models", Key=f"{team}/{model}/prod/w.bin")["Body"].read() == b"unreviewed draft"


def test_an_alias_scope_needs_an_existing_alias(depot, setup):
    """A scope is bound to the alias it names when the credential is made; a name no alias has is refused
    (it could later be taken by anything) and no credential is made."""
    team, tok = setup["team"], setup["token"]
    before = len(call(depot, "GET", "/api/v1/tokens", token=tok).json()["items"])
    r = call(depot, "POST", "/api/v1/tokens", token=tok,
             body={"scope": {"model": f"{team}/resnet", "alias": "nonexistent"}})
    assert_problem(r, 400, "invalid-argument")
    assert "no alias 'nonexistent'" in r.json()["detail"]
    assert len(call(depot, "GET", "/api/v1/tokens", token=tok).json()["items"]) == before


def test_a_revoked_key_is_refused_on_the_next_request(depot, setup):
    key = scoped_key(depot, setup["token"], {"read_only": True})
    client = depot.client(access_key=key["access_key_id"], secret=key["secret_access_key"])
    assert client.get_object(Bucket=setup["bucket"], Key="resnet/config.json")["Body"].read() == b"{}"
    expect_error("AccessDenied", 403, client.put_object, Bucket=setup["bucket"], Key="x", Body=b"x")
    assert call(depot, "DELETE", f"/api/v1/keys/{key['access_key_id']}", token=setup["token"]).status_code == 204
    expect_error("InvalidAccessKeyId", 403, client.get_object, Bucket=setup["bucket"], Key="resnet/config.json")
    # Revoking twice: it is no longer there to revoke.
    assert_problem(call(depot, "DELETE", f"/api/v1/keys/{key['access_key_id']}", token=setup["token"]), 404,
                   "not-found")


def test_bucket_and_prefix_keys_stay_inside(depot, setup):
    bucket = setup["bucket"]
    key = scoped_key(depot, setup["token"], {"bucket": bucket, "prefix": "bert/"})
    client = depot.client(access_key=key["access_key_id"], secret=key["secret_access_key"])
    client.put_object(Bucket=bucket, Key="bert/extra.bin", Body=b"e")
    assert [o["Key"] for o in client.list_objects_v2(Bucket=bucket, Prefix="bert/")["Contents"]] == [
        "bert/extra.bin", "bert/weights.bin"]
    expect_error("AccessDenied", 403, client.list_objects_v2, Bucket=bucket)
    expect_error("AccessDenied", 403, client.get_object, Bucket=bucket, Key="resnet/weights.bin")
    expect_error("AccessDenied", 403, client.copy_object, Bucket=bucket, Key="bert/copy",
                 CopySource={"Bucket": bucket, "Key": "resnet/weights.bin"})
    other = unique_bucket_name("scoped-other")
    expect_error("AccessDenied", 403, client.create_bucket, Bucket=other)
    client.delete_object(Bucket=bucket, Key="bert/extra.bin")


def test_scoped_tokens_and_precise_problems_for_bad_scopes(depot, setup):
    tok, team = setup["token"], setup["team"]
    r = call(depot, "POST", "/api/v1/tokens", token=tok, body={"name": "ro", "scope": {"read_only": True},
                                                               "expires_in": 3600})
    ro = validate(r, "POST", "/api/v1/tokens")
    assert ro["scope"] == {"read_only": True} and ro["expires_at"] and ro["token"].startswith("dpt_")
    assert call(depot, "GET", f"/api/v1/teams/{team}", token=ro["token"]).status_code == 200
    assert_problem(call(depot, "POST", "/api/v1/tokens", token=ro["token"], body={}), 403, "access-denied")
    r = call(depot, "POST", "/api/v1/tokens", token=tok, body={"scope": {"model": f"{team}/resnet"}})
    model_token = validate(r, "POST", "/api/v1/tokens")["token"]
    assert call(depot, "GET", f"/api/v1/teams/{team}/models/resnet", token=model_token).status_code == 200
    assert_problem(call(depot, "GET", f"/api/v1/teams/{team}/models/bert", token=model_token), 403,
                   "access-denied")
    listed = validate(call(depot, "GET", "/api/v1/tokens", token=tok), "GET", "/api/v1/tokens")
    assert ro["id"] in {t["id"] for t in listed["items"]}
    assert all("token" not in t for t in listed["items"])
    assert call(depot, "DELETE", f"/api/v1/tokens/{ro['id']}", token=tok).status_code == 204
    assert call(depot, "GET", "/api/v1/whoami", token=ro["token"]).status_code == 401
    for body, why in (({"scope": {"colour": "red"}}, "Unknown scope member"),
                      ({"scope": {"prefix": "p/"}}, "needs scope.bucket"),
                      ({"scope": {"alias": "a"}}, "needs scope.model"),
                      ({"scope": {"model": "no-slash"}}, "TEAM/MODEL"),
                      ({"scope": {"model": f"{team}/missing"}}, "no such model"),
                      ({"scope": {"bucket": "not-a-bucket-of-alice"}}, "no such bucket"),
                      ({"scope": "read_only"}, "must be an object"),
                      ({"expires_in": 0}, "expires_in"),
                      ({"user": "bob"}, None)):
        r = call(depot, "POST", "/api/v1/keys", token=tok, body=body)
        if why is None:  # alice is an installation admin: she may create bob's keys
            assert validate(r, "POST", "/api/v1/keys")["user"] == "bob"
            continue
        problem = assert_problem(r, 400, "invalid-argument")
        assert why in problem["detail"], problem
    bob = token_for(depot, "bob")["token"]
    assert_problem(call(depot, "POST", "/api/v1/keys", token=bob, body={"user": "alice"}), 403, "access-denied")
    # Another user's token is as absent as an unknown one.
    assert_problem(call(depot, "DELETE", f"/api/v1/tokens/{model_token.split('_')[1]}", token=bob), 404,
                   "not-found")


def test_depotctl_creates_scoped_keys(depot, setup):
    team = setup["team"]
    out = json.loads(depot.depotctl("key", "create", "alice", "--model", f"{team}/resnet", "--alias", "serving",
                                    "--expires-in", "600", "--json").stdout)
    assert out["scope"] == {"model": f"{team}/resnet", "alias": "serving", "read_only": True}
    client = depot.client(access_key=out["access_key_id"], secret=out["secret_access_key"])
    assert client.get_object(Bucket="models", Key=f"{team}/resnet/serving/config.json")["Body"].read() == b"{}"
    expect_error("AccessDenied", 403, client.put_object, Bucket=setup["bucket"], Key="resnet/x", Body=b"x")
    proc = depot.depotctl("key", "create", "alice", "--prefix", "p/", check=False)
    assert proc.returncode == 2 and "needs scope.bucket" in proc.stderr
    tok = json.loads(depot.depotctl("token", "create", "alice", "--read-only", "--json").stdout)["token"]
    assert_problem(call(depot, "POST", "/api/v1/teams", token=tok, body={"name": "x"}), 403, "access-denied")
