"""The aws cli (Debian's /usr/bin/aws, v2) against depotd: `aws s3` high-level commands and `aws s3api`."""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import random
from pathlib import Path

import pytest

from depot_harness import AWS, assert_error_response, clean_env, md5_etag, run, unique_bucket_name

MiB = 1024 * 1024


def utf8_sorted(keys):
    return sorted(keys, key=lambda k: k.encode("utf-8"))


def make_tree(root: Path, files: dict[str, bytes]) -> None:
    for rel, data in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)


def age(root: Path) -> None:
    """Backdates every file so that `aws s3 sync` decisions never depend on sub-second timing."""
    for p in root.rglob("*"):
        if p.is_file():
            os.utime(p, (1577836800, 1577836800))  # 2020-01-01


def read_tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def keys_in(s3, bucket: str, prefix: str = "") -> list[str]:
    keys = []
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
        keys += [o["Key"] for o in page.get("Contents", [])]
    return keys


TREE = {
    "top.txt": b"top level\n",
    "nested/deeper/deepest/leaf.bin": bytes(range(256)) * 3,
    "nested/sibling.json": b'{"a": 1}\n',
    "with space/file name.txt": b"spaces in both the directory and the file name\n",
    "\u00fcn\u00efc\u00f6d\u00e9/\u65e5\u672c\u8a9e \u30d5\u30a1\u30a4\u30eb.txt": "unicode \u2713\n".encode(),
    "emoji \U0001F600/\u00e9t\u00e9.md": b"# summer\n",
}


# ---- aws s3


def test_mb_ls_rb(depot):
    name = unique_bucket_name("awscli-mb")
    assert depot.aws("s3", "mb", f"s3://{name}").stdout.strip() == f"make_bucket: {name}"
    listed = [line.split()[-1] for line in depot.aws("s3", "ls").stdout.splitlines()]
    assert name in listed
    assert depot.aws("s3", "rb", f"s3://{name}").stdout.strip() == f"remove_bucket: {name}"
    listed = [line.split()[-1] for line in depot.aws("s3", "ls").stdout.splitlines()]
    assert name not in listed


@pytest.mark.storage  # on RADOS too (conftest.STORAGE_MODULES)
def test_cp_small_file_up_and_down(depot, s3, bucket, tmp_path):
    src = tmp_path / "hello.txt"
    src.write_bytes(b"hello depot\n")
    out = depot.aws("s3", "cp", "--no-progress", str(src), f"s3://{bucket}/greetings/hello.txt").stdout
    # The cli shows the local path relative to its working directory.
    [line] = out.splitlines()
    assert line.startswith("upload: ") and line.endswith(f"hello.txt to s3://{bucket}/greetings/hello.txt"), out

    ls = depot.aws("s3", "ls", f"s3://{bucket}/greetings/").stdout.split()
    assert ls[-2:] == ["12", "hello.txt"], ls

    head = s3.head_object(Bucket=bucket, Key="greetings/hello.txt")
    assert head["ContentLength"] == 12
    assert head["ETag"] == md5_etag(b"hello depot\n")
    assert head["ContentType"] == "text/plain"  # guessed by the cli from the extension

    dst = tmp_path / "back.txt"
    out = depot.aws("s3", "cp", "--no-progress", f"s3://{bucket}/greetings/hello.txt", str(dst)).stdout
    [line] = out.splitlines()
    assert line.startswith(f"download: s3://{bucket}/greetings/hello.txt to ") and line.endswith("back.txt"), out
    assert dst.read_bytes() == b"hello depot\n"


@pytest.mark.slow
@pytest.mark.parametrize("profile", ["alice", "alice-single-put"], ids=["multipart", "single-put"])
@pytest.mark.storage  # on RADOS too (conftest.STORAGE_MODULES)
def test_cp_20_mib_file(depot, s3, bucket, tmp_path, profile):
    data = random.Random(20).randbytes(20 * MiB)
    src = tmp_path / "big.bin"
    src.write_bytes(data)
    depot.aws("s3", "cp", "--no-progress", str(src), f"s3://{bucket}/big.bin", user=profile)

    head = s3.head_object(Bucket=bucket, Key="big.bin")
    assert head["ContentLength"] == len(data)
    if profile == "alice":
        # The cli uploads 8 MiB parts: the ETag is the MD5 of the parts' MD5s, then "-<parts>".
        parts = [data[i:i + 8 * MiB] for i in range(0, len(data), 8 * MiB)]
        digest = hashlib.md5(b"".join(hashlib.md5(p).digest() for p in parts)).hexdigest()
        assert head["ETag"] == f'"{digest}-{len(parts)}"'
    else:
        assert head["ETag"] == md5_etag(data)

    dst = tmp_path / "big.back"
    depot.aws("s3", "cp", "--no-progress", f"s3://{bucket}/big.bin", str(dst), user=profile)  # ranged GETs in parallel
    assert hashlib.sha256(dst.read_bytes()).hexdigest() == hashlib.sha256(data).hexdigest()


def test_cp_recursive_nested_unicode_and_spaces(depot, s3, bucket, tmp_path):
    src = tmp_path / "src"
    make_tree(src, TREE)
    depot.aws("s3", "cp", "--no-progress", "--recursive", str(src), f"s3://{bucket}/tree/")
    assert keys_in(s3, bucket) == utf8_sorted(f"tree/{rel}" for rel in TREE)

    for rel, data in TREE.items():
        assert s3.get_object(Bucket=bucket, Key=f"tree/{rel}")["Body"].read() == data

    dst = tmp_path / "dst"
    depot.aws("s3", "cp", "--no-progress", "--recursive", f"s3://{bucket}/tree/", str(dst))
    assert read_tree(dst) == TREE


@pytest.mark.storage  # on RADOS too (conftest.STORAGE_MODULES)
def test_sync_uploads_changes_deletes_and_downloads(depot, s3, bucket, tmp_path):
    src = tmp_path / "site"
    make_tree(src, TREE)
    age(src)
    out = depot.aws("s3", "sync", "--no-progress", str(src), f"s3://{bucket}/site/").stdout
    assert len([line for line in out.splitlines() if line.startswith("upload:")]) == len(TREE)
    assert keys_in(s3, bucket) == utf8_sorted(f"site/{rel}" for rel in TREE)

    # Nothing changed locally: nothing to do.
    assert depot.aws("s3", "sync", "--no-progress", str(src), f"s3://{bucket}/site/").stdout.strip() == ""

    (src / "top.txt").write_bytes(b"top level, second edition\n")  # a different size
    (src / "nested" / "new.txt").write_bytes(b"new file\n")
    (src / "nested" / "sibling.json").unlink()
    out = depot.aws("s3", "sync", "--no-progress", "--delete", str(src), f"s3://{bucket}/site/").stdout
    lines = out.splitlines()
    assert any(line.startswith("upload:") and line.endswith(f"s3://{bucket}/site/top.txt") for line in lines), out
    assert any(line.startswith("upload:") and line.endswith(f"s3://{bucket}/site/nested/new.txt") for line in lines), out
    assert f"delete: s3://{bucket}/site/nested/sibling.json" in lines, out
    assert len(lines) == 3, out

    expected = read_tree(src)
    assert keys_in(s3, bucket) == utf8_sorted(f"site/{rel}" for rel in expected)

    dst = tmp_path / "mirror"
    depot.aws("s3", "sync", "--no-progress", f"s3://{bucket}/site/", str(dst))
    assert read_tree(dst) == expected


def test_mv_local_to_s3_within_s3_and_back(depot, s3, bucket, tmp_path):
    local = tmp_path / "moving.txt"
    local.write_bytes(b"on the move\n")
    depot.aws("s3", "mv", "--no-progress", str(local), f"s3://{bucket}/moved.txt")
    assert not local.exists()
    assert keys_in(s3, bucket) == ["moved.txt"]

    out = depot.aws("s3", "mv", "--no-progress", f"s3://{bucket}/moved.txt", f"s3://{bucket}/renamed/again.txt").stdout
    assert f"move: s3://{bucket}/moved.txt to s3://{bucket}/renamed/again.txt" in out
    assert keys_in(s3, bucket) == ["renamed/again.txt"]

    back = tmp_path / "back.txt"
    depot.aws("s3", "mv", "--no-progress", f"s3://{bucket}/renamed/again.txt", str(back))
    assert back.read_bytes() == b"on the move\n"
    assert keys_in(s3, bucket) == []


def test_rm_single_and_recursive(depot, s3, bucket):
    for key in ("logs/2024/a.log", "logs/2024/b.log", "logs/c.log", "keep/one", "keep/two"):
        s3.put_object(Bucket=bucket, Key=key, Body=key.encode())
    # rm has no --no-progress: progress lines ("Completed ...") are left out.
    out = depot.aws("s3", "rm", f"s3://{bucket}/keep/one").stdout
    assert [line for line in out.splitlines() if not line.startswith("Completed")] == [f"delete: s3://{bucket}/keep/one"]
    out = depot.aws("s3", "rm", "--recursive", f"s3://{bucket}/logs/").stdout
    assert sorted(line for line in out.splitlines() if not line.startswith("Completed")) == sorted(
        f"delete: s3://{bucket}/{k}" for k in ("logs/2024/a.log", "logs/2024/b.log", "logs/c.log"))
    assert keys_in(s3, bucket) == ["keep/two"]


def test_ls_missing_bucket_fails_with_no_such_bucket(depot):
    proc = depot.aws("s3", "ls", f"s3://{unique_bucket_name('missing')}/", check=False)
    assert proc.returncode != 0
    assert "NoSuchBucket" in proc.stderr


# ---- aws s3api


def test_s3api_put_get_head_round_trip_headers_and_metadata(depot, bucket, tmp_path):
    body = gzip.compress(b"some text that was compressed\n" * 10, mtime=0)
    src = tmp_path / "doc.gz"
    src.write_bytes(body)
    put = depot.aws_json(
        "s3api", "put-object", "--bucket", bucket, "--key", "docs/doc.txt", "--body", str(src),
        "--content-type", "text/plain; charset=utf-8",
        "--cache-control", "max-age=3600, public",
        "--content-disposition", 'attachment; filename="doc.txt"',
        "--content-encoding", "gzip",
        "--content-language", "en-GB",
        "--metadata", "project=depot,stage=e2e")
    assert put["ETag"] == md5_etag(body)

    expected = {
        "ContentLength": len(body),
        "ETag": md5_etag(body),
        "ContentType": "text/plain; charset=utf-8",
        "CacheControl": "max-age=3600, public",
        "ContentDisposition": 'attachment; filename="doc.txt"',
        "ContentEncoding": "gzip",
        "ContentLanguage": "en-GB",
        "Metadata": {"project": "depot", "stage": "e2e"},
        "AcceptRanges": "bytes",
    }
    head = depot.aws_json("s3api", "head-object", "--bucket", bucket, "--key", "docs/doc.txt")
    assert {k: head.get(k) for k in expected} == expected
    assert "LastModified" in head

    out = tmp_path / "out.gz"
    got = depot.aws_json("s3api", "get-object", "--bucket", bucket, "--key", "docs/doc.txt", str(out))
    assert {k: got.get(k) for k in expected} == expected
    assert out.read_bytes() == body


@pytest.mark.storage  # on RADOS too (conftest.STORAGE_MODULES)
def test_s3api_get_object_range(depot, s3, bucket, tmp_path):
    body = bytes(range(256)) * 4
    s3.put_object(Bucket=bucket, Key="r.bin", Body=body)
    out = tmp_path / "part"
    got = depot.aws_json("s3api", "get-object", "--bucket", bucket, "--key", "r.bin", "--range", "bytes=100-199",
                         str(out))
    assert got["ContentRange"] == "bytes 100-199/1024"
    assert got["ContentLength"] == 100
    assert out.read_bytes() == body[100:200]


@pytest.mark.storage  # on RADOS too (conftest.STORAGE_MODULES)
def test_s3api_copy_object_copy_and_replace_metadata_across_buckets(depot, s3, bucket_factory, tmp_path):
    source, target = bucket_factory(hint="copy-src"), bucket_factory(hint="copy-dst")
    body = b"id,colour\n1,blue\n"
    src = tmp_path / "src.csv"
    src.write_bytes(body)
    depot.aws("s3api", "put-object", "--bucket", source, "--key", "data/src.csv", "--body", str(src),
              "--content-type", "text/csv", "--metadata", "colour=blue")

    copied = depot.aws_json("s3api", "copy-object", "--bucket", target, "--key", "copy1.csv",
                            "--copy-source", f"{source}/data/src.csv")
    assert copied["CopyObjectResult"]["ETag"] == md5_etag(body)
    head = depot.aws_json("s3api", "head-object", "--bucket", target, "--key", "copy1.csv")
    assert (head["ContentType"], head["Metadata"], head["ETag"]) == ("text/csv", {"colour": "blue"}, md5_etag(body))

    # COPY (explicit) ignores metadata given with the request.
    depot.aws("s3api", "copy-object", "--bucket", target, "--key", "copy2.csv",
              "--copy-source", f"{source}/data/src.csv", "--metadata-directive", "COPY", "--metadata", "colour=green")
    head = depot.aws_json("s3api", "head-object", "--bucket", target, "--key", "copy2.csv")
    assert (head["ContentType"], head["Metadata"]) == ("text/csv", {"colour": "blue"})

    depot.aws("s3api", "copy-object", "--bucket", target, "--key", "copy3.json",
              "--copy-source", f"{source}/data/src.csv", "--metadata-directive", "REPLACE",
              "--content-type", "application/json", "--metadata", "colour=red,shade=dark")
    head = depot.aws_json("s3api", "head-object", "--bucket", target, "--key", "copy3.json")
    assert (head["ContentType"], head["Metadata"]) == ("application/json", {"colour": "red", "shade": "dark"})

    for key in ("copy1.csv", "copy2.csv", "copy3.json"):
        assert s3.get_object(Bucket=target, Key=key)["Body"].read() == body
    source_head = s3.head_object(Bucket=source, Key="data/src.csv")
    assert (source_head["ContentType"], source_head["Metadata"]) == ("text/csv", {"colour": "blue"})


def test_s3api_delete_objects_verbose_and_quiet(depot, s3, bucket):
    for key in ("k1", "k2", "k3", "k4"):
        s3.put_object(Bucket=bucket, Key=key, Body=key.encode())
    out = depot.aws_json("s3api", "delete-objects", "--bucket", bucket, "--delete",
                         json.dumps({"Objects": [{"Key": "k1"}, {"Key": "k2"}, {"Key": "never-existed"}]}))
    assert sorted(d["Key"] for d in out["Deleted"]) == ["k1", "k2", "never-existed"]
    assert not out.get("Errors")
    assert keys_in(s3, bucket) == ["k3", "k4"]

    out = depot.aws_json("s3api", "delete-objects", "--bucket", bucket, "--delete",
                         json.dumps({"Objects": [{"Key": "k3"}], "Quiet": True}))
    assert not out.get("Deleted") and not out.get("Errors"), out
    assert keys_in(s3, bucket) == ["k4"]


PAGED_KEYS = [
    "a", "b", "B", "Z", "_under", "0-zero", "9-nine", "~tilde",
    "dir/", "dir/a", "dir/b/c", "dir/b/d", "dir2/x", "dir-2", "dir.3",
    "\u00e4-umlaut", "\u00e9-acute", "\u00ff", "\u65e5\u672c\u8a9e/\u30d5\u30a1\u30a4\u30eb", "\u65e5\u672c",
    "emoji \U0001F600", "\U0001F600 first", "\uff01fullwidth", "space key", "plus+key",
]


@pytest.fixture
def paged_bucket(s3, bucket):
    assert len(PAGED_KEYS) == 25 and len(set(PAGED_KEYS)) == 25
    for key in PAGED_KEYS:
        s3.put_object(Bucket=bucket, Key=key, Body=key.encode())
    return bucket


def test_s3api_list_objects_v2_pages_of_seven_in_utf8_byte_order(depot, paged_bucket):
    expected = utf8_sorted(PAGED_KEYS)
    seen, sizes, token = [], [], None
    while True:
        args = ["s3api", "list-objects-v2", "--no-paginate", "--bucket", paged_bucket, "--max-keys", "7"]
        if token:
            args += ["--continuation-token", token]
        page = depot.aws_json(*args)
        keys = [o["Key"] for o in page.get("Contents", [])]
        assert page["KeyCount"] == len(keys)
        assert page["MaxKeys"] == 7
        seen += keys
        sizes.append(len(keys))
        if not page["IsTruncated"]:
            assert "NextContinuationToken" not in page
            break
        token = page["NextContinuationToken"]
        assert len(sizes) < 10, "listing does not end"
    assert sizes == [7, 7, 7, 4]
    assert seen == expected

    # The cli's own pagination with pages of 7 returns the same.
    everything = depot.aws_json("s3api", "list-objects-v2", "--bucket", paged_bucket, "--page-size", "7")
    assert [o["Key"] for o in everything["Contents"]] == expected


def test_s3api_list_objects_v1_pages_with_marker(depot, paged_bucket):
    expected = utf8_sorted(PAGED_KEYS)
    seen, marker = [], None
    for _ in range(10):
        args = ["s3api", "list-objects", "--no-paginate", "--bucket", paged_bucket, "--max-keys", "7"]
        if marker:
            args += ["--marker", marker]
        page = depot.aws_json(*args)
        keys = [o["Key"] for o in page.get("Contents", [])]
        assert len(keys) <= 7
        # Without a delimiter S3 need not return NextMarker: the client continues after the last key.
        assert page.get("NextMarker", keys[-1] if keys else None) == (keys[-1] if keys else None)
        seen += keys
        if not page["IsTruncated"]:
            break
        marker = keys[-1]
    assert seen == expected


def test_s3api_list_with_prefix_and_delimiter(depot, paged_bucket):
    top = depot.aws_json("s3api", "list-objects-v2", "--bucket", paged_bucket, "--delimiter", "/")
    assert [p["Prefix"] for p in top["CommonPrefixes"]] == ["dir/", "dir2/", "\u65e5\u672c\u8a9e/"]
    assert [o["Key"] for o in top["Contents"]] == utf8_sorted(k for k in PAGED_KEYS if "/" not in k)

    sub = depot.aws_json("s3api", "list-objects-v2", "--bucket", paged_bucket, "--prefix", "dir/", "--delimiter", "/")
    assert [o["Key"] for o in sub["Contents"]] == ["dir/", "dir/a"]
    assert [p["Prefix"] for p in sub["CommonPrefixes"]] == ["dir/b/"]

    v1 = depot.aws_json("s3api", "list-objects", "--bucket", paged_bucket, "--prefix", "dir", "--delimiter", "/")
    assert [o["Key"] for o in v1["Contents"]] == ["dir-2", "dir.3"]
    assert [p["Prefix"] for p in v1["CommonPrefixes"]] == ["dir/", "dir2/"]


def test_mb_with_no_region_configured_anywhere(depot, tmp_path):
    """A fresh machine: an empty HOME, no config file, no AWS_REGION. aws cli v2 then signs for us-east-1
    but sends the LocationConstraint `aws-global`, which names the server's own region."""
    home = tmp_path / "home"
    home.mkdir()
    alice = depot.users["alice"]
    env = clean_env({"HOME": str(home), "AWS_ACCESS_KEY_ID": alice.access_key,
                     "AWS_SECRET_ACCESS_KEY": alice.secret, "AWS_EC2_METADATA_DISABLED": "true", "AWS_PAGER": ""})
    name = unique_bucket_name("awscli-noregion")
    made = run([AWS, "--endpoint-url", depot.endpoint, "s3", "mb", f"s3://{name}"], env=env, check=False)
    assert made.returncode == 0, made.stderr
    assert made.stdout.strip() == f"make_bucket: {name}"
    assert depot.aws_json("s3api", "get-bucket-location", "--bucket", name) == {"LocationConstraint": None}
    depot.aws("s3", "rb", f"s3://{name}")


@pytest.mark.parametrize("constraint", ["aws-global", "", "us-east-1"])
def test_create_bucket_takes_constraints_that_mean_this_region(depot, constraint):
    name = unique_bucket_name("constraint")
    body = (f"<CreateBucketConfiguration><LocationConstraint>{constraint}</LocationConstraint>"
            "</CreateBucketConfiguration>").encode()
    assert depot.request("PUT", f"/{name}", body=body).status_code == 200
    assert depot.request("HEAD", f"/{name}").status_code == 200
    assert depot.request("DELETE", f"/{name}").status_code == 204


@pytest.mark.parametrize("constraint", ["eu-west-1", "aws-cn-global", "AWS-GLOBAL"])
def test_create_bucket_in_another_region_is_refused_and_creates_nothing(depot, constraint):
    name = unique_bucket_name("constraint")
    before = depot.snapshot()
    body = (f"<CreateBucketConfiguration><LocationConstraint>{constraint}</LocationConstraint>"
            "</CreateBucketConfiguration>").encode()
    assert_error_response(depot.request("PUT", f"/{name}", body=body), "InvalidLocationConstraint", 400)
    depot.assert_unchanged(before)
    assert depot.request("HEAD", f"/{name}").status_code == 404


def test_s3api_get_bucket_location_is_empty_for_us_east_1(depot, bucket):
    assert depot.aws_json("s3api", "get-bucket-location", "--bucket", bucket) == {"LocationConstraint": None}


def test_s3api_head_bucket_on_missing_bucket_is_404(depot):
    proc = depot.aws("s3api", "head-bucket", "--bucket", unique_bucket_name("missing"), check=False)
    assert proc.returncode != 0
    assert "(404)" in proc.stderr and "Not Found" in proc.stderr, proc.stderr
