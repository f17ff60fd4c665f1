"""S3 object versioning through boto3 and the aws cli: bucket versioning state, versions, delete markers,
ListObjectVersions pages, 'null' versions, copies of old versions, DeleteObjects with versions, multipart
uploads, and the errors S3 answers for bad version ids and bad configurations (changing nothing)."""

from __future__ import annotations

import pytest

from depot_harness import assert_error_response, content_md5, expect_error, md5_etag, quote_key

UNKNOWN_VERSION = "7fffffffffffff00" + "0123456789abcdef"  # well-formed, never issued


def enable(s3, bucket: str, status: str = "Enabled") -> None:
    s3.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": status})


def all_versions(s3, bucket: str, **kwargs) -> list[tuple]:
    """(key, version id, is latest, delete marker?, etag or None) of every version, in listing order."""
    out = []
    for page in s3.get_paginator("list_object_versions").paginate(Bucket=bucket, **kwargs):
        entries = [(v["Key"], v["VersionId"], v["IsLatest"], False, v["ETag"]) for v in page.get("Versions", [])]
        entries += [(m["Key"], m["VersionId"], m["IsLatest"], True, None) for m in page.get("DeleteMarkers", [])]
        # boto3 splits Versions and DeleteMarkers; the page's order is by key, then newest first.
        out += entries
    return out


def versions_snapshot(depot, s3, bucket: str):
    """depot.snapshot plus the bucket's version listing and versioning state."""
    return (depot.snapshot(bucket), sorted(all_versions(s3, bucket)),
            s3.get_bucket_versioning(Bucket=bucket).get("Status"))


def assert_versions_unchanged(depot, s3, bucket: str, before) -> None:
    snapshot, versions, status = before
    depot.assert_unchanged(snapshot, bucket)
    assert sorted(all_versions(s3, bucket)) == versions
    assert s3.get_bucket_versioning(Bucket=bucket).get("Status") == status


# ---- bucket versioning state


def test_versioning_status_starts_unset_then_enabled_then_suspended(s3, bucket):
    got = s3.get_bucket_versioning(Bucket=bucket)
    assert "Status" not in got
    enable(s3, bucket)
    assert s3.get_bucket_versioning(Bucket=bucket)["Status"] == "Enabled"
    enable(s3, bucket, "Suspended")
    assert s3.get_bucket_versioning(Bucket=bucket)["Status"] == "Suspended"
    enable(s3, bucket)
    assert s3.get_bucket_versioning(Bucket=bucket)["Status"] == "Enabled"


@pytest.mark.parametrize("body", [
    b"<VersioningConfiguration><Status>Disabled</Status></VersioningConfiguration>",
    b"<VersioningConfiguration><Status>enabled</Status></VersioningConfiguration>",
    b"<VersioningConfiguration></VersioningConfiguration>",
    b"<VersioningConfiguration><Status>Enabled</Status>",
    b"<Versioning><Status>Enabled</Status></Versioning>",
    b"",
])
def test_invalid_versioning_configuration_is_malformed_xml_and_changes_nothing(depot, s3, bucket, body):
    s3.put_object(Bucket=bucket, Key="k", Body=b"v")
    before = versions_snapshot(depot, s3, bucket)
    response = depot.request("PUT", f"/{bucket}?versioning", body=body,
                             headers={"Content-MD5": content_md5(body)})
    assert_error_response(response, "MalformedXML", 400)
    assert_versions_unchanged(depot, s3, bucket, before)
    assert "Status" not in s3.get_bucket_versioning(Bucket=bucket)


def test_a_never_versioned_bucket_reports_only_null_versions(s3, bucket):
    put = s3.put_object(Bucket=bucket, Key="k", Body=b"one")
    assert "VersionId" not in put
    s3.put_object(Bucket=bucket, Key="k", Body=b"two")
    assert "VersionId" not in s3.get_object(Bucket=bucket, Key="k")
    assert all_versions(s3, bucket) == [("k", "null", True, False, md5_etag(b"two"))]
    assert s3.get_object(Bucket=bucket, Key="k", VersionId="null")["Body"].read() == b"two"
    deleted = s3.delete_object(Bucket=bucket, Key="k")
    assert "DeleteMarker" not in deleted and "VersionId" not in deleted
    assert all_versions(s3, bucket) == []


# ---- versions and delete markers


def test_three_versions_each_read_back_by_id(depot, s3, bucket):
    enable(s3, bucket)
    bodies = [b"first", b"second!", b"third..."]
    ids = [s3.put_object(Bucket=bucket, Key="model.bin", Body=b)["VersionId"] for b in bodies]
    assert len(set(ids)) == 3 and "null" not in ids
    assert ids == sorted(ids)  # ids sort by creation
    for version_id, body in zip(ids, bodies):
        got = s3.get_object(Bucket=bucket, Key="model.bin", VersionId=version_id)
        assert got["Body"].read() == body
        assert got["VersionId"] == version_id
        head = s3.head_object(Bucket=bucket, Key="model.bin", VersionId=version_id)
        assert head["ContentLength"] == len(body) and head["ETag"] == md5_etag(body)
    current = s3.get_object(Bucket=bucket, Key="model.bin")
    assert current["Body"].read() == bodies[-1] and current["VersionId"] == ids[-1]
    assert all_versions(s3, bucket) == [("model.bin", ids[2], True, False, md5_etag(bodies[2])),
                                        ("model.bin", ids[1], False, False, md5_etag(bodies[1])),
                                        ("model.bin", ids[0], False, False, md5_etag(bodies[0]))]
    assert depot.listing(bucket) == [("model.bin", md5_etag(bodies[-1]), len(bodies[-1]))]
    assert len(depot.blob_files()) >= 3


def test_delete_marker_hides_the_key_and_deleting_it_restores_it(depot, s3, bucket):
    enable(s3, bucket)
    v1 = s3.put_object(Bucket=bucket, Key="k", Body=b"kept")["VersionId"]
    blobs = depot.blob_files()
    deleted = s3.delete_object(Bucket=bucket, Key="k")
    assert deleted["DeleteMarker"] is True
    marker = deleted["VersionId"]
    assert marker not in ("null", v1)
    assert depot.blob_files() == blobs  # a delete marker frees nothing

    got = expect_error("NoSuchKey", 404, s3.get_object, Bucket=bucket, Key="k")
    assert got["ResponseMetadata"]["HTTPHeaders"]["x-amz-delete-marker"] == "true"
    assert got["ResponseMetadata"]["HTTPHeaders"]["x-amz-version-id"] == marker
    head = expect_error("404", 404, s3.head_object, Bucket=bucket, Key="k")
    assert head["ResponseMetadata"]["HTTPHeaders"]["x-amz-delete-marker"] == "true"

    by_id = depot.request("GET", f"/{bucket}/k?versionId={marker}")
    assert_error_response(by_id, "MethodNotAllowed", 405)
    assert by_id.headers["x-amz-delete-marker"] == "true"
    assert by_id.headers["x-amz-version-id"] == marker
    assert by_id.headers.get("Last-Modified")
    expect_error("405", 405, s3.head_object, Bucket=bucket, Key="k", VersionId=marker)

    assert depot.listing(bucket) == []
    assert s3.list_objects(Bucket=bucket).get("Contents", []) == []
    assert s3.get_object(Bucket=bucket, Key="k", VersionId=v1)["Body"].read() == b"kept"
    page = s3.list_object_versions(Bucket=bucket)
    assert [(m["VersionId"], m["IsLatest"]) for m in page["DeleteMarkers"]] == [(marker, True)]
    assert [(v["VersionId"], v["IsLatest"]) for v in page["Versions"]] == [(v1, False)]

    removed = s3.delete_object(Bucket=bucket, Key="k", VersionId=marker)
    assert removed["DeleteMarker"] is True and removed["VersionId"] == marker
    assert s3.get_object(Bucket=bucket, Key="k")["Body"].read() == b"kept"
    assert depot.listing(bucket) == [("k", md5_etag(b"kept"), 4)]


def test_deleting_versions_permanently_frees_their_blobs(depot, s3, bucket):
    enable(s3, bucket)
    blobs_before = depot.blob_files()
    ids = [s3.put_object(Bucket=bucket, Key="k", Body=f"version {i}".encode() * 100)["VersionId"]
           for i in range(3)]
    assert len(depot.blob_files() - blobs_before) == 3
    gone = s3.delete_object(Bucket=bucket, Key="k", VersionId=ids[1])
    assert gone["VersionId"] == ids[1] and "DeleteMarker" not in gone
    assert len(depot.blob_files() - blobs_before) == 2
    expect_error("NoSuchVersion", 404, s3.get_object, Bucket=bucket, Key="k", VersionId=ids[1])
    s3.delete_object(Bucket=bucket, Key="k", VersionId=ids[2])  # the current one: ids[0] takes over
    assert s3.get_object(Bucket=bucket, Key="k")["Body"].read() == b"version 0" * 100
    assert all_versions(s3, bucket) == [("k", ids[0], True, False, md5_etag(b"version 0" * 100))]
    # Deleting a version that no longer exists succeeds, as in S3.
    again = s3.delete_object(Bucket=bucket, Key="k", VersionId=ids[2])
    assert again["ResponseMetadata"]["HTTPStatusCode"] == 204
    s3.delete_object(Bucket=bucket, Key="k", VersionId=ids[0])
    assert depot.blob_files() == blobs_before
    assert all_versions(s3, bucket) == []
    s3.delete_bucket(Bucket=bucket)


def test_suspended_versioning_overwrites_the_null_version_and_keeps_the_others(depot, s3, bucket):
    s3.put_object(Bucket=bucket, Key="k", Body=b"before versioning")  # becomes the null version
    enable(s3, bucket)
    kept = s3.put_object(Bucket=bucket, Key="k", Body=b"versioned")["VersionId"]
    assert s3.get_object(Bucket=bucket, Key="k", VersionId="null")["Body"].read() == b"before versioning"
    enable(s3, bucket, "Suspended")
    blobs = depot.blob_files()

    s3.put_object(Bucket=bucket, Key="k", Body=b"null one")
    assert len(depot.blob_files()) == len(blobs)  # the old null version's blob went
    assert s3.get_object(Bucket=bucket, Key="k", VersionId="null")["Body"].read() == b"null one"
    s3.put_object(Bucket=bucket, Key="k", Body=b"null two")
    got = s3.get_object(Bucket=bucket, Key="k")
    assert got["Body"].read() == b"null two" and got["VersionId"] == "null"
    assert all_versions(s3, bucket) == [("k", "null", True, False, md5_etag(b"null two")),
                                        ("k", kept, False, False, md5_etag(b"versioned"))]

    marker = s3.delete_object(Bucket=bucket, Key="k")
    assert marker["DeleteMarker"] is True and marker["VersionId"] == "null"
    assert all_versions(s3, bucket) == [("k", kept, False, False, md5_etag(b"versioned")),
                                        ("k", "null", True, True, None)]
    expect_error("NoSuchKey", 404, s3.get_object, Bucket=bucket, Key="k")
    assert s3.get_object(Bucket=bucket, Key="k", VersionId=kept)["Body"].read() == b"versioned"


# ---- ListObjectVersions


def test_list_object_versions_pages_with_small_max_keys_and_common_prefixes(s3, bucket):
    enable(s3, bucket)
    expected = []
    for key in ["a", "b/1", "b/2", "c", "d"]:
        ids = [s3.put_object(Bucket=bucket, Key=key, Body=f"{key}{i}".encode())["VersionId"] for i in range(3)]
        expected += [(key, version_id) for version_id in reversed(ids)]
    marker = s3.delete_object(Bucket=bucket, Key="c")["VersionId"]
    expected.insert(expected.index(("c", s3.list_object_versions(Bucket=bucket, Prefix="c")["Versions"][0]
                                    ["VersionId"])), ("c", marker))

    for max_keys in (1, 2, 4, 1000):
        seen, key_marker, version_marker, pages = [], None, None, 0
        while True:
            args = {"Bucket": bucket, "MaxKeys": max_keys}
            if key_marker is not None:
                args["KeyMarker"] = key_marker
                if version_marker:
                    args["VersionIdMarker"] = version_marker
            page = s3.list_object_versions(**args)
            entries = [(v["Key"], v["VersionId"], v["LastModified"]) for v in page.get("Versions", [])]
            entries += [(m["Key"], m["VersionId"], m["LastModified"]) for m in page.get("DeleteMarkers", [])]
            assert len(entries) <= max_keys
            # Order within a page: by key, newest version first (version ids grow with time).
            entries.sort(key=lambda e: (e[0], [-ord(ch) for ch in e[1]]))
            seen += [(k, v) for k, v, _ in entries]
            pages += 1
            if not page["IsTruncated"]:
                assert "NextKeyMarker" not in page
                break
            key_marker, version_marker = page["NextKeyMarker"], page.get("NextVersionIdMarker")
            assert key_marker == seen[-1][0] and version_marker == seen[-1][1]
        assert seen == expected
        assert pages >= -(-len(expected) // max_keys)

    folded = s3.list_object_versions(Bucket=bucket, Delimiter="/", MaxKeys=4)
    assert [v["Key"] for v in folded["Versions"]] == ["a", "a", "a"]
    assert [p["Prefix"] for p in folded["CommonPrefixes"]] == ["b/"]
    assert folded["IsTruncated"] is True
    assert folded["NextKeyMarker"] == "b/"
    rest = s3.list_object_versions(Bucket=bucket, Delimiter="/", KeyMarker="b/")
    assert {v["Key"] for v in rest["Versions"]} == {"c", "d"} and "CommonPrefixes" not in rest

    under = s3.list_object_versions(Bucket=bucket, Prefix="b/")
    assert [(v["Key"], v["IsLatest"]) for v in under["Versions"]] == [("b/1", True), ("b/1", False),
                                                                      ("b/1", False), ("b/2", True),
                                                                      ("b/2", False), ("b/2", False)]
    # boto3 groups each page's Versions and DeleteMarkers apart: compare the sets of entries.
    assert sorted(all_versions(s3, bucket, PaginationConfig={"PageSize": 2})) == sorted(all_versions(s3, bucket))


def test_list_object_versions_rejects_bad_markers(depot, s3, bucket):
    enable(s3, bucket)
    s3.put_object(Bucket=bucket, Key="k", Body=b"x")
    response = depot.request("GET", f"/{bucket}?versions&version-id-marker=null")
    error = assert_error_response(response, "InvalidArgument", 400)
    assert error["Message"] == "A version-id marker cannot be specified without a key marker."
    response = depot.request("GET", f"/{bucket}?versions&key-marker=k&version-id-marker=not-a-version")
    error = assert_error_response(response, "InvalidArgument", 400)
    assert error["Message"] == "Invalid version id specified"
    response = depot.request("GET", f"/{bucket}?versions&max-keys=-1")
    assert_error_response(response, "InvalidArgument", 400)


# ---- copies, DeleteObjects, multipart


def test_copy_from_an_old_version_restores_it_as_a_new_version(depot, s3, bucket, bucket_factory):
    enable(s3, bucket)
    old = s3.put_object(Bucket=bucket, Key="k", Body=b"old bytes")["VersionId"]
    s3.put_object(Bucket=bucket, Key="k", Body=b"new bytes")
    blobs = depot.blob_files()
    # Onto itself: the documented way to restore a version.
    copied = s3.copy_object(Bucket=bucket, Key="k", CopySource={"Bucket": bucket, "Key": "k", "VersionId": old})
    assert copied["CopySourceVersionId"] == old
    assert copied["VersionId"] not in (old, "null")
    assert s3.get_object(Bucket=bucket, Key="k")["Body"].read() == b"old bytes"
    # Into another, never-versioned bucket.
    other = bucket_factory()
    copied = s3.copy_object(Bucket=other, Key="restored", CopySource={"Bucket": bucket, "Key": "k", "VersionId": old})
    assert copied["CopySourceVersionId"] == old and "VersionId" not in copied
    assert s3.get_object(Bucket=other, Key="restored")["Body"].read() == b"old bytes"
    assert depot.blob_files() == blobs  # copies reference the blobs

    # UploadPartCopy from the old version too.
    upload = s3.create_multipart_upload(Bucket=other, Key="mp")["UploadId"]
    part = s3.upload_part_copy(Bucket=other, Key="mp", UploadId=upload, PartNumber=1,
                               CopySource={"Bucket": bucket, "Key": "k", "VersionId": old})
    assert part["CopySourceVersionId"] == old
    s3.complete_multipart_upload(Bucket=other, Key="mp", UploadId=upload, MultipartUpload={
        "Parts": [{"PartNumber": 1, "ETag": part["CopyPartResult"]["ETag"]}]})
    assert s3.get_object(Bucket=other, Key="mp")["Body"].read() == b"old bytes"


def test_copy_source_errors_change_nothing(depot, s3, bucket):
    enable(s3, bucket)
    s3.put_object(Bucket=bucket, Key="k", Body=b"x")
    marker = s3.delete_object(Bucket=bucket, Key="k")["VersionId"]
    before = versions_snapshot(depot, s3, bucket)
    response = expect_error("InvalidArgument", 400, s3.copy_object, Bucket=bucket, Key="dst",
                            CopySource={"Bucket": bucket, "Key": "k", "VersionId": "bogus"})
    assert response["Error"]["Message"] == "Invalid version id specified"
    expect_error("NoSuchVersion", 404, s3.copy_object, Bucket=bucket, Key="dst",
                 CopySource={"Bucket": bucket, "Key": "k", "VersionId": UNKNOWN_VERSION})
    expect_error("InvalidRequest", 400, s3.copy_object, Bucket=bucket, Key="dst",
                 CopySource={"Bucket": bucket, "Key": "k", "VersionId": marker})
    expect_error("NoSuchKey", 404, s3.copy_object, Bucket=bucket, Key="dst", CopySource={"Bucket": bucket, "Key": "k"})
    assert_versions_unchanged(depot, s3, bucket, before)


def test_delete_objects_with_version_ids(depot, s3, bucket):
    enable(s3, bucket)
    a1 = s3.put_object(Bucket=bucket, Key="a", Body=b"a1")["VersionId"]
    a2 = s3.put_object(Bucket=bucket, Key="a", Body=b"a2")["VersionId"]
    s3.put_object(Bucket=bucket, Key="b", Body=b"b1")
    result = s3.delete_objects(Bucket=bucket, Delete={"Objects": [
        {"Key": "a", "VersionId": a1},
        {"Key": "b"},
        {"Key": "a", "VersionId": UNKNOWN_VERSION},
        {"Key": "c", "VersionId": "not a version"},
    ]})
    deleted = {(d["Key"], d.get("VersionId")): d for d in result["Deleted"]}
    assert set(deleted) == {("a", a1), ("b", None), ("a", UNKNOWN_VERSION)}
    assert "DeleteMarker" not in deleted[("a", a1)]
    assert deleted[("b", None)]["DeleteMarker"] is True
    b_marker = deleted[("b", None)]["DeleteMarkerVersionId"]
    assert [(e["Key"], e["Code"], e["Message"]) for e in result["Errors"]] == [
        ("c", "InvalidArgument", "Invalid version id specified")]
    assert all_versions(s3, bucket) == [("a", a2, True, False, md5_etag(b"a2")),
                                        ("b", s3.list_object_versions(Bucket=bucket, Prefix="b")["Versions"][0]
                                         ["VersionId"], False, False, md5_etag(b"b1")),
                                        ("b", b_marker, True, True, None)]
    # Deleting the marker by id reports it as one.
    result = s3.delete_objects(Bucket=bucket, Delete={"Objects": [{"Key": "b", "VersionId": b_marker}]})
    assert result["Deleted"][0]["DeleteMarker"] is True
    assert result["Deleted"][0]["DeleteMarkerVersionId"] == b_marker
    assert s3.get_object(Bucket=bucket, Key="b")["Body"].read() == b"b1"


def test_multipart_upload_completes_as_a_new_version(s3, bucket):
    enable(s3, bucket)
    first = s3.put_object(Bucket=bucket, Key="ckpt", Body=b"small")["VersionId"]
    upload = s3.create_multipart_upload(Bucket=bucket, Key="ckpt")["UploadId"]
    parts = []
    for n, fill in ((1, b"a"), (2, b"b")):
        body = fill * (5 * 1024 * 1024 if n == 1 else 1000)
        etag = s3.upload_part(Bucket=bucket, Key="ckpt", UploadId=upload, PartNumber=n, Body=body)["ETag"]
        parts.append({"PartNumber": n, "ETag": etag})
    done = s3.complete_multipart_upload(Bucket=bucket, Key="ckpt", UploadId=upload,
                                        MultipartUpload={"Parts": parts})
    assert done["VersionId"] not in (first, "null")
    assert s3.head_object(Bucket=bucket, Key="ckpt")["VersionId"] == done["VersionId"]
    assert s3.get_object(Bucket=bucket, Key="ckpt", VersionId=first)["Body"].read() == b"small"
    part2 = s3.get_object(Bucket=bucket, Key="ckpt", VersionId=done["VersionId"], PartNumber=2)
    assert part2["Body"].read() == b"b" * 1000
    attrs = s3.get_object_attributes(Bucket=bucket, Key="ckpt", VersionId=first, ObjectAttributes=["ObjectSize"])
    assert attrs["ObjectSize"] == 5 and attrs["VersionId"] == first
    assert [v["VersionId"] for v in s3.list_object_versions(Bucket=bucket)["Versions"]] == [done["VersionId"], first]


# ---- bad version ids


def test_bad_version_ids_get_precise_errors_and_change_nothing(depot, s3, bucket):
    enable(s3, bucket)
    s3.put_object(Bucket=bucket, Key="k", Body=b"x")
    before = versions_snapshot(depot, s3, bucket)
    for method in ("GET", "DELETE"):
        response = depot.request(method, f"/{bucket}/k?versionId=not-a-version-id")
        error = assert_error_response(response, "InvalidArgument", 400)
        assert error["Message"] == "Invalid version id specified"
        assert error["ArgumentName"] == "versionId"
    expect_error("400", 400, s3.head_object, Bucket=bucket, Key="k", VersionId="NULL")
    expect_error("NoSuchVersion", 404, s3.get_object, Bucket=bucket, Key="k", VersionId=UNKNOWN_VERSION)
    expect_error("NoSuchVersion", 404, s3.get_object, Bucket=bucket, Key="k", VersionId="null")
    expect_error("404", 404, s3.head_object, Bucket=bucket, Key="k", VersionId=UNKNOWN_VERSION)
    expect_error("NoSuchVersion", 404, s3.get_object_attributes, Bucket=bucket, Key="k", VersionId=UNKNOWN_VERSION,
                 ObjectAttributes=["ETag"])
    assert_versions_unchanged(depot, s3, bucket, before)


# ---- aws cli


def test_aws_cli_versioning_round_trip(depot, s3, bucket, tmp_path):
    depot.aws("s3api", "put-bucket-versioning", "--bucket", bucket,
              "--versioning-configuration", "Status=Enabled")
    assert depot.aws_json("s3api", "get-bucket-versioning", "--bucket", bucket) == {"Status": "Enabled"}
    ids = []
    for i in range(3):
        src = tmp_path / f"v{i}"
        src.write_bytes(f"cli version {i}".encode())
        out = depot.aws_json("s3api", "put-object", "--bucket", bucket, "--key", "dir/f.txt", "--body", str(src))
        ids.append(out["VersionId"])
    listed = depot.aws_json("s3api", "list-object-versions", "--bucket", bucket, "--prefix", "dir/")
    assert [v["VersionId"] for v in listed["Versions"]] == ids[::-1]
    dst = tmp_path / "out"
    depot.aws_json("s3api", "get-object", "--bucket", bucket, "--key", "dir/f.txt", "--version-id", ids[0], str(dst))
    assert dst.read_bytes() == b"cli version 0"
    depot.aws("s3", "rm", f"s3://{bucket}/dir/f.txt")
    assert depot.aws("s3", "ls", f"s3://{bucket}/dir/", check=False).stdout == ""
    listed = depot.aws_json("s3api", "list-object-versions", "--bucket", bucket, "--max-items", "2")
    # The cli truncates Versions and DeleteMarkers each to --max-items and hands out a NextToken.
    assert len(listed["Versions"]) == 2 and listed.get("NextToken")
    out = depot.aws_json("s3api", "delete-object", "--bucket", bucket, "--key", "dir/f.txt", "--version-id", ids[1])
    assert out["VersionId"] == ids[1]
    quoted = quote_key("dir/f.txt")
    assert depot.request("GET", f"/{bucket}/{quoted}?versionId={ids[1]}").status_code == 404
