"""depot-bench (tools/bench) against the session's depotd: a few seconds of each workload, checking that it
runs, that what it reports adds up (counts, bytes, ordered percentiles, rates that match count/elapsed), that
the objects it writes are really there, and that failures are counted and make it exit 1. Never a speed."""

from __future__ import annotations

import json
from pathlib import Path

from depot_harness import clean_env, run, unique_bucket_name


def depot_bench(depot, tmp_path: Path, workload: str, *args: str, secret: str | None = None,
                check: bool = True):
    binary = depot.bin_dir / "tools" / "bench" / "depot-bench"
    if not binary.is_file():
        raise RuntimeError(f"{binary} does not exist: build the depot-bench target")
    user = depot.user("alice")
    report = tmp_path / f"{workload}-{len(list(tmp_path.glob('*.json')))}.json"
    proc = run([str(binary), workload, "--endpoint", depot.endpoint, "--access-key", user.access_key,
                "--secret-key", secret if secret is not None else user.secret, "--region", depot.region,
                "--json", str(report), "--quiet", "--timeout", "60s", *args],
               env=clean_env(), check=check, timeout=240)
    return proc, (json.loads(report.read_text()) if report.exists() else None)


def check_distribution(d: dict):
    assert 0 < d["p50"] <= d["p90"] <= d["p99"] <= d["p999"] <= d["max"], d
    assert 0 < d["mean"] <= d["max"], d


def check_op(report: dict, name: str, count: int | None = None, size: int | None = None) -> dict:
    op = report["ops"][name]
    assert op["errors"] == 0, report["error_samples"]
    if count is not None:
        assert op["count"] == count
    assert op["count"] > 0
    if size is not None:
        assert op["bytes"] == op["count"] * size
    check_distribution(op["latency_ms"])
    check_distribution(op["ttfb_ms"])
    # Time to first byte is part of the whole exchange.
    assert op["ttfb_ms"]["p50"] <= op["latency_ms"]["max"]
    assert rate_matches(op["ops_per_s"], op["count"], report["elapsed_s"])
    assert rate_matches(op["mb_per_s"], op["bytes"] / 1e6, report["elapsed_s"])
    return op


def rate_matches(rate: float, amount: float, elapsed: float) -> bool:
    """rate == amount / elapsed, given that the report rounds both rate and elapsed to 3 decimals."""
    slowest, fastest = amount / (elapsed + 0.0005), amount / max(elapsed - 0.0005, 1e-9)
    return slowest - 0.0005 <= rate <= fastest + 0.0005


def test_put_then_get_head_and_ranged_get_report_consistent_numbers(depot, s3, tmp_path):
    bucket = unique_bucket_name("bench")
    size = 3 * 1024 * 1024 + 17  # several socket reads and writes per body, not a round number
    proc, put = depot_bench(depot, tmp_path, "put", "--bucket", bucket, "--size", str(size), "--concurrency",
                            "3", "--ops", "12", "--prefix", "p")
    assert put["workload"] == "put" and put["object_size"] == size and put["concurrency"] == 3
    check_op(put, "put", count=12, size=size)
    assert "put" in proc.stdout and "p99 ms" in proc.stdout  # the human table
    listed = s3.list_objects_v2(Bucket=bucket, Prefix="p/")
    assert listed["KeyCount"] == 12
    assert {o["Size"] for o in listed["Contents"]} == {size}

    # GET reads every byte of each body (the client checks each length), whole and in ranges.
    _, get = depot_bench(depot, tmp_path, "get", "--bucket", bucket, "--size", str(size), "--concurrency", "4",
                         "--ops", "20", "--prefix", "g", "--objects", "5")
    assert get["prepared"] == 5
    check_op(get, "get", count=20, size=size)
    _, ranged = depot_bench(depot, tmp_path, "get", "--bucket", bucket, "--size", str(size), "--ops", "16",
                            "--prefix", "g", "--objects", "5", "--skip-prepare", "--range-size", "100000")
    check_op(ranged, "get", count=16, size=100000)
    _, head = depot_bench(depot, tmp_path, "head", "--bucket", bucket, "--size", "4KiB", "--duration",
                          "500ms", "--prefix", "h", "--objects", "4", "--concurrency", "2")
    check_op(head, "head", size=0)
    assert head["elapsed_s"] >= 0.5


def test_list_mixed_delete_and_multipart_workloads(depot, s3, tmp_path):
    bucket = unique_bucket_name("bench")
    _, listing = depot_bench(depot, tmp_path, "list", "--bucket", bucket, "--objects", "250", "--page-size",
                             "100", "--ops", "6", "--concurrency", "1", "--prefix", "l")
    check_op(listing, "list", count=6)
    # 250 keys in pages of 100: a full listing is 3 pages, so 6 pages are two full listings.
    assert listing["keys_listed"] == 500
    assert rate_matches(listing["keys_per_s"], 500, listing["elapsed_s"])

    _, mixed = depot_bench(depot, tmp_path, "mixed", "--bucket", bucket, "--objects", "40", "--ops", "60",
                           "--mix", "get=2,put=1,head=1", "--prefix", "m", "--concurrency", "4")
    assert set(mixed["ops"]) == {"get", "put", "head"}
    assert sum(op["count"] for op in mixed["ops"].values()) == 60
    for name in mixed["ops"]:
        check_op(mixed, name)

    _, deleted = depot_bench(depot, tmp_path, "delete", "--bucket", bucket, "--objects", "30", "--ops", "30",
                             "--prefix", "d", "--concurrency", "3")
    check_op(deleted, "delete", count=30)
    assert s3.list_objects_v2(Bucket=bucket, Prefix="d/")["KeyCount"] == 0

    size = 11 * 1024 * 1024
    _, multipart = depot_bench(depot, tmp_path, "multipart", "--bucket", bucket, "--size", str(size),
                               "--part-size", "5MiB", "--ops", "2", "--concurrency", "2", "--prefix", "mp")
    check_op(multipart, "multipart", count=2, size=size)
    for obj in s3.list_objects_v2(Bucket=bucket, Prefix="mp/")["Contents"]:
        assert obj["Size"] == size
        assert obj["ETag"].endswith('-3"')  # 5 + 5 + 1 MiB


def test_failed_operations_are_counted_as_errors_and_make_it_exit_1(depot, s3, tmp_path):
    bucket = unique_bucket_name("bench")
    s3.create_bucket(Bucket=bucket)
    # Keys that were never written: every GET is a 404, counted, sampled, and the run still reports.
    proc, report = depot_bench(depot, tmp_path, "get", "--bucket", bucket, "--objects", "3", "--skip-prepare",
                               "--ops", "6", "--concurrency", "2", "--prefix", "never", check=False)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert report["ops"]["get"]["errors"] == 6
    assert report["ops"]["get"]["count"] == 0
    assert report["error_samples"] and all("404" in e for e in report["error_samples"]), report["error_samples"]


def test_a_refused_signature_stops_the_run_before_any_load_with_the_servers_reason(depot, s3, tmp_path):
    bucket = unique_bucket_name("bench")
    proc, report = depot_bench(depot, tmp_path, "put", "--bucket", bucket, "--ops", "5", "--concurrency", "1",
                               secret="not-the-secret", check=False)
    assert proc.returncode == 1
    assert "403 SignatureDoesNotMatch" in proc.stderr
    assert report is None
    assert bucket not in [b["Name"] for b in s3.list_buckets()["Buckets"]]


def test_bad_options_exit_2_with_the_reason(depot, tmp_path):
    proc, report = depot_bench(depot, tmp_path, "put", "--size", "12parsecs", check=False)
    assert proc.returncode == 2
    assert "size" in proc.stderr.lower()
    assert report is None
