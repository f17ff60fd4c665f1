"""Conditional writes: PutObject and CompleteMultipartUpload with If-None-Match: * and If-Match: <etag>.

S3's rules: If-None-Match: * writes only when the key does not exist, If-Match only when the current
ETag matches; otherwise 412 PreconditionFailed and nothing changes. If-Match on a missing key is 404
NoSuchKey. Of concurrent conditional writers exactly one wins; the others get 412 (or 409
ConditionalRequestConflict, which S3 sends when a conflicting write is in progress).

Debian's boto3 (1.26) has no IfNoneMatch/IfMatch parameters on PutObject: requests are sent raw and signed
with botocore (Depot.request), or boto3 gets the headers through a before-sign hook.
"""

from __future__ import annotations

import hashlib
import random
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
import requests

from depot_harness import md5_etag, quote_key

MiB = 1024 * 1024


def data(n: int, seed) -> bytes:
    return random.Random(str(seed)).randbytes(n)


def put(depot, bucket: str, key: str, body: bytes, **headers) -> requests.Response:
    return depot.request("PUT", f"/{bucket}/{quote_key(key)}", body=body,
                         headers={k.replace("_", "-"): v for k, v in headers.items()})


def error_code(response: requests.Response) -> str | None:
    import re

    found = re.search(r"<Code>([^<]*)</Code>", response.text)
    return found.group(1) if found else None


def assert_precondition_failed(response: requests.Response):
    assert response.status_code == 412, f"expected 412, got {response.status_code}: {response.text!r}"
    assert error_code(response) == "PreconditionFailed", response.text


def get_body(s3, bucket: str, key: str) -> bytes:
    return s3.get_object(Bucket=bucket, Key=key)["Body"].read()


# ---- PutObject


def test_if_none_match_star_creates_only_when_absent(depot, s3, bucket):
    first = data(10_000, "first")
    response = put(depot, bucket, "k", first, If_None_Match="*")
    assert response.status_code == 200, response.text
    assert response.headers["ETag"] == md5_etag(first)
    assert get_body(s3, bucket, "k") == first

    before = depot.snapshot(bucket)
    second = data(10_000, "second")  # other bytes: a stored body would be a new blob
    assert_precondition_failed(put(depot, bucket, "k", second, If_None_Match="*"))
    depot.assert_unchanged(before)
    assert get_body(s3, bucket, "k") == first

    # Without the condition the same write succeeds.
    assert put(depot, bucket, "k", second).status_code == 200
    assert get_body(s3, bucket, "k") == second


def test_if_none_match_star_after_delete_succeeds(depot, s3, bucket):
    s3.put_object(Bucket=bucket, Key="k", Body=b"old")
    s3.delete_object(Bucket=bucket, Key="k")
    assert put(depot, bucket, "k", b"new", If_None_Match="*").status_code == 200
    assert get_body(s3, bucket, "k") == b"new"


def test_if_none_match_through_boto3(depot, s3, bucket):
    s3.meta.events.register("before-sign.s3.PutObject",
                            lambda request, **_: request.headers.__setitem__("If-None-Match", "*"))
    s3.put_object(Bucket=bucket, Key="k", Body=b"one")
    before = depot.snapshot(bucket)
    from depot_harness import expect_error

    expect_error("PreconditionFailed", 412, s3.put_object, Bucket=bucket, Key="k", Body=b"two")
    depot.assert_unchanged(before)


def test_if_match_writes_only_over_the_expected_etag(depot, s3, bucket):
    v1 = data(5000, "v1")
    etag1 = s3.put_object(Bucket=bucket, Key="k", Body=v1)["ETag"]
    v2 = data(5000, "v2")
    response = put(depot, bucket, "k", v2, If_Match=etag1)
    assert response.status_code == 200, response.text
    etag2 = response.headers["ETag"]
    assert etag2 == md5_etag(v2)
    assert get_body(s3, bucket, "k") == v2

    # etag1 is stale now.
    before = depot.snapshot(bucket)
    assert_precondition_failed(put(depot, bucket, "k", data(5000, "v3"), If_Match=etag1))
    assert_precondition_failed(put(depot, bucket, "k", data(5000, "v3"), If_Match='"' + "0" * 32 + '"'))
    depot.assert_unchanged(before)
    assert get_body(s3, bucket, "k") == v2

    # The current ETag, unquoted, matches too.
    assert put(depot, bucket, "k", b"v4", If_Match=etag2.strip('"')).status_code == 200
    assert get_body(s3, bucket, "k") == b"v4"


def test_if_match_on_a_missing_key_is_no_such_key(depot, s3, bucket):
    before = depot.snapshot(bucket)
    response = put(depot, bucket, "missing", b"body", If_Match=md5_etag(b"body"))
    assert response.status_code == 404, response.text
    assert error_code(response) == "NoSuchKey"
    depot.assert_unchanged(before)


def test_conditional_put_of_a_large_body_leaves_no_blob(depot, s3, bucket):
    # A body that is streamed to the blob store before the condition fails in the final transaction.
    s3.put_object(Bucket=bucket, Key="k", Body=b"small")
    before = depot.snapshot(bucket)
    assert_precondition_failed(put(depot, bucket, "k", data(12 * MiB, "large"), If_None_Match="*"))
    assert_precondition_failed(put(depot, bucket, "k", data(12 * MiB, "large2"), If_Match=md5_etag(b"other")))
    depot.assert_unchanged(before)


# ---- CopyObject


def copy(depot, bucket: str, key: str, source: str, **headers) -> requests.Response:
    return depot.request("PUT", f"/{bucket}/{quote_key(key)}",
                         headers={"x-amz-copy-source": f"/{bucket}/{quote_key(source)}",
                                  **{k.replace("_", "-"): v for k, v in headers.items()}})


def test_copy_object_honours_if_none_match_and_if_match_as_put_object_does(depot, s3, bucket):
    """Issue 34 item 7: CopyObject with If-None-Match: * onto an existing key, or If-Match with a stale ETag,
    answered 200 and overwrote the target, where PutObject answers 412. The same check now runs with the
    copy's publish: 412 (404 NoSuchKey for If-Match on a missing key) and nothing changes."""
    s3.put_object(Bucket=bucket, Key="src", Body=b"source")
    target = s3.put_object(Bucket=bucket, Key="dst", Body=b"target")["ETag"]
    before = depot.snapshot(bucket)
    assert_precondition_failed(copy(depot, bucket, "dst", "src", If_None_Match="*"))
    assert_precondition_failed(copy(depot, bucket, "dst", "src", If_Match=md5_etag(b"stale")))
    response = copy(depot, bucket, "missing", "src", If_Match=md5_etag(b"source"))
    assert response.status_code == 404 and error_code(response) == "NoSuchKey", response.text
    # If-None-Match naming the current ETag holds as on PutObject (as radosgw takes it, issue 42): 412.
    assert_precondition_failed(copy(depot, bucket, "dst", "src", If_None_Match=target))
    depot.assert_unchanged(before)
    assert get_body(s3, bucket, "dst") == b"target"
    # When they hold, the copy is made.
    response = copy(depot, bucket, "dst", "src", If_Match=target)
    assert response.status_code == 200, response.text
    assert get_body(s3, bucket, "dst") == b"source"
    response = copy(depot, bucket, "new", "src", If_None_Match="*")
    assert response.status_code == 200, response.text
    assert get_body(s3, bucket, "new") == b"source"


def test_a_part_refuses_write_conditions_rather_than_ignoring_them(depot, s3, bucket):
    """UploadPart and UploadPartCopy write no object, so If-Match / If-None-Match (which S3 checks on
    CompleteMultipartUpload) would be ignored there: 501, and no part is stored."""
    s3.put_object(Bucket=bucket, Key="src", Body=b"source")
    upload_id = s3.create_multipart_upload(Bucket=bucket, Key="k")["UploadId"]
    before = depot.snapshot(bucket)
    for headers in ({"If-None-Match": "*"}, {"If-Match": md5_etag(b"x")}):
        response = depot.request("PUT", f"/{bucket}/k?partNumber=1&uploadId={upload_id}", body=b"part",
                                 headers=headers)
        assert response.status_code == 501 and error_code(response) == "NotImplemented", response.text
        response = depot.request("PUT", f"/{bucket}/k?partNumber=1&uploadId={upload_id}",
                                 headers={"x-amz-copy-source": f"/{bucket}/src", **headers})
        assert response.status_code == 501 and error_code(response) == "NotImplemented", response.text
    depot.assert_unchanged(before)
    assert not s3.list_parts(Bucket=bucket, Key="k", UploadId=upload_id).get("Parts")


def test_post_object_and_the_rest_digest_route_never_ignore_write_conditions(depot, s3, bucket):
    """A POST Object form with If-None-Match: * over an existing key, or If-Match with a stale ETag, was
    stored (204) over the key; so was POST /api/v1/buckets/{b}/objects. The form now answers 412 as PutObject
    does; the REST route, which has no preconditions, refuses them (501). Nothing changes either way."""
    from rest import assert_problem, call, sha, token_for
    existing = s3.put_object(Bucket=bucket, Key="dst", Body=b"target")["ETag"]
    form = s3.generate_presigned_post(Bucket=bucket, Key="dst", ExpiresIn=300)
    tok = token_for(depot, "alice")["token"]
    before = depot.snapshot(bucket)
    for headers in ({"If-None-Match": "*"}, {"If-Match": md5_etag(b"stale")}):
        r = requests.post(form["url"], data=form["fields"], files={"file": ("f", b"posted")}, headers=headers,
                          timeout=60)
        assert_precondition_failed(r)
        r = call(depot, "POST", f"/api/v1/buckets/{bucket}/objects", token=tok, headers=headers,
                 body={"key": "dst", "sha256": sha(b"target"), "size": 6})
        assert_problem(r, 501, "not-implemented")
    depot.assert_unchanged(before)
    assert get_body(s3, bucket, "dst") == b"target"
    # A condition that holds lets the form through.
    r = requests.post(form["url"], data=form["fields"], files={"file": ("f", b"posted")},
                      headers={"If-Match": existing}, timeout=60)
    assert r.status_code == 204, r.text
    assert get_body(s3, bucket, "dst") == b"posted"


def test_post_object_honours_conditions_given_as_signed_form_fields(depot, s3, bucket):
    """The attacker's form: If-None-Match: * as a signed field (in the policy's conditions) over an existing
    key was stored (204), the field ignored. A condition in the form holds as the header does (412, nothing
    stored); a header and a field that disagree are 400."""
    s3.put_object(Bucket=bucket, Key="inm", Body=b"orig")
    before = depot.snapshot(bucket)
    for field in ({"If-None-Match": "*"}, {"If-Match": md5_etag(b"stale")}):
        form = s3.generate_presigned_post(Bucket=bucket, Key="inm", Fields=field, Conditions=[field],
                                          ExpiresIn=300)
        r = requests.post(form["url"], data=form["fields"], files={"file": ("f", b"overwritten")}, timeout=60)
        assert_precondition_failed(r)
    field = {"If-Match": md5_etag(b"orig")}
    form = s3.generate_presigned_post(Bucket=bucket, Key="inm", Fields=field, Conditions=[field], ExpiresIn=300)
    r = requests.post(form["url"], data=form["fields"], files={"file": ("f", b"overwritten")},
                      headers={"If-Match": md5_etag(b"other")}, timeout=60)
    assert r.status_code == 400 and "<Code>InvalidArgument</Code>" in r.text, r.text
    depot.assert_unchanged(before)
    assert get_body(s3, bucket, "inm") == b"orig"
    r = requests.post(form["url"], data=form["fields"], files={"file": ("f", b"overwritten")}, timeout=60)
    assert r.status_code == 204, r.text
    assert get_body(s3, bucket, "inm") == b"overwritten"


# ---- CompleteMultipartUpload


def start_upload(s3, bucket: str, key: str, parts: list[bytes]) -> tuple[str, list[dict]]:
    upload_id = s3.create_multipart_upload(Bucket=bucket, Key=key)["UploadId"]
    done = []
    for number, body in enumerate(parts, start=1):
        etag = s3.upload_part(Bucket=bucket, Key=key, UploadId=upload_id, PartNumber=number, Body=body)["ETag"]
        done.append({"PartNumber": number, "ETag": etag})
    return upload_id, done


def complete(depot, bucket: str, key: str, upload_id: str, parts: list[dict], **headers) -> requests.Response:
    body = "<CompleteMultipartUpload>" + "".join(
        f"<Part><PartNumber>{p['PartNumber']}</PartNumber><ETag>{p['ETag']}</ETag></Part>" for p in parts
    ) + "</CompleteMultipartUpload>"
    return depot.request("POST", f"/{bucket}/{quote_key(key)}?uploadId={upload_id}", body=body.encode(),
                         headers={"Content-Type": "application/xml",
                                  **{k.replace("_", "-"): v for k, v in headers.items()}})


def multipart_etag(parts: list[bytes]) -> str:
    return f'"{hashlib.md5(b"".join(hashlib.md5(p).digest() for p in parts)).hexdigest()}-{len(parts)}"'


def test_complete_with_if_none_match_star(depot, s3, bucket):
    parts = [data(5 * MiB, "c1"), data(100, "c2")]
    upload_id, done = start_upload(s3, bucket, "k", parts)
    response = complete(depot, bucket, "k", upload_id, done, If_None_Match="*")
    assert response.status_code == 200, response.text
    assert get_body(s3, bucket, "k") == b"".join(parts)

    # A second upload to the now existing key fails its conditional Complete and changes nothing.
    other = [data(5 * MiB, "o1"), data(100, "o2")]
    other_id, other_done = start_upload(s3, bucket, "k", other)
    before = depot.snapshot(bucket)
    assert_precondition_failed(complete(depot, bucket, "k", other_id, other_done, If_None_Match="*"))
    depot.assert_unchanged(before)
    assert get_body(s3, bucket, "k") == b"".join(parts)
    # The upload is still there: it can be completed unconditionally, or aborted.
    assert [p["PartNumber"] for p in s3.list_parts(Bucket=bucket, Key="k", UploadId=other_id)["Parts"]] == [1, 2]
    response = complete(depot, bucket, "k", other_id, other_done)
    assert response.status_code == 200, response.text
    assert get_body(s3, bucket, "k") == b"".join(other)


def test_complete_with_if_match(depot, s3, bucket):
    current = s3.put_object(Bucket=bucket, Key="k", Body=b"current")["ETag"]
    parts = [data(1000, "m1")]
    upload_id, done = start_upload(s3, bucket, "k", parts)
    before = depot.snapshot(bucket)
    assert_precondition_failed(complete(depot, bucket, "k", upload_id, done, If_Match=md5_etag(b"stale")))
    depot.assert_unchanged(before)
    response = complete(depot, bucket, "k", upload_id, done, If_Match=current)
    assert response.status_code == 200, response.text
    assert get_body(s3, bucket, "k") == parts[0]


def test_complete_with_if_match_on_a_missing_key(depot, s3, bucket):
    upload_id, done = start_upload(s3, bucket, "k", [b"x"])
    before = depot.snapshot(bucket)
    response = complete(depot, bucket, "k", upload_id, done, If_Match=md5_etag(b"x"))
    assert response.status_code == 404, response.text
    assert error_code(response) == "NoSuchKey"
    depot.assert_unchanged(before)


# ---- concurrency


def blobs_per_object(depot, s3, bucket: str, size: int) -> int:
    """How many blob files one new object of `size` bytes adds (measured, not assumed)."""
    before = len(depot.blob_files())
    s3.put_object(Bucket=bucket, Key="measure", Body=data(size, ("measure", size, time.time())))
    return len(depot.blob_files()) - before


def race(calls) -> list:
    """Runs every call at the same moment on its own thread; returns their results in order."""
    barrier = threading.Barrier(len(calls))

    def run(call):
        barrier.wait()
        return call()

    with ThreadPoolExecutor(len(calls)) as pool:
        return list(pool.map(run, calls))


def assert_one_winner(responses: list[requests.Response]) -> int:
    statuses = [r.status_code for r in responses]
    winners = [i for i, s in enumerate(statuses) if s == 200]
    assert len(winners) == 1, f"expected exactly one 200, got {statuses}: {[r.text[:200] for r in responses]}"
    for r in responses:
        if r.status_code != 200:
            assert (r.status_code, error_code(r)) in {(412, "PreconditionFailed"), (409, "ConditionalRequestConflict")}, (
                r.status_code, r.text)
    return winners[0]


WRITERS = 8
SIZE = 256 * 1024


@pytest.mark.parametrize("round_", range(3))
def test_concurrent_if_none_match_writers_one_wins(depot, s3, bucket, round_):
    per_object = blobs_per_object(depot, s3, bucket, SIZE)
    blobs_before = depot.blob_files()
    bodies = [data(SIZE, ("racer", round_, i)) for i in range(WRITERS)]
    responses = race([lambda b=b: put(depot, bucket, "contended", b, If_None_Match="*") for b in bodies])
    winner = assert_one_winner(responses)
    assert responses[winner].headers["ETag"] == md5_etag(bodies[winner])
    assert get_body(s3, bucket, "contended") == bodies[winner]
    # The losers' bodies were not kept: exactly one object's worth of new blobs.
    deadline = time.monotonic() + 5
    while len(depot.blob_files()) - len(blobs_before) != per_object and time.monotonic() < deadline:
        time.sleep(0.1)
    assert len(depot.blob_files()) - len(blobs_before) == per_object, "the losing writers' blobs leaked"
    keys = [o["Key"] for o in s3.list_objects_v2(Bucket=bucket)["Contents"]]
    assert sorted(keys) == ["contended", "measure"]


def test_concurrent_if_match_writers_one_wins(depot, s3, bucket):
    etag = s3.put_object(Bucket=bucket, Key="contended", Body=b"version 1")["ETag"]
    bodies = [data(SIZE, ("if-match-racer", i)) for i in range(WRITERS)]
    responses = race([lambda b=b: put(depot, bucket, "contended", b, If_Match=etag) for b in bodies])
    winner = assert_one_winner(responses)
    assert get_body(s3, bucket, "contended") == bodies[winner]


def test_concurrent_conditional_completes_one_wins(depot, s3, bucket):
    uploads = [start_upload(s3, bucket, "contended", [data(1000, ("mp-racer", i))]) for i in range(4)]
    responses = race([lambda u=u: complete(depot, bucket, "contended", u[0], u[1], If_None_Match="*")
                      for u in uploads])
    winner = assert_one_winner(responses)
    assert get_body(s3, bucket, "contended") == data(1000, ("mp-racer", winner))
    # The losers' uploads are still in progress (a 412 does not abort them).
    remaining = {u["UploadId"] for u in s3.list_multipart_uploads(Bucket=bucket).get("Uploads", [])}
    assert remaining == {u[0] for i, u in enumerate(uploads) if i != winner}
