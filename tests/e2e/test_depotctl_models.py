"""depotctl as a model-registry client of a running depotd: `push` (upload avoidance: contents the server
already stores are never sent again, asserted on the server's byte counters), `pull` (parallel, SHA-256
verified, resumable), and the model / version / alias commands through the approval workflow, including
If-Match on alias moves and the failures a user meets (bad references, other teams, corrupted bytes).
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
from pathlib import Path

import pytest

from depot_harness import run, unique_bucket_name
from rest import call, token_for
from test_metrics import scrape


@pytest.fixture(scope="module")
def team(depot):
    """A team with bob (writer) and carol (maintainer); erin is only in another team."""
    for user in ("carol", "erin"):
        if user not in depot.users:
            depot.add_user(user, user.title())
    depot.write_client_configs()
    admin = token_for(depot, "alice")["token"]
    name = "ctl-" + secrets.token_hex(3)
    assert call(depot, "POST", "/api/v1/teams", token=admin, body={"name": name}).status_code == 201
    for user, role in (("bob", "writer"), ("carol", "maintainer")):
        r = call(depot, "PUT", f"/api/v1/teams/{name}/members/{user}", token=admin, body={"role": role})
        assert r.status_code == 200, r.text
    other = "ctl-other-" + secrets.token_hex(3)
    assert call(depot, "POST", "/api/v1/teams", token=admin, body={"name": other}).status_code == 201
    assert call(depot, "PUT", f"/api/v1/teams/{other}/members/erin", token=admin,
                body={"role": "admin"}).status_code == 200
    return {"name": name, "other": other}


def ctl(depot, *args: str, user: str = "bob", check: bool = True):
    """depotctl against the running depotd as `user` (the aws cli profile of that user)."""
    env = dict(depot.aws_env())
    env.update({"DEPOT_ENDPOINT": depot.endpoint, "AWS_PROFILE": user})
    if depot.ca_bundle:
        env["AWS_CA_BUNDLE"] = str(depot.ca_bundle)
    proc = run([str(depot.bin_dir / "depotctl"), *args], check=False, env=env, timeout=300)
    assert "Sanitizer" not in proc.stderr, proc.stderr
    if check:
        assert proc.returncode == 0, f"depotctl {' '.join(args)}: {proc.returncode}\n{proc.stderr}"
    return proc


def ctl_json(depot, *args: str, user: str = "bob"):
    return json.loads(ctl(depot, *args, "--json", user=user).stdout)


def digests(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def received_bytes(depot, operations=("PutObject", "UploadPart")) -> float:
    """Request body bytes depotd received for these operations (None: every request, REST calls too)."""
    family = scrape(depot.endpoint).families["depot_s3_received_bytes_total"]
    return sum(v for n, labels, v in family.samples if operations is None or labels.get("operation") in operations)


def s3_requests(depot, operation: str) -> float:
    family = scrape(depot.endpoint).families["depot_s3_requests_total"]
    return sum(v for n, labels, v in family.samples if labels.get("operation") == operation)


@pytest.fixture(scope="module")
def model(depot, team, tmp_path_factory):
    bucket = unique_bucket_name("ctl")
    depot.aws("s3", "mb", f"s3://{bucket}", user="bob")
    ref = f"{team['name']}/llm"
    created = ctl_json(depot, "model", "create", ref, "--bucket", bucket, "--prefix", "llm/",
                       "--description", "a language model")
    assert (created["bucket"], created["prefix"], created["version_count"]) == (bucket, "llm/", 0)

    src = tmp_path_factory.mktemp("push") / "llm"
    (src / "shards").mkdir(parents=True)
    tag = secrets.token_hex(4).encode()  # contents nobody stored before
    (src / "config.json").write_bytes(b'{"layers": 24, "tag": "%s"}' % tag)
    (src / "shards" / "model-00001.safetensors").write_bytes(os.urandom(12 << 20))  # multipart below
    (src / "shards" / "model-00002.safetensors").write_bytes(os.urandom(700_000))
    (src / "shards" / "copy-of-00002.safetensors").write_bytes((src / "shards" / "model-00002.safetensors").read_bytes())
    (src / "tokenizer vocab ü.txt").write_bytes(b"a b c " + tag)
    (src / "empty.txt").write_bytes(b"")
    return {"bucket": bucket, "ref": ref, "src": src, "tag": tag}


PUSH = ("--multipart-threshold", "8", "--part-size", "5", "--no-progress")


def test_push_twice_sends_no_file_bytes_and_pull_reads_every_version_back(depot, team, model, tmp_path):
    ref, src = model["ref"], model["src"]
    before = received_bytes(depot)
    first = ctl_json(depot, "push", str(src), ref, "--label", "v1", "--framework", "pytorch",
                     "--metrics", '{"loss": 1.5}', *PUSH)
    sizes = {p.relative_to(src).as_posix(): p.stat().st_size for p in src.rglob("*") if p.is_file()}
    unique_bytes = sum(sizes.values()) - sizes["shards/copy-of-00002.safetensors"]
    # The duplicate file is created from its digest after its twin was uploaded: its bytes go once. (The
    # empty file may be known already: its content is everybody's.)
    assert (first["files"], first["removed"]) == (6, 0)
    assert first["uploaded"] + first["deduplicated"] == 6 and first["uploaded"] in (4, 5)
    assert first["uploaded_bytes"] == unique_bytes
    assert received_bytes(depot) - before == unique_bytes
    v1 = first["version"]
    assert (v1["number"], v1["label"], v1["file_count"], v1["metrics"]) == (1, "v1", 6, {"loss": 1.5})

    # Unchanged directory: no PutObject, no UploadPart, not one body byte (the 12 MiB file went up in parts,
    # its SHA-256 was computed when version 1 froze it, and the lookup finds it now).
    before, everything = received_bytes(depot), received_bytes(depot, None)
    puts, parts = s3_requests(depot, "PutObject"), s3_requests(depot, "UploadPart")
    second = ctl_json(depot, "push", str(src), ref, *PUSH)
    assert (second["uploaded"], second["uploaded_bytes"], second["deduplicated"]) == (0, 0, 6)
    assert received_bytes(depot) - before == 0
    assert received_bytes(depot, None) - everything < 16 << 10  # only the JSON of the lookup and the creates
    assert (s3_requests(depot, "PutObject") - puts, s3_requests(depot, "UploadPart") - parts) == (0, 0)
    assert second["version"]["number"] == 2

    # Change one file, delete one, add one: only the new contents travel; the deleted one leaves the prefix.
    new_config, readme = b'{"layers": 48, "tag": "%s"}' % model["tag"], b"# llm " + model["tag"]
    (src / "config.json").write_bytes(new_config)
    (src / "empty.txt").unlink()
    (src / "README.md").write_bytes(readme)
    third = ctl_json(depot, "push", str(src), ref, "--label", "v3", *PUSH)
    assert (third["uploaded"], third["removed"], third["version"]["number"]) == (2, 1, 3)
    assert third["uploaded_bytes"] == len(new_config) + len(readme)

    diff = ctl_json(depot, "version", "diff", f"{ref}:3", "1")
    assert [f["path"] for f in diff["added"]] == ["README.md"]
    assert [f["path"] for f in diff["removed"]] == ["empty.txt"]
    assert [f["path"] for f in diff["changed"]] == ["config.json"]

    # Every version pulls back byte for byte: by number, by label, through `latest`.
    old = tmp_path / "v1"
    pulled = ctl_json(depot, "pull", f"{ref}:v1", str(old), "--parallel", "4")
    assert (pulled["version"], pulled["files"], pulled["downloaded"]) == (1, 6, 6)
    assert digests(old)["config.json"] == hashlib.sha256(b'{"layers": 24, "tag": "%s"}' % model["tag"]).hexdigest()
    assert (old / "empty.txt").read_bytes() == b""
    assert set(digests(old)) == set(sizes)
    latest = tmp_path / "latest"
    assert ctl_json(depot, "pull", ref, str(latest))["version"] == 3
    assert digests(latest) == digests(src)

    # Pulling again keeps what is already right and repairs what is not.
    (old / "shards" / "model-00002.safetensors").write_bytes(b"damaged")
    again = ctl_json(depot, "pull", f"{ref}:1", str(old))
    assert (again["downloaded"], again["unchanged"]) == (1, 5)
    assert digests(old)["shards/model-00002.safetensors"] == digests(src)["shards/model-00002.safetensors"]
    assert not list(old.rglob("*.depot-partial"))

    # Human output too.
    listing = ctl(depot, "version", "list", ref).stdout
    assert "version 3 (v3)" in listing and "version 1 (v1)" in listing
    shown = ctl(depot, "version", "show", f"{ref}:v1", "--files").stdout
    assert "shards/model-00001.safetensors" in shown and "draft" in shown


def test_approval_and_aliases_through_depotctl(depot, team, model, tmp_path):
    ref = model["ref"]
    if ctl_json(depot, "model", "show", ref)["version_count"] == 0:
        ctl_json(depot, "push", str(model["src"]), ref, *PUSH)
    number = str(ctl_json(depot, "version", "create", ref, "--label", "rc-" + secrets.token_hex(2))["number"])
    assert ctl_json(depot, "version", "submit", f"{ref}:{number}")["state"] == "pending"

    # The submitter cannot approve; a writer cannot either; the maintainer can.
    refused = ctl(depot, "version", "approve", f"{ref}:{number}", check=False)
    assert refused.returncode == 1 and "403" in refused.stderr, refused.stderr
    approved = ctl_json(depot, "version", "approve", f"{ref}:{number}", "--comment", "looks good", user="carol")
    assert approved["state"] == "approved"

    # production is protected: only approved versions; writers cannot move aliases.
    drafted = str(ctl_json(depot, "version", "create", ref)["number"])
    assert ctl(depot, "alias", "set", ref, "production", number, check=False).returncode == 1
    denied = ctl(depot, "alias", "set", ref, "production", drafted, user="carol", check=False)
    assert denied.returncode == 1 and "409" in denied.stderr and "protected" in denied.stderr
    moved = ctl_json(depot, "alias", "set", ref, "production", number, user="carol")
    assert moved["version"] == int(number)
    assert ctl_json(depot, "version", "show", f"{ref}:production")["number"] == int(number)

    # If-Match: a move based on a stale read is refused and changes nothing.
    stale = moved["etag"]
    assert ctl_json(depot, "alias", "set", ref, "staging", drafted, user="carol")["version"] == int(drafted)
    current = {a["name"]: a for a in ctl_json(depot, "alias", "list", ref)}
    fresh = ctl_json(depot, "alias", "set", ref, "production", number, "--if-match", current["production"]["etag"],
                     user="carol")
    assert fresh["etag"] != stale
    conflict = ctl(depot, "alias", "set", ref, "production", number, "--if-match", stale, user="carol", check=False)
    assert conflict.returncode == 1 and "412" in conflict.stderr, conflict.stderr
    missing = ctl(depot, "alias", "delete", ref, "nosuch", "--if-match", "*", user="carol", check=False)
    assert missing.returncode == 1 and "412" in missing.stderr
    assert ctl_json(depot, "alias", "list", ref)[[a["name"] for a in ctl_json(depot, "alias", "list", ref)].index(
        "production")]["etag"] == fresh["etag"]

    # Rejected versions stay unreleased.
    assert ctl_json(depot, "version", "submit", f"{ref}:{drafted}")["state"] == "pending"
    assert ctl_json(depot, "version", "reject", f"{ref}:{drafted}", "--comment", "no", user="carol")["state"] == \
        "rejected"
    assert ctl(depot, "alias", "set", ref, "production", drafted, user="carol", check=False).returncode == 1

    # The production alias pulls what the maintainer approved.
    out = tmp_path / "prod"
    assert ctl_json(depot, "pull", f"{ref}:production", str(out))["version"] == int(number)
    assert ctl(depot, "alias", "delete", ref, "staging", user="carol").returncode == 0
    assert "staging" not in [a["name"] for a in ctl_json(depot, "alias", "list", ref)]


def test_bad_references_other_teams_and_missing_credentials(depot, team, model, tmp_path):
    ref = model["ref"]
    for args, code, words in (
        (("pull", "no-slash", str(tmp_path / "x")), 2, "TEAM/MODEL"),
        (("pull", f"{ref}:", str(tmp_path / "x")), 2, "empty version"),
        (("model", "show", f"{ref}:1"), 2, "only TEAM/MODEL"),
        (("pull", f"{ref}:4242", str(tmp_path / "x")), 1, "404"),
        (("push", str(tmp_path / "nonexistent"), ref), 2, "not a directory"),
        (("push", str(model["src"]), ref, "--metrics", "[1]"), 2, "JSON object"),
        (("push", str(model["src"]), ref, "--parallel", "0"), 2, "--parallel"),
        (("version", "frobnicate", f"{ref}:1"), 2, "unknown version command"),
    ):
        proc = ctl(depot, *args, check=False)
        assert proc.returncode == code and words in proc.stderr, (args, proc.returncode, proc.stderr)
    assert not (tmp_path / "x").exists()

    # Another team's member learns nothing: every call answers 404, and nothing is pushed.
    versions = ctl_json(depot, "model", "show", ref)["version_count"]
    for args in (("model", "show", ref), ("version", "list", ref), ("pull", ref, str(tmp_path / "y")),
                 ("push", str(model["src"]), ref)):
        proc = ctl(depot, *args, user="erin", check=False)
        assert proc.returncode == 1 and "404" in proc.stderr, (args, proc.stderr)
    assert ctl_json(depot, "model", "show", ref)["version_count"] == versions
    assert not (tmp_path / "y").exists()

    # Without any credential depotctl refuses before connecting; a wrong secret is refused by the server.
    env = {k: v for k, v in depot.aws_env().items() if not k.startswith("AWS_SHARED")}
    env.update({"DEPOT_ENDPOINT": depot.endpoint, "HOME": str(tmp_path)})
    proc = run([str(depot.bin_dir / "depotctl"), "model", "show", ref], check=False, env=env, timeout=60)
    assert proc.returncode == 2 and "no credentials" in proc.stderr
    env.update({"AWS_ACCESS_KEY_ID": depot.users["bob"].access_key, "AWS_SECRET_ACCESS_KEY": "wrong"})
    proc = run([str(depot.bin_dir / "depotctl"), "model", "show", ref], check=False, env=env, timeout=60)
    assert proc.returncode == 1 and "403" in proc.stderr, proc.stderr


def test_pull_refuses_bytes_that_do_not_match_the_manifest(depot, team, model, tmp_path):
    if depot.storage != "localfs":
        pytest.skip("corrupts a blob file in place, which needs the local-directory store")
    ref = model["ref"]
    src = tmp_path / "fragile"
    src.mkdir()
    payload = os.urandom(200_000)
    (src / "weights.bin").write_bytes(payload)
    number = ctl_json(depot, "push", str(src), ref, "--no-delete", *PUSH)["version"]["number"]
    store_id = depot.db.scalar(
        f"SELECT store_id FROM blobs WHERE sha256 = '\\x{hashlib.sha256(payload).hexdigest()}'")
    blob = next(depot.blob_dir / f for f in depot.blob_files() if store_id in f)
    original = blob.read_bytes()
    damaged = bytearray(original)
    damaged[1000] ^= 0xFF
    blob.write_bytes(bytes(damaged))
    try:
        out = tmp_path / "out"
        proc = ctl(depot, "pull", f"{ref}:{number}", str(out), "--parallel", "1", check=False)
        assert proc.returncode == 1 and "SHA-256" in proc.stderr and "weights.bin" in proc.stderr, proc.stderr
        assert not (out / "weights.bin").exists()
        assert not list(out.rglob("*.depot-partial"))
    finally:
        blob.write_bytes(original)
    assert ctl_json(depot, "pull", f"{ref}:{number}", str(out))["files"] >= 1
    assert (out / "weights.bin").read_bytes() == payload


def test_snapshot_commands_and_a_version_frozen_from_a_snapshot(depot, team, model, tmp_path):
    bucket, ref = model["bucket"], model["ref"]
    if ctl_json(depot, "model", "show", ref)["version_count"] == 0:
        ctl_json(depot, "push", str(model["src"]), ref, *PUSH)
    name = "snap-" + secrets.token_hex(3)
    created = ctl_json(depot, "snapshot", "create", bucket, name, "--prefix", "llm/")
    assert (created["name"], created["prefix"], created["s3_prefix"]) == (name, "llm/", f".snapshots/{name}/")
    assert name in [s["name"] for s in ctl_json(depot, "snapshot", "list", bucket)]
    at_snapshot = ctl_json(depot, "version", "create", ref)["number"]

    # The working area moves on: an overwrite, a delete, an addition.
    s3 = depot.client("bob")
    keys = sorted(o["Key"] for o in s3.list_objects_v2(Bucket=bucket, Prefix="llm/")["Contents"])
    s3.put_object(Bucket=bucket, Key="llm/config.json", Body=b"changed after the snapshot")
    s3.put_object(Bucket=bucket, Key="llm/added-later.txt", Body=b"new")
    gone = next(k for k in keys if k != "llm/config.json")
    s3.delete_object(Bucket=bucket, Key=gone)

    # A version frozen from the snapshot holds exactly what the prefix held then.
    frozen = ctl_json(depot, "version", "create", ref, "--snapshot", name, "--description", "from " + name)
    diff = ctl_json(depot, "version", "diff", f"{ref}:{frozen['number']}", str(at_snapshot))
    assert (diff["added"], diff["removed"], diff["changed"]) == ([], [], [])
    now = ctl_json(depot, "version", "create", ref)["number"]
    diff = ctl_json(depot, "version", "diff", f"{ref}:{now}", str(frozen["number"]))
    assert [f["path"] for f in diff["added"]] == ["added-later.txt"]
    assert [f["path"] for f in diff["removed"]] == [gone[len("llm/"):]]
    assert [f["path"] for f in diff["changed"]] == ["config.json"]
    a, b = tmp_path / "a", tmp_path / "b"
    ctl_json(depot, "pull", f"{ref}:{frozen['number']}", str(a))
    ctl_json(depot, "pull", f"{ref}:{at_snapshot}", str(b))
    assert digests(a) == digests(b)

    # Bad input changes nothing.
    versions = ctl_json(depot, "model", "show", ref)["version_count"]
    other = "other-" + secrets.token_hex(3)
    ctl_json(depot, "snapshot", "create", bucket, other, "--prefix", "elsewhere/")
    for args, code, words in (
        (("version", "create", ref, "--snapshot", "nosuch"), 1, "404"),
        (("version", "create", ref, "--snapshot", other), 1, "covers only"),
        (("push", str(model["src"]), ref, "--snapshot", name), 2, "version create --snapshot"),
        (("snapshot", "create", bucket, name), 1, "409"),
        (("snapshot", "show", bucket, "nosuch"), 1, "404"),
    ):
        proc = ctl(depot, *args, check=False)
        assert proc.returncode == code and words in proc.stderr, (args, proc.stderr)
    assert ctl_json(depot, "model", "show", ref)["version_count"] == versions

    # Restore by reference into another prefix, then delete the snapshots: the frozen version keeps its files.
    restored = ctl_json(depot, "snapshot", "restore", bucket, name, "--prefix", "llm/", "--target-prefix",
                        "restored/")
    assert restored["objects"] == len(keys)
    assert s3.get_object(Bucket=bucket, Key="restored/" + gone[len("llm/"):])["Body"].read() == \
        (b / gone[len("llm/"):]).read_bytes()
    for snap in (name, other):
        ctl(depot, "snapshot", "delete", bucket, snap)
    assert name not in [s["name"] for s in ctl_json(depot, "snapshot", "list", bucket)]
    depot.depotctl("gc", "--grace", "0", *depot.storage_args())
    c = tmp_path / "c"
    ctl_json(depot, "pull", f"{ref}:{frozen['number']}", str(c))
    assert digests(c) == digests(b)
