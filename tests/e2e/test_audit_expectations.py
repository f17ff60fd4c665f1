"""The audit check of the whole suite (audit_check.py, audit_expectations.py): every operation depotd serves
has an expectation, and the comparison flags missing, extra and wrong rows (so the check cannot silently
pass)."""

from __future__ import annotations

import re

import pytest

from audit_check import AuditRow, LogCursor, compare
from audit_expectations import HF_OPERATIONS, REST_OPERATIONS, S3_OPERATIONS, Facts
from depot_harness import REPO_ROOT, run
from rest import operation


def test_every_routed_s3_operation_has_an_expectation():
    source = (REPO_ROOT / "src" / "server" / "dispatch.cpp").read_text()
    # A route's name and handler may be on two lines (clang-format wraps the long ones).
    routed = (set(re.findall(r'"([A-Za-z0-9]+)",\s+s3op::', source))
              | set(re.findall(r'"([A-Za-z0-9]+)",\s+nullptr', source)))
    assert routed, "no S3 routes found in dispatch.cpp"
    assert routed == set(S3_OPERATIONS), (
        f"without an entry: {sorted(routed - set(S3_OPERATIONS))}; "
        f"entries for unknown operations: {sorted(set(S3_OPERATIONS) - routed)}")


def test_every_hugging_face_route_has_an_expectation():
    source = (REPO_ROOT / "src" / "server" / "hf" / "hf.cpp").read_text()
    routed = set(re.findall(r'\{http::verb::\w+, "/[^"]*", "([A-Za-z]+)"', source))
    assert routed, "no routes found in hf.cpp"
    assert routed == set(HF_OPERATIONS), (
        f"without an entry: {sorted(routed - set(HF_OPERATIONS))}; "
        f"entries for unknown operations: {sorted(set(HF_OPERATIONS) - routed)}")


def test_every_served_rest_operation_has_an_expectation(depot):
    served = set(run([str(depot.bin_dir / "depotd"), "--print-api-routes"]).stdout.split("\n")) - {""}
    assert served, "depotd printed no routes"
    # The log names a REST request by its route's name in api.cpp, which is also the OpenAPI operationId.
    source = (REPO_ROOT / "src" / "server" / "api" / "api.cpp").read_text()
    logged = {f"{verb.rstrip('_').upper()} /api/v1{path}": name
              for verb, path, name in re.findall(r'\{http::verb::(\w+), "(/[^"]*)", "([A-Za-z]+)"', source)}
    assert set(logged) == served, "api.cpp's route table differs from --print-api-routes"
    ids = set(logged.values())
    for route, name in logged.items():
        method, path = route.split(" ", 1)
        assert operation(method, path)["operationId"] == name, route
    assert ids == set(REST_OPERATIONS), (
        f"served without an entry: {sorted(ids - set(REST_OPERATIONS))}; "
        f"entries for operations not served: {sorted(set(REST_OPERATIONS) - ids)}")


# ---- the comparison itself, on synthetic log lines and rows

def line(op, status=200, bucket="b", key="k", error="", caller="AKALICE", rid="req1"):
    return {"request_id": rid, "operation": op, "method": "PUT", "bucket": bucket, "key": key, "status": status,
            "error": error, "caller": caller}


def row(action, resource, outcome="allowed", credential="AKALICE"):
    return AuditRow(action, outcome, resource, "alice", "req1", credential)


def test_the_exact_rows_pass():
    assert compare(line("PutObject"), [row("object.put", "b/k")], Facts()) is None
    assert compare(line("HeadObject"), [], Facts()) is None
    assert compare(line("PutObject", 403, error="access_denied"), [row("s3.PutObject", "b/k", "denied")],
                   Facts()) is None
    assert compare(line("createVersion", 201, bucket="", key=""), [row("version.create", "t/m:1"),
                                                                   row("alias.set", "t/m:1")], Facts()) is None
    assert compare(line("DeleteObjects", key=""), [row("object.delete", "b/x"), row("object.delete", "b/y")],
                   Facts()) is None


def test_a_missing_row_is_flagged():
    report = compare(line("PutObject"), [], Facts())
    assert report and "req1" in report and "PutObject" in report and "missing (object.put, allowed, b/k)" in report
    assert "missing (alias.set" in compare(line("createVersion", 201), [row("version.create", "t/m:1")], Facts())


def test_an_extra_row_is_flagged():
    report = compare(line("HeadObject"), [row("object.put", "b/k")], Facts())
    assert report and "unexpected (object.put, allowed, b/k)" in report
    report = compare(line("PutObject"), [row("object.put", "b/k"), row("object.put", "b/k")], Facts())
    assert report and "too many" in report
    # A failed change leaves no row.
    assert "unexpected" in compare(line("PutObject", 412, error="precondition_failed"), [row("object.put", "b/k")],
                                   Facts())
    assert "unexpected" in compare(line("DeleteObjects", key=""), [row("object.delete", "other/x")], Facts())


def test_a_wrong_outcome_or_resource_is_flagged():
    report = compare(line("PutObject", 403, error="access_denied"), [row("s3.PutObject", "b/k", "allowed")],
                     Facts())
    assert report and "missing (s3.PutObject, denied, b/k)" in report and "unexpected" in report
    assert compare(line("PutObject"), [row("object.put", "b/other")], Facts())
    # A refusal of a caller that did not authenticate has no row; one of a known caller must have its row.
    assert compare(line("PutObject", 403, error="access_denied", caller=""), [], Facts()) is None
    assert compare(line("PutObject", 403, error="access_denied"), [], Facts())
    assert compare(line("createTeam", 403, bucket="", key=""), [], Facts())


def test_a_row_of_another_credential_is_flagged():
    report = compare(line("PutObject"), [row("object.put", "b/k", credential="AKBOB")], Facts())
    assert report and "names credential 'AKBOB'" in report


def test_downloads_depend_on_whether_the_key_is_a_model_file():
    facts = Facts(model_prefixes=[("b", "m/")])
    assert compare(line("GetObject", key="m/w"), [row("model.download", "b/m/w")], facts) is None
    assert compare(line("GetObject", key="m/w"), [], facts)
    assert compare(line("GetObject", key="other"), [], facts) is None
    assert compare(line("GetObject", key="other"), [row("model.download", "b/other")], facts)
    assert compare(line("GetObject", bucket="models", key="t/m/1/w"), [], facts)
    assert compare(line("GetObject", key=".snapshots/s1/m/w"), [row("model.download", "b/.snapshots/s1/m/w")],
                   facts) is None
    assert compare(line("GetObject", key=".snapshots/s1/other"), [], facts) is None


def test_an_operation_without_an_entry_is_flagged():
    assert "no entry" in compare(line("GetBucketWebsite"), [], Facts())


def test_the_log_cursor_consumes_complete_lines_only(tmp_path):
    log = tmp_path / "depotd.log"
    first = '{"ts":"t","level":"info","msg":"request","request_id":"r1","operation":"HeadBucket","status":200}\n'
    log.write_text(first + 'not json\n{"msg":"request","request_id":"r2"')
    cursor = LogCursor(log)
    assert [e["request_id"] for e in cursor.read_new()] == ["r1"]
    with open(log, "a") as f:
        f.write(',"operation":"HeadBucket","status":200}\n{"msg":"other"}\n')
    assert [e["request_id"] for e in cursor.read_new()] == ["r2"]
    assert cursor.read_new() == []


@pytest.mark.parametrize("op", sorted(S3_OPERATIONS))
def test_every_s3_failure_expects_no_row(op):
    assert compare(line(op, 500, error="internal"), [], Facts()) is None
