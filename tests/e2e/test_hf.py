"""The Hugging Face Hub-compatible endpoint (src/server/hf/): `@huggingface/hub` (npm) lists, downloads and
snapshot-downloads a model revision from Depot byte for byte, by alias, label, number and commit id; a
replay of the requests Python `huggingface_hub` sends for `snapshot_download` and `hf_hub_download` (read
from its source: model info, then per file HEAD with Accept-Encoding: identity and no redirects, then GET at
the commit) gets the headers its cache relies on; errors are the Hub's (401/403/404 with X-Error-Code);
token scopes and team membership hold; downloads are audited; an alias-scoped key pulls with depotctl.

Needs node >= 20 and tests/e2e/js/node_modules (scripts/js-deps).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import secrets
import shutil
from pathlib import Path
from urllib.parse import quote

import pytest
import requests

from depot_harness import clean_env, run, unique_bucket_name
from rest import call, token_for, validate

HERE = Path(__file__).resolve().parent
JS = HERE / "js"

FILES_V1 = {
    "config.json": b'{"architectures": ["ResNet"], "v": 1}',
    "model.safetensors": os.urandom(3 * 1024 * 1024 + 17),
    "tokenizer/vocab.txt": "a b c ü\n".encode(),
    "tokenizer/nested/merges.txt": b"x y\n",
    "empty.txt": b"",
}
FILES_V2 = {**FILES_V1, "config.json": b'{"architectures": ["ResNet"], "v": 2}', "extra.bin": b"only in v2"}


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@pytest.fixture(scope="module")
def hub(depot):
    """Team hf-*: model resnet (v1 labelled "v1", aliases stable -> 1 and latest -> 2) and model bert;
    bob is a reader of the team, erin belongs to no team."""
    for user in ("erin",):
        if user not in depot.users:
            depot.add_user(user, user.title())
    admin = token_for(depot, "alice")["token"]
    team = "hf-" + secrets.token_hex(3)
    bucket = unique_bucket_name("hf")
    s3 = depot.client("alice")
    s3.create_bucket(Bucket=bucket)
    assert call(depot, "POST", "/api/v1/teams", token=admin, body={"name": team}).status_code == 201
    assert call(depot, "PUT", f"/api/v1/teams/{team}/members/bob", token=admin,
                body={"role": "reader"}).status_code == 200
    for name in ("resnet", "bert"):
        r = call(depot, "POST", f"/api/v1/teams/{team}/models", token=admin,
                 body={"name": name, "bucket": bucket, "prefix": f"{name}/"})
        assert r.status_code == 201, r.text
    for path, body in FILES_V1.items():
        s3.put_object(Bucket=bucket, Key=f"resnet/{path}", Body=body)
    s3.put_object(Bucket=bucket, Key="bert/config.json", Body=b"{}")
    base = f"/api/v1/teams/{team}/models"
    assert call(depot, "POST", f"{base}/resnet/versions", token=admin, body={"label": "v1"}).status_code == 201
    assert call(depot, "POST", f"{base}/bert/versions", token=admin, body={}).status_code == 201
    for path, body in FILES_V2.items():
        s3.put_object(Bucket=bucket, Key=f"resnet/{path}", Body=body)
    assert call(depot, "POST", f"{base}/resnet/versions", token=admin, body={}).status_code == 201
    assert call(depot, "PUT", f"{base}/resnet/aliases/stable", token=admin,
                body={"version": 1}).status_code == 200
    bob = token_for(depot, "bob")["token"]
    return {"team": team, "bucket": bucket, "admin": admin, "bob": bob, "repo": f"{team}/resnet"}


def hf_headers(token: str | None, **extra) -> dict:
    """What huggingface_hub's build_hf_headers sends."""
    h = {"user-agent": "huggingface_hub/0.26.2; python/3.11; torch/2.4.0", **extra}
    if token:
        h["authorization"] = f"Bearer {token}"
    return h


def model_info(depot, token, repo, revision=None):
    path = f"/api/models/{repo}" + (f"/revision/{quote(revision, safe='')}" if revision else "")
    return requests.get(depot.endpoint + path, headers=hf_headers(token), timeout=60)


def head_file(depot, token, repo, revision, filename):
    """get_hf_file_metadata: HEAD, Accept-Encoding identity, redirects not followed."""
    url = f"{depot.endpoint}/{repo}/resolve/{quote(revision, safe='')}/{quote(filename)}"
    return requests.head(url, headers=hf_headers(token, **{"Accept-Encoding": "identity"}),
                         allow_redirects=False, timeout=60)


def get_file(depot, token, repo, revision, filename, **headers):
    url = f"{depot.endpoint}/{repo}/resolve/{quote(revision, safe='')}/{quote(filename)}"
    return requests.get(url, headers=hf_headers(token, **headers), timeout=120)


def normalize_etag(etag: str | None) -> str | None:
    """huggingface_hub's _normalize_etag: strips a weak marker and the quotes."""
    if etag is None:
        return None
    return etag.lstrip("W/").strip('"')


def snapshot_download_replay(depot, token, repo, revision):
    """The request sequence of huggingface_hub's snapshot_download: model info at the revision (sha,
    siblings), then hf_hub_download of every sibling at the commit: HEAD (metadata) then GET."""
    info = model_info(depot, token, repo, revision)
    assert info.status_code == 200, (info.status_code, info.headers, info.text)
    body = info.json()
    commit = body["sha"]
    assert re.fullmatch(r"[0-9a-f]{40}", commit)
    got = {}
    for sibling in body["siblings"]:
        name = sibling["rfilename"]
        meta = head_file(depot, token, repo, commit, name)
        assert meta.status_code == 200, (name, meta.status_code, meta.headers)
        assert meta.headers["X-Repo-Commit"] == commit
        etag = normalize_etag(meta.headers.get("X-Linked-Etag") or meta.headers.get("ETag"))
        size = int(meta.headers.get("X-Linked-Size") or meta.headers["Content-Length"])
        assert etag and size == sibling["size"]
        data = get_file(depot, token, repo, commit, name)
        assert data.status_code == 200 and len(data.content) == size
        # The cache names the blob by the etag: for an LFS file, its SHA-256.
        assert etag == sha(data.content), name
        got[name] = data.content
    return commit, got


def test_python_snapshot_download_sequence_gets_every_file_at_one_commit(depot, hub):
    token = "hf_" + hub["bob"]
    for revision, files in (("stable", FILES_V1), ("v1", FILES_V1), ("1", FILES_V1), ("2", FILES_V2),
                            ("latest", FILES_V2), (None, FILES_V2)):
        commit, got = snapshot_download_replay(depot, token, hub["repo"], revision)
        assert got == files, revision
    # The commit id is stable, names one version, and resolves as a revision.
    c1 = model_info(depot, token, hub["repo"], "1").json()["sha"]
    assert model_info(depot, token, hub["repo"], "stable").json()["sha"] == c1
    assert model_info(depot, token, hub["repo"], "v1").json()["sha"] == c1
    c2 = model_info(depot, token, hub["repo"], "2").json()["sha"]
    assert c1 != c2
    assert model_info(depot, token, hub["repo"], c1).json()["depot"]["version"] == 1
    # The plain Depot token works as well.
    assert model_info(depot, hub["bob"], hub["repo"], c2).json()["sha"] == c2


def test_python_hf_hub_download_headers_ranges_and_missing_files(depot, hub):
    token = "hf_" + hub["bob"]
    repo = hub["repo"]
    body = FILES_V1["model.safetensors"]
    meta = head_file(depot, token, repo, "stable", "model.safetensors")
    assert meta.status_code == 200
    h = meta.headers
    assert h["ETag"] == f'"{sha(body)}"' and h["X-Linked-Etag"] == f'"{sha(body)}"'
    assert h["X-Linked-Size"] == str(len(body)) and h["Content-Length"] == str(len(body))
    assert h["Accept-Ranges"] == "bytes" and meta.content == b""
    commit = h["X-Repo-Commit"]
    # A resumed download: a Range GET.
    part = get_file(depot, token, repo, commit, "model.safetensors", Range="bytes=1000-")
    assert part.status_code == 206 and part.content == body[1000:]
    assert part.headers["Content-Range"] == f"bytes 1000-{len(body) - 1}/{len(body)}"
    # A revision with a slash is sent %2F-quoted; a file in a directory keeps its slashes.
    assert get_file(depot, token, repo, "stable", "tokenizer/nested/merges.txt").content == b"x y\n"
    # A file the revision does not have: 404 EntryNotFound with the commit (the client caches .no_exist).
    missing = head_file(depot, token, repo, "stable", "extra.bin")
    assert (missing.status_code, missing.headers["X-Error-Code"]) == (404, "EntryNotFound")
    assert missing.headers["X-Repo-Commit"] == commit
    missing = get_file(depot, token, repo, "stable", "nope/none.bin")
    assert (missing.status_code, missing.headers["X-Error-Code"]) == (404, "EntryNotFound")
    assert missing.json()["error"]
    # An unknown revision and an unknown repo.
    r = head_file(depot, token, repo, "no-such-alias", "config.json")
    assert (r.status_code, r.headers["X-Error-Code"]) == (404, "RevisionNotFound")
    r = model_info(depot, token, repo, "refs/pr/1")
    assert (r.status_code, r.headers["X-Error-Code"]) == (404, "RevisionNotFound")
    r = model_info(depot, token, f"{hub['team']}/nothing")
    assert (r.status_code, r.headers["X-Error-Code"]) == (404, "RepoNotFound")
    # Tree and paths-info as Python's list_repo_tree / get_paths_info send them.
    tree = requests.get(f"{depot.endpoint}/api/models/{repo}/tree/stable",
                        params={"recursive": True, "expand": False}, headers=hf_headers(token), timeout=60)
    assert tree.status_code == 200
    files = {e["path"]: e for e in tree.json() if e["type"] == "file"}
    assert set(files) == set(FILES_V1)
    assert files["model.safetensors"]["lfs"]["oid"] == sha(body)
    assert {e["path"] for e in tree.json() if e["type"] == "directory"} == {"tokenizer", "tokenizer/nested"}
    sub = requests.get(f"{depot.endpoint}/api/models/{repo}/tree/stable/tokenizer", headers=hf_headers(token),
                       timeout=60).json()
    assert [(e["type"], e["path"]) for e in sub] == [("directory", "tokenizer/nested"), ("file", "tokenizer/vocab.txt")]
    info = requests.post(f"{depot.endpoint}/api/models/{repo}/paths-info/stable",
                         data={"paths": ["config.json", "tokenizer", "absent"], "expand": True},
                         headers=hf_headers(token), timeout=60)
    assert info.status_code == 200
    assert sorted((e["type"], e["path"]) for e in info.json()) == [("directory", "tokenizer"), ("file", "config.json")]
    # A JSON body naming "paths" twice was answered for the second list: refused, as every JSON body is.
    dup = requests.post(f"{depot.endpoint}/api/models/{repo}/paths-info/stable",
                        data=b'{"paths": ["config.json"], "paths": ["absent"]}',
                        headers=hf_headers(token, **{"Content-Type": "application/json"}), timeout=60)
    assert dup.status_code == 400 and "twice" in dup.text, (dup.status_code, dup.text)


def test_errors_and_scopes_are_the_hubs(depot, hub):
    repo, team = hub["repo"], hub["team"]
    # No token: 401 RepoNotFound (what the Hub answers for a private repo); a bad token: 401.
    r = model_info(depot, None, repo)
    assert (r.status_code, r.headers["X-Error-Code"]) == (401, "RepoNotFound")
    r = model_info(depot, "hf_dpt_notatoken", repo)
    assert r.status_code == 401 and r.headers["X-Error-Message"] == "Invalid credentials in Authorization header"
    # A user outside the team: 404 RepoNotFound, as for a repo that does not exist.
    erin = token_for(depot, "erin")["token"]
    r = model_info(depot, "hf_" + erin, repo)
    assert (r.status_code, r.headers["X-Error-Code"]) == (404, "RepoNotFound")
    assert get_file(depot, "hf_" + erin, repo, "stable", "config.json").status_code == 404
    # A model-scoped token reads its model, at any revision, and no other model (403, before any lookup).
    r = call(depot, "POST", "/api/v1/tokens", token=hub["bob"], body={"scope": {"model": f"{team}/bert"}})
    bert = "hf_" + validate(r, "POST", "/api/v1/tokens")["token"]
    assert model_info(depot, bert, f"{team}/bert").status_code == 200
    assert model_info(depot, bert, repo).status_code == 403
    assert get_file(depot, bert, repo, "1", "config.json").status_code == 403
    assert model_info(depot, bert, f"{team}/nothing").status_code == 403
    # An alias-scoped token reads exactly the version the alias points to: by the alias, by "main" (what
    # clients ask for without a revision), by that version's commit; nothing else.
    r = call(depot, "POST", "/api/v1/tokens", token=hub["bob"],
             body={"scope": {"model": f"{team}/resnet", "alias": "stable"}})
    prod = "hf_" + validate(r, "POST", "/api/v1/tokens")["token"]
    commit, got = snapshot_download_replay(depot, prod, repo, "stable")
    assert got == FILES_V1
    assert model_info(depot, prod, repo).json()["sha"] == commit
    assert get_file(depot, prod, repo, commit, "config.json").content == FILES_V1["config.json"]
    for revision in ("2", "latest"):
        r = get_file(depot, prod, repo, revision, "config.json")
        assert r.status_code == 403, revision
    assert model_info(depot, prod, f"{team}/bert", "1").status_code == 403
    # Moving the alias moves what the token reads, and the commit it reports.
    assert call(depot, "PUT", f"/api/v1/teams/{team}/models/resnet/aliases/stable", token=hub["admin"],
                body={"version": 2}).status_code == 200
    try:
        moved = model_info(depot, prod, repo, "stable").json()["sha"]
        assert moved != commit
        assert get_file(depot, prod, repo, "stable", "extra.bin").content == b"only in v2"
        assert get_file(depot, prod, repo, commit, "config.json").status_code == 403
    finally:
        assert call(depot, "PUT", f"/api/v1/teams/{team}/models/resnet/aliases/stable", token=hub["admin"],
                    body={"version": 1}).status_code == 200


def test_hub_refuses_text_postgresql_cannot_hold_before_authenticating(depot, hub):
    """Issue 34 item 11: the Hub pipeline skipped the UTF-8/NUL validation S3 and REST run: a NUL or an
    invalid UTF-8 byte in a team, model, revision, path or query reached the token lookup and the
    registry's queries. Now 400 before anything is looked up, with or without a token."""
    team = hub["team"]
    for path in (f"/api/models/{team}/res%00net", f"/api/models/{team}/%ff", f"/{team}/resnet/resolve/ma%00in/x",
                 f"/{team}/resnet/resolve/main/con%c3fig.json", f"/api/models/{team}/resnet?x=%00"):
        for token in (hub["bob"], None, "dpt_" + secrets.token_hex(16)):
            r = requests.get(depot.endpoint + path, headers=hf_headers(token), timeout=60)
            assert r.status_code == 400 and "UTF-8" in r.json()["error"], (path, r.status_code, r.text)


def test_s3_requests_for_hub_shaped_keys_are_answered_by_s3(depot, hub):
    """Issue 34 item 14: the pipeline was chosen by the path's shape, so an S3 GET of a key such as
    bucket/model/resolve/main/file that was unsigned (a public grant) or presigned with SigV2 went to the Hub
    API (404 RepoNotFound, JSON). Now the request's credentials and host decide: S3 credentials are S3's,
    and an unsigned request is S3's when its first segment names a bucket."""
    import boto3
    import botocore.config

    bucket = unique_bucket_name("hfshape")
    s3 = depot.client("alice")
    s3.create_bucket(Bucket=bucket, ObjectOwnership="ObjectWriter")
    key = "model/resolve/main/file.txt"
    s3.put_object(Bucket=bucket, Key=key, Body=b"s3 bytes")
    u = depot.user("alice")
    v2 = boto3.session.Session().client(
        "s3", endpoint_url=depot.endpoint, region_name="us-east-1", aws_access_key_id=u.access_key,
        aws_secret_access_key=u.secret, config=botocore.config.Config(retries={"total_max_attempts": 1}))
    url = v2.generate_presigned_url("get_object", Params={"Bucket": bucket, "Key": key}, ExpiresIn=60)
    assert "AWSAccessKeyId=" in url
    r = requests.get(url, timeout=60)
    assert (r.status_code, r.content) == (200, b"s3 bytes"), r.text
    r = requests.head(v2.generate_presigned_url("head_object", Params={"Bucket": bucket, "Key": key}), timeout=60)
    assert r.status_code == 200 and r.headers["ETag"].strip('"') == hashlib.md5(b"s3 bytes").hexdigest()
    # Unsigned: private, S3 answers (XML AccessDenied, not the Hub's JSON) ...
    r = requests.get(f"{depot.endpoint}/{bucket}/{key}", timeout=60)
    assert r.status_code == 403 and b"<Code>AccessDenied</Code>" in r.content, r.text
    # ... and once a public grant allows it, the read.
    s3.put_object_acl(Bucket=bucket, Key=key, ACL="public-read")
    r = requests.get(f"{depot.endpoint}/{bucket}/{key}", timeout=60)
    assert (r.status_code, r.content) == (200, b"s3 bytes"), r.text
    assert requests.head(f"{depot.endpoint}/{bucket}/{key}", timeout=60).status_code == 200
    # Hub clients are unaffected: a token, or no token for a repo whose team is not a bucket name.
    r = requests.get(f"{depot.endpoint}/{hub['repo']}/resolve/stable/config.json", headers=hf_headers(hub["bob"]),
                     timeout=60)
    assert r.content == FILES_V1["config.json"]
    r = model_info(depot, None, hub["repo"])
    assert (r.status_code, r.headers["X-Error-Code"]) == (401, "RepoNotFound")


def test_a_public_bucket_named_like_a_team_never_answers_its_hub_paths(depot, hub):
    """The attacker's setup: bob makes a public bucket named like the team and stores
    `<model>/resolve/main/config.json` in it; an anonymous Hub client's GET of the team's repo then got bob's
    bytes from S3 (200) instead of the Hub's 401. A team keeps its Hub paths."""
    team, model = hub["repo"].split("/")
    s3 = depot.client("bob")
    s3.create_bucket(Bucket=team, ObjectOwnership="ObjectWriter")
    key = f"{model}/resolve/main/config.json"
    try:
        s3.put_object(Bucket=team, Key=key, Body=b'{"forged": true}', ACL="public-read")
        r = requests.get(f"{depot.endpoint}/{team}/{key}", timeout=60)
        assert r.status_code == 401 and b"forged" not in r.content, r.text
        assert r.headers["X-Error-Code"] == "RepoNotFound"
        # The bucket is still S3's for S3 credentials.
        assert s3.get_object(Bucket=team, Key=key)["Body"].read() == b'{"forged": true}'
    finally:
        s3.delete_object(Bucket=team, Key=key)
        s3.delete_bucket(Bucket=team)


def test_downloads_are_audited_as_model_downloads(depot, hub):
    token = "hf_" + hub["bob"]
    marker = secrets.token_hex(4)
    r = get_file(depot, token, hub["repo"], "v1", "config.json", **{"x-marker": marker})
    assert r.status_code == 200
    request_id = r.headers["X-Request-Id"]
    rows = depot.db.query(f"SELECT action, resource, outcome, details->>'via', details->>'version' FROM audit_log "
                          f"WHERE request_id = '{request_id}'")
    assert rows == [["model.download", f"models/{hub['repo']}/v1/config.json", "allowed", "hf", "1"]], rows
    # HEAD is not a download.
    r = head_file(depot, token, hub["repo"], "v1", "config.json")
    assert depot.db.query(f"SELECT 1 FROM audit_log WHERE request_id = '{r.headers['X-Request-Id']}'") == []


@pytest.fixture(scope="module")
def node() -> str:
    path = shutil.which("node", path="/usr/local/bin:/usr/bin:/bin")
    assert path, "node is not installed (the JavaScript tests need node >= 20)"
    assert (JS / "node_modules" / "@huggingface" / "hub").is_dir(), (
        "tests/e2e/js/node_modules is missing @huggingface/hub: run scripts/js-deps")
    return path


def hub_js(node, job: dict) -> dict:
    proc = run([node, str(JS / "hf_download.mjs"), json.dumps(job)], env=clean_env(), timeout=300, cwd=JS)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_huggingface_hub_js_downloads_a_revision_byte_for_byte(depot, hub, node, tmp_path):
    token = "hf_" + hub["bob"]
    commit1 = model_info(depot, token, hub["repo"], "1").json()["sha"]
    for revision, files in (("stable", FILES_V1), ("v1", FILES_V1), ("2", FILES_V2), (commit1, FILES_V1)):
        cache = tmp_path / f"cache-{revision}"
        out = hub_js(node, {"hubUrl": depot.endpoint, "token": token, "repo": hub["repo"], "revision": revision,
                            "cacheDir": str(cache), "files": sorted(files)})
        assert out["errors"] == {}, (revision, out["errors"])
        assert out["info"]["name"] == hub["repo"] and sorted(out["info"]["files"]) == sorted(files)
        listed = {e["path"]: e for e in out["tree"] if e["type"] == "file"}
        assert {p: e["size"] for p, e in listed.items()} == {p: len(b) for p, b in files.items()}
        assert all(e["lfs"]["oid"] == sha(files[p]) for p, e in listed.items())
        assert sorted(e["path"] for e in out["top"]) == sorted({p.split("/")[0] for p in files})
        want = {p: sha(b) for p, b in files.items()}
        assert out["downloads"] == want, revision
        # The snapshot folder is named by the commit and holds every file, byte for byte.
        assert Path(out["snapshot"]["folder"]).name == out["info"]["sha"]
        assert out["snapshot"]["files"] == want, revision
    # A missing file is null (the client reads 404 EntryNotFound); an unscoped other user's token fails.
    out = hub_js(node, {"hubUrl": depot.endpoint, "token": token, "repo": hub["repo"], "revision": "stable",
                        "files": ["extra.bin"]})
    assert out["downloads"] == {"extra.bin": None}
    erin = "hf_" + token_for(depot, "erin")["token"]
    out = hub_js(node, {"hubUrl": depot.endpoint, "token": erin, "repo": hub["repo"], "revision": "stable"})
    assert out["errors"]["info"]["status"] == 404


def test_an_alias_scoped_key_pulls_its_alias_with_depotctl(depot, hub, tmp_path):
    team = hub["team"]
    out = json.loads(depot.depotctl("key", "create", "bob", "--model", f"{team}/resnet", "--alias", "stable",
                                    "--json").stdout)
    env = clean_env({"DEPOT_ENDPOINT": depot.endpoint, "AWS_ACCESS_KEY_ID": out["access_key_id"],
                     "AWS_SECRET_ACCESS_KEY": out["secret_access_key"], "AWS_REGION": depot.region})
    if depot.ca_bundle:
        env["AWS_CA_BUNDLE"] = str(depot.ca_bundle)
    dest = tmp_path / "pulled"
    proc = run([str(depot.bin_dir / "depotctl"), "pull", f"{team}/resnet:stable", str(dest), "--json"],
               env=env, check=False, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["version"] == 1
    assert {p.relative_to(dest).as_posix(): p.read_bytes() for p in dest.rglob("*") if p.is_file()} == FILES_V1
    # The same key cannot pull another version.
    proc = run([str(depot.bin_dir / "depotctl"), "pull", f"{team}/resnet:2", str(tmp_path / "other")],
               env=env, check=False, timeout=300)
    assert proc.returncode != 0


def test_the_manifest_call_gives_presigned_urls_that_read_the_version(depot, hub):
    team = hub["team"]
    r = call(depot, "POST", "/api/v1/tokens", token=hub["bob"],
             body={"scope": {"model": f"{team}/resnet", "alias": "stable"}})
    prod = validate(r, "POST", "/api/v1/tokens")["token"]
    base = f"/api/v1/teams/{team}/models/resnet/versions"
    manifest = validate(call(depot, "GET", f"{base}/stable/manifest", token=prod), "GET",
                        "/api/v1/teams/{team}/models/{model}/versions/{version}/manifest")
    assert (manifest["version"], manifest["files_truncated"]) == (1, False)
    assert manifest["s3_prefix"] == f"s3://models/{team}/resnet/1/"
    assert {f["path"]: f["sha256"] for f in manifest["files"]} == {p: sha(b) for p, b in FILES_V1.items()}
    for f in manifest["files"]:
        got = requests.get(f["url"], timeout=60, verify=depot.verify)  # no credentials: the URL is enough
        assert got.status_code == 200 and sha(got.content) == f["sha256"], f["path"]
    # The alias-scoped token reaches only its alias's manifest.
    assert call(depot, "GET", f"{base}/2/manifest", token=prod).status_code == 403
