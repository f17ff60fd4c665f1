"""A real depotd on a private database, and the real clients that drive it.

conftest.py builds one `Depot` per test session. Everything here runs Debian's tools explicitly
(/usr/bin/aws, /usr/bin/s3cmd, /usr/bin/psql, /usr/bin/curl): on some machines pyenv's `python3`
and `aws` come first on PATH, and nothing of pyenv may leak into the clients' environment.
"""

from __future__ import annotations

import base64
import ctypes
import datetime as dt
import hashlib
import json
import os
import secrets
import signal
import socket
import subprocess
import threading
import time
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path

import boto3
import botocore.auth
import botocore.awsrequest
import botocore.config
import botocore.credentials
import requests

REPO_ROOT = Path(__file__).resolve().parents[2]
REGION = "us-east-1"

# The table that holds one row per object version. Error tests assert its count does not change
# (together with the row count of every other table, see Database.table_counts).
OBJECT_ROWS_SQL = "SELECT count(*) FROM object_versions"

SANITIZER_MARKERS = (
    "ERROR: AddressSanitizer",
    "ERROR: LeakSanitizer",
    "ERROR: UndefinedBehaviorSanitizer",
    "runtime error:",
)

# One boto3 session for every client the tests make: a new session loads botocore's service models again
# (about 0.3 s of CPU per client), a client made from a loaded session takes about 0.02 s. Clients get their
# credentials, region and endpoint explicitly, so nothing of the session's own configuration reaches them.
_BOTO3_SESSION: boto3.session.Session | None = None
_BOTO3_SESSION_LOCK = threading.Lock()


def _boto3_session() -> boto3.session.Session:
    global _BOTO3_SESSION
    if _BOTO3_SESSION is None:
        _BOTO3_SESSION = boto3.session.Session()
    return _BOTO3_SESSION


AWS = "/usr/bin/aws"
S3CMD = "/usr/bin/s3cmd"
PSQL = "/usr/bin/psql"
CURL = "/usr/bin/curl"


# --------------------------------------------------------------------------------------------------
# Processes


def clean_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment for client tools: no pyenv, no Python overrides, no ambient AWS settings."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("AWS_", "PYENV", "PYTHON", "BOTO", "S3CMD")) and k != "VIRTUAL_ENV"
    }
    path = [p for p in env.get("PATH", "").split(":") if p and ".pyenv" not in p]
    for needed in ("/usr/local/bin", "/usr/bin", "/bin"):
        if needed not in path:
            path.append(needed)
    env["PATH"] = ":".join(path)
    env["LC_ALL"] = "C.UTF-8"
    env["LANG"] = "C.UTF-8"
    env.update(extra or {})
    return env


_libc = ctypes.CDLL(None, use_errno=True)
_PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:
    # If pytest is killed outright, the kernel sends depotd SIGTERM instead of leaving it running.
    _libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)


class _PortTaken(Exception):
    """depotd could not bind the port free_port() chose: somebody took it in between."""


import contextlib as _contextlib
import shutil as _shutil
import tempfile as _tempfile


@_contextlib.contextmanager
def browser_tmpdir():
    """A short TMPDIR for Chromium. Playwright puts the profile under TMPDIR, and Chromium's singleton
    socket lives inside it: a unix socket path is at most 107 bytes, so a pytest tmp_path (long test name
    under a per-run base) makes Chromium abort with "Socket path too long"."""
    path = _tempfile.mkdtemp(prefix="chr", dir="/tmp")
    try:
        yield path
    finally:
        _shutil.rmtree(path, ignore_errors=True)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def sanitizer_reports(text: str) -> list[str]:
    return [line for line in text.splitlines() if any(m in line for m in SANITIZER_MARKERS)]


class CommandError(AssertionError):
    pass


def run(cmd: list[str], *, check: bool = True, timeout: float = 300, env=None, **kwargs):
    """subprocess.run with captured text output; raises CommandError with both streams on failure."""
    proc = subprocess.run(
        cmd,
        capture_output=True,
        text=kwargs.pop("text", True),
        timeout=timeout,
        env=env if env is not None else clean_env(),
        stdin=kwargs.pop("stdin", subprocess.DEVNULL),
        **kwargs,
    )
    if check and proc.returncode != 0:
        raise CommandError(
            f"{' '.join(map(str, cmd))} exited with {proc.returncode}\n"
            f"--- stdout\n{proc.stdout}\n--- stderr\n{proc.stderr}"
        )
    return proc


# --------------------------------------------------------------------------------------------------
# PostgreSQL


def database_url_with_name(url: str, name: str) -> str:
    parts = urllib.parse.urlsplit(url)
    return urllib.parse.urlunsplit(parts._replace(path="/" + name))


try:  # Debian's python3-psycopg2 (scripts/deps): one connection per database instead of a psql per query
    import psycopg2
    import psycopg2.extensions
except ImportError:  # pragma: no cover - without it every query runs psql, as before
    psycopg2 = None


class Database:
    """Access to one database: through a kept psycopg2 connection (autocommit) when python3-psycopg2 is
    installed, else a psql process per query. Either way a query answers what `psql -A -t` prints: rows of
    text values, NULL as "", booleans as t/f; an error raises CommandError."""

    def __init__(self, url: str):
        self.url = url
        self._conn = None
        self._lock = threading.Lock()

    def _connection(self):
        if self._conn is None or self._conn.closed:
            conn = psycopg2.connect(self.url, connect_timeout=30)
            conn.autocommit = True
            # Every built-in type as the text PostgreSQL sends (what psql prints); types made later (the
            # schema's enums) are text to psycopg2 already.
            with conn.cursor() as cur:
                cur.execute("SELECT oid FROM pg_type WHERE oid < 16384")
                oids = tuple(int(r[0]) for r in cur.fetchall())
            psycopg2.extensions.register_type(psycopg2.extensions.new_type(oids, "DEPOT_TEXT", lambda v, _: v),
                                              conn)
            self._conn = conn
        return self._conn

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def query(self, sql: str) -> list[list[str]]:
        if psycopg2 is None:
            proc = run([PSQL, "-X", "-q", "-A", "-t", "-F", "\t", "-v", "ON_ERROR_STOP=1", "-d", self.url, "-c",
                        sql], timeout=60)
            return [line.split("\t") for line in proc.stdout.splitlines() if line != ""]
        with self._lock:
            for attempt in (1, 2):
                try:
                    conn = self._connection()
                    with conn.cursor() as cur:
                        cur.execute(sql)
                        rows = cur.fetchall() if cur.description else []
                        # A psql session ends after its statements: a transaction the SQL opened and did
                        # not end is rolled back, as its disconnect would.
                        if conn.info.transaction_status != psycopg2.extensions.TRANSACTION_STATUS_IDLE:
                            cur.execute("ROLLBACK")
                    text = [["" if v is None else str(v) for v in row] for row in rows]
                    # psql -A -t prints a row of one empty value as an empty line, which query leaves out.
                    return [row for row in text if row != [""]]
                except psycopg2.Error as e:
                    # A connection the server dropped (restarted, a database dropped WITH (FORCE)): the
                    # statement never ran on it, so it is sent once more on a new connection.
                    broken = self._conn is None or self._conn.closed
                    if self._conn is not None:
                        self._conn.close()  # nothing of a failed statement carries over, as with psql
                    self._conn = None
                    if attempt == 1 and broken:
                        continue
                    raise CommandError(f"{sql!r} failed against {self.url}: {e.pgerror or e}") from e
        raise AssertionError("unreachable")

    def execute(self, sql: str) -> None:
        self.query(sql)

    def scalar(self, sql: str):
        """The single value of a one-row, one-column query; an int when it looks like one."""
        rows = self.query(sql)
        assert len(rows) == 1 and len(rows[0]) == 1, f"{sql!r} returned {rows!r}"
        value = rows[0][0]
        try:
            return int(value)
        except ValueError:
            return value

    def object_rows(self) -> int:
        return self.scalar(OBJECT_ROWS_SQL)

    def table_counts(self) -> dict[str, int]:
        """Row count of every table in the public schema, in one round trip. Left out: the audit log (a
        refused request changes nothing but is on record; test_audit.py checks its rows), depot_instances
        (the liveness of depotd processes, one row per process started, not data requests change) and
        webhook_attempts (the dispatcher records retries of earlier events in the background)."""
        rows = self.query(
            "SELECT table_name, (xpath('/row/n/text()', query_to_xml(format('SELECT count(*) AS n FROM %I.%I', "
            "table_schema, table_name), false, true, '')))[1]::text::bigint "
            "FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE' "
            "AND table_name NOT IN ('audit_log', 'audit_head', 'depot_instances', 'webhook_attempts') "
            "ORDER BY 1"
        )
        return {name: int(n) for name, n in rows}


class PrivatePostgres:
    """A throwaway PostgreSQL via scripts/pg-dev, for running the suite without scripts/test."""

    def __init__(self, directory: Path):
        self.directory = directory
        self.url = ""

    def start(self) -> str:
        env = clean_env({"DEPOT_PG_FAST": "1"})
        proc = run([str(REPO_ROOT / "scripts" / "pg-dev"), "start", str(self.directory)], env=env, timeout=180)
        self.url = proc.stdout.strip().splitlines()[-1]
        return self.url

    def stop(self) -> None:
        run([str(REPO_ROOT / "scripts" / "pg-dev"), "stop", str(self.directory)], check=False, timeout=120)


# --------------------------------------------------------------------------------------------------
# Signing raw requests


class _Signer(botocore.auth.S3SigV4Auth):
    """botocore's S3 SigV4 signer, optionally at a fixed time or claiming a given payload hash."""

    def __init__(self, credentials, region, when: dt.datetime | None, payload_hash: str | None):
        super().__init__(credentials, "s3", region)
        self._when = when
        self._payload_hash = payload_hash

    def payload(self, request):
        if self._payload_hash is not None:
            return self._payload_hash
        return super().payload(request)

    def add_auth(self, request):
        if self._when is None:
            return super().add_auth(request)
        request.context["timestamp"] = self._when.strftime(botocore.auth.SIGV4_TIMESTAMP)
        self._modify_request_before_signing(request)
        canonical_request = self.canonical_request(request)
        string_to_sign = self.string_to_sign(request, canonical_request)
        self._inject_signature_to_request(request, self.signature(string_to_sign, request))


def quote_key(key: str) -> str:
    """A key as it appears in a path: every byte percent-encoded except unreserved characters and '/'."""
    return urllib.parse.quote(key, safe="/~")


def content_md5(data: bytes) -> str:
    return base64.b64encode(hashlib.md5(data).digest()).decode()


def md5_etag(data: bytes) -> str:
    return '"' + hashlib.md5(data).hexdigest() + '"'


# --------------------------------------------------------------------------------------------------
# The server


@dataclass
class User:
    id: str
    display_name: str
    access_key: str
    secret: str
    admin: bool = False


@dataclass
class Snapshot:
    blobs: frozenset[str]
    tables: dict[str, int]
    object_rows: int
    listings: dict[str, object] = field(default_factory=dict)
    buckets: tuple = ()  # what snapshot() was given, so that assert_unchanged lists the same way


class Depot:
    """One depotd process with its own database, blob directory and users alice (admin) and bob."""

    # Told when any depotd starts, is killed, or has its database dropped: started(depot), killed(depot),
    # dropping(depot) (conftest.py registers the audit check, audit_check.py).
    observers: list = []

    def __init__(self, *, bin_dir: Path, base_url: str, workdir: Path):
        self.bin_dir = bin_dir
        self.workdir = workdir
        self.blob_dir = workdir / "blobs"
        # DEPOT_E2E_STORAGE=rados runs the suite on the RADOS store of the cluster scripts/test started
        # (DEPOT_TEST_CEPH_*), in a namespace of its own.
        self.storage = os.environ.get("DEPOT_E2E_STORAGE", "localfs")
        self.rados_namespace = "e2e-" + secrets.token_hex(6)
        self.key_file = workdir / "server.key"
        self.log_path = workdir / "depotd.log"
        self.db_name = "depot_e2e_" + secrets.token_hex(6)
        self.admin_db = Database(base_url)
        self.db = Database(database_url_with_name(base_url, self.db_name))
        self.region = REGION
        self.port = 0
        self.console_port = 0  # the web console's own listener (--console-listen)
        self.host = "127.0.0.1"
        self.users: dict[str, User] = {}
        self.proc: subprocess.Popen | None = None
        self._log_file = None
        self.aws_config = workdir / "aws-config"
        self.aws_credentials = workdir / "aws-credentials"
        # More depotd flags for start() (e.g. a short cleanup interval in the crash tests).
        self.extra_args: list[str] = []
        # TLS (see use_tls): the listener speaks HTTPS with this certificate and key, clients trust ca_bundle.
        self.tls_cert: Path | None = None
        self.tls_key: Path | None = None
        self.ca_bundle: Path | None = None

    # ---- lifecycle

    @property
    def endpoint(self) -> str:
        return f"{'https' if self.tls_cert else 'http'}://{self.host}:{self.port}"

    @property
    def console_endpoint(self) -> str:
        """The web console's listener: /ui/ and the REST API with console sessions (another origin than S3's)."""
        return f"{'https' if self.tls_cert else 'http'}://{self.host}:{self.console_port}"

    def use_tls(self, cert: Path, key: Path, ca_bundle: Path) -> None:
        """Serve HTTPS only (--tls-cert/--tls-key) from the next start(); every client here trusts ca_bundle."""
        self.tls_cert, self.tls_key, self.ca_bundle = cert, key, ca_bundle

    @property
    def verify(self) -> str | bool:
        """`verify` for requests and boto3: the test CA's bundle for a TLS server, else the default."""
        return str(self.ca_bundle) if self.ca_bundle else True

    def sibling(self, workdir: Path) -> "Depot":
        """Another depotd (not started) on this one's database, blob store, server key and users: what a
        second replica behind a load balancer is. Give it its own flags (extra_args, use_tls) and start it."""
        other = Depot(bin_dir=self.bin_dir, base_url=self.admin_db.url, workdir=workdir)
        workdir.mkdir(parents=True, exist_ok=True)
        other.db, other.db_name = self.db, self.db_name
        other.blob_dir, other.key_file = self.blob_dir, self.key_file
        other.storage, other.rados_namespace = self.storage, self.rados_namespace
        other.users = self.users
        return other

    def server_env(self) -> dict[str, str]:
        return clean_env({"DEPOT_DATABASE_URL": self.db.url, "DEPOT_SERVER_KEY_FILE": str(self.key_file)})

    def depotctl(self, *args: str, check: bool = True, leak_check: bool = True):
        """depotctl against this depotd's database. `leak_check` False: without LeakSanitizer's exit scan
        (about 0.7 s of CPU per run of the sanitizer build), for the suite's own setup (users, keys, tokens,
        migrations), which runs hundreds of times; the depotctl tests keep it."""
        env = self.server_env()
        if not leak_check:
            env["ASAN_OPTIONS"] = ":".join(filter(None, [env.get("ASAN_OPTIONS", ""), "detect_leaks=0"]))
        proc = run([str(self.bin_dir / "depotctl"), *args], check=check, env=env, timeout=120)
        reports = sanitizer_reports(proc.stderr)
        assert not reports, f"depotctl {' '.join(args)}: sanitizer reports:\n{proc.stderr}"
        return proc

    def setup(self) -> None:
        for binary in ("depotd", "depotctl"):
            if not (self.bin_dir / binary).is_file():
                raise RuntimeError(f"{self.bin_dir / binary} does not exist: build it (scripts/test builds build/asan)")
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.blob_dir.mkdir()
        self.key_file.write_text(secrets.token_hex(32) + "\n")
        self.key_file.chmod(0o600)
        self.admin_db.execute(f'CREATE DATABASE "{self.db_name}"')
        self.depotctl("migrate", leak_check=False)
        self.add_user("alice", "Alice Admin", admin=True)
        self.add_user("bob", "Bob Builder")

    def add_user(self, user_id: str, display_name: str, admin: bool = False) -> User:
        args = ["user", "create", user_id, "--display-name", display_name, "--email", f"{user_id}@example.com"]
        if admin:
            args.append("--admin")
        self.depotctl(*args, leak_check=False)
        key = self.create_key(user_id)
        user = User(user_id, display_name, key["access_key_id"], key["secret_access_key"], admin)
        self.users[user_id] = user
        return user

    def create_key(self, user_id: str) -> dict:
        out = json.loads(self.depotctl("key", "create", user_id, "--json", leak_check=False).stdout)
        assert out["user_id"] == user_id, out
        return out

    def start(self) -> None:
        # free_port() releases the port before depotd binds it: another process (a second e2e run in
        # parallel, a client's ephemeral port) can take it in between. That lost race, and only that,
        # is retried on a new port.
        for attempt in range(5):
            try:
                return self._start_once()
            except _PortTaken:
                if attempt == 4:
                    raise

    def _start_once(self) -> None:
        self.port = free_port()
        while (console_port := free_port()) == self.port:
            pass
        # A depotd from before --console-listen serves the console on --listen: the suite still runs
        # against it, so that an attack on the console can be shown to succeed on such a build.
        self.console_port = console_port if self.has_console_listener() else self.port
        self.write_client_configs()
        self._log_file = open(self.log_path, "ab")
        self._log_start = self.log_size()
        cmd = [
            str(self.bin_dir / "depotd"),
            "--listen", f"127.0.0.1:{self.port}",
            *(["--console-listen", f"127.0.0.1:{self.console_port}"] if self.has_console_listener() else []),
            "--database-url", self.db.url,
            *self.storage_args(),
            "--server-key-file", str(self.key_file),
            "--region", self.region,
            "--domain", "localhost",
            "--log-level", "info",
            *(["--tls-cert", str(self.tls_cert), "--tls-key", str(self.tls_key)] if self.tls_cert else []),
            # Every client of the suite is on loopback, and many tests fail authentication on purpose or
            # open many connections: the per-address limits are off unless a test sets them
            # (test_attacks_dos.py does; extra_args come later and win).
            "--auth-failure-limit", "0", "--max-connections-per-address", "0",
            # Public ACL grants are off by default (a store defaults to private); the suite tests them
            # (test_acl.py also starts a depotd with the default).
            "--allow-public-access", "true",
            *self.extra_args,
        ]
        self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=self._log_file, stderr=self._log_file,
                                     env=self.server_env(), preexec_fn=_die_with_parent)
        for observer in Depot.observers:
            observer.started(self)
        deadline = time.monotonic() + 90
        last_error = None
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                if "Address already in use" in self.log_since(self._log_start):
                    self._log_file.close()
                    raise _PortTaken()
                raise RuntimeError(f"depotd exited with {self.proc.returncode} during start-up:\n{self.log_text()[-8000:]}")
            try:
                if requests.get(self.endpoint + "/healthz", timeout=2, verify=self.verify).status_code == 200:
                    return
            except requests.RequestException as e:  # not listening yet
                last_error = e
            time.sleep(0.1)
        raise RuntimeError(f"depotd did not answer /healthz with 200 within 90 s ({last_error}):\n"
                           f"{self.log_text()[-8000:]}")

    def has_console_listener(self) -> bool:
        """Whether this depotd serves its console on a listener of its own (--console-listen)."""
        if not hasattr(self, "_console_listener"):
            shown = subprocess.run([str(self.bin_dir / "depotd"), "--help"], capture_output=True, text=True,
                                   env=clean_env(), timeout=60)
            self._console_listener = "--console-listen" in shown.stdout
        return self._console_listener

    def stop(self) -> int:
        """SIGTERM, then wait for a graceful exit; returns the exit status (-9 when it had to be killed)."""
        assert self.proc is not None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self._log_file:
            self._log_file.close()
        return self.proc.returncode

    def kill(self) -> None:
        """SIGKILL: a crash, with no chance to clean up."""
        assert self.proc is not None
        for observer in Depot.observers:
            observer.killed(self)
        self.proc.kill()
        self.proc.wait()
        if self._log_file:
            self._log_file.close()

    def drop_database(self) -> None:
        for observer in Depot.observers:
            observer.dropping(self)
        try:
            self.db.close()
            self.admin_db.execute(f'DROP DATABASE IF EXISTS "{self.db_name}" WITH (FORCE)')
        except CommandError:
            pass

    def log_text(self) -> str:
        try:
            return self.log_path.read_bytes().decode("utf-8", "replace")
        except FileNotFoundError:
            return ""

    def log_size(self) -> int:
        try:
            return self.log_path.stat().st_size
        except FileNotFoundError:
            return 0

    def log_since(self, offset: int) -> str:
        with open(self.log_path, "rb") as f:
            f.seek(offset)
            return f.read().decode("utf-8", "replace")

    # ---- clients

    def user(self, name: str) -> User:
        return self.users[name]

    def client(self, user: str = "alice", *, access_key: str | None = None, secret: str | None = None,
               endpoint: str | None = None, addressing_style: str = "path", **config):
        u = self.users.get(user)
        cfg = botocore.config.Config(**{
            "signature_version": "s3v4",
            "s3": {"addressing_style": addressing_style},
            "retries": {"total_max_attempts": 1},
            "connect_timeout": 10,
            "read_timeout": 120,
            **config,
        })
        with _BOTO3_SESSION_LOCK:  # creating clients from one session is not thread-safe; using them is
            return _boto3_session().client(
                "s3",
                endpoint_url=endpoint or self.endpoint,
                verify=self.verify,
                region_name=self.region,
                aws_access_key_id=access_key if access_key is not None else u.access_key,
                aws_secret_access_key=secret if secret is not None else u.secret,
                config=cfg,
            )

    def write_client_configs(self) -> None:
        config, credentials = [], []
        for u in self.users.values():
            for profile, extra in ((u.id, ""), (u.id + "-single-put", "    multipart_threshold = 1GB\n")):
                config.append(
                    f"[profile {profile}]\nregion = {self.region}\noutput = json\n"
                    f"s3 =\n    addressing_style = path\n    signature_version = s3v4\n{extra}"
                )
                credentials.append(
                    f"[{profile}]\naws_access_key_id = {u.access_key}\naws_secret_access_key = {u.secret}\n")
        self.aws_config.write_text("\n".join(config))
        self.aws_credentials.write_text("\n".join(credentials))
        self.aws_credentials.chmod(0o600)
        for u in self.users.values():
            (self.workdir / f"s3cfg-{u.id}").write_text(
                "[default]\n"
                f"access_key = {u.access_key}\n"
                f"secret_key = {u.secret}\n"
                f"host_base = 127.0.0.1:{self.port}\n"
                f"host_bucket = 127.0.0.1:{self.port}\n"
                f"bucket_location = {self.region}\n"
                "use_https = False\n"
                "signature_v2 = False\n"
                "check_ssl_certificate = False\n"
                "progress_meter = False\n"
                "guess_mime_type = True\n"
            )

    def aws_env(self) -> dict[str, str]:
        return clean_env({
            "AWS_CONFIG_FILE": str(self.aws_config),
            "AWS_SHARED_CREDENTIALS_FILE": str(self.aws_credentials),
            "AWS_EC2_METADATA_DISABLED": "true",
            "AWS_PAGER": "",
            "AWS_RETRY_MODE": "standard",
            "AWS_MAX_ATTEMPTS": "1",
        })

    def aws(self, *args: str, user: str = "alice", check: bool = True, timeout: float = 300, cwd=None):
        """Runs Debian's aws cli against this server as `user` (profile `user`, or `user-single-put`)."""
        cmd = [AWS, "--endpoint-url", self.endpoint, "--profile", user,
               *(["--ca-bundle", str(self.ca_bundle)] if self.ca_bundle else []), *args]
        return run(cmd, check=check, env=self.aws_env(), timeout=timeout, cwd=cwd)

    def aws_json(self, *args: str, user: str = "alice"):
        out = self.aws(*args, "--output", "json", user=user).stdout
        return json.loads(out) if out.strip() else {}

    def s3cmd(self, *args: str, user: str = "alice", check: bool = True, timeout: float = 300):
        cmd = [S3CMD, "-c", str(self.workdir / f"s3cfg-{user}"), "--no-progress", *args]
        return run(cmd, check=check, env=clean_env({"HOME": str(self.workdir)}), timeout=timeout)

    # ---- raw HTTP

    def sign(self, method: str, url: str, *, body: bytes = b"", headers: dict | None = None, user: str = "alice",
             access_key: str | None = None, secret: str | None = None, when: dt.datetime | None = None,
             payload_hash: str | None = None) -> dict[str, str]:
        """Headers (including Authorization) that sign this request as botocore would.

        `url` must already be percent-encoded (see quote_key); query values too.
        """
        u = self.users[user]
        creds = botocore.credentials.Credentials(access_key or u.access_key, secret or u.secret)
        req = botocore.awsrequest.AWSRequest(method=method, url=url, data=body, headers=dict(headers or {}))
        _Signer(creds, self.region, when, payload_hash).add_auth(req)
        return {k: v for k, v in req.headers.items()}

    def request(self, method: str, path: str, *, body: bytes = b"", headers: dict | None = None,
                signed: bool = True, **sign_args) -> requests.Response:
        """One HTTP request to depotd; `path` is percent-encoded and may carry a query string."""
        url = self.endpoint + path
        hdrs = dict(headers or {})
        if signed:
            hdrs = self.sign(method, url, body=body, headers=hdrs, **sign_args)
        return requests.request(method, url, data=body, headers=hdrs, timeout=60, allow_redirects=False,
                                verify=self.verify)

    # ---- "nothing changed" checks

    def storage_args(self) -> list[str]:
        if self.storage == "rados":
            return ["--storage", "rados",
                    "--rados-conf", os.environ["DEPOT_TEST_CEPH_CONF"],
                    "--rados-keyring", os.environ["DEPOT_TEST_CEPH_KEYRING"],
                    "--rados-pool", os.environ.get("DEPOT_TEST_CEPH_POOL", "depot"),
                    "--rados-namespace", self.rados_namespace]
        return ["--storage", "localfs", "--blob-dir", str(self.blob_dir)]

    def rados_objects(self) -> list[str]:
        """Every RADOS object of this depotd's namespace."""
        proc = run(["rados", "-c", os.environ["DEPOT_TEST_CEPH_CONF"], "--keyring", os.environ["DEPOT_TEST_CEPH_KEYRING"],
                    "-p", os.environ.get("DEPOT_TEST_CEPH_POOL", "depot"), "-N", self.rados_namespace, "ls"],
                   check=True, env=clean_env({}), timeout=120)
        return [line for line in proc.stdout.splitlines() if line]

    def blob_files(self) -> frozenset[str]:
        """The stored blobs: relative paths of the blob files (leaving out in-progress temporary files),
        or on RADOS the blobs' head objects (a blob is a head `<id>` plus stripes `<id>.<n>`)."""
        if self.storage == "rados":
            return frozenset(name for name in self.rados_objects() if "." not in name)
        found = set()
        for dirpath, dirnames, filenames in os.walk(self.blob_dir):
            dirnames[:] = [d for d in dirnames if not _is_temporary(d)]
            for name in filenames:
                if not _is_temporary(name):
                    found.add(os.path.relpath(os.path.join(dirpath, name), self.blob_dir))
        return frozenset(found)

    def store_entries(self) -> frozenset[str]:
        """Everything in the blob store, including what in-progress or cut-short writes left: every RADOS
        object of the namespace, or every file under the blob directory."""
        if self.storage == "rados":
            return frozenset(self.rados_objects())
        found = set()
        for dirpath, _, filenames in os.walk(self.blob_dir):
            found.update(os.path.relpath(os.path.join(dirpath, name), self.blob_dir) for name in filenames)
        return frozenset(found)

    def listing(self, bucket: str, user: str = "alice"):
        """Every (key, etag, size) in a bucket, or the error code when it cannot be listed."""
        client = self.client(user)
        items = []
        try:
            for page in client.get_paginator("list_objects_v2").paginate(Bucket=bucket):
                items += [(o["Key"], o["ETag"], o["Size"]) for o in page.get("Contents", [])]
        except client.exceptions.ClientError as e:
            return e.response["Error"]["Code"]
        return items

    def snapshot(self, *buckets: str | tuple[str, str]) -> Snapshot:
        """State to compare before and after a request that must change nothing.

        Buckets are names (listed by alice) or (name, user) pairs.
        """
        listings = {}
        for b in buckets:
            name, user = (b, "alice") if isinstance(b, str) else b
            listings[name] = self.listing(name, user)
        listings["<buckets>"] = sorted(b["Name"] for b in self.client("alice").list_buckets()["Buckets"])
        return Snapshot(self.blob_files(), self.db.table_counts(), self.db.object_rows(), listings, buckets)

    def assert_unchanged(self, before: Snapshot, *buckets: str | tuple[str, str]) -> None:
        if not buckets:
            buckets = before.buckets
        after = self.snapshot(*buckets)
        assert after.object_rows == before.object_rows, "object rows changed"
        changed = {t: (before.tables.get(t), n) for t, n in after.tables.items() if before.tables.get(t) != n}
        assert not changed, f"row counts changed (table: (before, after)): {changed}"
        assert after.blobs == before.blobs, (
            f"blob files changed: added {sorted(after.blobs - before.blobs)}, "
            f"removed {sorted(before.blobs - after.blobs)}")
        changed = {name: (before.listings.get(name), listing) for name, listing in after.listings.items()
                   if before.listings.get(name) != listing}
        assert not changed, f"listings changed (name: (before, after)): {changed}"


def _is_temporary(name: str) -> bool:
    lowered = name.lower()
    return (lowered.startswith(("tmp", ".tmp", "temp", ".temp", "incoming", ".incoming"))
            or lowered.endswith((".tmp", ".part", ".partial")))


def unique_bucket_name(hint: str = "b") -> str:
    """A valid, unique bucket name that tells which test made it."""
    cleaned = "".join(c if c.isalnum() else "-" for c in hint.lower()).strip("-")
    while "--" in cleaned:
        cleaned = cleaned.replace("--", "-")
    suffix = secrets.token_hex(4)
    return f"{cleaned[:50].strip('-') or 'b'}-{suffix}"


# --------------------------------------------------------------------------------------------------
# TLS: a throw-away certificate authority (Debian's openssl CLI)

OPENSSL = "/usr/bin/openssl"


class CertAuthority:
    """A test CA in `directory` that issues server certificates for 127.0.0.1 and localhost."""

    def __init__(self, directory: Path, name: str = "Depot e2e test CA"):
        directory.mkdir(parents=True, exist_ok=True)
        self.directory = directory
        self.cert = directory / "ca.pem"
        self.key = directory / "ca.key"
        run([OPENSSL, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
             "-keyout", str(self.key), "-out", str(self.cert), "-days", "2", "-subj", f"/CN={name}",
             "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign"])

    def issue(self, serial: int, cert: Path, key: Path, common_name: str = "localhost") -> tuple[Path, Path]:
        """A new key and a server certificate with this serial number, signed by the CA, for 127.0.0.1 and
        localhost. Each file is replaced atomically (a reload never reads half a file)."""
        work = self.directory / f"issue-{serial:x}"
        work.mkdir(exist_ok=True)
        (work / "ext.cnf").write_text(
            "basicConstraints = critical, CA:FALSE\n"
            "keyUsage = critical, digitalSignature\n"
            "extendedKeyUsage = serverAuth\n"
            "subjectAltName = IP:127.0.0.1, DNS:localhost\n"
            "subjectKeyIdentifier = hash\n"
            "authorityKeyIdentifier = keyid, issuer\n")
        run([OPENSSL, "req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
             "-keyout", str(work / "key.pem"), "-out", str(work / "req.csr"), "-subj", f"/CN={common_name}"])
        run([OPENSSL, "x509", "-req", "-in", str(work / "req.csr"), "-CA", str(self.cert), "-CAkey", str(self.key),
             "-set_serial", str(serial), "-days", "2", "-extfile", str(work / "ext.cnf"),
             "-out", str(work / "cert.pem")])
        for made, target in ((work / "cert.pem", cert), (work / "key.pem", key)):
            staged = target.with_name(target.name + ".new")
            staged.write_bytes(made.read_bytes())
            staged.chmod(0o600)
            os.replace(staged, target)
        return cert, key


# --------------------------------------------------------------------------------------------------
# Assertions on errors


def client_error(call, *args, **kwargs) -> dict:
    """Calls a boto3 operation that must fail; returns the error response (Error, ResponseMetadata)."""
    from botocore.exceptions import ClientError

    try:
        result = call(*args, **kwargs)
    except ClientError as e:
        return e.response
    raise AssertionError(f"{getattr(call, '__name__', call)} succeeded but should have failed: {result!r}")


def assert_client_error(response: dict, code: str, status: int) -> None:
    error = response.get("Error", {})
    got_status = response.get("ResponseMetadata", {}).get("HTTPStatusCode")
    assert (error.get("Code"), got_status) == (code, status), f"expected {code} ({status}), got {response!r}"


def expect_error(code: str, status: int, call, *args, **kwargs) -> dict:
    response = client_error(call, *args, **kwargs)
    assert_client_error(response, code, status)
    return response


S3_NS = "{http://s3.amazonaws.com/doc/2006-03-01/}"


def parse_error(response: requests.Response) -> dict[str, str]:
    """The children of an S3 <Error> document as a dict (tag -> text)."""
    import xml.etree.ElementTree as ET

    root = ET.fromstring(response.content)
    assert root.tag == "Error", f"not an S3 error document: {response.text!r}"
    return {child.tag: (child.text or "") for child in root}


def assert_error_response(response: requests.Response, code: str, status: int) -> dict[str, str]:
    """Asserts an S3 XML error with this code and status, a request id, and the header that repeats it."""
    assert response.status_code == status, f"expected {status} {code}, got {response.status_code}: {response.text!r}"
    error = parse_error(response)
    assert error.get("Code") == code, f"expected {code}, got {error!r}"
    assert error.get("Message"), f"no Message in {error!r}"
    assert error.get("RequestId"), f"no RequestId in {error!r}"
    assert response.headers.get("x-amz-request-id") == error["RequestId"], (
        f"x-amz-request-id header {response.headers.get('x-amz-request-id')!r} != RequestId {error['RequestId']!r}")
    assert response.headers.get("Content-Type", "").startswith("application/xml"), response.headers
    return error
