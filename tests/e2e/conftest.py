"""Fixtures for the e2e suite: one depotd per session, one fresh bucket per test.

Environment:
  DEPOT_BIN_DIR             directory with depotd and depotctl (default: build/asan)
  DEPOT_TEST_DATABASE_URL   a PostgreSQL server on which the suite creates (and drops) its own
                            database; unset: the suite starts one with scripts/pg-dev
"""

from __future__ import annotations

import os
import signal
import socket
from pathlib import Path

import pytest

from audit_check import AuditChecker, format_failures
from depot_harness import REPO_ROOT, Depot, PrivatePostgres, sanitizer_reports, unique_bucket_name

# The clients read these; pointing them at the suite's own files keeps ~/.aws and ambient
# AWS_* variables out of every test (boto3 clients are also given explicit credentials).
for _name in [n for n in os.environ if n.startswith("AWS_")]:
    del os.environ[_name]
os.environ["AWS_EC2_METADATA_DISABLED"] = "true"
os.environ["AWS_CONFIG_FILE"] = os.devnull
os.environ["AWS_SHARED_CREDENTIALS_FILE"] = os.devnull

# Every request of every depotd the suite starts must leave exactly the audit rows audit_expectations.py
# names (audit_check.py). DEPOT_E2E_AUDIT_CHECK=off turns the check off; =report writes the mismatches to
# the file DEPOT_E2E_AUDIT_REPORT instead of failing tests (to see them all in one run).
AUDIT = AuditChecker()
Depot.observers.append(AUDIT)


def audit_failed(failures: list[str], when: str) -> None:
    if not failures:
        return
    if os.environ.get("DEPOT_E2E_AUDIT_CHECK") == "report":
        with open(os.environ.get("DEPOT_E2E_AUDIT_REPORT", "audit-report.txt"), "a") as f:
            f.write(f"== {when}\n" + "\n".join(failures) + "\n")
        return
    pytest.fail(f"{when}: " + format_failures(failures), pytrace=False)


def pytest_configure(config):
    # SIGTERM (e.g. from CI or scripts/test being stopped) unwinds like Ctrl-C, so fixtures stop depotd.
    def _interrupt(signum, frame):
        raise KeyboardInterrupt(f"signal {signum}")

    signal.signal(signal.SIGTERM, _interrupt)


# The RADOS run (DEPOT_E2E_STORAGE=rados) covers what exercises the blob store: these modules whole, and any
# other test marked `storage`. Everything else (authorization, protocol parsing, the registry's rules, the
# clients' wire formats) behaves the same on every store: the localfs run covers it once, and CI's budget
# stays for the tests that can tell the stores apart. What the registry decides about blobs (versions,
# snapshots, lifecycle, models, SSE's sealing) is store-independent above the blob_store interface, whose
# behaviour on RADOS the storage conformance suite (storage_tests, against the same Ceph) states once.
# DEPOT_E2E_RADOS_ALL=1 runs the whole suite on RADOS.
STORAGE_MODULES = frozenset({
    "test_objects.py",  # PUT/GET/HEAD/DELETE, ranges, large bodies
    "test_multipart.py",  # parts, completion, the multi-GiB round trip's parts
    "test_dedup.py",  # shared blobs, their references and collection
    "test_crash.py",  # kill -9 mid-write: what the store and the collector keep
    "test_ceph_outage.py",  # RADOS only
    "test_attacks_durability.py",  # full store, failed writes leave nothing
    "test_fsck.py",  # the store scanned against the rows
    "test_warmup.py",  # the read cache filled from the store
})


def pytest_collection_modifyitems(config, items):
    if os.environ.get("DEPOT_E2E_STORAGE", "localfs") != "rados" or os.environ.get("DEPOT_E2E_RADOS_ALL") == "1":
        return
    keep, drop = [], []
    for item in items:
        (keep if item.path.name in STORAGE_MODULES or item.get_closest_marker("storage") else drop).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


@pytest.fixture(scope="session")
def depot(tmp_path_factory):
    bin_dir = Path(os.environ.get("DEPOT_BIN_DIR", REPO_ROOT / "build" / "asan")).resolve()
    base_url = os.environ.get("DEPOT_TEST_DATABASE_URL", "")
    private_pg = None
    if not base_url:
        private_pg = PrivatePostgres(tmp_path_factory.mktemp("pg"))
        base_url = private_pg.start()
    server = Depot(bin_dir=bin_dir, base_url=base_url, workdir=tmp_path_factory.mktemp("depot"))
    try:
        server.setup()
        server.start()
        yield server
        status = server.stop()
        log = server.log_text()
        reports = sanitizer_reports(log)
        assert not reports, "depotd reported sanitizer errors:\n" + "\n".join(reports) + "\n" + log[-20000:]
        assert status == 0, f"depotd exited with status {status} after SIGTERM:\n{log[-8000:]}"
        audit_failed(AUDIT.finish(server), "the session's depotd, at its end")
    finally:
        if server.proc is not None and server.proc.poll() is None:
            server.stop()
        server.drop_database()
        if private_pg is not None:
            private_pg.stop()


@pytest.fixture(autouse=True)
def _depot_log_marker(request, depot):
    """Remembers where depotd's log stood when the test began, for the failure report."""
    request.node._depot = depot
    request.node._depot_log_start = depot.log_size()
    yield
    # A crash mid-test would make every later test fail confusingly; say so at the culprit.
    assert depot.proc.poll() is None, f"depotd died during this test (status {depot.proc.returncode})"


@pytest.fixture(autouse=True)
def _audit_rows(request, depot):
    """Checks the audit rows of the requests logged since the last check: first those made before this test
    (by earlier tests' last requests or by the fixtures set up for it), then this test's own."""
    audit_failed(AUDIT.check_all(), f"requests made before {request.node.name} (by fixtures or earlier tests)")
    yield
    audit_failed(AUDIT.check_all(), f"requests of {request.node.name}")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    depot = getattr(item, "_depot", None)
    if report.failed and depot is not None:
        text = depot.log_since(getattr(item, "_depot_log_start", 0))
        lines = text.splitlines()
        if len(lines) > 200:
            lines = ["... (earlier lines left out)"] + lines[-200:]
        report.sections.append(("depotd log during this test", "\n".join(lines)))


@pytest.fixture
def s3(depot):
    """A boto3 S3 client for alice (admin), path-style."""
    return depot.client("alice")


@pytest.fixture
def s3_bob(depot):
    return depot.client("bob")


@pytest.fixture
def bucket_factory(depot, request):
    """make(owner='alice', hint=None) -> name of a new, empty bucket with a unique name."""

    def make(owner: str = "alice", hint: str | None = None) -> str:
        name = unique_bucket_name(hint or request.node.name)
        depot.client(owner).create_bucket(Bucket=name)
        return name

    return make


@pytest.fixture
def bucket(bucket_factory) -> str:
    """A fresh bucket owned by alice."""
    return bucket_factory()


@pytest.fixture
def localhost_subdomains(monkeypatch):
    """Makes `<anything>.localhost` resolve to 127.0.0.1 in this process (glibc here does not)."""
    real = socket.getaddrinfo

    def getaddrinfo(host, *args, **kwargs):
        if isinstance(host, bytes):
            host = host.decode()
        if isinstance(host, str) and host.endswith(".localhost"):
            host = "127.0.0.1"
        return real(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)


@pytest.fixture
def private_depot(depot, tmp_path):
    """make(*flags) -> a started depotd with a database, blob store and users of its own (alice, bob), for
    tests that kill it, count everything in its store or give it special flags. Stopped and dropped after."""
    started = []

    def make(*flags: str) -> Depot:
        server = Depot(bin_dir=depot.bin_dir, base_url=depot.admin_db.url,
                       workdir=tmp_path / f"private-{len(started)}")
        server.extra_args = list(flags)
        started.append(server)
        server.setup()
        server.start()
        return server

    yield make
    for server in started:
        if server.proc is not None and server.proc.poll() is None:
            server.stop()
        server.drop_database()  # after its last audit check (AuditChecker.dropping)
    audit_failed(AUDIT.check_all(), "the private depotd, at its end")
