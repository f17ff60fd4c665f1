"""The model registry end to end: a team uploads a model directory with the aws cli, freezes versions of it
through the REST API, changes the working prefix, and still reads every old version byte for byte through
the read-only S3 view (s3://models/<team>/<model>/<ref>/<path>); the approval workflow (two approvers,
self-approval refused, protected aliases, rejection); alias moves visible to readers at once; concurrent
version creation; teams that cannot see each other. Every response is checked against openapi/openapi.yaml.
"""

from __future__ import annotations

import filecmp
import hashlib
import os
import re
import secrets
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import requests

from depot_harness import expect_error, unique_bucket_name
from rest import assert_problem, call, token_for, validate

VIEW = "models"
BIG = 9 << 20  # above the aws cli's 8 MiB multipart threshold: the version must hash it itself


@pytest.fixture(scope="module")
def team(depot):
    """A team with bob (writer), carol and dave (maintainers); erin belongs to another team."""
    for user in ("carol", "dave", "erin"):
        if user not in depot.users:
            depot.add_user(user, user.title())
    depot.write_client_configs()
    tokens = {u: token_for(depot, u)["token"] for u in ("alice", "bob", "carol", "dave", "erin")}
    name = "vision-" + secrets.token_hex(3)
    r = call(depot, "POST", "/api/v1/teams", token=tokens["alice"], body={"name": name})
    assert validate(r, "POST", "/api/v1/teams")["name"] == name, r.text
    for user, role in (("bob", "writer"), ("carol", "maintainer"), ("dave", "maintainer")):
        r = call(depot, "PUT", f"/api/v1/teams/{name}/members/{user}", token=tokens["alice"], body={"role": role})
        assert validate(r, "PUT", "/api/v1/teams/{team}/members/{user}")["role"] == role
    other = "nlp-" + secrets.token_hex(3)
    assert call(depot, "POST", "/api/v1/teams", token=tokens["alice"], body={"name": other}).status_code == 201
    assert call(depot, "PUT", f"/api/v1/teams/{other}/members/erin", token=tokens["alice"],
                body={"role": "admin"}).status_code == 200
    return {"name": name, "other": other, "tokens": tokens}


def api(depot, team, method, path, user="bob", **kw):
    return call(depot, method, f"/api/v1/teams/{team['name']}{path}", token=team["tokens"][user], **kw)


def make_model_dir(root: Path) -> Path:
    root.mkdir(parents=True)
    (root / "config.json").write_bytes(b'{"layers": 50}')
    (root / "weights").mkdir()
    (root / "weights" / "shard-0.bin").write_bytes(os.urandom(300_000))
    (root / "weights" / "shard-1.bin").write_bytes(os.urandom(BIG))
    (root / "tokenizer.txt").write_bytes(b"a b c\n")
    return root


def sha_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def tree_digests(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): sha_of(p) for p in root.rglob("*") if p.is_file()}


@pytest.fixture(scope="module")
def model(depot, team, tmp_path_factory):
    """bob's bucket with a model directory uploaded by the aws cli, and the model bound to it."""
    bucket = unique_bucket_name("models")
    depot.aws("s3", "mb", f"s3://{bucket}", user="bob")
    src = make_model_dir(tmp_path_factory.mktemp("model") / "resnet")
    depot.aws("s3", "cp", "--recursive", "--no-progress", str(src), f"s3://{bucket}/work/resnet/", user="bob")
    r = api(depot, team, "POST", "/models", body={"name": "resnet", "bucket": bucket, "prefix": "work/resnet/",
                                                  "description": "image classifier"})
    body = validate(r, "POST", "/api/v1/teams/{team}/models")
    assert (body["bucket"], body["prefix"], body["version_count"]) == (bucket, "work/resnet/", 0)
    assert body["policy"] == {"required_approvals": 1, "approver_role": "maintainer",
                              "protected_aliases": ["production"], "four_eyes": "author_and_submitter"}
    assert r.headers["ETag"] == '"r1"'
    return {"bucket": bucket, "src": src, "name": "resnet"}


def view_get(depot, team, ref: str, path: str, user="bob") -> bytes:
    client = depot.client(user)
    return client.get_object(Bucket=VIEW, Key=f"{team['name']}/resnet/{ref}/{path}")["Body"].read()


def download(depot, team, ref: str, dest: Path, user="bob") -> Path:
    depot.aws("s3", "cp", "--recursive", "--no-progress", f"s3://{VIEW}/{team['name']}/resnet/{ref}/", str(dest),
              user=user)
    return dest


def test_versions_freeze_files_and_old_versions_read_back_byte_identical(depot, team, model, tmp_path):
    src = model["src"]
    r = api(depot, team, "POST", "/models/resnet/versions",
            body={"label": "v1.0.0", "framework": "pytorch", "format": "safetensors",
                  "metrics": {"top1": 0.761}, "labels": {"dataset": "imagenet"}, "run_url": "https://runs/1"})
    v1 = validate(r, "POST", "/api/v1/teams/{team}/models/{model}/versions")
    assert (v1["number"], v1["label"], v1["state"], v1["aliases"]) == (1, "v1.0.0", "draft", ["latest"])
    assert v1["file_count"] == 4 and v1["total_bytes"] == sum(p.stat().st_size for p in src.rglob("*") if p.is_file())
    assert v1["metrics"] == {"top1": 0.761}

    # The manifest has every file's SHA-256, also for the one the aws cli uploaded in parts.
    r = api(depot, team, "GET", "/models/resnet/versions/1/files")
    files = validate(r, "GET", "/api/v1/teams/{team}/models/{model}/versions/{version}/files")
    assert {f["path"]: f["sha256"] for f in files["items"]} == tree_digests(src)
    assert files["next_cursor"] is None
    # Pagination with cursors walks the same manifest.
    seen, cursor = [], None
    while True:
        q = "?limit=1" + (f"&cursor={cursor}" if cursor else "")
        page = validate(api(depot, team, "GET", f"/models/resnet/versions/v1.0.0/files{q}"), "GET",
                        "/api/v1/teams/{team}/models/{model}/versions/{version}/files")
        seen += [f["path"] for f in page["items"]]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert seen == sorted(tree_digests(src))

    # Change, delete and add files in the working prefix, then freeze version 2.
    bucket = model["bucket"]
    s3 = depot.client("bob")
    s3.put_object(Bucket=bucket, Key="work/resnet/config.json", Body=b'{"layers": 101}')
    s3.delete_object(Bucket=bucket, Key="work/resnet/tokenizer.txt")
    s3.put_object(Bucket=bucket, Key="work/resnet/README.md", Body=b"# resnet\n")
    v2 = validate(api(depot, team, "POST", "/models/resnet/versions", body={"parent": 1}), "POST",
                  "/api/v1/teams/{team}/models/{model}/versions")
    assert (v2["number"], v2["parent"], v2["label"]) == (2, 1, None)
    d = validate(api(depot, team, "GET", "/models/resnet/versions/2/diff?against=1"), "GET",
                 "/api/v1/teams/{team}/models/{model}/versions/{version}/diff")
    assert [f["path"] for f in d["added"]] == ["README.md"]
    assert [f["path"] for f in d["removed"]] == ["tokenizer.txt"]
    assert [c["path"] for c in d["changed"]] == ["config.json"]

    # Now wipe the working prefix entirely and collect garbage: the versions keep their bytes.
    for key in ("config.json", "README.md", "weights/shard-0.bin", "weights/shard-1.bin"):
        s3.delete_object(Bucket=bucket, Key=f"work/resnet/{key}")
    depot.depotctl("gc", "--grace", "0", *depot.storage_args())
    assert depot.depotctl("fsck", *depot.storage_args(), check=False).returncode == 0

    # Version 1 reads back byte for byte through the view: by number, label and alias, with aws cli and boto3.
    for ref in ("1", "v1.0.0"):
        out = download(depot, team, ref, tmp_path / ref)
        assert tree_digests(out) == tree_digests(src)
    assert view_get(depot, team, "2", "config.json") == b'{"layers": 101}'
    assert view_get(depot, team, "latest", "README.md") == b"# resnet\n"
    shard = (src / "weights" / "shard-1.bin").read_bytes()
    got = depot.client("bob").get_object(Bucket=VIEW, Key=f"{team['name']}/resnet/1/weights/shard-1.bin",
                                         Range="bytes=1000-1999")
    assert got["Body"].read() == shard[1000:2000] and got["ContentRange"] == f"bytes 1000-1999/{BIG}"
    head = depot.client("bob").head_object(Bucket=VIEW, Key=f"{team['name']}/resnet/v1.0.0/weights/shard-1.bin")
    assert head["ContentLength"] == BIG
    assert filecmp.cmp(src / "config.json", tmp_path / "1" / "config.json", shallow=False)
    expect_error("NoSuchKey", 404, depot.client("bob").get_object, Bucket=VIEW,
                 Key=f"{team['name']}/resnet/2/tokenizer.txt")


def test_the_view_lists_like_a_bucket(depot, team, model):
    s3 = depot.client("bob")
    root = s3.list_objects_v2(Bucket=VIEW, Delimiter="/")
    # bob's teams (other test modules may have made him a member of theirs), never erin's.
    teams = [p["Prefix"] for p in root.get("CommonPrefixes", [])]
    assert team["name"] + "/" in teams and team["other"] + "/" not in teams and teams == sorted(teams)
    refs = s3.list_objects_v2(Bucket=VIEW, Prefix=f"{team['name']}/resnet/", Delimiter="/")
    names = [p["Prefix"].split("/")[2] for p in refs["CommonPrefixes"]]
    assert names == sorted(names, key=lambda n: n + "/") and {"1", "latest", "v1.0.0"} <= set(names)
    # One entry per page, continuation tokens across the refs.
    paged, token = [], None
    while True:
        kw = {"ContinuationToken": token} if token else {}
        page = s3.list_objects_v2(Bucket=VIEW, Prefix=f"{team['name']}/resnet/", Delimiter="/", MaxKeys=1, **kw)
        paged += [p["Prefix"] for p in page.get("CommonPrefixes", [])]
        if not page["IsTruncated"]:
            break
        token = page["NextContinuationToken"]
    assert paged == [p["Prefix"] for p in refs["CommonPrefixes"]]
    files = s3.list_objects_v2(Bucket=VIEW, Prefix=f"{team['name']}/resnet/1/")
    assert sorted(o["Key"].split("/", 3)[3] for o in files["Contents"]) == sorted(tree_digests(model["src"]))
    # The view is read-only.
    expect_error("AccessDenied", 403, s3.put_object, Bucket=VIEW, Key=f"{team['name']}/resnet/1/x", Body=b"x")
    expect_error("AccessDenied", 403, s3.delete_object, Bucket=VIEW, Key=f"{team['name']}/resnet/1/config.json")
    expect_error("InvalidBucketName", 400, s3.create_bucket, Bucket=VIEW)


def test_approval_flow_and_protected_aliases(depot, team, model):
    base = "/models/resnet"
    depot.aws("s3", "cp", "--recursive", "--no-progress", str(model["src"]), f"s3://{model['bucket']}/work/resnet/",
              user="bob")
    # Two approvals for this model (a policy change needs a team admin, and If-Match guards it).
    r = api(depot, team, "PATCH", base, body={"policy": {"required_approvals": 2}})
    assert_problem(r, 403, "access-denied")
    r = api(depot, team, "GET", base, user="alice")
    etag = r.headers["ETag"]
    r = api(depot, team, "PATCH", base, user="alice", body={"policy": {"required_approvals": 2}},
            headers={"If-Match": '"r999"'})
    assert_problem(r, 412, "precondition-failed")
    r = api(depot, team, "PATCH", base, user="alice", body={"policy": {"required_approvals": 2}},
            headers={"If-Match": etag})
    assert validate(r, "PATCH", "/api/v1/teams/{team}/models/{model}")["policy"]["required_approvals"] == 2
    assert r.headers["ETag"] != etag

    v = validate(api(depot, team, "POST", f"{base}/versions", body={"label": "rc1"}), "POST",
                 "/api/v1/teams/{team}/models/{model}/versions")
    n = v["number"]
    vpath = f"{base}/versions/{n}"
    # Unapproved: the protected alias refuses it; an unprotected one takes it.
    assert_problem(api(depot, team, "PUT", f"{base}/aliases/production", user="carol", body={"version": n}), 409,
                   "conflict")
    assert api(depot, team, "PUT", f"{base}/aliases/staging", user="carol", body={"version": "rc1"}).status_code == 200
    # Approving a draft is refused; bob submits; bob cannot approve his own submission; writers cannot approve.
    assert_problem(api(depot, team, "POST", f"{vpath}/approve", user="carol", body={}), 409, "conflict")
    r = api(depot, team, "POST", f"{vpath}/submit", body={"comment": "ready"})
    assert validate(r, "POST", "/api/v1/teams/{team}/models/{model}/versions/{version}/submit")["state"] == "pending"
    assert_problem(api(depot, team, "POST", f"{vpath}/approve", body={}), 403, "access-denied")
    r = api(depot, team, "POST", f"{vpath}/approve", user="carol", body={"comment": "metrics ok"})
    one = validate(r, "POST", "/api/v1/teams/{team}/models/{model}/versions/{version}/approve")
    assert (one["state"], one["approvals"]) == ("pending", ["carol"])
    assert_problem(api(depot, team, "POST", f"{vpath}/approve", user="carol", body={}), 409, "conflict")
    assert_problem(api(depot, team, "PUT", f"{base}/aliases/production", user="carol", body={"version": n}), 409,
                   "conflict")
    two = validate(api(depot, team, "POST", f"{vpath}/approve", user="dave"), "POST",
                   "/api/v1/teams/{team}/models/{model}/versions/{version}/approve")
    assert (two["state"], two["approvals"]) == ("approved", ["carol", "dave"])
    # Writers cannot move aliases; maintainers can, and readers see the move at once.
    assert_problem(api(depot, team, "PUT", f"{base}/aliases/production", body={"version": n}), 403, "access-denied")
    r = api(depot, team, "PUT", f"{base}/aliases/production", user="carol", body={"version": n})
    alias = validate(r, "PUT", "/api/v1/teams/{team}/models/{model}/aliases/{alias}")
    assert (alias["version"], alias["protected"]) == (n, True)
    assert view_get(depot, team, "production", "config.json", user="dave") == view_get(depot, team, str(n),
                                                                                       "config.json")

    # A second candidate is rejected: it stays unreleased.
    s3 = depot.client("bob")
    s3.put_object(Bucket=model["bucket"], Key="work/resnet/config.json", Body=b'{"layers": 152}')
    bad = validate(api(depot, team, "POST", f"{base}/versions", body={}), "POST",
                   "/api/v1/teams/{team}/models/{model}/versions")["number"]
    api(depot, team, "POST", f"{base}/versions/{bad}/submit")
    r = api(depot, team, "POST", f"{base}/versions/{bad}/reject", user="dave", body={"comment": "regressed"})
    assert validate(r, "POST", "/api/v1/teams/{team}/models/{model}/versions/{version}/reject")["state"] == "rejected"
    assert_problem(api(depot, team, "PUT", f"{base}/aliases/production", user="carol", body={"version": bad}), 409,
                   "conflict")
    assert_problem(api(depot, team, "POST", f"{base}/versions/{bad}/approve", user="carol"), 409, "conflict")
    assert view_get(depot, team, "production", "config.json") != b'{"layers": 152}'
    assert view_get(depot, team, "latest", "config.json") == b'{"layers": 152}'

    # Resubmitted and approved twice, it moves production; a download through the alias sees it immediately.
    api(depot, team, "POST", f"{base}/versions/{bad}/submit")
    api(depot, team, "POST", f"{base}/versions/{bad}/approve", user="carol")
    api(depot, team, "POST", f"{base}/versions/{bad}/approve", user="dave")
    assert api(depot, team, "PUT", f"{base}/aliases/production", user="dave", body={"version": bad}).status_code == 200
    assert view_get(depot, team, "production", "config.json") == b'{"layers": 152}'

    # Archiving: an alias to an archived version no longer resolves; its number still does.
    assert api(depot, team, "PUT", f"{base}/aliases/old", user="carol", body={"version": n}).status_code == 200
    r = api(depot, team, "POST", f"{vpath}/archive", user="carol", body={"comment": "superseded"})
    assert validate(r, "POST", "/api/v1/teams/{team}/models/{model}/versions/{version}/archive")["state"] == "archived"
    expect_error("NoSuchKey", 404, depot.client("bob").get_object, Bucket=VIEW,
                 Key=f"{team['name']}/resnet/old/config.json")
    assert view_get(depot, team, str(n), "config.json")
    assert_problem(api(depot, team, "PUT", f"{base}/aliases/staging", user="carol", body={"version": n}), 409,
                   "conflict")

    # Every transition is on record with who, when and why.
    hist = validate(api(depot, team, "GET", f"{vpath}/history", user="carol"), "GET",
                    "/api/v1/teams/{team}/models/{model}/versions/{version}/history")
    trail = [(e["action"], e["actor"], e["comment"]) for e in hist["items"] if e["action"] != "alias_set"]
    assert trail == [("created", "bob", ""), ("submitted", "bob", "ready"), ("approval", "carol", "metrics ok"),
                     ("approval", "dave", ""), ("archived", "carol", "superseded")]
    assert hist["items"][-1]["from_state"] == "approved" and hist["items"][-1]["to_state"] == "archived"
    aliases = validate(api(depot, team, "GET", f"{base}/aliases", user="carol"), "GET",
                       "/api/v1/teams/{team}/models/{model}/aliases")
    assert {a["name"]: a["version"] for a in aliases["items"]}["production"] == bad
    assert api(depot, team, "DELETE", f"{base}/aliases/old", user="carol").status_code == 204
    assert_problem(api(depot, team, "DELETE", f"{base}/aliases/old", user="carol"), 404, "not-found")
    model_hist = validate(api(depot, team, "GET", f"{base}/history?limit=5"), "GET",
                          "/api/v1/teams/{team}/models/{model}/history")
    assert len(model_hist["items"]) == 5 and model_hist["next_cursor"]


def test_concurrent_version_creation_yields_distinct_numbers(depot, team, model):
    before = validate(api(depot, team, "GET", "/models/resnet"), "GET",
                      "/api/v1/teams/{team}/models/{model}")["version_count"]
    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(lambda i: api(depot, team, "POST", "/models/resnet/versions",
                                              body={"description": f"run {i}"}), range(8)))
    assert all(r.status_code == 201 for r in results), [r.text for r in results]
    numbers = sorted(r.json()["number"] for r in results)
    assert numbers == list(range(before + 1, before + 9))
    versions = validate(api(depot, team, "GET", "/models/resnet/versions?limit=3"), "GET",
                        "/api/v1/teams/{team}/models/{model}/versions")
    assert [v["number"] for v in versions["items"]] == [before + 8, before + 7, before + 6]


def test_other_teams_see_nothing_and_bad_input_changes_nothing(depot, team, model):
    erin = team["tokens"]["erin"]
    # Outside the team: every resource answers 404, as if it did not exist.
    for path in ("", "/models", "/models/resnet", "/models/resnet/versions/1", "/members"):
        assert_problem(call(depot, "GET", f"/api/v1/teams/{team['name']}{path}", token=erin), 404, "not-found")
    assert team["name"] not in [t["name"] for t in validate(call(depot, "GET", "/api/v1/teams", token=erin), "GET",
                                                             "/api/v1/teams")["items"]]
    erin_s3 = depot.client("erin")
    listed = erin_s3.list_objects_v2(Bucket=VIEW, Delimiter="/")
    # erin's own team has no model yet, so the view holds no key for her at all.
    assert listed.get("CommonPrefixes", []) == [] and listed.get("Contents", []) == []
    expect_error("NoSuchKey", 404, erin_s3.get_object, Bucket=VIEW, Key=f"{team['name']}/resnet/1/config.json")
    assert_problem(call(depot, "POST", "/api/v1/teams", token=team["tokens"]["bob"], body={"name": "x"}), 403,
                   "access-denied")

    # Bad input: precise problems, and no version, model or alias appears.
    rows = depot.db.table_counts()
    versions_before = depot.db.scalar("SELECT count(*) FROM model_versions")
    bad = [
        ("POST", "/models", {"name": "Bad Name", "bucket": model["bucket"], "prefix": "x/"}, 400),
        ("POST", "/models", {"name": "m2", "bucket": model["bucket"], "prefix": "no-slash"}, 400),
        ("POST", "/models", {"name": "m3", "bucket": "no-such-bucket-xyz", "prefix": ""}, 404),
        ("POST", "/models", {"name": "resnet", "bucket": model["bucket"], "prefix": "work/resnet/"}, 409),
        ("POST", "/models/resnet/versions", {"label": "123"}, 400),
        ("POST", "/models/resnet/versions", {"label": "v1.0.0"}, 409),
        ("POST", "/models/resnet/versions", {"parent": 9999}, 400),
        ("POST", "/models/resnet/versions", {"metrics": [1, 2]}, 400),
        ("POST", "/models/resnet/versions", {"colour": "blue"}, 400),
        ("PUT", "/models/resnet/aliases/9lives", {"version": 1}, 400),
        ("PUT", "/models/resnet/aliases/v1.0.0", {"version": 1}, 409),
        ("PUT", "/models/resnet/aliases/canary", {"version": 4242}, 404),
        ("GET", "/models/resnet/versions/1/diff", None, 400),
        ("GET", "/models/resnet/versions?limit=0", None, 400),
        ("GET", "/models/resnet/versions?cursor=garbage", None, 400),
        ("GET", "/models/nope", None, 404),
    ]
    for method, path, body, status in bad:
        user = "carol" if "/aliases/" in path else "bob"
        r = api(depot, team, method, path, user=user, body=body)
        assert r.status_code == status, (method, path, r.status_code, r.text)
        assert r.headers["Content-Type"] == "application/problem+json"
    assert depot.db.scalar("SELECT count(*) FROM model_versions") == versions_before
    assert depot.db.table_counts() == rows
    # A reader cannot create versions.
    assert api(depot, team, "PUT", "/members/erin", user="alice", body={"role": "reader"}).status_code == 200
    assert_problem(call(depot, "POST", f"/api/v1/teams/{team['name']}/models/resnet/versions", token=erin, body={}),
                   403, "access-denied")
    assert api(depot, team, "DELETE", "/members/erin", user="alice").status_code == 204


def test_version_from_multipart_uploads_commits_all_or_nothing(depot, team, model):
    """POST .../versions with `uploads`: the multipart uploads are completed into the prefix in the version's
    transaction. A bad part in one upload leaves every upload open, no object and no version."""
    s3, bucket = depot.client("bob"), model["bucket"]
    bodies = {"late/a.bin": os.urandom(5 << 20) + b"a-tail", "late/b.bin": b"b" * 1000}

    def start(path: str) -> dict:
        key = "work/resnet/" + path
        upload_id = s3.create_multipart_upload(Bucket=bucket, Key=key)["UploadId"]
        data, parts, n = bodies[path], [], 1
        for offset in range(0, len(data), 5 << 20):
            etag = s3.upload_part(Bucket=bucket, Key=key, UploadId=upload_id, PartNumber=n,
                                  Body=data[offset:offset + (5 << 20)])["ETag"]
            parts.append({"part_number": n, "etag": etag})
            n += 1
        return {"path": path, "upload_id": upload_id, "parts": parts}

    uploads = [start(p) for p in bodies]
    open_uploads = lambda: {u["UploadId"] for u in s3.list_multipart_uploads(Bucket=bucket).get("Uploads", [])}
    assert {u["upload_id"] for u in uploads} <= open_uploads()
    count = validate(api(depot, team, "GET", "/models/resnet"), "GET", "/api/v1/teams/{team}/models/{model}")[
        "version_count"]

    # One wrong ETag, an unknown upload, a path listed twice, a malformed part: nothing changes.
    wrong = [uploads[0], {**uploads[1], "parts": [{"part_number": 1, "etag": '"' + "0" * 32 + '"'}]}]
    rows = depot.db.table_counts()
    for body, status, kind in (
        ({"uploads": wrong}, 400, "invalid-part"),
        ({"uploads": [{**uploads[0], "upload_id": "nope"}]}, 404, "no-such-upload"),
        ({"uploads": [uploads[0], uploads[0]]}, 400, "invalid-argument"),
        ({"uploads": [{**uploads[0], "parts": [{"part_number": 0, "etag": "x"}]}]}, 400, "invalid-argument"),
        ({"uploads": []}, 400, "invalid-argument"),
    ):
        assert_problem(api(depot, team, "POST", "/models/resnet/versions", body=body), status, kind)
    assert depot.db.table_counts() == rows
    assert {u["upload_id"] for u in uploads} <= open_uploads()
    for path in bodies:
        expect_error("NoSuchKey", 404, s3.get_object, Bucket=bucket, Key="work/resnet/" + path)

    # Right: both uploads become objects and the version holds them (and the rest of the prefix).
    r = api(depot, team, "POST", "/models/resnet/versions", body={"uploads": uploads, "description": "late files"})
    v = validate(r, "POST", "/api/v1/teams/{team}/models/{model}/versions")
    assert v["number"] == count + 1
    assert not ({u["upload_id"] for u in uploads} & open_uploads())
    files = {f["path"]: f for f in api(depot, team, "GET", f"/models/resnet/versions/{v['number']}/files").json()[
        "items"]}
    for path, data in bodies.items():
        assert files[path]["sha256"] == hashlib.sha256(data).hexdigest() and files[path]["size"] == len(data)
        assert s3.get_object(Bucket=bucket, Key="work/resnet/" + path)["Body"].read() == data
        assert view_get(depot, team, str(v["number"]), path) == data
    # Completed uploads cannot be completed again.
    assert_problem(api(depot, team, "POST", "/models/resnet/versions", body={"uploads": uploads[:1]}), 404,
                   "no-such-upload")


def test_four_eyes_the_author_cannot_approve_what_another_account_submitted(depot, team, model):
    """Issue 34 item 12: dave (maintainer) creates a version, the writer bob (a CI account) submits it, dave
    approves it: it was approved. The approver must differ from the author as well as the submitter; a model
    may also exclude everyone who wrote one of its files (policy four_eyes: all_contributors)."""
    s3, bucket = depot.client("bob"), model["bucket"]
    name = "fe-" + secrets.token_hex(3)
    s3.put_object(Bucket=bucket, Key=f"{name}/w.bin", Body=b"written by bob")
    r = api(depot, team, "POST", "/models", body={"name": name, "bucket": bucket, "prefix": f"{name}/"})
    created = validate(r, "POST", "/api/v1/teams/{team}/models")
    assert created["policy"]["four_eyes"] == "author_and_submitter"
    base = f"/models/{name}"
    v = validate(api(depot, team, "POST", f"{base}/versions", user="dave", body={}), "POST",
                 "/api/v1/teams/{team}/models/{model}/versions")["number"]
    assert api(depot, team, "POST", f"{base}/versions/{v}/submit", body={}).status_code == 200
    problem = assert_problem(api(depot, team, "POST", f"{base}/versions/{v}/approve", user="dave", body={}), 403,
                             "access-denied")
    assert problem["detail"] == "The author of a version cannot approve it"
    got = api(depot, team, "GET", f"{base}/versions/{v}").json()
    assert (got["state"], got["approvals"]) == ("pending", [])
    assert api(depot, team, "POST", f"{base}/versions/{v}/approve", user="carol", body={}).json()["state"] == \
        "approved"

    # The stricter rule, set by a team admin: who wrote a file (bob here; alice below) cannot approve either.
    assert_problem(api(depot, team, "PATCH", base, user="alice", body={"policy": {"four_eyes": "everyone"}}), 400,
                   "invalid-argument")
    r = api(depot, team, "PATCH", base, user="alice", body={"policy": {"four_eyes": "all_contributors"}})
    assert validate(r, "PATCH", "/api/v1/teams/{team}/models/{model}")["policy"]["four_eyes"] == "all_contributors"
    # (Only the bucket's owner and installation admins write into a bucket in which models live.)
    depot.client("alice").put_object(Bucket=bucket, Key=f"{name}/extra.bin", Body=b"written by alice")
    v2 = api(depot, team, "POST", f"{base}/versions", user="dave", body={}).json()["number"]
    assert api(depot, team, "POST", f"{base}/versions/{v2}/submit", body={}).status_code == 200
    # alice wrote a file, dave authored it: both refused; a maintainer who did neither approves.
    problem = assert_problem(api(depot, team, "POST", f"{base}/versions/{v2}/approve", user="alice", body={}), 403,
                             "access-denied")
    assert "wrote a file" in problem["detail"]
    assert_problem(api(depot, team, "POST", f"{base}/versions/{v2}/approve", user="dave", body={}), 403,
                   "access-denied")
    assert api(depot, team, "GET", f"{base}/versions/{v2}").json()["state"] == "pending"
    assert api(depot, team, "POST", f"{base}/versions/{v2}/approve", user="carol", body={}).json()["state"] == \
        "approved"


def test_a_writers_label_never_takes_a_name_an_alias_is_resolved_by(depot, team, model):
    """A writer labelled a draft `production` (a protected alias of the default policy) or `main` (the Hub's
    default revision): 201, and the unreviewed files were then served under that name through the Hub API,
    the models view and REST, while the maintainer's alias could never be set (409). Such labels are 409 now,
    and nothing is created."""
    versions = depot.db.scalar("SELECT count(*) FROM model_versions")
    for label in ("production", "main", "HEAD", "latest"):
        r = api(depot, team, "POST", "/models/resnet/versions", body={"label": label})
        problem = assert_problem(r, 409, "conflict")
        assert "reserved for an alias" in problem["detail"], problem
    assert depot.db.scalar("SELECT count(*) FROM model_versions") == versions
    r = api(depot, team, "POST", "/models/resnet/versions", body={"label": "production-candidate"})
    assert r.status_code == 201, r.text


def test_an_approval_counts_only_while_its_approver_may_still_approve(depot, team, model):
    """An attacker's finding: with two approvals required, carol approved, was removed from the team, and
    dave's approval then made the version approved. An approval counts toward the policy only while its
    approver holds the approver role (or is an installation admin)."""
    tokens = team["tokens"]
    name = "quorum-" + secrets.token_hex(3)
    assert call(depot, "POST", "/api/v1/teams", token=tokens["alice"], body={"name": name}).status_code == 201
    for user, role in (("bob", "writer"), ("carol", "maintainer"), ("dave", "maintainer"), ("erin", "maintainer")):
        assert call(depot, "PUT", f"/api/v1/teams/{name}/members/{user}", token=tokens["alice"],
                    body={"role": role}).status_code == 200
    own = {"name": name, "tokens": tokens}
    r = api(depot, own, "POST", "/models", user="alice",
            body={"name": "quorum", "bucket": model["bucket"], "prefix": f"{name}/",
                  "policy": {"required_approvals": 2}})
    assert r.status_code == 201, r.text
    depot.client("bob").put_object(Bucket=model["bucket"], Key=f"{name}/w.bin", Body=b"weights")
    number = api(depot, own, "POST", "/models/quorum/versions", body={}).json()["number"]
    vpath = f"/models/quorum/versions/{number}"
    assert api(depot, own, "POST", f"{vpath}/submit", body={}).json()["state"] == "pending"
    assert api(depot, own, "POST", f"{vpath}/approve", user="carol", body={}).json()["state"] == "pending"
    assert call(depot, "DELETE", f"/api/v1/teams/{name}/members/carol", token=tokens["alice"]).status_code == 204
    # dave's is the only approval that counts now: still pending.
    r = api(depot, own, "POST", f"{vpath}/approve", user="dave", body={})
    assert r.status_code == 200 and r.json()["state"] == "pending", r.text
    # A demoted approver no longer counts either; a second current maintainer completes it.
    assert call(depot, "PUT", f"/api/v1/teams/{name}/members/dave", token=tokens["alice"],
                body={"role": "writer"}).status_code == 200
    r = api(depot, own, "POST", f"{vpath}/approve", user="erin", body={})
    assert r.status_code == 200 and r.json()["state"] == "pending", r.text
    assert call(depot, "PUT", f"/api/v1/teams/{name}/members/dave", token=tokens["alice"],
                body={"role": "maintainer"}).status_code == 200
    assert api(depot, own, "GET", vpath).json()["state"] == "pending"  # counted at an approval, not later
    r = api(depot, own, "POST", f"{vpath}/approve", user="alice", body={})
    assert r.status_code == 200 and r.json()["state"] == "approved", r.text


def test_a_label_or_alias_never_takes_the_form_of_a_commit_id(depot, team, model):
    """An attacker's finding: a writer labelled a draft with an approved version's commit id (201). The Hub
    resolved the 40 hex digits to the approved version, but the models view, REST and depotctl resolve names
    first and served the draft: one revision string, two versions, the unreviewed one to whoever pinned the
    commit outside /resolve. Labels and aliases of that form are 400 now, and nothing is created."""
    base = "/models/resnet"
    r = api(depot, team, "POST", f"{base}/versions", body={"label": "commit-source"})
    assert r.status_code == 201, r.text
    number = r.json()["number"]
    repo = f"{team['name']}/resnet"
    info = requests.get(f"{depot.endpoint}/api/models/{repo}/revision/{number}",
                        headers={"authorization": f"Bearer {team['tokens']['bob']}"}, timeout=60)
    assert info.status_code == 200, info.text
    commit = info.json()["sha"]
    assert re.fullmatch(r"[0-9a-f]{40}", commit), commit
    versions = depot.db.scalar("SELECT count(*) FROM model_versions")
    aliases = depot.db.scalar("SELECT count(*) FROM model_aliases")
    for label in (commit, commit.upper()):
        problem = assert_problem(api(depot, team, "POST", f"{base}/versions", body={"label": label}), 400,
                                 "invalid-argument")
        assert "hexadecimal" in problem["detail"], problem
    # An alias of that form (a maintainer's, starting with a letter as aliases do) is refused as well.
    shaped = "b" + commit[1:]
    problem = assert_problem(api(depot, team, "PUT", f"{base}/aliases/{shaped}", user="carol",
                                 body={"version": number}), 400, "invalid-argument")
    assert "hexadecimal" in problem["detail"], problem
    assert depot.db.scalar("SELECT count(*) FROM model_versions") == versions
    assert depot.db.scalar("SELECT count(*) FROM model_aliases") == aliases
    # 39 or 41 hex digits are ordinary names.
    r = api(depot, team, "POST", f"{base}/versions", body={"label": commit[:39]})
    assert r.status_code == 201, r.text


def test_a_models_own_approval_policy_is_set_by_a_team_admin_at_creation_too(depot, team, model):
    """The attacker's request: bob (writer) created a model with `policy` {approver_role: reader,
    protected_aliases: []} (201), which PATCH refuses him (403), and a reader then approved bob's version.
    Creating a model with a policy needs the team admin role as changing it does; nothing is created."""
    bucket = api(depot, team, "GET", "/models/resnet").json()["bucket"]
    lax = {"required_approvals": 1, "approver_role": "reader", "protected_aliases": []}
    models = depot.db.scalar("SELECT count(*) FROM models")
    for user in ("bob", "carol"):  # a writer, a maintainer
        r = api(depot, team, "POST", "/models", user=user,
                body={"name": f"lax-{user}", "bucket": bucket, "prefix": f"lax-{user}/", "policy": lax})
        assert_problem(r, 403, "access-denied")
        assert api(depot, team, "GET", f"/models/lax-{user}").status_code == 404
    assert depot.db.scalar("SELECT count(*) FROM models") == models
    # Without a policy the writer's model takes the team's; an installation admin may set one.
    r = api(depot, team, "POST", "/models", body={"name": "plain", "bucket": bucket, "prefix": "plain/"})
    assert r.status_code == 201 and r.json()["policy"]["approver_role"] == "maintainer", r.text
    r = api(depot, team, "POST", "/models", user="alice",
            body={"name": "lax-admin", "bucket": bucket, "prefix": "lax-admin/", "policy": lax})
    assert r.status_code == 201 and r.json()["policy"]["approver_role"] == "reader", r.text


def test_a_model_never_overlaps_another_teams_model(depot, s3, team):
    """The attacker's request (second attack, N8): a writer of one team, who could use the bucket, created a
    model over the whole bucket for a second team of theirs, then froze and read the first team's model files
    through it (the second team's readers could too). A prefix that holds, or lies inside, another team's
    model prefix in the same bucket is 409 and nothing is created; one team's models may still nest, and
    another team may take a prefix beside them."""
    alice = team["tokens"]["alice"]
    second = "second-" + secrets.token_hex(3)
    assert call(depot, "POST", "/api/v1/teams", token=alice, body={"name": second}).status_code == 201
    assert call(depot, "PUT", f"/api/v1/teams/{second}/members/bob", token=alice,
                body={"role": "writer"}).status_code == 200
    bucket = unique_bucket_name("overlap")
    depot.client("bob").create_bucket(Bucket=bucket)
    r = api(depot, team, "POST", "/models", body={"name": "held", "bucket": bucket, "prefix": "w/a/"})
    assert r.status_code == 201, r.text
    models = depot.db.scalar("SELECT count(*) FROM models")
    audit = depot.db.scalar("SELECT count(*) FROM audit_log")
    for i, prefix in enumerate(("", "w/", "w/a/", "w/a/sub/")):
        r = call(depot, "POST", f"/api/v1/teams/{second}/models", token=team["tokens"]["bob"],
                 body={"name": f"over{i}", "bucket": bucket, "prefix": prefix})
        problem = assert_problem(r, 409, "conflict")
        assert second not in problem["detail"] and team["name"] not in problem["detail"], problem
    assert depot.db.scalar("SELECT count(*) FROM models") == models
    assert depot.db.scalar("SELECT count(*) FROM audit_log") == audit
    r = call(depot, "POST", f"/api/v1/teams/{second}/models", token=team["tokens"]["bob"],
             body={"name": "beside", "bucket": bucket, "prefix": "w/b/"})
    assert r.status_code == 201, r.text
    r = api(depot, team, "POST", "/models", body={"name": "nested", "bucket": bucket, "prefix": "w/a/sub/"})
    assert r.status_code == 201, r.text


@pytest.mark.parametrize("path", ["../escape.bin", "a/../../escape.bin", "./here.bin", "a//b.bin", "/rooted.bin",
                                  "dir/", "a\\..\\..\\escape.bin", "a/..", "C:/Windows/escape.bin", "c:escape.bin",
                                  ".. /escape.bin", "a/... /b.bin", "a/ /b.bin", "bell\x07.bin", "w.bin.",
                                  "w.bin ", "dir./w.bin", "CON", "sub/aux.txt", "com1"],
                         ids=["dotdot", "inner-dotdot", "dot", "empty-segment", "leading-slash", "trailing-slash",
                              "backslash-dotdot", "ends-in-dotdot", "drive", "drive-relative", "dotdot-space",
                              "dots-space", "space-segment", "control", "trailing-dot", "trailing-space",
                              "dir-trailing-dot", "device", "device-ext", "device-lower"])
def test_a_version_never_holds_a_path_that_leaves_its_directory(depot, s3, team, path):
    """The attacker's request (second attack, N5): a writer stored `<prefix>../escape.bin` (a valid S3 key)
    and froze a version; the Hub's tree, the REST manifest and the webhook payload served the path as it is,
    and the README's example receiver joined it onto its cache directory, writing outside it. Freezing a
    version with such a path is 400 naming the file, and nothing is created."""
    bucket = unique_bucket_name("paths")
    depot.client("bob").create_bucket(Bucket=bucket)
    name = "paths-" + secrets.token_hex(3)
    r = api(depot, team, "POST", "/models", body={"name": name, "bucket": bucket, "prefix": f"{name}/"})
    assert r.status_code == 201, r.text
    bob = depot.client("bob")
    bob.put_object(Bucket=bucket, Key=f"{name}/config.json", Body=b"{}")
    bob.put_object(Bucket=bucket, Key=f"{name}/{path}", Body=b"payload")
    versions = depot.db.scalar("SELECT count(*) FROM model_versions")
    files = depot.db.scalar("SELECT count(*) FROM model_files")
    # The attacker's request (A7): Windows clients read a drive letter as absolute and drop trailing dots
    # and spaces ('.. ' is '..' there); these froze.
    problem = assert_problem(api(depot, team, "POST", f"/models/{name}/versions", body={}), 400, "invalid-argument")
    assert path in problem["detail"], problem
    assert depot.db.scalar("SELECT count(*) FROM model_versions") == versions
    assert depot.db.scalar("SELECT count(*) FROM model_files") == files
    # Renamed, the files freeze.
    bob.delete_object(Bucket=bucket, Key=f"{name}/{path}")
    for ok in ("weights/ok..bin", "weights/.hidden", "step:100/a b.bin", "dir. x/f", "console.json", "auxiliary/x"):
        bob.put_object(Bucket=bucket, Key=f"{name}/{ok}", Body=b"payload")
    r = api(depot, team, "POST", f"/models/{name}/versions", body={})
    assert r.status_code == 201, r.text


def test_a_version_a_protected_alias_points_at_cannot_be_deprecated(depot, team):
    """The attacker's request (first attack, F6): a maintainer deprecated the version `production` points at
    (200), and the Hub's `resolve/production` and the models view went on serving it. A protected alias points
    only at an approved version, so deprecating the one it points at is 409 naming the alias, and nothing
    changes; moved to another approved version first, the old one deprecates."""
    bucket = unique_bucket_name("deprecate")
    bob = depot.client("bob")
    bob.create_bucket(Bucket=bucket)
    name = "dep-" + secrets.token_hex(3)
    base = f"/models/{name}"
    assert api(depot, team, "POST", "/models", body={"name": name, "bucket": bucket, "prefix": f"{name}/"}
               ).status_code == 201
    numbers = []
    for body in (b"one", b"two"):
        bob.put_object(Bucket=bucket, Key=f"{name}/w.bin", Body=body)
        n = api(depot, team, "POST", f"{base}/versions", body={}).json()["number"]
        assert api(depot, team, "POST", f"{base}/versions/{n}/submit", body={}).status_code == 200
        r = api(depot, team, "POST", f"{base}/versions/{n}/approve", user="carol", body={})
        assert r.json()["state"] == "approved", r.text
        numbers.append(n)
    one, two = numbers
    assert api(depot, team, "PUT", f"{base}/aliases/production", user="carol", body={"version": one}).status_code == 200
    history = depot.db.scalar("SELECT count(*) FROM model_events")
    problem = assert_problem(api(depot, team, "POST", f"{base}/versions/{one}/deprecate", user="carol", body={}), 409,
                             "conflict")
    assert "production" in problem["detail"], problem
    # Nor archived (this session's attacker, A5: the alias then resolved to nothing).
    problem = assert_problem(api(depot, team, "POST", f"{base}/versions/{one}/archive", user="carol", body={}), 409,
                             "conflict")
    assert "production" in problem["detail"], problem
    assert api(depot, team, "GET", f"{base}/versions/{one}").json()["state"] == "approved"
    assert depot.db.scalar("SELECT count(*) FROM model_events") == history
    assert bob.get_object(Bucket=VIEW, Key=f"{team['name']}/{name}/production/w.bin")["Body"].read() == b"one"
    # An unprotected alias does not hold a deprecation back.
    assert api(depot, team, "PUT", f"{base}/aliases/canary", user="carol", body={"version": one}).status_code == 200
    assert api(depot, team, "PUT", f"{base}/aliases/production", user="carol", body={"version": two}).status_code == 200
    r = api(depot, team, "POST", f"{base}/versions/{one}/deprecate", user="carol", body={})
    assert r.status_code == 200 and r.json()["state"] == "deprecated", r.text


def test_a_policy_protects_no_name_a_draft_holds(depot):
    """The attacker's requests (attack on 9927a94, #3): a writer labelled a draft `staging`; a team admin then
    protected `staging` (200), and the name served the writer's draft for ever while the real alias could
    never be set. Likewise an alias pointing at a draft was made protected, `latest` included. A policy
    now refuses (409) to protect a version's label or an alias at a version that is not approved, and
    nothing changes; a name that holds nothing yet can be protected."""
    admin = token_for(depot, "alice")["token"]
    bob = token_for(depot, "bob")["token"]
    team = "prot-" + secrets.token_hex(3)
    bucket = unique_bucket_name("prot")
    depot.client("alice").create_bucket(Bucket=bucket)
    depot.client("alice").put_object(Bucket=bucket, Key="m/w.bin", Body=b"draft weights")
    base = f"/api/v1/teams/{team}"
    assert call(depot, "POST", "/api/v1/teams", token=admin, body={"name": team}).status_code == 201
    assert call(depot, "PUT", f"{base}/members/bob", token=admin, body={"role": "writer"}).status_code == 200
    assert call(depot, "POST", f"{base}/models", token=admin,
                body={"name": "m", "bucket": bucket, "prefix": "m/"}).status_code == 201
    assert call(depot, "POST", f"{base}/models/m/versions", token=bob, body={"label": "staging"}).status_code == 201
    assert call(depot, "PUT", f"{base}/models/m/aliases/qa", token=admin, body={"version": 1}).status_code == 200
    before = call(depot, "GET", f"{base}/models/m", token=admin).json()
    for names in (["production", "staging"], ["production", "qa"], ["production", "latest"]):
        r = call(depot, "PATCH", f"{base}/models/m", token=admin, body={"policy": {"protected_aliases": names}})
        assert_problem(r, 409, "conflict")
    after = call(depot, "GET", f"{base}/models/m", token=admin).json()
    assert after["policy"] == before["policy"]
    r = call(depot, "PATCH", f"{base}/models/m", token=admin,
             body={"policy": {"protected_aliases": ["production", "canary"]}})
    assert r.status_code == 200, r.text
