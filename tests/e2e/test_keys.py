"""Object keys that are easy to get wrong: unicode, spaces, '+', '%', reserved characters, 1024 bytes."""

from __future__ import annotations

import pytest

from depot_harness import expect_error, md5_etag

SPECIAL_KEYS = [
    "with space",
    "  leading and trailing spaces  ",
    "plus+sign",
    "plus+and space",
    "percent%",
    "percent%20not-a-space",
    "percent%2Fnot-a-slash",
    "question?mark",
    "hash#tag",
    "amp&er=sand",
    "semi;colon:comma,",
    "\u00fcn\u00efc\u00f6d\u00e9",
    "\u65e5\u672c\u8a9e/\u30ad\u30fc",
    "emoji-\U0001F600",
    "a//double//slash",
    "trailing/",
    "/leading-slash",
    "tilde~star*bang!",
    "quote\"apostrophe'",
    "brackets[]{}()<>",
    "back\\slash",
    "caret^pipe|backtick`",
    "dollar$at@",
]


@pytest.mark.parametrize("key", SPECIAL_KEYS)
def test_special_key_round_trip(s3, bucket, key):
    body = ("content of " + key).encode()
    assert s3.put_object(Bucket=bucket, Key=key, Body=body)["ETag"] == md5_etag(body)
    assert s3.head_object(Bucket=bucket, Key=key)["ContentLength"] == len(body)
    assert s3.get_object(Bucket=bucket, Key=key)["Body"].read() == body

    listed = s3.list_objects_v2(Bucket=bucket, Prefix=key)
    assert [o["Key"] for o in listed["Contents"]] == [key]
    assert [o["Key"] for o in s3.list_objects(Bucket=bucket)["Contents"]] == [key]

    s3.copy_object(Bucket=bucket, Key=key + ".copy", CopySource={"Bucket": bucket, "Key": key})
    assert s3.get_object(Bucket=bucket, Key=key + ".copy")["Body"].read() == body

    out = s3.delete_objects(Bucket=bucket, Delete={"Objects": [{"Key": key + ".copy"}]})
    assert [d["Key"] for d in out["Deleted"]] == [key + ".copy"]
    s3.delete_object(Bucket=bucket, Key=key)
    assert "Contents" not in s3.list_objects_v2(Bucket=bucket)


def test_keys_differing_only_in_encoding_are_distinct(s3, bucket):
    keys = ["a b", "a+b", "a%20b", "a%2Bb"]
    for key in keys:
        s3.put_object(Bucket=bucket, Key=key, Body=key.encode())
    for key in keys:
        assert s3.get_object(Bucket=bucket, Key=key)["Body"].read() == key.encode()
    assert sorted(o["Key"] for o in s3.list_objects_v2(Bucket=bucket)["Contents"]) == sorted(keys)


@pytest.mark.parametrize("key", ["k" * 1024, "\u00e9" * 512, "\u65e5" * 341 + "k"],
                         ids=["1024-ascii", "1024-two-byte", "1024-three-byte"])
def test_1024_byte_keys_work(s3, bucket, key):
    assert len(key.encode()) == 1024
    s3.put_object(Bucket=bucket, Key=key, Body=b"long key")
    assert s3.get_object(Bucket=bucket, Key=key)["Body"].read() == b"long key"
    assert [o["Key"] for o in s3.list_objects_v2(Bucket=bucket)["Contents"]] == [key]


@pytest.mark.parametrize("key", ["k" * 1025, "\u00e9" * 512 + "k", "\u65e5" * 342],
                         ids=["1025-ascii", "1025-two-byte", "1026-three-byte"])
def test_keys_over_1024_bytes_are_key_too_long(depot, s3, bucket, key):
    assert len(key.encode()) > 1024
    before = depot.snapshot(bucket)
    expect_error("KeyTooLongError", 400, s3.put_object, Bucket=bucket, Key=key, Body=b"too long")
    depot.assert_unchanged(before)


def test_copy_to_a_key_over_1024_bytes_is_key_too_long(depot, s3, bucket):
    s3.put_object(Bucket=bucket, Key="short", Body=b"x")
    before = depot.snapshot(bucket)
    expect_error("KeyTooLongError", 400, s3.copy_object, Bucket=bucket, Key="k" * 1025,
                 CopySource={"Bucket": bucket, "Key": "short"})
    depot.assert_unchanged(before)
