"""depotctl as a command-line tool (issue 26): help at every level without a database, --version, misspelt
flags refused with exit 2 and a suggestion, a server key that is never created, the team / member / policy /
bucket commands and remote user and key administration through the REST API, --json on deletes and
revokes, the endpoint and region from ~/.aws/config, shell completion; and depotd's --config file.
"""

from __future__ import annotations

import json
import secrets
import subprocess
import time
from pathlib import Path

import pytest
import requests

from depot_harness import clean_env, database_url_with_name, free_port, run, unique_bucket_name
from rest import call, token_for


def ctl(depot, *args: str, user: str | None = "alice", env: dict | None = None, check: bool = True):
    """depotctl through the REST API as `user` (its AWS profile), without a database URL."""
    e = dict(depot.aws_env())
    e.pop("DEPOT_DATABASE_URL", None)
    e.update({"DEPOT_ENDPOINT": depot.endpoint})
    if user:
        e["AWS_PROFILE"] = user
    e.update(env or {})
    proc = run([str(depot.bin_dir / "depotctl"), *args], check=False, env=e, timeout=120)
    assert "Sanitizer" not in proc.stderr, proc.stderr
    if check:
        assert proc.returncode == 0, f"depotctl {' '.join(args)}: {proc.returncode}\n{proc.stderr}"
    return proc


def ctl_json(depot, *args: str, user: str = "alice"):
    return json.loads(ctl(depot, *args, "--json", user=user).stdout)


def bare(depot, *args: str, env: dict | None = None):
    """depotctl with no database, no endpoint and no credentials at all."""
    e = clean_env()
    for k in ("DEPOT_DATABASE_URL", "DEPOT_ENDPOINT", "DEPOT_TOKEN", "DEPOT_SERVER_KEY", "DEPOT_SERVER_KEY_FILE"):
        e.pop(k, None)
    e.update(env or {})
    return run([str(depot.bin_dir / "depotctl"), *args], check=False, env=e, timeout=60)


# ---------------------------------------------------------------------------------------------- the CLI itself

def test_version_and_help_need_no_database(depot):
    version = bare(depot, "--version")
    assert version.returncode == 0, version.stderr
    assert version.stdout.startswith("depotctl ") and version.stdout.split()[1][0].isdigit()
    daemon = run([str(depot.bin_dir / "depotd"), "--version"], check=False, env=clean_env(), timeout=60)
    assert daemon.returncode == 0 and daemon.stdout.split() == ["depotd", version.stdout.split()[1]]

    top = bare(depot, "-h")
    assert top.returncode == 0, top.stderr
    for family in ("team create", "member set", "policy set", "bucket set", "user create", "push", "completion"):
        assert family in top.stdout
    assert bare(depot, "--help").stdout == top.stdout

    push = bare(depot, "push", "-h")
    assert push.returncode == 0, push.stderr
    assert "Usage: depotctl push DIR TEAM/MODEL" in push.stdout
    assert "--label" in push.stdout and "Examples:" in push.stdout
    team = bare(depot, "team", "--help")
    assert team.returncode == 0 and "team create" in team.stdout and "team show" in team.stdout
    # Help of a command that needs the database does not ask for one either.
    assert bare(depot, "user", "create", "-h").returncode == 0
    assert bare(depot, "migrate", "--help").returncode == 0


def test_an_unknown_flag_exits_2_naming_it_and_the_closest_valid_one(depot, tmp_path):
    proc = bare(depot, "push", str(tmp_path), "a/b", "--lable", "x")
    assert proc.returncode == 2
    assert "--lable" in proc.stderr and "did you mean --label?" in proc.stderr
    # A flag of another command is refused too, not silently ignored.
    proc = bare(depot, "user", "list", "--files")
    assert proc.returncode == 2 and "--files" in proc.stderr
    # A flag missing its value, an unknown command.
    assert bare(depot, "push", str(tmp_path), "a/b", "--label").returncode == 2
    proc = bare(depot, "tem", "list")
    assert proc.returncode == 2 and "tem" in proc.stderr
    assert bare(depot).returncode == 2


def test_a_missing_server_key_file_is_named_and_never_created(depot, tmp_path):
    missing = tmp_path / "var" / "server.key"  # the default, ./var/server.key, resolved from the working dir
    proc = run([str(depot.bin_dir / "depotctl"), "key", "create", "bob"], check=False, cwd=tmp_path,
               env={**clean_env(), "DEPOT_DATABASE_URL": depot.db.url}, timeout=60)
    assert proc.returncode == 2, proc.stderr
    assert str(missing) in proc.stderr, proc.stderr
    assert not missing.exists() and not missing.parent.exists()
    keys_before = depot.db.scalar("SELECT count(*) FROM access_keys")
    proc = bare(depot, "key", "create", "bob", env={"DEPOT_DATABASE_URL": depot.db.url,
                                                     "DEPOT_SERVER_KEY_FILE": str(tmp_path / "nope.key")})
    assert proc.returncode == 2 and str(tmp_path / "nope.key") in proc.stderr
    assert not (tmp_path / "nope.key").exists()
    assert depot.db.scalar("SELECT count(*) FROM access_keys") == keys_before


def test_completion_scripts(depot, tmp_path):
    for shell in ("bash", "zsh"):
        proc = bare(depot, "completion", shell)
        assert proc.returncode == 0 and "_depotctl" in proc.stdout
    script = tmp_path / "depotctl.bash"
    script.write_text(bare(depot, "completion", "bash").stdout)
    probe = (f"source {script}\n"
             "COMP_WORDS=(depotctl te); COMP_CWORD=1; _depotctl; echo \"${COMPREPLY[@]}\"\n"
             "COMP_WORDS=(depotctl team cr); COMP_CWORD=2; _depotctl; echo \"${COMPREPLY[@]}\"\n"
             "COMP_WORDS=(depotctl push ./out ml/x --lab); COMP_CWORD=4; _depotctl; echo \"${COMPREPLY[@]}\"\n")
    out = subprocess.run(["bash", "-c", probe], capture_output=True, text=True, timeout=30).stdout.splitlines()
    assert out == ["team", "create", "--label --labels"], out
    assert bare(depot, "completion", "fish").returncode == 2


# ------------------------------------------------------------------------------- teams, members, policy, buckets

def test_team_member_policy_and_bucket_commands(depot):
    team = "cli-" + secrets.token_hex(3)
    created = ctl_json(depot, "team", "create", team, "--required-approvals", "2")
    assert created["name"] == team and created["default_policy"]["required_approvals"] == 2
    assert team in [t["name"] for t in ctl_json(depot, "team", "list")]

    member = ctl_json(depot, "member", "set", team, "bob", "writer")
    assert (member["user"], member["role"]) == ("bob", "writer")
    assert {"user": "bob", "role": "writer"}.items() <= {m["user"]: m for m in
                                                          ctl_json(depot, "member", "list", team)}["bob"].items()
    shown = ctl_json(depot, "team", "show", team)
    assert shown["name"] == team and "bob" in [m["user"] for m in shown["members"]]
    assert "bob\twriter" in ctl(depot, "member", "list", team).stdout
    # bob, a writer, may not change the membership.
    refused = ctl(depot, "member", "set", team, "bob", "admin", user="bob", check=False)
    assert refused.returncode == 1 and "403" in refused.stderr
    assert {m["user"]: m["role"] for m in ctl_json(depot, "member", "list", team)}["bob"] == "writer"

    bucket = unique_bucket_name("cli")
    depot.aws("s3", "mb", f"s3://{bucket}", user="alice")
    ctl_json(depot, "model", "create", f"{team}/m", "--bucket", bucket)
    policy = ctl_json(depot, "policy", "get", f"{team}/m")
    assert policy["required_approvals"] == 2
    policy = ctl_json(depot, "policy", "set", f"{team}/m", "--required-approvals", "1", "--approver-role", "admin",
                      "--protected-aliases", "production,canary")
    assert (policy["required_approvals"], policy["approver_role"]) == (1, "admin")
    assert sorted(policy["protected_aliases"]) == ["canary", "production"]
    assert ctl_json(depot, "policy", "get", f"{team}/m") == policy
    assert ctl(depot, "policy", "set", f"{team}/m", check=False).returncode == 2

    shown = ctl_json(depot, "bucket", "show", bucket)
    assert shown["name"] == bucket and shown["owner"] == "alice"
    changed = ctl_json(depot, "bucket", "set", bucket, "--dedup", "off", "--object-events", "on")
    assert (changed["dedup"], changed["object_events"]) == (False, True)
    admin = token_for(depot, "alice")["token"]
    assert call(depot, "GET", f"/api/v1/buckets/{bucket}", token=admin).json()["object_events"] is True
    assert ctl(depot, "bucket", "set", bucket, "--dedup", "maybe", check=False).returncode == 2

    removed = ctl_json(depot, "member", "remove", team, "bob")
    assert removed == {"deleted": "member", "team": team, "user": "bob"}
    assert "bob" not in [m["user"] for m in ctl_json(depot, "member", "list", team)]


# --------------------------------------------------------------------------------- users and keys, remotely

def test_an_installation_admin_manages_users_keys_and_tokens_through_the_rest_api(depot):
    user = "cli" + secrets.token_hex(3)
    made = ctl_json(depot, "user", "create", user, "--display-name", "Remote Made", "--email", f"{user}@x.org")
    assert (made["id"], made["display_name"], made["admin"]) == (user, "Remote Made", False)
    assert user in [u["id"] for u in ctl_json(depot, "user", "list")]

    key = ctl_json(depot, "key", "create", user, "--read-only")
    assert key["user"] == user and key["scope"] == {"read_only": True} and key["secret_access_key"]
    listed = ctl_json(depot, "key", "list", user)
    assert [k["access_key_id"] for k in listed] == [key["access_key_id"]] and "secret_access_key" not in listed[0]
    # The new key works (read-only: listing its own buckets).
    env = {"AWS_ACCESS_KEY_ID": key["access_key_id"], "AWS_SECRET_ACCESS_KEY": key["secret_access_key"]}
    assert ctl(depot, "team", "list", user=None, env=env).returncode == 0

    revoked = ctl_json(depot, "key", "revoke", key["access_key_id"])
    assert revoked == {"revoked": "key", "access_key_id": key["access_key_id"]}
    assert ctl_json(depot, "key", "list", user)[0]["revoked_at"] is not None
    assert ctl(depot, "team", "list", user=None, env=env, check=False).returncode == 1

    token = ctl_json(depot, "token", "create", user, "--name", "ci")
    assert token["token"].startswith("dpt_") and token["user"] == user
    assert [t["id"] for t in ctl_json(depot, "token", "list", user)] == [token["id"]]
    assert ctl_json(depot, "token", "revoke", str(token["id"])) == {"revoked": "token", "id": str(token["id"])}

    rows = depot.db.query(f"SELECT action, actor FROM audit_log WHERE resource = '{user}' AND action = 'user.create'")
    assert rows == [["user.create", "alice"]]


def test_only_an_installation_admin_administers_other_users(depot):
    user = "cli" + secrets.token_hex(3)
    refused = ctl(depot, "user", "create", user, user="bob", check=False)
    assert refused.returncode == 1 and "403" in refused.stderr
    assert depot.db.scalar(f"SELECT count(*) FROM users WHERE id = '{user}'") == 0
    assert ctl(depot, "user", "list", user="bob", check=False).returncode == 1
    keys = depot.db.scalar("SELECT count(*) FROM access_keys WHERE user_id = 'alice'")
    assert ctl(depot, "key", "create", "alice", user="bob", check=False).returncode == 1
    assert depot.db.scalar("SELECT count(*) FROM access_keys WHERE user_id = 'alice'") == keys
    assert "403" in ctl(depot, "key", "list", "alice", user="bob", check=False).stderr
    assert "403" in ctl(depot, "token", "list", "alice", user="bob", check=False).stderr
    # Their own keys, as before.
    assert all(k["user"] == "bob" for k in ctl_json(depot, "key", "list", "bob", user="bob"))


def test_deletes_print_what_they_deleted_under_json(depot, tmp_path):
    bucket = unique_bucket_name("cli")
    depot.aws("s3", "mb", f"s3://{bucket}", user="alice")
    ctl_json(depot, "snapshot", "create", bucket, "before")
    assert ctl_json(depot, "snapshot", "delete", bucket, "before") == {
        "deleted": "snapshot", "bucket": bucket, "snapshot": "before"}
    assert ctl_json(depot, "snapshot", "list", bucket) == []

    team = "cli-" + secrets.token_hex(3)
    ctl_json(depot, "team", "create", team)
    (tmp_path / "w.bin").write_bytes(b"weights")
    depot.aws("s3", "cp", str(tmp_path / "w.bin"), f"s3://{bucket}/m/w.bin", user="alice")
    ctl_json(depot, "model", "create", f"{team}/m", "--bucket", bucket, "--prefix", "m/")
    ctl_json(depot, "version", "create", f"{team}/m")
    ctl_json(depot, "alias", "set", f"{team}/m", "candidate", "1")
    assert ctl_json(depot, "alias", "delete", f"{team}/m", "candidate") == {
        "deleted": "alias", "team": team, "model": "m", "alias": "candidate"}

    # Revokes through the database print JSON as well.
    key = json.loads(depot.depotctl("key", "create", "bob", "--json").stdout)
    out = json.loads(depot.depotctl("key", "revoke", key["access_key_id"], "--json").stdout)
    assert out == {"revoked": "key", "access_key_id": key["access_key_id"]}


def test_the_endpoint_and_region_come_from_the_aws_config(depot, tmp_path):
    config = tmp_path / "config"
    config.write_text(f"[profile alice]\nregion = {depot.region}\nendpoint_url = {depot.endpoint}\n")
    env = {"AWS_CONFIG_FILE": str(config), "DEPOT_ENDPOINT": ""}
    teams = ctl(depot, "team", "list", "--json", env=env)
    assert isinstance(json.loads(teams.stdout), list)
    # A region the server does not sign for fails: the config's region is really used.
    config.write_text(f"[profile alice]\nregion = xx-nowhere-1\nendpoint_url = {depot.endpoint}\n")
    assert ctl(depot, "team", "list", env=env, check=False).returncode == 1
    # AWS_ENDPOINT_URL wins over the file.
    config.write_text(f"[profile alice]\nregion = {depot.region}\nendpoint_url = http://127.0.0.1:9\n")
    assert ctl(depot, "team", "list", env={**env, "AWS_ENDPOINT_URL": depot.endpoint}).returncode == 0


# -------------------------------------------------------------------------------------------- depotd --config

def healthy(port: int) -> bool:
    try:
        return requests.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200
    except requests.RequestException:
        return False


def start_depotd(depot, *args: str) -> subprocess.Popen:
    env = clean_env()
    for k in [k for k in env if k.startswith("DEPOT_")]:
        del env[k]
    return subprocess.Popen([str(depot.bin_dir / "depotd"), *args], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)


def wait_healthy(proc: subprocess.Popen, port: int) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.stdout.read()
        if healthy(port):
            return
        time.sleep(0.1)
    raise AssertionError(f"depotd did not answer on {port}")


def stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    assert proc.wait(timeout=60) == 0


@pytest.fixture
def scratch_db(depot):
    """An empty database of its own: the depotd processes started here run their background work (cleanup,
    warm-up liveness, webhooks) away from the suite's depotd."""
    name = "depot_e2e_conf_" + secrets.token_hex(4)
    depot.admin_db.execute(f'CREATE DATABASE "{name}"')
    yield database_url_with_name(depot.admin_db.url, name)
    depot.admin_db.execute(f'DROP DATABASE "{name}" WITH (FORCE)')


def test_depotd_reads_its_configuration_file_and_flags_win(depot, scratch_db, tmp_path):
    file_port, flag_port = free_port(), free_port()
    key_file = tmp_path / "state" / "server.key"
    conf = tmp_path / "depotd.conf"
    conf.write_text(
        "# depotd on a scratch database\n"
        f"listen = 127.0.0.1:{file_port}\n"
        f"database-url = {scratch_db}\n"
        "\n"
        "storage = localfs\n"
        f"blob-dir = {tmp_path / 'blobs'}\n"
        f"server-key-file = {key_file}\n"
        "; the rest as the defaults\n")
    proc = start_depotd(depot, "--config", str(conf))
    try:
        wait_healthy(proc, file_port)
    finally:
        stop(proc)
    assert key_file.is_file()  # depotd made its key where the file says
    proc = start_depotd(depot, "--config", str(conf), "--listen", f"127.0.0.1:{flag_port}")
    try:
        wait_healthy(proc, flag_port)
        assert not healthy(file_port)
    finally:
        stop(proc)
    # The documented example is a valid file; flags override what it sets.
    example = Path(__file__).resolve().parents[2] / "docs" / "depotd.conf.example"
    proc = start_depotd(depot, "--config", str(example), "--listen", f"127.0.0.1:{flag_port}",
                        "--database-url", scratch_db, "--blob-dir", str(tmp_path / "blobs"),
                        "--server-key-file", str(key_file))
    try:
        wait_healthy(proc, flag_port)
    finally:
        stop(proc)
    # depotctl resolves the database and the server key from the same file, from any working directory.
    def ctl_conf(*args: str):
        out = run([str(depot.bin_dir / "depotctl"), "--config", str(conf), *args, "--json"], check=False,
                  env=clean_env(), cwd=tmp_path / "state", timeout=60)
        assert out.returncode == 0, out.stderr
        return json.loads(out.stdout)
    ctl_conf("user", "create", "conf-user")
    key = ctl_conf("key", "create", "conf-user")
    assert [k["access_key_id"] for k in ctl_conf("key", "list", "conf-user")] == [key["access_key_id"]]


def test_an_unknown_key_in_the_configuration_file_is_an_error_naming_it_and_its_line(depot, tmp_path):
    conf = tmp_path / "depotd.conf"
    conf.write_text("database-url = postgresql://nowhere/db\n# listen, misspelt\n\nlisen = 127.0.0.1:1\n")
    proc = start_depotd(depot, "--config", str(conf))
    assert proc.wait(timeout=60) == 2
    out = proc.stdout.read()
    assert f"{conf}:4" in out and "lisen" in out, out
