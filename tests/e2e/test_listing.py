"""ListObjects (v1) and ListObjectsV2 through boto3 and raw requests: paging, delimiters, owners, XML."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from depot_harness import S3_NS, assert_error_response, md5_etag, quote_key

# 25 keys whose UTF-8 byte order differs from case-insensitive, locale and UTF-16 orders:
# "B" < "a"; "dir-2" < "dir.3" < "dir/" < "dir2/"; U+FF01 (EF BC 81) < U+1F600 (F0 9F 98 80).
KEYS = [
    "a", "b", "B", "Z", "_under", "0-zero", "9-nine", "~tilde",
    "dir/", "dir/a", "dir/b/c", "dir/b/d", "dir2/x", "dir-2", "dir.3",
    "\u00e4-umlaut", "\u00e9-acute", "\u00ff", "\u65e5\u672c\u8a9e/\u30d5\u30a1\u30a4\u30eb", "\u65e5\u672c",
    "emoji \U0001F600", "\U0001F600 first", "\uff01fullwidth", "space key", "plus+key",
]
SORTED = sorted(KEYS, key=lambda k: k.encode("utf-8"))


@pytest.fixture
def filled(s3, bucket):
    assert len(set(KEYS)) == 25
    for key in KEYS:
        s3.put_object(Bucket=bucket, Key=key, Body=key.encode())
    return bucket


def test_v2_pages_of_seven_return_every_key_once_in_utf8_byte_order(s3, filled):
    seen, sizes, token = [], [], None
    for _ in range(10):
        kwargs = {"Bucket": filled, "MaxKeys": 7}
        if token:
            kwargs["ContinuationToken"] = token
        page = s3.list_objects_v2(**kwargs)
        keys = [o["Key"] for o in page.get("Contents", [])]
        assert page["MaxKeys"] == 7
        assert page["KeyCount"] == len(keys)
        assert page["Name"] == filled
        if token:
            assert page["ContinuationToken"] == token
        seen += keys
        sizes.append(len(keys))
        if not page["IsTruncated"]:
            assert "NextContinuationToken" not in page
            break
        token = page["NextContinuationToken"]
    assert sizes == [7, 7, 7, 4]
    assert seen == SORTED


def test_v2_entries_carry_etag_size_storage_class_and_owner_only_when_asked(depot, s3, filled):
    page = s3.list_objects_v2(Bucket=filled)
    assert page["KeyCount"] == 25 and not page["IsTruncated"]
    for entry in page["Contents"]:
        assert entry["ETag"] == md5_etag(entry["Key"].encode())
        assert entry["Size"] == len(entry["Key"].encode())
        assert entry["StorageClass"] == "STANDARD"
        assert "Owner" not in entry

    owner = s3.list_buckets()["Owner"]
    with_owner = s3.list_objects_v2(Bucket=filled, FetchOwner=True)
    assert {(e["Owner"]["ID"], e["Owner"]["DisplayName"]) for e in with_owner["Contents"]} == {
        (owner["ID"], "Alice Admin")}


def test_v1_lists_owner_and_pages_with_marker(s3, filled):
    owner = s3.list_buckets()["Owner"]
    seen, marker = [], ""
    for _ in range(10):
        page = s3.list_objects(Bucket=filled, MaxKeys=7, Marker=marker)
        keys = [o["Key"] for o in page.get("Contents", [])]
        assert len(keys) <= 7 and page["MaxKeys"] == 7
        assert page["Marker"] == marker
        # S3 returns NextMarker only with a delimiter; if a server sends it anyway it must be the last key.
        assert page.get("NextMarker", keys[-1] if keys else None) == (keys[-1] if keys else None)
        for entry in page.get("Contents", []):
            assert entry["Owner"] == {"ID": owner["ID"], "DisplayName": "Alice Admin"}
        seen += keys
        if not page["IsTruncated"]:
            break
        marker = keys[-1]
    assert seen == SORTED


def test_start_after(s3, filled):
    page = s3.list_objects_v2(Bucket=filled, StartAfter="dir/b/c")
    assert page["StartAfter"] == "dir/b/c"
    assert [o["Key"] for o in page["Contents"]] == [k for k in SORTED if k.encode() > b"dir/b/c"]


def test_delimiter_rolls_up_common_prefixes(s3, filled):
    top = s3.list_objects_v2(Bucket=filled, Delimiter="/")
    prefixes = [p["Prefix"] for p in top["CommonPrefixes"]]
    contents = [o["Key"] for o in top["Contents"]]
    assert prefixes == ["dir/", "dir2/", "\u65e5\u672c\u8a9e/"]
    assert contents == [k for k in SORTED if "/" not in k]
    assert top["KeyCount"] == len(prefixes) + len(contents)
    assert top["Delimiter"] == "/"

    sub = s3.list_objects_v2(Bucket=filled, Prefix="dir/", Delimiter="/")
    assert [o["Key"] for o in sub["Contents"]] == ["dir/", "dir/a"]
    assert [p["Prefix"] for p in sub["CommonPrefixes"]] == ["dir/b/"]
    assert sub["Prefix"] == "dir/"

    unicode_dir = s3.list_objects_v2(Bucket=filled, Prefix="\u65e5\u672c\u8a9e/")
    assert [o["Key"] for o in unicode_dir["Contents"]] == ["\u65e5\u672c\u8a9e/\u30d5\u30a1\u30a4\u30eb"]


@pytest.mark.parametrize("version", ["v1", "v2"])
def test_paging_with_a_delimiter_returns_each_prefix_once(s3, filled, version):
    expected_prefixes = ["dir/", "dir2/", "\u65e5\u672c\u8a9e/"]
    expected_keys = [k for k in SORTED if "/" not in k]
    keys, prefixes, token, pages = [], [], None, 0
    while pages < 40:
        pages += 1
        if version == "v2":
            kwargs = {"Bucket": filled, "Delimiter": "/", "MaxKeys": 2}
            if token:
                kwargs["ContinuationToken"] = token
            page = s3.list_objects_v2(**kwargs)
        else:
            page = s3.list_objects(Bucket=filled, Delimiter="/", MaxKeys=2, Marker=token or "")
        page_keys = [o["Key"] for o in page.get("Contents", [])]
        page_prefixes = [p["Prefix"] for p in page.get("CommonPrefixes", [])]
        assert 1 <= len(page_keys) + len(page_prefixes) <= 2, page
        keys += page_keys
        prefixes += page_prefixes
        if not page["IsTruncated"]:
            break
        token = page["NextContinuationToken"] if version == "v2" else page["NextMarker"]
        if version == "v1":
            # NextMarker is the last key or common prefix of the page.
            assert token == max(page_keys + page_prefixes, key=lambda s: s.encode())
    assert keys == expected_keys
    assert prefixes == expected_prefixes


def test_prefix_without_matches_is_empty(s3, filled):
    page = s3.list_objects_v2(Bucket=filled, Prefix="nothing/here/")
    assert page["KeyCount"] == 0 and not page["IsTruncated"] and "Contents" not in page


def test_empty_bucket_lists_nothing(s3, bucket):
    page = s3.list_objects_v2(Bucket=bucket)
    assert page["KeyCount"] == 0 and "Contents" not in page and not page["IsTruncated"]
    assert "Contents" not in s3.list_objects(Bucket=bucket)


def test_raw_listing_without_encoding_type_escapes_xml(depot, s3, bucket):
    key = "xml <special> & \"quoted\" 'key'"
    s3.put_object(Bucket=bucket, Key=key, Body=b"x")
    response = depot.request("GET", f"/{bucket}?list-type=2&prefix={quote_key('xml <')}")
    assert response.status_code == 200, response.text
    assert response.headers["Content-Type"].startswith("application/xml")
    root = ET.fromstring(response.content)
    assert root.tag == f"{S3_NS}ListBucketResult"
    assert [e.text for e in root.iter(f"{S3_NS}Key")] == [key]
    assert root.findtext(f"{S3_NS}KeyCount") == "1"


def test_raw_listing_with_encoding_type_url_encodes_keys(depot, s3, bucket):
    key = "enc/\u00e9 +%.txt"
    s3.put_object(Bucket=bucket, Key=key, Body=b"x")
    response = depot.request("GET", f"/{bucket}?encoding-type=url&list-type=2&prefix=enc%2F")
    assert response.status_code == 200, response.text
    root = ET.fromstring(response.content)
    assert root.findtext(f"{S3_NS}EncodingType") == "url"
    [encoded] = [e.text for e in root.iter(f"{S3_NS}Key")]
    assert encoded != key and "%" in encoded
    from urllib.parse import unquote_plus
    assert unquote_plus(encoded) == key


@pytest.mark.parametrize("query", [
    "list-type=2&continuation-token=bm90IGEgdG9rZW4",
    "list-type=2&max-keys=abc",
    "list-type=2&max-keys=-1",
])
def test_bad_listing_arguments_are_invalid_argument(depot, bucket, query):
    assert_error_response(depot.request("GET", f"/{bucket}?{query}"), "InvalidArgument", 400)


def test_an_empty_continuation_token_is_the_first_page(depot, s3, bucket):
    """Issue 42: ListObjectsV2 with ContinuationToken="" (s3-tests' listv2 continuationtoken_empty; some SDK
    paginators send it) answered InvalidArgument. AWS and radosgw list from the start (after start-after)
    and echo the empty token."""
    for key in ("e/a", "e/b"):
        s3.put_object(Bucket=bucket, Key=key, Body=b"x")
    r = s3.list_objects_v2(Bucket=bucket, Prefix="e/", ContinuationToken="")
    assert [o["Key"] for o in r["Contents"]] == ["e/a", "e/b"]
    assert r["ContinuationToken"] == ""
    r = s3.list_objects_v2(Bucket=bucket, Prefix="e/", ContinuationToken="", StartAfter="e/a")
    assert [o["Key"] for o in r["Contents"]] == ["e/b"]
