"""Multipart uploads end to end (boto3 and the aws cli), checked against S3's documented rules.

Create / UploadPart / UploadPartCopy / Complete / Abort / ListParts / ListMultipartUploads, the multipart
ETag ("<md5 of the parts' binary MD5s>-<N>"), GetObject/HeadObject with partNumber, and round trips of
large files. Every failure case also asserts that nothing was stored and nothing leaked (blob files and
row counts as before, see Depot.snapshot).

Depot deduplicates identical content, so every part here has its own random bytes: blob counts then
tell which parts are stored.

DEPOT_E2E_SKIP_LARGE=1 skips the multi-GiB round trip; DEPOT_E2E_LARGE_GIB sets its size (default 2).
"""

from __future__ import annotations

import hashlib
import os
import random
import time

import pytest

from depot_harness import expect_error, md5_etag

MiB = 1024 * 1024
PART = 5 * MiB  # S3's minimum size of every part but the last


def data(n: int, seed) -> bytes:
    return random.Random(str(seed)).randbytes(n)


def multipart_etag(parts: list[bytes]) -> str:
    digest = hashlib.md5(b"".join(hashlib.md5(p).digest() for p in parts)).hexdigest()
    return f'"{digest}-{len(parts)}"'


def upload(s3, bucket: str, key: str, parts: list[bytes], **create) -> tuple[str, list[dict]]:
    """Creates an upload and uploads `parts` as parts 1..N; returns (upload id, Complete's part list)."""
    upload_id = s3.create_multipart_upload(Bucket=bucket, Key=key, **create)["UploadId"]
    done = []
    for number, body in enumerate(parts, start=1):
        etag = s3.upload_part(Bucket=bucket, Key=key, UploadId=upload_id, PartNumber=number, Body=body)["ETag"]
        assert etag == md5_etag(body), f"part {number}"
        done.append({"PartNumber": number, "ETag": etag})
    return upload_id, done


def complete(s3, bucket: str, key: str, upload_id: str, parts: list[dict]):
    return s3.complete_multipart_upload(Bucket=bucket, Key=key, UploadId=upload_id, MultipartUpload={"Parts": parts})


def get_bytes(s3, bucket: str, key: str, **kwargs) -> bytes:
    return s3.get_object(Bucket=bucket, Key=key, **kwargs)["Body"].read()


def wait_for_blobs(depot, expected: frozenset[str] | int, timeout: float = 10.0):
    """Blob files once they equal `expected` (a set, or a count); the last seen state after `timeout`.

    Releasing blobs may trail the response that released them by a moment.
    """
    deadline = time.monotonic() + timeout
    while True:
        blobs = depot.blob_files()
        if (len(blobs) if isinstance(expected, int) else blobs) == expected or time.monotonic() > deadline:
            return blobs
        time.sleep(0.1)


def upload_ids(s3, bucket: str, **kwargs) -> list[tuple[str, str]]:
    return [(u["Key"], u["UploadId"]) for u in s3.list_multipart_uploads(Bucket=bucket, **kwargs).get("Uploads", [])]


def expect_any_error(call, *args, **kwargs) -> dict:
    from botocore.exceptions import ClientError

    try:
        result = call(*args, **kwargs)
    except ClientError as e:
        return e.response
    raise AssertionError(f"{call.__name__} succeeded but should have failed: {result!r}")


# ---- round trips


def test_round_trip_several_parts_and_a_short_last_part(depot, s3, bucket):
    parts = [data(PART, ("rt", i)) for i in range(3)] + [data(1234, ("rt", 3))]
    upload_id, done = upload(s3, bucket, "models/weights.bin", parts, ContentType="application/x-weights",
                             Metadata={"framework": "torch"}, CacheControl="no-cache")
    # While the upload is in progress the key does not exist.
    expect_error("NoSuchKey", 404, s3.get_object, Bucket=bucket, Key="models/weights.bin")

    result = complete(s3, bucket, "models/weights.bin", upload_id, done)
    expected_etag = multipart_etag(parts)
    assert result["ETag"] == expected_etag
    assert result["Key"] == "models/weights.bin" and result["Bucket"] == bucket

    whole = b"".join(parts)
    got = s3.get_object(Bucket=bucket, Key="models/weights.bin")
    assert got["ContentLength"] == len(whole)
    assert got["ETag"] == expected_etag
    assert hashlib.sha256(got["Body"].read()).hexdigest() == hashlib.sha256(whole).hexdigest()
    # Content-Type, Cache-Control and metadata given to CreateMultipartUpload apply to the object.
    assert got["ContentType"] == "application/x-weights"
    assert got["CacheControl"] == "no-cache"
    assert got["Metadata"] == {"framework": "torch"}
    # A range across the boundary of parts 1 and 2.
    ranged = get_bytes(s3, bucket, "models/weights.bin", Range=f"bytes={PART - 10}-{PART + 9}")
    assert ranged == whole[PART - 10:PART + 10]

    [listed] = s3.list_objects_v2(Bucket=bucket)["Contents"]
    assert (listed["Key"], listed["ETag"], listed["Size"]) == ("models/weights.bin", expected_etag, len(whole))

    # A completed upload is gone.
    assert upload_ids(s3, bucket) == []
    expect_error("NoSuchUpload", 404, s3.list_parts, Bucket=bucket, Key="models/weights.bin", UploadId=upload_id)
    expect_error("NoSuchUpload", 404, s3.upload_part, Bucket=bucket, Key="models/weights.bin", UploadId=upload_id,
                 PartNumber=5, Body=b"late")


def test_single_part_upload_and_an_empty_last_part(s3, bucket):
    # One part of any size (even below 5 MiB) makes a valid upload: it is the last part.
    body = data(1000, "single")
    upload_id, done = upload(s3, bucket, "one", [body])
    assert complete(s3, bucket, "one", upload_id, done)["ETag"] == multipart_etag([body])
    assert get_bytes(s3, bucket, "one") == body

    parts = [data(PART, "then-empty"), b""]
    upload_id, done = upload(s3, bucket, "two", parts)
    assert complete(s3, bucket, "two", upload_id, done)["ETag"] == multipart_etag(parts)
    assert get_bytes(s3, bucket, "two") == parts[0]


def test_reuploading_a_part_replaces_it_without_leaking_its_blob(depot, s3, bucket):
    baseline = depot.blob_files()
    first, second, replacement = data(PART, "p1"), data(4321, "p2"), data(PART, "p1-again")
    upload_id, done = upload(s3, bucket, "k", [first, second])
    with_two_parts = depot.blob_files()
    assert len(with_two_parts) > len(baseline)

    etag = s3.upload_part(Bucket=bucket, Key="k", UploadId=upload_id, PartNumber=1, Body=replacement)["ETag"]
    assert etag == md5_etag(replacement)
    # The replaced part's bytes are released: as many blob files as before, not one more.
    after = wait_for_blobs(depot, len(with_two_parts))
    assert len(after) == len(with_two_parts), "the replaced part's blob leaked"
    assert after != with_two_parts, "the replacement is stored in a new blob"

    parts = s3.list_parts(Bucket=bucket, Key="k", UploadId=upload_id)["Parts"]
    assert [(p["PartNumber"], p["ETag"], p["Size"]) for p in parts] == [
        (1, md5_etag(replacement), PART), (2, md5_etag(second), 4321)]

    # The replaced part's ETag no longer completes the upload.
    before = depot.snapshot(bucket)
    expect_error("InvalidPart", 400, complete, s3, bucket, "k", upload_id, done)
    depot.assert_unchanged(before)

    done[0]["ETag"] = etag
    assert complete(s3, bucket, "k", upload_id, done)["ETag"] == multipart_etag([replacement, second])
    assert get_bytes(s3, bucket, "k") == replacement + second
    assert len(wait_for_blobs(depot, len(after))) == len(after), "completing stored or released blobs"


def test_complete_may_leave_out_uploaded_parts_and_releases_them(depot, s3, bucket):
    baseline = depot.blob_files()
    parts = [data(PART, ("skip", i)) for i in range(3)]
    upload_id, done = upload(s3, bucket, "k", parts)
    added = len(depot.blob_files()) - len(baseline)
    assert added > 0 and added % 3 == 0, f"three parts of one size added {added} blob files"
    # Parts 1 and 3 only: part numbers need not be consecutive; part 2 is dropped.
    result = complete(s3, bucket, "k", upload_id, [done[0], done[2]])
    assert result["ETag"] == multipart_etag([parts[0], parts[2]])
    assert get_bytes(s3, bucket, "k") == parts[0] + parts[2]
    expected = len(baseline) + added // 3 * 2
    assert len(wait_for_blobs(depot, expected)) == expected, "the part left out of Complete leaked its blob"


# ---- CompleteMultipartUpload errors


@pytest.fixture
def three_parts(s3, bucket):
    """(key, upload id, parts, Complete's part list) of an upload with parts 5 MiB, 5 MiB, 100 KiB."""
    parts = [data(PART, "c1"), data(PART, "c2"), data(100 * 1024, "c3")]
    upload_id, done = upload(s3, bucket, "complete-me", parts)
    return "complete-me", upload_id, parts, done


@pytest.mark.parametrize("case", ["wrong-etag", "missing-part", "unquoted-wrong-etag"])
def test_complete_with_an_unknown_part_is_invalid_part(depot, s3, bucket, three_parts, case):
    key, upload_id, parts, done = three_parts
    listed = [dict(p) for p in done]
    if case == "wrong-etag":
        listed[1]["ETag"] = md5_etag(b"something else")
    elif case == "unquoted-wrong-etag":
        listed[1]["ETag"] = hashlib.md5(b"something else").hexdigest()
    else:
        listed.append({"PartNumber": 4, "ETag": md5_etag(b"never uploaded")})
    before = depot.snapshot(bucket)
    expect_error("InvalidPart", 400, complete, s3, bucket, key, upload_id, listed)
    depot.assert_unchanged(before)
    # The upload survives the failed attempt and completes with the right list.
    assert complete(s3, bucket, key, upload_id, done)["ETag"] == multipart_etag(parts)
    assert get_bytes(s3, bucket, key) == b"".join(parts)


def test_complete_with_unquoted_etags_succeeds(s3, bucket, three_parts):
    key, upload_id, parts, done = three_parts
    listed = [{"PartNumber": p["PartNumber"], "ETag": p["ETag"].strip('"')} for p in done]
    assert complete(s3, bucket, key, upload_id, listed)["ETag"] == multipart_etag(parts)


@pytest.mark.parametrize("order", [[2, 1, 3], [1, 3, 2], [1, 2, 2, 3]], ids=["swapped", "last-two", "repeated"])
def test_complete_with_parts_out_of_order_is_invalid_part_order(depot, s3, bucket, three_parts, order):
    key, upload_id, parts, done = three_parts
    before = depot.snapshot(bucket)
    expect_error("InvalidPartOrder", 400, complete, s3, bucket, key, upload_id, [done[n - 1] for n in order])
    depot.assert_unchanged(before)
    assert complete(s3, bucket, key, upload_id, done)["ETag"] == multipart_etag(parts)


def test_complete_with_a_too_small_part_that_is_not_last_is_entity_too_small(depot, s3, bucket):
    parts = [data(PART, "s1"), data(PART - 1, "s2"), data(10, "s3")]
    upload_id, done = upload(s3, bucket, "small", parts)
    before = depot.snapshot(bucket)
    expect_error("EntityTooSmall", 400, complete, s3, bucket, "small", upload_id, done)
    depot.assert_unchanged(before)
    # Without the small part the rest is valid (5 MiB, then a 10-byte last part).
    assert complete(s3, bucket, "small", upload_id, [done[0], done[2]])["ETag"] == multipart_etag([parts[0], parts[2]])


def test_complete_with_no_parts_is_malformed_xml(depot, s3, bucket, three_parts):
    key, upload_id, _, _ = three_parts
    before = depot.snapshot(bucket)
    expect_error("MalformedXML", 400, complete, s3, bucket, key, upload_id, [])
    depot.assert_unchanged(before)


def test_unknown_upload_id_is_no_such_upload(depot, s3, bucket, three_parts):
    key, upload_id, _, done = three_parts
    bogus = upload_id[:-4] + ("AAAA" if not upload_id.endswith("AAAA") else "BBBB")
    before = depot.snapshot(bucket)
    expect_error("NoSuchUpload", 404, complete, s3, bucket, key, bogus, done)
    expect_error("NoSuchUpload", 404, s3.upload_part, Bucket=bucket, Key=key, UploadId=bogus, PartNumber=1, Body=b"x")
    expect_error("NoSuchUpload", 404, s3.list_parts, Bucket=bucket, Key=key, UploadId=bogus)
    expect_error("NoSuchUpload", 404, s3.abort_multipart_upload, Bucket=bucket, Key=key, UploadId=bogus)
    # The right upload id under another key is not that upload either.
    expect_error("NoSuchUpload", 404, complete, s3, bucket, key + "-other", upload_id, done)
    depot.assert_unchanged(before)


@pytest.mark.parametrize("number", [0, 10001, -1])
def test_part_numbers_outside_1_to_10000_are_rejected(depot, s3, bucket, number):
    upload_id = s3.create_multipart_upload(Bucket=bucket, Key="k")["UploadId"]
    before = depot.snapshot(bucket)
    expect_error("InvalidArgument", 400, s3.upload_part, Bucket=bucket, Key="k", UploadId=upload_id,
                 PartNumber=number, Body=data(100, "n"))
    depot.assert_unchanged(before)
    assert s3.list_parts(Bucket=bucket, Key="k", UploadId=upload_id).get("Parts", []) == []


def test_part_number_10000_is_accepted(s3, bucket):
    upload_id = s3.create_multipart_upload(Bucket=bucket, Key="k")["UploadId"]
    body = data(100, "last")
    s3.upload_part(Bucket=bucket, Key="k", UploadId=upload_id, PartNumber=10000, Body=body)
    result = complete(s3, bucket, "k", upload_id, [{"PartNumber": 10000, "ETag": md5_etag(body)}])
    assert result["ETag"] == multipart_etag([body])


# ---- abort


def test_abort_removes_the_upload_and_its_blobs(depot, s3, bucket):
    before = depot.snapshot(bucket)
    upload_id, _ = upload(s3, bucket, "aborted", [data(PART, "a1"), data(PART, "a2"), data(77, "a3")])
    assert len(depot.blob_files()) > len(before.blobs)

    response = s3.abort_multipart_upload(Bucket=bucket, Key="aborted", UploadId=upload_id)
    assert response["ResponseMetadata"]["HTTPStatusCode"] == 204
    wait_for_blobs(depot, before.blobs)
    # Every row and every blob file the upload made is gone.
    depot.assert_unchanged(before)
    assert upload_ids(s3, bucket) == []
    expect_error("NoSuchUpload", 404, s3.list_parts, Bucket=bucket, Key="aborted", UploadId=upload_id)
    expect_error("NoSuchUpload", 404, s3.upload_part, Bucket=bucket, Key="aborted", UploadId=upload_id,
                 PartNumber=1, Body=b"x")
    expect_error("NoSuchUpload", 404, s3.abort_multipart_upload, Bucket=bucket, Key="aborted", UploadId=upload_id)
    expect_error("NoSuchUpload", 404, complete, s3, bucket, "aborted", upload_id,
                 [{"PartNumber": 1, "ETag": md5_etag(b"x")}])
    expect_error("NoSuchKey", 404, s3.get_object, Bucket=bucket, Key="aborted")
    depot.assert_unchanged(before)


def test_abort_keeps_the_existing_object_and_other_uploads(depot, s3, bucket):
    s3.put_object(Bucket=bucket, Key="k", Body=b"the current object")
    keep_id, keep_done = upload(s3, bucket, "k", [data(300, "keep")])
    before = depot.snapshot(bucket)
    drop_id, _ = upload(s3, bucket, "k", [data(PART, "drop1"), data(400, "drop2")])
    s3.abort_multipart_upload(Bucket=bucket, Key="k", UploadId=drop_id)
    wait_for_blobs(depot, before.blobs)
    depot.assert_unchanged(before)
    assert get_bytes(s3, bucket, "k") == b"the current object"
    assert upload_ids(s3, bucket) == [("k", keep_id)]
    complete(s3, bucket, "k", keep_id, keep_done)
    assert get_bytes(s3, bucket, "k") == data(300, "keep")


def test_abort_racing_complete_leaves_one_consistent_outcome(depot, bucket):
    """Abort and Complete of the same upload sent at the same moment: exactly one wins; the loser gets
    NoSuchUpload; the key holds either the old object or the whole new one; nothing leaks."""
    from concurrent.futures import ThreadPoolExecutor
    import threading

    s3 = depot.client("alice")
    s3.put_object(Bucket=bucket, Key="raced", Body=b"the old object")
    # Holds the old content's blob, so restoring the old object after a completed round reuses it
    # (deduplicated) and every round can be compared with the same blob set.
    s3.put_object(Bucket=bucket, Key="anchor", Body=b"the old object")
    before = depot.snapshot(bucket)
    completer, aborter = depot.client("alice"), depot.client("alice")
    outcomes = set()
    for round_ in range(8):
        parts = [data(PART, f"race{round_}-1"), data(1000 + round_, f"race{round_}-2")]
        upload_id, done = upload(s3, bucket, "raced", parts)
        gate = threading.Barrier(2)

        def do_complete():
            gate.wait()
            try:
                return "ok", complete(completer, bucket, "raced", upload_id, done)
            except completer.exceptions.ClientError as e:
                return e.response["Error"]["Code"], e.response

        def do_abort():
            gate.wait()
            try:
                return "ok", aborter.abort_multipart_upload(Bucket=bucket, Key="raced", UploadId=upload_id)
            except aborter.exceptions.ClientError as e:
                return e.response["Error"]["Code"], e.response

        with ThreadPoolExecutor(2) as pool:
            completed = pool.submit(do_complete)
            aborted = pool.submit(do_abort)
            completed, aborted = completed.result(), aborted.result()
        assert upload_ids(s3, bucket) == []
        if completed[0] == "ok":
            assert aborted[0] == "NoSuchUpload", aborted
            assert get_bytes(s3, bucket, "raced") == b"".join(parts)
            assert completed[1]["ETag"] == multipart_etag(parts)
            outcomes.add("completed")
            # Back to the old object, so every round starts from the same state.
            s3.put_object(Bucket=bucket, Key="raced", Body=b"the old object")
        else:
            assert completed[0] == "NoSuchUpload", completed
            assert aborted[0] == "ok", aborted
            assert get_bytes(s3, bucket, "raced") == b"the old object"
            outcomes.add("aborted")
        wait_for_blobs(depot, before.blobs)
        depot.assert_unchanged(before)
    assert outcomes  # which side wins is up to the scheduler; both outcomes are consistent


# ---- listings


def test_list_parts_pagination(s3, bucket):
    numbers = [1, 2, 3, 5, 8, 13, 21]
    upload_id = s3.create_multipart_upload(Bucket=bucket, Key="parts", ContentType="text/plain")["UploadId"]
    bodies = {}
    for n in reversed(numbers):  # uploaded out of order: listed in part-number order
        bodies[n] = data(100 + n, ("lp", n))
        s3.upload_part(Bucket=bucket, Key="parts", UploadId=upload_id, PartNumber=n, Body=bodies[n])

    everything = s3.list_parts(Bucket=bucket, Key="parts", UploadId=upload_id)
    assert everything["IsTruncated"] is False
    assert everything["UploadId"] == upload_id and everything["Key"] == "parts" and everything["Bucket"] == bucket
    assert [(p["PartNumber"], p["ETag"], p["Size"]) for p in everything["Parts"]] == [
        (n, md5_etag(bodies[n]), len(bodies[n])) for n in numbers]
    assert all(p["LastModified"] for p in everything["Parts"])

    pages, marker = [], 0
    while True:
        page = s3.list_parts(Bucket=bucket, Key="parts", UploadId=upload_id, MaxParts=3, PartNumberMarker=marker)
        assert page["MaxParts"] == 3
        assert page.get("PartNumberMarker", 0) == marker
        got = [p["PartNumber"] for p in page.get("Parts", [])]
        pages.append(got)
        if not page["IsTruncated"]:
            break
        assert page["NextPartNumberMarker"] == got[-1]
        marker = page["NextPartNumberMarker"]
    assert pages == [[1, 2, 3], [5, 8, 13], [21]]

    # A marker that is not a part number: the parts after it.
    page = s3.list_parts(Bucket=bucket, Key="parts", UploadId=upload_id, PartNumberMarker=6)
    assert [p["PartNumber"] for p in page["Parts"]] == [8, 13, 21]
    # boto3's paginator follows NextPartNumberMarker.
    paginated = [p["PartNumber"] for page in s3.get_paginator("list_parts").paginate(
        Bucket=bucket, Key="parts", UploadId=upload_id, PaginationConfig={"PageSize": 2}) for p in page["Parts"]]
    assert paginated == numbers


def test_list_multipart_uploads_prefix_delimiter_and_pagination(s3, bucket):
    made = []
    for key in ["b/x", "a/2", "c", "a/1", "a/2", "c", "a/2"]:
        made.append((key, s3.create_multipart_upload(Bucket=bucket, Key=key)["UploadId"]))
        time.sleep(0.01)  # distinct initiation times
    # Sorted by key; uploads of one key in the order they were initiated.
    expected = sorted(made, key=lambda item: item[0].encode())
    full = s3.list_multipart_uploads(Bucket=bucket)
    assert full["IsTruncated"] is False
    assert [(u["Key"], u["UploadId"]) for u in full["Uploads"]] == expected
    assert all(u["Initiated"] and u["StorageClass"] == "STANDARD" for u in full["Uploads"])

    assert upload_ids(s3, bucket, Prefix="a/") == [u for u in expected if u[0].startswith("a/")]
    assert upload_ids(s3, bucket, Prefix="a/2") == [u for u in expected if u[0] == "a/2"]
    assert upload_ids(s3, bucket, Prefix="zzz") == []

    folded = s3.list_multipart_uploads(Bucket=bucket, Delimiter="/")
    assert [(u["Key"], u["UploadId"]) for u in folded["Uploads"]] == [u for u in expected if u[0] == "c"]
    assert [p["Prefix"] for p in folded["CommonPrefixes"]] == ["a/", "b/"]
    folded = s3.list_multipart_uploads(Bucket=bucket, Prefix="a/", Delimiter="/")
    assert [(u["Key"], u["UploadId"]) for u in folded["Uploads"]] == [u for u in expected if u[0].startswith("a/")]
    assert not folded.get("CommonPrefixes")

    # Pages of 2: the first page ends between two uploads of "a/2", so upload-id-marker matters.
    pages, key_marker, id_marker = [], "", ""
    while True:
        page = s3.list_multipart_uploads(Bucket=bucket, MaxUploads=2, KeyMarker=key_marker, UploadIdMarker=id_marker)
        assert page["MaxUploads"] == 2
        got = [(u["Key"], u["UploadId"]) for u in page.get("Uploads", [])]
        assert 0 < len(got) <= 2
        pages.append(got)
        if not page["IsTruncated"]:
            break
        assert (page["NextKeyMarker"], page["NextUploadIdMarker"]) == got[-1]
        key_marker, id_marker = page["NextKeyMarker"], page["NextUploadIdMarker"]
    assert [u for page in pages for u in page] == expected
    assert len(pages) == 4

    # key-marker alone: only keys after it.
    assert upload_ids(s3, bucket, KeyMarker="a/2") == [u for u in expected if u[0] > "a/2"]
    # key-marker with upload-id-marker: the rest of that key's uploads, then later keys.
    a2 = [u for u in expected if u[0] == "a/2"]
    assert upload_ids(s3, bucket, KeyMarker="a/2", UploadIdMarker=a2[0][1]) == expected[expected.index(a2[0]) + 1:]

    # Completed and aborted uploads leave the listing.
    s3.abort_multipart_upload(Bucket=bucket, Key="c", UploadId=expected[-1][1])
    body = data(10, "done")
    etag = s3.upload_part(Bucket=bucket, Key="b/x", UploadId=made[0][1], PartNumber=1, Body=body)["ETag"]
    complete(s3, bucket, "b/x", made[0][1], [{"PartNumber": 1, "ETag": etag}])
    assert upload_ids(s3, bucket) == [u for u in expected if u not in (expected[-1], made[0])]


# ---- UploadPartCopy


def test_upload_part_copy_assembles_ranges_without_storing_new_bytes(depot, s3, bucket):
    single = data(12 * MiB, "source-single")
    s3.put_object(Bucket=bucket, Key="src/single", Body=single)
    mp_parts = [data(PART, "source-mp1"), data(3 * MiB, "source-mp2")]
    src_id, src_done = upload(s3, bucket, "src/multipart", mp_parts)
    complete(s3, bucket, "src/multipart", src_id, src_done)
    multipart = b"".join(mp_parts)

    upload_id = s3.create_multipart_upload(Bucket=bucket, Key="assembled")["UploadId"]
    blobs_before = depot.blob_files()
    sources = {"src/single": single, "src/multipart": multipart}
    done, expected = [], []

    def copy_part(number, src, byte_range=None):
        extra = {"CopySourceRange": f"bytes={byte_range[0]}-{byte_range[1]}"} if byte_range else {}
        result = s3.upload_part_copy(Bucket=bucket, Key="assembled", UploadId=upload_id, PartNumber=number,
                                     CopySource={"Bucket": bucket, "Key": src}, **extra)
        piece = sources[src][byte_range[0]:byte_range[1] + 1] if byte_range else sources[src]
        assert result["CopyPartResult"]["ETag"] == md5_etag(piece)
        assert result["CopyPartResult"]["LastModified"]
        done.append({"PartNumber": number, "ETag": result["CopyPartResult"]["ETag"]})
        expected.append(piece)

    copy_part(1, "src/single", (1 * MiB, 1 * MiB + PART - 1))          # 5 MiB from the middle of a single PUT
    copy_part(2, "src/multipart", (PART - 2 * MiB, PART + 3 * MiB - 1))  # 5 MiB across the source's two parts
    copy_part(3, "src/multipart")                                      # a whole object: no range
    copy_part(4, "src/single", (12 * MiB - 1000, 12 * MiB - 1))        # the last 1000 bytes, as the last part

    parts = s3.list_parts(Bucket=bucket, Key="assembled", UploadId=upload_id)["Parts"]
    assert [p["Size"] for p in parts] == [PART, PART, len(multipart), 1000]
    assert depot.blob_files() == blobs_before, "copied parts stored new blob files"

    result = complete(s3, bucket, "assembled", upload_id, done)
    assert result["ETag"] == multipart_etag(expected)
    got = get_bytes(s3, bucket, "assembled")
    expected = b"".join(expected)
    assert len(got) == len(expected) and got == expected
    assert depot.blob_files() == blobs_before, "completing copied parts stored new blob files"

    # The sources are unchanged and independent of the copy.
    s3.delete_object(Bucket=bucket, Key="src/single")
    assert get_bytes(s3, bucket, "assembled") == expected
    assert get_bytes(s3, bucket, "src/multipart") == multipart


@pytest.mark.parametrize("source_range", ["bytes=0-1000", "bytes=500-499", "bytes=0-", "bytes=-10", "items=0-1"],
                         ids=["past-the-end", "reversed", "open-ended", "suffix", "not-bytes"])
def test_upload_part_copy_with_an_invalid_range_fails(depot, s3, bucket, source_range):
    s3.put_object(Bucket=bucket, Key="src", Body=data(1000, "small-src"))
    upload_id = s3.create_multipart_upload(Bucket=bucket, Key="dst")["UploadId"]
    before = depot.snapshot(bucket)
    response = expect_any_error(s3.upload_part_copy, Bucket=bucket, Key="dst", UploadId=upload_id, PartNumber=1,
                                CopySource={"Bucket": bucket, "Key": "src"}, CopySourceRange=source_range)
    # S3 answers 400 InvalidArgument ("Range specified is not valid for source object of size: 1000",
    # "The x-amz-copy-source-range value must be of the form bytes=first-last ..."); 416 InvalidRange is
    # what some S3 implementations send for a range past the end.
    status = response["ResponseMetadata"]["HTTPStatusCode"]
    assert (response["Error"]["Code"], status) in {("InvalidArgument", 400), ("InvalidRange", 416)}, response
    depot.assert_unchanged(before)
    assert s3.list_parts(Bucket=bucket, Key="dst", UploadId=upload_id).get("Parts", []) == []


def test_upload_part_copy_of_a_missing_source_is_no_such_key(depot, s3, bucket):
    upload_id = s3.create_multipart_upload(Bucket=bucket, Key="dst")["UploadId"]
    before = depot.snapshot(bucket)
    expect_error("NoSuchKey", 404, s3.upload_part_copy, Bucket=bucket, Key="dst", UploadId=upload_id, PartNumber=1,
                 CopySource={"Bucket": bucket, "Key": "missing"})
    depot.assert_unchanged(before)


# ---- partNumber on GET and HEAD


def test_get_and_head_with_part_number(s3, bucket):
    parts = [data(PART, "gp1"), data(PART, "gp2"), data(2345, "gp3")]
    upload_id, done = upload(s3, bucket, "mp", parts)
    etag = complete(s3, bucket, "mp", upload_id, done)["ETag"]
    total = sum(map(len, parts))

    offset = 0
    for number, body in enumerate(parts, start=1):
        got = s3.get_object(Bucket=bucket, Key="mp", PartNumber=number)
        assert got["ResponseMetadata"]["HTTPStatusCode"] == 206
        assert got["PartsCount"] == 3  # x-amz-mp-parts-count
        assert got["ContentLength"] == len(body)
        assert got["ContentRange"] == f"bytes {offset}-{offset + len(body) - 1}/{total}"
        assert got["ETag"] == etag  # the object's ETag, not the part's
        assert got["Body"].read() == body

        head = s3.head_object(Bucket=bucket, Key="mp", PartNumber=number)
        assert head["ResponseMetadata"]["HTTPStatusCode"] == 206
        assert head["PartsCount"] == 3
        assert head["ContentLength"] == len(body)
        assert head["ETag"] == etag
        offset += len(body)

    response = expect_any_error(s3.get_object, Bucket=bucket, Key="mp", PartNumber=4)
    assert (response["Error"]["Code"], response["ResponseMetadata"]["HTTPStatusCode"]) == ("InvalidPartNumber", 416)
    response = expect_any_error(s3.head_object, Bucket=bucket, Key="mp", PartNumber=4)
    assert response["ResponseMetadata"]["HTTPStatusCode"] == 416


def test_part_number_1_of_a_single_put_object_is_the_whole_object(s3, bucket):
    body = data(3000, "plain")
    s3.put_object(Bucket=bucket, Key="plain", Body=body)
    got = s3.get_object(Bucket=bucket, Key="plain", PartNumber=1)
    assert got["Body"].read() == body
    assert got["ContentLength"] == len(body)
    assert got["ETag"] == md5_etag(body)
    response = expect_any_error(s3.get_object, Bucket=bucket, Key="plain", PartNumber=2)
    assert (response["Error"]["Code"], response["ResponseMetadata"]["HTTPStatusCode"]) == ("InvalidPartNumber", 416)


# ---- real clients: boto3's transfer manager and the aws cli


@pytest.mark.slow
def test_boto3_transfer_manager_round_trip(s3, bucket, tmp_path):
    import boto3.s3.transfer

    body = data(17 * MiB + 3, "transfer")
    src = tmp_path / "src.bin"
    src.write_bytes(body)
    config = boto3.s3.transfer.TransferConfig(multipart_threshold=PART, multipart_chunksize=PART, max_concurrency=4)
    s3.upload_file(str(src), bucket, "t.bin", Config=config)
    head = s3.head_object(Bucket=bucket, Key="t.bin")
    assert head["ETag"] == multipart_etag([body[i:i + PART] for i in range(0, len(body), PART)])
    dst = tmp_path / "dst.bin"
    s3.download_file(bucket, "t.bin", str(dst), Config=config)
    assert dst.read_bytes() == body


@pytest.mark.slow
def test_awscli_cp_64_mib_multipart_up_and_down(depot, s3, bucket, tmp_path):
    body = data(64 * MiB, "cli64")
    src = tmp_path / "model.bin"
    src.write_bytes(body)
    depot.aws("s3", "cp", "--no-progress", str(src), f"s3://{bucket}/models/model.bin")
    head = s3.head_object(Bucket=bucket, Key="models/model.bin")
    assert head["ContentLength"] == len(body)
    # The cli's default part size is 8 MiB.
    assert head["ETag"] == multipart_etag([body[i:i + 8 * MiB] for i in range(0, len(body), 8 * MiB)])
    assert s3.head_object(Bucket=bucket, Key="models/model.bin", PartNumber=1)["PartsCount"] == 8

    dst = tmp_path / "back.bin"
    depot.aws("s3", "cp", "--no-progress", f"s3://{bucket}/models/model.bin", str(dst))
    assert hashlib.sha256(dst.read_bytes()).hexdigest() == hashlib.sha256(body).hexdigest()

    # s3api: the same object, part by part.
    listed = depot.aws_json("s3api", "head-object", "--bucket", bucket, "--key", "models/model.bin",
                            "--part-number", "8")
    assert listed["PartsCount"] == 8 and listed["ContentLength"] == 8 * MiB


def _large_gib() -> float:
    return float(os.environ.get("DEPOT_E2E_LARGE_GIB", "2"))


@pytest.mark.slow
@pytest.mark.skipif(os.environ.get("DEPOT_E2E_SKIP_LARGE") == "1", reason="DEPOT_E2E_SKIP_LARGE=1")
def test_awscli_multi_gib_round_trip(depot, s3, bucket, tmp_path):
    """`aws s3 cp` of a multi-GiB file up and down (default 2 GiB; DEPOT_E2E_LARGE_GIB), compared by SHA-256."""
    size = int(_large_gib() * 1024 * MiB) + 12345  # a short last part
    chunk = 8 * MiB  # the cli's part size
    src, dst = tmp_path / "large.bin", tmp_path / "large.back"
    sha, part_md5s = hashlib.sha256(), []
    try:
        with open(src, "wb") as f:
            written = 0
            while written < size:
                block = os.urandom(min(chunk, size - written))
                f.write(block)
                sha.update(block)
                part_md5s.append(hashlib.md5(block).digest())
                written += len(block)
        expected_etag = f'"{hashlib.md5(b"".join(part_md5s)).hexdigest()}-{len(part_md5s)}"'

        depot.aws("s3", "cp", "--no-progress", str(src), f"s3://{bucket}/large.bin", timeout=3600)
        head = s3.head_object(Bucket=bucket, Key="large.bin")
        assert head["ContentLength"] == size
        assert head["ETag"] == expected_etag
        src.unlink()

        depot.aws("s3", "cp", "--no-progress", f"s3://{bucket}/large.bin", str(dst), timeout=3600)
        assert dst.stat().st_size == size
        got = hashlib.sha256()
        with open(dst, "rb") as f:
            while block := f.read(chunk):
                got.update(block)
        assert got.hexdigest() == sha.hexdigest()
    finally:
        src.unlink(missing_ok=True)
        dst.unlink(missing_ok=True)
        s3.delete_object(Bucket=bucket, Key="large.bin")
