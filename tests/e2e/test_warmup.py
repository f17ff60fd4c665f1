"""The read cache and warm-up jobs end to end, on a real depotd and PostgreSQL (and RADOS with
DEPOT_E2E_STORAGE=rados): an approval, by policy, starts a warm-up that reaches 100 % and sends a signed
warmup.completed; afterwards reading the version's files makes no blob-store reads (only cache hits), and
deduplicated files are cached once; the cache stays within its byte bound when a version larger than it is
warmed; a missing blob fails the warm-up with the error counted and warmup.failed sent; a depotd started after
a job was created warms it too (into a disk-only cache); bad requests get precise problems and create nothing; depotctl drives it all.
Responses are checked against openapi/openapi.yaml.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import time

import pytest

from depot_harness import Depot, clean_env, run, unique_bucket_name
from rest import assert_problem, call, token_for, validate
from test_metrics import scrape
from test_webhooks import Receiver, check_signed, make_team, subscribe, team_call

MEMORY_BOUND = 4 << 20
ARGS = ["--webhook-allow-private", "true", "--webhook-poll-interval", "200", "--webhook-retry-base", "1",
        "--warmup-poll-interval", "200", "--cache-memory-bytes", str(MEMORY_BOUND), "--instance-id", "first"]


@pytest.fixture(scope="module")
def warm_depot(depot, tmp_path_factory):
    """A depotd with a 4 MiB memory cache and fast warm-up polling, on its own database."""
    server = Depot(bin_dir=depot.bin_dir, base_url=depot.admin_db.url, workdir=tmp_path_factory.mktemp("warm"))
    server.extra_args = list(ARGS)
    server.setup()
    server.start()
    yield server
    if server.proc is not None and server.proc.poll() is None:
        server.stop()
    server.drop_database()


@pytest.fixture
def receiver():
    r = Receiver()
    yield r
    r.close()


def make_model(server, team, files: dict[str, bytes], name: str) -> str:
    bucket = unique_bucket_name("warm")
    s3 = server.client("alice")
    s3.create_bucket(Bucket=bucket)
    for path, data in files.items():
        s3.put_object(Bucket=bucket, Key=f"{name}/{path}", Body=data)
    r = team_call(server, team, "POST", "/models", body={"name": name, "bucket": bucket, "prefix": f"{name}/"})
    assert r.status_code == 201, r.text
    return name


def wait_for_job(server, team, model, job_id, *, until=lambda j: j["state"] != "running", timeout=60.0) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        r = team_call(server, team, "GET", f"/models/{model}/warmups/{job_id}")
        job = validate(r, "GET", "/api/v1/teams/{team}/models/{model}/warmups/{warmup}")
        if until(job):
            return job
        assert time.monotonic() < deadline, f"warm-up {job_id} did not get there: {job}"
        time.sleep(0.1)


def blob_reads(s) -> tuple[float, float, float]:
    """Bytes read from the blob store, and its open and read_some calls."""
    return (s.value("depot_blob_read_bytes_total"),
            s.value("depot_blob_operation_duration_seconds_count", operation="open"),
            s.value("depot_blob_operation_duration_seconds_count", operation="read_some"))


def test_approval_warms_the_version_and_later_reads_touch_no_blob_store(warm_depot, receiver):
    server = warm_depot
    team = make_team(server)
    hook = subscribe(server, team, receiver.url, event_types=["warmup.completed", "warmup.failed"])
    r = team_call(server, team, "PUT", "/warmup-policy", body={"warmup_on": ["version.approved"]})
    assert validate(r, "PUT", "/api/v1/teams/{team}/warmup-policy") == {"warmup_on": ["version.approved"]}
    shard = secrets.token_bytes(1_500_000)  # two chunks of the cache
    files = {"config.json": b'{"layers": 2}', "weights/shard-0.bin": shard,
             "weights/copy-of-shard-0.bin": shard,  # deduplicated: one blob, cached once
             "tokenizer.json": secrets.token_bytes(300_000)}
    model = make_model(server, team, files, "llm")
    base = f"/models/{model}"
    assert team_call(server, team, "POST", f"{base}/versions", body={"label": "v1"}).status_code == 201
    assert team_call(server, team, "POST", f"{base}/versions/1/submit", body={}).status_code == 200
    # Moving `latest` is not in the policy: no job yet.
    listed = validate(team_call(server, team, "GET", f"{base}/warmups"), "GET",
                      "/api/v1/teams/{team}/models/{model}/warmups")
    assert listed["items"] == []
    before = scrape(server.endpoint)
    assert team_call(server, team, "POST", f"{base}/versions/1/approve", user="bob", body={}).status_code == 200

    listed = validate(team_call(server, team, "GET", f"{base}/warmups"), "GET",
                      "/api/v1/teams/{team}/models/{model}/warmups")
    assert len(listed["items"]) == 1
    created = listed["items"][0]
    assert (created["version"], created["trigger"], created["requested_by"]) == (1, "version.approved", "bob")
    assert created["awaited_instances"] == ["first"]
    job = wait_for_job(server, team, model, created["id"])
    assert job["state"] == "completed" and job["percent"] == 100, job
    total = sum(len(d) for d in files.values())
    assert (job["files_total"], job["bytes_total"]) == (4, total)
    [progress] = job["progress"]
    assert progress["instance"] == "first" and progress["state"] == "completed"
    assert (progress["files_done"], progress["files_total"]) == (4, 4)
    assert (progress["bytes_done"], progress["bytes_total"], progress["errors"]) == (total, total, 0)
    assert progress["percent"] == 100

    after_warmup = scrape(server.endpoint)
    distinct = len(files["config.json"]) + len(shard) + len(files["tokenizer.json"])
    cached = (after_warmup.value("depot_cache_bytes", tier="memory") -
              before.value("depot_cache_bytes", tier="memory"))
    assert cached == distinct, "the deduplicated shard must be cached once"
    assert (after_warmup.value("depot_cache_misses_total") - before.value("depot_cache_misses_total")) == 4

    # Reading the version (through the read-only model view) now comes from the cache alone.
    s3 = server.client("alice")
    for path, data in files.items():
        got = s3.get_object(Bucket="models", Key=f"{team['name']}/{model}/1/{path}")["Body"].read()
        assert hashlib.sha256(got).digest() == hashlib.sha256(data).digest()
    ranged = s3.get_object(Bucket="models", Key=f"{team['name']}/{model}/1/weights/shard-0.bin",
                           Range="bytes=1048000-1049000")["Body"].read()
    assert ranged == shard[1048000:1049001]
    after_reads = scrape(server.endpoint)
    assert blob_reads(after_reads) == blob_reads(after_warmup), "a warm read went to the blob store"
    assert after_reads.value("depot_cache_misses_total") == after_warmup.value("depot_cache_misses_total")
    assert (after_reads.value("depot_cache_hits_total", tier="memory") -
            after_warmup.value("depot_cache_hits_total", tier="memory")) >= 7

    # One signed warmup.completed for the job, with the manifest and per-instance numbers.
    got = receiver.wait_for(lambda g: any(e["json"]["type"] == "warmup.completed" for e in g))
    check_signed(got, hook["secret"])
    [event] = [e["json"] for e in got if e["json"]["type"] == "warmup.completed"]
    d = event["data"]
    assert (d["team"], d["model"], d["warmup_id"], d["version"], d["trigger"]) == (
        team["name"], model, created["id"], 1, "version.approved")
    assert (d["files_total"], d["bytes_total"], d["errors"]) == (4, total, 0)
    assert [(i["instance"], i["state"], i["bytes_done"]) for i in d["instances"]] == [("first", "completed", total)]
    assert sorted(f["path"] for f in d["files"]) == sorted(files)


def test_the_cache_stays_within_its_bound_when_a_larger_version_is_warmed(warm_depot):
    server = warm_depot
    team = make_team(server)
    files = {f"part-{i}.bin": secrets.token_bytes(1 << 20) for i in range(6)}  # 6 MiB > the 4 MiB bound
    model = make_model(server, team, files, "big")
    assert team_call(server, team, "POST", f"/models/{model}/versions", body={}).status_code == 201
    before = scrape(server.endpoint)
    r = team_call(server, team, "POST", f"/models/{model}/warmups", body={"version": 1})
    created = validate(r, "POST", "/api/v1/teams/{team}/models/{model}/warmups")
    assert r.status_code == 201 and created["trigger"] == "api" and created["alias"] is None
    job = wait_for_job(server, team, model, created["id"])
    assert job["state"] == "completed" and job["percent"] == 100
    after = scrape(server.endpoint)
    assert after.value("depot_cache_bytes", tier="memory") <= MEMORY_BOUND
    assert after.value("depot_cache_evictions_total", tier="memory") - before.value(
        "depot_cache_evictions_total", tier="memory") >= 2
    # Reads stay correct whatever was evicted.
    s3 = server.client("alice")
    for path, data in files.items():
        assert s3.get_object(Bucket="models", Key=f"{team['name']}/{model}/1/{path}")["Body"].read() == data
    assert scrape(server.endpoint).value("depot_cache_bytes", tier="memory") <= MEMORY_BOUND


def remove_blob(server, store_id: str) -> None:
    """Deletes a blob behind depotd's back (a lost object)."""
    if server.storage == "rados":
        for name in server.rados_objects():
            if name == store_id or name.startswith(store_id + "."):
                run(["rados", "-c", os.environ["DEPOT_TEST_CEPH_CONF"], "--keyring",
                     os.environ["DEPOT_TEST_CEPH_KEYRING"], "-p", os.environ.get("DEPOT_TEST_CEPH_POOL", "depot"),
                     "-N", server.rados_namespace, "rm", name], env=clean_env({}), timeout=120)
        return
    removed = 0
    for dirpath, _, filenames in os.walk(server.blob_dir):
        for name in filenames:
            if name.startswith(store_id):
                os.remove(os.path.join(dirpath, name))
                removed += 1
    assert removed, f"blob {store_id} not found under {server.blob_dir}"


def test_a_missing_blob_fails_the_warmup_with_the_error_counted(warm_depot, receiver):
    server = warm_depot
    team = make_team(server)
    subscribe(server, team, receiver.url, event_types=["warmup.completed", "warmup.failed"])
    files = {"good.bin": secrets.token_bytes(50_000), "lost.bin": secrets.token_bytes(60_000)}
    model = make_model(server, team, files, "broken")
    assert team_call(server, team, "POST", f"/models/{model}/versions", body={}).status_code == 201
    store_id = server.db.scalar(
        "SELECT b.store_id FROM model_file_segments s JOIN blobs b ON b.id = s.blob_id "
        f"WHERE s.path = 'lost.bin' AND b.size = 60000")
    remove_blob(server, store_id)
    r = team_call(server, team, "POST", f"/models/{model}/warmups", body={"alias": "latest"})
    created = validate(r, "POST", "/api/v1/teams/{team}/models/{model}/warmups")
    assert (created["alias"], created["version"]) == ("latest", 1)
    job = wait_for_job(server, team, model, created["id"])
    assert job["state"] == "failed", job
    [p] = job["progress"]
    assert (p["state"], p["errors"], p["files_done"], p["files_total"]) == ("failed", 1, 1, 2)
    assert p["last_error"].startswith("lost.bin: ") and p["percent"] < 100
    got = receiver.wait_for(lambda g: any(e["json"]["type"] == "warmup.failed" for e in g))
    [event] = [e["json"] for e in got if e["json"]["type"] == "warmup.failed"]
    assert (event["data"]["warmup_id"], event["data"]["errors"]) == (created["id"], 1)
    assert not [e for e in got if e["json"]["type"] == "warmup.completed"]


def test_a_depotd_started_after_the_job_catches_up(warm_depot, tmp_path):
    server = warm_depot
    team = make_team(server)
    files = {"w.bin": secrets.token_bytes(200_000)}
    model = make_model(server, team, files, "late")
    assert team_call(server, team, "POST", f"/models/{model}/versions", body={}).status_code == 201
    r = team_call(server, team, "POST", f"/models/{model}/warmups", body={"version": "1"})
    created = validate(r, "POST", "/api/v1/teams/{team}/models/{model}/warmups")
    wait_for_job(server, team, model, created["id"])
    events_before = int(server.db.scalar(
        f"SELECT count(*) FROM events WHERE type LIKE 'warmup.%' AND (payload->>'warmup_id')::bigint = {created['id']}"))
    assert events_before == 1

    late = server.sibling(tmp_path / "late")
    # This one caches on local disk only.
    late.extra_args = ["--warmup-poll-interval", "200", "--cache-dir", str(tmp_path / "late-cache"),
                       "--cache-disk-bytes", str(64 << 20), "--instance-id", "second"]
    late.start()
    try:
        job = wait_for_job(server, team, model, created["id"],
                           until=lambda j: any(p["instance"] == "second" and p["state"] != "running"
                                               for p in j["progress"]))
        second = next(p for p in job["progress"] if p["instance"] == "second")
        assert (second["state"], second["files_done"], second["bytes_done"]) == ("completed", 1, 200_000)
        # Its reads of the file come from its own (disk) cache.
        before = scrape(late.endpoint)
        assert before.value("depot_cache_bytes", tier="memory") == 0
        assert 200_000 <= before.value("depot_cache_bytes", tier="disk") <= 64 << 20
        got = late.client("alice").get_object(Bucket="models", Key=f"{team['name']}/{model}/1/w.bin")
        assert got["Body"].read() == files["w.bin"]
        after = scrape(late.endpoint)
        assert blob_reads(after) == blob_reads(before)
        assert after.value("depot_cache_hits_total", tier="disk") > before.value("depot_cache_hits_total", tier="disk")
        assert any(name.endswith(".chunk") for name in os.listdir(tmp_path / "late-cache"))
    finally:
        late.stop()
    # The job had completed already: no second event.
    assert int(server.db.scalar(
        f"SELECT count(*) FROM events WHERE type LIKE 'warmup.%' AND (payload->>'warmup_id')::bigint = {created['id']}")) == 1


def test_bad_warmup_requests_get_problems_and_create_nothing(warm_depot):
    server = warm_depot
    if "carol" not in server.users:
        server.add_user("carol", "Carol")
    team = make_team(server, extra=("carol",))
    model = make_model(server, team, {"a.bin": b"a"}, "picky")
    assert team_call(server, team, "POST", f"/models/{model}/versions", body={}).status_code == 201
    jobs = lambda: int(server.db.scalar("SELECT count(*) FROM warmup_jobs"))
    before = jobs()
    path = f"/models/{model}/warmups"
    assert_problem(team_call(server, team, "POST", path, body={}), 400, "invalid-argument")
    assert_problem(team_call(server, team, "POST", path, body={"version": 1, "alias": "latest"}), 400,
                   "invalid-argument")
    assert_problem(team_call(server, team, "POST", path, body={"version": 1, "extra": True}), 400,
                   "invalid-argument")
    assert_problem(team_call(server, team, "POST", path, body={"version": 7}), 404, "not-found")
    assert_problem(team_call(server, team, "POST", path, body={"alias": "production"}), 404, "not-found")
    assert_problem(team_call(server, team, "GET", f"{path}/999999"), 404, "not-found")
    assert_problem(team_call(server, team, "GET", f"{path}/abc"), 404, "not-found")
    # carol is not in the team: the team does not exist for her.
    assert_problem(team_call(server, team, "POST", path, user="carol", body={"version": 1}), 404, "not-found")
    assert jobs() == before
    # Policies: known entries only; a model's list overrides the team's, null inherits it again.
    assert_problem(team_call(server, team, "PUT", "/warmup-policy", body={"warmup_on": ["version.created"]}),
                   400, "invalid-argument")
    assert_problem(team_call(server, team, "PUT", "/warmup-policy", body={"warmup_on": "version.approved"}),
                   400, "invalid-argument")
    assert_problem(team_call(server, team, "PUT", "/warmup-policy", user="bob",
                             body={"warmup_on": ["version.approved"]}), 403, "access-denied")
    r = team_call(server, team, "PUT", f"/models/{model}/warmup-policy",
                  body={"warmup_on": ["alias.updated:production"]})
    assert validate(r, "PUT", "/api/v1/teams/{team}/models/{model}/warmup-policy") == {
        "warmup_on": ["alias.updated:production"], "effective": ["alias.updated:production"]}
    # Moving `production` now starts a job; moving another alias does not.
    assert team_call(server, team, "POST", f"/models/{model}/versions/1/submit", body={}).status_code == 200
    assert team_call(server, team, "POST", f"/models/{model}/versions/1/approve", user="bob",
                     body={}).status_code == 200
    assert team_call(server, team, "PUT", f"/models/{model}/aliases/staging", body={"version": 1}).status_code == 200
    assert jobs() == before
    assert team_call(server, team, "PUT", f"/models/{model}/aliases/production",
                     body={"version": 1}).status_code == 200
    assert jobs() == before + 1
    listed = validate(team_call(server, team, "GET", path), "GET", "/api/v1/teams/{team}/models/{model}/warmups")
    assert (listed["items"][0]["trigger"], listed["items"][0]["alias"]) == ("alias.updated", "production")
    r = team_call(server, team, "PUT", f"/models/{model}/warmup-policy", body={"warmup_on": None})
    assert validate(r, "PUT", "/api/v1/teams/{team}/models/{model}/warmup-policy")["warmup_on"] is None
    r = team_call(server, team, "GET", f"/models/{model}/warmup-policy")
    assert validate(r, "GET", "/api/v1/teams/{team}/models/{model}/warmup-policy") == {
        "warmup_on": None, "effective": []}


def test_depotctl_warmup_commands(warm_depot):
    server = warm_depot
    team = make_team(server)
    model = make_model(server, team, {"x.bin": secrets.token_bytes(10_000)}, "ctl")
    assert team_call(server, team, "POST", f"/models/{model}/versions", body={}).status_code == 201
    env = {"DEPOT_ENDPOINT": server.endpoint, "DEPOT_TOKEN": team["tokens"]["alice"]}
    ctl = lambda *a, check=True: run([str(server.bin_dir / "depotctl"), *a], env=clean_env(env), check=check)
    ref = f"{team['name']}/{model}"
    started = json.loads(ctl("warmup", "start", ref + ":1", "--wait", "--json").stdout)
    assert started["state"] == "completed" and started["percent"] == 100
    listed = json.loads(ctl("warmup", "list", ref, "--json").stdout)
    assert [w["id"] for w in listed] == [started["id"]]
    shown = ctl("warmup", "show", ref, str(started["id"])).stdout
    assert "completed" in shown and "first" in shown and "1/1 files" in shown
    by_alias = json.loads(ctl("warmup", "start", ref, "--json").stdout)
    assert by_alias["alias"] == "latest" and by_alias["version"] == 1
    bad = ctl("warmup", "start", ref + ":9", check=False)
    assert bad.returncode == 1 and "No such version" in bad.stderr
